// SPDX-License-Identifier: Apache-2.0
//
// The work of Conv2D and its gradients (vacc_conv.h), on the GEMM:
//   Conv2D                y[M, Cout]  = Im2Col(x)[M, K] * filter[K, Cout]
//                         (1x1, stride 1, no padding: x itself is [M, Cin];
//                         large 3x3 stride-1 float32: Winograd's F(2x2, 3x3),
//                         gemm/vacc_gemm_conv_winograd.h; large 7x7
//                         stride-2 float32 on 1-4 channels: F(2x2, 4x4) on
//                         the input's phases, vacc_gemm_conv_winograd_s2.h,
//                         or without the AVX-512 pair kernels F(4, 4) along
//                         each output row, vacc_gemm_conv_winograd_s2_rows.h;
//                         other float32
//                         without horizontal dilation: patches read in
//                         place, gemm/vacc_gemm_conv_direct.h)
//   Conv2DBackpropFilter  dw[K, Cout] = Im2Col(x)^T[K, M] * dy[M, Cout]
//   Conv2DBackpropInput   per image: cols[OH*OW, K] = dy * filter^T, then
//                         col2im adds each patch column back to the input
//                         pixel it came from (patches overlap, so this is a
//                         scatter-add, which a GEMM cannot express)
// M = N*OH*OW, K = KH*KW*Cin. bfloat16/half compute in float32 and round once.
#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/gemm/vacc_gemm.h"
#include "kernels/gemm/vacc_gemm_conv_direct.h"
#include "kernels/gemm/vacc_gemm_conv_winograd.h"
#include "kernels/gemm/vacc_gemm_conv_winograd_s2.h"
#include "kernels/gemm/vacc_gemm_conv_winograd_s2_rows.h"
#include "kernels/gemm/vacc_gemm_im2col.h"
#include "kernels/vacc_conv.h"
#include "kernels/vacc_simd.h"

namespace vacc {
namespace {

// A float32 destination: the output itself, or a buffer rounded into it at
// the end when the output is bfloat16/half.
class FloatOut {
 public:
  FloatOut(const Tensor& t, bool zeroed) : t_(t) {
    const auto n = static_cast<size_t>(t.num_elements());
    if (t.dtype != TF_FLOAT) {
      wide_.assign(n, 0.0f);
      data_ = wide_.data();
    } else {
      data_ = t.as<float>();
      if (zeroed) std::fill(data_, data_ + n, 0.0f);
    }
  }
  float* data() { return data_; }
  void Finish(ComputeUnits& units) {
    if (t_.dtype != TF_FLOAT) gemm::StoreFromFloat(data_, t_.data, t_.dtype, t_.num_elements(), &units);
  }

 private:
  Tensor t_;
  std::vector<float> wide_;
  float* data_ = nullptr;
};

bool IsPlainMatMul(const ConvGeometry& g) {
  return g.k_h == 1 && g.k_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_top == 0 &&
         g.pad_left == 0 && g.out_h == g.in_h && g.out_w == g.in_w;
}

int64_t Pixels(const ConvGeometry& g) { return g.batch * g.out_h * g.out_w; }
int64_t PatchSize(const ConvGeometry& g) { return g.k_h * g.k_w * g.in_c; }

// dx for one image from its patch columns cols[OH*OW, K] (adds to dx).
void Col2Im(const ConvGeometry& g, const float* cols, float* dx_image) {
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      const float* col = cols + (oh * g.out_w + ow) * PatchSize(g);
      for (int64_t kh = 0; kh < g.k_h; ++kh) {
        const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
        if (ih < 0 || ih >= g.in_h) continue;
        for (int64_t kw = 0; kw < g.k_w; ++kw) {
          const int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
          if (iw < 0 || iw >= g.in_w) continue;
          float* px = dx_image + (ih * g.in_w + iw) * g.in_c;
          const float* src = col + (kh * g.k_w + kw) * g.in_c;
          for (int64_t c = 0; c < g.in_c; ++c) px[c] += src[c];
        }
      }
    }
  }
}

}  // namespace

Status Conv2DWork(const ConvGeometry& g, const Tensor& x, const Tensor& filter, const Tensor& y,
                  ComputeUnits& units) {
  if (y.num_elements() == 0) return Status();
  FloatOut out(y, false);
  if (UseScalarKernels()) {
    ReferenceConv2D(g, x, filter, out.data(), &units);
  } else {
    const gemm::Matrix b = gemm::RowMajor(filter.data, filter.dtype, PatchSize(g), g.out_c, false);
    if (IsPlainMatMul(g)) {
      const gemm::MatrixA a(gemm::RowMajor(x.data, x.dtype, Pixels(g), g.in_c, false));
      gemm::Gemm(a, b, out.data(), g.out_c, false, &units);
    } else if (gemm::Stride2WinogradConvApplies(g, x.dtype)) {
      gemm::Stride2WinogradConv2D(g, x.as<float>(), filter.as<float>(), out.data(), &units);
    } else if (gemm::Stride2RowWinogradConvApplies(g, x.dtype)) {
      gemm::Stride2RowWinogradConv2D(g, x.as<float>(), filter.as<float>(), out.data(), &units);
    } else if (gemm::WinogradConvApplies(g, x.dtype)) {
      gemm::WinogradConv2D(g, x.as<float>(), filter.as<float>(), out.data(), &units);
    } else if (gemm::DirectConvApplies(g, x.dtype)) {
      gemm::DirectConv2D(g, x.as<float>(), b, out.data(), &units);
    } else {
      gemm::Gemm(*gemm::Im2ColA(g, x.data, x.dtype), b, out.data(), g.out_c, false, &units);
    }
  }
  out.Finish(units);
  return Status();
}

Status Conv2DBackpropFilterWork(const ConvGeometry& g, const Tensor& x, const Tensor& dy,
                                const Tensor& dw, ComputeUnits& units) {
  if (dw.num_elements() == 0) return Status();
  FloatOut out(dw, false);
  if (UseScalarKernels()) {
    ReferenceConv2DBackpropFilter(g, x, dy, out.data(), &units);
  } else {
    const gemm::Matrix b = gemm::RowMajor(dy.data, dy.dtype, Pixels(g), g.out_c, false);
    gemm::Gemm(*gemm::TransposedIm2ColA(g, x.data, x.dtype), b, out.data(), g.out_c, false,
               &units);
  }
  out.Finish(units);
  return Status();
}

Status Conv2DBackpropInputWork(const ConvGeometry& g, const Tensor& dy, const Tensor& filter,
                               const Tensor& dx, ComputeUnits& units) {
  if (dx.num_elements() == 0) return Status();
  FloatOut out(dx, /*zeroed=*/true);
  if (UseScalarKernels()) {
    ReferenceConv2DBackpropInput(g, dy, filter, out.data(), &units);
    out.Finish(units);
    return Status();
  }
  // filter^T: [Cout, K] over the HWIO buffer ([K, Cout] row-major).
  const gemm::Matrix wt = gemm::RowMajor(filter.data, filter.dtype, PatchSize(g), g.out_c, true);
  const int64_t image_pixels = g.out_h * g.out_w;
  const int64_t image_in = g.in_h * g.in_w * g.in_c;
  const int64_t elem = dy.dtype == TF_FLOAT ? 4 : 2;
  // One image at a time per thread: its patch columns in a buffer of that
  // thread, so images run in parallel when there are several.
  auto image = [&](int64_t n, ComputeUnits* u) {
    thread_local std::vector<float> cols;
    cols.resize(static_cast<size_t>(image_pixels * PatchSize(g)));
    const gemm::MatrixA a(gemm::RowMajor(static_cast<const char*>(dy.data) +
                                             n * image_pixels * g.out_c * elem,
                                         dy.dtype, image_pixels, g.out_c, false));
    gemm::Gemm(a, wt, cols.data(), PatchSize(g), false, u);
    Col2Im(g, cols.data(), out.data() + n * image_in);
  };
  if (g.batch > 1) {
    units.ParallelFor(static_cast<size_t>(g.batch), 1, [&](size_t begin, size_t end) {
      for (size_t n = begin; n < end; ++n) image(static_cast<int64_t>(n), nullptr);
    });
  } else if (g.batch == 1) {
    image(0, &units);
  }
  out.Finish(units);
  return Status();
}

}  // namespace vacc
