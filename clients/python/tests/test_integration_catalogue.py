"""products.list / products.all / products.get / sellers.get against a real stack.

One category of 45 published products (and a draft that must never show), from one
seller, with prices and timestamps chosen so that ties in the sort keys occur.
"""

from __future__ import annotations

import datetime as dt
import itertools
import unittest
from decimal import Decimal
from typing import Dict, List

from market import NotFoundError, Page, Product, ProductListItem, RateLimit, Seller

from . import support

X = support.unique("")
CATEGORY = f"pycat-{X}"
SELLER = f"pyseller-{X}"
SELLER_ACCT = f"acct_pys_{X}"
BUYERS = [f"acct_pyb1_{X}", f"acct_pyb2_{X}"]
N = 45
WORD = f"quokka{X}"  # a word only one product's title has

PRODUCTS: Dict[str, Decimal] = {}  # id -> expected list price (lowest tier)
DRAFT = f"prod_pydraft_{X}"
KEY = ""


def _price(i: int) -> Decimal:
    special = {0: Decimal("19.99"), 1: Decimal("1200.5"), 2: Decimal("5"), 3: Decimal("5"), 4: Decimal("0.1")}
    return special.get(i, Decimal(f"{i}.{(i * 7) % 100:02d}"))


def setUpModule() -> None:
    global KEY
    support.require_stack()
    products = []
    for i in range(N):
        pid = f"prod_py{i:02d}_{X}"
        price = _price(i)
        PRODUCTS[pid] = price
        tiers = [{"id": f"tier_py{i:02d}_{X}", "name": "Personal", "description": "one seat",
                  "price": float(price), "licence": {"seats": 1, "commercial": False}}]
        if i == 0:
            tiers.append({"id": f"tier_py00c_{X}", "name": "Commercial", "description": "ten seats",
                          "price": 49.0, "licence": {"seats": 10, "commercial": True}})
        products.append({
            "id": pid, "seller": SELLER, "title": f"{WORD} Grotesk" if i == 7 else f"Python Test Product {i}",
            "description": f"Product number {i} of the Python client tests", "category": CATEGORY,
            "currency": "USD", "status": "published",
            # Groups of five share a timestamp: the order must still be total.
            "created_at": f"2026-03-{1 + i // 5:02d}T00:00:00Z", "tiers": tiers,
        })
    products.append({
        "id": DRAFT, "seller": SELLER, "title": "Draft", "description": "not published", "category": CATEGORY,
        "currency": "USD", "status": "draft", "created_at": "2026-03-01T00:00:00Z",
        "tiers": [{"id": f"tier_pydraft_{X}", "name": "P", "description": "", "price": 1.0, "licence": {}}],
    })
    support.import_doc({
        "mode": "test",
        "accounts": [{"id": SELLER_ACCT}] + [{"id": b} for b in BUYERS],
        "sellers": [{"id": SELLER, "account": SELLER_ACCT, "name": "Py Seller", "bio": "Fonts for tests",
                     "website": "https://pyseller.example"}],
        "products": products,
        "reviews": [
            {"id": f"rev_py1_{X}", "product": f"prod_py00_{X}", "account": BUYERS[0], "rating": 4, "body": "Good"},
            {"id": f"rev_py2_{X}", "product": f"prod_py00_{X}", "account": BUYERS[1], "rating": 5, "body": "Great"},
        ],
    })
    KEY = support.new_key(BUYERS[0], access="read-only")


class ProductsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.m = support.client(KEY)

    def test_list_one_page(self) -> None:
        page = self.m.products.list(category=CATEGORY, limit=10)
        self.assertIsInstance(page, Page)
        self.assertEqual(len(page.data), 10)
        self.assertIsNotNone(page.next_cursor)
        self.assertTrue(page.has_more)
        for item in page:
            self.assertIsInstance(item, ProductListItem)
            self.assertEqual(item.seller, SELLER)
            self.assertIsInstance(item.price, Decimal)
            self.assertEqual(item.price, PRODUCTS[item.id])
        # newest first: created_at then id, both descending
        self.assertEqual([p.id for p in page.data], sorted(PRODUCTS, key=lambda p: (int(p[7:9]) // 5, p), reverse=True)[:10])
        self.assertIsInstance(page.rate_limit, RateLimit)
        support.check_rate_limit(self, page.rate_limit)
        self.assertRegex(page.request_id, r"^[A-Za-z0-9._-]{1,64}$")

    def test_all_walks_the_whole_category_once(self) -> None:
        m = support.client(KEY)
        sent = support.count_requests(m)
        seen: List[str] = [p.id for p in m.products.all(category=CATEGORY, limit=10)]
        self.assertEqual(len(seen), N, "45 items")
        self.assertEqual(len(set(seen)), N, "no duplicates")
        self.assertEqual(set(seen), set(PRODUCTS), "every published product, no draft")
        self.assertEqual(len(sent), 5, "45 items in pages of 10: 5 requests")
        self.assertTrue(all("limit=10" in s for s in sent))
        self.assertTrue(all("cursor=" in s for s in sent[1:]))

    def test_all_is_lazy(self) -> None:
        m = support.client(KEY)
        sent = support.count_requests(m)
        it = m.products.all(category=CATEGORY, limit=10)
        self.assertEqual(sent, [], "nothing is fetched before the first item is asked for")
        first = list(itertools.islice(it, 10))
        self.assertEqual(len(first), 10)
        self.assertEqual(len(sent), 1, "ten items: one page")
        next(it)
        self.assertEqual(len(sent), 2, "the eleventh item: the second page")

    def test_all_with_sort_and_price_filters(self) -> None:
        asc = list(self.m.products.all(category=CATEGORY, sort="price_asc", limit=7))
        self.assertEqual(len(asc), N)
        prices = [p.price for p in asc]
        self.assertEqual(prices, sorted(PRODUCTS.values()))
        # ties (two products at 5) broken by id ascending
        fives = [p.id for p in asc if p.price == Decimal("5")]
        self.assertEqual(fives, sorted(fives))
        desc = [p.id for p in self.m.products.all(category=CATEGORY, sort="price_desc", limit=100)]
        self.assertEqual(desc, [p.id for p in reversed(asc)])

        exact = self.m.products.list(category=CATEGORY, min_price=Decimal("19.99"), max_price="19.99")
        self.assertEqual([p.id for p in exact.data], [f"prod_py00_{X}"])
        band = {p.id for p in self.m.products.all(category=CATEGORY, min_price=5, max_price=Decimal("10.5"))}
        self.assertEqual(band, {pid for pid, price in PRODUCTS.items() if Decimal(5) <= price <= Decimal("10.5")})
        self.assertGreater(len(band), 2)

    def test_search_and_seller_filter(self) -> None:
        found = self.m.products.list(q=WORD)
        self.assertEqual([p.id for p in found.data], [f"prod_py07_{X}"])
        self.assertIsNone(found.next_cursor)
        relevance = self.m.products.list(q=WORD, sort="relevance", seller=SELLER, category=CATEGORY)
        self.assertEqual([p.id for p in relevance.data], [f"prod_py07_{X}"])
        mine = list(self.m.products.all(seller=SELLER, limit=100))
        self.assertEqual({p.id for p in mine}, set(PRODUCTS))

    def test_get(self) -> None:
        p = self.m.products.get(f"prod_py00_{X}")
        self.assertIsInstance(p, Product)
        self.assertEqual(p.id, f"prod_py00_{X}")
        self.assertEqual(p.title, "Python Test Product 0")
        self.assertEqual(p.category, CATEGORY)
        self.assertEqual(p.currency, "USD")
        self.assertEqual(p.seller, SELLER)
        self.assertEqual(p.price, Decimal("19.99"))
        self.assertEqual(str(p.price), "19.99")
        self.assertEqual([t.name for t in p.tiers], ["Personal", "Commercial"])
        self.assertEqual([t.price for t in p.tiers], [Decimal("19.99"), Decimal("49")])
        self.assertEqual(p.tiers[1].licence, {"seats": 10, "commercial": True})
        self.assertEqual(p.tiers[0].currency, "USD")
        self.assertEqual(p.rating.count, 2)
        self.assertEqual(p.rating.average, Decimal("4.5"))
        self.assertEqual(p.created_at, dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc))
        self.assertIsInstance(p.updated_at, dt.datetime)
        support.check_rate_limit(self, p.rate_limit)
        other = self.m.products.get(f"prod_py01_{X}")
        self.assertEqual(str(other.price), "1200.5")
        self.assertIsNone(other.rating.average)
        self.assertEqual(other.rating.count, 0)

    def test_get_draft_is_not_found(self) -> None:
        with self.assertRaises(NotFoundError) as cm:
            self.m.products.get(DRAFT)
        self.assertEqual(cm.exception.code, "resource_missing")


class SellersTest(unittest.TestCase):
    def test_get_with_catalogue_pages(self) -> None:
        m = support.client(KEY)
        s = m.sellers.get(SELLER, limit=20)
        self.assertIsInstance(s, Seller)
        self.assertEqual((s.id, s.name, s.bio, s.website), (SELLER, "Py Seller", "Fonts for tests", "https://pyseller.example"))
        self.assertEqual(s.product_count, N)
        self.assertIsInstance(s.created_at, dt.datetime)
        self.assertEqual(len(s.products.data), 20)
        self.assertIsNotNone(s.products.next_cursor)
        support.check_rate_limit(self, s.rate_limit)
        seen = [p.id for p in s.products.data]
        cursor = s.products.next_cursor
        while cursor:
            nxt = m.sellers.get(SELLER, limit=20, cursor=cursor)
            seen += [p.id for p in nxt.products.data]
            cursor = nxt.products.next_cursor
        self.assertEqual(sorted(seen), sorted(PRODUCTS))

    def test_unknown_seller(self) -> None:
        with self.assertRaises(NotFoundError):
            support.client(KEY).sellers.get(f"nobody-{X}")


if __name__ == "__main__":
    unittest.main()
