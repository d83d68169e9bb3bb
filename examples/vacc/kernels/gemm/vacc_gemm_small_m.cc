// SPDX-License-Identifier: Apache-2.0
//
// The short-A GEMM (vacc_gemm_small_m.h): one parallel step over runs of B
// panels; within its run a unit does all of K itself.
//
//   for each run of NR-wide B panels, in parallel
//     for pc in K step KC
//       A[:, pc:pc+KC]: in place if float32 with contiguous rows, else packed
//                       into this unit's buffer (all of M: it is short)
//       for each panel of the run
//         B's KC x NR panel: read in place by    a float32 B whose rows are
//                            every row tile      not a multiple of 4 KiB
//                                                apart, with A in place
//                            else packed into L1: by the first row tile
//                            as it computes (float32 B, A in place), else
//                            beforehand
//         for each row tile of M                MR rows, the last two fitted
//           micro-kernel: tile of C over KC    two panels at once (6 x 64)
//                                              on AVX-512 when both are
//                                              read in place
//
// B read in place stays in L2 between the row tiles, and the B-panel loads
// keep pace with the FMAs from there. Rows a multiple of 4 KiB apart (N =
// 1024 floats) fall into a few of L2's sets and evict each other: that B is
// packed a panel at a time, just before use (ReadBInPlace has the figures).
#include "kernels/gemm/vacc_gemm_small_m.h"

#include <algorithm>
#include <cstdlib>

#include "kernels/gemm/vacc_gemm_blocking.h"
#include "kernels/gemm/vacc_gemm_buffer.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/gemm/vacc_gemm_pack.h"
#include "kernels/gemm/vacc_gemm_split.h"
#include "kernels/vacc_simd.h"

namespace vacc {
namespace gemm {
namespace {

// Every unit's own packed A (when A is not used in place) and B panel.
thread_local PackBuffer t_small_a;
thread_local PackBuffer t_small_b;

struct Plan {
  MicroKernel packed;  // for a packed A
  RowsKernel rows;     // for A in place
  const Matrix* a_in_place = nullptr;
  const Matrix* b_in_place = nullptr;  // float32, row-major: its panels packed by the first tile
  bool b_unpacked = false;             // ... or read in place by every tile (A in place too)
  int64_t kc_max = 0;
};

// Columns [p_begin, p_end) of NR-wide panels of C over all of K.
void ComputePanels(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
                   const Plan& plan, int64_t p_begin, int64_t p_end) {
  const int64_t m = a.rows(), k = a.cols(), n = b.cols;
  const int64_t nr = plan.packed.nr, mr = plan.packed.mr;
  float* packed_a = plan.a_in_place ? nullptr : t_small_a.Get(CeilDiv(m, mr) * mr * plan.kc_max);
  float* packed_b = t_small_b.Get(nr * plan.kc_max);
  if ((packed_a == nullptr && plan.a_in_place == nullptr) || packed_b == nullptr) {
    std::abort();  // out of host memory
  }
  for (int64_t pc = 0; pc < k; pc += plan.kc_max) {
    const int64_t kc = KBlockDepth(pc, k, plan.kc_max);
    const bool add = accumulate || pc > 0;  // later K blocks add to the first
    if (packed_a != nullptr) a.Pack(0, m, pc, kc, plan.packed.mr, packed_a);
    for (int64_t p = p_begin; p < p_end; ++p) {
      const int64_t col = p * nr;
      const int n_eff = static_cast<int>(std::min(nr, n - col));
      int64_t i = 0;  // rows of C done
      if (plan.b_in_place != nullptr && plan.a_in_place != nullptr && n_eff == nr) {
        const Matrix& am = *plan.a_in_place;
        const Matrix& bm = *plan.b_in_place;
        const float* a_at = static_cast<const float*>(am.data) + pc;
        const float* b_at = static_cast<const float*>(bm.data) + pc * bm.row_stride + col;
        if (plan.b_unpacked) {
          // Every row tile reads the panel in place: nothing is packed.
          // Two full panels at once where the target has the registers.
          const bool pair = plan.rows.run_b_in_place_pair[1] != nullptr && p + 1 < p_end &&
                            col + 2 * nr <= n;
          const int most = pair ? plan.rows.pair_max_rows : plan.rows.max_rows;
          // The panel this unit runs next, which the tiles fetch: the next
          // of its run in this K block, else the run's first in the next.
          const int64_t step = pair ? 2 : 1;
          const float* next = nullptr;
          int64_t next_kc = kc;
          if (p + step < p_end) {
            next = b_at + step * nr;
          } else if (pc + kc < k) {
            next = static_cast<const float*>(bm.data) + (pc + kc) * bm.row_stride + p_begin * nr;
            next_kc = std::min(plan.kc_max, k - pc - kc);
          }
          const int64_t tiles = RowTileCount(m, most);
          int64_t tile = 0;
          ForEachRowTile(0, m, most, [&](int64_t row, int tile_rows) {
            const FetchRows f = InPlaceFetch(tile++, tiles, next_kc, kc);
            (pair ? plan.rows.run_b_in_place_pair
                  : plan.rows.run_b_in_place)[tile_rows](
                kc, a_at + row * am.row_stride, am.row_stride, b_at, bm.row_stride,
                c + row * ldc + col, ldc, add,
                next != nullptr ? next + f.first * bm.row_stride : nullptr, f.count);
          });
          if (pair) ++p;
          continue;
        }
        // The first row tile packs the panel as it reads it. It is the
        // slowest tile per row: it reads one line from each of B's rows,
        // which a B of 128 columns puts 512 bytes apart (8 of L1's 64 sets,
        // a page every 8 rows), from L3 when B does not stay in L2 (at one
        // unit 32 x 784 x 128 matched oneDNN with K = 392 or N = 64, and
        // fell behind at K = 784 and 1568). 32 x 784 x 128 on Zen3 (AVX2,
        // one unit, perf): this tile 29-31% of the time for 19% of the
        // FMAs (6 of 32 rows), 5.1 units per row against 2.6 for the 6-row
        // tiles reading the packed panel; with B's rows 64 bytes apart
        // (N = 16) 3.5, 544 bytes apart in between. That was before the
        // packing kernel fetched its rows ahead and stopped reloading A's
        // row pointers from the stack (kPackFetchRows has the gain). Tried,
        // none lowering that share or the time: fetching the next panel's
        // rows during this panel's other tiles (one row per two k steps),
        // packing all of B's panels first, four rows at a time (PackB: the
        // pass alone took 26%), or a K block at a time (98, 196 or 392 rows
        // of all panels, read row by row: 0.88-0.99x of this). 6s and 5s
        // rather than 6+6+6+6+4+4 rows ran 0.99x.
        const int rows = plan.rows.TileRows(m);
        plan.rows.run_packing[rows](kc, a_at, am.row_stride, b_at, bm.row_stride, packed_b,
                                    c + col, ldc, add);
        i = rows;
      } else {
        PackB(b, pc, kc, col, n_eff, plan.packed.nr, packed_b);
      }
      if (packed_a != nullptr) {
        RowTilesPacked(plan.packed, kc, packed_a, packed_b, c + col, ldc, m, n_eff, add);
      } else {
        const Matrix& am = *plan.a_in_place;
        RowTilesInPlace(plan.rows, kc, static_cast<const float*>(am.data) + pc, am.row_stride,
                        packed_b, c + col, ldc, i, m, n_eff, add);
      }
    }
  }
}

// Whether every row tile can read the panels of a float32 B with
// contiguous rows in place, rather than the first tile packing each for
// the others (where that pays: BInPlacePays).
// Unpacked, a panel (KC rows x 2 lines) stays in L2 between the tiles
// unless its rows are a multiple of 4 KiB apart: then they fall into a
// few of L2's sets (Zen4: 32 of 2048 at 4 KiB) and evict each other.
// Measured on Zen4 (30 or 32 x 784 x N, one unit, hot caches), unpacked
// against packed by the first tile, same K blocks: N = 128 1.04x, 512
// 1.01x, 768 1.03x (in K blocks of KC, not kRowsKC: 1.05x, 1.03x). A
// stand-alone kernel reading B in place ran 0.95x the packing path at
// N = 1024 and 0.86x at 2048.
bool ReadBInPlace(const Matrix& b) { return !RowsShareCacheSets(b); }

// A float32 B with contiguous rows: the row kernels can read (or pack) its
// panels straight from memory.
const Matrix* FloatBRowsInPlace(const Matrix& b) {
  return b.dtype == TF_FLOAT && b.col_stride == 1 ? &b : nullptr;
}

// Whether every row tile reads both operands in place, nothing packed.
bool BothInPlace(const PackableA& a, const Matrix& b) {
  return FloatRowsInPlace(a) != nullptr && FloatBRowsInPlace(b) != nullptr &&
         ReadBInPlace(b);
}

}  // namespace

// A panel's tiles bring the next one into L1 as they go, spread evenly
// (RowsBInPlaceKernelF32 has the figures).
FetchRows InPlaceFetch(int64_t tile, int64_t tiles, int64_t next_kc, int64_t kc) {
  const int64_t per_tile = std::min(CeilDiv(next_kc, tiles), FetchedRows(kc));
  const int64_t first = tile * per_tile;
  return {first, std::max(int64_t{0}, std::min(per_tile, next_kc - first))};
}

bool SmallMApplies(const PackableA& a) { return a.rows() <= kSmallMRows; }

bool InPlaceApplies(const PackableA& a, const Matrix& b, ComputeUnits* units) {
  const int64_t m = a.rows(), k = a.cols();
  if (m > kInPlaceMaxRows || m * k > kInPlaceAFloats || !BothInPlace(a, b)) return false;
  // The units split the panels (contiguous runs of ceil(panels / parts)):
  // at most an eighth of the unit-panels idle. 3 panels on 2 units (2 + 1)
  // would leave one unit idle a third of the time.
  const int64_t panels = CeilDiv(b.cols, RowsKernelFor(b.cols).nr);
  const int64_t parts = Participants(units);
  const int64_t idle = CeilDiv(panels, parts) * parts - panels;
  return panels >= parts && 8 * idle <= panels;
}

bool BInPlacePays() {
  const int vector_floats = CurrentMicroKernel().nr / 2;  // NR is two vectors
  return vector_floats >= 16;
}

bool LongerAInPlacePays() { return HostCpuIsAmd() && BInPlacePays(); }

void SmallMGemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
                ComputeUnits* units, InPlaceReads reads) {
  if (EmptyProduct(a, b, c, ldc, accumulate)) return;
  Plan plan;
  plan.packed = MicroKernelFor(b.cols);
  plan.rows = RowsKernelFor(b.cols);
  plan.a_in_place = FloatRowsInPlace(a);
  plan.b_in_place = FloatBRowsInPlace(b);
  const bool in_place = reads == InPlaceReads::kIfTheyPay ? BInPlacePays()
                                                           : reads == InPlaceReads::kAlways;
  plan.b_unpacked = in_place && BothInPlace(a, b);
  plan.kc_max = EvenBlockLength(a.cols(), kKC);
  const int64_t panels = CeilDiv(b.cols, plan.packed.nr);
  if (units == nullptr) {
    ComputePanels(a, b, c, ldc, accumulate, plan, 0, panels);
    return;
  }
  // One contiguous run of panels per participant: each handles (or packs)
  // A once per K block, whatever its share.
  const size_t grain = static_cast<size_t>(CeilDiv(panels, Participants(units)));
  units->ParallelFor(static_cast<size_t>(panels), grain, [&](size_t begin, size_t end) {
    ComputePanels(a, b, c, ldc, accumulate, plan, static_cast<int64_t>(begin),
                  static_cast<int64_t>(end));
  });
}

}  // namespace gemm
}  // namespace vacc
