// SPDX-License-Identifier: Apache-2.0
//
// One device's memory: a separate address range of fixed capacity, as an
// accelerator's memory is, with exact accounting. TODO(vendor): on real
// hardware, device memory comes from the driver; keep the accounting.
#ifndef VACC_HEAP_H_
#define VACC_HEAP_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <utility>

namespace vacc {

struct HeapStats {
  int64_t num_allocs = 0;           // allocations made so far
  int64_t live_allocs = 0;          // allocations not yet freed
  int64_t bytes_in_use = 0;         // sum of the sizes asked for, live ones
  int64_t peak_bytes_in_use = 0;
  int64_t largest_alloc_size = 0;   // largest size ever asked for
  int64_t bytes_limit = 0;          // the capacity
  int64_t bytes_reserved = 0;       // bytes the live blocks occupy (rounded up)
  int64_t peak_bytes_reserved = 0;
  int64_t largest_free_block_bytes = 0;
};

class DeviceHeap {
 public:
  // Blocks are multiples of kAlignment, and so aligned: enough for any SIMD
  // load and what TensorFlow expects of tensor buffers.
  static constexpr uint64_t kAlignment = 64;

  // Reserves `capacity` bytes of address space (committed page by page as
  // it is touched). ok() is false if even the reservation failed.
  explicit DeviceHeap(uint64_t capacity);
  ~DeviceHeap();
  DeviceHeap(const DeviceHeap&) = delete;
  DeviceHeap& operator=(const DeviceHeap&) = delete;

  bool ok() const { return base_ != nullptr; }
  uint64_t capacity() const { return capacity_; }

  // Best fit. nullptr when size is 0 or no free block is large enough.
  // TODO(vendor): the driver's device-memory allocation.
  void* Allocate(uint64_t size);
  // False if p is not the start of a live allocation (nothing changes then).
  bool Deallocate(void* p);
  // True if [p, p + n) lies inside one live allocation.
  bool Contains(const void* p, uint64_t n) const;
  // True if p points into this heap's address range at all.
  bool Owns(const void* p) const;

  HeapStats Stats() const;

 private:
  using Offset = uint64_t;
  void AddFree(Offset offset, uint64_t length);
  void RemoveFree(Offset offset, uint64_t length);

  char* base_ = nullptr;
  uint64_t capacity_ = 0;
  mutable std::mutex mu_;
  std::map<Offset, uint64_t> free_by_offset_;             // offset -> length
  std::set<std::pair<uint64_t, Offset>> free_by_size_;    // (length, offset)
  struct Block {
    uint64_t length;     // rounded to kAlignment
    uint64_t requested;  // what the caller asked for
  };
  std::map<Offset, Block> live_;
  HeapStats stats_;
};

}  // namespace vacc

#endif  // VACC_HEAP_H_
