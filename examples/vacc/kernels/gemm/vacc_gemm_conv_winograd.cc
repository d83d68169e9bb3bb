// SPDX-License-Identifier: Apache-2.0
//
// The Winograd F(2x2, 3x3) convolution (vacc_gemm_conv_winograd.h).
#include "kernels/gemm/vacc_gemm_conv_winograd.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "kernels/gemm/vacc_gemm_blocking.h"
#include "kernels/gemm/vacc_gemm_buffer.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/gemm/vacc_gemm_split.h"
#include "kernels/gemm/vacc_gemm_winograd_transform.h"

namespace vacc {
namespace gemm {
namespace {

constexpr int kXi = kWinogradPositions;

// Fewer channels than this either way and the direct convolution is used:
// with 8 in and out Winograd ran 0.95-1.00x as fast as direct, with 16
// 1.2x, 32 1.18x, 64 in and 16 out 1.8x (8 x 56 x 56 images, one unit).
constexpr int64_t kMinChannels = 16;

// Too few 2x2 tiles and the direct convolution is used: the filter
// transform (16 x Cin x Cout values written per call) and the transforms
// of V and M (per tile, Cin + Cout values) are not paid back. Measured on
// one unit (Intel Xeon, AVX-512), Winograd against direct: 16 tiles of
// 512 channels 0.77x, 32 tiles 0.94x, 49 tiles of 256 channels 1.14x, 64
// tiles of 512 1.20x, but 64 tiles of 64 channels 0.88x, 49 of 64 1.01x,
// 196 tiles of 128 1.50x. So at least kMinTiles tiles, and tiles times the
// fewer of Cin and Cout at least kMinTileChannels.
constexpr int64_t kMinTiles = 48;
constexpr int64_t kMinTileChannels = 8192;

// A unit's working set, each about half of its L2 (1 MiB on Zen4): the
// columns of U its products read (16 x Cin x columns), and a block's V and
// M (16 x tiles x (Cin + columns)).
constexpr int64_t kUFloats = 128 * 1024;
constexpr int64_t kBlockFloats = 128 * 1024;

thread_local PackBuffer t_filter;  // U, of the thread running the conv
thread_local PackBuffer t_block;   // each unit's V and M
thread_local std::vector<const float*> t_taps;
thread_local std::vector<float*> t_outs;
thread_local std::vector<float> t_zeros, t_scratch;  // padding's row, past-the-edge pixels

// How the work is cut: output channels into chunks of whole panels whose U
// stays in L2, 2x2 output tiles into blocks whose V and M do.
struct Plan {
  int64_t nr = 0, panels = 0;
  int64_t chunk_panels = 0;  // panels per column chunk
  int64_t tiles = 0;
  int64_t per_block = 0, blocks = 0;
};

Plan PlanFor(const ConvGeometry& g, const RowsKernel& kernel) {
  const int64_t nr = kernel.nr;
  Plan p;
  p.nr = nr;
  p.panels = CeilDiv(g.out_c, nr);
  const int64_t fit_panels = std::max<int64_t>(1, kUFloats / (kXi * g.in_c * nr));
  const int64_t chunks = CeilDiv(p.panels, fit_panels);
  p.chunk_panels = CeilDiv(p.panels, chunks);  // chunks as equal as whole panels allow
  p.tiles = OutputTileCount(g);
  // Whole tiles of the row kernels' tallest (6 or 8 rows), at least one.
  const int64_t mr = kernel.max_rows;
  const int64_t fit = kBlockFloats / (kXi * (g.in_c + p.chunk_panels * nr));
  p.per_block = std::max<int64_t>(mr, fit / mr * mr);
  p.blocks = CeilDiv(p.tiles, p.per_block);
  return p;
}

// Where tiles [t0, t0 + count) read their 4x4 input pixels and write their
// 2x2 output pixels (t_taps, t_outs): rows of zeros and scratch outside.
void LocateTiles(const ConvGeometry& g, const float* x, float* y, int64_t t0, int64_t count) {
  for (int64_t t = 0; t < count; ++t) {
    const OutputTile tile = OutputTileAt(g, t0 + t);
    for (int r = 0; r < 4; ++r) {
      const int64_t ih = tile.oh - g.pad_top + r;
      for (int s = 0; s < 4; ++s) {
        const int64_t iw = tile.ow - g.pad_left + s;
        const bool inside = ih >= 0 && ih < g.in_h && iw >= 0 && iw < g.in_w;
        t_taps[static_cast<size_t>(16 * t + 4 * r + s)] =
            inside ? x + ((tile.n * g.in_h + ih) * g.in_w + iw) * g.in_c : t_zeros.data();
      }
    }
    OutputTilePixels(g, tile, y, t_scratch.data(), &t_outs[static_cast<size_t>(4 * t)]);
  }
}

}  // namespace

bool WinogradConvApplies(const ConvGeometry& g, TF_DataType x_dtype) {
  return x_dtype == TF_FLOAT && g.k_h == 3 && g.k_w == 3 && g.stride_h == 1 &&
         g.stride_w == 1 && g.dilation_h == 1 && g.dilation_w == 1 && g.in_c >= kMinChannels &&
         g.out_c >= kMinChannels && OutputTileCount(g) >= kMinTiles &&
         OutputTileCount(g) * std::min(g.in_c, g.out_c) >= kMinTileChannels;
}

void WinogradConv2D(const ConvGeometry& g, const float* x, const float* filter, float* y,
                    ComputeUnits* units) {
  const RowsKernel kernel = RowsKernelFor(g.out_c);
  const Plan plan = PlanFor(g, kernel);
  const int64_t nr = plan.nr, cin = g.in_c, cout = g.out_c;
  // U: per xi, the panels of Cin x nr the row kernels read (a K block of a
  // panel is its rows).
  const int64_t xi_stride = plan.panels * cin * nr;
  float* u = t_filter.Get(kXi * xi_stride);
  if (u == nullptr) std::abort();  // out of host memory
  ForEach(units, static_cast<size_t>(cin), [&](size_t begin, size_t end) {
    WinogradFilter(filter, cin, cout, static_cast<int64_t>(begin), static_cast<int64_t>(end),
                   static_cast<int>(nr), u, xi_stride);
  });
  // K blocks of Cin as the row kernels take them (at most kRowsKC deep).
  const int64_t k_blocks = CeilDiv(cin, kRowsKC), k_len = CeilDiv(cin, k_blocks);

  ForEachItem(units, static_cast<size_t>(plan.blocks), [&](size_t begin, size_t end) {
    float* v = t_block.Get(plan.per_block * kXi * (cin + plan.chunk_panels * nr));
    if (v == nullptr) std::abort();  // out of host memory
    t_taps.resize(static_cast<size_t>(16 * plan.per_block));
    t_outs.resize(static_cast<size_t>(4 * plan.per_block));
    t_zeros.assign(static_cast<size_t>(cin), 0.0f);
    t_scratch.resize(static_cast<size_t>(cout));
    for (int64_t block = static_cast<int64_t>(begin); block < static_cast<int64_t>(end); ++block) {
      const int64_t t0 = block * plan.per_block;
      const int64_t count = std::min(plan.per_block, plan.tiles - t0);
      LocateTiles(g, x, y, t0, count);
      WinogradInputTiles(t_taps.data(), count, cin, v, count * cin);
      float* m = v + kXi * count * cin;
      for (int64_t p0 = 0; p0 < plan.panels; p0 += plan.chunk_panels) {
        const int64_t p1 = std::min(plan.panels, p0 + plan.chunk_panels);
        const int64_t c0 = p0 * nr, cols = std::min(cout, p1 * nr) - c0;  // M's rows
        for (int xi = 0; xi < kXi; ++xi) {
          for (int64_t kb = 0; kb < k_blocks; ++kb) {
            const int64_t k0 = kb * k_len, kc = std::min(k_len, cin - k0);
            for (int64_t p = p0; p < p1; ++p) {
              RowTilesInPlace(kernel, kc, v + xi * count * cin + k0, cin,
                              u + xi * xi_stride + p * cin * nr + k0 * nr,
                              m + xi * count * cols + (p * nr - c0), cols, 0, count,
                              static_cast<int>(std::min(nr, cout - p * nr)), kb > 0);
            }
          }
        }
        WinogradOutputTiles(m, count * cols, count, cols, t_outs.data(), c0);
      }
    }
  });
}

}  // namespace gemm
}  // namespace vacc
