// SPDX-License-Identifier: Apache-2.0
//
// The GEMM for a narrow B (few columns: N up to NarrowBCols(), such as a
// 1x1 Conv2D's 6272 x 256 x 128 on AVX-512 or a classifier's 256 x 512 x
// 10). There each row of A meets only a few B panels, so the general
// driver's packing of A (a read and a write of all of A) is not paid back,
// and with N = 10 it costs as much as the product. This path packs all of B once (it is
// small), then splits the rows of A across units in one step: each reads
// its rows in place (or packs them for itself, if A is transposed or 16-bit)
// and computes them against every panel over all of K.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_NARROW_B_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_NARROW_B_H_

#include "kernels/gemm/vacc_gemm.h"

namespace vacc {
namespace gemm {

// The most columns of B the narrow-B path takes on the target dispatch
// selects now: kNarrowBCols where the row kernels have panel pairs
// (AVX-512), kNarrowBColsWithoutPairs elsewhere (vacc_gemm_blocking.h).
int64_t NarrowBCols();

// True when NarrowBGemm handles this product: B has at most NarrowBCols()
// columns and A more rows than the short-A path takes.
bool NarrowBApplies(const PackableA& a, const Matrix& b);

// Gemm's contract, for products NarrowBApplies to.
void NarrowBGemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
                 ComputeUnits* units);

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_NARROW_B_H_
