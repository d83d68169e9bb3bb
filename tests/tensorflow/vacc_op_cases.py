# SPDX-License-Identifier: Apache-2.0
"""Cases for the kernels a plugin may register: inputs and a call per (op, dtypes).

vacc_tf_checks.py runs every case of every kernel TensorFlow registered for
VACC twice, on /VACC:0 and on /CPU:0, and compares. A kernel is named by its
op and its type constraints, e.g. ("Cast", {"SrcT": "float32", "DstT":
"int32"}); `cases_for` gives its cases, or None when there are none, and
vacc_in_tf.py fails for every kernel the plugin registers without one: add
the case with the kernel.

Calls go through tf.raw_ops so exactly that op runs, not a composite that
might place its parts elsewhere. Inputs include negative values,
broadcasting and odd sizes (not multiples of a SIMD width), kept well
conditioned as in the conformance library (docs/conformance.md): divisors in
±[0.5, 2], Log/Sqrt/Rsqrt inputs in [0.25, 4], integers far from overflow,
distinct values in MaxPoolGrad's windows. Each case names its tolerance kind
(vacc_tolerances.py) and K, the number of terms a result sums.
"""

import itertools
import zlib

import numpy as np

FLOATS = ("float32", "bfloat16", "float16")


class Case:
    """inputs: {name: (numpy array, dtype name)}; call(raw_ops, **tensors) -> tensor or
    tuple of tensors; kind/k pick the tolerance (vacc_tolerances.bound)."""

    def __init__(self, what, inputs, call, kind="exact", k=1):
        self.what, self.inputs, self.call, self.kind, self.k = what, inputs, call, kind, k


def _values(rng, shape, dtype, lo=-2.0, hi=2.0):
    """Random values of `dtype`'s kind: floats in [lo, hi), integers in [lo, hi], bools."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in FLOATS:
        return rng.uniform(lo, hi, shape).astype("float32")
    return rng.integers(int(lo), int(hi) + 1, shape).astype(dtype)


def _ints(values):
    return (np.array(values, "int32"), "int32")


def _kind(dtype, kind):
    return kind if dtype in FLOATS else "exact"


# ------------------------------------------------------------ elementwise ---

# op -> (tolerance kind, input range for floats, argument name)
UNARY = {
    "Relu": ("one_rounding", (-2, 2), "features"),
    "Relu6": ("one_rounding", (-8, 8), "features"),
    "Elu": ("transcendental", (-2, 2), "features"),
    "Selu": ("transcendental", (-2, 2), "features"),
    "Softplus": ("transcendental", (-2, 2), "features"),
    "Neg": ("one_rounding", (-2, 2), "x"),
    "Abs": ("one_rounding", (-2, 2), "x"),
    "Square": ("one_rounding", (-2, 2), "x"),
    "Sign": ("one_rounding", (-2, 2), "x"),
    "Floor": ("one_rounding", (-2, 2), "x"),
    "Ceil": ("one_rounding", (-2, 2), "x"),
    "Reciprocal": ("one_rounding", (0.5, 2), "x"),
    "Sqrt": ("transcendental", (0.25, 4), "x"),
    "Rsqrt": ("transcendental", (0.25, 4), "x"),
    "Exp": ("transcendental", (-2, 2), "x"),
    "Log": ("transcendental", (0.25, 4), "x"),
    "Log1p": ("transcendental", (0.25, 4), "x"),
    "Tanh": ("transcendental", (-2, 2), "x"),
    "Sigmoid": ("transcendental", (-2, 2), "x"),
    "Sin": ("transcendental", (-2, 2), "x"),
    "Cos": ("transcendental", (-2, 2), "x"),
}

BINARY = ("AddV2", "Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum",
          "SquaredDifference", "Pow")

# Gradients of activations: (first input name and range, second input name and range).
GRADS = {
    "ReluGrad": (("gradients", (-2, 2)), ("features", (-2, 2))),
    "Relu6Grad": (("gradients", (-2, 2)), ("features", (-8, 8))),
    "EluGrad": (("gradients", (-2, 2)), ("outputs", (-0.95, 3))),
    "SigmoidGrad": (("y", (0.02, 0.98)), ("dy", (-2, 2))),
    "TanhGrad": (("y", (-0.98, 0.98)), ("dy", (-2, 2))),
}


def unary(op, t, rng):
    kind, (lo, hi), arg = UNARY[op]
    if t not in FLOATS:
        lo, hi = (-100, 100) if op in ("Neg", "Abs", "Square", "Sign") else (lo, hi)
    x = _values(rng, (3, 37), t, lo, hi)
    return [Case(f"{arg}[3,37]", {arg: (x, t)}, lambda raw, **k: getattr(raw, op)(**k),
                 _kind(t, kind))]


def binary(op, t, rng):
    # [3,37] with [37]: the broadcast a bias-like operand uses.
    if op in ("RealDiv", "Pow"):
        x = _values(rng, (3, 37), t, 0.5, 2)
        y = _values(rng, (37,), t, 0.5, 2) * (1 if op == "Pow" else rng.choice([-1, 1], 37))
    else:
        lo, hi = (-2, 2) if t in FLOATS else (-100, 100)
        x, y = _values(rng, (3, 37), t, lo, hi), _values(rng, (37,), t, lo, hi)
    rough = op == "Pow" or (op == "SquaredDifference" and t == "float32")
    return [Case("x[3,37], y[37]", {"x": (x, t), "y": (y.astype(x.dtype), t)},
                 lambda raw, **k: getattr(raw, op)(**k),
                 _kind(t, "transcendental" if rough else "one_rounding"))]


def grad(op, t, rng):
    (a, ra), (b, rb) = GRADS[op]
    return [Case(f"{a}[3,37], {b}[3,37]", {a: (_values(rng, (3, 37), t, *ra), t),
                                          b: (_values(rng, (3, 37), t, *rb), t)},
                 lambda raw, **k: getattr(raw, op)(**k), "transcendental")]


# ------------------------------------------------------ sums and products ---

def bias_add(op, t, rng):
    lo, hi = (-2, 2) if t in FLOATS else (-100, 100)
    value = _values(rng, (4, 5, 6, 7), t, lo, hi)
    if op == "BiasAdd":
        return [Case("value[4,5,6,7], bias[7]",
                     {"value": (value, t), "bias": (_values(rng, (7,), t, lo, hi), t)},
                     lambda raw, **k: raw.BiasAdd(**k), _kind(t, "one_rounding"))]
    return [Case("out_backprop[4,5,6,7]", {"out_backprop": (value, t)},
                 lambda raw, **k: raw.BiasAddGrad(**k), _kind(t, "sum"), 4 * 5 * 6)]


def matmul(op, t, rng):
    lo, hi = (-2, 2) if t in FLOATS else (-10, 10)
    if op == "MatMul":
        a, b = _values(rng, (17, 33), t, lo, hi), _values(rng, (33, 9), t, lo, hi)
        names = ("a", "b")
    else:  # BatchMatMulV2, the batch dimension broadcast
        a, b = _values(rng, (2, 5, 33), t, lo, hi), _values(rng, (1, 33, 9), t, lo, hi)
        names = ("x", "y")
    return [Case(f"{names[0]}{list(a.shape)}, {names[1]}{list(b.shape)}",
                 {names[0]: (a, t), names[1]: (b, t)},
                 lambda raw, **k: getattr(raw, op)(**k), _kind(t, "sum"), 33)]


def reduction(op, t, rng):
    if op == "Prod":  # stays small in magnitude; integers far from overflow
        shape, (lo, hi) = (5, 7), ((-1.5, 1.5) if t in FLOATS else (-2, 2))
    else:
        shape, (lo, hi) = (5, 33), ((-2, 2) if t in FLOATS else (-100, 100))
    kind = "one_rounding" if op in ("Max", "Min") else "sum"
    return [Case(f"input{list(shape)}, axis=[1]",
                 {"input": (_values(rng, shape, t, lo, hi), t), "axis": _ints([1])},
                 lambda raw, **k: getattr(raw, op)(keep_dims=False, **k),
                 _kind(t, kind), shape[1])]


def softmax(op, t, rng):
    logits = _values(rng, (5, 37), t)
    if op in ("Softmax", "LogSoftmax"):
        return [Case("logits[5,37]", {"logits": (logits, t)},
                     lambda raw, **k: getattr(raw, op)(**k), "sum", 37)]
    if op == "SoftmaxCrossEntropyWithLogits":
        p = rng.random((5, 37)) + 0.05
        return [Case("features[5,37], labels[5,37] (rows of probabilities)",
                     {"features": (logits, t), "labels": ((p / p.sum(1, keepdims=True))
                                                          .astype("float32"), t)},
                     lambda raw, **k: raw.SoftmaxCrossEntropyWithLogits(**k), "sum", 37)]
    # SparseSoftmaxCrossEntropyWithLogits: its labels type is not constrained,
    # so the kernel takes both.
    return [Case(f"features[5,37], labels[5] {lt}",
                 {"features": (logits, t), "labels": (rng.integers(0, 37, 5).astype(lt), lt)},
                 lambda raw, **k: raw.SparseSoftmaxCrossEntropyWithLogits(**k), "sum", 37)
            for lt in ("int32", "int64")]


# ------------------------------------------------------- images (NHWC) ---

def image(op, t, rng):
    def n(*shape):
        return _values(rng, shape, t)
    s1 = [1, 1, 1, 1]
    if op == "Conv2D":
        return [Case("input[2,9,11,3], filter[3,3,3,8], SAME",
                     {"input": (n(2, 9, 11, 3), t), "filter": (n(3, 3, 3, 8), t)},
                     lambda raw, **k: raw.Conv2D(strides=s1, padding="SAME", **k), "sum", 27),
                # Large enough that vacc computes float32 by Winograd's F(2x2, 3x3)
                # (256 tiles of 32 channels; vacc_gemm_conv_winograd.h).
                Case("input[4,16,15,32], filter[3,3,32,40], SAME",
                     {"input": (n(4, 16, 15, 32), t), "filter": (n(3, 3, 32, 40), t)},
                     lambda raw, **k: raw.Conv2D(strides=s1, padding="SAME", **k), "sum",
                     3 * 3 * 32),
                # A 7x7 stride-2 RGB stem with 72 2x2 output tiles: on AVX-512
                # hosts vacc computes float32 by Winograd on the input's
                # stride phases (vacc_gemm_conv_winograd_s2.h).
                Case("input[1,32,34,3], filter[7,7,3,64], strides 2, SAME",
                     {"input": (n(1, 32, 34, 3), t), "filter": (n(7, 7, 3, 64), t)},
                     lambda raw, **k: raw.Conv2D(strides=[1, 2, 2, 1], padding="SAME", **k),
                     "sum", 7 * 7 * 3)]
    if op == "Conv2DBackpropInput":
        return [Case("input_sizes=[2,9,11,3], filter[3,3,3,8], out_backprop[2,9,11,8], SAME",
                     {"input_sizes": _ints([2, 9, 11, 3]), "filter": (n(3, 3, 3, 8), t),
                      "out_backprop": (n(2, 9, 11, 8), t)},
                     lambda raw, **k: raw.Conv2DBackpropInput(strides=s1, padding="SAME", **k),
                     "sum", 3 * 3 * 8)]
    if op == "Conv2DBackpropFilter":
        return [Case("input[2,9,11,3], filter_sizes=[3,3,3,8], out_backprop[2,9,11,8], SAME",
                     {"input": (n(2, 9, 11, 3), t), "filter_sizes": _ints([3, 3, 3, 8]),
                      "out_backprop": (n(2, 9, 11, 8), t)},
                     lambda raw, **k: raw.Conv2DBackpropFilter(strides=s1, padding="SAME", **k),
                     "sum", 2 * 9 * 11)]
    k2, s2, k3 = [1, 2, 2, 1], [1, 2, 2, 1], [1, 3, 3, 1]
    if op == "MaxPool":
        return [Case("input[2,9,11,3], 2x2/2 VALID", {"input": (n(2, 9, 11, 3), t)},
                     lambda raw, **k: raw.MaxPool(ksize=k2, strides=s2, padding="VALID", **k),
                     "one_rounding")]
    if op == "AvgPool":
        return [Case("value[2,9,11,3], 3x3/2 SAME", {"value": (n(2, 9, 11, 3), t)},
                     lambda raw, **k: raw.AvgPool(ksize=k3, strides=s2, padding="SAME", **k),
                     "sum", 9)]
    if op == "MaxPoolGrad":
        # Distinct small integers, exact in every float dtype: no tie decides
        # where a window's gradient goes.
        x = rng.permutation(np.arange(-96, 96)).reshape(1, 8, 8, 3).astype("float32")

        def call(raw, orig_input, grad):
            return raw.MaxPoolGrad(
                orig_input=orig_input, grad=grad, ksize=k2, strides=s2, padding="VALID",
                orig_output=raw.MaxPool(input=orig_input, ksize=k2, strides=s2, padding="VALID"))
        return [Case("orig_input[1,8,8,3] distinct, grad[1,4,4,3], 2x2/2 VALID",
                     {"orig_input": (x, t), "grad": (n(1, 4, 4, 3), t)}, call, "sum", 4)]
    if op == "AvgPoolGrad":
        return [Case("orig_input_shape=[2,9,11,3], grad[2,5,6,3], 3x3/2 SAME",
                     {"orig_input_shape": _ints([2, 9, 11, 3]), "grad": (n(2, 5, 6, 3), t)},
                     lambda raw, **k: raw.AvgPoolGrad(ksize=k3, strides=s2, padding="SAME", **k),
                     "sum", 9)]
    return None


# -------------------------------------------- data movement: exact results ---

def cast(src, dst, rng):
    if src in FLOATS:   # fractions, both signs, zeros; truncation and rounding both matter
        x = np.round(rng.uniform(-100, 100, (3, 37)), 3).astype("float32")
        x[0, :5] = [0, -0.0, 0.5, -0.5, 1]
    elif src == "bool":
        x = rng.random((3, 37)) < 0.5
    else:
        x = rng.integers(-1000, 1001, (3, 37)).astype(src)
        x[0, :3] = 0
    return [Case(f"x[3,37] {src} -> {dst}", {"x": (x, src)},
                 lambda raw, **k: raw.Cast(DstT=dst, **k))]


def shape_op(op, t, rng):
    def v(*shape):
        return (_values(rng, shape, t, -100, 100), t)
    one = {
        "Identity": ("input[3,37]", {"input": v(3, 37)}, lambda raw, **k: raw.Identity(**k)),
        "Reshape": ("tensor[3,37] to [37,3]", {"tensor": v(3, 37), "shape": _ints([37, 3])},
                    lambda raw, **k: raw.Reshape(**k)),
        "Squeeze": ("input[3,1,37], axis=[1]", {"input": v(3, 1, 37)},
                    lambda raw, **k: raw.Squeeze(axis=[1], **k)),
        "ExpandDims": ("input[3,37], axis=1", {"input": v(3, 37), "axis": _ints(1)},
                       lambda raw, **k: raw.ExpandDims(**k)),
        "Fill": ("dims=[3,37], value[]", {"dims": _ints([3, 37]), "value": v()},
                 lambda raw, **k: raw.Fill(**k)),
        "ZerosLike": ("x[3,37]", {"x": v(3, 37)}, lambda raw, **k: raw.ZerosLike(**k)),
        "OnesLike": ("x[3,37]", {"x": v(3, 37)}, lambda raw, **k: raw.OnesLike(**k)),
        "Transpose": ("x[2,3,5], perm=[2,0,1]", {"x": v(2, 3, 5), "perm": _ints([2, 0, 1])},
                      lambda raw, **k: raw.Transpose(**k)),
        "ConcatV2": ("[3,5] and [3,7], axis=1", {"a": v(3, 5), "b": v(3, 7), "axis": _ints(1)},
                     lambda raw, a, b, axis: raw.ConcatV2(values=[a, b], axis=axis)),
        "Pack": ("3 x [3,5], axis=1", {"a": v(3, 5), "b": v(3, 5), "c": v(3, 5)},
                 lambda raw, a, b, c: raw.Pack(values=[a, b, c], axis=1)),
    }.get(op)
    return [Case(*one)] if one else None


# ------------------------------------------------------------- variables ---
# Kernels that update resource variables in place (registered where the
# release exports TF's variable helpers, 2.6-2.18). A call makes the
# variables on the current device from the inputs named in VARIABLE_INPUTS,
# runs the op, and returns the variables' values; the inputs themselves are
# plain tensors, so the CPU run gets its own variables.
VARIABLE_OPS = ("AssignAddVariableOp", "AssignSubVariableOp",
                "ResourceApplyGradientDescent", "ResourceApplyAdam",
                "ResourceApplyMomentum", "ResourceApplyKerasMomentum",
                "ResourceApplyRMSProp", "ResourceApplyCenteredRMSProp",
                "ResourceApplyAdagrad", "ResourceApplyAdagradV2")
_variable_serials = itertools.count(1)  # a fresh shared_name per variable


def _with_variables(names, op):
    """call(raw, **tensors): the tensors in `names` become variables (in that order),
    `op(raw, handles, other tensors)` runs; returns the variables' values after it,
    then the reads taken before it."""
    def call(raw, **tensors):
        made = []
        for name in names:
            t = tensors.pop(name)
            h = raw.VarHandleOp(dtype=t.dtype, shape=t.shape,
                                shared_name=f"vacc_case_{next(_variable_serials)}")
            raw.AssignVariableOp(resource=h, value=t)
            made.append((h, t.dtype))
        # Reads taken before the update and held across it share the variables'
        # buffers, so TensorFlow copies a buffer before updating it (copyFunc).
        before = tuple(raw.ReadVariableOp(resource=h, dtype=d) for h, d in made)
        op(raw, [h for h, _ in made], tensors)
        after = tuple(raw.ReadVariableOp(resource=h, dtype=d) for h, d in made)
        for h, _ in made:
            raw.DestroyResourceOp(resource=h)
        return after + before
    return call


def variable_op(op, t, rng):
    shape = (5, 37)  # not a multiple of any SIMD width
    def v(lo=-2.0, hi=2.0, *dims):
        return (_values(rng, dims or shape, t, lo, hi), t)
    def scalar(x):
        return (np.array(x, "float32"), t)
    if op in ("AssignAddVariableOp", "AssignSubVariableOp"):
        call = _with_variables(["resource"], lambda raw, h, k: getattr(raw, op)(
            resource=h[0], value=k["value"]))
        inputs, what, kind = {"resource": v(), "value": v()}, "resource[5,37], value[5,37]", \
            "one_rounding"
    elif op == "ResourceApplyGradientDescent":
        call = _with_variables(["var"], lambda raw, h, k: raw.ResourceApplyGradientDescent(
            var=h[0], alpha=k["alpha"], delta=k["delta"]))
        inputs, what, kind = {"var": v(), "alpha": scalar(0.25), "delta": v()}, \
            "var[5,37], alpha=0.25, delta[5,37]", "sum"
    elif op in ("ResourceApplyMomentum", "ResourceApplyKerasMomentum"):
        cases = []
        for nesterov in (False, True):
            def momentum(raw, h, k, nesterov=nesterov):
                getattr(raw, op)(var=h[0], accum=h[1], use_nesterov=nesterov, **k)
            inputs = {"var": v(), "accum": v(-1, 1), "lr": scalar(0.05), "grad": v(),
                      "momentum": scalar(0.9)}
            cases.append(Case(f"var, accum [5,37], lr=0.05, momentum=0.9"
                              f"{', use_nesterov' if nesterov else ''}", inputs,
                              _with_variables(["var", "accum"], momentum), kind="sum", k=4))
        return cases
    elif op in ("ResourceApplyRMSProp", "ResourceApplyCenteredRMSProp"):
        centered = op == "ResourceApplyCenteredRMSProp"
        slots = ["var", "mg", "ms", "mom"] if centered else ["var", "ms", "mom"]
        def rmsprop(raw, h, k):
            getattr(raw, op)(**dict(zip(slots, h)), **k)
        inputs = {"var": v(), "ms": v(1, 2), "mom": v(-1, 1), "lr": scalar(0.01),
                  "rho": scalar(0.9), "momentum": scalar(0.5), "epsilon": scalar(1e-7),
                  "grad": v()}
        if centered:
            inputs["mg"] = v(-0.5, 0.5)
        call = _with_variables(slots, rmsprop)
        what, kind = f"{', '.join(slots)} [5,37], lr=0.01, rho=0.9, momentum=0.5", \
            "transcendental"
    elif op in ("ResourceApplyAdagrad", "ResourceApplyAdagradV2"):
        cases = []
        for update_slots in (True, False):
            def adagrad(raw, h, k, update_slots=update_slots):
                getattr(raw, op)(var=h[0], accum=h[1], update_slots=update_slots, **k)
            inputs = {"var": v(), "accum": v(0.1, 2), "lr": scalar(0.05), "grad": v()}
            if op == "ResourceApplyAdagradV2":
                inputs["epsilon"] = scalar(1e-7)
            cases.append(Case(f"var, accum [5,37], lr=0.05"
                              f"{'' if update_slots else ', update_slots=False'}", inputs,
                              _with_variables(["var", "accum"], adagrad),
                              kind="transcendental", k=2))
        return cases
    else:
        def adam(raw, h, k):
            raw.ResourceApplyAdam(var=h[0], m=h[1], v=h[2], use_nesterov=nesterov, **k)
        nesterov = False
        call = _with_variables(["var", "m", "v"], adam)
        inputs = {"var": v(), "m": v(-1, 1), "v": v(0, 4),
                  "beta1_power": scalar(0.9 ** 3), "beta2_power": scalar(0.999 ** 3),
                  "lr": scalar(0.01), "beta1": scalar(0.9), "beta2": scalar(0.999),
                  "epsilon": scalar(1e-7), "grad": v()}
        what, kind = "var, m, v [5,37], step 3 of Keras' defaults, lr=0.01", "transcendental"
    return [Case(what, inputs, call, kind=kind, k=2)]


FAMILIES = [
    (UNARY, unary), (BINARY, binary), (GRADS, grad),
    (("BiasAdd", "BiasAddGrad"), bias_add), (("MatMul", "BatchMatMulV2"), matmul),
    (("Sum", "Mean", "Max", "Min", "Prod"), reduction),
    (("Softmax", "LogSoftmax", "SoftmaxCrossEntropyWithLogits",
      "SparseSoftmaxCrossEntropyWithLogits"), softmax),
    (("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool", "AvgPool",
      "MaxPoolGrad", "AvgPoolGrad"), image),
    (("Identity", "Reshape", "Squeeze", "ExpandDims", "Fill", "ZerosLike", "OnesLike",
      "Transpose", "ConcatV2", "Pack"), shape_op),
]


def cases_for(op, types):
    """The cases of the kernel (op, {type attr: dtype name}), or None without any.
    Inputs are seeded by the kernel's name: the same on every run."""
    rng = np.random.default_rng(zlib.crc32(f"{op}{sorted(types.items())}".encode()))
    if op == "Cast":
        return cast(types["SrcT"], types["DstT"], rng) \
            if set(types) == {"SrcT", "DstT"} else None
    if op in VARIABLE_OPS:  # AssignAdd/SubVariableOp's type attr is "dtype"
        return variable_op(op, types["dtype"] if "dtype" in types else types["T"], rng) \
            if len(types) == 1 else None
    if set(types) != {"T"}:
        return None
    for ops, make in FAMILIES:
        if op in ops:
            return make(op, types["T"], rng)
    return None
