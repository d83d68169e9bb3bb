// SPDX-License-Identifier: Apache-2.0
//
// The transforms of Winograd's F(2x2, 3x3) (vacc_gemm_conv_winograd.h), for
// many tiles and all their channels at once. In NHWC a tile's channels are
// contiguous, so each transform is the same few adds on vectors of channels
// (vacc_gemm_winograd_transform.cc, on the SIMD target dispatch selects).
//
// With a 4x4 input tile d, a 3x3 filter g and the 2x2 output tile y:
//   V = Bt d B     Bt = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//   U = G g Gt     G  = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
//   y = At (U . V) A   At = [1 1 1 0; 0 1 -1 -1]
// where U . V is elementwise; summed over input channels it is 16 products
// of [tiles, Cin] x [Cin, Cout] matrices, one per position xi = 4 i + j of
// the 4x4 tile. Every coefficient is 0, +-1 or +-1/2, so the transforms add
// no rounding beyond their few additions.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_WINOGRAD_TRANSFORM_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_WINOGRAD_TRANSFORM_H_

#include <cstdint>

namespace vacc {
namespace gemm {

// Positions of a 4x4 tile: the 16 matrices of one F(2x2, 3x3) convolution.
constexpr int kWinogradPositions = 16;

// V for `tiles` input tiles: tile t's value (r, s) of channel c is
// taps[16 t + 4 r + s][c] (a pixel of x, or a row of zeros for padding);
// V[xi] of tile t, channel c goes to v[xi * matrix_stride + t * channels + c].
void WinogradInputTiles(const float* const* taps, int64_t tiles, int64_t channels, float* v,
                        int64_t matrix_stride);

// y for `tiles` output tiles from M = U . V summed over Cin: M[xi] of tile t,
// channel c at m[xi * matrix_stride + t * channels + c]; channel c of output
// pixel (i, j) of tile t goes to out[4 t + 2 i + j][out_offset + c] (a pixel
// of y, or scratch for a pixel past the output's edge).
void WinogradOutputTiles(const float* m, int64_t matrix_stride, int64_t tiles,
                         int64_t channels, float* const* out, int64_t out_offset);

// U for a 3x3 HWIO filter: U[xi] of (ci, co) to
// u[xi * xi_stride + (co / nr) * in_c * nr + ci * nr + co % nr]: the 16
// matrices packed as the row kernels read B (panels of nr columns, zeros
// past out_c). Input channels [ci0, ci1) only, so units can share the work.
void WinogradFilter(const float* filter, int64_t in_c, int64_t out_c, int64_t ci0, int64_t ci1,
                    int nr, float* u, int64_t xi_stride);

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_WINOGRAD_TRANSFORM_H_
