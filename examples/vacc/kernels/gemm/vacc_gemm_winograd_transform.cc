// SPDX-License-Identifier: Apache-2.0
//
// F(2x2, 3x3)'s transforms (vacc_gemm_winograd_transform.h), on vectors of
// channels, per SIMD target: the input's and output's over a tile's
// channels, the filter's over output channels (the HWIO filter's
// contiguous axis).
//
// Both 2-D transforms are a 1-D one applied down the columns, then along
// the rows (Bt d B = (Bt (Bt d)t)t):
//   input   (a0, a1, a2, a3) -> (a0 - a2, a1 + a2, a2 - a1, a1 - a3)
//   filter  (g0, g1, g2)     -> (g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2)
//   output  (m0, m1, m2, m3) -> (m0 + m1 + m2, m1 - m2 - m3)
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm/vacc_gemm_winograd_transform.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <cstdint>

#include "kernels/gemm/vacc_gemm_winograd_transform.h"

HWY_BEFORE_NAMESPACE();
namespace vacc {
namespace gemm {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One tile's V for the channels [c, c + Lanes(d)).
template <class D>
HWY_INLINE void InputTile(D d, const float* const* taps, int64_t c, float* HWY_RESTRICT v,
                          int64_t matrix_stride) {
  using V = hn::Vec<D>;
  V e[4][4];  // Bt d: e[r][s]
  for (int s = 0; s < 4; ++s) {
    const V d0 = hn::LoadU(d, taps[s] + c), d1 = hn::LoadU(d, taps[4 + s] + c);
    const V d2 = hn::LoadU(d, taps[8 + s] + c), d3 = hn::LoadU(d, taps[12 + s] + c);
    e[0][s] = hn::Sub(d0, d2);
    e[1][s] = hn::Add(d1, d2);
    e[2][s] = hn::Sub(d2, d1);
    e[3][s] = hn::Sub(d1, d3);
  }
  for (int r = 0; r < 4; ++r) {
    float* row = v + 4 * r * matrix_stride + c;
    hn::StoreU(hn::Sub(e[r][0], e[r][2]), d, row);
    hn::StoreU(hn::Add(e[r][1], e[r][2]), d, row + matrix_stride);
    hn::StoreU(hn::Sub(e[r][2], e[r][1]), d, row + 2 * matrix_stride);
    hn::StoreU(hn::Sub(e[r][1], e[r][3]), d, row + 3 * matrix_stride);
  }
}

// One tile's 2x2 outputs for the channels [c, c + Lanes(d)).
template <class D>
HWY_INLINE void OutputTile(D d, const float* HWY_RESTRICT m, int64_t matrix_stride, int64_t c,
                           float* const* out, int64_t out_offset) {
  using V = hn::Vec<D>;
  V s0[4], s1[4];  // At M: rows 0 and 1
  for (int j = 0; j < 4; ++j) {
    const V m0 = hn::LoadU(d, m + j * matrix_stride + c);
    const V m1 = hn::LoadU(d, m + (4 + j) * matrix_stride + c);
    const V m2 = hn::LoadU(d, m + (8 + j) * matrix_stride + c);
    const V m3 = hn::LoadU(d, m + (12 + j) * matrix_stride + c);
    s0[j] = hn::Add(hn::Add(m0, m1), m2);
    s1[j] = hn::Sub(hn::Sub(m1, m2), m3);
  }
  hn::StoreU(hn::Add(hn::Add(s0[0], s0[1]), s0[2]), d, out[0] + out_offset + c);
  hn::StoreU(hn::Sub(hn::Sub(s0[1], s0[2]), s0[3]), d, out[1] + out_offset + c);
  hn::StoreU(hn::Add(hn::Add(s1[0], s1[1]), s1[2]), d, out[2] + out_offset + c);
  hn::StoreU(hn::Sub(hn::Sub(s1[1], s1[2]), s1[3]), d, out[3] + out_offset + c);
}

void WinogradInputTiles(const float* const* taps, int64_t tiles, int64_t channels,
                        float* HWY_RESTRICT v, int64_t matrix_stride) {
  const hn::ScalableTag<float> d;
  const hn::CappedTag<float, 1> d1;  // the channels past the last full vector
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t t = 0; t < tiles; ++t) {
    const float* const* tile = taps + 16 * t;
    float* vt = v + t * channels;
    int64_t c = 0;
    for (; c + lanes <= channels; c += lanes) InputTile(d, tile, c, vt, matrix_stride);
    for (; c < channels; ++c) InputTile(d1, tile, c, vt, matrix_stride);
  }
}

void WinogradOutputTiles(const float* HWY_RESTRICT m, int64_t matrix_stride, int64_t tiles,
                         int64_t channels, float* const* out, int64_t out_offset) {
  const hn::ScalableTag<float> d;
  const hn::CappedTag<float, 1> d1;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t t = 0; t < tiles; ++t) {
    const float* mt = m + t * channels;
    float* const* tile = out + 4 * t;
    int64_t c = 0;
    for (; c + lanes <= channels; c += lanes) OutputTile(d, mt, matrix_stride, c, tile, out_offset);
    for (; c < channels; ++c) OutputTile(d1, mt, matrix_stride, c, tile, out_offset);
  }
}

// U = G g Gt for output channels [co, co + Lanes(d)) of input channel ci,
// stored at dst + xi * xi_stride.
template <class D>
HWY_INLINE void FilterColumns(D d, const float* HWY_RESTRICT filter, int64_t tap_stride,
                              float* HWY_RESTRICT dst, int64_t xi_stride) {
  using V = hn::Vec<D>;
  const V half = hn::Set(d, 0.5f);
  V gg[4][3];  // G g: rows of the transformed kernel, per kernel column
  for (int kw = 0; kw < 3; ++kw) {
    const V g0 = hn::LoadU(d, filter + kw * tap_stride);
    const V g1 = hn::LoadU(d, filter + (3 + kw) * tap_stride);
    const V g2 = hn::LoadU(d, filter + (6 + kw) * tap_stride);
    gg[0][kw] = g0;
    gg[1][kw] = hn::Mul(half, hn::Add(hn::Add(g0, g1), g2));
    gg[2][kw] = hn::Mul(half, hn::Add(hn::Sub(g0, g1), g2));
    gg[3][kw] = g2;
  }
  for (int i = 0; i < 4; ++i) {
    float* row = dst + 4 * i * xi_stride;
    hn::StoreU(gg[i][0], d, row);
    hn::StoreU(hn::Mul(half, hn::Add(hn::Add(gg[i][0], gg[i][1]), gg[i][2])), d, row + xi_stride);
    hn::StoreU(hn::Mul(half, hn::Add(hn::Sub(gg[i][0], gg[i][1]), gg[i][2])), d,
               row + 2 * xi_stride);
    hn::StoreU(gg[i][2], d, row + 3 * xi_stride);
  }
}

void WinogradFilter(const float* HWY_RESTRICT filter, int64_t in_c, int64_t out_c, int64_t ci0,
                    int64_t ci1, int nr, float* HWY_RESTRICT u, int64_t xi_stride) {
  const hn::ScalableTag<float> d;
  const hn::CappedTag<float, 1> d1;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t tap_stride = in_c * out_c;  // from (kh, kw) to the next tap
  const int64_t panels = (out_c + nr - 1) / nr;
  for (int64_t ci = ci0; ci < ci1; ++ci) {
    for (int64_t p = 0; p < panels; ++p) {
      const int64_t co0 = p * nr, n = std::min<int64_t>(nr, out_c - co0);
      const float* src = filter + ci * out_c + co0;
      float* dst = u + p * in_c * nr + ci * nr;
      int64_t j = 0;
      for (; j + lanes <= n; j += lanes) FilterColumns(d, src + j, tap_stride, dst + j, xi_stride);
      for (; j < n; ++j) FilterColumns(d1, src + j, tap_stride, dst + j, xi_stride);
      for (; j < nr; ++j) {  // the panel's columns past out_c
        for (int xi = 0; xi < kWinogradPositions; ++xi) dst[xi * xi_stride + j] = 0.0f;
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace gemm
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vacc {
namespace gemm {

HWY_EXPORT(WinogradInputTiles);
HWY_EXPORT(WinogradOutputTiles);

void WinogradInputTiles(const float* const* taps, int64_t tiles, int64_t channels, float* v,
                        int64_t matrix_stride) {
  HWY_DYNAMIC_DISPATCH(WinogradInputTiles)(taps, tiles, channels, v, matrix_stride);
}

void WinogradOutputTiles(const float* m, int64_t matrix_stride, int64_t tiles,
                         int64_t channels, float* const* out, int64_t out_offset) {
  HWY_DYNAMIC_DISPATCH(WinogradOutputTiles)(m, matrix_stride, tiles, channels, out, out_offset);
}

HWY_EXPORT(WinogradFilter);

void WinogradFilter(const float* filter, int64_t in_c, int64_t out_c, int64_t ci0, int64_t ci1,
                    int nr, float* u, int64_t xi_stride) {
  HWY_DYNAMIC_DISPATCH(WinogradFilter)(filter, in_c, out_c, ci0, ci1, nr, u, xi_stride);
}

}  // namespace gemm
}  // namespace vacc
#endif  // HWY_ONCE
