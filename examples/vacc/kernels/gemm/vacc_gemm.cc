// SPDX-License-Identifier: Apache-2.0
//
// The GEMM driver: BLIS's five loops around the micro-kernel.
//
//   for jc in N step NC          B block (KC x NC) packed once, into L3
//     for pc in K step KC
//       for is in M step MS      A rows packed once per step (MC blocks, L2)
//         for each (MC block, column group) in parallel, one at a time:
//           pack the group's B panels and the A block, if no tile has yet
//           for jr in group step NR      B panel stays in L1
//             for ir in MC step MR       A panel streams from L2
//               micro-kernel: MR x NR tile of C, in registers over KC
//
// The parallel split is over tiles of C (MC rows x a group of NR panels):
// each is written by one unit, and every unit reads the same packed panels,
// packed by the first tile that needs them (so packing overlaps computing,
// with one barrier per step, not two). The columns are split into groups so
// every unit gets many tiles and none waits long for the last.
//
// Gemm picks the driver by shape: a very short A (a small batch, e.g.
// 32 x 784 x 128) takes vacc_gemm_small_m.cc, a narrow B (e.g. a 1x1 Conv2D
// to 128 channels) vacc_gemm_narrow_b.cc, anything else PackedGemm here.
#include "kernels/gemm/vacc_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "kernels/gemm/vacc_gemm_blocking.h"
#include "kernels/gemm/vacc_gemm_buffer.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/gemm/vacc_gemm_narrow_b.h"
#include "kernels/gemm/vacc_gemm_pack.h"
#include "kernels/gemm/vacc_gemm_split.h"
#include "kernels/gemm/vacc_gemm_small_m.h"

namespace vacc {
namespace gemm {
namespace {

// Packed blocks of the GEMM running on this thread. Only the thread running
// Gemm allocates; units helping it write into these buffers while it waits
// in ParallelFor.
thread_local PackBuffer t_packed_a;
thread_local PackBuffer t_packed_b;

}  // namespace

void Gemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
          ComputeUnits* units) {
  if (SmallMApplies(a)) {
    SmallMGemm(a, b, c, ldc, accumulate, units);
  } else if (NarrowBApplies(a, b)) {
    NarrowBGemm(a, b, c, ldc, accumulate, units);
  } else {
    PackedGemm(a, b, c, ldc, accumulate, units);
  }
}

void PackedGemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
                ComputeUnits* units) {
  if (EmptyProduct(a, b, c, ldc, accumulate)) return;
  const int64_t m = a.rows(), k = a.cols(), n = b.cols;
  const MicroKernel uk = CurrentMicroKernel();
  const int64_t mr = uk.mr, nr = uk.nr;
  // Equal MC blocks too (M = 1024 is 8 x 132, not 7 x 144 + 16), so the
  // units' tiles are of a size and none waits for a straggler.
  const int64_t mc_max = std::max<int64_t>(kMC / mr, 1) * mr;
  const int64_t mc = std::min(mc_max, CeilDiv(CeilDiv(m, CeilDiv(m, mc_max)), mr) * mr);
  const int64_t nc = std::max<int64_t>(kNC / nr, 1) * nr;
  // Equal KC blocks: K = 300 is 2 x 150, not 256 + 44.
  const int64_t kc_max = CeilDiv(k, CeilDiv(k, kKC));
  // Rows per step: at least kMCBlocksPerStep MC blocks, more while the
  // step's packed A and the packed B block fit the budget: a tall A with a
  // short K (a 1x1 conv: 6272 x 256 x 128) is one parallel step instead of
  // six, each ending with a barrier.
  const int64_t nc_pad = CeilDiv(std::min(nc, n), nr) * nr;
  const int64_t ms = std::max(mc * kMCBlocksPerStep,
                              (kPackedStepFloats / kc_max - nc_pad) / mc * mc);
  const int participants = Participants(units);
  // A float32 B with contiguous rows is packed by the micro-kernel
  // (run_packing) as it computes a group's first row tile.
  const Matrix* b_in_place = b.dtype == TF_FLOAT && b.col_stride == 1 ? &b : nullptr;
  // A blocks are packed in slices of kAPackSlicePanels micro-panels
  // (OnceEach::RunEach), so units starting on the same block share its
  // packing instead of one waiting for the other.
  const int64_t slice_rows = kAPackSlicePanels * mr;
  const int64_t slices_per_block = CeilDiv(mc, slice_rows);

  float* packed_a = t_packed_a.Get(CeilDiv(std::min(ms, m), mr) * mr * kc_max);
  float* packed_b = t_packed_b.Get(CeilDiv(std::min(nc, n), nr) * nr * kc_max);
  if (packed_a == nullptr || packed_b == nullptr) std::abort();  // out of host memory

  // One parallel step per (jc, pc, is): tiles of C (MC rows x a group of B
  // panels), handed out one at a time. A tile packs what it uses on first
  // use (OnceEach): its A block (once per step) and its group of B panels
  // (once per jc, pc; B first, as tiles taken together share an A block).
  // ~16 tiles per participant keep the wait at the step's end short; a
  // group keeps at least 2 panels. The grouping is fixed per jc so B's
  // packed groups serve every row step.
  const int64_t a_blocks_per_step = CeilDiv(std::min(ms, m), mc);
  for (int64_t jc = 0; jc < n; jc += nc) {
    const int64_t ncur = std::min(nc, n - jc);
    const int64_t b_panels = CeilDiv(ncur, nr);
    const int64_t want = kTilesPerParticipant * participants;
    const int64_t groups = std::max<int64_t>(
        1, std::min(CeilDiv(want, a_blocks_per_step), b_panels / kMinPanelsPerTile));
    const int64_t panels_per_group = CeilDiv(b_panels, groups);
    const int64_t group_count = CeilDiv(b_panels, panels_per_group);
    for (int64_t pc = 0; pc < k; pc += kc_max) {
      const int64_t kc = std::min(kc_max, k - pc);
      const bool add = accumulate || pc > 0;  // later K blocks add to the first
      OnceEach b_packed(static_cast<size_t>(group_count));
      for (int64_t is = 0; is < m; is += ms) {
        const int64_t mcur = std::min(ms, m - is);
        const int64_t a_blocks = CeilDiv(mcur, mc);
        OnceEach a_packed(static_cast<size_t>(a_blocks * slices_per_block));
        const int64_t tiles = a_blocks * group_count;
        ForEachItem(units, static_cast<size_t>(tiles), [&](size_t begin, size_t end) {
          for (int64_t t = static_cast<int64_t>(begin); t < static_cast<int64_t>(end); ++t) {
            const int64_t block = t / group_count, group = t % group_count;
            const int64_t row = block * mc;  // in this step
            const int64_t rows = std::min(mc, mcur - row);
            const int64_t p_begin = group * panels_per_group;
            const int64_t p_end = std::min(b_panels, p_begin + panels_per_group);
            const auto pack_slice = [&](size_t sl) {
              const int64_t r0 = row + static_cast<int64_t>(sl) * slice_rows;
              a.Pack(is + r0, std::min(slice_rows, row + rows - r0), pc, kc, uk.mr,
                     packed_a + r0 * kc);
            };
            // Rows [i0, rows) of the tile against the group's packed panels.
            const auto compute = [&](int64_t i0) {
              for (int64_t p = p_begin; p < p_end; ++p) {
                const float* b_panel = packed_b + p * nr * kc;
                const int n_eff = static_cast<int>(std::min(nr, ncur - p * nr));
                float* c_col = c + jc + p * nr;
                for (int64_t i = i0; i < rows; i += mr) {
                  const int m_eff = static_cast<int>(std::min(mr, rows - i));
                  uk.run(kc, packed_a + (row + i) * kc, b_panel, c_col + (is + row + i) * ldc,
                         ldc, m_eff, n_eff, add);
                }
              }
            };
            if (b_in_place == nullptr) {
              b_packed.Run(static_cast<size_t>(group), [&] {
                const int64_t col = p_begin * nr;
                PackB(b, pc, kc, jc + col, std::min((p_end - p_begin) * nr, ncur - col), uk.nr,
                      packed_b + col * kc);
              });
              a_packed.RunEach(static_cast<size_t>(block * slices_per_block),
                               static_cast<size_t>(CeilDiv(rows, slice_rows)), pack_slice);
              compute(0);
              continue;
            }
            // A float32 row-major B: the tile that packs a group does so
            // with its first row tile of each panel (run_packing), so it
            // needs its A block first. Others wait for the group.
            a_packed.RunEach(static_cast<size_t>(block * slices_per_block),
                             static_cast<size_t>(CeilDiv(rows, slice_rows)), pack_slice);
            bool packed_here = false;
            b_packed.TryRun(static_cast<size_t>(group), [&] {
              packed_here = true;
              const int m_eff = static_cast<int>(std::min(mr, rows));
              for (int64_t p = p_begin; p < p_end; ++p) {
                const int64_t col = jc + p * nr;
                float* b_panel = packed_b + p * nr * kc;
                if (std::min(nr, ncur - p * nr) < nr) {  // a partial panel: packed apart
                  PackB(b, pc, kc, col, ncur - p * nr, uk.nr, b_panel);
                  uk.run(kc, packed_a + row * kc, b_panel, c + col + (is + row) * ldc, ldc, m_eff,
                         static_cast<int>(ncur - p * nr), add);
                  continue;
                }
                uk.run_packing(kc, packed_a + row * kc,
                               static_cast<const float*>(b_in_place->data) +
                                   pc * b_in_place->row_stride + col,
                               b_in_place->row_stride, b_panel, c + col + (is + row) * ldc, ldc,
                               m_eff, add);
              }
            });
            if (packed_here) {
              compute(mr);
            } else {
              b_packed.Wait(static_cast<size_t>(group));
              compute(0);
            }
          }
        });
      }
    }
  }
}

std::string MicroKernelName() {
  const MicroKernel uk = CurrentMicroKernel();
  return std::string(uk.target) + " " + std::to_string(uk.mr) + "x" + std::to_string(uk.nr);
}

}  // namespace gemm
}  // namespace vacc
