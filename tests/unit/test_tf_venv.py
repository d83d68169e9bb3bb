#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The `tensorflow` suite without a usable package index: it skips, never passes or hangs.

Each case runs an entry point of tests/tensorflow with a fresh, empty cache
(XDG_CACHE_HOME in a temporary directory, so a new venv is created) and pip
pointed at a local address: one that refuses connections, and one that
accepts them and never answers (pip would wait minutes; the helper's install
time limit, TFPLUGIN_TF_INSTALL_TIMEOUT, must stop it). Each must print
`skipped: <reason>` and exit 77 within a bound; no network is used.
"""

import os
import socket
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "..", "tensorflow")
SKIP = 77
# Creating the venv (ensurepip, offline) plus the bounded pip attempts, with room
# for a loaded machine; exceeding it means the helper hung.
BOUND = 240


def closed_port():
    """A local port nothing listens on: connections are refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NoIndex(unittest.TestCase):

    def run_entry(self, args, index_url, install_timeout, pip_timeout=3):
        """The last line `args` printed, after asserting it is a skip."""
        with tempfile.TemporaryDirectory(prefix="tfplugin-no-index-") as tmp:
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith("PIP_") and k != "TFPLUGIN_TF_RELEASE"}
            env.update(XDG_CACHE_HOME=os.path.join(tmp, "cache"), PIP_INDEX_URL=index_url,
                       PIP_CONFIG_FILE=os.devnull, PIP_RETRIES="0",
                       PIP_TIMEOUT=str(pip_timeout), PIP_NO_CACHE_DIR="1",
                       TFPLUGIN_TF_INSTALL_TIMEOUT=str(install_timeout))
            r = subprocess.run([sys.executable] + args, env=env, stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=BOUND)
            venv = os.path.join(tmp, "cache", "tfplugin", "venv-tf2.21")
            self.assertFalse(os.path.exists(os.path.join(venv, "tfplugin-venv.json")),
                             "a failed install left a stamp: the next run would reuse it")
        lines = r.stdout.strip().splitlines()
        self.assertEqual(r.returncode, SKIP, r.stdout + r.stderr)
        self.assertTrue(lines and lines[-1].startswith("skipped: "), r.stdout)
        return lines[-1]

    def test_refused_index_skips(self):
        url = f"http://127.0.0.1:{closed_port()}/simple"
        last = self.run_entry([os.path.join(SUITE, "tf_venv.py"), "2.21"], url, 120)
        self.assertIn("cannot pip install TensorFlow 2.21", last)
        self.assertIn("tensorflow-cpu==2.21.*", last)

    def test_refused_index_skips_the_tests(self):
        # The suite's own entry points, through the same helper.
        url = f"http://127.0.0.1:{closed_port()}/simple"
        last = self.run_entry([os.path.join(SUITE, "installed_tf_abi.py"), "--release", "2.21"],
                              url, 120)
        self.assertIn("cannot pip install TensorFlow 2.21", last)
        last = self.run_entry([os.path.join(SUITE, "vacc_in_tf.py"), "--plugin", "unused.so",
                               "--built-for", "2.21", "--version", "0", "--validate-plugin",
                               "unused", "--tfplugin-run", "unused"], url, 120)
        self.assertIn("cannot pip install TensorFlow 2.21", last)

    def test_silent_index_times_out_and_skips(self):
        # Accepts connections (the kernel's backlog) and never answers a byte;
        # pip alone would wait 600 s per request.
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen(16)
            url = f"http://127.0.0.1:{server.getsockname()[1]}/simple"
            last = self.run_entry([os.path.join(SUITE, "tf_venv.py"), "2.21"], url, 10,
                                  pip_timeout=600)
        self.assertIn("timed out", last)


if __name__ == "__main__":
    unittest.main()
