#!/usr/bin/python3
"""docs/config.md's field tables are the schema's (issue 23 item 1).

`rocelab-switch --config-schema` prints every table of the switch
configuration (lib/config/schema.hpp); tools/config_docs.py --check compares
its blocks with docs/config.md's. This test runs that check on the real docs,
and shows that the check catches a row edited by hand, a block removed and a
block the schema does not know. No EAL: --config-schema starts nothing.
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testmain  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("ROCELAB_BUILD", os.path.join(ROOT, "build"))
SWITCH = os.path.join(BUILD, "app", "rocelab-switch")
TOOL = os.path.join(ROOT, "tools", "config_docs.py")
DOCS = os.path.join(ROOT, "docs", "config.md")


def check(docs):
    return subprocess.run(["/usr/bin/python3", TOOL, "--check", "--switch", SWITCH, "--docs", docs],
                          capture_output=True, text=True, timeout=60)


class ConfigDocs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="rocelab-config-docs.")
        with open(DOCS, encoding="utf-8") as f:
            self.docs = f.read()

    def tearDown(self):
        self.tmp.cleanup()

    def edited(self, text):
        path = os.path.join(self.tmp.name, "config.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_schema_prints_without_eal_in_both_places(self):
        for args in (["--config-schema"], ["--", "--config-schema"]):
            r = subprocess.run([SWITCH] + args, capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("<!-- schema:PORT begin -->", r.stdout)
            self.assertIn("| `speed` | 1Mbps..1.6Tbps |", r.stdout)
        r = subprocess.run([SWITCH, "--help"], capture_output=True, text=True, timeout=30)
        self.assertIn("--config-schema", r.stdout)

    def test_docs_match_the_schema(self):
        r = check(DOCS)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"\d+ tables match the schema")

    def test_a_row_edited_by_hand_fails(self):
        # The mtu row, its range widened by hand.
        row = re.search(r"^\| `mtu` \| 68\.\.9216 bytes \|.*$", self.docs, re.M)
        self.assertIsNotNone(row, "docs/config.md has no PORT mtu row")
        bad = self.docs.replace(row.group(0), row.group(0).replace("68..9216", "68..9300"), 1)
        r = check(self.edited(bad))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("block PORT differs from the schema", r.stderr)
        self.assertIn("-| `mtu` | 68..9300 bytes", r.stderr)
        self.assertIn("+| `mtu` | 68..9216 bytes", r.stderr)

    def test_a_missing_or_unknown_block_fails(self):
        block = re.search(r"^<!-- schema:SWITCH begin -->\n.*?^<!-- schema:SWITCH end -->\n", self.docs,
                          re.M | re.S)
        self.assertIsNotNone(block)
        r = check(self.edited(self.docs.replace(block.group(0), "", 1)))
        self.assertEqual(r.returncode, 1)
        self.assertIn("no block for table SWITCH", r.stderr)
        r = check(self.edited(self.docs + "\n<!-- schema:NOPE begin -->\n| x |\n<!-- schema:NOPE end -->\n"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("block NOPE is not a table of the schema", r.stderr)

    def test_write_restores_an_edited_row(self):
        bad = self.docs.replace("| `burst` | 1..64 |", "| `burst` | 1..65 |", 1)
        self.assertNotEqual(bad, self.docs)
        path = self.edited(bad)
        r = subprocess.run(["/usr/bin/python3", TOOL, "--write", "--switch", SWITCH, "--docs", path],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(path, encoding="utf-8") as f:
            self.assertEqual(f.read(), self.docs)


if __name__ == "__main__":
    testmain.main()
