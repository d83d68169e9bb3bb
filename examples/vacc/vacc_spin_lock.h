// SPDX-License-Identifier: Apache-2.0
//
// A lock for the few-instruction critical sections of the work queues. A
// std::mutex that is contended puts the loser to sleep in the kernel (a
// futex wait and wake, microseconds); here the loser spins for the few
// nanoseconds the holder needs, and yields the CPU if the holder was
// preempted (on a busy machine the holder may be waiting for our core).
#ifndef VACC_SPIN_LOCK_H_
#define VACC_SPIN_LOCK_H_

#include <atomic>
#include <thread>

namespace vacc {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#else
  std::this_thread::yield();
#endif
}

class SpinLock {
 public:
  void lock() {
    for (int spins = 0; locked_.exchange(true, std::memory_order_acquire); ++spins) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < 64) {
          CpuRelax();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace vacc

#endif  // VACC_SPIN_LOCK_H_
