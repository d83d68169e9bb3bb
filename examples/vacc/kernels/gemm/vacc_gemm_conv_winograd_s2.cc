// SPDX-License-Identifier: Apache-2.0
//
// The stride-2 Winograd convolution (vacc_gemm_conv_winograd_s2.h).
#include "kernels/gemm/vacc_gemm_conv_winograd_s2.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "kernels/gemm/vacc_gemm_buffer.h"
#include "kernels/gemm/vacc_gemm_conv_winograd.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/gemm/vacc_gemm_split.h"
#include "kernels/gemm/vacc_gemm_winograd_s2_transform.h"
#include "kernels/vacc_simd.h"

namespace vacc {
namespace gemm {
namespace {

constexpr int kXi = kStride2Positions;

// Tiles per block. A block's M is 25 x tiles x Cout values, read back
// by the output transform from L2. On the stem (Zen4, paired with oneDNN,
// medians of 4) blocks of 12 and 36 tiles ran within +-3% of 24 at one
// and two units, 48 tiles 0.92-0.93x at both; single runs put 6 tiles
// ~10% behind. Short blocks pay each product's call and U's fetch more
// often; why 48 is slower is not shown (its M, 300 KiB, still fits in L2).
constexpr int64_t kTilesPerBlock = 24;

// Fewer 2x2 output tiles than this and the direct convolution is used:
// the filter's transform and the 25 products' set-up are paid per call,
// and they were only measured against large images.
constexpr int64_t kMinTiles = 64;

thread_local PackBuffer t_filter;  // U, of the thread running the conv
thread_local PackBuffer t_block;   // each unit's V and M
thread_local std::vector<int64_t> t_origins;
thread_local std::vector<float*> t_outs;
thread_local std::vector<float> t_scratch;  // output pixels past the edge

}  // namespace

bool Stride2WinogradConvApplies(const ConvGeometry& g, TF_DataType x_dtype) {
  // AMD only: the row Winograd ran the stem faster on Intel (header).
  if (!HostCpuIsAmd() || !IsFloat7x7Stride2(g, x_dtype) || g.in_c > 4 ||
      OutputTileCount(g) < kMinTiles) {
    return false;
  }
  const RowsKernel kernel = CurrentRowsKernel();
  return kernel.pair_max_rows > 0 && g.out_c > 0 && g.out_c % (2 * kernel.nr) == 0 &&
         4 * g.in_c <= Stride2MaxPhaseChannels();
}

void Stride2WinogradConv2D(const ConvGeometry& g, const float* x, const float* filter, float* y,
                           ComputeUnits* units) {
  const RowsKernel kernel = CurrentRowsKernel();
  const int64_t width = 2 * kernel.nr;  // of a pair's panel
  const int64_t c4 = 4 * g.in_c, cout = g.out_c;
  const int64_t xi_stride = c4 * cout;
  float* u = t_filter.Get(kXi * xi_stride);
  if (u == nullptr) std::abort();  // out of host memory
  ForEach(units, static_cast<size_t>(c4), [&](size_t begin, size_t end) {
    Stride2Filter(g, filter, static_cast<int64_t>(begin), static_cast<int64_t>(end), width, u,
                  xi_stride);
  });

  const int64_t tiles = OutputTileCount(g);
  const int64_t blocks = CeilDiv(tiles, kTilesPerBlock);
  ForEachItem(units, static_cast<size_t>(blocks), [&](size_t begin, size_t end) {
    float* v = t_block.Get(kXi * kTilesPerBlock * (c4 + cout));
    if (v == nullptr) std::abort();  // out of host memory
    float* m = v + kXi * kTilesPerBlock * c4;
    t_origins.resize(static_cast<size_t>(3 * kTilesPerBlock));
    t_outs.resize(static_cast<size_t>(4 * kTilesPerBlock));
    t_scratch.resize(static_cast<size_t>(cout));
    for (int64_t block = static_cast<int64_t>(begin); block < static_cast<int64_t>(end);
         ++block) {
      const int64_t t0 = block * kTilesPerBlock, count = std::min(kTilesPerBlock, tiles - t0);
      // Where each tile reads its 10x10 input pixels and writes its 2x2
      // output pixels (scratch past the output's edge).
      // (Output row oh reads input rows from 2 oh - pad_top on.)
      for (int64_t t = 0; t < count; ++t) {
        const OutputTile tile = OutputTileAt(g, t0 + t);
        t_origins[static_cast<size_t>(3 * t)] = tile.n;
        t_origins[static_cast<size_t>(3 * t + 1)] = 2 * tile.oh - g.pad_top;
        t_origins[static_cast<size_t>(3 * t + 2)] = 2 * tile.ow - g.pad_left;
        OutputTilePixels(g, tile, y, t_scratch.data(), &t_outs[static_cast<size_t>(4 * t)]);
      }
      Stride2InputTiles(g, x, t_origins.data(), count, v, count * c4);
      for (int xi = 0; xi < kXi; ++xi) {
        for (int64_t col = 0; col < cout; col += width) {
          PairTilesInPlace(kernel, c4, v + xi * count * c4, c4, u + xi * xi_stride + col * c4,
                           m + xi * count * cout + col, cout, count, static_cast<int>(width),
                           false, c4, 0, /*fetch_c=*/false);
        }
      }
      Stride2OutputTiles(m, count * cout, count, cout, t_outs.data());
    }
  });
}

}  // namespace gemm
}  // namespace vacc
