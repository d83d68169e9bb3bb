// SPDX-License-Identifier: Apache-2.0
//
// A device's compute units: worker threads that run what streams hand them
// (a stream's queued operations, or chunks of a kernel split with
// ParallelFor). TODO(vendor): on real hardware the device runs the work; the
// host side keeps only the queues (vacc_stream.h).
//
// Idle workers spin for a bounded time before they sleep: handing work to a
// spinning thread costs ~0.3 us (Mailbox below), waking a sleeping one tens
// of microseconds, and a device nobody uses must not burn CPU.
#ifndef VACC_COMPUTE_UNITS_H_
#define VACC_COMPUTE_UNITS_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "vacc_spin_lock.h"
#include "vacc_wait.h"

namespace vacc {

class ComputeUnits {
 public:
  using Task = std::function<void()>;

  // Worker i is named "<name>-u<i>" (cut to the 15 characters Linux keeps),
  // so that top, perf and gdb tell the device's threads from TensorFlow's:
  // unnamed, they show as the process ("python").
  ComputeUnits(int count, std::chrono::nanoseconds spin, const std::string& name = "vacc");
  // Runs every task already submitted, then joins the workers.
  ~ComputeUnits();
  ComputeUnits(const ComputeUnits&) = delete;
  ComputeUnits& operator=(const ComputeUnits&) = delete;

  int size() const { return static_cast<int>(workers_.size()); }
  // How long a unit spins for more work, or for another unit, before it
  // sleeps (VACC_SPIN_US).
  std::chrono::nanoseconds spin() const { return spin_; }

  // Runs `task` on some unit, soon. Thread-safe; never blocks on other work.
  void Submit(Task task);

  // Runs body(begin, end) over [0, n) in chunks of at least `grain` items, on
  // the calling thread and on idle units, and returns when every chunk is
  // done. The caller works too, so this finishes even when every unit is
  // busy (or when called from a unit). The chunks are dealt as shares
  // (vacc_shares.h): the caller's share is the first, and each thread takes
  // its own before it takes what another has not started, so the same range
  // runs on the same thread from one call (one op) to the next.
  void ParallelFor(size_t n, size_t grain, const std::function<void(size_t, size_t)>& body);
  // ParallelFor for a few large items (GEMM tiles): each item is its own
  // chunk, so the last thread to finish waits for at most one item instead
  // of a quarter of a participant's share.
  void ParallelForEachItem(size_t n, const std::function<void(size_t, size_t)>& body);

  // True when called from one of this device's units (or from a thread
  // acting as one, below).
  bool OnUnit() const;

  // While alive, the constructing thread counts as one of these units: it
  // runs device work itself (Stream::RunAndWait), so ParallelFor hands work
  // to size() - 1 helpers, not size(), and the device still uses at most
  // size() threads. Scopes nest; each restores what it found.
  class ActingUnit {
   public:
    explicit ActingUnit(const ComputeUnits* units);
    ~ActingUnit();
    ActingUnit(const ActingUnit&) = delete;
    ActingUnit& operator=(const ActingUnit&) = delete;

   private:
    const ComputeUnits* const previous_;
  };

 private:
  struct Step;
  // Where a parallel step (RunChunks) offers a worker one of its parts: a
  // cache line of the worker's own, which it polls while idle. Handing work
  // out through Submit's queue cost ~0.5 us on the caller (a lock and a
  // std::function on lines the spinning workers read) and started the
  // helper ~0.6 us after it, as each pointer it followed was another line
  // from the caller's core; with mailboxes 0.2 and 0.3 us (Intel Xeon, 2
  // units, 50 us bodies, medians; examples/vacc/README.md).
  // job: 0 (empty), kReserved (a caller is writing part), a Step's
  // address (offered; part says which), or that address | kTaken (the
  // worker runs it; it stores 0 once it is done with the step).
  // state says what the worker is doing, so offers go to spinning workers
  // first, then to parked ones (which must be woken), and only then to
  // busy ones (running a stream's operations, or another step), which
  // take an offer only once they are done.
  enum State { kBusy, kSpinning, kParked };
  struct alignas(64) Mailbox {
    std::atomic<uintptr_t> job{0};
    std::atomic<int> part{0};
    std::atomic<State> state{kSpinning};  // a new worker looks for work first
    // Where this worker parks (waited on under park_mu_). Its own, so an
    // offer or a Submit wakes the worker it is for (see park_mu_).
    std::condition_variable wake;
  };
  static constexpr uintptr_t kReserved = 2;  // a Step is 64-byte aligned
  static constexpr uintptr_t kTaken = 1;
  static bool IsOffer(uintptr_t job) { return job > kReserved && (job & kTaken) == 0; }

  void WorkerLoop(int index);
  // Takes the oldest queued task, if any, and marks `box` busy.
  bool TryPop(Mailbox& box, Task* task);
  // Runs the step offered in `box`, if any; false if there was none.
  bool TakeStep(Mailbox& box);
  // Wakes worker w if it waits on its mailbox's condition variable.
  void Wake(size_t w);
  // Runs body over [0, n) cut into `chunks` ranges, taken dynamically.
  void RunChunks(size_t n, size_t chunks, size_t participants,
                 const std::function<void(size_t, size_t)>& body);

  const std::chrono::nanoseconds spin_;
  SpinLock queue_lock_;
  std::deque<Task> queue_;          // guarded by queue_lock_
  std::atomic<size_t> queued_{0};   // queue_.size(), readable without the lock
  // Parking. A worker says so in its mailbox (kParked) and re-checks
  // queued_ and its mailbox under park_mu_ before it waits on its own
  // condition variable (Mailbox::wake); Submit publishes queued_, and an offer its
  // job, before reading the mailboxes' states (all sequentially
  // consistent), so a wake-up is never lost. The states are the only count
  // of spinning and parked workers: counters beside them were two more
  // writes to a line all workers share, on every step. One condition
  // variable per worker, so that an offer wakes the worker it is for and
  // Submit one parked worker: with one for all, an offer woke every parked
  // worker, and each of the others spun for its budget (VACC_SPIN_US) and
  // parked again.
  std::mutex park_mu_;
  bool stop_ = false;               // guarded by park_mu_
  std::unique_ptr<Mailbox[]> mailboxes_;  // one per worker
  WaitPoint step_left_;             // a worker left a step: its caller may be done
  std::vector<std::thread> workers_;
};

}  // namespace vacc

#endif  // VACC_COMPUTE_UNITS_H_
