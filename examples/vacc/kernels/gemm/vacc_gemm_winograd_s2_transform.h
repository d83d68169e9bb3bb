// SPDX-License-Identifier: Apache-2.0
//
// The transforms of the stride-2 Winograd convolution
// (vacc_gemm_conv_winograd_s2.h): Winograd's F(2x2, 4x4) on the input's
// four stride phases, vectors of channels per SIMD target
// (vacc_gemm_winograd_s2_transform.cc).
//
// A 7x7 stride-2 filter w is a 4x4 stride-1 filter on the image's phases:
// tap (kh, kw) = (2 qh + ph, 2 qw + pw) reads phase (ph, pw) at (qh, qw),
// so w'[qh][qw][(ph, pw, c)] = w[2 qh + ph][2 qw + pw][c] (zero where 2q+p
// is 7) over 4 Cin "phase channels". A 2x2 output tile reads 5x5 phase
// pixels, i.e. 10x10 input pixels. With points 0, 1, -1, 2 and infinity:
//   V = Bt d B   Bt = [2 -1 -2 1 0; 0 2 1 -1 0; 0 -2 3 -1 0; 0 -1 0 1 0;
//                      0 2 -1 -2 1]
//   U = G w' Gt  G  = [1/2 0 0 0; 1/2 1/2 1/2 1/2; 1/6 -1/6 1/6 -1/6;
//                      1/6 1/3 2/3 4/3; 0 0 0 1]
//   y = At (U . V) A   At = [1 1 1 1 0; 0 1 -1 2 1]
// (U . V elementwise, summed over phase channels: 25 products of [tiles,
// 4 Cin] x [4 Cin, Cout], one per position xi = 5 a + b.)
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_WINOGRAD_S2_TRANSFORM_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_WINOGRAD_S2_TRANSFORM_H_

#include <cstdint>

#include "kernels/vacc_conv.h"

namespace vacc {
namespace gemm {

// Positions of a 5x5 tile of phase pixels: the 25 products.
constexpr int kStride2Positions = 25;

// The shape both stride-2 Winograds take: float32, a 7x7 filter at stride
// 2 without dilation, at least one input channel. Each adds its own
// limits (channels per vector, kernels, tiles).
inline bool IsFloat7x7Stride2(const ConvGeometry& g, TF_DataType x_dtype) {
  return x_dtype == TF_FLOAT && g.k_h == 7 && g.k_w == 7 && g.stride_h == 2 && g.stride_w == 2 &&
         g.dilation_h == 1 && g.dilation_w == 1 && g.in_c >= 1;
}

// The most phase channels (4 Cin) the input transform takes: one vector of
// the target dispatch selects now (16 on AVX-512).
int64_t Stride2MaxPhaseChannels();

// V for `tiles` tiles: tile t's 10x10 input pixels start at row
// origin[3t+1], column origin[3t+2] of image origin[3t] (zeros outside
// x); V[xi] of tile t, phase channel c goes to
// v[xi * matrix_stride + t * 4 Cin + c].
void Stride2InputTiles(const ConvGeometry& g, const float* x, const int64_t* origin,
                       int64_t tiles, float* v, int64_t matrix_stride);

// y for `tiles` tiles from M = U . V summed over phase channels: M[xi] of
// tile t, channel c at m[xi * matrix_stride + t * channels + c]; output
// pixel (i, j) of tile t goes to out[4t + 2i + j][0..channels).
void Stride2OutputTiles(const float* m, int64_t matrix_stride, int64_t tiles, int64_t channels,
                        float* const* out);

// U for the HWIO filter of g (k_h, k_w <= 8): U[xi] of (phase channel ci,
// output channel co) to u[xi * xi_stride + (co / width) * 4 Cin * width +
// ci * width + co % width], panels `width` columns wide as the pair kernels
// read them (out_c a multiple of width). Phase channels [ci0, ci1) only, so
// units can share the work.
void Stride2Filter(const ConvGeometry& g, const float* filter, int64_t ci0, int64_t ci1,
                   int64_t width, float* u, int64_t xi_stride);

// F(4, 4) along the width only (vacc_gemm_conv_winograd_s2_rows.h), with
// points 0, 1, -1, 2, -2, -1/2 and infinity (the matrices are in the .cc):
// a row tile is 4 output pixels of one output row, its phase pixels 7
// input column pairs of each input row it reads; a tile's V is its input
// rows' 2 Cin phase channels in turn, so the 7 kernel rows of an output
// row are 7 x 2 Cin consecutive values (the products' K).

// F(4, 4)'s points (the products per output row) and a row tile's pixels.
constexpr int kStride2RowPoints = 7;
constexpr int kStride2RowTilePixels = 4;

// The most phase channels (2 Cin) an input row's transform takes: one
// vector of at most 8 lanes of the target dispatch selects now.
int64_t Stride2RowMaxPhaseChannels();

// V of `row_count` input rows rows[0..row_count) (NULL: a padding row,
// zeros) for the `tiles` tiles of an output row; tile t reads input
// columns from 8 t - pad_left (zeros outside x). V[xi] of tile t, row r,
// phase channel (pw, c) at v[xi * xi_stride + t * ldv + r * 2 Cin + pw *
// Cin + c]; ldv must leave room for a vector past the last row
// (row_count * 2 Cin + Stride2RowMaxPhaseChannels()).
void Stride2RowInputTiles(const ConvGeometry& g, const float* const* rows, int64_t row_count,
                          int64_t tiles, float* v, int64_t ldv, int64_t xi_stride);

// Output pixels 4 t .. 4 t + 3 (those below out_w) of each tile t to
// y_row[pixel * channels + c], from M[xi] of tile t, channel c at
// m[xi * xi_stride + t * channels + c].
void Stride2RowOutputTiles(const float* m, int64_t xi_stride, int64_t tiles, int64_t channels,
                           int64_t out_w, float* y_row);

// U for the HWIO filter of g (k_w <= 8), packed as the row kernels read B:
// U[xi] of (k, output channel co) to u[xi * xi_stride + (co / nr) * K * nr
// + k * nr + co % nr]. Columns past out_c in the last panel are left as
// they are (the caller zeroes them).
void Stride2RowFilter(const ConvGeometry& g, const float* filter, int64_t nr, float* u,
                      int64_t xi_stride);

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_WINOGRAD_S2_TRANSFORM_H_
