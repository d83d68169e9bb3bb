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
#include <type_traits>

#include "kernels/vacc_elementwise.h"

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace vacc {
namespace HWY_NAMESPACE {

// The vectors of an elementwise body's loop: the target's own, but with
// streaming stores at most 256 bits. On Zen4 (AVX-512 run as two 256-bit
// halves) a DRAM-sized BiasAdd and Relu on one unit ran ~5% faster with
// 256-bit vectors (medians of 6 alternating runs: 1.04-1.05x; AddV2 1.01x),
// and a plain loop showed the same: a bias add streamed at 0.87-0.88x a
// copy's rate with zmm, 0.94-0.96x with ymm. (Why is not known; the loads
// and stores are the same bytes either way.)
template <typename T, bool kStream>
using BodyTag = std::conditional_t<kStream, hwy::HWY_NAMESPACE::CappedTag<T, 32 / sizeof(T)>,
                                   hwy::HWY_NAMESPACE::ScalableTag<T>>;

// v to p: a streaming (non-temporal) store, or a plain one. Streaming needs
// p aligned to the vector; WithStores checks that once and picks kStream
// for the whole loop.
template <bool kStream, class D, class V, typename T>
HWY_INLINE void StoreOut(V v, D d, T* HWY_RESTRICT p) {
  if constexpr (kStream) {
    hwy::HWY_NAMESPACE::Stream(v, d, p);
  } else {
    hwy::HWY_NAMESPACE::StoreU(v, d, p);
  }
}

// out[i .. i + lanes) = vec(i) for every full vector of out[0, n); returns
// where the full vectors end (the caller does the tail). Two vectors per
// step, stored back to back: streamed, a pair fills a whole 64-byte line
// at once, and a 256 MiB Relu ran 5-8% faster on Zen3 than one vector per
// step (the STREAM-style anchor loop in bench/ does the same).
template <bool kStream, class D, typename T, class Vec>
HWY_INLINE size_t StoreVectors(D d, T* out, size_t n, Vec&& vec) {
  const size_t lanes = hwy::HWY_NAMESPACE::Lanes(d);
  size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto v0 = vec(i), v1 = vec(i + lanes);
    StoreOut<kStream>(v0, d, out + i);
    StoreOut<kStream>(v1, d, out + i + lanes);
  }
  for (; i + lanes <= n; i += lanes) StoreOut<kStream>(vec(i), d, out + i);
  return i;
}

// Calls body(std::true_type{}) when `stores` asks for streaming and every
// full vector of out, stepping from out itself, is aligned for it (d: the
// streaming loop's vectors, BodyTag<T, true>), and
// body(std::false_type{}) otherwise: the body instantiates its loop with
// StoreOut<decltype(flag)::value>, so the choice is made once per call.
template <class D, typename T, class Body>
HWY_INLINE void WithStores(int stores, D d, const T* out, Body&& body) {
  const bool aligned =
      reinterpret_cast<uintptr_t>(out) % (hwy::HWY_NAMESPACE::Lanes(d) * sizeof(T)) == 0;
  if (static_cast<Stores>(stores) == Stores::kStreaming && aligned) {
    body(std::true_type{});
  } else {
    body(std::false_type{});
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#endif  // include guard
