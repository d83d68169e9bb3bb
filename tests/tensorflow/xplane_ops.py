# SPDX-License-Identifier: Apache-2.0
"""Where the time goes, from a tf.profiler trace: per-op events in its XSpace.

Runs in the TF venv (uses the xplane_pb2 TensorFlow ships). Used by
vacc_tf_profile.py (the `tensorflow` suite) and bench/keras_step_bench.py.

  spaces = load_spaces(logdir)            # after tf.profiler.experimental.stop()
  device_op_events(spaces, "/device:CUSTOM:VACC:0")  # a plugin's kernels
  host_op_events(spaces)                  # TF's host-side op events (CPU device)
  per_op_seconds(events, steps)           # [(op type, s per step)], largest first

An event is (op_type, node_name, duration_ps). A pluggable device's kernels
appear only on the plane its plugin's profiler (TF_InitProfiler) returned;
vacc names it "/device:CUSTOM:<type>:<ordinal>" and sets each event's
metadata name to the node, display_name to the op type.
"""

import glob
import os


def load_spaces(logdir):
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    spaces = []
    for path in sorted(glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))):
        space = xplane_pb2.XSpace()
        with open(path, "rb") as f:
            space.ParseFromString(f.read())
        spaces.append(space)
    return spaces


def plane_names(spaces):
    return sorted({p.name for s in spaces for p in s.planes})


def device_op_events(spaces, plane_name):
    events = []
    for space in spaces:
        for plane in space.planes:
            if plane.name != plane_name:
                continue
            for line in plane.lines:
                for ev in line.events:
                    md = plane.event_metadata[ev.metadata_id]
                    events.append((md.display_name or md.name, md.name, ev.duration_ps))
    return events


def host_op_events(spaces):
    """Host-side op events, named "<node name>:<op type>" by TensorFlow's executor."""
    events = []
    for space in spaces:
        for plane in space.planes:
            if not plane.name.startswith("/host:"):
                continue
            names = {k: v.name for k, v in plane.event_metadata.items()}
            for line in plane.lines:
                for ev in line.events:
                    n = names.get(ev.metadata_id, "?")
                    if ":" not in n or "::" in n or n.startswith("EagerLocalExecute"):
                        continue
                    node, op = n.rsplit(":", 1)
                    events.append((op, node, ev.duration_ps))
    return events


def per_op_seconds(events, steps, top=12):
    totals = {}
    for op, _, ps in events:
        totals[op] = totals.get(op, 0.0) + ps / 1e12 / steps
    return sorted(totals.items(), key=lambda kv: -kv[1])[:top]
