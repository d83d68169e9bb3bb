#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Unit tests for bench/run's pairing of benchmarks with their anchors, on
synthetic Google Benchmark results (no benchmark runs)."""

import importlib.machinery
import importlib.util
import os
import tempfile
import unittest

RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "run")
_loader = importlib.machinery.SourceFileLoader("bench_run", RUN)
_spec = importlib.util.spec_from_loader("bench_run", _loader)
bench_run = importlib.util.module_from_spec(_spec)
_loader.exec_module(bench_run)


def result(label="", gflops=None, real_time=None):
    entry = {"label": label, "time_unit": "ns"}
    if gflops is not None:
        entry["gflops"] = gflops
    if real_time is not None:
        entry["real_time"] = real_time
    return {"median": entry}


GFLOPS = "metric=gflops unit=GFLOP/s better=higher"


def rows_by_name(results):
    """bench/run's rows for `results`, by name, and its notes."""
    rows, notes = bench_run.build_rows(results)
    return {r["name"]: r for r in rows}, notes


class PairingTest(unittest.TestCase):
    def test_pairs_with_the_fastest_candidate(self):
        rows, notes = rows_by_name({
            "anchor/blas": result(gflops=80.0),
            "anchor/dnnl": result(gflops=100.0),
            "MatMul/x": result(f"anchor=anchor/blas|anchor/dnnl {GFLOPS}", gflops=90.0),
        })
        self.assertEqual(list(rows), ["MatMul/x"])  # anchors get no row
        self.assertEqual(rows["MatMul/x"]["anchor"], "anchor/dnnl")
        self.assertAlmostEqual(rows["MatMul/x"]["ratio"], 0.9)
        self.assertEqual(notes, [])

    def test_candidate_order_does_not_matter(self):
        rows, _ = rows_by_name({
            "anchor/blas": result(gflops=120.0),
            "anchor/dnnl": result(gflops=100.0),
            "MatMul/x": result(f"anchor=anchor/dnnl|anchor/blas {GFLOPS}", gflops=90.0),
        })
        self.assertEqual(rows["MatMul/x"]["anchor"], "anchor/blas")
        self.assertAlmostEqual(rows["MatMul/x"]["ratio"], 0.75)

    def test_a_candidate_that_did_not_run_is_skipped(self):
        rows, notes = rows_by_name({
            "anchor/blas": result(gflops=80.0),
            "MatMul/x": result(f"anchor=anchor/blas|anchor/dnnl {GFLOPS}", gflops=100.0),
        })
        self.assertEqual(rows["MatMul/x"]["anchor"], "anchor/blas")
        self.assertAlmostEqual(rows["MatMul/x"]["ratio"], 1.25)
        self.assertEqual(notes, [])

    def test_no_candidate_ran_says_so(self):
        rows, notes = rows_by_name({
            "MatMul/x": result(f"anchor=anchor/blas|anchor/dnnl {GFLOPS}", gflops=100.0),
        })
        self.assertIsNone(rows["MatMul/x"]["anchor"])
        self.assertIsNone(rows["MatMul/x"]["ratio"])
        self.assertEqual(len(notes), 1)
        self.assertIn("anchor/blas|anchor/dnnl did not run", notes[0])

    def test_for_times_the_fastest_is_the_lowest(self):
        rows, _ = rows_by_name({
            "anchor/a": result(real_time=200.0),
            "anchor/b": result(real_time=100.0),
            "Op/x": result("anchor=anchor/a|anchor/b", real_time=50.0),
        })
        self.assertEqual(rows["Op/x"]["anchor"], "anchor/b")
        self.assertAlmostEqual(rows["Op/x"]["ratio"], 2.0)

    def test_single_anchor_as_before(self):
        rows, _ = rows_by_name({
            "anchor/a": result(real_time=200.0),
            "Op/x": result("anchor=anchor/a", real_time=100.0),
        })
        self.assertEqual(rows["Op/x"]["anchor"], "anchor/a")
        self.assertAlmostEqual(rows["Op/x"]["ratio"], 2.0)


def paired(anchors, gflops, rates, ratios, cvs=None):
    """A paired benchmark's result: the anchors' rates and the round-by-round
    ratios are its own counters, as TimePaired (bench/vacc_dense_bench.h)
    writes them."""
    entry = {"label": f"anchor={'|'.join(anchors)} paired=yes {GFLOPS}", "time_unit": "ns",
             "gflops": gflops}
    for name, rate, ratio in zip(anchors, rates, ratios):
        entry[f"gflops@{name}"] = rate
        entry[f"ratio@{name}"] = ratio
    r = {"median": entry}
    if cvs is not None:
        r["cv"] = {f"gflops@{name}": cv for name, cv in zip(anchors, cvs)}
    return r


class PairedTest(unittest.TestCase):
    def test_anchor_and_ratio_come_from_the_same_entry(self):
        rows, notes = rows_by_name({
            # Separate anchor benchmarks of the same name are not what a
            # paired row reads.
            "anchor/dnnl/paired": result(gflops=1.0),
            "MatMul/x/paired": paired(["anchor/blas/paired", "anchor/dnnl/paired"], 90.0,
                                      [20.0, 100.0], [4.4, 0.93], cvs=[0.3, 0.05]),
        })
        row = rows["MatMul/x/paired"]
        self.assertEqual(row["anchor"], "anchor/dnnl/paired")  # the faster anchor
        self.assertAlmostEqual(row["anchor_value"], 100.0)
        # The median of the rounds' ratios, not 90 / 100.
        self.assertAlmostEqual(row["ratio"], 0.93)
        self.assertAlmostEqual(row["_anchor_cv"], 0.05)
        self.assertTrue(row["_paired"])
        self.assertEqual(notes, [])

    def test_no_anchor_counter_says_so(self):
        rows, notes = rows_by_name({
            "MatMul/x/paired": {"median": {
                "label": f"anchor=anchor/dnnl/paired paired=yes {GFLOPS}", "gflops": 90.0}},
        })
        self.assertIsNone(rows["MatMul/x/paired"]["ratio"])
        self.assertEqual(len(notes), 1)
        self.assertIn("no gflops@ANCHOR counter", notes[0])

    def test_paired_needs_a_counter_that_is_a_speed(self):
        rows, notes = rows_by_name({
            "Op/x/paired": result("anchor=anchor/a paired=yes", real_time=5.0),
        })
        self.assertIsNone(rows["Op/x/paired"]["ratio"])
        self.assertIn("paired=yes needs metric=COUNTER and better=higher", notes[0])


class CollectTest(unittest.TestCase):
    def test_rows_in_registration_order_not_finishing_order(self):
        def agg(name, family):
            return {"name": name + "_median", "run_name": name, "run_type": "aggregate",
                    "aggregate_name": "median", "family_index": family,
                    "per_family_instance_index": 0, "real_time": 1.0, "time_unit": "ns"}
        report = {"benchmarks": [agg("Op/b", 1), agg("Op/c", 2), agg("Op/a", 0)]}
        results, errors = bench_run.collect(report, "prog")
        self.assertEqual(list(results), ["Op/a", "Op/b", "Op/c"])
        self.assertEqual(errors, [])


class NotBuiltTest(unittest.TestCase):
    def write(self, text):
        d = tempfile.mkdtemp()
        os.mkdir(os.path.join(d, "bench"))
        with open(os.path.join(d, "bench", "not_built.txt"), "w") as f:
            f.write(text)
        return d

    def test_nothing_left_out_is_an_empty_list(self):
        # The template's one line, with an empty list substituted.
        self.assertEqual(bench_run.programs_not_built(self.write("\n")), [])

    def test_each_program_left_out_with_its_reason(self):
        d = self.write("bench_vacc_matmul: not found: oneDNN\nbench_vacc_conv: not found: oneDNN\n")
        self.assertEqual(bench_run.programs_not_built(d),
                         ["bench_vacc_matmul: not found: oneDNN",
                          "bench_vacc_conv: not found: oneDNN"])

    def test_a_build_dir_without_the_file(self):
        self.assertEqual(bench_run.programs_not_built(tempfile.mkdtemp()), [])


# A stand-in benchmark program: lists its benchmarks as Google Benchmark
# does, matching --benchmark_filter with a regex search.
FAKE_PROGRAM = """#!/usr/bin/env python3
import re, sys
names = ["anchor/MatMul/onednn/256x256x256/t1/real_time", "MatMul/256x256x256/t1/real_time",
         "MatMul/512x512x512/t1/real_time"]
pattern = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--benchmark_filter="))
if "--benchmark_list_tests=true" in sys.argv:
    print("\\n".join(n for n in names if re.search(pattern, n)))
"""


class FilterTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.program = os.path.join(self.dir.name, "bench_fake")
        with open(self.program, "w") as f:
            f.write(FAKE_PROGRAM)
        os.chmod(self.program, 0o755)

    def tearDown(self):
        self.dir.cleanup()

    def test_selects_benchmarks_not_anchors(self):
        self.assertEqual(bench_run.selected_benchmarks(self.program, "256x256"),
                         ["MatMul/256x256x256/t1/real_time"])

    def test_a_pattern_ending_in_dollar_selects_nothing(self):
        self.assertEqual(bench_run.selected_benchmarks(self.program, "MatMul/.*/t1$"), [])

    def test_a_program_that_cannot_list_is_none(self):
        self.assertIsNone(bench_run.selected_benchmarks("/bin/false", "x"))


if __name__ == "__main__":
    unittest.main()
