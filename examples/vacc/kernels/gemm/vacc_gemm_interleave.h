// SPDX-License-Identifier: Apache-2.0
//
// The inner loop of packing: `width` source rows, each contiguous, written
// interleaved (dst[k*width + r] = rows[r][k]), i.e. a transpose into a
// panel. Packing A (width MR: 6, 8 on AVX-512), a transposed B (width NR) and the
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

// A's panel widths (MR: 6, or 8 on AVX-512) with the width a constant, so
// the row loop unrolls and the row pointers stay in registers.
template <int kWidth, typename T>
void InterleaveFixedWidth(const T* const* rows, int64_t depth, float* dst) {
  const T* r[kWidth];
#pragma GCC unroll 8
  for (int i = 0; i < kWidth; ++i) r[i] = rows[i];
  for (int64_t k = 0; k < depth; ++k, dst += kWidth) {
#pragma GCC unroll 8
    for (int i = 0; i < kWidth; ++i) dst[i] = ToFloat(r[i][k]);
  }
}

template <typename T>
void InterleaveRows(const T* const* rows, int width, int64_t depth, float* dst) {
  if (width == 6) return InterleaveFixedWidth<6>(rows, depth, dst);
  if (width == 8) return InterleaveFixedWidth<8>(rows, depth, dst);
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
