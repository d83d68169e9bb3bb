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
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm/vacc_gemm_winograd_s2_transform.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

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

}  // namespace gemm
}  // namespace vacc
#endif  // HWY_ONCE
