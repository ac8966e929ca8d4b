"""The Python driver of the conformance suite: python3 python.py <base_url> <call> <id> <api_key>

Makes one call with the client (2 retries, 0.5 s timeout) and prints one JSON line:
{ok, error: {kind, status, timeout} | null, hook: [...]}."""

import json
import os
import socket
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import market  # noqa: E402

base_url, call, ident, api_key = sys.argv[1:5]
hook = []


def on_response(i: market.RequestInfo) -> None:
    hook.append({"method": i.method, "path": i.path, "status": i.status, "error": i.error,
                 "duration_ms": i.duration_ms, "request_id": i.request_id, "attempt": i.attempt})


m = market.Market(api_key, base_url=base_url, max_retries=2, timeout=0.5, on_response=on_response)
try:
    if call == "get":
        m.products.get(ident)
    elif call == "list":
        m.products.list(category=ident, limit=2)
    elif call == "post":
        m.downloads.create_link(ident)
    elif call == "delete":
        m.webhooks.delete(ident)
    else:
        raise SystemExit(f"unknown call {call}")
    out = {"ok": True, "error": None}
except market.MarketError as e:
    conn = isinstance(e, market.APIConnectionError)
    timeout = conn and isinstance(e.__cause__, (TimeoutError, socket.timeout))
    out = {"ok": False, "error": {"kind": "connection" if conn else "api", "status": e.status, "timeout": timeout,
                                  "class": type(e).__name__}}
print(json.dumps({**out, "hook": hook}))
