// SPDX-License-Identifier: Apache-2.0
#include "kernels/gemm/vacc_gemm_im2col.h"

#include <algorithm>
#include <cstdlib>

#include <vector>

#include "kernels/gemm/vacc_gemm_interleave.h"
#include "kernels/vacc_half.h"

namespace vacc {
namespace gemm {
namespace {

// Walks a patch column index p = (kh*KW + kw)*Cin + ci in runs of channels:
// within a run the input is contiguous (NHWC), between runs it jumps.
struct PatchCursor {
  int64_t kh, kw, ci;
  PatchCursor(const ConvGeometry& g, int64_t p)
      : kh(p / (g.k_w * g.in_c)), kw(p / g.in_c % g.k_w), ci(p % g.in_c) {}
  // Moves `count` columns on (within one kernel row, or to its end).
  void Advance(const ConvGeometry& g, int64_t count) {
    ci += count;
    kw += ci / g.in_c;
    ci %= g.in_c;
    if (kw == g.k_w) {
      kw = 0;
      ++kh;
    }
  }
};

// Output pixel m = (n, oh, ow): where its receptive field starts in x.
struct Pixel {
  int64_t n = 0, ih0 = 0, iw0 = 0;
  Pixel() = default;
  Pixel(const ConvGeometry& g, int64_t m) {
    const int64_t ow = m % g.out_w, oh = m / g.out_w % g.out_h;
    n = m / (g.out_w * g.out_h);
    ih0 = oh * g.stride_h - g.pad_top;
    iw0 = ow * g.stride_w - g.pad_left;
  }
};

// x(pixel's row for patch position (kh, kw)), or nullptr in the padding.
template <typename T>
const T* PatchRow(const ConvGeometry& g, const T* x, const Pixel& px, int64_t kh, int64_t kw) {
  const int64_t ih = px.ih0 + kh * g.dilation_h, iw = px.iw0 + kw * g.dilation_w;
  if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) return nullptr;
  return x + ((px.n * g.in_h + ih) * g.in_w + iw) * g.in_c;
}

template <typename T>
class Im2Col : public PackableA {
 public:
  Im2Col(const ConvGeometry& g, const T* x)
      : g_(g), x_(x), zeros_(static_cast<size_t>(g.k_w * g.in_c)) {}
  int64_t rows() const override { return g_.batch * g_.out_h * g_.out_w; }
  int64_t cols() const override { return g_.k_h * g_.k_w * g_.in_c; }
  // Panel rows are pixels, depth is patch columns. The panel's pixels are
  // located once; then each run of columns that is contiguous in x for all
  // of them (see RunLength) is interleaved, so cursor and bounds work is per
  // run, not per element. Rows in the padding, or past mc, read zeros.
  void Pack(int64_t row0, int64_t mc, int64_t col0, int64_t kc, int mr,
            float* dst) const override {
    constexpr int kMaxRows = 32;  // MR is at most 8 (microkernel)
    if (mr > kMaxRows) std::abort();
    Pixel px[kMaxRows];
    const T* src[kMaxRows];
    for (int64_t i = 0; i < mc; i += mr) {
      const int rows_here = static_cast<int>(std::min<int64_t>(mr, mc - i));
      for (int r = 0; r < rows_here; ++r) px[r] = Pixel(g_, row0 + i + r);
      PatchCursor at(g_, col0);
      for (int64_t k = 0; k < kc;) {
        const int64_t run = std::min(RunLength(px, rows_here, at), kc - k);
        for (int r = 0; r < mr; ++r) {
          const T* row = r < rows_here ? PatchRow(g_, x_, px[r], at.kh, at.kw) : nullptr;
          src[r] = row != nullptr ? row + at.ci : zeros_.data();
        }
        InterleaveRows(src, mr, run, dst + k * mr);
        k += run;
        at.Advance(g_, run);
      }
      dst += mr * kc;
    }
  }

 private:
  // How far the patch stays contiguous in x from `at` for every pixel of the
  // panel: to the end of the channels, or, without horizontal dilation, on
  // along the kernel row up to the first tap where some pixel's row enters
  // or leaves the input (before it each pixel reads one contiguous run of x,
  // or zeros; a row wholly in the vertical padding is zeros either way). An
  // interior RGB stem pixel's runs grow from 3 values to 21; a border
  // pixel's stop only where it crosses the edge (a seam of the direct
  // convolution was 7 runs per kernel row, is at most 4).
  int64_t RunLength(const Pixel* px, int rows, const PatchCursor& at) const {
    const int64_t channels = g_.in_c - at.ci;
    if (g_.dilation_w != 1 || at.kw + 1 == g_.k_w) return channels;
    int64_t end_kw = g_.k_w;  // the first tap where some pixel's row changes side
    for (int r = 0; r < rows; ++r) {
      const int64_t ih = px[r].ih0 + at.kh * g_.dilation_h;
      if (ih < 0 || ih >= g_.in_h) continue;
      for (const int64_t edge : {-px[r].iw0, g_.in_w - px[r].iw0}) {  // kw where iw is 0, in_w
        if (edge > at.kw && edge < end_kw) end_kw = edge;
      }
    }
    return (end_kw - at.kw) * g_.in_c - at.ci;
  }

  ConvGeometry g_;
  const T* x_;
  std::vector<T> zeros_;  // the longest run of padding (T{} is +0 in every dtype)
};

template <typename T>
class TransposedIm2Col : public PackableA {
 public:
  TransposedIm2Col(const ConvGeometry& g, const T* x) : g_(g), x_(x) {}
  int64_t rows() const override { return g_.k_h * g_.k_w * g_.in_c; }
  int64_t cols() const override { return g_.batch * g_.out_h * g_.out_w; }
  // Panel rows are patch columns, depth is pixels: per pixel, the panel's
  // mr values are channel runs of x, written contiguously.
  void Pack(int64_t row0, int64_t mc, int64_t col0, int64_t kc, int mr,
            float* dst) const override {
    for (int64_t i = 0; i < mc; i += mr) {
      const int rows_here = static_cast<int>(std::min<int64_t>(mr, mc - i));
      for (int64_t k = 0; k < kc; ++k) {
        const Pixel px(g_, col0 + k);
        float* out = dst + k * mr;
        PatchCursor at(g_, row0 + i);
        for (int r = 0; r < rows_here;) {
          const int run = static_cast<int>(std::min<int64_t>(g_.in_c - at.ci, rows_here - r));
          const T* src = PatchRow(g_, x_, px, at.kh, at.kw);
          if (src == nullptr) {
            std::fill(out + r, out + r + run, 0.0f);
          } else {
            for (int t = 0; t < run; ++t) out[r + t] = ToFloat(src[at.ci + t]);
          }
          r += run;
          at.Advance(g_, run);
        }
        std::fill(out + rows_here, out + mr, 0.0f);
      }
      dst += mr * kc;
    }
  }

 private:
  ConvGeometry g_;
  const T* x_;
};

template <template <typename> class P>
std::unique_ptr<PackableA> Make(const ConvGeometry& g, const void* x, TF_DataType dtype) {
  switch (dtype) {
    case TF_BFLOAT16: return std::make_unique<P<BFloat16>>(g, static_cast<const BFloat16*>(x));
    case TF_HALF: return std::make_unique<P<Half>>(g, static_cast<const Half*>(x));
    default: return std::make_unique<P<float>>(g, static_cast<const float*>(x));
  }
}

}  // namespace

std::unique_ptr<PackableA> Im2ColA(const ConvGeometry& g, const void* x, TF_DataType dtype) {
  return Make<Im2Col>(g, x, dtype);
}

std::unique_ptr<PackableA> TransposedIm2ColA(const ConvGeometry& g, const void* x,
                                             TF_DataType dtype) {
  return Make<TransposedIm2Col>(g, x, dtype);
}

}  // namespace gemm
}  // namespace vacc
