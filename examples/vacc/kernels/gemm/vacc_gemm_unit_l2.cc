// SPDX-License-Identifier: Apache-2.0
#include "kernels/gemm/vacc_gemm_unit_l2.h"

#include <unistd.h>

namespace vacc {
namespace gemm {

int64_t UnitL2Bytes() {
  // glibc answers from CPUID on x86; elsewhere it may not know (0 or -1).
  static const int64_t bytes = [] {
    const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return reported > 0 ? static_cast<int64_t>(reported) : kDefaultUnitL2Bytes;
  }();
  return bytes;
}

int64_t UnitL2PackedBFloats() { return UnitL2Bytes() / 2 / static_cast<int64_t>(sizeof(float)); }

}  // namespace gemm
}  // namespace vacc
