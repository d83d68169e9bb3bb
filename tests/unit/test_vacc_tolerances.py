#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/tensorflow/vacc_tolerances.py holds docs/conformance.md's tolerance table.

The `tensorflow` suite compares VACC with TF's CPU at bounds it takes from
vacc_tolerances.TABLE; the document states them. This reads the document's
"Tolerances" table and fails when a cell and the module differ, so the
numbers the suite uses are the documented ones.
"""

import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(HERE, "..", "..", "docs", "conformance.md")
sys.path.insert(0, os.path.join(HERE, "..", "tensorflow"))
import vacc_tolerances  # noqa: E402

NUM = r"(\d(?:\.\d+)?e-\d+)"
ROWS = {"one rounded operation": "one_rounding", "transcendental": "transcendental",
        "sums of K terms": "sum"}
COLUMNS = {"float32": "float32", "bfloat16": "bfloat16", "half": "float16"}


def parse_cell(cell):
    """(abs0, abs per term, rel0, rel per term) of one cell's formula, or None."""
    cell = cell.replace("\\|", "|").strip()
    m = re.fullmatch(rf"\({NUM} \+ {NUM}·K\)\(1 \+ \|want\|\)", cell)
    if m:
        a, b = float(m.group(1)), float(m.group(2))
        return (a, b, a, b)
    m = re.fullmatch(rf"{NUM}(·K)? \+ {NUM}·\|want\|", cell)
    if m:
        x, rel = float(m.group(1)), float(m.group(3))
        return (0, x, rel, 0) if m.group(2) else (x, 0, rel, 0)
    return None


def doc_table():
    """{kind: {dtype: bound}} from the document's Tolerances table."""
    with open(DOC) as f:
        text = f.read()
    section = text.split("\n## Tolerances", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    dtypes = [COLUMNS[c] for c in header[1:]]
    table, previous = {}, None
    for line in lines[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        kind = next((k for label, k in ROWS.items() if cells[0].startswith(label)), None)
        if kind is None:
            raise AssertionError(f"unknown row in {DOC}: {cells[0]!r}")
        row = {}
        for dtype, cell in zip(dtypes, cells[1:]):
            bound = previous[dtype] if cell == "same as above" else parse_cell(cell)
            if bound is None:
                raise AssertionError(f"cannot read {kind}/{dtype} cell {cell!r} in {DOC}")
            row[dtype] = bound
        table[kind], previous = row, row
    return table


class Tolerances(unittest.TestCase):

    def test_table_is_the_documented_one(self):
        self.assertEqual(doc_table(), {k: {d: tuple(float(x) for x in v) for d, v in row.items()}
                                       for k, row in vacc_tolerances.TABLE.items()})

    def test_parser_reads_each_form(self):
        self.assertEqual(parse_cell("(1e-5 + 2e-6·K)(1 + \\|want\\|)"), (1e-5, 2e-6, 1e-5, 2e-6))
        self.assertEqual(parse_cell("1e-3·K + 1e-2·\\|want\\|"), (0, 1e-3, 1e-2, 0))
        self.assertEqual(parse_cell("1e-4 + 2e-3·\\|want\\|"), (1e-4, 0, 2e-3, 0))
        self.assertIsNone(parse_cell("about 1e-4"))

    def test_bound(self):
        # Twice the documented bound against the CPU; exact for integers and exact kinds.
        self.assertEqual(vacc_tolerances.bound("one_rounding", "bfloat16"), (2e-2, 2e-3))
        rtol, atol = vacc_tolerances.bound("sum", "float32", 10)
        self.assertAlmostEqual(rtol, 2 * (1e-5 + 2e-5))
        self.assertAlmostEqual(atol, 2 * (1e-5 + 2e-5))
        self.assertEqual(vacc_tolerances.bound("sum", "float16", 33)[1], 2 * 33 * 1e-4)
        self.assertEqual(vacc_tolerances.bound("sum", "int32", 33), (0.0, 0.0))
        self.assertEqual(vacc_tolerances.bound("exact", "float32"), (0.0, 0.0))


if __name__ == "__main__":
    unittest.main()
