#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Unit tests for tools/test_summary.py, run as a subprocess like `./dev test` runs it."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                      "test_summary.py")


def entry(name, result, suite="unit", stdout="", returncode=0):
    return {"name": name, "suite": [f"tfplugin:{suite}"], "result": result,
            "stdout": stdout, "returncode": returncode, "duration": 0.5}


def table_row(lines, suite):
    """[passed, failed, skipped] from the per-suite table row of `suite`."""
    for line in lines:
        fields = line.split()
        if len(fields) == 4 and fields[0] == suite:
            return [int(n) for n in fields[1:]]
    return None


class TestSummary(unittest.TestCase):
    def run_summary(self, entries=None, raw=None):
        """Write a synthetic testlog.json, run the script, return (exit code, output lines)."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "testlog.json")
            with open(path, "w", encoding="utf-8") as f:
                if raw is not None:
                    f.write(raw)
                for e in entries or []:
                    f.write(json.dumps(e) + "\n")
            proc = subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True,
                                  check=False)
        return proc.returncode, proc.stdout.splitlines()

    def test_all_pass(self):
        code, lines = self.run_summary([entry("a", "OK"), entry("b", "OK", suite="build")])
        self.assertEqual(code, 0)
        self.assertEqual(lines[-1], "2 passed, 0 failed, 0 skipped")
        self.assertFalse(any(line.startswith(("FAIL", "SKIP")) for line in lines))

    def test_fail(self):
        code, lines = self.run_summary([entry("good", "OK"), entry("bad", "FAIL", returncode=1)])
        self.assertEqual(code, 1)
        self.assertIn("FAIL     unit / bad (exit 1, 0.50s)", lines)
        self.assertEqual(lines[-1], "1 passed, 1 failed, 0 skipped")

    def test_skip_with_reason(self):
        out = "probing\nskipped: no GPU here\ncleanup done\n"
        code, lines = self.run_summary([entry("a", "OK"), entry("gpu", "SKIP", stdout=out,
                                                                 returncode=77)])
        self.assertEqual(code, 0)  # skipping is not failing
        self.assertIn("SKIP     unit / gpu: no GPU here", lines)
        self.assertEqual(lines[-1], "1 passed, 0 failed, 1 skipped")

    def test_skip_reason_falls_back_to_last_line(self):
        _, lines = self.run_summary([entry("x", "SKIP", stdout="first\nlast words\n\n")])
        self.assertIn("SKIP     unit / x: last words", lines)

    def test_timeout_error_unexpectedpass_fail(self):
        code, lines = self.run_summary([entry("slow", "TIMEOUT"), entry("boom", "ERROR"),
                                        entry("surprise", "UNEXPECTEDPASS"),
                                        entry("known", "EXPECTEDFAIL")])
        self.assertEqual(code, 1)
        self.assertTrue(any(line.startswith("TIMEOUT  unit / slow") for line in lines))
        self.assertEqual(lines[-1], "1 passed, 3 failed, 0 skipped")

    def test_per_suite_table(self):
        _, lines = self.run_summary([entry("a", "OK", suite="build"), entry("b", "FAIL"),
                                     entry("c", "SKIP", suite="build")])
        self.assertIn("suite  passed  failed  skipped", lines)
        self.assertEqual(table_row(lines, "build"), [1, 0, 1])
        self.assertEqual(table_row(lines, "unit"), [0, 1, 0])

    def test_meson_1_0_names_carry_the_suite(self):
        # meson 1.0 has no `suite` key: it writes `project:suite / test` as the name.
        code, lines = self.run_summary([
            {"name": "tfplugin:build / c99", "result": "FAIL", "returncode": 1},
            {"name": "tfplugin:unit+slow / t", "result": "OK"},
            {"name": "lonely", "result": "OK"},
        ])
        self.assertEqual(code, 1)
        self.assertIn("FAIL     build / c99 (exit 1)", lines)
        self.assertEqual(table_row(lines, "build"), [0, 1, 0])
        self.assertEqual(table_row(lines, "slow"), [1, 0, 0])
        self.assertEqual(table_row(lines, "(none)"), [1, 0, 0])
        self.assertEqual(lines[-1], "2 passed, 1 failed, 0 skipped")

    def test_empty_log_fails(self):
        code, lines = self.run_summary([])
        self.assertEqual(code, 1)
        self.assertTrue(any("no tests ran" in line for line in lines))
        self.assertEqual(lines[-1], "0 passed, 0 failed, 0 skipped")

    def test_missing_log_fails(self):
        proc = subprocess.run([sys.executable, SCRIPT, "/nonexistent/testlog.json"],
                              capture_output=True, text=True, check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(proc.stdout.splitlines()[-1], "0 passed, 0 failed, 0 skipped")

    def test_garbage_line_counts_as_failure(self):
        code, lines = self.run_summary([entry("a", "OK")], raw="{not json\n")
        self.assertEqual(code, 1)
        self.assertEqual(lines[-1], "1 passed, 1 failed, 0 skipped")


if __name__ == "__main__":
    unittest.main()
