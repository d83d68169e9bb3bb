# SPDX-License-Identifier: Apache-2.0
"""vacc's pluggable profiler in TensorFlow, inside the TF venv.

A small Keras MLP training step (a tf.function) runs on /VACC:0 under
tf.profiler.experimental.start/stop. TensorFlow calls vacc's TF_InitProfiler
callbacks and writes the XSpace they return into its trace; the check reads
the trace back (xplane_ops.py) and requires, on the plane vacc names
"/device:CUSTOM:VACC:0": events for the ops the step ran on VACC (MatMul,
BiasAdd, Relu, ReluGrad), with non-negative offsets and durations. A step
run *outside* the session must add nothing (events only while profiling).
"""

import os
import tempfile

import numpy as np
import tensorflow as tf

import keras_train_step
import xplane_ops

PLANE = "/device:CUSTOM:VACC:0"
EXPECTED_OPS = ["MatMul", "BiasAdd", "Relu", "ReluGrad"]
STEPS = 3


def say(line):
    print(line, flush=True)


def make_step(device):
    """A small MLP's training step on `device` (keras_train_step.py)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 20)).astype("float32")
    y = rng.integers(0, 10, 64).astype("int32")
    return keras_train_step.train_step(device, x, y, hidden=[32], learning_rate=0.1)


def run(result, device):
    failures = result["failures"]
    if not any(d.device_type == "VACC" for d in tf.config.list_physical_devices()):
        failures.append("no VACC device: the plugin did not load")
        return
    step = make_step(device)
    step()  # trace and build variables outside the session
    with tempfile.TemporaryDirectory(prefix="vacc-profile-") as logdir:
        tf.profiler.experimental.start(logdir)
        for _ in range(STEPS):
            step()
        tf.profiler.experimental.stop()
        step()  # after the session: must not show up
        spaces = xplane_ops.load_spaces(logdir)
    names = xplane_ops.plane_names(spaces)
    result["planes"] = names
    say(f"profile: {len(spaces)} trace file(s), planes: {', '.join(names) or 'none'}")
    if not spaces:
        failures.append("tf.profiler wrote no .xplane.pb trace")
        return
    if PLANE not in names:
        failures.append(f"no plane {PLANE!r} in the trace (TensorFlow did not register or "
                        f"did not collect vacc's profiler); planes: {names}")
        return
    events = xplane_ops.device_op_events(spaces, PLANE)
    counts = {}
    for op, _, ps in events:
        counts[op] = counts.get(op, 0) + 1
        if ps < 0:
            failures.append(f"{op}: negative duration {ps} ps")
    result["op_events"] = counts
    say(f"profile: {len(events)} kernel events on {PLANE}: "
        + ", ".join(f"{op} x{n}" for op, n in sorted(counts.items())))
    for line in xplane_ops.per_op_seconds(events, STEPS, top=6):
        say(f"  {line[1] * 1e6:9.1f} us/step  {line[0]}")
    missing = [op for op in EXPECTED_OPS if op not in counts]
    if missing:
        failures.append(f"no events on {PLANE} for {', '.join(missing)} "
                        f"(recorded: {sorted(counts)})")
    # Each op of the step ran once per profiled step: a count that is not a
    # multiple of STEPS means events leaked in from outside the session (or got lost).
    odd = {op: n for op, n in counts.items() if op in EXPECTED_OPS and n % STEPS}
    if odd:
        failures.append(f"event counts not a multiple of the {STEPS} profiled steps: {odd}")
