// SPDX-License-Identifier: Apache-2.0
//
// The work split RunUnary and RunBinary share (vacc_elementwise.h,
// ParallelElementwise): chunks across the compute units, streaming stores
// for outputs too big to stay in cache, fenced per chunk; and the width of
// those stores' vectors for this host (CurrentStreamingWidth).
#include <atomic>
#include <cstddef>
#include <functional>

#include "hwy/cache_control.h"
#include "kernels/vacc_elementwise.h"
#include "kernels/vacc_simd.h"
#include "vacc_compute_units.h"

namespace vacc {
namespace {

std::atomic<int>& StreamingWidthChoice() {
  static std::atomic<int> width{static_cast<int>(
      HostCpuIsAmd() ? StreamingWidth::k256Bit : StreamingWidth::kTargetVector)};
  return width;
}

}  // namespace

StreamingWidth CurrentStreamingWidth() {
  return static_cast<StreamingWidth>(StreamingWidthChoice().load(std::memory_order_relaxed));
}

void SetStreamingWidth(StreamingWidth width) {
  StreamingWidthChoice().store(static_cast<int>(width), std::memory_order_relaxed);
}

void ParallelElementwise(ComputeUnits& units, size_t n, size_t element_size,
                         const std::function<void(size_t, size_t, Stores)>& body) {
  const Stores stores = StoresFor(n * element_size);
  units.ParallelFor(n, kElementwiseGrain, [&](size_t begin, size_t end) {
    body(begin, end, stores);
    // Streamed stores reach memory before the unit reports the chunk done.
    if (stores == Stores::kStreaming) hwy::FlushStream();
  });
}

}  // namespace vacc
