// SPDX-License-Identifier: Apache-2.0
//
// The narrow-B GEMM (vacc_gemm_narrow_b.h): B packed once, then one
// parallel step over blocks of A's rows.
//
//   for each block of rows of A, in parallel
//     for pc in K step KC
//       wait for B's panels of this K block (packed by whichever units
//       needed them first)
//       A[rows, pc:pc+KC]: in place if float32 with contiguous rows, else
//                          packed into this unit's buffer
//       for each B panel                       KC x NR, stays in L1
//         for each row tile of the block        6 rows, the last two fitted
//           micro-kernel: tile of C over KC
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

thread_local PackBuffer t_narrow_b;  // all of B, of the thread running the GEMM
thread_local PackBuffer t_narrow_a;  // each unit's packed rows of A, when not in place

}  // namespace

bool NarrowBApplies(const PackableA& a, const Matrix& b) {
  return b.cols <= kNarrowBCols && a.rows() > kSmallMRows;
}

void NarrowBGemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
                 ComputeUnits* units) {
  if (EmptyProduct(a, b, c, ldc, accumulate)) return;
  const MicroKernel packed = CurrentMicroKernel();
  const RowsKernel direct = CurrentRowsKernel();
  const int64_t m = a.rows(), k = a.cols(), n = b.cols;
  const int64_t mr = packed.mr, nr = packed.nr;
  const int64_t panels = CeilDiv(n, nr);
  // A's rows stream past the B panel from L2 (as in the short-A path), so
  // the panel keeps half of L1. Equal K blocks: K = 300 is 2 x 150.
  const int64_t kc_max = CeilDiv(k, CeilDiv(k, kRowsKC));
  const int64_t k_blocks = CeilDiv(k, kc_max);
  const Matrix* a_in_place = FloatRowsInPlace(a);
  // Blocks of rows: enough per participant that the last is short, at most
  // MC rows (the block's A stays in L2 while every panel passes over it).
  const int64_t tiles = kTilesPerParticipant * Participants(units);
  const int64_t block_rows =
      std::min(CeilDiv(kMC, mr) * mr, std::max<int64_t>(4 * mr, CeilDiv(CeilDiv(m, tiles), mr) * mr));
  const int64_t row_blocks = CeilDiv(m, block_rows);

  // B packed panel by panel: K block pc's panels start at pc * panels * nr
  // (every block before it is kc_max deep), panel p of it at p * nr * kc.
  float* packed_b = t_narrow_b.Get(k * panels * nr);
  if (packed_b == nullptr) std::abort();  // out of host memory
  OnceEach b_packed(static_cast<size_t>(k_blocks * panels));

  ForEachItem(units, static_cast<size_t>(row_blocks), [&](size_t begin, size_t end) {
    float* packed_a = a_in_place ? nullptr : t_narrow_a.Get(block_rows * kc_max);
    if (a_in_place == nullptr && packed_a == nullptr) std::abort();  // out of host memory
    for (int64_t blk = static_cast<int64_t>(begin); blk < static_cast<int64_t>(end); ++blk) {
      const int64_t row0 = blk * block_rows, rows = std::min(block_rows, m - row0);
      for (int64_t pc = 0; pc < k; pc += kc_max) {
        const int64_t kc = std::min(kc_max, k - pc);
        const bool add = accumulate || pc > 0;  // later K blocks add to the first
        float* b_block = packed_b + pc * panels * nr;
        b_packed.RunEach(static_cast<size_t>(pc / kc_max * panels), static_cast<size_t>(panels),
                         [&](size_t p) {
                           const int64_t col = static_cast<int64_t>(p) * nr;
                           PackB(b, pc, kc, col, std::min(nr, n - col), packed.nr,
                                 b_block + col * kc);
                         });
        if (packed_a != nullptr) a.Pack(row0, rows, pc, kc, packed.mr, packed_a);
        for (int64_t p = 0; p < panels; ++p) {
          const int64_t col = p * nr;
          const float* b_panel = b_block + col * kc;
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
    }
  });
}

}  // namespace gemm
}  // namespace vacc
