#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One Keras training step on VACC vs TensorFlow's own CPU device, same run.

    bench/keras_step_bench.py [--plugin build/examples/vacc/libvacc.so]
                              [--rounds 5] [--steps 20] [--json FILE]

Runs in the TensorFlow venv the `tensorflow` suite uses (tests/tensorflow/
tf_venv.py: created on first use, ~/.cache/tfplugin/venv-tf<release>), with
the plugin loaded through TF_PLUGGABLE_DEVICE_LIBRARY_PATH. The model is an
MLP 784-512-512-10 (ReLU, sparse softmax cross-entropy, SGD) on a batch of 256,
its step a tf.function (tests/tensorflow/keras_train_step.py, which the
profiler check uses too). The devices alternate round by round (a noisy
machine slows both alike) and each round's figure is the median step time;
the result is the median over rounds. Then TF's profiler records 10 steps on
each device and the op events are summed per op type: where the time goes.
On VACC those are the kernel events vacc's pluggable profiler (TF_InitProfiler)
puts on its device plane "/device:CUSTOM:VACC:0" (time on the compute units);
on the CPU device, TensorFlow's host-side op events ("node:OpType"). Both are
read by tests/tensorflow/xplane_ops.py.

Then the same for a small tf.function whose result Python reads (11 ops on
4 floats): its time is per-call dispatch, the kernels, and, on VACC, the
device-to-host read of the result, against the same function on the CPU
device.

Prints a table; --json writes bench/run's row format ({name, value, unit,
anchor, anchor_value, ratio}, ratio = VACC speed / CPU speed, so > 1 means VACC
is faster; the step-time ratio VACC/CPU is its inverse). Exit 77 when
TensorFlow cannot be installed here (says why).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "tensorflow"))
import tf_venv  # noqa: E402  (the suite's venv logic, shared)
sys.path.insert(0, os.path.join(REPO, "tools"))
from abi_model import Model  # noqa: E402  (the releases abi/facts describes)

CHILD = r"""
import glob, json, os, statistics, sys, time
import numpy as np
import tensorflow as tf

rounds, steps, logdir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, sys.argv[4])  # tests/tensorflow: the step, and xplane_ops, the trace reader
import keras_train_step, xplane_ops
rng = np.random.default_rng(0)
x = rng.standard_normal((256, 784)).astype("float32")
y = rng.integers(0, 10, 256).astype("int32")

def make(device):
    run = keras_train_step.train_step(device, x, y, hidden=[512, 512], learning_rate=0.01)
    for _ in range(5):
        run()  # trace, build variables, warm caches
    return run

devices = {"VACC": "/VACC:0", "CPU": "/CPU:0"}
if not tf.config.list_physical_devices("VACC"):
    print(json.dumps({"error": "no VACC device: the plugin did not load"}))
    sys.exit(1)
runs = {name: make(dev) for name, dev in devices.items()}
medians = {name: [] for name in devices}
for _ in range(rounds):
    for name, run in runs.items():
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        medians[name].append(statistics.median(times))

# The round trip of a small function whose result Python reads: 11 ops on a
# 4-float tensor, so the time is dispatch, not arithmetic (on VACC: the
# kernels, then memcpy_dtoh + record_event + TF's event manager).
TINY_OPS = 5
def make_tiny(device):
    with tf.device(device):
        v = tf.constant([1.0, 2.0, 3.0, 4.0])
    @tf.function
    def f(t):
        for _ in range(TINY_OPS):
            t = tf.nn.relu(t * 1.0001)
        return tf.reduce_sum(t)
    def call():
        with tf.device(device):
            return float(f(v))
    for _ in range(20):
        call()
    return call
tiny = {name: make_tiny(dev) for name, dev in devices.items()}
tiny_medians = {name: [] for name in devices}
for _ in range(rounds):
    for name, call in tiny.items():
        times = []
        for _ in range(100):
            t0 = time.perf_counter()
            call()
            times.append(time.perf_counter() - t0)
        tiny_medians[name].append(statistics.median(times))

# Where the time goes: 10 profiled steps per device. VACC's kernels are on
# the device plane vacc's profiler (TF_InitProfiler) returns, timed on the
# compute units; the CPU device's ops are TensorFlow's host-side op events.
PROFILED = 10
breakdown, planes = {}, {}
for name, run in runs.items():
    d = os.path.join(logdir, name)
    tf.profiler.experimental.start(d)
    for _ in range(PROFILED):
        run()
    tf.profiler.experimental.stop()
    spaces = xplane_ops.load_spaces(d)
    planes[name] = xplane_ops.plane_names(spaces)
    if name == "VACC":
        events = xplane_ops.device_op_events(spaces, "/device:CUSTOM:VACC:0")
    else:
        events = xplane_ops.host_op_events(spaces)
    breakdown[name] = xplane_ops.per_op_seconds(events, PROFILED)
print(json.dumps({"medians": medians, "tiny_medians": tiny_medians, "breakdown": breakdown,
                  "planes": planes}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugin", default=os.path.join(REPO, "build", "examples", "vacc", "libvacc.so"))
    ap.add_argument("--release", default=None, help="TF release (default: the newest in abi/facts)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--json", help="write bench/run-style rows here")
    args = ap.parse_args()
    if not os.path.exists(args.plugin):
        print(f"keras_step_bench: {args.plugin}: no such plugin (build it: ./dev setup)")
        return 2
    release = args.release or Model().newest
    try:
        venv, _, _, _ = tf_venv.venv_for(release)
    except tf_venv.Skip as e:
        print(f"skipped: TensorFlow {release} cannot be installed here: {e}")
        return 77
    python = tf_venv.venv_python(venv)
    env = dict(os.environ, TF_PLUGGABLE_DEVICE_LIBRARY_PATH=os.path.abspath(args.plugin),
               TF_CPP_MIN_LOG_LEVEL="2")
    with tempfile.TemporaryDirectory() as logdir:
        p = subprocess.run([python, "-c", CHILD, str(args.rounds), str(args.steps), logdir,
                            os.path.join(REPO, "tests", "tensorflow")],
                           env=env, capture_output=True, text=True, timeout=1800)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        print(f"keras_step_bench: the TensorFlow child failed (exit {p.returncode}):\n"
              f"{p.stdout[-2000:]}{p.stderr[-3000:]}")
        return 1
    out = json.loads(lines[-1])
    med = {k: sorted(v)[len(v) // 2] for k, v in out["medians"].items()}
    vacc, cpu = med["VACC"], med["CPU"]
    name = "KerasMLP/train_step/784-512-512-10/b256"
    print(f"TensorFlow {release}, {args.rounds} rounds x {args.steps} steps, medians")
    print(f"{name}: VACC {vacc * 1e3:.2f} ms/step, TF CPU device {cpu * 1e3:.2f} ms/step, "
          f"step-time ratio VACC/CPU {vacc / cpu:.2f} (speed ratio {cpu / vacc:.2f})")
    source = {"VACC": "kernel events on the device plane from vacc's TF_InitProfiler",
              "CPU": "TensorFlow's host-side op events"}
    tiny = {k: sorted(v)[len(v) // 2] for k, v in out["tiny_medians"].items()}
    tiny_name = "TFFunction/11-tiny-ops-read-by-python"
    print(f"{tiny_name}: VACC {tiny['VACC'] * 1e6:.0f} us/call, TF CPU device "
          f"{tiny['CPU'] * 1e6:.0f} us/call, time ratio VACC/CPU {tiny['VACC'] / tiny['CPU']:.2f}")
    for dev, rows in out["breakdown"].items():
        print(f"where the time goes on {dev} ({source.get(dev, 'profiler events')}, "
              f"ms per step, top 12):")
        if not rows:
            print(f"  (no op events; planes in the trace: {', '.join(out['planes'][dev])})")
        for n, s in rows:
            print(f"  {s * 1e3:9.3f}  {n[:90]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"name": name, "value": 1 / vacc, "unit": "steps/s",
                        "anchor": "TensorFlow CPU device (same model, same run)",
                        "anchor_value": 1 / cpu, "ratio": cpu / vacc},
                       {"name": tiny_name, "value": 1 / tiny["VACC"], "unit": "calls/s",
                        "anchor": "TensorFlow CPU device (same function, same run)",
                        "anchor_value": 1 / tiny["CPU"], "ratio": tiny["CPU"] / tiny["VACC"]}],
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
