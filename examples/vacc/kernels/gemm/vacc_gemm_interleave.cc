// SPDX-License-Identifier: Apache-2.0
//
// InterleaveRowsF32 (vacc_gemm_interleave.h): a transpose of `width` rows
// into a panel, in 4 x 4 blocks. Four rows' next four values are four
// 128-bit vectors; two rounds of interleaving turn them into the panel's
// next four k steps of those rows, stored as they are. A width of 4n + 2
// (A's MR = 6 on AVX2) ends with a pair of rows, interleaved once and stored as
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

#if HWY_TARGET != HWY_SCALAR
// Four rows' values k..k+3 (128-bit loads) to the panel's k steps k..k+3,
// lanes r..r+3 (or, with kPair, two rows to lanes r, r+1).
template <bool kPair>
HWY_INLINE void TransposeBlock(const float* const* rows, int r, int64_t k, int width,
                               float* HWY_RESTRICT out) {
  const hn::Full128<float> d;
  const hn::Half<decltype(d)> dh;
  const auto v0 = hn::LoadU(d, rows[r] + k), v1 = hn::LoadU(d, rows[r + 1] + k);
  const auto lo01 = hn::InterleaveLower(d, v0, v1);  // a0 b0 a1 b1
  const auto hi01 = hn::InterleaveUpper(d, v0, v1);  // a2 b2 a3 b3
  if (kPair) {
    hn::StoreU(hn::LowerHalf(dh, lo01), dh, out + r);
    hn::StoreU(hn::UpperHalf(dh, lo01), dh, out + width + r);
    hn::StoreU(hn::LowerHalf(dh, hi01), dh, out + 2 * width + r);
    hn::StoreU(hn::UpperHalf(dh, hi01), dh, out + 3 * width + r);
    return;
  }
  const auto v2 = hn::LoadU(d, rows[r + 2] + k), v3 = hn::LoadU(d, rows[r + 3] + k);
  const auto lo23 = hn::InterleaveLower(d, v2, v3);  // c0 d0 c1 d1
  const auto hi23 = hn::InterleaveUpper(d, v2, v3);  // c2 d2 c3 d3
  hn::StoreU(hn::ConcatLowerLower(d, lo23, lo01), d, out + r);              // a0 b0 c0 d0
  hn::StoreU(hn::ConcatUpperUpper(d, lo23, lo01), d, out + width + r);      // a1 b1 c1 d1
  hn::StoreU(hn::ConcatLowerLower(d, hi23, hi01), d, out + 2 * width + r);  // a2 ...
  hn::StoreU(hn::ConcatUpperUpper(d, hi23, hi01), d, out + 3 * width + r);  // a3 ...
}

// Values [k0, k0 + 16) of every row, a cache line each: four rows (or the
// last pair) at a time, each over the whole line before the next.
HWY_INLINE void TransposeLine(const float* const* rows, int width, int64_t k0,
                              float* HWY_RESTRICT dst) {
  int r = 0;
  for (; r + 4 <= width; r += 4) {
    for (int64_t k = k0; k < k0 + 16; k += 4) {
      TransposeBlock<false>(rows, r, k, width, dst + k * width);
    }
  }
  if (r < width) {  // the last two rows
    for (int64_t k = k0; k < k0 + 16; k += 4) {
      TransposeBlock<true>(rows, r, k, width, dst + k * width);
    }
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

void InterleaveRowsF32(const float* const* rows, int width, int64_t depth,
                       float* HWY_RESTRICT dst) {
  int64_t k = 0;
#if HWY_TARGET != HWY_SCALAR
  if (width % 2 == 0) {
    // Rows a multiple of 1 KiB apart share a few of L1's sets (Zen4: 64
    // sets of 8 ways; rows 2 KiB apart use 2 sets per line offset), and
    // with k the inner loop over all the rows (a 4 x 4 block of every row
    // for each 4 k steps) NR = 32 rows' lines evict each other before
    // their next block: such rows go a line (16 values) at a time, all its
    // blocks before the next rows'. Packing a transposed 512 x 512 B (rows
    // 2 KiB apart) on Zen4: 41 us against 72. Other rows keep k inner,
    // which keeps every row's stream in flight at once (rows 784 floats
    // apart: 48 us against 52 a line at a time).
    const int64_t row_bytes =
        width > 1 ? (rows[1] - rows[0]) * static_cast<int64_t>(sizeof(float)) : 0;
    const bool aliasing = row_bytes != 0 && row_bytes % 1024 == 0;
    const int64_t k4 = depth / 4 * 4;
    if (aliasing) {
      for (; k + 16 <= k4; k += 16) TransposeLine(rows, width, k, dst);
    }
    for (; k < k4; k += 4) {  // all of k, or what is left of the lines
      float* out = dst + k * width;
      int r = 0;
      for (; r + 4 <= width; r += 4) TransposeBlock<false>(rows, r, k, width, out);
      if (r < width) TransposeBlock<true>(rows, r, k, width, out);  // the last two rows
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
