// SPDX-License-Identifier: Apache-2.0
//
// The L2 cache of the core a compute unit runs on. The packed driver sizes
// the B block a unit packs for itself against it (PackedDriverBlockColumns
// and PackedDriverChunks, vacc_gemm_split.h): a block that does not stay
// in L2 beside the unit's A block and its rows of C streams from L3 past
// every row chunk. Hosts differ widely: per core, Zen3 has 512 KiB, Zen4
// 1 MiB, an Ice Lake server Xeon 1.25 MiB, an Emerald Rapids Xeon 2 MiB.
// TODO(vendor): a device returns its own per-unit memory (SRAM, scratchpad).
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_UNIT_L2_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_UNIT_L2_H_

#include <cstdint>

namespace vacc {
namespace gemm {

// Where the host does not say (sysconf reports 0 or -1): 2 MiB, the L2 of
// the host the packed driver's L2 rules were first measured on.
constexpr int64_t kDefaultUnitL2Bytes = int64_t{2} << 20;

// The host's L2 per core (sysconf(_SC_LEVEL2_CACHE_SIZE), read once), or
// kDefaultUnitL2Bytes.
int64_t UnitL2Bytes();

// The largest packed B block (floats) that stays in a unit's L2 beside
// the rest of its work: half of UnitL2Bytes (1 MiB of Emerald Rapids' 2
// MiB, where that measured so: kOwnStreamedBChunkRows and
// kMostOwnBL2Blocks, vacc_gemm_blocking.h).
int64_t UnitL2PackedBFloats();

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_UNIT_L2_H_
