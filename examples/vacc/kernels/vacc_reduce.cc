// SPDX-License-Identifier: Apache-2.0
//
// Sum, Mean, Max, Min, Prod over `reduction_indices` (host memory; negative
// axes, keep_dims, empty axes). Adjacent reduced dimensions (after dropping
// size-1 ones) collapse to [outer, reduce, inner] and run on SIMD bodies
// split across the compute units; reducing non-adjacent dimension groups at
// once (rare) takes a plain strided loop. Compiled once per SIMD target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/vacc_reduce.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/vacc_minmax-inl.h"
#include "kernels/vacc_reduce.h"

HWY_BEFORE_NAMESPACE();
namespace vacc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <ReduceOp kOp, class D>
HWY_INLINE hn::Vec<D> Identity(D d) {
  if constexpr (kOp == ReduceOp::kProd) return hn::Set(d, 1.0f);
  else if constexpr (kOp == ReduceOp::kMax) return hn::Set(d, -HUGE_VALF);
  else if constexpr (kOp == ReduceOp::kMin) return hn::Set(d, HUGE_VALF);
  else return hn::Zero(d);
}

// acc op v; Max/Min propagate NaN (vacc_minmax-inl.h), so a NaN, once in,
// stays.
template <ReduceOp kOp, class V>
HWY_INLINE V Combine(V acc, V v) {
  if constexpr (kOp == ReduceOp::kProd) return hn::Mul(acc, v);
  else if constexpr (kOp == ReduceOp::kMax) return MaxPropagatingNaN(acc, v);
  else if constexpr (kOp == ReduceOp::kMin) return MinPropagatingNaN(acc, v);
  else return hn::Add(acc, v);
}

template <ReduceOp kOp>
HWY_INLINE float CombineScalar(float acc, float v) {
  if constexpr (kOp == ReduceOp::kProd) return acc * v;
  else if constexpr (kOp == ReduceOp::kMax) return acc < v || std::isnan(v) ? v : acc;
  else if constexpr (kOp == ReduceOp::kMin) return v < acc || std::isnan(v) ? v : acc;
  else return acc + v;
}

template <ReduceOp kOp>
HWY_NOINLINE float RowLoop(const float* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t lanes = hn::Lanes(d);
  // Two accumulators hide the add latency.
  auto acc0 = Identity<kOp>(d), acc1 = Identity<kOp>(d);
  size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    acc0 = Combine<kOp>(acc0, hn::LoadU(d, x + i));
    acc1 = Combine<kOp>(acc1, hn::LoadU(d, x + i + lanes));
  }
  acc0 = Combine<kOp>(acc0, acc1);
  HWY_ALIGN float lane[HWY_MAX_BYTES / sizeof(float)];
  hn::Store(acc0, d, lane);
  float r = lane[0];
  for (size_t k = 1; k < lanes; ++k) r = CombineScalar<kOp>(r, lane[k]);
  for (; i < n; ++i) r = CombineScalar<kOp>(r, x[i]);
  return r;
}

template <ReduceOp kOp>
HWY_NOINLINE void ColumnLoop(const float* HWY_RESTRICT x, size_t reduce, size_t inner,
                             float* HWY_RESTRICT acc, size_t m) {
  const hn::ScalableTag<float> d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= m; i += lanes) {
    auto a = Identity<kOp>(d);
    for (size_t r = 0; r < reduce; ++r) a = Combine<kOp>(a, hn::LoadU(d, x + r * inner + i));
    hn::StoreU(a, d, acc + i);
  }
  for (; i < m; ++i) {
    float a = hn::GetLane(Identity<kOp>(d));
    for (size_t r = 0; r < reduce; ++r) a = CombineScalar<kOp>(a, x[r * inner + i]);
    acc[i] = a;
  }
}

float ReduceRowF32(int op, const float* x, size_t n) {
  switch (static_cast<ReduceOp>(op)) {
    case ReduceOp::kProd: return RowLoop<ReduceOp::kProd>(x, n);
    case ReduceOp::kMax: return RowLoop<ReduceOp::kMax>(x, n);
    case ReduceOp::kMin: return RowLoop<ReduceOp::kMin>(x, n);
    default: return RowLoop<ReduceOp::kSum>(x, n);
  }
}

void ReduceColumnsF32(int op, const float* x, size_t reduce, size_t inner, float* acc, size_t m) {
  switch (static_cast<ReduceOp>(op)) {
    case ReduceOp::kProd: return ColumnLoop<ReduceOp::kProd>(x, reduce, inner, acc, m);
    case ReduceOp::kMax: return ColumnLoop<ReduceOp::kMax>(x, reduce, inner, acc, m);
    case ReduceOp::kMin: return ColumnLoop<ReduceOp::kMin>(x, reduce, inner, acc, m);
    default: return ColumnLoop<ReduceOp::kSum>(x, reduce, inner, acc, m);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/vacc_half.h"
#include "kernels/vacc_kernel.h"
#include "kernels/vacc_simd.h"

namespace vacc {

HWY_EXPORT(ReduceRowF32);
HWY_EXPORT(ReduceColumnsF32);

namespace {

// The scalar fold of every dtype: float accumulates float (16-bit floats
// widened), int32 wraps in uint32 like TensorFlow's int32.
float Start(ReduceOp op, float) {
  return op == ReduceOp::kProd ? 1.0f : op == ReduceOp::kMax ? -HUGE_VALF
                                      : op == ReduceOp::kMin ? HUGE_VALF : 0.0f;
}
int32_t Start(ReduceOp op, int32_t) {
  return op == ReduceOp::kProd ? 1 : op == ReduceOp::kMax ? std::numeric_limits<int32_t>::lowest()
                                     : op == ReduceOp::kMin ? std::numeric_limits<int32_t>::max() : 0;
}
float Fold(ReduceOp op, float a, float v) {
  switch (op) {
    case ReduceOp::kProd: return a * v;
    case ReduceOp::kMax: return a < v || std::isnan(v) ? v : a;
    case ReduceOp::kMin: return v < a || std::isnan(v) ? v : a;
    default: return a + v;
  }
}
int32_t Fold(ReduceOp op, int32_t a, int32_t v) {
  switch (op) {
    case ReduceOp::kProd: return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(v));
    case ReduceOp::kMax: return a < v ? v : a;
    case ReduceOp::kMin: return v < a ? v : a;
    default: return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(v));
  }
}
float Finish(ReduceOp op, float a, size_t count) {
  return op == ReduceOp::kMean ? a / static_cast<float>(count) : a;
}
int32_t Finish(ReduceOp op, int32_t a, size_t count) {
  if (op != ReduceOp::kMean || count == 0) return a;
  return a / static_cast<int32_t>(count);
}

// Element i of x as the accumulator type A.
template <typename A>
A Get(TF_DataType dtype, const void* x, size_t i) {
  if constexpr (std::is_same_v<A, int32_t>) {
    return static_cast<const int32_t*>(x)[i];
  } else {
    if (dtype == TF_FLOAT) return static_cast<const float*>(x)[i];
    const uint16_t h = static_cast<const uint16_t*>(x)[i];
    return dtype == TF_BFLOAT16 ? Bf16ToF32(h) : F16ToF32(h);
  }
}
template <typename A>
void Put(TF_DataType dtype, void* y, size_t i, A v) {
  if constexpr (std::is_same_v<A, int32_t>) {
    static_cast<int32_t*>(y)[i] = v;
  } else if (dtype == TF_FLOAT) {
    static_cast<float*>(y)[i] = v;
  } else {
    static_cast<uint16_t*>(y)[i] = dtype == TF_BFLOAT16 ? F32ToBf16(v) : F32ToF16(v);
  }
}

// Outputs [begin, end) of the [outer, reduce, inner] view, scalar.
template <typename A>
void ReduceScalar(ReduceOp op, TF_DataType dtype, const void* x, void* y, size_t reduce,
                  size_t inner, size_t begin, size_t end) {
  for (size_t k = begin; k < end; ++k) {
    const size_t o = k / inner, i = k % inner;
    A a = Start(op, A());
    for (size_t r = 0; r < reduce; ++r) a = Fold(op, a, Get<A>(dtype, x, (o * reduce + r) * inner + i));
    Put<A>(dtype, y, k, Finish(op, a, reduce));
  }
}

// Columns handed to a unit at once when inner > 1: the accumulators (1 KiB)
// stay in L1 while the rows stream through.
constexpr size_t kColumnBlock = 256;
// Input elements per chunk.
constexpr size_t kReduceGrain = 32768;

}  // namespace

namespace scalar {
float ReduceRowF32(ReduceOp op, const float* x, size_t n) {
  float a = Start(op, 0.0f);
  for (size_t i = 0; i < n; ++i) a = Fold(op, a, x[i]);
  return a;
}
void ReduceColumnsF32(ReduceOp op, const float* x, size_t reduce, size_t inner, float* acc, size_t m) {
  for (size_t i = 0; i < m; ++i) {
    float a = Start(op, 0.0f);
    for (size_t r = 0; r < reduce; ++r) a = Fold(op, a, x[r * inner + i]);
    acc[i] = a;
  }
}
}  // namespace scalar

float ReduceRowF32(ReduceOp op, const float* x, size_t n) {
  if (UseScalarKernels()) return scalar::ReduceRowF32(op, x, n);
  return HWY_DYNAMIC_DISPATCH(ReduceRowF32)(static_cast<int>(op), x, n);
}
void ReduceColumnsF32(ReduceOp op, const float* x, size_t reduce, size_t inner, float* acc, size_t m) {
  if (UseScalarKernels()) return scalar::ReduceColumnsF32(op, x, reduce, inner, acc, m);
  HWY_DYNAMIC_DISPATCH(ReduceColumnsF32)(static_cast<int>(op), x, reduce, inner, acc, m);
}

void Reduce3D(ReduceOp op, TF_DataType dtype, const void* x, void* y, size_t outer, size_t reduce,
              size_t inner, ComputeUnits& units) {
  const size_t outputs = outer * inner;
  if (outputs == 0) return;
  const size_t per_output = reduce > 0 ? reduce : 1;
  if (dtype != TF_FLOAT) {
    // int32, bfloat16, half: the scalar fold (the compiler vectorizes little
    // of it). TODO(vendor): SIMD bodies for these if models need them fast.
    units.ParallelFor(outputs, std::max<size_t>(1, kReduceGrain / per_output), [&](size_t b, size_t e) {
      if (dtype == TF_INT32) ReduceScalar<int32_t>(op, dtype, x, y, reduce, inner, b, e);
      else ReduceScalar<float>(op, dtype, x, y, reduce, inner, b, e);
    });
    return;
  }
  const float* in = static_cast<const float*>(x);
  float* out = static_cast<float*>(y);
  const float scale = op == ReduceOp::kMean ? 1.0f / static_cast<float>(reduce) : 1.0f;
  if (inner == 1) {
    if (outer >= 4 * static_cast<size_t>(units.size()) || reduce < kReduceGrain) {
      units.ParallelFor(outer, std::max<size_t>(1, kReduceGrain / per_output), [&](size_t b, size_t e) {
        for (size_t o = b; o < e; ++o) out[o] = ReduceRowF32(op, in + o * reduce, reduce) * scale;
      });
      return;
    }
    // Few long rows: each row in pieces, the pieces' results combined.
    const size_t pieces = (reduce + kReduceGrain - 1) / kReduceGrain;
    std::vector<float> partial(outer * pieces);
    units.ParallelFor(outer * pieces, 1, [&](size_t b, size_t e) {
      for (size_t k = b; k < e; ++k) {
        const size_t o = k / pieces, p = k % pieces;
        const size_t begin = p * kReduceGrain, n = std::min(reduce - begin, kReduceGrain);
        partial[k] = ReduceRowF32(op, in + o * reduce + begin, n);
      }
    });
    for (size_t o = 0; o < outer; ++o) out[o] = ReduceRowF32(op, &partial[o * pieces], pieces) * scale;
    return;
  }
  // inner > 1: blocks of columns, all `reduce` rows of a block at a time.
  const size_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  const size_t grain = std::max<size_t>(1, kReduceGrain / (per_output * kColumnBlock));
  units.ParallelFor(outer * blocks, grain, [&](size_t b, size_t e) {
    for (size_t k = b; k < e; ++k) {
      const size_t o = k / blocks, begin = (k % blocks) * kColumnBlock;
      const size_t m = std::min(inner - begin, kColumnBlock);
      float* acc = out + o * inner + begin;
      ReduceColumnsF32(op, in + o * reduce * inner + begin, reduce, inner, acc, m);
      if (op == ReduceOp::kMean) {
        for (size_t i = 0; i < m; ++i) acc[i] *= scale;
      }
    }
  });
}

namespace {

class ReduceKernel {
 public:
  ReduceKernel(KernelConstruction& k, ReduceOp op) : op_(op) { k.GetBool("keep_dims", &keep_dims_); }

  void Compute(KernelContext& ctx) {
    Tensor x, out;
    std::vector<int64_t> axes;
    if (!ctx.Input(0, &x) || !ctx.HostInts(1, &axes)) return;
    const int rank = x.rank();
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    for (int64_t a : axes) {
      if (a < -rank || a >= rank) {
        ctx.Fail(TF_INVALID_ARGUMENT, "Invalid reduction dimension (" + std::to_string(a) + " for input with " +
                                          std::to_string(rank) + " dimension(s)), input shape " +
                                          ShapeText(x.shape));
        return;
      }
      reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
    }
    Shape out_shape;
    for (int d = 0; d < rank; ++d) {
      if (!reduced[static_cast<size_t>(d)]) out_shape.push_back(x.dim(d));
      else if (keep_dims_) out_shape.push_back(1);
    }
    if (!ctx.AllocateOutput(0, x.dtype, out_shape, &out) || NumElements(out_shape) == 0) return;
    // Groups of adjacent dims (size-1 dims dropped) that are all reduced or all kept.
    std::vector<std::pair<bool, int64_t>> groups;
    for (int d = 0; d < rank; ++d) {
      if (x.dim(d) == 1) continue;
      const bool r = reduced[static_cast<size_t>(d)];
      if (!groups.empty() && groups.back().first == r) groups.back().second *= x.dim(d);
      else groups.push_back({r, x.dim(d)});
    }
    size_t outer = 1, red = 1, inner = 1;
    int reduced_groups = 0;
    for (const auto& [r, size] : groups) {
      if (r) ++reduced_groups, red *= static_cast<size_t>(size);
      else if (reduced_groups == 0) outer *= static_cast<size_t>(size);
      else inner *= static_cast<size_t>(size);
    }
    if (x.num_elements() == 0) red = 0;  // reducing an empty axis: identities
    const ReduceOp op = op_;
    if (reduced_groups <= 1) {
      // TODO(vendor): launch the device's reduction kernel here.
      ctx.Enqueue([=](ComputeUnits& units) {
        Reduce3D(op, x.dtype, x.data, out.data, outer, red, inner, units);
        return Status();
      });
      return;
    }
    // Several separate reduced groups: one strided loop per output.
    ctx.Enqueue([=](ComputeUnits& units) {
      ReduceStrided(op, x, out, groups, units);
      return Status();
    });
  }

 private:
  static void ReduceStrided(ReduceOp op, const Tensor& x, const Tensor& out,
                            const std::vector<std::pair<bool, int64_t>>& groups, ComputeUnits& units) {
    // Strides of each group in x; the output walks the kept groups in order.
    std::vector<int64_t> stride(groups.size());
    int64_t s = 1;
    for (size_t g = groups.size(); g-- > 0;) stride[g] = s, s *= groups[g].second;
    size_t count = 1;
    for (const auto& [r, size] : groups) if (r) count *= static_cast<size_t>(size);
    const size_t outputs = static_cast<size_t>(out.num_elements());
    units.ParallelFor(outputs, 64, [&](size_t b, size_t e) {
      for (size_t k = b; k < e; ++k) {
        // The kept index of output k, and its base offset in x.
        int64_t rest = static_cast<int64_t>(k), base = 0;
        for (size_t g = groups.size(); g-- > 0;) {
          if (groups[g].first) continue;
          base += (rest % groups[g].second) * stride[g];
          rest /= groups[g].second;
        }
        if (x.dtype == TF_INT32) FoldOne<int32_t>(op, x, out, groups, stride, count, base, k);
        else FoldOne<float>(op, x, out, groups, stride, count, base, k);
      }
    });
  }

  template <typename A>
  static void FoldOne(ReduceOp op, const Tensor& x, const Tensor& out,
                   const std::vector<std::pair<bool, int64_t>>& groups,
                   const std::vector<int64_t>& stride, size_t count, int64_t base, size_t k) {
    A a = Start(op, A());
    for (size_t j = 0; j < count; ++j) {
      int64_t rest = static_cast<int64_t>(j), off = base;
      for (size_t g = groups.size(); g-- > 0;) {
        if (!groups[g].first) continue;
        off += (rest % groups[g].second) * stride[g];
        rest /= groups[g].second;
      }
      a = vacc::Fold(op, a, Get<A>(x.dtype, x.data, static_cast<size_t>(off)));
    }
    Put<A>(out.dtype, out.data, k, Finish(op, a, count));
  }

  ReduceOp op_;
  bool keep_dims_ = false;
};

template <ReduceOp kOp>
struct ReduceOpKernel : ReduceKernel {
  explicit ReduceOpKernel(KernelConstruction& k) : ReduceKernel(k, kOp) {}
};

template <ReduceOp kOp>
void Register(const char* name) {
  // Tidx (int32 or int64) unconstrained: HostInts reads either.
  RegisterKernel<ReduceOpKernel<kOp>>(name, {TF_FLOAT, TF_BFLOAT16, TF_HALF, TF_INT32},
                                      {"reduction_indices"});
}

}  // namespace

void RegisterReduceKernels() {
  Register<ReduceOp::kSum>("Sum");
  Register<ReduceOp::kMean>("Mean");
  Register<ReduceOp::kMax>("Max");
  Register<ReduceOp::kMin>("Min");
  Register<ReduceOp::kProd>("Prod");
}

}  // namespace vacc
#endif  // HWY_ONCE
