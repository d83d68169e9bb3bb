// SPDX-License-Identifier: Apache-2.0
//
// The narrow-B GEMM (vacc_gemm_narrow_b.h): one parallel step over chunks
// of A's rows, dealt to the units as shares (Shares).
//
//   each unit: pack all of B for itself (it is narrow), then for each of
//   its chunks of rows (and then what another has not started)
//     for pc in K step KC
//       A[rows, pc:pc+KC]: in place if float32 with contiguous rows, else
//                          packed into this unit's buffer
//       for each B panel                       KC x NR, stays in L1
//         for each row tile of the chunk        MR rows, the last two fitted
//           micro-kernel: tile of C over KC
//       (A in place on AVX-512: pairs of panels, 2*NR wide, 64 KiB, read
//       from L2, and the loops the other way round: each row tile of at
//       most 6 rows against every pair; A's rows fetched ahead unless they
//       are 4 KiB apart)
//
// N no wider than half a panel (N = 10) runs the half-width kernels.
#include "kernels/gemm/vacc_gemm_narrow_b.h"

#include <algorithm>
#include <cstdlib>

#include "kernels/gemm/vacc_gemm_blocking.h"
#include "kernels/gemm/vacc_gemm_buffer.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/gemm/vacc_gemm_pack.h"
#include "kernels/gemm/vacc_gemm_split.h"

namespace vacc {
namespace gemm {
namespace {

thread_local PackBuffer t_narrow_b;  // each unit's packed copy of all of B
thread_local PackBuffer t_narrow_a;  // each unit's packed rows of A, when not in place

}  // namespace

int64_t NarrowBCols() {
  return CurrentRowsKernel().pair_max_rows > 0 ? kNarrowBCols : kNarrowBColsWithoutPairs;
}

bool NarrowBApplies(const PackableA& a, const Matrix& b) {
  return b.cols <= NarrowBCols() && a.rows() > kSmallMRows;
}

void NarrowBGemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
                 ComputeUnits* units) {
  if (EmptyProduct(a, b, c, ldc, accumulate)) return;
  const int64_t m = a.rows(), k = a.cols(), n = b.cols;
  const MicroKernel packed = MicroKernelFor(n);
  const RowsKernel direct = RowsKernelFor(n);  // A rows in place, from L2
  const int64_t mr = packed.mr, nr = packed.nr;
  const int64_t panels = CeilDiv(n, nr);
  // A's rows stream past the B panel from L2 (as in the short-A path), so
  // the panel keeps half of L1.
  const int64_t kc_max = EvenBlockLength(k, kRowsKC);
  const Matrix* a_in_place = FloatRowsInPlace(a);
  // With A in place, whole pairs of panels run as one 2*NR-wide tile where
  // the target has the kernels (run_b_in_place_pair on the pair packed
  // 2*NR wide): A's values are broadcast once per 2*NR columns, and A's
  // rows, which come from L2, are read half as often. Against single
  // panels on an Intel Xeon (one unit, alternating, medians of 9): the 1x1
  // Conv2D's 6272 x 256 x 128 1.09x, 6272 x 512 x 128 1.12x, 6272 x 64 x 64
  // 1.12x, 3136 x 256 x 64 1.05x. The columns after the last pair keep
  // NR-wide panels.
  const bool pairs = a_in_place != nullptr && direct.pair_max_rows > 0;
  const int64_t pair_cols = pairs ? n / (2 * nr) * 2 * nr : 0;
  // The pairs' kernel: run_pair fetches each tile's A rows ahead and the
  // next tile's rows (RowsTileF32), which helps where A streams from
  // memory past a short K: Intel Xeon, one unit, alternating, medians of
  // 145-291 rounds: 25088 x 64 x 64 1.05x, 6272 x 128 x 256 (the 1x1
  // Conv2D) 1.02x, 3136 x 96 x 384 1.03x; two units 1.02-1.03x. Where A's
  // rows are a multiple of 4 KiB apart the fetched rows share a few L1 sets
  // and evict the tile's own: 1568 x 128 x 1024 ran 0.97x on two units,
  // so such rows keep run_b_in_place_pair, which fetches nothing.
  const bool fetch_a_rows = pairs && !RowsShareCacheSets(*a_in_place);
  // Row chunks: at most MC rows (the chunk's A stays in L2 while every
  // panel passes over it), at least 4 micro-panels, and enough per unit
  // that the last one taken is short.
  const int parts = Participants(units);
  const RowChunks chunks(m, mr, kMC, 4 * mr, parts, kNarrowBChunksPerParticipant);
  Shares shares(static_cast<size_t>(chunks.count), parts);

  ForEachParticipant(units, [&](int part) {
    // This unit's own copy of all of B, packed on its first chunk (B is
    // narrow: 256 x 128 floats for the 1x1 Conv2D): K block pc's panels at
    // pc * panels * nr (every block before it is kc_max deep). Nothing
    // packed is shared between units.
    float* packed_b = t_narrow_b.Get(k * panels * nr);
    float* packed_a = a_in_place ? nullptr : t_narrow_a.Get(chunks.largest * kc_max);
    if (packed_b == nullptr || (a_in_place == nullptr && packed_a == nullptr)) {
      std::abort();  // out of host memory
    }
    bool b_packed = false;
    for (int64_t row0, rows; chunks.Next(shares, part, &row0, &rows);) {
      for (int64_t pc = 0; pc < k; pc += kc_max) {
        const int64_t kc = KBlockDepth(pc, k, kc_max);
        const bool add = accumulate || pc > 0;  // later K blocks add to the first
        float* b_block = packed_b + pc * panels * nr;
        // The K block's panels: the pairs, 2*NR wide (pair q at
        // q * 2 * nr * kc), then the other columns' NR-wide panels.
        float* b_singles = b_block + pair_cols * kc;
        if (!b_packed) {
          if (pair_cols > 0) PackB(b, pc, kc, 0, pair_cols, 2 * packed.nr, b_block);
          if (pair_cols < n) PackB(b, pc, kc, pair_cols, n - pair_cols, packed.nr, b_singles);
        }
        if (packed_a != nullptr) a.Pack(row0, rows, pc, kc, packed.mr, packed_a);
        if (pair_cols > 0) {
          // Each row tile against every pair before the next tile: the
          // tile's A rows come from memory once, then from L1, and its
          // rows of C are written whole, one tile after another. Against
          // a pair at a time over all the chunk's tiles (Intel Xeon,
          // paired with oneDNN, builds alternating, medians of 8), the 1x1
          // Conv2D (6272 x 256 x 128) 0.969 -> 0.977 at one unit, 0.982 ->
          // 1.001 at two. Not measured on AMD.
          const int64_t lda = a_in_place->row_stride;
          const float* a_rows = static_cast<const float*>(a_in_place->data) + row0 * lda + pc;
          ForEachRowTile(0, rows, direct.pair_max_rows, [&](int64_t i, int tile_rows) {
            for (int64_t col = 0; col < pair_cols; col += 2 * nr) {
              const float* b_pair = b_block + col * kc;
              float* c_tile = c + (row0 + i) * ldc + col;
              if (fetch_a_rows) {
                direct.run_pair[tile_rows](kc, a_rows + i * lda, lda, kc, 0, b_pair, c_tile, ldc,
                                           static_cast<int>(2 * nr), add, true);
              } else {
                direct.run_b_in_place_pair[tile_rows](kc, a_rows + i * lda, lda, b_pair, 2 * nr,
                                                      c_tile, ldc, add, nullptr, 0);
              }
            }
          });
        }
        for (int64_t col = pair_cols; col < n; col += nr) {
          const float* b_panel = b_singles + (col - pair_cols) * kc;
          const int n_eff = static_cast<int>(std::min(nr, n - col));
          float* c_block = c + row0 * ldc + col;
          if (packed_a != nullptr) {
            RowTilesPacked(packed, kc, packed_a, b_panel, c_block, ldc, rows, n_eff, add);
          } else {
            const int64_t lda = a_in_place->row_stride;
            RowTilesInPlace(direct, kc,
                            static_cast<const float*>(a_in_place->data) + row0 * lda + pc, lda,
                            b_panel, c_block, ldc, 0, rows, n_eff, add);
          }
        }
      }
      b_packed = true;
    }
  });
}

}  // namespace gemm
}  // namespace vacc
