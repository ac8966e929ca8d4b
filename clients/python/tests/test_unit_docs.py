"""The examples of README.md and SNIPPETS.md: every Python block compiles, every
m.<resource>.<method>( they call exists, the README shows every call, and SNIPPETS.md has
the sections docs/api.md takes them from."""

from __future__ import annotations

import re
import unittest
from pathlib import Path
from typing import List

from market import Market

ROOT = Path(__file__).resolve().parents[1]

CALLS = [
    "products.list", "products.all", "products.get", "sellers.get", "orders.list", "orders.all",
    "downloads.create_link", "webhooks.create", "webhooks.list", "webhooks.all", "webhooks.get",
    "webhooks.update", "webhooks.delete", "webhooks.rotate_secret", "webhooks.test", "events.list",
    "events.all", "events.get",
]

SECTIONS = ["products.list", "products.get", "sellers.get", "orders.list", "downloads.createLink", "webhooks.create",
            "verify", "webhooks.manage", "events.all"]


def blocks(md: str) -> List[str]:
    return re.findall(r"```python\n(.*?)```", md, flags=re.S)


class DocsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.m = Market("sk_test_" + "x" * 40, base_url="http://127.0.0.1:1")

    def check(self, code: str, where: str) -> None:
        compile(code, where, "exec")
        for resource, method in re.findall(r"\bm\.(\w+)\.(\w+)\(", code):
            self.assertTrue(callable(getattr(getattr(self.m, resource, None), method, None)),
                            f"{where}: m.{resource}.{method} does not exist")

    def test_readme_blocks_compile_and_show_every_call(self) -> None:
        all_blocks = blocks((ROOT / "README.md").read_text(encoding="utf-8"))
        self.assertGreaterEqual(len(all_blocks), 10)
        for i, code in enumerate(all_blocks):
            self.check(code, f"README.md block {i + 1}")
        text = "\n".join(all_blocks)
        for call in CALLS:
            self.assertIn(f"m.{call}(", text, f"README.md shows m.{call}(")
        self.assertIn("verify_webhook(", text)
        self.assertIn("## Catching up on missed events", (ROOT / "README.md").read_text(encoding="utf-8"))

    def test_snippets_sections(self) -> None:
        md = (ROOT / "SNIPPETS.md").read_text(encoding="utf-8")
        self.assertEqual(re.findall(r"^## (.+)$", md, flags=re.M), SECTIONS)
        preamble = blocks(md[: md.index("\n## ")])[0]
        self.assertIn("Market(", preamble)
        for section in re.split(r"^## ", md, flags=re.M)[1:]:
            name = section.split("\n", 1)[0]
            codes = blocks(section)
            with self.subTest(name):
                self.assertEqual(len(codes), 1, f"one block under {name}")
                self.check(preamble + "\n" + codes[0], f"SNIPPETS.md {name}")
                self.assertLessEqual(len(codes[0].strip().splitlines()), 22, f"{name} is short")
                if name == "verify":
                    self.assertIn("verify_webhook(", codes[0])
                elif name == "webhooks.manage":
                    for call in ("list", "get", "update", "rotate_secret", "test", "delete"):
                        self.assertIn(f"m.webhooks.{call}(", codes[0])
                    self.assertIn("disabled=True", codes[0])
                    self.assertIn("expire_old_in=", codes[0])
                elif name == "events.all":
                    self.assertIn("m.events.all(created_gte=", codes[0])
                    self.assertIn("m.events.get(", codes[0])
                    self.assertIn(".deliveries", codes[0])
                else:
                    snake = re.sub(r"([A-Z])", lambda c: "_" + c.group(1).lower(), name)
                    self.assertIn(f"m.{snake}(", codes[0])


if __name__ == "__main__":
    unittest.main()
