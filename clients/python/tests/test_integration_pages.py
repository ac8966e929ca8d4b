"""Whole pages (contract section 5, decided 2026-11-27) through ``products.all()``.

A page holds ``limit`` items whenever at least that many matches remain after its cursor;
only the last holds fewer, and its ``next_cursor`` is null. So a walk of a search of N
results takes max(1, ceil(N / limit)) requests, and a search that matches nothing one.

Requests are counted through the client's own ``on_response`` hook (one call per HTTP
attempt, retries included); the transport's send is wrapped to read each page's body (its
size and ``next_cursor``). Each walk uses a fresh key, so the rate limit never adds a retry.
"""

from __future__ import annotations

import json
import math
import unittest
from typing import Any, Dict, List, Optional, Tuple

import market

from . import support

X = support.unique("")
WORD = f"pagewalk{X}"  # in 5 titles and 3 descriptions, nowhere else
ACCOUNT = f"acct_pypw_{X}"
SELLER = f"pypw-{X}"
# created_at hours and prices (cents) chosen so that each sort gives another order; two
# prices tie (120) so that price_asc needs its id tie-break.
HOURS = [3, 7, 0, 9, 5, 1, 10, 4, 8, 2, 6, 11]
CENTS = [500, 120, 999, 350, 120, 780, 50, 610, 40, 30, 20, 10]


def pid(i: int) -> str:
    return f"prod_pypw_{X}_{i:02d}"


# 0..4: the word in the title (rank 1); 5..7: in the description only (rank 0);
# 8..10: elsewhere in the catalogue (no match); 11: a draft with the word (never shown).
MATCHES = range(8)
EXPECTED = {
    "relevance": sorted((pid(i) for i in range(5)), reverse=True) + sorted((pid(i) for i in range(5, 8)), reverse=True),
    "newest": [pid(i) for i in sorted(MATCHES, key=lambda i: (HOURS[i], pid(i)), reverse=True)],
    "price_asc": [pid(i) for i in sorted(MATCHES, key=lambda i: (CENTS[i], pid(i)))],
}


def setUpModule() -> None:
    support.require_stack()
    products = []
    for i, (hour, cents) in enumerate(zip(HOURS, CENTS)):
        products.append({
            "id": pid(i), "seller": SELLER,
            "title": f"{WORD} poster {i}" if i < 5 or i == 11 else f"Plain print {i}",
            "description": f"A print that mentions {WORD} in its description" if 5 <= i < 8 else "A print for the page walk",
            "category": f"pypw-{X}", "currency": "USD", "status": "draft" if i == 11 else "published",
            "created_at": f"2026-02-01T{hour:02d}:00:00Z",
            "tiers": [{"id": f"tier_pypw_{X}_{i:02d}", "name": "Personal", "description": "",
                       "price": cents / 100, "licence": {}}],
        })
    support.import_doc({
        "mode": "test",
        "accounts": [{"id": ACCOUNT}],
        "sellers": [{"id": SELLER, "account": ACCOUNT, "name": "Python Page Walk", "bio": ""}],
        "products": products,
    })


class Walk:
    """products.all(**params) walked with a fresh key: the ids in order, the attempts the
    on_response hook saw, and each page as the wire carried it (status, size, next_cursor)."""

    def __init__(self, **params: Any) -> None:
        self.attempts: List[market.RequestInfo] = []
        self.pages: List[Tuple[int, int, Optional[str]]] = []
        m = support.client(support.new_key(ACCOUNT, access="read-only"), on_response=self.attempts.append)
        t = m._transport
        send = t._send_once

        def reading(method: str, target: str, body: Any, headers: Any) -> Any:
            status, resp_headers, raw = send(method, target, body, headers)
            if target.split("?", 1)[0].endswith("/v1/products"):
                page: Dict[str, Any] = json.loads(raw)
                self.pages.append((status, len(page.get("data") or []), page.get("next_cursor")))
            return status, resp_headers, raw

        t._send_once = reading  # type: ignore[method-assign]
        with m:
            self.ids = [p.id for p in m.products.all(**params)]


class WholePagesTest(unittest.TestCase):
    def assertWholePages(self, w: Walk, limit: int) -> None:
        n = len(w.ids)
        want = max(1, math.ceil(n / limit))
        sizes = [size for _, size, _ in w.pages]
        self.assertTrue(all(a.status == 200 and a.attempt == 1 for a in w.attempts), f"no retry: {w.attempts}")
        self.assertEqual(len(w.pages), len(w.attempts), "the hook saw every request the wire carried")
        self.assertEqual(
            len(w.attempts), want,
            f"{n} results in pages of {limit} take {want} request(s), not {len(w.attempts)} (page sizes {sizes})")
        for k, (_, size, cursor) in enumerate(w.pages):
            if k < len(w.pages) - 1:
                self.assertEqual(size, limit, f"page {k + 1} of {len(w.pages)} is full (page sizes {sizes})")
                self.assertIsInstance(cursor, str, f"page {k + 1} has a next_cursor")
            else:
                self.assertTrue(size <= limit and (size > 0 or n == 0),
                                f"the last page holds 1..{limit} items, or none when nothing matched: {sizes}")
                self.assertIsNone(cursor, "the last page has next_cursor null")
        self.assertEqual(sum(sizes), n, "the walk yielded what the pages held")

    def test_search_walked_three_at_a_time_by_relevance(self) -> None:
        w = Walk(q=WORD, limit=3)
        self.assertEqual(w.ids, EXPECTED["relevance"], "every match once: titles first, then descriptions, id descending")
        self.assertWholePages(w, 3)  # 8 matches: 3 + 3 + 2

    def test_search_walked_two_at_a_time_newest_last_page_full(self) -> None:
        w = Walk(q=WORD, sort="newest", limit=2)
        self.assertEqual(w.ids, EXPECTED["newest"], "every match once, newest first")
        self.assertWholePages(w, 2)  # 8 matches: 2 + 2 + 2 + 2, no empty fifth page

    def test_search_walked_three_at_a_time_by_price(self) -> None:
        w = Walk(q=WORD, sort="price_asc", limit=3)
        self.assertEqual(w.ids, EXPECTED["price_asc"], "every match once, cheapest first, ties by id")
        self.assertWholePages(w, 3)

    def test_search_matching_nothing_is_one_request(self) -> None:
        w = Walk(q=f"{WORD}nothing", limit=2)
        self.assertEqual(w.ids, [])
        self.assertWholePages(w, 2)
        self.assertEqual(len(w.attempts), 1)


if __name__ == "__main__":
    unittest.main()
