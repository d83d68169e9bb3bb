// SPDX-License-Identifier: Apache-2.0
//
// How a parallel step hands out its items (ComputeUnits::ParallelFor, the
// GEMM's row chunks): as shares, one per participant, with stealing.
#ifndef VACC_SHARES_H_
#define VACC_SHARES_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace vacc {

// Items [0, n) dealt out as `parts` contiguous shares, one per participant
// of a parallel step. Each participant takes its own share from the front;
// once it is empty, it takes from the back of whichever share has most
// left. Participant p thus works on the same items (rows of C, a range of
// an elementwise op's tensor) call after call and op after op, so their
// cache lines stay in its core's caches instead of moving between cores,
// and the step still ends together when one is slowed or never starts.
// n < 2^32 (a share's front and back share one atomic word). The shares'
// words share cache lines: one line each (and counting a unit's finished
// chunks once, not per chunk) measured the same on the stem at two units.
class Shares {
 public:
  Shares(size_t n, int parts) : parts_(parts), ranges_(new std::atomic<uint64_t>[parts]) {
    for (int p = 0; p < parts; ++p) {
      const uint64_t front = n * static_cast<size_t>(p) / static_cast<size_t>(parts);
      const uint64_t back = n * static_cast<size_t>(p + 1) / static_cast<size_t>(parts);
      ranges_[p].store(front | back << 32, std::memory_order_relaxed);
    }
  }
  // The next item for participant p; false when every share is empty.
  bool Next(int p, size_t* item) {
    if (Take(p, /*from_back=*/false, item)) return true;
    for (;;) {
      int victim = -1;
      uint64_t most = 0;
      for (int q = 0; q < parts_; ++q) {
        const uint64_t r = ranges_[q].load(std::memory_order_acquire);
        const uint64_t left = (r >> 32) - (r & 0xffffffffu);
        if ((r >> 32) > (r & 0xffffffffu) && left > most) {
          most = left;
          victim = q;
        }
      }
      if (victim < 0) return false;
      if (Take(victim, /*from_back=*/true, item)) return true;
    }
  }

 private:
  // One item off share q's front or back; false if it is empty.
  bool Take(int q, bool from_back, size_t* item) {
    uint64_t r = ranges_[q].load(std::memory_order_acquire);
    for (;;) {
      const uint64_t front = r & 0xffffffffu, back = r >> 32;
      if (front >= back) return false;
      const uint64_t next = from_back ? front | (back - 1) << 32 : (front + 1) | back << 32;
      if (ranges_[q].compare_exchange_weak(r, next, std::memory_order_acq_rel)) {
        *item = static_cast<size_t>(from_back ? back - 1 : front);
        return true;
      }
    }
  }

  const int parts_;
  std::unique_ptr<std::atomic<uint64_t>[]> ranges_;  // front | back << 32
};

}  // namespace vacc

#endif  // VACC_SHARES_H_
