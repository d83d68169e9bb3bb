// SPDX-License-Identifier: Apache-2.0
//
// Scratch memory for packed blocks, kept per thread between GEMMs:
// allocating (and page-faulting) megabytes per call would cost more than a
// small GEMM.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_BUFFER_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_BUFFER_H_

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace vacc {
namespace gemm {

class PackBuffer {
 public:
  // At least `floats` floats, 64-byte aligned; NULL when the host is out of
  // memory. Earlier contents are lost when it grows.
  float* Get(int64_t floats) {
    if (floats > size_) {
      const size_t bytes = (static_cast<size_t>(floats) * sizeof(float) + 63) / 64 * 64;
      data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      size_ = data_ ? floats : 0;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;
  int64_t size_ = 0;
};

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_BUFFER_H_
