// SPDX-License-Identifier: Apache-2.0
//
// Conv2D forward for 3x3 filters at stride 1 by Winograd's minimal
// filtering, F(2x2, 3x3): each 2x2 block of output pixels (a tile) is
// computed from the 4x4 input pixels it reads with 16 multiplications per
// (input, output) channel pair instead of 36, so the GEMM does 4/9 of the
// direct convolution's work (vacc_gemm_winograd_transform.h has the
// transforms):
//
//   U[xi] = the filter transformed     [Cin, Cout]   once per call
//   for each block of tiles, in parallel
//     V[xi] = the block's input tiles transformed        [tiles, Cin]
//     for each chunk of output channels
//       M[xi] = V[xi] * U[xi] for each of the 16 xi      (the row kernels)
//       y     = M transformed back, 2x2 pixels per tile
//
// A block's V and M, and a chunk's columns of U, stay in the unit's L2
// (chunks matter at 256+ channels, where all of U is 4+ MiB).
// Numerically the transforms only add and halve (coefficients 0, +-1,
// +-1/2). V and U sum several values before the products, which could make
// the rounding error a few times a direct sum's; measured on random values
// in [-1, 1] (64 channels in, 48 out), the worst |y - exact| / sum |x * w|
// was 1e-7 on every SIMD target, against 2e-7 for the scalar reference's
// sequential sums, and the tests hold it under float32's 1e-5
// (tests/vacc/test_vacc_conv.cc). TensorFlow's GPU path makes the same
// trade through cuDNN's Winograd algorithms.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_CONV_WINOGRAD_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_CONV_WINOGRAD_H_

#include "kernels/gemm/vacc_gemm.h"
#include "kernels/vacc_conv.h"

namespace vacc {
namespace gemm {

// True when WinogradConv2D computes this convolution: float32, a 3x3
// filter, stride 1, no dilation, and enough channels both ways that the
// transforms (whose cost grows with Cin + Cout) are paid back by the
// products saved (which grow with Cin * Cout).
bool WinogradConvApplies(const ConvGeometry& g, TF_DataType x_dtype);

// y [N*OH*OW, out_c] = conv(x, filter), filter HWIO float32. Split across
// `units`.
void WinogradConv2D(const ConvGeometry& g, const float* x, const float* filter, float* y,
                    ComputeUnits* units);

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_CONV_WINOGRAD_H_
