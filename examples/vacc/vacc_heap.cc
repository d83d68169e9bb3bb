// SPDX-License-Identifier: Apache-2.0
#include "vacc_heap.h"

#include <sys/mman.h>

#include <algorithm>

namespace vacc {
namespace {
// Freed blocks at least this large give their pages back to the OS, so the
// process's memory use follows the device's.
constexpr uint64_t kReleaseThreshold = uint64_t{1} << 20;
}  // namespace

DeviceHeap::DeviceHeap(uint64_t capacity) {
  capacity = capacity / kAlignment * kAlignment;
  void* p = mmap(nullptr, capacity, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (capacity == 0 || p == MAP_FAILED) return;
  base_ = static_cast<char*>(p);
  capacity_ = capacity;
  AddFree(0, capacity);
  stats_.bytes_limit = static_cast<int64_t>(capacity);
}

DeviceHeap::~DeviceHeap() {
  if (base_ != nullptr) munmap(base_, capacity_);
}

void DeviceHeap::AddFree(Offset offset, uint64_t length) {
  free_by_offset_.emplace(offset, length);
  free_by_size_.emplace(length, offset);
}

void DeviceHeap::RemoveFree(Offset offset, uint64_t length) {
  free_by_offset_.erase(offset);
  free_by_size_.erase({length, offset});
}

void* DeviceHeap::Allocate(uint64_t size) {
  if (size == 0 || size > capacity_) return nullptr;
  const uint64_t length = (size + kAlignment - 1) / kAlignment * kAlignment;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = free_by_size_.lower_bound({length, 0});
  if (it == free_by_size_.end()) return nullptr;
  const auto [free_length, offset] = *it;
  RemoveFree(offset, free_length);
  if (free_length > length) AddFree(offset + length, free_length - length);
  live_.emplace(offset, Block{length, size});

  stats_.num_allocs += 1;
  stats_.live_allocs += 1;
  stats_.bytes_in_use += static_cast<int64_t>(size);
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  stats_.largest_alloc_size = std::max(stats_.largest_alloc_size, static_cast<int64_t>(size));
  stats_.bytes_reserved += static_cast<int64_t>(length);
  stats_.peak_bytes_reserved = std::max(stats_.peak_bytes_reserved, stats_.bytes_reserved);
  return base_ + offset;
}

bool DeviceHeap::Deallocate(void* p) {
  if (!Owns(p)) return false;
  const Offset offset = static_cast<Offset>(static_cast<char*>(p) - base_);
  std::lock_guard<std::mutex> lock(mu_);
  auto live = live_.find(offset);
  if (live == live_.end()) return false;
  const Block block = live->second;
  live_.erase(live);
  stats_.live_allocs -= 1;
  stats_.bytes_in_use -= static_cast<int64_t>(block.requested);
  stats_.bytes_reserved -= static_cast<int64_t>(block.length);

  // Coalesce with the free neighbours on both sides.
  Offset start = offset;
  uint64_t length = block.length;
  auto next = free_by_offset_.lower_bound(offset);
  if (next != free_by_offset_.end() && next->first == offset + length) {
    const auto [o, l] = *next;
    RemoveFree(o, l);
    length += l;
  }
  auto prev = free_by_offset_.lower_bound(offset);
  if (prev != free_by_offset_.begin()) {
    --prev;
    if (prev->first + prev->second == offset) {
      const auto [o, l] = *prev;
      RemoveFree(o, l);
      start = o;
      length += l;
    }
  }
  AddFree(start, length);
  if (block.length >= kReleaseThreshold) madvise(base_ + offset, block.length, MADV_DONTNEED);
  return true;
}

bool DeviceHeap::Owns(const void* p) const {
  const char* c = static_cast<const char*>(p);
  return base_ != nullptr && c >= base_ && c < base_ + capacity_;
}

bool DeviceHeap::Contains(const void* p, uint64_t n) const {
  if (!Owns(p)) return false;
  const Offset offset = static_cast<Offset>(static_cast<const char*>(p) - base_);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.upper_bound(offset);  // first block starting after p
  if (it == live_.begin()) return false;
  --it;
  const Offset end = it->first + it->second.requested;
  return offset < end ? n <= end - offset : n == 0 && offset == end;
}

HeapStats DeviceHeap::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  HeapStats s = stats_;
  s.largest_free_block_bytes =
      free_by_size_.empty() ? 0 : static_cast<int64_t>(free_by_size_.rbegin()->first);
  return s;
}

}  // namespace vacc
