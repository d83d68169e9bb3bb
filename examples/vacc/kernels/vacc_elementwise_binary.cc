// SPDX-License-Identifier: Apache-2.0
//
// Elementwise binary ops with NumPy broadcasting (AddV2, Sub, Mul, RealDiv,
// Maximum, Minimum, SquaredDifference) and the activation gradients
// (ReluGrad, Relu6Grad, EluGrad, SigmoidGrad, TanhGrad: same-shape inputs).
// The broadcast plan (vacc_broadcast.h) turns every case into contiguous
// runs of vector-vector, scalar-vector or vector-scalar work; each run has a
// scalar reference body and a SIMD body (Highway, every target).
//
// Compiled once per SIMD target (Highway's foreach_target.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/vacc_elementwise_binary.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/vacc_elementwise.h"
#include "kernels/vacc_minmax-inl.h"
#include "kernels/vacc_store-inl.h"

HWY_BEFORE_NAMESPACE();
namespace vacc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <BinaryOp kOp, class D, class V>
HWY_INLINE V ApplyBinary(D d, V a, V b) {
  using T = hn::TFromD<D>;
  [[maybe_unused]] const V zero = hn::Zero(d);
  if constexpr (kOp == BinaryOp::kAdd) {
    return hn::Add(a, b);
  } else if constexpr (kOp == BinaryOp::kSub) {
    return hn::Sub(a, b);
  } else if constexpr (kOp == BinaryOp::kMul) {
    return hn::Mul(a, b);
  } else if constexpr (kOp == BinaryOp::kDiv) {
    return hn::Div(a, b);
  } else if constexpr (kOp == BinaryOp::kMax || kOp == BinaryOp::kMin) {
    if constexpr (!hwy::IsFloat<T>()) {
      return kOp == BinaryOp::kMax ? hn::Max(a, b) : hn::Min(a, b);
    } else {
      // NaN in either input gives NaN, ties keep a (-0 vs +0).
      return kOp == BinaryOp::kMax ? MaxPropagatingNaN(a, b) : MinPropagatingNaN(a, b);
    }
  } else if constexpr (kOp == BinaryOp::kSquaredDiff) {
    const V diff = hn::Sub(a, b);
    return hn::Mul(diff, diff);
  } else if constexpr (kOp == BinaryOp::kReluGrad) {  // (gradients, features)
    return hn::IfThenElseZero(hn::Gt(b, zero), a);
  } else if constexpr (kOp == BinaryOp::kRelu6Grad) {  // (gradients, features)
    return hn::IfThenElseZero(hn::And(hn::Gt(b, zero), hn::Lt(b, hn::Set(d, T(6)))), a);
  } else if constexpr (kOp == BinaryOp::kEluGrad) {  // (gradients, outputs)
    return hn::IfThenElse(hn::Lt(b, zero), hn::Mul(a, hn::Add(b, hn::Set(d, T(1)))), a);
  } else if constexpr (kOp == BinaryOp::kSigmoidGrad) {  // (y, dy): dy * y * (1 - y)
    return hn::Mul(hn::Mul(b, a), hn::Sub(hn::Set(d, T(1)), a));
  } else {
    static_assert(kOp == BinaryOp::kTanhGrad, "unhandled op");  // (y, dy): dy * (1 - y*y)
    return hn::Mul(b, hn::Sub(hn::Set(d, T(1)), hn::Mul(a, a)));
  }
}

// out = a op b over n. a_streams, b_streams: that operand is read along
// with out, so a streamed loop fetches it ahead (StreamedInputs); a row
// repeated across rows (a bias) is not. Streamed, two vector operands go a
// line per step (StoreVectors), repeated row or not; cached stores keep
// pairs (AddV2 of 64 Ki-1 Mi floats, Intel Xeon, call by call: a line
// per step 0.991-1.007x, most just under 1).
template <BinaryOp kOp, int kMode, typename T>
HWY_INLINE void BinaryBody(Operands form, const T* HWY_RESTRICT a, const T* HWY_RESTRICT b,
                           T* out, size_t n, bool a_streams, bool b_streams) {
  const BodyTag<T, kMode> d;
  constexpr bool kStream = kMode != kPlainStores;
  // A scalar operand is its value in every lane, so one loop serves all forms.
  const bool a_vec = form != Operands::kScalarVector, b_vec = form != Operands::kVectorScalar;
  const auto a_one = hn::Set(d, a[0]), b_one = hn::Set(d, b[0]);
  const auto both = [&](size_t j) {
    return ApplyBinary<kOp>(d, hn::LoadU(d, a + j), hn::LoadU(d, b + j));
  };
  const StreamedInputs<T> in{a_vec && a_streams ? a : nullptr, b_vec && b_streams ? b : nullptr};
  size_t i;
  if (a_vec && b_vec && kStream) {
    i = StoreVectors<kStream, StepVectors::kOneLine>(d, out, n, in, both);
  } else if (a_vec && b_vec) {
    i = StoreVectors<kStream>(d, out, n, in, both);
  } else if (b_vec) {
    i = StoreVectors<kStream>(
        d, out, n, in, [&](size_t j) { return ApplyBinary<kOp>(d, a_one, hn::LoadU(d, b + j)); });
  } else {
    i = StoreVectors<kStream>(
        d, out, n, in, [&](size_t j) { return ApplyBinary<kOp>(d, hn::LoadU(d, a + j), b_one); });
  }
  if (i < n) {  // the tail through full vectors: the same arithmetic
    constexpr size_t kMax = HWY_MAX_BYTES / sizeof(T);
    HWY_ALIGN T ab[kMax] = {}, bb[kMax] = {};
    const size_t rest = n - i;
    if (a_vec) std::memcpy(ab, a + i, rest * sizeof(T));
    if (b_vec) std::memcpy(bb, b + i, rest * sizeof(T));
    const auto va = a_vec ? hn::Load(d, ab) : a_one, vb = b_vec ? hn::Load(d, bb) : b_one;
    hn::Store(ApplyBinary<kOp>(d, va, vb), d, ab);
    std::memcpy(out + i, ab, rest * sizeof(T));
  }
}

// A row of n that every row of out meets (a bias: its row step is 0), or
// a copy of it placed away from out's rows within a 4 KiB page. A load at
// (nearly) the page offset of a store still in flight waits for that store
// ("4K aliasing"), and streaming stores stay in flight long: when the bias
// sat at out's page offset and rows were 4 KiB apart (n = 1024), every load
// of it met one. Measured on Zen4 with a plain loop over 65536 x 1024
// floats (streaming stores, one core, medians of 15): 0.95x a Relu's rate
// with the bias at out's page offset or 64 bytes from it, 1.00x at 512
// bytes or more. Rows of R bytes put out's rows at page offsets g =
// gcd(R, 4 KiB) apart, so the copy goes g/2 from them; when g < 512 bytes
// out's rows pass most offsets and no place is better, so the row stays.
template <typename T>
const T* RepeatedRowAwayFrom(const T* row, size_t n, const T* out) {
  constexpr size_t kPage = 4096, kNear = 256;  // closer than this: aliasing
  const size_t bytes = n * sizeof(T);
  const size_t g = std::min(bytes & (~bytes + 1), kPage);  // gcd(bytes, kPage)
  if (g < 2 * kNear) return row;
  const size_t out_at = reinterpret_cast<uintptr_t>(out) % g;
  const size_t gap = (reinterpret_cast<uintptr_t>(row) % g + g - out_at) % g;
  if (gap >= kNear && g - gap >= kNear) return row;  // already away
  thread_local std::vector<char> copies;
  if (copies.size() < bytes + 2 * kPage) copies.resize(bytes + 2 * kPage);
  const uintptr_t page = (reinterpret_cast<uintptr_t>(copies.data()) + kPage - 1) / kPage * kPage;
  T* copy = reinterpret_cast<T*>(page + (out_at + g / 2) % g);
  std::memcpy(copy, row, bytes);
  return copy;
}

// `rows` runs of n (BinaryRowsAny); each row picks its own stores, as a
// row's start may not be aligned for streaming when the next one is.
template <BinaryOp kOp, typename T>
HWY_NOINLINE void BinaryLoop(Operands form, const T* HWY_RESTRICT a, int64_t a_row_step,
                             const T* HWY_RESTRICT b, int64_t b_row_step, T* out, size_t rows,
                             size_t n, int stores) {
  if (rows > 1 && form == Operands::kVectorVector) {
    if (a_row_step == 0 && b_row_step != 0) a = RepeatedRowAwayFrom(a, n, out);
    if (b_row_step == 0 && a_row_step != 0) b = RepeatedRowAwayFrom(b, n, out);
  }
  const bool a_streams = rows == 1 || a_row_step != 0, b_streams = rows == 1 || b_row_step != 0;
  for (size_t r = 0; r < rows; ++r, a += a_row_step, b += b_row_step, out += n) {
    WithStores(stores, out, [&](auto stream) {
      BinaryBody<kOp, decltype(stream)::value>(form, a, b, out, n, a_streams, b_streams);
    });
  }
}

template <BinaryOp kOp, typename T>
void BinaryLoop(Operands form, const T* a, const T* b, T* out, size_t n, int stores) {
  BinaryLoop<kOp>(form, a, 0, b, 0, out, 1, n, stores);
}

void BinaryRowsF32(int op, int form, const float* a, int64_t a_row_step, const float* b,
                   int64_t b_row_step, float* out, size_t rows, size_t n, int stores) {
  const Operands f = static_cast<Operands>(form);
  switch (static_cast<BinaryOp>(op)) {
#define VACC_CASE(k)                                                                  \
  case BinaryOp::k:                                                                   \
    return BinaryLoop<BinaryOp::k>(f, a, a_row_step, b, b_row_step, out, rows, n, stores);
    VACC_CASE(kAdd) VACC_CASE(kSub) VACC_CASE(kMul) VACC_CASE(kDiv) VACC_CASE(kMax)
    VACC_CASE(kMin) VACC_CASE(kSquaredDiff) VACC_CASE(kReluGrad) VACC_CASE(kRelu6Grad)
    VACC_CASE(kEluGrad) VACC_CASE(kSigmoidGrad) VACC_CASE(kTanhGrad)
#undef VACC_CASE
  }
}

void BinaryI32(int op, int form, const int32_t* a, const int32_t* b, int32_t* out, size_t n,
               int stores) {
  const Operands f = static_cast<Operands>(form);
  switch (static_cast<BinaryOp>(op)) {
    case BinaryOp::kAdd: return BinaryLoop<BinaryOp::kAdd>(f, a, b, out, n, stores);
    case BinaryOp::kSub: return BinaryLoop<BinaryOp::kSub>(f, a, b, out, n, stores);
    case BinaryOp::kMul: return BinaryLoop<BinaryOp::kMul>(f, a, b, out, n, stores);
    case BinaryOp::kMax: return BinaryLoop<BinaryOp::kMax>(f, a, b, out, n, stores);
    case BinaryOp::kMin: return BinaryLoop<BinaryOp::kMin>(f, a, b, out, n, stores);
    case BinaryOp::kSquaredDiff: return BinaryLoop<BinaryOp::kSquaredDiff>(f, a, b, out, n, stores);
    default: return;  // not an int32 op (BinarySupports)
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <string>

#include "kernels/vacc_broadcast.h"
#include "kernels/vacc_half.h"
#include "kernels/vacc_kernel.h"
#include "kernels/vacc_simd.h"

namespace vacc {

HWY_EXPORT(BinaryRowsF32);
HWY_EXPORT(BinaryI32);

namespace scalar {

float ApplyBinary(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kMax: return std::isnan(b) ? b : a < b ? b : a;
    case BinaryOp::kMin: return std::isnan(b) ? b : b < a ? b : a;
    case BinaryOp::kSquaredDiff: return (a - b) * (a - b);
    case BinaryOp::kReluGrad: return b > 0.0f ? a : 0.0f;
    case BinaryOp::kRelu6Grad: return b > 0.0f && b < 6.0f ? a : 0.0f;
    case BinaryOp::kEluGrad: return b < 0.0f ? a * (b + 1.0f) : a;
    case BinaryOp::kSigmoidGrad: return b * a * (1.0f - a);
    case BinaryOp::kTanhGrad: return b * (1.0f - a * a);
  }
  return 0.0f;
}

int32_t ApplyBinary(BinaryOp op, int32_t a, int32_t b) {
  // Unsigned arithmetic wraps (TensorFlow's int32 does) instead of being UB.
  const uint32_t ua = static_cast<uint32_t>(a), ub = static_cast<uint32_t>(b);
  switch (op) {
    case BinaryOp::kAdd: return static_cast<int32_t>(ua + ub);
    case BinaryOp::kSub: return static_cast<int32_t>(ua - ub);
    case BinaryOp::kMul: return static_cast<int32_t>(ua * ub);
    case BinaryOp::kMax: return a < b ? b : a;
    case BinaryOp::kMin: return b < a ? b : a;
    case BinaryOp::kSquaredDiff: return static_cast<int32_t>((ua - ub) * (ua - ub));
    default: return 0;
  }
}

template <typename T>
void BinaryLoop(BinaryOp op, Operands form, const T* a, const T* b, T* out, size_t n) {
  const size_t sa = form == Operands::kScalarVector ? 0 : 1;
  const size_t sb = form == Operands::kVectorScalar ? 0 : 1;
  for (size_t i = 0; i < n; ++i) out[i] = ApplyBinary(op, a[i * sa], b[i * sb]);
}

void BinaryF32(BinaryOp op, Operands form, const float* a, const float* b, float* out, size_t n) {
  BinaryLoop(op, form, a, b, out, n);
}
void BinaryI32(BinaryOp op, Operands form, const int32_t* a, const int32_t* b, int32_t* out,
               size_t n) {
  BinaryLoop(op, form, a, b, out, n);
}

}  // namespace scalar

void BinaryF32(BinaryOp op, Operands form, const float* a, const float* b, float* out, size_t n,
               Stores stores) {
  if (UseScalarKernels()) return scalar::BinaryF32(op, form, a, b, out, n);
  // One row of n: the SIMD body for row blocks (BinaryRowsAny) serves both.
  HWY_DYNAMIC_DISPATCH(BinaryRowsF32)(static_cast<int>(op), static_cast<int>(form), a, 0, b, 0,
                                      out, 1, n, static_cast<int>(stores));
}

void BinaryI32(BinaryOp op, Operands form, const int32_t* a, const int32_t* b, int32_t* out,
               size_t n, Stores stores) {
  if (UseScalarKernels()) return scalar::BinaryI32(op, form, a, b, out, n);
  HWY_DYNAMIC_DISPATCH(BinaryI32)(static_cast<int>(op), static_cast<int>(form), a, b, out, n,
                                  static_cast<int>(stores));
}

bool BinarySupports(BinaryOp op, TF_DataType dtype) {
  if (dtype == TF_FLOAT || IsHalfType(dtype)) return true;
  if (dtype != TF_INT32) return false;
  switch (op) {
    case BinaryOp::kAdd: case BinaryOp::kSub: case BinaryOp::kMul: case BinaryOp::kMax:
    case BinaryOp::kMin: case BinaryOp::kSquaredDiff: return true;
    default: return false;
  }
}

void BinaryAny(BinaryOp op, Operands form, TF_DataType dtype, const void* a, const void* b,
               void* out, size_t n, Stores stores) {
  if (dtype == TF_FLOAT) {
    return BinaryF32(op, form, static_cast<const float*>(a), static_cast<const float*>(b),
                     static_cast<float*>(out), n, stores);
  }
  if (dtype == TF_INT32) {
    return BinaryI32(op, form, static_cast<const int32_t*>(a), static_cast<const int32_t*>(b),
                     static_cast<int32_t*>(out), n, stores);
  }
  // 16-bit floats: blocks through float; a scalar operand converts once.
  const uint16_t* ha = static_cast<const uint16_t*>(a);
  const uint16_t* hb = static_cast<const uint16_t*>(b);
  uint16_t* ho = static_cast<uint16_t*>(out);
  const bool a_vec = form != Operands::kScalarVector, b_vec = form != Operands::kVectorScalar;
  float fa[kHalfBlock], fb[kHalfBlock];
  if (!a_vec) HalfToFloat(dtype, ha, fa, 1);
  if (!b_vec) HalfToFloat(dtype, hb, fb, 1);
  for (size_t i = 0; i < n; i += kHalfBlock) {
    const size_t m = n - i < kHalfBlock ? n - i : kHalfBlock;
    if (a_vec) HalfToFloat(dtype, ha + i, fa, m);
    if (b_vec) HalfToFloat(dtype, hb + i, fb, m);
    float* result = a_vec ? fa : fb;  // a vector operand's buffer is free to overwrite
    BinaryF32(op, form, fa, fb, result, m);
    FloatToHalf(dtype, result, ho + i, m);
  }
}

namespace {

// One broadcasting binary op (or an activation gradient, whose inputs must
// have the same shape).
template <BinaryOp kOp, bool kSameShape>
class BinaryKernel {
 public:
  explicit BinaryKernel(KernelConstruction&) {}
  void Compute(KernelContext& ctx) {
    Tensor a, b, out;
    if (!ctx.Input(0, &a) || !ctx.Input(1, &b)) return;
    BroadcastPlan plan;
    if (kSameShape && a.shape != b.shape) {
      ctx.Fail(TF_INVALID_ARGUMENT, "inputs must have the same shape, got " + ShapeText(a.shape) +
                                        " and " + ShapeText(b.shape));
      return;
    }
    if (!PlanBroadcast(a.shape, b.shape, &plan)) {
      ctx.Fail(TF_INVALID_ARGUMENT,
               "Incompatible shapes: " + ShapeText(a.shape) + " vs. " + ShapeText(b.shape));
      return;
    }
    bool ok;
    if (a.shape == plan.out_shape && b.shape == plan.out_shape) {
      ok = ctx.ForwardOrAllocate({0, 1}, 0, a.dtype, plan.out_shape, &out);
    } else if (a.shape == plan.out_shape) {
      ok = ctx.ForwardOrAllocate({0}, 0, a.dtype, plan.out_shape, &out);
    } else if (b.shape == plan.out_shape) {
      ok = ctx.ForwardOrAllocate({1}, 0, a.dtype, plan.out_shape, &out);
    } else {
      ok = ctx.AllocateOutput(0, a.dtype, plan.out_shape, &out);
    }
    if (!ok || plan.num_elements() == 0) return;
    // TODO(vendor): launch the device's broadcasting elementwise kernel here.
    ctx.Enqueue([a, b, out, plan](ComputeUnits& units) {
      RunBinary(kOp, plan, a.dtype, a.data, b.data, out.data, units);
      return Status();
    });
  }
};

template <BinaryOp kOp, bool kSameShape = false>
void Register(const char* op, bool int32) {
  std::vector<TF_DataType> types = {TF_FLOAT, TF_BFLOAT16, TF_HALF};
  if (int32) types.push_back(TF_INT32);
  RegisterKernel<BinaryKernel<kOp, kSameShape>>(op, types);
}

}  // namespace

void BinaryRowsAny(BinaryOp op, Operands form, TF_DataType dtype, const void* a,
                   int64_t a_row_step, const void* b, int64_t b_row_step, void* out, size_t rows,
                   size_t n, Stores stores) {
  if (dtype == TF_FLOAT && !UseScalarKernels()) {
    return HWY_DYNAMIC_DISPATCH(BinaryRowsF32)(
        static_cast<int>(op), static_cast<int>(form), static_cast<const float*>(a), a_row_step,
        static_cast<const float*>(b), b_row_step, static_cast<float*>(out), rows, n,
        static_cast<int>(stores));
  }
  const size_t size = TF_DataTypeSize(dtype);
  const int64_t sz = static_cast<int64_t>(size);
  for (size_t r = 0; r < rows; ++r) {
    const int64_t ri = static_cast<int64_t>(r);
    BinaryAny(op, form, dtype, static_cast<const char*>(a) + ri * a_row_step * sz,
              static_cast<const char*>(b) + ri * b_row_step * sz,
              static_cast<char*>(out) + r * n * size, n, stores);
  }
}

void RunBinary(BinaryOp op, const BroadcastPlan& plan, TF_DataType dtype, const void* a,
               const void* b, void* out, ComputeUnits& units) {
  const size_t size = TF_DataTypeSize(dtype);
  const char* ca = static_cast<const char*>(a);
  const char* cb = static_cast<const char*>(b);
  char* co = static_cast<char*>(out);
  ParallelElementwise(units, plan.num_elements(), size, [&](size_t begin, size_t end, Stores stores) {
    ForEachRowBlock(plan, begin, end,
                    [&](size_t ia, int64_t a_step, size_t ib, int64_t b_step, size_t io,
                        size_t rows, size_t n, Operands form) {
                      BinaryRowsAny(op, form, dtype, ca + ia * size, a_step, cb + ib * size,
                                    b_step, co + io * size, rows, n, stores);
                    });
  });
}

void RegisterElementwiseBinaryKernels() {
  Register<BinaryOp::kAdd>("AddV2", true);
  Register<BinaryOp::kSub>("Sub", true);
  Register<BinaryOp::kMul>("Mul", true);
  Register<BinaryOp::kDiv>("RealDiv", false);
  Register<BinaryOp::kMax>("Maximum", true);
  Register<BinaryOp::kMin>("Minimum", true);
  Register<BinaryOp::kSquaredDiff>("SquaredDifference", true);
  Register<BinaryOp::kReluGrad, true>("ReluGrad", false);
  Register<BinaryOp::kRelu6Grad, true>("Relu6Grad", false);
  Register<BinaryOp::kEluGrad, true>("EluGrad", false);
  Register<BinaryOp::kSigmoidGrad, true>("SigmoidGrad", false);
  Register<BinaryOp::kTanhGrad, true>("TanhGrad", false);
}

}  // namespace vacc
#endif  // HWY_ONCE
