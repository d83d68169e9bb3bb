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
// can be read in place (InPlaceApplies): then nothing is packed.
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

// Gemm's contract, for products SmallMApplies or InPlaceApplies to.
void SmallMGemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
                ComputeUnits* units);

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_SMALL_M_H_
