// SPDX-License-Identifier: Apache-2.0
//
// Conv2D forward for 7x7 filters at stride 2 on few input channels (the
// RGB stem of ResNet-style models) by Winograd's minimal filtering on the
// input's stride phases: the filter is a 4x4 stride-1 filter over 4 Cin
// phase channels (vacc_gemm_winograd_s2_transform.h), and F(2x2, 4x4)
// computes each 2x2 block of outputs (a tile) from its 5x5 phase pixels
// with 25 multiplications per (phase channel, output channel) pair: 25 x
// 4 Cin / 4 = 75 per output and input-output channel pair at Cin = 3,
// against the direct convolution's 147.
//
//   U[xi] = the filter transformed   [4 Cin, Cout]  once per call
//   for each block of tiles, in parallel
//     V[xi] = the block's tiles transformed         [tiles, 4 Cin]
//     M[xi] = V[xi] * U[xi] for each of the 25 xi   (pair row kernels)
//     y     = M transformed back, 2x2 pixels per tile
//
// The products are short (K = 4 Cin = 12 at RGB), so they run at ~75% of
// the FMA peak, against ~97% for the direct convolution's K = 147; with
// half the multiplications the 1x224x224x3 -> 64 stem still ran 1.08x of
// oneDNN at one unit and 1.06x at two, where the direct path ran 0.97-0.98
// (Zen4, paired rounds, medians of 8). On an Intel Xeon it fell behind
// both the direct path and the row Winograd
// (vacc_gemm_conv_winograd_s2_rows.h has the figures), so this form
// takes the stem on AMD only.
//
// Numerically the transforms scale by up to 3 (input) and 4/3 (filter)
// before the products and add up to 5 terms after, where a direct sum
// has none: on random values the worst |y - exact| / sum |x * w| was 4e-7
// against the direct path's 2.1e-7, and the tests hold it under float32's
// 1e-5 (tests/vacc/test_vacc_conv.cc), as for the 3x3 Winograd.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_CONV_WINOGRAD_S2_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_CONV_WINOGRAD_S2_H_

#include "kernels/gemm/vacc_gemm.h"
#include "kernels/vacc_conv.h"

namespace vacc {
namespace gemm {

// True when Stride2WinogradConv2D computes this convolution: float32, a
// 7x7 filter at stride 2 without dilation, 1-4 input channels (4 Cin
// phase channels fit one vector), output channels in whole pairs of
// panels on a target with the pair kernels (AVX-512: multiples of 64),
// an AMD CPU (HostCpuIsAmd), and enough 2x2 output tiles.
bool Stride2WinogradConvApplies(const ConvGeometry& g, TF_DataType x_dtype);

// y [N*OH*OW, out_c] = conv(x, filter), filter HWIO float32. Split across
// `units`.
void Stride2WinogradConv2D(const ConvGeometry& g, const float* x, const float* filter, float* y,
                           ComputeUnits* units);

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_CONV_WINOGRAD_S2_H_
