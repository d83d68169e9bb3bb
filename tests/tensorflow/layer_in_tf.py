#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""libtfplugin_layer.so in a real TensorFlow (TF_PLUGGABLE_DEVICE_LIBRARY_PATH
points at the layer, TFPLUGIN_LAYER_PLUGIN at the real plugin).

  layer_in_tf.py --layer LAYER.so... --plugin libvacc.so --built-for R --model ops|mlp
      [--tfplugin-run PATH]
      vacc's TF checks (vacc_tf_checks.py) pass through the layer, which
      checked some calls and reports 0 violations
  layer_in_tf.py --layer LAYER.so --fault FIXTURE.so --rule ID --device TYPE --built-for R
      a tensor copied to the fixture's device: the layer reports ID (stderr
      and TFPLUGIN_LAYER_JSON), naming the call

--layer names every variant (libtfplugin_layer.so, _graph, _profiler, _full):
the one exporting exactly the plugin's entry points is used (nm -D).

Exit status: 0 pass, 1 fail, 77 skipped (prints `skipped: <reason>`).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tf_venv import (Error, exit_status, say, skip_if_sanitized, venv_for,  # noqa: E402
                     venv_python, verdict)
from vacc_in_tf import decide_model, decide_ops, plugin_kernels  # noqa: E402

FAULT_SCRIPT = """
import numpy as np, tensorflow as tf
with tf.device("/{device}:0"):
    y = tf.identity(tf.constant(np.arange(1 << 20, dtype=np.float32)))
print("placed", y.device)
"""


ENTRY_POINTS = ("SE_InitPlugin", "TF_InitKernel", "TF_InitGraph", "TF_InitProfiler")


def exported_entry_points(path):
    r = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise Error(f"nm -D {path}: {r.stderr.strip()}")
    names = {line.split()[-1] for line in r.stdout.splitlines() if line.split()}
    return {e for e in ENTRY_POINTS if e in names}


def pick_layer(layers, plugin):
    want = exported_entry_points(plugin) | {"SE_InitPlugin", "TF_InitKernel"}
    for layer in layers:
        if exported_entry_points(layer) == want:
            return layer
    raise Error(f"no layer variant exports {sorted(want)}")


def main_checked(args):
    layer = pick_layer(args.layer, args.plugin or args.fault)
    skip_if_sanitized(layer, args.plugin or args.fault)
    say(f"layer: {os.path.basename(layer)}")
    release = os.environ.get("TFPLUGIN_TF_RELEASE") or args.built_for
    venv, stamp, _, _ = venv_for(release)
    python = venv_python(venv)
    with tempfile.TemporaryDirectory(prefix="tfplugin-layer-in-tf-") as tmp:
        report = os.path.join(tmp, "layer.json")
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1", TFPLUGIN_LAYER_JSON=report,
                   TF_PLUGGABLE_DEVICE_LIBRARY_PATH=layer,
                   TFPLUGIN_LAYER_PLUGIN=args.plugin or args.fault)
        env.pop("TFPLUGIN_LAYER_ABORT", None)
        if args.fault:
            cmd = [python, "-c", FAULT_SCRIPT.format(device=args.device)]
        else:
            result_path = os.path.join(tmp, "result.json")
            cmd = [python, os.path.join(HERE, "vacc_tf_checks.py"), result_path, args.model]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
        findings = []
        if os.path.exists(report):
            with open(report) as f:
                findings = [json.loads(x) for x in f if x.strip()]
        summary = re.search(r"tfplugin-layer: (\d+) calls checked, (\d+) violations", r.stderr)
        layer_lines = [x for x in r.stderr.splitlines() if x.startswith("tfplugin-layer:")]
        for line in layer_lines[:20]:
            say(line[:400])
        failures = []
        if summary is None:
            failures.append("no layer summary on stderr: was the layer loaded?")
        if args.fault:
            if "placed" not in r.stdout:
                failures.append(f"the copy to {args.device} did not run: "
                                f"{r.stderr.strip().splitlines()[-1:]}")
            if args.rule not in [f["rule_id"] for f in findings]:
                failures.append(f"{args.rule} not reported: {findings}")
            if not all(re.match(r"#\d+ SP_", f["message"]) for f in findings):
                failures.append("a finding does not name its call")
        else:
            try:
                with open(result_path) as f:
                    result = json.load(f)
            except (OSError, ValueError):
                for line in r.stderr.strip().splitlines()[-20:]:
                    say(f"  | {line}")
                raise Error(f"vacc_tf_checks.py {args.model} exited {r.returncode} without a result")
            if args.model == "ops":
                failures += decide_ops(result, plugin_kernels(args.tfplugin_run, args.plugin,
                                                              args.built_for))
            else:
                failures += decide_model(result, args.model, False)
            if findings or (summary and summary.group(2) != "0"):
                failures.append(f"violations under the layer: {findings}")
            if summary and summary.group(1) == "0":
                failures.append("the layer checked no call")
    return verdict(failures, f"layer in {stamp['distribution']} {stamp['version']}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layer", required=True, nargs="+")
    ap.add_argument("--plugin")
    ap.add_argument("--model", choices=["ops", "mlp"], default="ops")
    ap.add_argument("--fault")
    ap.add_argument("--rule")
    ap.add_argument("--device", default="VFX_DEVICE")
    ap.add_argument("--built-for", required=True)
    ap.add_argument("--tfplugin-run", help="lists the plugin's kernels (--model ops)")
    args = ap.parse_args(argv)
    return exit_status(main_checked, args)


if __name__ == "__main__":
    sys.exit(main())
