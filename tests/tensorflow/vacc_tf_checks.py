# SPDX-License-Identifier: Apache-2.0
"""Runs inside the TF venv, with the vacc wheel installed: what TensorFlow makes of vacc.

  python vacc_tf_checks.py RESULT.json ops            # device, placement, per-op numerics
  python vacc_tf_checks.py RESULT.json mlp|cnn        # the model checks (vacc_tf_models.py)
  python vacc_tf_checks.py RESULT.json profile        # vacc's profiler (vacc_tf_profile.py)

Prints one line per check and writes RESULT.json ({"vacc_kernels": [kernel names],
"vacc_ops": [...], "checked": [...], "failures": [...], ...}) for vacc_in_tf.py, which decides. Soft placement is
off for the op checks: an op without a VACC kernel then fails instead of
quietly running on the CPU.
"""

import json
import os
import sys

# TFPLUGIN_TF_LIBRARIES_GLOBAL=1: load TensorFlow's libraries RTLD_GLOBAL, the
# workaround for releases whose Python loads them RTLD_LOCAL while the plugin
# does not link them itself (vacc_in_tf.py --expect-tf-load-error).
if os.environ.get("TFPLUGIN_TF_LIBRARIES_GLOBAL") == "1":
    sys.setdlopenflags(sys.getdlopenflags() | os.RTLD_GLOBAL)

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
# The kernel registry; public TF has no API listing a device's kernels.
from tensorflow.python.framework import kernels as tf_kernels  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vacc_op_cases import cases_for  # noqa: E402
from vacc_tolerances import bound  # noqa: E402

DEVICE = "/VACC:0"


def say(line):
    print(line, flush=True)


def kernel_name(op, types):
    """`Op{A=dtype, B=dtype}`: a kernel by its op and type constraints (attrs sorted)."""
    return op + "{" + ", ".join(f"{a}={t}" for a, t in sorted(types.items())) + "}"


def vacc_kernels():
    """{kernel name: (op, {type attr: dtype})} of every kernel registered for device VACC,
    one per allowed combination of its type constraints."""
    out = {}
    for k in tf_kernels.get_all_registered_kernels().kernel:
        if k.device_type != "VACC":
            continue
        combos = [{}]
        for c in k.constraint:
            names = [tf.dtypes.as_dtype(t).name for t in c.allowed_values.list.type]
            combos = [dict(d, **{c.name: n}) for d in combos for n in names]
        for types in combos:
            out[kernel_name(k.op, types)] = (k.op, types)
    return out


def as_numpy(t):
    """A result as a numpy array numpy can compare: 16-bit floats widened to float64."""
    a = t.numpy()
    return a.astype("float64") if t.dtype in (tf.bfloat16, tf.float16) else a


def as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


# Integer inputs that are shapes, axes or class labels: never widened.
HOST_INPUTS = {"axis", "dims", "shape", "perm", "input_sizes", "filter_sizes",
               "orig_input_shape", "labels"}
SIXTEEN = (tf.bfloat16, tf.float16)


def on_cpu(case, tensors):
    with tf.device("/CPU:0"):
        return as_tuple(case.call(tf.raw_ops, **tensors))


def widened_on_cpu(case, tensors, dtype):
    """The case on the CPU with its data inputs widened (16-bit floats to float32,
    integers to float64) and its results rounded back to `dtype`."""
    def widen(name, t):
        if t.dtype in SIXTEEN:
            return tf.cast(t, tf.float32)
        if t.dtype in (tf.int32, tf.int64) and name not in HOST_INPUTS:
            return tf.cast(t, tf.float64)
        return t
    wide = {n: widen(n, t) for n, t in tensors.items()}
    with tf.device("/CPU:0"):
        return tuple(tf.cast(o, dtype) if o.dtype.is_floating and o.dtype != dtype else o
                     for o in on_cpu(case, wide))


def cpu_reference(case, tensors):
    """(results, what they are, TF's own CPU kernel's results or None).

    Results of the case's dtype from TF's CPU kernel, except: 16-bit floats
    with rounding in them are computed by the CPU in float32 from the same
    inputs and rounded once, because TF's 16-bit CPU kernels may accumulate
    in 16 bits and miss docs/conformance.md's bound themselves (measured for
    the convolution gradients, up to 2.2 times it); and a dtype the CPU has no
    kernel for is computed wider too."""
    data = [t.dtype for n, t in tensors.items() if n not in HOST_INPUTS]
    dtype = data[0] if data else None
    try:
        native = on_cpu(case, tensors)
    except tf.errors.NotFoundError:
        native = None
    if native is not None and (case.kind == "exact" or dtype not in SIXTEEN):
        return native, "CPU", None
    wide = "float32" if dtype in SIXTEEN else "float64"
    return widened_on_cpu(case, tensors, dtype), f"CPU in {wide}, rounded", native


def max_diff(got, want):
    return max((float(np.max(np.abs(as_numpy(g).astype("float64") - as_numpy(w))))
                for g, w in zip(got, want) if g.shape == w.shape and np.size(g)), default=0.0)


def compare(name, case, got, want, failures, note):
    """VACC's results `got` against the CPU's `want`: prints a line, appends what
    differs to `failures`, and returns whether everything matched."""
    shapes = ", ".join(f"{n}{list(a.shape)}" for n, (a, _) in case.inputs.items())
    bad, worst = [], 0.0
    for i, (g, w) in enumerate(zip(got, want)):
        dtype = g.dtype.name
        rtol, atol = bound(case.kind, dtype, case.k)
        if g.dtype != w.dtype or g.shape != w.shape:
            bad.append(f"output {i}: VACC gave {dtype}{g.shape.as_list()}, CPU "
                       f"{w.dtype.name}{w.shape.as_list()}")
            continue
        a, b = as_numpy(g), as_numpy(w)
        if a.dtype == bool or (rtol == 0 and atol == 0):
            close = a == b
            if a.dtype.kind == "f":
                close |= np.isnan(a) & np.isnan(b)
        else:
            close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        if a.size and a.dtype != bool:
            worst = max(worst, float(np.max(np.abs(a.astype("float64") - b))))
        if not np.all(close):
            at = np.unravel_index(np.argmin(close), close.shape)
            bad.append(f"output {i}: {int(np.size(close) - np.sum(close))} of {np.size(close)} "
                       f"elements differ beyond rtol {rtol:g} atol {atol:g}; first at "
                       f"{list(at)}: VACC {a[at]!r}, CPU {b[at]!r}")
    rtol, atol = bound(case.kind, got[0].dtype.name, case.k)
    tol = "exact" if rtol == 0 and atol == 0 else f"rtol {rtol:g}, atol {atol:g}"
    if bad:
        failures += [f"{name} ({case.what}): {line}" for line in bad]
        say(f"FAIL {name} ({shapes}): max |VACC-CPU| {worst:.3g} {note} ({tol})")
        return False
    say(f"ok   {name} ({shapes}): max |VACC-CPU| {worst:.3g} {note} ({tol})")
    return True


def run_case(name, case, failures):
    tensors = {n: tf.constant(a, dtype=tf.as_dtype(t)) for n, (a, t) in case.inputs.items()}
    with tf.device(DEVICE):
        got = as_tuple(case.call(tf.raw_ops, **tensors))
    off = sorted({o.device for o in got if not o.device.endswith("device:VACC:0")})
    if off:
        failures.append(f"{name} ({case.what}): placed on {off}, not VACC:0")
        say(f"FAIL {name}: ran on {off}")
        return
    want, how, native = cpu_reference(case, tensors)
    note = f"vs {how}" if native is None else \
        f"vs {how}; vs TF's {got[0].dtype.name} CPU kernel {max_diff(got, native):.3g}"
    compare(name, case, got, want, failures, note)


def check_ops(result):
    failures = result["failures"]
    devices = tf.config.list_physical_devices()
    result["devices"] = [f"{d.name} ({d.device_type})" for d in devices]
    say("physical devices: " + ", ".join(result["devices"]))
    if not any(d.device_type == "VACC" for d in devices):
        failures.append("tf.config.list_physical_devices() lists no VACC device")
        return
    tf.config.set_soft_device_placement(False)
    registered = vacc_kernels()
    say(f"kernels TensorFlow registered for VACC: {len(registered)}")
    checked, unchecked, runs = [], [], 0
    for name, (op, types) in sorted(registered.items()):
        cases = cases_for(op, types)
        if not cases:
            say(f"not checked: {name} (no case in vacc_op_cases.py)")
            unchecked.append(name)
            continue
        for case in cases:
            runs += 1
            try:
                run_case(name, case, failures)
            except Exception as e:  # a kernel error is a finding, not a crash of the check
                failures.append(f"{name} ({case.what}): {type(e).__name__}: "
                                f"{' '.join(str(e).split())[:300]}")
                say(f"FAIL {name}: {type(e).__name__}")
        checked.append(name)
    result["checked"], result["unchecked"], result["runs"] = checked, unchecked, runs


def main():
    out_path, what = sys.argv[1], sys.argv[2]
    registered = vacc_kernels()
    result = {"failures": [], "what": what, "vacc_kernels": sorted(registered),
              "vacc_ops": sorted({op for op, _ in registered.values()})}
    try:
        if what == "ops":
            check_ops(result)
        elif what == "profile":
            import vacc_tf_profile
            vacc_tf_profile.run(result, DEVICE)
        else:
            import vacc_tf_models
            vacc_tf_models.run(what, result, DEVICE)
    finally:
        with open(out_path, "w") as f:
            json.dump(result, f, indent=1)
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
