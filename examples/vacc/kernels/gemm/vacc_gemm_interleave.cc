// SPDX-License-Identifier: Apache-2.0
//
// InterleaveRowsF32 (vacc_gemm_interleave.h): a transpose of `width` rows
// into a panel, in 4 x 4 blocks. Four rows' next four values are four
// 128-bit vectors; two rounds of interleaving turn them into the panel's
// next four k steps of those rows, stored as they are. A width of 4n + 2
// (A's MR = 6) ends with a pair of rows, interleaved once and stored as
// 64-bit halves. 128-bit blocks because their shuffles are the same on
// every target (on AVX2/AVX-512 wider shuffles cross 128-bit lanes).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm/vacc_gemm_interleave.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cstdint>

#include "kernels/gemm/vacc_gemm_interleave.h"

HWY_BEFORE_NAMESPACE();
namespace vacc {
namespace gemm {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void InterleaveRowsF32(const float* const* rows, int width, int64_t depth,
                       float* HWY_RESTRICT dst) {
  int64_t k = 0;
#if HWY_TARGET != HWY_SCALAR
  if (width % 2 == 0) {
    const hn::Full128<float> d;
    const hn::Half<decltype(d)> dh;
    for (; k + 4 <= depth; k += 4) {
      float* out = dst + k * width;
      int r = 0;
      for (; r + 4 <= width; r += 4) {
        const auto v0 = hn::LoadU(d, rows[r] + k), v1 = hn::LoadU(d, rows[r + 1] + k);
        const auto v2 = hn::LoadU(d, rows[r + 2] + k), v3 = hn::LoadU(d, rows[r + 3] + k);
        const auto lo01 = hn::InterleaveLower(d, v0, v1);  // a0 b0 a1 b1
        const auto lo23 = hn::InterleaveLower(d, v2, v3);  // c0 d0 c1 d1
        const auto hi01 = hn::InterleaveUpper(d, v0, v1);  // a2 b2 a3 b3
        const auto hi23 = hn::InterleaveUpper(d, v2, v3);  // c2 d2 c3 d3
        hn::StoreU(hn::ConcatLowerLower(d, lo23, lo01), d, out + r);              // a0 b0 c0 d0
        hn::StoreU(hn::ConcatUpperUpper(d, lo23, lo01), d, out + width + r);      // a1 b1 c1 d1
        hn::StoreU(hn::ConcatLowerLower(d, hi23, hi01), d, out + 2 * width + r);  // a2 ...
        hn::StoreU(hn::ConcatUpperUpper(d, hi23, hi01), d, out + 3 * width + r);  // a3 ...
      }
      if (r < width) {  // the last two rows
        const auto v0 = hn::LoadU(d, rows[r] + k), v1 = hn::LoadU(d, rows[r + 1] + k);
        const auto lo = hn::InterleaveLower(d, v0, v1);  // e0 f0 e1 f1
        const auto hi = hn::InterleaveUpper(d, v0, v1);  // e2 f2 e3 f3
        hn::StoreU(hn::LowerHalf(dh, lo), dh, out + r);
        hn::StoreU(hn::UpperHalf(dh, lo), dh, out + width + r);
        hn::StoreU(hn::LowerHalf(dh, hi), dh, out + 2 * width + r);
        hn::StoreU(hn::UpperHalf(dh, hi), dh, out + 3 * width + r);
      }
    }
  }
#endif
  // The last depth % 4 steps (or all, for an odd width or no SIMD).
  for (; k < depth; ++k) {
    for (int r = 0; r < width; ++r) dst[k * width + r] = rows[r][k];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace gemm
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vacc {
namespace gemm {

HWY_EXPORT(InterleaveRowsF32);

void InterleaveRowsF32(const float* const* rows, int width, int64_t depth, float* dst) {
  HWY_DYNAMIC_DISPATCH(InterleaveRowsF32)(rows, width, depth, dst);
}

}  // namespace gemm
}  // namespace vacc
#endif  // HWY_ONCE
