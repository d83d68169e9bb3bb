// SPDX-License-Identifier: Apache-2.0
//
// The inner loop of packing: `width` source rows, each contiguous, written
// interleaved (dst[k*width + r] = rows[r][k]), i.e. a transpose into a
// panel. Packing A (width MR = 6), a transposed B (width NR) and the
// im2col gather all come here. float32 takes the SIMD transpose of
// vacc_gemm_interleave.cc; bfloat16/half widen one value at a time.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_INTERLEAVE_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_INTERLEAVE_H_

#include <cstdint>

#include "kernels/vacc_half.h"

namespace vacc {
namespace gemm {

// float32 rows, with the SIMD target dispatch selects (4 x 4 transposes of
// 128-bit blocks, then a pair of rows when width is 4n + 2): A's panels of
// 6 pack 3-4x faster than one value at a time (the scalar loop was a tenth
// of a 256^3 GEMM on Zen4, and a quarter at 2 units).
void InterleaveRowsF32(const float* const* rows, int width, int64_t depth, float* dst);

template <typename T>
void InterleaveRows(const T* const* rows, int width, int64_t depth, float* dst) {
  if (width == 6) {
    const T *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3], *r4 = rows[4],
            *r5 = rows[5];
    for (int64_t k = 0; k < depth; ++k, dst += 6) {
      dst[0] = ToFloat(r0[k]);
      dst[1] = ToFloat(r1[k]);
      dst[2] = ToFloat(r2[k]);
      dst[3] = ToFloat(r3[k]);
      dst[4] = ToFloat(r4[k]);
      dst[5] = ToFloat(r5[k]);
    }
    return;
  }
  for (int64_t k = 0; k < depth; ++k, dst += width) {
    for (int r = 0; r < width; ++r) dst[r] = ToFloat(rows[r][k]);
  }
}

template <>
inline void InterleaveRows<float>(const float* const* rows, int width, int64_t depth,
                                  float* dst) {
  InterleaveRowsF32(rows, width, depth, dst);
}

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_INTERLEAVE_H_
