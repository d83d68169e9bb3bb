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

#include "hwy/cache_control.h"
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

// The inputs a body reads along with its output, element for element
// (NULL: none; a row repeated across rows, such as BiasAdd's bias, stays
// in cache and is not one of them).
template <typename T>
struct StreamedInputs {
  const T* first = nullptr;
  const T* second = nullptr;
};

// How far ahead of its loads a streamed loop fetches its inputs into L1
// (prefetcht0), a line per line stored. The hardware prefetcher alone left
// a 256 MiB Relu on an Intel Xeon (Ice Lake server class, one core, in
// one process alternating with the copy anchor's loop, medians of 15)
// at 0.95-0.96x of a streaming copy; fetching 1, 2, 4 and 8 KiB ahead it
// ran 1.02x, 1.07x, 1.07x and 1.07x (the copy itself, fetching 4 KiB
// ahead, 1.06x); into L2 only (prefetcht2) 0.95x, and prefetchnta 0.43x.
constexpr size_t kStreamFetchAheadBytes = 4096;

template <typename T>
HWY_INLINE void FetchAhead(const StreamedInputs<T>& in, size_t i) {
  constexpr size_t kAhead = kStreamFetchAheadBytes / sizeof(T);
  if (in.first != nullptr) hwy::Prefetch(in.first + i + kAhead);
  if (in.second != nullptr) hwy::Prefetch(in.second + i + kAhead);
}

// out[i .. i + lanes) = vec(i) for every full vector of out[0, n); returns
// where the full vectors end (the caller does the tail). Two vectors per
// step, stored back to back: streamed, a pair of 256-bit vectors fills a
// whole 64-byte line at once, and a 256 MiB Relu ran 5-8% faster on Zen3
// than one vector per step. With 512-bit vectors a vector is a line, and
// the caller says which (kSteps): the streamed bodies take a line per step
// (examples/vacc/README.md has the figures), cached ones keep pairs.
// Streamed, the loop also fetches `inputs` kStreamFetchAheadBytes ahead,
// one line of each per line stored.
template <bool kStream, StepVectors kSteps = StepVectors::kPairs, class D, typename T,
          class Vec>
HWY_INLINE size_t StoreVectors(D d, T* out, size_t n, const StreamedInputs<T>& inputs,
                               Vec&& vec) {
  const size_t lanes = hwy::HWY_NAMESPACE::Lanes(d);
  constexpr size_t kLine = 64 / sizeof(T);
  size_t i = 0;
  if (kSteps == StepVectors::kOneLine && lanes * sizeof(T) >= 64) {
    for (; i + lanes <= n; i += lanes) {
      if (kStream) FetchAhead(inputs, i);
      StoreOut<kStream>(vec(i), d, out + i);
    }
    return i;
  }
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    // Each line once: a step spans whole lines, or starts one every few steps
    // (vectors under 32 bytes).
    if (kStream && i % kLine < 2 * lanes) {
      for (size_t line = 0; line < 2 * lanes; line += kLine) FetchAhead(inputs, i + line);
    }
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
