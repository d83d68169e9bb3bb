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
#include "kernels/gemm/vacc_gemm_split.h"
#include "kernels/vacc_conv.h"

namespace vacc {
namespace gemm {

// Both Winograd convolutions (this one and vacc_gemm_conv_winograd_s2.h)
// compute 2x2 blocks of output pixels, tiles, numbered image by image, row
// by row. A tile: its image, and its first output row and column.
struct OutputTile {
  int64_t n = 0, oh = 0, ow = 0;
};
inline int64_t OutputTileCount(const ConvGeometry& g) {
  return g.batch * CeilDiv(g.out_h, 2) * CeilDiv(g.out_w, 2);
}
inline OutputTile OutputTileAt(const ConvGeometry& g, int64_t tile) {
  const int64_t tiles_w = CeilDiv(g.out_w, 2), tiles_h = CeilDiv(g.out_h, 2);
  return {tile / (tiles_w * tiles_h), 2 * (tile / tiles_w % tiles_h), 2 * (tile % tiles_w)};
}
// Where the tile's output pixel (i, j) goes: out[2i + j], a pixel of y, or
// `scratch` (out_c floats) past the output's edge.
inline void OutputTilePixels(const ConvGeometry& g, const OutputTile& t, float* y,
                             float* scratch, float** out) {
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      const int64_t oh = t.oh + i, ow = t.ow + j;
      out[2 * i + j] = oh < g.out_h && ow < g.out_w
                           ? y + ((t.n * g.out_h + oh) * g.out_w + ow) * g.out_c
                           : scratch;
    }
  }
}

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
