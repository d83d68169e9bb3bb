#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Unit tests for the verdicts in tests/tensorflow/vacc_in_tf.py, without TensorFlow.

That test needs a pip-installed TensorFlow; these feed its kernel-list parser
and its decision synthetic input, so we know a plugin kernel that TensorFlow
did not compare with its CPU fails the test (and not only ever passes).
"""

import importlib.util
import io
import os
import shutil
import stat
import tempfile
import unittest
from contextlib import redirect_stdout

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tensorflow",
                      "vacc_in_tf.py")
_spec = importlib.util.spec_from_file_location("vacc_in_tf", SCRIPT)
vacc_in_tf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vacc_in_tf)

LIST = """plugin: libfake.so
emulating: TensorFlow 2.21
platform: name VACC, type VACC, 1 device(s)
kernels: 4
  Relu on VACC {T=float}
  Relu on VACC {T=half}
  Cast on VACC {SrcT=bfloat16, DstT=double}
  Sum on VACC {T=int32} host_memory=[reduction_indices]
ops defined by the plugin: 0
"""
KERNELS = ["Cast{DstT=float64, SrcT=bfloat16}", "Relu{T=float16}", "Relu{T=float32}",
           "Sum{T=int32}"]


class PluginKernels(unittest.TestCase):

    def fake_run(self, text):
        tmp = tempfile.mkdtemp(prefix="tfplugin-fake-run-")
        self.addCleanup(shutil.rmtree, tmp)
        path = os.path.join(tmp, "tfplugin-run")
        with open(os.path.join(tmp, "out"), "w") as f:
            f.write(text)
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\ncat '{tmp}/out'\n")
        os.chmod(path, stat.S_IRWXU)
        return path

    def test_names_like_tensorflow(self):
        # dtype names as TF's Python spells them, type attrs sorted.
        got = vacc_in_tf.plugin_kernels(self.fake_run(LIST), "libfake.so", "2.21")
        self.assertEqual(got, KERNELS)

    def test_count_mismatch_is_an_error(self):
        # A line the parser missed must not shrink the set that has to be covered.
        text = LIST.replace("  Sum on VACC {T=int32}", "  Sum on  VACC {T=int32}")
        with self.assertRaises(vacc_in_tf.Error):
            vacc_in_tf.plugin_kernels(self.fake_run(text), "libfake.so", "2.21")


class DecideOps(unittest.TestCase):

    def decide(self, result, plugin=KERNELS):
        with redirect_stdout(io.StringIO()):
            return vacc_in_tf.decide_ops(dict({"failures": []}, **result), plugin)

    def test_all_compared_passes(self):
        self.assertEqual(self.decide({"vacc_kernels": KERNELS, "checked": KERNELS, "runs": 5}),
                         [])

    def test_kernel_without_case_fails(self):
        failures = self.decide({"vacc_kernels": KERNELS, "checked": KERNELS[1:]})
        self.assertEqual(len(failures), 1)
        self.assertIn("Cast{DstT=float64, SrcT=bfloat16}", failures[0])
        self.assertIn("vacc_op_cases.py", failures[0])

    def test_kernel_tf_did_not_register_fails(self):
        failures = self.decide({"vacc_kernels": KERNELS[:3], "checked": KERNELS[:3]})
        self.assertTrue(any("only in the plugin: ['Sum{T=int32}']" in f for f in failures),
                        failures)
        self.assertTrue(any("not compared" in f and "Sum{T=int32}" in f for f in failures),
                        failures)

    def test_check_failures_are_kept(self):
        failures = self.decide({"vacc_kernels": KERNELS, "checked": KERNELS,
                                "failures": ["Relu{T=float16}: 3 of 111 elements differ"]})
        self.assertEqual(failures, ["Relu{T=float16}: 3 of 111 elements differ"])


if __name__ == "__main__":
    unittest.main()
