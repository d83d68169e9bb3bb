// SPDX-License-Identifier: Apache-2.0
//
// F(2x2, 4x4)'s transforms on the input's stride phases
// (vacc_gemm_winograd_s2_transform.h), per SIMD target. Each 2-D transform
// is its 1-D one down the columns, then along the rows:
//   input   (d0..d4) -> (2d0 - d1 - 2d2 + d3, 2d1 + d2 - d3,
//                        3d2 - 2d1 - d3, d3 - d1, 2d1 - d2 - 2d3 + d4)
//   filter  (g0..g3) -> (g0 / 2, (g0 + g1 + g2 + g3) / 2,
//                        (g0 - g1 + g2 - g3) / 6, (g0 + 2g1 + 4g2 + 8g3) / 6, g3)
//   output  (m0..m4) -> (m0 + m1 + m2 + m3, m1 - m2 + 2m3 + m4)
// and F(4, 4)'s, along output rows only (kRowBt, kRowG, kRowAt below).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm/vacc_gemm_winograd_s2_transform.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/gemm/vacc_gemm_winograd_s2_transform.h"

HWY_BEFORE_NAMESPACE();
namespace vacc {
namespace gemm {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr int kA = 5;  // phase pixels per side of a tile

// The 1-D transforms, on vectors (or single lanes).
template <class V>
HWY_INLINE void InputColumn(const V (&d)[kA], V (&out)[kA]) {
  const V two = hn::Set(hn::DFromV<V>(), 2.0f), three = hn::Set(hn::DFromV<V>(), 3.0f);
  out[0] = hn::Add(hn::Sub(hn::Mul(two, hn::Sub(d[0], d[2])), d[1]), d[3]);
  out[1] = hn::Sub(hn::MulAdd(two, d[1], d[2]), d[3]);
  out[2] = hn::Sub(hn::MulSub(three, d[2], hn::Mul(two, d[1])), d[3]);
  out[3] = hn::Sub(d[3], d[1]);
  out[4] = hn::Add(hn::Sub(hn::Mul(two, hn::Sub(d[1], d[3])), d[2]), d[4]);
}

template <class V>
HWY_INLINE void OutputColumn(const V (&m)[kA], V (&out)[2]) {
  const V two = hn::Set(hn::DFromV<V>(), 2.0f);
  out[0] = hn::Add(hn::Add(m[0], m[1]), hn::Add(m[2], m[3]));
  out[1] = hn::Add(hn::MulAdd(two, m[3], hn::Sub(m[1], m[2])), m[4]);
}

template <class V>
HWY_INLINE void FilterColumn(const V (&w)[4], V (&out)[kA]) {
  const hn::DFromV<V> d;
  const V half = hn::Set(d, 0.5f), sixth = hn::Set(d, 1.0f / 6.0f), two = hn::Set(d, 2.0f);
  const V even = hn::Add(w[0], w[2]), odd = hn::Add(w[1], w[3]);
  out[0] = hn::Mul(half, w[0]);
  out[1] = hn::Mul(half, hn::Add(even, odd));
  out[2] = hn::Mul(sixth, hn::Sub(even, odd));
  // g0 + 2 g1 + 4 g2 + 8 g3 = g0 + 2 (g1 + 2 (g2 + 2 g3))
  out[3] = hn::Mul(sixth, hn::MulAdd(two, hn::MulAdd(two, hn::MulAdd(two, w[3], w[2]), w[1]),
                                     w[0]));
  out[4] = w[3];
}

int64_t MaxPhaseChannels() { return static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>())); }

// One tile's V: its 5x5 phase pixels as vectors of 4 Cin lanes. Phase
// pixel (i, j) is input rows r, r + 1 at columns q, q + 1 (r = row0 + 2i,
// q = col0 + 2j): 2 Cin contiguous values of each row, lanes (ph, pw, c).
void InputTiles(const ConvGeometry& g, const float* x, const int64_t* origin, int64_t tiles,
                float* HWY_RESTRICT v, int64_t matrix_stride) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t cin = g.in_c, c4 = 4 * cin, row = g.in_w * cin;
  const auto low = hn::FirstN(d, static_cast<size_t>(2 * cin));
  const auto high = hn::AndNot(low, hn::FirstN(d, static_cast<size_t>(c4)));
  const auto all = hn::FirstN(d, static_cast<size_t>(c4));
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t n = origin[3 * t], row0 = origin[3 * t + 1], col0 = origin[3 * t + 2];
    const float* image = x + n * g.in_h * row;
    V p[kA][kA];  // the phase pixels
    if (row0 >= 0 && row0 + 2 * kA <= g.in_h && col0 >= 0 && col0 + 2 * kA <= g.in_w) {
      HWY_UNROLL(5)
      for (int i = 0; i < kA; ++i) {
        HWY_UNROLL(5)
        for (int j = 0; j < kA; ++j) {
          const float* top = image + (row0 + 2 * i) * row + (col0 + 2 * j) * cin;
          // Masked lanes read nothing (on the AVX-512 targets the
          // convolution runs on): the second row's values land in lanes
          // [2 Cin, 4 Cin) from 2 Cin values before it.
          p[i][j] = hn::Or(hn::MaskedLoad(low, d, top), hn::MaskedLoad(high, d, top + row - 2 * cin));
        }
      }
    } else {  // near the border: through a buffer, zeros outside x
      HWY_ALIGN float buffer[kA * kA * HWY_MAX_BYTES / sizeof(float)];
      const size_t lanes = hn::Lanes(d);
      std::memset(buffer, 0, sizeof(buffer));
      for (int i = 0; i < kA; ++i) {
        for (int j = 0; j < kA; ++j) {
          for (int ph = 0; ph < 2; ++ph) {
            for (int pw = 0; pw < 2; ++pw) {
              const int64_t ih = row0 + 2 * i + ph, iw = col0 + 2 * j + pw;
              if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
              std::memcpy(buffer + (i * kA + j) * lanes + (2 * ph + pw) * cin,
                          image + ih * row + iw * cin, static_cast<size_t>(cin) * sizeof(float));
            }
          }
        }
      }
      HWY_UNROLL(5)
      for (int i = 0; i < kA; ++i) {
        HWY_UNROLL(5)
        for (int j = 0; j < kA; ++j) p[i][j] = hn::Load(d, buffer + (i * kA + j) * lanes);
      }
    }
    V e[kA][kA];  // Bt p, column by column: e[a][j]
    HWY_UNROLL(5)
    for (int j = 0; j < kA; ++j) {
      const V column[kA] = {p[0][j], p[1][j], p[2][j], p[3][j], p[4][j]};
      V out[kA];
      InputColumn(column, out);
      HWY_UNROLL(5)
      for (int a = 0; a < kA; ++a) e[a][j] = out[a];
    }
    HWY_UNROLL(5)
    for (int a = 0; a < kA; ++a) {
      V out[kA];
      InputColumn(e[a], out);
      HWY_UNROLL(5)
      for (int b = 0; b < kA; ++b) {
        hn::BlendedStore(out[b], all, d, v + (a * kA + b) * matrix_stride + t * c4);
      }
    }
  }
}

// One tile's 2x2 outputs for the channels [c, c + Lanes(d)).
template <class D>
HWY_INLINE void OutputTile(D d, const float* HWY_RESTRICT m, int64_t matrix_stride, int64_t c,
                           float* const* out) {
  using V = hn::Vec<D>;
  V rows[2][kA];  // At M, column by column
  HWY_UNROLL(5)
  for (int b = 0; b < kA; ++b) {
    V column[kA];
    HWY_UNROLL(5)
    for (int a = 0; a < kA; ++a) column[a] = hn::LoadU(d, m + (a * kA + b) * matrix_stride + c);
    V r[2];
    OutputColumn(column, r);
    rows[0][b] = r[0];
    rows[1][b] = r[1];
  }
  HWY_UNROLL(2)
  for (int i = 0; i < 2; ++i) {
    V y[2];
    OutputColumn(rows[i], y);
    hn::StoreU(y[0], d, out[2 * i] + c);
    hn::StoreU(y[1], d, out[2 * i + 1] + c);
  }
}

void OutputTiles(const float* m, int64_t matrix_stride, int64_t tiles, int64_t channels,
                 float* const* out) {
  const hn::ScalableTag<float> d;
  const hn::CappedTag<float, 1> d1;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t t = 0; t < tiles; ++t) {
    const float* mt = m + t * channels;
    int64_t c = 0;
    for (; c + N <= channels; c += N) OutputTile(d, mt, matrix_stride, c, out + 4 * t);
    for (; c < channels; ++c) OutputTile(d1, mt, matrix_stride, c, out + 4 * t);
  }
}

// U for output channels [co, co + Lanes(d)) of phase channel ci.
template <class D>
HWY_INLINE void FilterChannels(D d, const ConvGeometry& g, const float* filter, int64_t ci,
                               int64_t co, int64_t width, float* HWY_RESTRICT u,
                               int64_t xi_stride) {
  using V = hn::Vec<D>;
  const int64_t cin = g.in_c, ph = ci / (2 * cin), pw = ci / cin % 2, c = ci % cin;
  V w[4][4];  // w'[qh][qw]
  HWY_UNROLL(4)
  for (int qh = 0; qh < 4; ++qh) {
    HWY_UNROLL(4)
    for (int qw = 0; qw < 4; ++qw) {
      const int64_t kh = 2 * qh + ph, kw = 2 * qw + pw;
      w[qh][qw] = kh < g.k_h && kw < g.k_w
                      ? hn::LoadU(d, filter + ((kh * g.k_w + kw) * cin + c) * g.out_c + co)
                      : hn::Zero(d);
    }
  }
  V e[kA][4];  // G w', column by column
  HWY_UNROLL(4)
  for (int qw = 0; qw < 4; ++qw) {
    const V column[4] = {w[0][qw], w[1][qw], w[2][qw], w[3][qw]};
    V out[kA];
    FilterColumn(column, out);
    HWY_UNROLL(5)
    for (int a = 0; a < kA; ++a) e[a][qw] = out[a];
  }
  float* dst = u + (co / width) * 4 * cin * width + ci * width + co % width;
  HWY_UNROLL(5)
  for (int a = 0; a < kA; ++a) {
    V out[kA];
    FilterColumn(e[a], out);
    HWY_UNROLL(5)
    for (int b = 0; b < kA; ++b) hn::StoreU(out[b], d, dst + (a * kA + b) * xi_stride);
  }
}

void Filter(const ConvGeometry& g, const float* filter, int64_t ci0, int64_t ci1, int64_t width,
            float* HWY_RESTRICT u, int64_t xi_stride) {
  const hn::ScalableTag<float> d;
  const hn::CappedTag<float, 1> d1;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t ci = ci0; ci < ci1; ++ci) {
    // A vector never straddles two panels: width is a multiple of N.
    int64_t co = 0;
    for (; co + N <= g.out_c && width % N == 0; co += N) {
      FilterChannels(d, g, filter, ci, co, width, u, xi_stride);
    }
    for (; co < g.out_c; ++co) FilterChannels(d1, g, filter, ci, co, width, u, xi_stride);
  }
}

// ---- F(4, 4) along output rows (vacc_gemm_conv_winograd_s2_rows.h) ----
// A row tile is 4 output pixels of one output row, computed from 7 phase
// pixels of each column phase with points 0, 1, -1, 2, -2, -1/2 and
// infinity (of the orders tried, the smallest rounding error: 2.5e-7 of
// sum |x w| at K = 42, against 3.8e-7 with 1/2 for -1/2). Each row of the
// input transform is scaled to integers, the filter's by the inverse.
constexpr int kRowPoints = kStride2RowPoints;  // phase pixels per row tile
constexpr int kRowTilePixels = kStride2RowTilePixels;
constexpr float kRowBt[kRowPoints][kRowPoints] = {
    {4, 8, -5, -10, 1, 2, 0},  {0, -4, -12, -7, 3, 2, 0}, {0, 4, 4, -9, -1, 2, 0},
    {0, -2, -5, 0, 5, 2, 0},   {0, 2, 3, -4, -3, 2, 0},   {0, 4, 0, -5, 0, 1, 0},
    {0, 4, 8, -5, -10, 1, 2}};
constexpr float kRowG[kRowPoints][4] = {
    {1.0f / 4, 0, 0, 0},
    {-1.0f / 18, -1.0f / 18, -1.0f / 18, -1.0f / 18},
    {1.0f / 6, -1.0f / 6, 1.0f / 6, -1.0f / 6},
    {1.0f / 120, 1.0f / 60, 1.0f / 30, 1.0f / 15},
    {-1.0f / 72, 1.0f / 36, -1.0f / 18, 1.0f / 9},
    {-32.0f / 45, 16.0f / 45, -8.0f / 45, 4.0f / 45},
    {0, 0, 0, 1.0f / 2}};
constexpr float kRowAt[kRowTilePixels][kRowPoints] = {{1, 1, 1, 1, 1, 1, 0},
                                                      {0, 1, -1, 2, -2, -0.5f, 0},
                                                      {0, 1, 1, 4, 4, 0.25f, 0},
                                                      {0, 1, -1, 8, -8, -0.125f, 1}};

// out = coef * in for a constant matrix: unrolled, its zeros skipped and
// its ones added, at compile time.
template <int kOut, int kIn, class V>
HWY_INLINE void Combine(const float (&coef)[kOut][kIn], const V (&in)[kIn], V (&out)[kOut]) {
  const hn::DFromV<V> d;
  HWY_UNROLL(8)
  for (int i = 0; i < kOut; ++i) {
    V acc = hn::Zero(d);
    HWY_UNROLL(8)
    for (int j = 0; j < kIn; ++j) {
      const float c = coef[i][j];
      if (c == 0.0f) continue;
      if (c == 1.0f) {
        acc = hn::Add(acc, in[j]);
      } else if (c == -1.0f) {
        acc = hn::Sub(acc, in[j]);
      } else {
        acc = hn::MulAdd(hn::Set(d, c), in[j], acc);
      }
    }
    out[i] = acc;
  }
}

// The phase pixels are vectors of an input row's 2 Cin phase channels
// (lanes (pw, c)): input columns (2 j, 2 j + 1) from the tile's first are
// 2 Cin contiguous values, so each is one load.
using RowTag = hn::CappedTag<float, 8>;

int64_t RowMaxPhaseChannels() { return static_cast<int64_t>(hn::Lanes(RowTag())); }

void RowInputTiles(const ConvGeometry& g, const float* const* rows, int64_t row_count,
                   int64_t tiles, float* HWY_RESTRICT v, int64_t ldv, int64_t xi_stride) {
  const RowTag d;
  using V = hn::Vec<RowTag>;
  const int64_t cin = g.in_c, pc = 2 * cin, lanes = static_cast<int64_t>(hn::Lanes(d));
  // A tile reads input columns [col0, col0 + 14): its last load starts 12
  // columns on and is a whole vector long.
  constexpr int64_t kColumns = 2 * kRowPoints;
  const int64_t reach = (kColumns - 2) * cin + lanes;
  HWY_ALIGN float buffer[kColumns * 4 + 8];  // a border tile's columns, zeros outside x
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t col0 = 2 * kRowTilePixels * t - g.pad_left;
    const bool in_place = col0 >= 0 && col0 * cin + reach <= g.in_w * cin;
    float* vt = v + t * ldv;
    // Row r's 2 Cin values go to [r * 2 Cin, ...): each store is a whole
    // vector, the lanes past 2 Cin overwritten by the next row's store (the
    // caller leaves room after the last).
    for (int64_t r = 0; r < row_count; ++r, vt += pc) {
      const float* row = rows[r];
      if (row == nullptr) {  // a padding row
        HWY_UNROLL(7)
        for (int xi = 0; xi < kRowPoints; ++xi) hn::StoreU(hn::Zero(d), d, vt + xi * xi_stride);
        continue;
      }
      const float* src = row + col0 * cin;
      if (!in_place) {
        std::memset(buffer, 0, sizeof(buffer));
        for (int64_t c = std::max<int64_t>(0, -col0); c < kColumns && col0 + c < g.in_w; ++c) {
          for (int64_t i = 0; i < cin; ++i) buffer[c * cin + i] = row[(col0 + c) * cin + i];
        }
        src = buffer;
      }
      V p[kRowPoints], out[kRowPoints];
      HWY_UNROLL(7)
      for (int s = 0; s < kRowPoints; ++s) p[s] = hn::LoadU(d, src + 2 * s * cin);
      Combine(kRowBt, p, out);
      HWY_UNROLL(7)
      for (int xi = 0; xi < kRowPoints; ++xi) hn::StoreU(out[xi], d, vt + xi * xi_stride);
    }
  }
}

// Tile t's pixels (those of 4 t .. 4 t + 3 inside the row, `pixels`) for
// the channels [c, c + Lanes(d)).
template <class D>
HWY_INLINE void RowOutputTile(D d, const float* HWY_RESTRICT m, int64_t xi_stride, int64_t c,
                              float* y, int64_t channels, int64_t pixels) {
  using V = hn::Vec<D>;
  V column[kRowPoints], out[kRowTilePixels];
  HWY_UNROLL(7)
  for (int xi = 0; xi < kRowPoints; ++xi) column[xi] = hn::LoadU(d, m + xi * xi_stride + c);
  Combine(kRowAt, column, out);
  HWY_UNROLL(4)
  for (int i = 0; i < kRowTilePixels; ++i) {
    if (i < pixels) hn::StoreU(out[i], d, y + i * channels + c);
  }
}

void RowOutputTiles(const float* m, int64_t xi_stride, int64_t tiles, int64_t channels,
                    int64_t out_w, float* y_row) {
  const hn::ScalableTag<float> d;
  const hn::CappedTag<float, 1> d1;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t t = 0; t < tiles; ++t) {
    const float* mt = m + t * channels;
    const int64_t first = kRowTilePixels * t;
    const int64_t pixels = std::min<int64_t>(kRowTilePixels, out_w - first);
    float* y = y_row + first * channels;
    int64_t c = 0;
    for (; c + N <= channels; c += N) RowOutputTile(d, mt, xi_stride, c, y, channels, pixels);
    for (; c < channels; ++c) RowOutputTile(d1, mt, xi_stride, c, y, channels, pixels);
  }
}

// U for output channels [co, co + Lanes(d)) of kernel row kh, phase
// channel (pw, c).
template <class D>
HWY_INLINE void RowFilterChannels(D d, const ConvGeometry& g, const float* filter, int64_t kh,
                                  int64_t pw, int64_t c, int64_t co, int64_t nr,
                                  float* HWY_RESTRICT u, int64_t xi_stride) {
  using V = hn::Vec<D>;
  const int64_t cin = g.in_c, k = kh * 2 * cin + pw * cin + c, depth = g.k_h * 2 * cin;
  V w[4];  // the phase's taps kw = 2 q + pw (zero past the filter)
  HWY_UNROLL(4)
  for (int q = 0; q < 4; ++q) {
    const int64_t kw = 2 * q + pw;
    w[q] = kw < g.k_w ? hn::LoadU(d, filter + ((kh * g.k_w + kw) * cin + c) * g.out_c + co)
                      : hn::Zero(d);
  }
  V out[kRowPoints];
  Combine(kRowG, w, out);
  float* dst = u + (co / nr) * depth * nr + k * nr + co % nr;
  HWY_UNROLL(7)
  for (int xi = 0; xi < kRowPoints; ++xi) hn::StoreU(out[xi], d, dst + xi * xi_stride);
}

void RowFilter(const ConvGeometry& g, const float* filter, int64_t nr, float* HWY_RESTRICT u,
               int64_t xi_stride) {
  const hn::ScalableTag<float> d;
  const hn::CappedTag<float, 1> d1;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t kh = 0; kh < g.k_h; ++kh) {
    for (int64_t pw = 0; pw < 2; ++pw) {
      for (int64_t c = 0; c < g.in_c; ++c) {
        // A vector never straddles two panels: nr is a multiple of N.
        int64_t co = 0;
        for (; co + N <= g.out_c && nr % N == 0; co += N) {
          RowFilterChannels(d, g, filter, kh, pw, c, co, nr, u, xi_stride);
        }
        for (; co < g.out_c; ++co) RowFilterChannels(d1, g, filter, kh, pw, c, co, nr, u, xi_stride);
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

HWY_EXPORT(MaxPhaseChannels);
HWY_EXPORT(InputTiles);
HWY_EXPORT(OutputTiles);
HWY_EXPORT(Filter);
HWY_EXPORT(RowMaxPhaseChannels);
HWY_EXPORT(RowInputTiles);
HWY_EXPORT(RowOutputTiles);
HWY_EXPORT(RowFilter);

int64_t Stride2MaxPhaseChannels() { return HWY_DYNAMIC_DISPATCH(MaxPhaseChannels)(); }

void Stride2InputTiles(const ConvGeometry& g, const float* x, const int64_t* origin,
                       int64_t tiles, float* v, int64_t matrix_stride) {
  HWY_DYNAMIC_DISPATCH(InputTiles)(g, x, origin, tiles, v, matrix_stride);
}

void Stride2OutputTiles(const float* m, int64_t matrix_stride, int64_t tiles, int64_t channels,
                        float* const* out) {
  HWY_DYNAMIC_DISPATCH(OutputTiles)(m, matrix_stride, tiles, channels, out);
}

void Stride2Filter(const ConvGeometry& g, const float* filter, int64_t ci0, int64_t ci1,
                   int64_t width, float* u, int64_t xi_stride) {
  HWY_DYNAMIC_DISPATCH(Filter)(g, filter, ci0, ci1, width, u, xi_stride);
}

int64_t Stride2RowMaxPhaseChannels() { return HWY_DYNAMIC_DISPATCH(RowMaxPhaseChannels)(); }

void Stride2RowInputTiles(const ConvGeometry& g, const float* const* rows, int64_t row_count,
                          int64_t tiles, float* v, int64_t ldv, int64_t xi_stride) {
  HWY_DYNAMIC_DISPATCH(RowInputTiles)(g, rows, row_count, tiles, v, ldv, xi_stride);
}

void Stride2RowOutputTiles(const float* m, int64_t xi_stride, int64_t tiles, int64_t channels,
                           int64_t out_w, float* y_row) {
  HWY_DYNAMIC_DISPATCH(RowOutputTiles)(m, xi_stride, tiles, channels, out_w, y_row);
}

void Stride2RowFilter(const ConvGeometry& g, const float* filter, int64_t nr, float* u,
                      int64_t xi_stride) {
  HWY_DYNAMIC_DISPATCH(RowFilter)(g, filter, nr, u, xi_stride);
}

}  // namespace gemm
}  // namespace vacc
#endif  // HWY_ONCE
