// SPDX-License-Identifier: Apache-2.0
//
// 2-D convolution, NHWC input, HWIO filter: the geometry (output size and
// padding, as TensorFlow computes them) and the work the Conv2D kernels
// enqueue, callable directly by tests and benchmarks.
//
// Conv2D is an implicit GEMM: C[M = N*OH*OW, Cout] = A[M, K = KH*KW*Cin] *
// B[K, Cout], where row m of A is the receptive field of output pixel m (its
// patch, im2col's row) and the HWIO filter already is B. A is never
// materialized: float32 reads each pixel's patch in place
// (gemm/vacc_gemm_conv_direct.h), other dtypes gather it while packing
// (gemm/vacc_gemm_im2col.h). Large 3x3 stride-1 float32 convolutions run
// Winograd's F(2x2, 3x3) instead (gemm/vacc_gemm_conv_winograd.h).
#ifndef VACC_KERNELS_VACC_CONV_H_
#define VACC_KERNELS_VACC_CONV_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/vacc_kernel.h"

namespace vacc {

enum class Padding { kValid, kSame, kExplicit };

struct ConvGeometry {
  int64_t batch = 0, in_h = 0, in_w = 0, in_c = 0;  // input  [batch, in_h, in_w, in_c]
  int64_t k_h = 0, k_w = 0, out_c = 0;              // filter [k_h, k_w, in_c, out_c]
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;                // before; after is implied by out_*
  int64_t out_h = 0, out_w = 0;                     // output [batch, out_h, out_w, out_c]
  Shape InputShape() const { return {batch, in_h, in_w, in_c}; }
  Shape FilterShape() const { return {k_h, k_w, in_c, out_c}; }
  Shape OutputShape() const { return {batch, out_h, out_w, out_c}; }
};

// Fills g's padding and output size from its input/filter sizes, strides and
// dilations. explicit_pads: [top, bottom, left, right] for kExplicit. False,
// with *error, when the output size would be negative.
bool ComputeConvOutput(Padding padding, const std::vector<int64_t>& explicit_pads,
                       ConvGeometry* g, std::string* error);

// y = conv(x, filter); dx = the gradient for x; dw = for the filter. All
// tensors of one dtype (float, bfloat16, half), shapes as g says. Scalar
// reference bodies with VACC_SIMD=scalar, the GEMM otherwise.
Status Conv2DWork(const ConvGeometry& g, const Tensor& x, const Tensor& filter, const Tensor& y,
                  ComputeUnits& units);
Status Conv2DBackpropInputWork(const ConvGeometry& g, const Tensor& dy, const Tensor& filter,
                               const Tensor& dx, ComputeUnits& units);
Status Conv2DBackpropFilterWork(const ConvGeometry& g, const Tensor& x, const Tensor& dy,
                                const Tensor& dw, ComputeUnits& units);

// The scalar bodies: direct loops over the definition (vacc_conv_reference.cc),
// writing float32 results.
void ReferenceConv2D(const ConvGeometry& g, const Tensor& x, const Tensor& filter, float* y,
                     ComputeUnits* units);
void ReferenceConv2DBackpropInput(const ConvGeometry& g, const Tensor& dy, const Tensor& filter,
                                  float* dx, ComputeUnits* units);
void ReferenceConv2DBackpropFilter(const ConvGeometry& g, const Tensor& x, const Tensor& dy,
                                   float* dw, ComputeUnits* units);

}  // namespace vacc

#endif  // VACC_KERNELS_VACC_CONV_H_
