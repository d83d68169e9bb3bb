// SPDX-License-Identifier: Apache-2.0
//
// Conv2D forward for 7x7 filters at stride 2 on few input channels (the
// RGB stem) by Winograd's F(4, 4) along each output row, on every target
// but AVX-512 on AMD, which runs the 2-D F(2x2, 4x4) of
// vacc_gemm_conv_winograd_s2.h (measured there on Zen4; this one was
// not). Along the width a stride-2 7-tap filter is two 4-tap stride-1
// filters, one per column phase (tap 7 is zero), and F(4, 4) computes 4
// output pixels from 7 phase pixels of each phase with 7 multiplications
// instead of 16; down the height the 7 kernel rows stay direct, as part
// of K:
//
//   U[xi] = the filter transformed along kw     [7 x 2 Cin, Cout]  per call
//   for each band of 8 output rows, in parallel
//     V[xi] = its 21 input rows transformed     [tiles, 21 x 2 Cin]
//     for each output row of the band
//       M[xi] = V[xi] * U[xi] for each of the 7 xi, A = the row's 7 input
//               rows of V (7 x 2 Cin consecutive values)     (row kernels)
//       y     = M transformed back, 4 pixels per tile
//
// 7 products of K = 14 Cin per 4 pixels: 24.5 Cin multiplications per
// output and output channel against the direct path's 49 Cin (0.5x).
// Unlike the 2-D form, whose products have K = 4 Cin (12 at RGB: ~50
// GFLOP/s with AVX2's 6 x 16 tiles, vacc_gemm_conv_winograd_s2.h), these
// are long enough (K = 42) for the row kernel to run near its peak. On
// the stem (Zen3, one unit, paired with oneDNN's jit:avx2 direct
// convolution): 1.12-1.18x of oneDNN at one unit and 1.08-1.12x at two,
// where the direct path ran 0.77-0.85x. A profile at one unit: the
// products 74%, the output transform 12%, the input transform 6%.
// F(2, 4) (tiles of 2 pixels, 0.71x the multiplications) ran 0.87-0.89x:
// its transforms cost as much as it saved.
//
// Rounding: 7 points (0, +-1, +-2, -1/2, infinity) scale the input by up
// to 12 and sum up to 6 terms, along one dimension only: on random values
// the worst |y - exact| / sum |x w| was 5.9e-7 on AVX2 (direct: 2.1e-7),
// under float32's 1e-5 (tests/vacc/test_vacc_conv.cc).
//
// On AVX-512 (an Intel Xeon, 8 x 32 row tiles, paired with oneDNN's
// avx512 direct convolution, medians of 5): the stem ran 1.125x of oneDNN
// at one unit and 1.126x at two, where the 2-D F(2x2, 4x4) ran 0.93x and
// 0.88x and the direct path 0.98x and 0.96x.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_CONV_WINOGRAD_S2_ROWS_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_CONV_WINOGRAD_S2_ROWS_H_

#include <cstdint>
#include <vector>

#include "kernels/gemm/vacc_gemm.h"
#include "kernels/vacc_conv.h"

namespace vacc {
namespace gemm {

// True when Stride2RowWinogradConv2D computes this convolution: float32,
// a 7x7 filter at stride 2 without dilation, 2 Cin phase channels in one
// vector of at most 8 lanes (Cin <= 4 on AVX2 and AVX-512), and output
// rows of at least 8 tiles (29 pixels). Conv2D asks the 2-D stride-2
// Winograd first (Stride2WinogradConvApplies).
bool Stride2RowWinogradConvApplies(const ConvGeometry& g, TF_DataType x_dtype);

// The row kernels' tile heights for an output row of `tiles` tiles: as
// few tiles as tiles of `most` rows need, as even as they can be (with 6:
// 28 tiles are 6, 6, 6, 5, 5, not 6, 6, 6, 6, 4; with 8, 7, 7, 7, 7). On
// AVX2 a 5-row tile runs within ~2% of a 6-row one per row and a 4-row
// one ~8% slower (Zen3, hot in L1, medians of 40); on AVX-512 7s ran the
// stem like 8, 8, 8, 4 (Intel Xeon, paired with oneDNN, medians of 17:
// 1.132 against 1.126 at one unit, 1.149 both at two), 6s and 5s slower
// (1.097 and 1.136, medians of 7).
std::vector<int> Stride2RowTileHeights(int64_t tiles, int most);

// y [N*OH*OW, out_c] = conv(x, filter), filter HWIO float32. Split across
// `units` by bands of output rows.
void Stride2RowWinogradConv2D(const ConvGeometry& g, const float* x, const float* filter,
                              float* y, ComputeUnits* units);

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_CONV_WINOGRAD_S2_ROWS_H_
