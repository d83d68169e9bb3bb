// SPDX-License-Identifier: Apache-2.0
//
// The GEMM for a short A (a small batch: M up to kSmallMRows, such as
// 32 x 784 x 128). There the general driver's shared packing steps cost
// about as much as the product, and its pack-then-compute steps leave units
// waiting at barriers. This path splits the columns across units in a
// single step: each unit reads A in place (or packs it for itself: it is
// small), reads each B panel in place or packs it just before using it,
// and computes its own columns over all of K, with row tiles fitted to M.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_SMALL_M_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_SMALL_M_H_

#include <cstdint>

#include "kernels/gemm/vacc_gemm.h"

namespace vacc {
namespace gemm {

// True when SmallMGemm handles this product: A has at most kSmallMRows rows.
bool SmallMApplies(const PackableA& a);

// Gemm's contract, for products SmallMApplies to.
void SmallMGemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
                ComputeUnits* units);

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_SMALL_M_H_
