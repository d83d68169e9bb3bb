// SPDX-License-Identifier: Apache-2.0
//
// The stride-2 Winograd along output rows (vacc_gemm_conv_winograd_s2_rows.h).
#include "kernels/gemm/vacc_gemm_conv_winograd_s2_rows.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "kernels/gemm/vacc_gemm_buffer.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/gemm/vacc_gemm_split.h"
#include "kernels/gemm/vacc_gemm_winograd_s2_transform.h"

namespace vacc {
namespace gemm {
namespace {

constexpr int kXi = kStride2RowPoints;  // the products per output row
constexpr int64_t kTilePixels = kStride2RowTilePixels;

// Output rows per band: a band's 2 x 7 + 5 = 21 input rows are transformed
// once (V: 7 x 28 tiles x 21 rows x 6 values, 99 KiB at the stem, in L2)
// for its 8 output rows, instead of 7 per output row. Bands of 4 and 16
// ran within noise of 8 (stem, Zen3, one unit, paired with oneDNN:
// 1.16, 1.14 and 1.14).
constexpr int64_t kBandRows = 8;

// Output rows of fewer tiles than this go to the direct convolution: the
// filter's transform and each row's 7 products are set up per call and
// per row, and were only measured on the 112-pixel rows of the stem.
constexpr int64_t kMinRowTiles = 8;

thread_local PackBuffer t_filter;  // U, of the thread running the conv
thread_local PackBuffer t_band;    // each unit's V of a band and M of one output row
thread_local std::vector<const float*> t_rows;

}  // namespace

std::vector<int> Stride2RowTileHeights(int64_t tiles, int most) {
  const int64_t count = CeilDiv(tiles, static_cast<int64_t>(most));
  std::vector<int> heights;
  for (int64_t i = 0; i < count; ++i) {
    heights.push_back(static_cast<int>(tiles / count + (i < tiles % count ? 1 : 0)));
  }
  return heights;
}

bool Stride2RowWinogradConvApplies(const ConvGeometry& g, TF_DataType x_dtype) {
  if (!IsFloat7x7Stride2(g, x_dtype) || g.out_c < 1 ||
      CeilDiv(g.out_w, kTilePixels) < kMinRowTiles) {
    return false;
  }
  return 2 * g.in_c <= Stride2RowMaxPhaseChannels();
}

void Stride2RowWinogradConv2D(const ConvGeometry& g, const float* x, const float* filter,
                              float* y, ComputeUnits* units) {
  const RowsKernel kernel = CurrentRowsKernel();
  const int64_t nr = kernel.nr, cin = g.in_c, cout = g.out_c;
  const int64_t depth = g.k_h * 2 * cin;                      // K of the products
  const int64_t u_stride = CeilDiv(cout, nr) * nr * depth;
  // U is small (7 x 42 x 64 floats at the stem: ~8 us to make), so the
  // calling unit makes it before the bands.
  float* u = t_filter.Get(kXi * u_stride);
  if (u == nullptr) std::abort();  // out of host memory
  // Stride2RowFilter writes every column up to Cout: only a last panel
  // partly past it needs zeros.
  if (cout % nr != 0) std::fill(u, u + kXi * u_stride, 0.0f);
  Stride2RowFilter(g, filter, nr, u, u_stride);

  const int64_t tiles = CeilDiv(g.out_w, kTilePixels);
  const std::vector<int> heights = Stride2RowTileHeights(tiles, kernel.max_rows);
  // Bands of output rows: a band's input rows are transformed once, then
  // each of its output rows multiplies 7 of them (consecutive in V).
  const int64_t band = kBandRows, bands_per_image = CeilDiv(g.out_h, band);
  const int64_t most_rows = 2 * (band - 1) + g.k_h, pc = 2 * cin;
  const int64_t ldv = most_rows * pc + Stride2RowMaxPhaseChannels();
  const int64_t v_stride = tiles * ldv, m_stride = tiles * cout;
  ForEachItem(units, static_cast<size_t>(g.batch * bands_per_image), [&](size_t begin, size_t end) {
    float* v = t_band.Get(kXi * (v_stride + m_stride));
    if (v == nullptr) std::abort();  // out of host memory
    float* m = v + kXi * v_stride;
    t_rows.resize(static_cast<size_t>(most_rows));
    for (int64_t item = static_cast<int64_t>(begin); item < static_cast<int64_t>(end); ++item) {
      const int64_t n = item / bands_per_image, oh0 = item % bands_per_image * band;
      const int64_t oh1 = std::min(g.out_h, oh0 + band);
      const int64_t ih0 = oh0 * g.stride_h - g.pad_top, rows = 2 * (oh1 - oh0 - 1) + g.k_h;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t ih = ih0 + r;
        t_rows[static_cast<size_t>(r)] =
            ih < 0 || ih >= g.in_h ? nullptr : x + (n * g.in_h + ih) * g.in_w * cin;
      }
      Stride2RowInputTiles(g, t_rows.data(), rows, tiles, v, ldv, v_stride);
      for (int64_t oh = oh0; oh < oh1; ++oh) {
        const float* v_row = v + 2 * (oh - oh0) * pc;  // its kernel rows' first
        for (int xi = 0; xi < kXi; ++xi) {
          for (int64_t col = 0; col < cout; col += nr) {
            const int n_eff = static_cast<int>(std::min(nr, cout - col));
            const float* b_panel = u + xi * u_stride + col * depth;
            int64_t t = 0;
            for (const int h : heights) {
              kernel.run[h](depth, v_row + xi * v_stride + t * ldv, ldv, depth, 0, b_panel,
                            m + xi * m_stride + t * cout + col, cout, n_eff, false);
              t += h;
            }
          }
        }
        Stride2RowOutputTiles(m, m_stride, tiles, cout, g.out_w,
                              y + ((n * g.out_h + oh) * g.out_w) * cout);
      }
    }
  });
}

}  // namespace gemm
}  // namespace vacc
