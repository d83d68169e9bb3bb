#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""libtfplugin_layer.so through the SDK host: tfplugin-run loads the layer
as the plugin, the layer loads the real one (TFPLUGIN_LAYER_PLUGIN).

    check_layer.py TFPLUGIN_RUN LAYER PLUGIN CASE -- OP ARGS...

CASE: clean  (exit 0, "0 violations", some calls checked)
      RULE   (a rule id: reported on stderr and in TFPLUGIN_LAYER_JSON)
      abort:RULE  (TFPLUGIN_LAYER_ABORT=1: SIGABRT after reporting RULE)
      no-plugin   (TFPLUGIN_LAYER_PLUGIN unset: the load fails, saying so)
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile


def fail(msg, out=""):
    print(f"FAIL: {msg}\n--- output ---\n{out}")
    sys.exit(1)


def main():
    run, layer, plugin, case = sys.argv[1:5]
    op_args = sys.argv[sys.argv.index("--") + 1:]
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "layer.json")
        env = dict(os.environ, TFPLUGIN_LAYER_PLUGIN=plugin, TFPLUGIN_LAYER_JSON=report)
        env.pop("TFPLUGIN_LAYER_ABORT", None)
        if case.startswith("abort:"):
            env["TFPLUGIN_LAYER_ABORT"] = "1"
        if case == "no-plugin":
            env.pop("TFPLUGIN_LAYER_PLUGIN")
        r = subprocess.run([run, "op", layer] + op_args, env=env, capture_output=True,
                           text=True, timeout=120)
        out = r.stdout + r.stderr
        lines = []
        if os.path.exists(report):
            with open(report) as f:
                lines = [json.loads(x) for x in f if x.strip()]
    summary = re.search(r"tfplugin-layer: (\d+) calls checked, (\d+) violations", r.stderr)
    if case == "clean":
        if r.returncode != 0:
            fail(f"exit status {r.returncode}", out)
        if not summary or summary.group(2) != "0" or int(summary.group(1)) == 0:
            fail("expected calls checked and 0 violations", out)
        if lines:
            fail(f"JSON report not empty: {lines}", out)
    elif case == "no-plugin":
        if r.returncode == 0 or "TFPLUGIN_LAYER_PLUGIN is not set" not in out:
            fail("expected a failed load naming TFPLUGIN_LAYER_PLUGIN", out)
    else:
        rule = case.split(":", 1)[-1]
        if f"tfplugin-layer: error[{rule}]" not in r.stderr:
            fail(f"{rule} not reported on stderr", out)
        if rule not in [x["rule_id"] for x in lines]:
            fail(f"{rule} not in the JSON report {lines}", out)
        if not all(re.match(r"#\d+ SP_", x["message"]) for x in lines):
            fail("a JSON finding does not name its call", out)
        if case.startswith("abort:"):
            if r.returncode != -signal.SIGABRT:
                fail(f"exit status {r.returncode}, expected SIGABRT", out)
            if len(lines) != 1:
                fail(f"{len(lines)} findings before the abort, expected 1", out)
        elif not summary or summary.group(2) == "0":
            fail("the summary counts no violation", out)
    print(f"ok: {case}")


if __name__ == "__main__":
    main()
