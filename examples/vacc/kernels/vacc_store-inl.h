// SPDX-License-Identifier: Apache-2.0
//
// Per-target store helper of the elementwise bodies (Stores in
// vacc_elementwise.h), included inside each file's HWY_NAMESPACE. Highway's
// "-inl.h" convention: no include guard of the usual kind, one per target.
#if defined(VACC_KERNELS_VACC_STORE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef VACC_KERNELS_VACC_STORE_INL_H_
#undef VACC_KERNELS_VACC_STORE_INL_H_
#else
#define VACC_KERNELS_VACC_STORE_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace vacc {
namespace HWY_NAMESPACE {

// v to p: a streaming (non-temporal) store, or a plain one. Streaming needs
// p aligned to the vector; the caller checks that once (CanStream) and
// picks kStream for the whole loop.
template <bool kStream, class D, class V, typename T>
HWY_INLINE void StoreOut(V v, D d, T* HWY_RESTRICT p) {
  if constexpr (kStream) {
    hwy::HWY_NAMESPACE::Stream(v, d, p);
  } else {
    hwy::HWY_NAMESPACE::StoreU(v, d, p);
  }
}

// Whether every full vector of out, stepping from out itself, is aligned.
template <class D, typename T>
HWY_INLINE bool CanStream(D d, const T* out) {
  return reinterpret_cast<uintptr_t>(out) % (hwy::HWY_NAMESPACE::Lanes(d) * sizeof(T)) == 0;
}

}  // namespace HWY_NAMESPACE
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#endif  // include guard
