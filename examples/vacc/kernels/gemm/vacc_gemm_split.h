// SPDX-License-Identifier: Apache-2.0
//
// What the GEMM drivers (vacc_gemm.cc, vacc_gemm_small_m.cc,
// vacc_gemm_conv_direct.cc) share for cutting work into blocks and handing
// them to the compute units.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_SPLIT_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_SPLIT_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "vacc_compute_units.h"

namespace vacc {
namespace gemm {

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// body(begin, end) over [0, n): split across `units` (items taken one by one,
// dynamically), or all on the calling thread when units is nullptr.
inline void ForEach(ComputeUnits* units, size_t n,
                    const std::function<void(size_t, size_t)>& body) {
  if (units == nullptr) {
    body(0, n);
  } else {
    units->ParallelFor(n, 1, body);
  }
}

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_SPLIT_H_
