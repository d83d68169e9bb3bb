// SPDX-License-Identifier: Apache-2.0
// MatMul with transpose_a / transpose_b. See reference.h.
#include <cstdint>

#include "reference.h"

namespace tfp_reference {

namespace {
template <typename T> struct Accumulator { using type = T; };
template <> struct Accumulator<float> { using type = double; };
}  // namespace

template <typename T>
void MatMul(const T* a, const T* b, int64_t m, int64_t k, int64_t n, bool transpose_a,
            bool transpose_b, T* c) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      typename Accumulator<T>::type acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        const T av = transpose_a ? a[p * m + i] : a[i * k + p];  // op(a)[i,p]
        const T bv = transpose_b ? b[j * k + p] : b[p * n + j];  // op(b)[p,j]
        acc += static_cast<typename Accumulator<T>::type>(av) * bv;
      }
      c[i * n + j] = static_cast<T>(acc);
    }
  }
}

template void MatMul<float>(const float*, const float*, int64_t, int64_t, int64_t, bool, bool,
                            float*);
template void MatMul<int32_t>(const int32_t*, const int32_t*, int64_t, int64_t, int64_t, bool,
                              bool, int32_t*);

}  // namespace tfp_reference
