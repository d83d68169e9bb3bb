// SPDX-License-Identifier: Apache-2.0
//
// The GEMM for a short A (a small batch: M up to kSmallMRows, such as
// 32 x 784 x 128). There the general driver's shared packing steps cost
// about as much as the product, and its pack-then-compute steps leave units
// waiting at barriers. This path splits the columns across units in a
// single step: each unit reads A in place (or packs it for itself: it is
// small), reads each B panel in place or packs it just before using it,
// and computes its own columns over all of K, with row tiles fitted to M.
// It also takes a longer A that stays in a unit's L2, when both operands
// can be read in place (InPlaceApplies) and that pays on this host
// (InPlaceReadsPay): then nothing is packed.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_SMALL_M_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_SMALL_M_H_

#include <cstdint>

#include "kernels/gemm/vacc_gemm.h"

namespace vacc {
namespace gemm {

// True when SmallMGemm handles this product: A has at most kSmallMRows rows.
bool SmallMApplies(const PackableA& a);

// True when SmallMGemm also takes a longer A, because every row tile can
// read both operands in place: a float32 A with contiguous rows that a
// unit's L2 holds (at most kInPlaceMaxRows rows and kInPlaceAFloats
// values), a float32 B with contiguous rows not a multiple of 4 KiB apart,
// and B panels that split evenly enough between the participating units
// (the work is split by panels: at least one each, and at most an eighth
// of the unit-panels idle). Nothing is packed then.
bool InPlaceApplies(const PackableA& a, const Matrix& b, ComputeUnits* units);

// The rows of the next B panel that row tile `tile` (of `tiles`, each kc
// deep) fetches as it runs (RowsKernel::run_b_in_place), the next panel
// next_kc rows deep: rows [first, first + count), the panel cut into equal
// runs, one per tile, of at most what a tile fetches (FetchedRows(kc)).
struct FetchRows {
  int64_t first = 0, count = 0;
};
FetchRows InPlaceFetch(int64_t tile, int64_t tiles, int64_t next_kc, int64_t kc);

// Whether the row kernels read operands in place wherever they can (a B
// panel by every row tile; a longer A, InPlaceApplies) rather than pack
// them. That pays where the kernels wait on the FMAs with load slots to
// spare: AMD Zen4 runs the AVX-512 kernels' 512-bit FMAs as two 256-bit
// halves. Against packing, on Zen4: 32 x 784 x 128 1.05-1.06x, 256^3
// 1.04-1.07x, 512^3 1.02x (blocking.h has the rest). Where the FMA
// pipes are as wide as the vectors the loads are in the way and packing
// wins: on AMD Zen3 (AVX2; paired with oneDNN and OpenBLAS, medians of
// 3-6) reading in place ran 32 x 784 x 128 at 0.80-0.86x of the anchor
// against 0.95-0.96x packing B, 256^3 and 512^3 at 0.72-0.77x against
// 0.94-1.07x packed, the Keras MLP step 0.96x against 1.07-1.08x; on an
// Intel Xeon (Emerald Rapids class, AVX-512) the longer A in place ran
// 0.84-0.96x the packed driver (512^3 0.84-0.86x). Only these x86 cores
// were measured: others pack.
bool InPlaceReadsPay();

// Who decides whether SmallMGemm reads B in place: the host
// (InPlaceReadsPay), or the caller (tests cover both ways on any host).
enum class InPlaceReads { kIfTheyPay, kAlways, kNever };

// Gemm's contract, for products SmallMApplies or InPlaceApplies to.
void SmallMGemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
                ComputeUnits* units, InPlaceReads reads = InPlaceReads::kIfTheyPay);

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_SMALL_M_H_
