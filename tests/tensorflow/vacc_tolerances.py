# SPDX-License-Identifier: Apache-2.0
"""How close VACC must come to TensorFlow's CPU device, per dtype: one table.

The bounds are the conformance library's (docs/conformance.md, "Tolerances";
src/conformance/tolerance.cc): a result passes iff
|got - want| <= abs + rel·|want| elementwise, where K is the number of terms
a result sums. tests/unit/test_vacc_tolerances.py fails when this table
and the document's differ, so the two cannot drift apart.

There `want` is exact (computed in double); here it is TF's CPU kernel, which
is itself only within the bound of the exact result. Both sides may err in
opposite directions, so VACC is compared with the CPU at VS_CPU times the
bound (the triangle inequality), never more.
"""

# kind -> dtype -> (abs, abs per term, rel, rel per term):
#   abs = abs0 + abs1·K, rel = rel0 + rel1·K (K = 1 for the first two kinds).
# Integers, bool, Cast and the shape ops are exact (no entry).
TABLE = {
    "one_rounding": {        # + − × ÷, max, min, BiasAdd, MaxPool, Relu, Neg, Square
        "float32": (1e-5, 0, 1e-5, 0),
        "bfloat16": (1e-3, 0, 1e-2, 0),
        "float16": (1e-4, 0, 2e-3, 0),
    },
    "transcendental": {      # exp, log, sqrt, rsqrt, tanh, sigmoid, elu, activation gradients
        "float32": (1e-5, 0, 1e-4, 0),
        "bfloat16": (1e-3, 0, 1e-2, 0),
        "float16": (1e-4, 0, 2e-3, 0),
    },
    "sum": {                 # sums of K terms: MatMul, convolutions, reductions, softmax rows
        "float32": (1e-5, 2e-6, 1e-5, 2e-6),
        "bfloat16": (0, 1e-3, 1e-2, 0),
        "float16": (0, 1e-4, 2e-3, 0),
    },
}
FLOATS = ("float32", "bfloat16", "float16")
VS_CPU = 2


def bound(kind, dtype, k=1):
    """(rtol, atol) for numpy.isclose(vacc, cpu): the documented bound times VS_CPU;
    (0, 0) (exact) for integers, bool and the exact kinds."""
    if kind == "exact" or dtype not in FLOATS:
        return 0.0, 0.0
    a0, a1, r0, r1 = TABLE[kind][dtype]
    k = max(int(k), 1)
    return VS_CPU * (r0 + r1 * k), VS_CPU * (a0 + a1 * k)
