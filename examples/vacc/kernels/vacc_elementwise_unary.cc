// SPDX-License-Identifier: Apache-2.0
//
// Elementwise unary ops (activations and math): Relu, Relu6, Elu, Sigmoid,
// Tanh, Neg, Exp, Log, Sqrt, Rsqrt, Square. Each op has a scalar reference
// body and a SIMD body (Highway, compiled for every target; see
// vacc_simd.h), and the work is split across the device's compute units in
// cache-friendly chunks (kElementwiseGrain).
//
// This file is compiled once per SIMD target: Highway's foreach_target.h
// re-includes it with HWY_NAMESPACE set to each target's namespace.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/vacc_elementwise_unary.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/vacc_elementwise.h"
#include "kernels/vacc_minmax-inl.h"
#include "kernels/vacc_store-inl.h"

HWY_BEFORE_NAMESPACE();
namespace vacc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// e^x over all floats: Highway's Exp is valid on [-FLT_MAX, 104]; clamp
// below (e^-104 is already 0 in float) and give inf above 88.8 (overflow).
template <class D, class V>
HWY_INLINE V ExpAll(D d, V v) {
  const V e = hn::Exp(d, hn::Max(v, hn::Set(d, -104.0f)));
  return hn::IfThenElse(hn::Gt(v, hn::Set(d, 88.8f)), hn::Set(d, HUGE_VALF), e);
}

// One vector of op(x). NaN in, NaN out for every op. Relu and Relu6 keep
// x on NaN and ties (-0 stays -0) through vacc_minmax-inl.h: on x86 one
// max per vector, and a 256 MiB Relu ran ~5% faster with it than with a
// compare and blend on Zen3, where it is memory-bound.
template <UnaryOp kOp, class D, class V>
HWY_INLINE V ApplyUnary(D d, V v) {
  [[maybe_unused]] const V zero = hn::Zero(d);
  if constexpr (kOp == UnaryOp::kRelu) {
    return LargerElseFirst(v, zero);
  } else if constexpr (kOp == UnaryOp::kRelu6) {
    return SmallerElseFirst(LargerElseFirst(v, zero), hn::Set(d, 6.0f));
  } else if constexpr (kOp == UnaryOp::kElu) {
    // Expm1 only where it is used: it is exact near 0, unlike Exp(x) - 1.
    const V neg = hn::Max(hn::Min(v, zero), hn::Set(d, -104.0f));  // Expm1's valid range
    const V r = hn::IfThenElse(hn::Gt(v, zero), v, hn::Expm1(d, neg));
    return hn::IfThenElse(hn::IsNaN(v), v, r);
  } else if constexpr (kOp == UnaryOp::kSigmoid) {
    // t = e^-|x| <= 1 never overflows: 1/(1+t) for x >= 0, t/(1+t) below.
    const V one = hn::Set(d, 1.0f);
    const V t = ExpAll(d, hn::Neg(hn::Abs(v)));
    const V r = hn::Div(one, hn::Add(one, t));
    const V s = hn::IfThenElse(hn::Ge(v, zero), r, hn::Mul(t, r));
    return hn::IfThenElse(hn::IsNaN(v), v, s);
  } else if constexpr (kOp == UnaryOp::kTanh) {
    // tanh(9) rounds to 1 in float; clamping keeps Tanh off +-inf.
    const V nine = hn::Set(d, 9.0f);
    return hn::IfThenElse(hn::IsNaN(v), v, hn::Tanh(d, hn::Min(hn::Max(v, hn::Neg(nine)), nine)));
  } else if constexpr (kOp == UnaryOp::kNeg) {
    return hn::Neg(v);
  } else if constexpr (kOp == UnaryOp::kExp) {
    return hn::IfThenElse(hn::IsNaN(v), v, ExpAll(d, v));
  } else if constexpr (kOp == UnaryOp::kLog) {
    // Highway's Log takes normal positive floats: scale subnormals up by
    // 2^24 and subtract 24 ln 2; 0 -> -inf, < 0 -> NaN, inf -> inf.
    const V tiny = hn::Set(d, FLT_MIN);
    const auto sub = hn::Lt(v, tiny);
    const V scaled = hn::IfThenElse(sub, hn::Mul(v, hn::Set(d, 16777216.0f)), v);
    const V safe = hn::IfThenElse(hn::Gt(scaled, zero), scaled, hn::Set(d, 1.0f));
    V r = hn::Log(d, hn::Min(safe, hn::Set(d, FLT_MAX)));
    r = hn::IfThenElse(sub, hn::Sub(r, hn::Set(d, 16.635532333438686f)), r);
    r = hn::IfThenElse(hn::Eq(v, hn::Set(d, HUGE_VALF)), v, r);
    r = hn::IfThenElse(hn::Eq(v, zero), hn::Set(d, -HUGE_VALF), r);
    return hn::IfThenElse(hn::Lt(v, zero), hn::Set(d, NAN), hn::IfThenElse(hn::IsNaN(v), v, r));
  } else if constexpr (kOp == UnaryOp::kSqrt) {
    return hn::Sqrt(v);
  } else if constexpr (kOp == UnaryOp::kRsqrt) {
    // The approximate reciprocal square root has 12 bits: too few.
    return hn::Div(hn::Set(d, 1.0f), hn::Sqrt(v));
  } else {
    static_assert(kOp == UnaryOp::kSquare, "unhandled op");
    return hn::Mul(v, v);
  }
}

template <UnaryOp kOp, int kMode, typename T>
HWY_INLINE void UnaryBody(const T* HWY_RESTRICT x, T* HWY_RESTRICT y, size_t n) {
  const BodyTag<T, kMode> d;
  constexpr bool kStream = kMode != kPlainStores;
  // A line per step (StoreVectors): one input stream, fetched ahead.
  const size_t i = StoreVectors<kStream, StepVectors::kOneLine>(
      d, y, n, StreamedInputs<T>{x, nullptr},
      [&](size_t j) { return ApplyUnary<kOp>(d, hn::LoadU(d, x + j)); });
  if (i < n) {
    // The tail through a full vector, so it gets the same arithmetic.
    HWY_ALIGN T buf[HWY_MAX_BYTES / sizeof(T)] = {};
    std::memcpy(buf, x + i, (n - i) * sizeof(T));
    hn::Store(ApplyUnary<kOp>(d, hn::Load(d, buf)), d, buf);
    std::memcpy(y + i, buf, (n - i) * sizeof(T));
  }
}

template <UnaryOp kOp, typename T>
HWY_NOINLINE void UnaryLoop(const T* HWY_RESTRICT x, T* HWY_RESTRICT y, size_t n, int stores) {
  WithStores(stores, y,
             [&](auto stream) { UnaryBody<kOp, decltype(stream)::value>(x, y, n); });
}

void UnaryF32(int op, const float* x, float* y, size_t n, int stores) {
  switch (static_cast<UnaryOp>(op)) {
    case UnaryOp::kRelu: return UnaryLoop<UnaryOp::kRelu>(x, y, n, stores);
    case UnaryOp::kRelu6: return UnaryLoop<UnaryOp::kRelu6>(x, y, n, stores);
    case UnaryOp::kElu: return UnaryLoop<UnaryOp::kElu>(x, y, n, stores);
    case UnaryOp::kSigmoid: return UnaryLoop<UnaryOp::kSigmoid>(x, y, n, stores);
    case UnaryOp::kTanh: return UnaryLoop<UnaryOp::kTanh>(x, y, n, stores);
    case UnaryOp::kNeg: return UnaryLoop<UnaryOp::kNeg>(x, y, n, stores);
    case UnaryOp::kExp: return UnaryLoop<UnaryOp::kExp>(x, y, n, stores);
    case UnaryOp::kLog: return UnaryLoop<UnaryOp::kLog>(x, y, n, stores);
    case UnaryOp::kSqrt: return UnaryLoop<UnaryOp::kSqrt>(x, y, n, stores);
    case UnaryOp::kRsqrt: return UnaryLoop<UnaryOp::kRsqrt>(x, y, n, stores);
    case UnaryOp::kSquare: return UnaryLoop<UnaryOp::kSquare>(x, y, n, stores);
  }
}

void UnaryI32(int op, const int32_t* x, int32_t* y, size_t n, int stores) {
  if (static_cast<UnaryOp>(op) == UnaryOp::kNeg) return UnaryLoop<UnaryOp::kNeg>(x, y, n, stores);
  return UnaryLoop<UnaryOp::kSquare>(x, y, n, stores);
}

}  // namespace HWY_NAMESPACE
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels/vacc_half.h"
#include "kernels/vacc_kernel.h"
#include "kernels/vacc_simd.h"

namespace vacc {

HWY_EXPORT(UnaryF32);
HWY_EXPORT(UnaryI32);

namespace scalar {

float ApplyUnary(UnaryOp op, float x) {
  switch (op) {
    case UnaryOp::kRelu: return x < 0.0f ? 0.0f : x;
    case UnaryOp::kRelu6: return x < 0.0f ? 0.0f : x > 6.0f ? 6.0f : x;
    case UnaryOp::kElu: return x > 0.0f ? x : std::expm1(x);
    case UnaryOp::kSigmoid: {
      const float t = std::exp(-std::fabs(x));
      return x >= 0.0f ? 1.0f / (1.0f + t) : t / (1.0f + t);
    }
    case UnaryOp::kTanh: return std::tanh(x);
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kExp: return std::exp(x);
    case UnaryOp::kLog: return std::log(x);
    case UnaryOp::kSqrt: return std::sqrt(x);
    case UnaryOp::kRsqrt: return 1.0f / std::sqrt(x);
    case UnaryOp::kSquare: return x * x;
  }
  return x;
}

void UnaryF32(UnaryOp op, const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = ApplyUnary(op, x[i]);
}

void UnaryI32(UnaryOp op, const int32_t* x, int32_t* y, size_t n) {
  // Unsigned arithmetic: wraps like TensorFlow's int32 instead of being UB.
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(x[i]);
    y[i] = static_cast<int32_t>(op == UnaryOp::kNeg ? 0u - u : u * u);
  }
}

}  // namespace scalar

void UnaryF32(UnaryOp op, const float* x, float* y, size_t n, Stores stores) {
  if (UseScalarKernels()) return scalar::UnaryF32(op, x, y, n);
  HWY_DYNAMIC_DISPATCH(UnaryF32)(static_cast<int>(op), x, y, n, static_cast<int>(stores));
}

void UnaryI32(UnaryOp op, const int32_t* x, int32_t* y, size_t n, Stores stores) {
  if (UseScalarKernels()) return scalar::UnaryI32(op, x, y, n);
  HWY_DYNAMIC_DISPATCH(UnaryI32)(static_cast<int>(op), x, y, n, static_cast<int>(stores));
}

bool UnarySupports(UnaryOp op, TF_DataType dtype) {
  if (dtype == TF_FLOAT || IsHalfType(dtype)) return true;
  return dtype == TF_INT32 && (op == UnaryOp::kNeg || op == UnaryOp::kSquare);
}

void UnaryAny(UnaryOp op, TF_DataType dtype, const void* x, void* y, size_t n, Stores stores) {
  if (dtype == TF_FLOAT) {
    return UnaryF32(op, static_cast<const float*>(x), static_cast<float*>(y), n, stores);
  }
  if (dtype == TF_INT32) {
    return UnaryI32(op, static_cast<const int32_t*>(x), static_cast<int32_t*>(y), n, stores);
  }
  const uint16_t* in = static_cast<const uint16_t*>(x);
  uint16_t* out = static_cast<uint16_t*>(y);
  float buf[kHalfBlock];
  for (size_t i = 0; i < n; i += kHalfBlock) {
    const size_t m = n - i < kHalfBlock ? n - i : kHalfBlock;
    HalfToFloat(dtype, in + i, buf, m);
    UnaryF32(op, buf, buf, m);
    FloatToHalf(dtype, buf, out + i, m);
  }
}

void RunUnary(UnaryOp op, TF_DataType dtype, const void* x, void* y, size_t n, ComputeUnits& units) {
  const size_t size = TF_DataTypeSize(dtype);
  ParallelElementwise(units, n, size, [&](size_t begin, size_t end, Stores stores) {
    UnaryAny(op, dtype, static_cast<const char*>(x) + begin * size, static_cast<char*>(y) + begin * size,
             end - begin, stores);
  });
}

namespace {

template <UnaryOp kOp>
class UnaryKernel {
 public:
  explicit UnaryKernel(KernelConstruction&) {}
  void Compute(KernelContext& ctx) {
    Tensor x, y;
    if (!ctx.Input(0, &x) || !ctx.ForwardOrAllocate({0}, 0, x.dtype, x.shape, &y)) return;
    const size_t n = static_cast<size_t>(x.num_elements());
    if (n == 0) return;
    // TODO(vendor): launch the device's elementwise kernel here.
    ctx.Enqueue([x, y, n](ComputeUnits& units) {
      RunUnary(kOp, x.dtype, x.data, y.data, n, units);
      return Status();
    });
  }
};

template <UnaryOp kOp>
void Register(const char* op, bool int32) {
  std::vector<TF_DataType> types = {TF_FLOAT, TF_BFLOAT16, TF_HALF};
  if (int32) types.push_back(TF_INT32);
  RegisterKernel<UnaryKernel<kOp>>(op, types);
}

}  // namespace

void RegisterElementwiseUnaryKernels() {
  Register<UnaryOp::kRelu>("Relu", false);
  Register<UnaryOp::kRelu6>("Relu6", false);
  Register<UnaryOp::kElu>("Elu", false);
  Register<UnaryOp::kSigmoid>("Sigmoid", false);
  Register<UnaryOp::kTanh>("Tanh", false);
  Register<UnaryOp::kNeg>("Neg", true);
  Register<UnaryOp::kExp>("Exp", false);
  Register<UnaryOp::kLog>("Log", false);
  Register<UnaryOp::kSqrt>("Sqrt", false);
  Register<UnaryOp::kRsqrt>("Rsqrt", false);
  Register<UnaryOp::kSquare>("Square", true);
}

}  // namespace vacc
#endif  // HWY_ONCE
