// SPDX-License-Identifier: Apache-2.0
#include "vacc_copy.h"

#include <algorithm>
#include <cstring>

namespace vacc {
namespace {

// Below this, splitting costs more than it saves.
constexpr uint64_t kParallelCopyBytes = uint64_t{4} << 20;
constexpr uint64_t kCopyChunkBytes = uint64_t{1} << 20;

}  // namespace

void Copy(ComputeUnits& units, void* dst, const void* src, uint64_t size) {
  if (size < kParallelCopyBytes || !units.OnUnit()) {
    std::memcpy(dst, src, size);
    return;
  }
  units.ParallelFor(size / kCopyChunkBytes + 1, 1, [&](size_t begin, size_t end) {
    const uint64_t from = begin * kCopyChunkBytes;
    const uint64_t to = std::min<uint64_t>(end * kCopyChunkBytes, size);
    if (from < to) {
      std::memcpy(static_cast<char*>(dst) + from, static_cast<const char*>(src) + from, to - from);
    }
  });
}

}  // namespace vacc
