#!/usr/bin/env python3
"""tools/gen_rules.py: schema checks, generated C++ and docs, coverage."""

import os
import sys
import tempfile
import textwrap
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tools"))
import gen_rules  # noqa: E402

RULE = """
[[rule]]
id = "{id}"
phase = "{phase}"
severity = "error"
summary = "s"
checks = "c"
subject = "{{file}}"
message = "{message}"
expected = "e"
actual = "a"
fix = "f"
"""


def rules_file(*rules):
    f = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
    for r in rules:
        f.write(RULE.format(**{"phase": "file", "message": "m", **r}))
    f.close()
    return f.name


class LoadRules(unittest.TestCase):
    def load(self, *rules):
        path = rules_file(*rules)
        try:
            return gen_rules.load_rules(path)
        finally:
            os.unlink(path)

    def test_real_table(self):
        rules = gen_rules.load_rules()
        ids = [r["id"] for r in rules]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertIn("TFP-SYM-ENTRY-MANGLED", ids)
        self.assertIn("TFP-FILE-NOT-ELF", ids)

    def test_ok(self):
        self.assertEqual(len(self.load({"id": "TFP-FILE-A"}, {"id": "TFP-FILE-B-C"})), 2)

    def test_duplicate(self):
        with self.assertRaisesRegex(gen_rules.RuleError, "duplicate"):
            self.load({"id": "TFP-FILE-A"}, {"id": "TFP-FILE-A"})

    def test_id_must_match_phase(self):
        with self.assertRaisesRegex(gen_rules.RuleError, "TFP-SYM-"):
            self.load({"id": "TFP-FILE-A", "phase": "symbols"})
        with self.assertRaisesRegex(gen_rules.RuleError, "id must"):
            self.load({"id": "TFP-FILE-lower"})

    def test_unknown_phase(self):
        with self.assertRaisesRegex(gen_rules.RuleError, "phase must"):
            self.load({"id": "TFP-FILE-A", "phase": "execution"})

    def test_unknown_field(self):
        with self.assertRaisesRegex(gen_rules.RuleError, r"unknown field \{nope\}"):
            self.load({"id": "TFP-FILE-A", "message": "{{nope}}"})

    def test_phase_order(self):
        with self.assertRaisesRegex(gen_rules.RuleError, "grouped by phase"):
            self.load({"id": "TFP-SYM-A", "phase": "symbols"}, {"id": "TFP-FILE-A"})

    def test_missing_key(self):
        path = rules_file({"id": "TFP-FILE-A"})
        with open(path) as f:
            text = f.read().replace('fix = "f"\n', "")
        with open(path, "w") as f:
            f.write(text)
        try:
            with self.assertRaisesRegex(gen_rules.RuleError, "missing keys"):
                gen_rules.load_rules(path)
        finally:
            os.unlink(path)


class Generated(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rules = gen_rules.load_rules()
        cls.releases, cls.masks = gen_rules.release_exports()

    def test_enum_name(self):
        self.assertEqual(gen_rules.enum_name("TFP-SYM-ENTRY-NOT-FUNCTION"), "kSymEntryNotFunction")

    def test_masks(self):
        old = [r for i, r in enumerate(self.releases) if self.masks["TF_AssignVariable"] >> i & 1]
        self.assertEqual(old[0], "2.6")
        self.assertEqual(old[-1], "2.18")
        self.assertEqual(self.masks["TF_NewStatus"], (1 << len(self.releases)) - 1)
        self.assertTrue(all(s.startswith(gen_rules.EXPORT_PREFIXES) for s in self.masks))

    def test_table(self):
        text = gen_rules.render_table(self.rules, self.releases, self.masks)
        names = [line.split('"')[1] for line in text.splitlines()
                 if line.startswith('    {"') and "u}," in line]
        self.assertEqual(names, sorted(names))  # the validator binary-searches them
        self.assertEqual(len(names), len(self.masks))
        ids = gen_rules.render_ids(self.rules)
        self.assertIn(f"kRuleCount = {len(self.rules)};", ids)

    def test_docs(self):
        md = gen_rules.render_md(self.rules, self.releases, self.masks)
        for r in self.rules:
            self.assertIn(f"### {r['id']}\n", md)
        self.assertIn("## Exit status", md)
        self.assertIn("(exported by 2.6-2.18)", md)

    def test_coverage(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "meson.build"), "w") as f:
                f.write(textwrap.dedent("""\
                    t = ['--expect', 'TFP-FILE-MISSING,TFP-FILE-EMPTY']
                    u = ['--text', 'TFP-FILE-DIRECTORY']
                    """))
            problems = gen_rules.coverage(self.rules, d)
        missing = {p.split(":")[0] for p in problems}
        self.assertNotIn("TFP-FILE-MISSING", missing)
        self.assertNotIn("TFP-FILE-EMPTY", missing)
        self.assertIn("TFP-FILE-DIRECTORY", missing)  # named, but not as --expect


if __name__ == "__main__":
    unittest.main()
