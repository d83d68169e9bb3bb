// SPDX-License-Identifier: Apache-2.0
//
// Cache blocking of the GEMM (BLIS's names), chosen for AMD Zen3 per core:
// 32 KiB L1d, 512 KiB L2, 32 MiB L3 shared by the cores.
//   KC  depth of a packed block. The micro-kernel keeps one KC x NR panel of
//       B in L1 while it sweeps the A panels: 384 x 16 floats = 24 KiB of the
//       32 KiB L1, with the packed A panel streaming past from L2. Deeper
//       blocks mean fewer passes over C (each reads and writes all of C):
//       measured on Zen3 against 256, 2-6% faster at 512^3 to 1024^3 and
//       256 x 1024 x 1024 (OpenBLAS picks 384 for this core too).
//   kRowsKC  the depth of the paths that read A in place with the row
//       kernel (vacc_gemm_small_m.cc, vacc_gemm_conv_direct.cc): their A rows
//       stream from wherever A is, so the B panel keeps half of L1
//       (256 x 16 floats = 16 KiB); 384 was no faster there.
//   MC  rows of a packed A block, which stays in L2 while every B panel of
//       the NC block passes: 144 x 384 floats = 216 KiB, under half of L2
//       so B panels and C lines do not evict it.
//   NC  columns of a packed B block, in L3: 4080 x 384 floats = 6 MiB, under
//       a fifth of L3 (shared by both cores).
//   MS  rows of A packed at once (a multiple of MC): the parallel step. All
//       units compute from the same packed A and B, so neither is packed
//       twice; at least 8 MC blocks (1.7 MiB of packed A), more while the
//       step's packed A and the packed B block stay within
//       kPackedStepFloats: fewer steps, so fewer barriers, for a tall A with
//       a short K (the 1x1 Conv2D 6272 x 256 x 128 is one step, not six:
//       1.2-1.38x at 2 units, the same at 1).
//   kPackedStepFloats  that budget: 4 Mi floats = 16 MiB, half the L3.
//   kNarrowBCols  the most columns of B the narrow-B path takes
//       (vacc_gemm_narrow_b.h). Measured on Zen3 against the packed driver
//       (interleaved, medians): at 2 units 1.03x on 6272 x 256 x 128 (the 1x1
//       Conv2D), 1.16x at 1024 x 1024 x 128, 1.7x at 2048 x 512 x 64 and at
//       256 x 512 x 10; at N = 256 a wash (0.97-1.08x), at 512 slower (0.87-0.97x).
//   kSmallMRows  the most rows of A the short-A path takes
//       (vacc_gemm_small_m.h). Measured on Zen3: it is faster up to 128 rows
//       (1.3x at 32 x 784 x 128, 1.7x at 200 x 300 x 10) and even at 256.
// TODO(vendor): a device sizes these for its own memories (scratchpad, SRAM).
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_BLOCKING_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_BLOCKING_H_

#include <cstdint>

namespace vacc {
namespace gemm {

constexpr int64_t kKC = 384;
constexpr int64_t kRowsKC = 256;
constexpr int64_t kMC = 144;
constexpr int64_t kNC = 4080;
constexpr int64_t kMCBlocksPerStep = 8;
constexpr int64_t kPackedStepFloats = int64_t{4} << 20;
constexpr int64_t kSmallMRows = 128;
constexpr int64_t kNarrowBCols = 128;
// Parallel tiles of C per participating unit, and the fewest B panels in a
// tile (vacc_gemm.cc): enough tiles that the last one is short.
constexpr int64_t kTilesPerParticipant = 16;
constexpr int64_t kMinPanelsPerTile = 2;
// Micro-panels of A per packing slice (vacc_gemm.cc): units sharing an A
// block pack its slices in parallel.
constexpr int64_t kAPackSlicePanels = 4;

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_BLOCKING_H_
