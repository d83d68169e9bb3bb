// SPDX-License-Identifier: Apache-2.0
//
// The GEMM driver: BLIS's loops around the micro-kernel, each unit running
// them over its own rows of C with its own packed blocks.
//
//   for jc in N step NC                  a unit's packed B: KC x NC for
//                                        every K block (its first chunk
//                                        packs it as it computes)
//     rows of C in chunks of <= MC, dealt to the units as shares (Shares);
//     each takes its own, then what another has not started
//       for pc in K step KC
//         pack the chunk's A block       stays in L2 (the C chunk too,
//                                        across the K blocks)
//         for jr in NC step NR           B panel stays in L1
//           for ir in chunk step MR      A panel from L2
//             micro-kernel: MR x NR tile of C, in registers over KC
//
// Nothing is shared between units but the operands they read: each packs
// its A rows and its own copy of B, and writes its own rows of C, the same
// rows call after call. Dynamic hand-out of tiles with shared packed
// blocks (the design before) moved every packed line and C tile between
// the cores on every call; on Zen4 at 2 units that cost 256^3 a quarter of
// its speed, and in the VM's phases where cross-core traffic is slow, a
// third of every size's. Packing B twice costs little (run_packing).
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

// Each unit's own packed blocks: nothing packed is shared between units.
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
  // Equal KC blocks: K = 300 is 2 x 150, not 256 + 44.
  const int64_t kc_max = CeilDiv(k, CeilDiv(k, kKC));
  // Columns per jc block: a unit keeps all of K of them packed.
  const int64_t nc = std::max(nr, std::min(kNC, kUnitPackedBFloats / k) / nr * nr);
  // Row chunks of at most MC rows, and with several units a whole number
  // per unit, at least kChunksPerParticipant each. Chunk c is micro-panels
  // [c * panels / chunks, (c + 1) * panels / chunks) of A: chunks differ by
  // at most one micro-panel, so the units' shares are equal (M = 256 on two
  // units is 126 + 130 rows; as 7 x 36 + 4 rows it was 144 + 112, and the
  // step took 1.125x as long as the work).
  const int parts = Participants(units);
  const int64_t row_panels = CeilDiv(m, mr);
  int64_t chunks = CeilDiv(row_panels, std::max<int64_t>(kMC / mr, 1));
  if (parts > 1) {
    chunks = CeilDiv(std::max<int64_t>(chunks, kChunksPerParticipant * parts), parts) * parts;
  }
  chunks = std::min(chunks, row_panels);
  const int64_t chunk_rows = CeilDiv(row_panels, chunks) * mr;  // the largest
  // A float32 B with contiguous rows is packed by the micro-kernel
  // (run_packing) as it computes a unit's first row tile of each panel.
  const Matrix* b_in_place = b.dtype == TF_FLOAT && b.col_stride == 1 ? &b : nullptr;

  for (int64_t jc = 0; jc < n; jc += nc) {
    const int64_t ncur = std::min(nc, n - jc), panels = CeilDiv(ncur, nr);
    Shares shares(static_cast<size_t>(chunks), parts);
    ForEachParticipant(units, [&](int part) {
      // This unit's packed B (the jc block, all of K: K block pc at
      // pc * panels * nr, panel p of it p * nr * kc further) and A (one
      // chunk's K block).
      float* packed_b = t_packed_b.Get(panels * nr * k);
      float* packed_a = t_packed_a.Get(chunk_rows * kc_max);
      if (packed_b == nullptr || packed_a == nullptr) std::abort();  // out of host memory
      bool b_packed = false;  // by this unit's first chunk, as it computes
      for (size_t chunk; shares.Next(part, &chunk);) {
        const int64_t ch = static_cast<int64_t>(chunk);
        const int64_t row0 = ch * row_panels / chunks * mr;
        const int64_t rows = std::min(m, (ch + 1) * row_panels / chunks * mr) - row0;
        for (int64_t pc = 0; pc < k; pc += kc_max) {
          const int64_t kc = std::min(kc_max, k - pc);
          const bool add = accumulate || pc > 0;  // later K blocks add to the first
          a.Pack(row0, rows, pc, kc, uk.mr, packed_a);
          for (int64_t p = 0; p < panels; ++p) {
            const int64_t col = jc + p * nr;
            const int n_eff = static_cast<int>(std::min(nr, n - col));
            float* b_panel = packed_b + pc * panels * nr + p * nr * kc;
            float* c_block = c + row0 * ldc + col;
            int64_t i = 0;  // rows done
            if (!b_packed && b_in_place != nullptr && n_eff == nr) {
              i = std::min(mr, rows);
              uk.run_packing(kc, packed_a,
                             static_cast<const float*>(b_in_place->data) +
                                 pc * b_in_place->row_stride + col,
                             b_in_place->row_stride, b_panel, c_block, ldc, static_cast<int>(i),
                             add);
            } else if (!b_packed) {
              PackB(b, pc, kc, col, n_eff, uk.nr, b_panel);
            }
            for (; i < rows; i += mr) {
              uk.run(kc, packed_a + i * kc, b_panel, c_block + i * ldc, ldc,
                     static_cast<int>(std::min(mr, rows - i)), n_eff, add);
            }
          }
        }
        b_packed = true;
      }
    });
  }
}

std::string MicroKernelName() {
  const MicroKernel uk = CurrentMicroKernel();
  return std::string(uk.target) + " " + std::to_string(uk.mr) + "x" + std::to_string(uk.nr);
}

}  // namespace gemm
}  // namespace vacc
