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

// How an elementwise body's loop stores: plain stores, or streaming
// (non-temporal) ones in vectors of the target's width or of 256 bits
// (StreamingWidth, vacc_elementwise.h, says which and why).
enum StoreMode : int { kPlainStores, kStreamTargetVector, kStream256Bit };

// The vectors of a body's loop: the target's own, but at most 256 bits in
// kStream256Bit.
template <typename T, int kMode>
using BodyTag = std::conditional_t<kMode == kStream256Bit,
                                   hwy::HWY_NAMESPACE::CappedTag<T, 32 / sizeof(T)>,
                                   hwy::HWY_NAMESPACE::ScalableTag<T>>;

// v to p: a streaming (non-temporal) store, or a plain one. Streaming needs
// p aligned to the vector; WithStores checks that once and picks the mode
// for the whole loop.
template <bool kStream, class D, class V, typename T>
HWY_INLINE void StoreOut(V v, D d, T* HWY_RESTRICT p) {
  if constexpr (kStream) {
    hwy::HWY_NAMESPACE::Stream(v, d, p);
  } else {
    hwy::HWY_NAMESPACE::StoreU(v, d, p);
  }
}

// How many vectors StoreVectors stores per step.
enum class StepVectors {
  kPairs,    // two, back to back
  kOneLine,  // one where a vector is a 64-byte line (AVX-512), else two
};

// out[i .. i + lanes) = vec(i) for every full vector of out[0, n); returns
// where the full vectors end (the caller does the tail). Two vectors per
// step, stored back to back: streamed, a pair of 256-bit vectors fills a
// whole 64-byte line at once, and a 256 MiB Relu ran 5-8% faster on Zen3
// than one vector per step. With 512-bit vectors a vector is a line, and
// it depends on the operands, so the caller says (kSteps). Intel Xeon,
// streamed stores, a line per step against pairs: Relu (one input
// stream; paired rounds against the copy anchors) 1.01-1.02x, and 0.97x
// with pairs in a loop of its own (15.3-15.4 against 15.8-15.9 GB/s);
// AddV2 of two tensors (both inputs streamed; call by call in one
// process, 64 Mi floats, medians of 40 pairs, five runs) 1.00-1.03x at
// one unit (four runs of five 1.014-1.032x) and 0.99-1.04x at two, where
// paired rounds of an earlier build had read 2-6% slower; BiasAdd (its
// bias row from cache) 0.93-1.01x and 0.975-0.979x. So the unary bodies
// and BinaryBody with both inputs streamed take a line, a repeated row
// keeps pairs.
template <bool kStream, StepVectors kSteps = StepVectors::kPairs, class D, typename T,
          class Vec>
HWY_INLINE size_t StoreVectors(D d, T* out, size_t n, Vec&& vec) {
  const size_t lanes = hwy::HWY_NAMESPACE::Lanes(d);
  size_t i = 0;
  if (kSteps == StepVectors::kOneLine && lanes * sizeof(T) >= 64) {
    for (; i + lanes <= n; i += lanes) StoreOut<kStream>(vec(i), d, out + i);
    return i;
  }
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto v0 = vec(i), v1 = vec(i + lanes);
    StoreOut<kStream>(v0, d, out + i);
    StoreOut<kStream>(v1, d, out + i + lanes);
  }
  for (; i + lanes <= n; i += lanes) StoreOut<kStream>(vec(i), d, out + i);
  return i;
}

// Calls body(std::integral_constant<int, mode>{}) with the StoreMode for
// an output at `out`: streaming, at the host's width (CurrentStreamingWidth),
// when `stores` asks for it and every full vector of out, stepping from out
// itself, is aligned for it; plain stores otherwise. The body instantiates
// its loop with BodyTag<T, mode> and StoreOut<mode != kPlainStores>, so the
// choice is made once per call.
template <typename T, class Body>
HWY_INLINE void WithStores(int stores, const T* out, Body&& body) {
  if (static_cast<Stores>(stores) == Stores::kStreaming) {
    namespace hn = hwy::HWY_NAMESPACE;
    const bool narrow = CurrentStreamingWidth() == StreamingWidth::k256Bit;
    const size_t lanes = narrow ? hn::Lanes(BodyTag<T, kStream256Bit>())
                                : hn::Lanes(BodyTag<T, kStreamTargetVector>());
    const size_t bytes = lanes * sizeof(T);
    if (reinterpret_cast<uintptr_t>(out) % bytes == 0) {
      if (narrow) return body(std::integral_constant<int, kStream256Bit>{});
      return body(std::integral_constant<int, kStreamTargetVector>{});
    }
  }
  body(std::integral_constant<int, kPlainStores>{});
}

}  // namespace HWY_NAMESPACE
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#endif  // include guard
