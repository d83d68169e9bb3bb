// SPDX-License-Identifier: Apache-2.0
//
// MaxPool and AvgPool, NHWC float32 (half and bfloat16 through float32). The work is split over (batch, output
// row) pairs; within a row the SIMD body takes one vector of channels at a
// time (C is contiguous in NHWC) and runs the window over it, so a window
// position costs one load whatever its size. Channels left over after the
// last full vector go through the same rule one at a time.
//
// Compiled once per SIMD target (Highway's foreach_target.h, see
// vacc_elementwise_unary.cc for the pattern).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/vacc_pool.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cstddef>
#include <cstdint>

#include "kernels/vacc_minmax-inl.h"
#include "kernels/vacc_pool.h"

HWY_BEFORE_NAMESPACE();
namespace vacc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void MaxPoolRowsF32(const PoolGeometry& g, const float* in, float* out, size_t row_begin,
                    size_t row_end) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t C = g.channels;
  for (size_t r = row_begin; r < row_end; ++r) {
    const int64_t n = static_cast<int64_t>(r) / g.out_h, oh = static_cast<int64_t>(r) % g.out_h;
    int64_t h0, h1;
    g.RowWindow(oh, &h0, &h1);
    const float* image = in + n * g.in_h * g.in_w * C;
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      int64_t w0, w1;
      g.ColWindow(ow, &w0, &w1);
      float* o = out + (static_cast<int64_t>(r) * g.out_w + ow) * C;
      const float* first = image + (h0 * g.in_w + w0) * C;
      int64_t c = 0;
      for (; c + lanes <= C; c += lanes) {
        auto m = hn::LoadU(d, first + c);
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) {
            const auto v = hn::LoadU(d, image + (h * g.in_w + w) * C + c);
            m = MaxPropagatingNaN(m, v);  // hn::Max does not propagate NaN everywhere
          }
        }
        hn::StoreU(m, d, o + c);
      }
      for (; c < C; ++c) {
        float m = first[c];
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) {
            const float v = image[(h * g.in_w + w) * C + c];
            if (v > m || v != v) m = v;
          }
        }
        o[c] = m;
      }
    }
  }
}

void AvgPoolRowsF32(const PoolGeometry& g, const float* in, float* out, size_t row_begin,
                    size_t row_end) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t C = g.channels;
  for (size_t r = row_begin; r < row_end; ++r) {
    const int64_t n = static_cast<int64_t>(r) / g.out_h, oh = static_cast<int64_t>(r) % g.out_h;
    int64_t h0, h1;
    g.RowWindow(oh, &h0, &h1);
    const float* image = in + n * g.in_h * g.in_w * C;
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      int64_t w0, w1;
      g.ColWindow(ow, &w0, &w1);
      const float count = static_cast<float>((h1 - h0) * (w1 - w0));
      float* o = out + (static_cast<int64_t>(r) * g.out_w + ow) * C;
      int64_t c = 0;
      for (; c + lanes <= C; c += lanes) {
        auto sum = hn::Zero(d);
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) {
            sum = hn::Add(sum, hn::LoadU(d, image + (h * g.in_w + w) * C + c));
          }
        }
        hn::StoreU(hn::Div(sum, hn::Set(d, count)), d, o + c);
      }
      for (; c < C; ++c) {
        float sum = 0.0f;
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) sum += image[(h * g.in_w + w) * C + c];
        }
        o[c] = sum / count;
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/vacc_kernel.h"
#include "kernels/vacc_simd.h"

namespace vacc {

HWY_EXPORT(MaxPoolRowsF32);
HWY_EXPORT(AvgPoolRowsF32);

namespace scalar {

// The references: one output cell at a time, one channel at a time.
void MaxPoolRowsF32(const PoolGeometry& g, const float* in, float* out, size_t row_begin,
                    size_t row_end) {
  const int64_t C = g.channels;
  for (size_t r = row_begin; r < row_end; ++r) {
    const int64_t n = static_cast<int64_t>(r) / g.out_h, oh = static_cast<int64_t>(r) % g.out_h;
    int64_t h0, h1;
    g.RowWindow(oh, &h0, &h1);
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      int64_t w0, w1;
      g.ColWindow(ow, &w0, &w1);
      for (int64_t c = 0; c < C; ++c) {
        float m = in[((n * g.in_h + h0) * g.in_w + w0) * C + c];
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) {
            const float v = in[((n * g.in_h + h) * g.in_w + w) * C + c];
            if (v > m || v != v) m = v;  // NaN propagates
          }
        }
        out[(static_cast<int64_t>(r) * g.out_w + ow) * C + c] = m;
      }
    }
  }
}

void AvgPoolRowsF32(const PoolGeometry& g, const float* in, float* out, size_t row_begin,
                    size_t row_end) {
  const int64_t C = g.channels;
  for (size_t r = row_begin; r < row_end; ++r) {
    const int64_t n = static_cast<int64_t>(r) / g.out_h, oh = static_cast<int64_t>(r) % g.out_h;
    int64_t h0, h1;
    g.RowWindow(oh, &h0, &h1);
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      int64_t w0, w1;
      g.ColWindow(ow, &w0, &w1);
      const float count = static_cast<float>((h1 - h0) * (w1 - w0));  // padding not counted
      for (int64_t c = 0; c < C; ++c) {
        float sum = 0.0f;
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) sum += in[((n * g.in_h + h) * g.in_w + w) * C + c];
        }
        out[(static_cast<int64_t>(r) * g.out_w + ow) * C + c] = sum / count;
      }
    }
  }
}

}  // namespace scalar

void MaxPoolRows(const PoolGeometry& g, const float* in, float* out, size_t row_begin,
                 size_t row_end) {
  if (UseScalarKernels()) scalar::MaxPoolRowsF32(g, in, out, row_begin, row_end);
  else HWY_DYNAMIC_DISPATCH(MaxPoolRowsF32)(g, in, out, row_begin, row_end);
}

void AvgPoolRows(const PoolGeometry& g, const float* in, float* out, size_t row_begin,
                 size_t row_end) {
  if (UseScalarKernels()) scalar::AvgPoolRowsF32(g, in, out, row_begin, row_end);
  else HWY_DYNAMIC_DISPATCH(AvgPoolRowsF32)(g, in, out, row_begin, row_end);
}

size_t PoolRowGrain(const PoolGeometry& g, int64_t cells_per_row) {
  // About 16K window reads per chunk: enough to amortise handing it to a
  // unit (~0.2 us), small enough to balance the units.
  const int64_t per_row = std::max<int64_t>(1, cells_per_row * g.channels);
  return static_cast<size_t>(std::max<int64_t>(1, 16384 / per_row));
}

namespace {

using RowsFn = void (*)(const PoolGeometry&, const float*, float*, size_t, size_t);

// MaxPool and AvgPool: the same kernel around a different body.
template <RowsFn kRows>
class PoolKernel {
 public:
  explicit PoolKernel(KernelConstruction& k) { attrs_.Read(k); }

  void Compute(KernelContext& ctx) {
    Tensor x, y;
    if (!ctx.Input(0, &x)) return;
    PoolGeometry g;
    std::string error;
    const PoolCheck check = MakePoolGeometry(x.shape, attrs_.ksize, attrs_.strides,
                                             attrs_.padding, &g, &error);
    if (check != PoolCheck::kOk) {
      ctx.Fail(check == PoolCheck::kInvalid ? TF_INVALID_ARGUMENT : TF_UNIMPLEMENTED, error);
      return;
    }
    if (!ctx.AllocateOutput(0, x.dtype, {g.batch, g.out_h, g.out_w, g.channels}, &y)) return;
    if (y.num_elements() == 0) return;  // nothing to pool (an empty batch, say)
    ctx.Enqueue([g, x, y](ComputeUnits& units) {
      const float* in = x.as<float>();
      float* out = y.as<float>();
      std::vector<float> in_f, out_f;  // float32 scratch for half/bfloat16
      if (x.dtype != TF_FLOAT) {
        in_f.resize(static_cast<size_t>(x.num_elements()));
        out_f.resize(static_cast<size_t>(y.num_elements()));
        WidenToFloat(x.data, x.dtype, x.num_elements(), in_f.data(), units);
        in = in_f.data();
        out = out_f.data();
      }
      const size_t rows = static_cast<size_t>(g.batch * g.out_h);
      units.ParallelFor(rows, PoolRowGrain(g, g.out_w * g.window_h * g.window_w),
                        [&](size_t begin, size_t end) { kRows(g, in, out, begin, end); });
      if (x.dtype != TF_FLOAT) NarrowFromFloat(out, y.dtype, y.num_elements(), y.data, units);
      return Status();
    });
  }

 private:
  PoolAttrs attrs_;
};

}  // namespace

void RegisterPoolKernels() {
  RegisterKernel<PoolKernel<MaxPoolRows>>("MaxPool", {TF_FLOAT, TF_HALF, TF_BFLOAT16});
  RegisterKernel<PoolKernel<AvgPoolRows>>("AvgPool", {TF_FLOAT, TF_HALF, TF_BFLOAT16});
}

}  // namespace vacc
#endif  // HWY_ONCE
