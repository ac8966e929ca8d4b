"""orders.list / orders.all / downloads.create_link against a real stack, including a POST
whose connection drops after the server did the work: the client sends it again with the
same Idempotency-Key and exactly one link is minted."""

from __future__ import annotations

import datetime as dt
import os
import socket
import threading
import unittest
import urllib.request
from decimal import Decimal
from pathlib import Path
from typing import Dict, List, Tuple
from urllib.parse import urlsplit

from market import Download, DownloadLink, Market, Order, OrderItem, Page

from . import support

X = support.unique("")
SELLER = f"pyo-{X}"
SELLER_ACCT = f"acct_pyos_{X}"
BUYER = f"acct_pyob_{X}"
PA, PB = f"prod_pyoa_{X}", f"prod_pyob_{X}"
TA, TB = f"tier_pyoa_{X}", f"tier_pyob_{X}"
ORD = {n: f"ord_py{n}_{X}" for n in (1, 2, 3, 4)}
FILE_A = os.urandom(4096 + 17)
FILE_B = b"second file of product A\n"
KEY = ""
DL: Dict[str, str] = {}  # download ids: "a1" (order 1, file a.bin), "b1" (order 1, file b.txt), "a2", "a3"


def setUpModule() -> None:
    global KEY
    support.require_stack()
    root = Path(support.env("FILES_ROOT")) / f"py-{X}"
    root.mkdir(parents=True, exist_ok=True)
    (root / "a.bin").write_bytes(FILE_A)
    (root / "b.txt").write_bytes(FILE_B)
    support.import_doc({
        "mode": "test",
        "accounts": [{"id": SELLER_ACCT}, {"id": BUYER}],
        "sellers": [{"id": SELLER, "account": SELLER_ACCT, "name": "Py Orders"}],
        "products": [
            {"id": PA, "seller": SELLER, "title": "Pack A", "description": "", "category": "fonts", "currency": "USD",
             "status": "published", "tiers": [{"id": TA, "name": "Personal", "description": "", "price": 19.99,
                                                "licence": {}}],
             "files": [{"id": f"file_pya_{X}", "filename": "a.bin", "path": f"py-{X}/a.bin", "size_bytes": len(FILE_A)},
                       {"id": f"file_pyb_{X}", "filename": "b.txt", "path": f"py-{X}/b.txt", "size_bytes": len(FILE_B)}]},
            {"id": PB, "seller": SELLER, "title": "Pack B", "description": "", "category": "fonts", "currency": "USD",
             "status": "published", "tiers": [{"id": TB, "name": "Studio", "description": "", "price": 1200.5,
                                                "licence": {}}],
             "files": [{"id": f"file_pyc_{X}", "filename": "c.bin", "path": f"py-{X}/a.bin", "size_bytes": len(FILE_A)}]},
        ],
        "orders": [
            {"id": ORD[1], "account": BUYER, "status": "paid", "created_at": "2026-02-01T00:00:00Z",
             "items": [{"product": PA, "tier": TA}]},
            {"id": ORD[2], "account": BUYER, "status": "paid", "created_at": "2026-02-02T00:00:00Z",
             "items": [{"product": PA, "tier": TA}, {"product": PB, "tier": TB}]},
            {"id": ORD[3], "account": BUYER, "status": "paid", "created_at": "2026-02-03T00:00:00Z",
             "items": [{"product": PB, "tier": TB}]},
            {"id": ORD[4], "account": BUYER, "status": "refunded", "created_at": "2026-02-04T00:00:00Z",
             "items": [{"product": PA, "tier": TA}]},
        ],
    })
    KEY = support.new_key(BUYER)
    orders = {o.id: o for o in support.client(KEY).orders.all(limit=100)}
    DL["a1"], DL["b1"] = (d.id for d in orders[ORD[1]].downloads)
    DL["a2"] = orders[ORD[2]].downloads[0].id
    DL["c3"] = orders[ORD[3]].downloads[0].id


def token_rows(download: str) -> int:
    return int(support.psql(f"SELECT count(*) FROM download_tokens WHERE download_id = {support.sql_quote(download)}"))


def token_exists(url: str) -> bool:
    token = url.rsplit("/", 1)[1]
    return support.psql(
        f"SELECT count(*) FROM download_tokens WHERE token_hash = sha256(convert_to({support.sql_quote(token)}, 'UTF8'))"
    ) == "1"


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read()


class OrdersTest(unittest.TestCase):
    def setUp(self) -> None:
        self.m = support.client(KEY)

    def test_list(self) -> None:
        page = self.m.orders.list(limit=2)
        self.assertIsInstance(page, Page)
        self.assertEqual([o.id for o in page.data], [ORD[4], ORD[3]])
        self.assertIsNotNone(page.next_cursor)
        support.check_rate_limit(self, page.rate_limit)
        refunded, paid = page.data
        self.assertIsInstance(paid, Order)
        self.assertEqual(paid.status, "paid")
        self.assertEqual(paid.currency, "USD")
        self.assertEqual(paid.total, Decimal("1200.5"))
        self.assertEqual(paid.created_at, dt.datetime(2026, 2, 3, tzinfo=dt.timezone.utc))
        self.assertEqual(paid.items, [OrderItem(product=PB, title="Pack B", tier=TB, tier_name="Studio",
                                                price=Decimal("1200.5"))])
        d = paid.downloads[0]
        self.assertIsInstance(d, Download)
        self.assertEqual((d.product, d.filename, d.size_bytes), (PB, "c.bin", len(FILE_A)))
        self.assertTrue(d.url.startswith(support.env("DOWNLOAD_BASE_URL") + "/"))
        self.assertIsInstance(d.expires_at, dt.datetime)
        self.assertEqual(refunded.status, "refunded")
        self.assertIsNone(refunded.downloads[0].url)
        self.assertIsNone(refunded.downloads[0].expires_at)
        rest = self.m.orders.list(limit=2, cursor=page.next_cursor)
        self.assertEqual([o.id for o in rest.data], [ORD[2], ORD[1]])
        two = rest.data[0]
        self.assertEqual(two.total, Decimal("1220.49"))
        self.assertEqual([i.price for i in two.items], [Decimal("19.99"), Decimal("1200.5")])
        self.assertEqual([d.filename for d in two.downloads], ["a.bin", "b.txt", "c.bin"])

    def test_list_by_status(self) -> None:
        self.assertEqual([o.id for o in self.m.orders.list(status="paid").data], [ORD[3], ORD[2], ORD[1]])
        self.assertEqual([o.id for o in self.m.orders.list(status="refunded").data], [ORD[4]])

    def test_all(self) -> None:
        m = support.client(KEY)
        sent = support.count_requests(m)
        self.assertEqual([o.id for o in m.orders.all(limit=1)], [ORD[4], ORD[3], ORD[2], ORD[1]])
        self.assertGreaterEqual(len(sent), 4)
        self.assertEqual([o.id for o in m.orders.all(status="paid", limit=2)], [ORD[3], ORD[2], ORD[1]])


class DownloadLinkTest(unittest.TestCase):
    def setUp(self) -> None:
        self.m = support.client(KEY)

    def test_create_link_and_download(self) -> None:
        before = token_rows(DL["a1"])
        link = self.m.downloads.create_link(DL["a1"], expires_in=120)
        self.assertIsInstance(link, DownloadLink)
        self.assertEqual(link.object, "download_link")
        self.assertEqual(link.download, DL["a1"])
        self.assertTrue(link.url.startswith(support.env("DOWNLOAD_BASE_URL") + "/"))
        left = (link.expires_at - dt.datetime.now(dt.timezone.utc)).total_seconds()
        self.assertTrue(100 <= left <= 121, left)
        support.check_rate_limit(self, link.rate_limit)
        self.assertIsNotNone(link.request_id)
        self.assertEqual(token_rows(DL["a1"]), before + 1)
        self.assertTrue(token_exists(link.url))
        self.assertEqual(fetch(link.url), FILE_A)

    def test_default_lifetime_and_second_file(self) -> None:
        link = self.m.downloads.create_link(DL["b1"])
        left = (link.expires_at - dt.datetime.now(dt.timezone.utc)).total_seconds()
        self.assertTrue(3500 <= left <= 3601, left)
        self.assertEqual(fetch(link.url), FILE_B)

    def test_each_call_mints_a_new_link(self) -> None:
        before = token_rows(DL["a2"])
        a = self.m.downloads.create_link(DL["a2"])
        b = self.m.downloads.create_link(DL["a2"])
        self.assertNotEqual(a.url, b.url, "a generated Idempotency-Key belongs to one call only")
        self.assertEqual(token_rows(DL["a2"]), before + 2)

    def test_idempotency_key_replays_the_same_link(self) -> None:
        key = f"py-test-{X}-replay"
        before = token_rows(DL["a2"])
        a = self.m.downloads.create_link(DL["a2"], expires_in=300, idempotency_key=key)
        b = self.m.downloads.create_link(DL["a2"], expires_in=300, idempotency_key=key)
        self.assertEqual(a, b)
        self.assertEqual(token_rows(DL["a2"]), before + 1)

    def test_post_retried_after_dropped_connection_mints_one_link(self) -> None:
        base = urlsplit(support.env("BASE_URL"))
        proxy = DroppingProxy(base.hostname or "127.0.0.1", base.port or 80, drop_posts=1)
        self.addCleanup(proxy.close)
        slept = support.SleepRecorder()
        m = Market(KEY, base_url=f"http://127.0.0.1:{proxy.port}", sleep=slept, max_retries=2)
        before = token_rows(DL["c3"])
        link = m.downloads.create_link(DL["c3"], expires_in=600)

        posts = [r for r in proxy.requests if r.method == "POST"]
        self.assertEqual(len(posts), 2, "the POST was sent twice")
        self.assertTrue(posts[0].dropped and not posts[1].dropped)
        self.assertTrue(posts[0].status_line.startswith("HTTP/1.1 201"), "the server minted a link the first time")
        k0, k1 = (p.headers.get("idempotency-key") for p in posts)
        self.assertTrue(k0 and k0.startswith("market-python-"), k0)
        self.assertEqual(k0, k1, "the retry carries the same Idempotency-Key")
        self.assertEqual(posts[1].headers_out.get("idempotent-replayed"), "true", "the server replayed its answer")
        self.assertEqual(len(slept.calls), 1, "one backoff before the retry")
        self.assertTrue(0.25 <= slept.calls[0] <= 0.5, slept.calls)
        self.assertEqual(token_rows(DL["c3"]), before + 1, "exactly one download_tokens row was created")
        self.assertTrue(token_exists(link.url))
        self.assertEqual(fetch(link.url), FILE_A)


class ProxiedRequest:
    def __init__(self, method: str, target: str, headers: Dict[str, str]) -> None:
        self.method = method
        self.target = target
        self.headers = headers
        self.dropped = False
        self.status_line = ""
        self.headers_out: Dict[str, str] = {}


class DroppingProxy:
    """A TCP proxy on 127.0.0.1 in front of nginx, one request per connection. The first
    ``drop_posts`` POSTs are forwarded and answered by the server, but the client's
    connection is then closed without that answer (as when a connection dies on the way
    back)."""

    def __init__(self, host: str, port: int, drop_posts: int = 1) -> None:
        self.upstream = (host, port)
        self.drops_left = drop_posts
        self.requests: List[ProxiedRequest] = []
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.closed = True
        self.sock.close()

    def _accept(self) -> None:
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    @staticmethod
    def _read_request(conn: socket.socket) -> Tuple[bytes, bytes]:
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                raise ConnectionError("client closed before a whole request")
            buf += chunk
        head, _, body = buf.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                raise ConnectionError("client closed mid-body")
            body += chunk
        return head, body

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                head, body = self._read_request(conn)
            except (ConnectionError, OSError):
                return
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {}
            kept = [lines[0]]
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
                if name.strip().lower() != "connection":
                    kept.append(line)
            kept.append("Connection: close")
            req = ProxiedRequest(method, target, headers)
            with self.lock:
                self.requests.append(req)
                drop = method == "POST" and self.drops_left > 0
                if drop:
                    self.drops_left -= 1
            with socket.create_connection(self.upstream, timeout=30) as up:
                up.sendall("\r\n".join(kept).encode("latin-1") + b"\r\n\r\n" + body)
                answer = b""
                while True:
                    chunk = up.recv(65536)
                    if not chunk:
                        break
                    answer += chunk
            resp_head = answer.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
            req.status_line = resp_head[0]
            for line in resp_head[1:]:
                name, _, value = line.partition(":")
                req.headers_out[name.strip().lower()] = value.strip()
            if drop:
                req.dropped = True
                return  # closes the client's connection without a byte of the answer
            conn.sendall(answer)


if __name__ == "__main__":
    unittest.main()
