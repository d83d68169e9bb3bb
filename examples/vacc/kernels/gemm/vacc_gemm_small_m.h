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
// (LongerAInPlacePays): then nothing is packed.
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

// Whether the short-A path's row tiles each read a float32 B's panels in
// place rather than the first tile packing each panel for the others.
// That pays where the kernels wait on the FMAs with load slots to spare:
// the AVX-512 kernels (a B row is two 64-byte loads per 2 x 16 x R FMAs).
// Against packing: on AMD Zen4 (which runs 512-bit FMAs as two 256-bit
// halves) 32 x 784 x 128 1.05-1.06x; on an Intel Xeon (paired with
// oneDNN, builds alternating, two experiments, medians of 5 and 9) 32 x
// 784 x 128 from 0.904 to 1.000 of oneDNN at one unit both times, and
// from 0.966 and 0.953 to 1.022 and 1.040 at two. With AVX2 (Zen3,
// paired with oneDNN and OpenBLAS, medians of 3-6) the loads are in the
// way: 0.80-0.86x of the anchor against 0.95-0.96x packing B. Only these
// x86 cores were measured: others pack.
bool BInPlacePays();

// Whether Gemm also gives the short-A path a longer A that it can read in
// place (InPlaceApplies), rather than the packed driver. Only on AMD with
// the AVX-512 kernels: on Zen4 256^3 1.04-1.07x, 512^3 1.02x
// (blocking.h has the rest), while on an Intel Xeon the longer A in place
// ran 0.84-0.96x the packed driver (Emerald Rapids class; on a later one,
// paired with oneDNN, medians of 5: 512^3 0.963 -> 0.891 of oneDNN at one
// unit, the Keras MLP step's GEMMs 0.973 -> 0.848), and on Zen3 (AVX2)
// 256^3 and 512^3 ran 0.72-0.77x of the anchor against 0.94-1.07x packed.
bool LongerAInPlacePays();

// Who decides whether SmallMGemm reads B in place: the host
// (BInPlacePays), or the caller (tests cover both ways on any host).
enum class InPlaceReads { kIfTheyPay, kAlways, kNever };

// Gemm's contract, for products SmallMApplies or InPlaceApplies to.
void SmallMGemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
                ComputeUnits* units, InPlaceReads reads = InPlaceReads::kIfTheyPay);

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_SMALL_M_H_
