#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The kernel benchmarks read the plugin's settings the way the plugin does
(bench/vacc_bench_device.h, ConfigureFromEnvironment): VACC_SPIN_US,
VACC_SIMD and VACC_GEMM_TILE reach the benchmark's device and its report, and a value the
plugin would reject stops the program naming the variable. Runs one short
benchmark of the program given (argv[1]); no timing is checked."""

import json
import os
import subprocess
import sys
import unittest

PROGRAM = None
# A benchmark of a small tensor, quick to run.
FILTER = "^BiasAdd/25088x64/t1/real_time$"


def run(env_extra, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("VACC_")}
    env.update(env_extra)
    return subprocess.run([PROGRAM, *args], env=env, capture_output=True, text=True,
                          timeout=120)


def context(env_extra):
    proc = run(env_extra, f"--benchmark_filter={FILTER}", "--benchmark_min_time=0.001",
               "--benchmark_format=json")
    if proc.returncode != 0:
        raise AssertionError(f"{PROGRAM} exited {proc.returncode}: {proc.stderr}")
    return json.loads(proc.stdout)["context"]


class BenchSettings(unittest.TestCase):
    def test_spin_defaults_to_the_plugins(self):
        self.assertEqual(context({})["vacc_spin_us"], "50")

    def test_spin_from_the_environment(self):
        self.assertEqual(context({"VACC_SPIN_US": "7"})["vacc_spin_us"], "7")

    def assert_rejected(self, variable, value):
        proc = run({variable: value}, f"--benchmark_filter={FILTER}")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(variable, proc.stderr)

    def test_a_spin_the_plugin_rejects_stops_the_program(self):
        self.assert_rejected("VACC_SPIN_US", "soon")

    def test_simd_reaches_the_report(self):
        self.assertEqual(context({"VACC_SIMD": "scalar"})["vacc_simd"], "scalar")

    def test_an_unknown_simd_stops_the_program(self):
        self.assert_rejected("VACC_SIMD", "NEON9")

    def test_gemm_tile_reaches_the_report(self):
        # "AVX3 6x64" on AVX-512, the tall tile elsewhere (no wide one there).
        tall = context({"VACC_GEMM_TILE": "tall"})["vacc_gemm_tile"]
        wide = context({"VACC_GEMM_TILE": "wide"})["vacc_gemm_tile"]
        self.assertRegex(tall, r"^\S+ \d+x\d+$")
        self.assertRegex(wide, r"^\S+ \d+x\d+$")
        if wide != tall:
            self.assertTrue(wide.endswith(" 6x64"), wide)

    def test_an_unknown_gemm_tile_stops_the_program(self):
        self.assert_rejected("VACC_GEMM_TILE", "square")


if __name__ == "__main__":
    PROGRAM = sys.argv.pop(1)
    unittest.main()
