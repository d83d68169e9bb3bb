// SPDX-License-Identifier: Apache-2.0
//
// Cache blocking of the GEMM (BLIS's names), chosen for AMD Zen3 per core:
// 32 KiB L1d, 512 KiB L2, 32 MiB L3 shared by the cores.
//   KC  depth of a packed block. The micro-kernel keeps one KC x NR panel of
//       B in L1 while it sweeps the A panels: 256 x 16 floats = 16 KiB, half
//       of L1, leaving room for the A panel streaming past (6 KiB).
//   MC  rows of a packed A block, which stays in L2 while every B panel of
//       the NC block passes: 144 x 256 floats = 144 KiB, under a third of L2
//       so B panels and C lines do not evict it.
//   NC  columns of a packed B block, in L3: 4080 x 256 floats = 4 MiB, an
//       eighth of L3 (shared by both cores).
//   MS  rows of A packed at once (a multiple of MC): the parallel step. All
//       units compute from the same packed A and B, so neither is packed
//       twice; 8 MC blocks = 1.1 MiB of packed A.
//   kSmallMRows  the most rows of A the short-A path takes
//       (vacc_gemm_small_m.h). Measured on Zen3: it is faster up to 128 rows
//       (1.3x at 32 x 784 x 128, 1.7x at 200 x 300 x 10) and even at 256.
// TODO(vendor): a device sizes these for its own memories (scratchpad, SRAM).
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_BLOCKING_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_BLOCKING_H_

#include <cstdint>

namespace vacc {
namespace gemm {

constexpr int64_t kKC = 256;
constexpr int64_t kMC = 144;
constexpr int64_t kNC = 4080;
constexpr int64_t kMCBlocksPerStep = 8;
constexpr int64_t kSmallMRows = 128;

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_BLOCKING_H_
