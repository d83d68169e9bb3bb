// SPDX-License-Identifier: Apache-2.0
#include "vacc_compute_units.h"

#include <pthread.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "vacc_shares.h"

namespace vacc {
namespace {

// The ComputeUnits the current thread belongs to, if any.
thread_local const ComputeUnits* t_units = nullptr;
// The ComputeUnits whose worker the current thread is (not one it only
// acts as a unit of), and its index there: a step it starts skips its own
// mailbox.
thread_local const ComputeUnits* t_worker_of = nullptr;
thread_local int t_worker_index = -1;

}  // namespace

ComputeUnits::ComputeUnits(int count, std::chrono::nanoseconds spin, const std::string& name)
    : spin_(spin), mailboxes_(new Mailbox[static_cast<size_t>(std::max(1, count))]) {
  workers_.reserve(static_cast<size_t>(std::max(1, count)));
  for (int i = 0; i < std::max(1, count); ++i) {
    workers_.emplace_back([this, i] { WorkerLoop(i); });
    // Named from here, not by the worker itself: it is named before any work
    // can reach it. Best effort: a name is a debugging aid, never an error.
    const std::string thread_name = (name + "-u" + std::to_string(i)).substr(0, 15);
    pthread_setname_np(workers_.back().native_handle(), thread_name.c_str());
  }
}

ComputeUnits::~ComputeUnits() {
  {
    std::lock_guard<std::mutex> lock(park_mu_);
    stop_ = true;
  }
  for (size_t w = 0; w < workers_.size(); ++w) mailboxes_[w].wake.notify_one();
  for (auto& w : workers_) w.join();
}

bool ComputeUnits::OnUnit() const { return t_units == this; }

ComputeUnits::ActingUnit::ActingUnit(const ComputeUnits* units) : previous_(t_units) {
  t_units = units;
}

ComputeUnits::ActingUnit::~ActingUnit() { t_units = previous_; }

void ComputeUnits::Submit(Task task) {
  size_t queued;
  {
    std::lock_guard<SpinLock> lock(queue_lock_);
    queue_.push_back(std::move(task));
    queued = queue_.size();
    queued_.store(queued, std::memory_order_seq_cst);
  }
  // Wake sleepers only when the spinning workers cannot take all the work
  // (most hand-overs then cost no system call), and then one per task they
  // cannot take. The mailboxes say who spins and who is parked (read after
  // queued_ is published: a worker parks only after it said so and found
  // queued_ still 0). A worker that says parked may be leaving its wait
  // already, having seen queued_: a wake-up sent to it is lost, but it
  // takes a task itself. Waking only the first parked worker, each Submit
  // could pick that same one, and a second task waited for a busy worker.
  size_t spinning = 0;
  for (size_t w = 0; w < workers_.size(); ++w) {
    spinning += mailboxes_[w].state.load(std::memory_order_seq_cst) == kSpinning ? 1 : 0;
  }
  for (size_t w = 0, to_wake = queued > spinning ? queued - spinning : 0;
       w < workers_.size() && to_wake > 0; ++w) {
    if (mailboxes_[w].state.load(std::memory_order_seq_cst) != kParked) continue;
    Wake(w);
    --to_wake;
  }
}

void ComputeUnits::Wake(size_t w) {
  std::lock_guard<std::mutex> lock(park_mu_);  // not between its check and its wait
  mailboxes_[w].wake.notify_one();
}

bool ComputeUnits::TryPop(Mailbox& box, Task* task) {
  if (queued_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<SpinLock> lock(queue_lock_);
  if (queue_.empty()) return false;
  // Busy before the task leaves the queue, under its lock: a Submit after
  // this pop then sees this worker busy. Marked after it, the worker could
  // still read as spinning to such a Submit, which counts on the spinning
  // workers to take its task and wakes nobody, and that task would wait for
  // a busy worker. (A window of a few instructions: no test catches it.)
  box.state.store(kBusy, std::memory_order_relaxed);
  *task = std::move(queue_.front());
  queue_.pop_front();
  queued_.store(queue_.size(), std::memory_order_seq_cst);
  return true;
}

void ComputeUnits::WorkerLoop(int index) {
  t_units = this;
  t_worker_of = this;
  t_worker_index = index;
  Mailbox& box = mailboxes_[static_cast<size_t>(index)];
  Task task;
  for (;;) {
    if (TakeStep(box)) continue;
    if (TryPop(box, &task)) {
      task();
      task = nullptr;  // release what the task captured before idling
      continue;
    }
    // Idle: spin for a while, then sleep until Submit or an offer wakes us.
    box.state.store(kSpinning, std::memory_order_relaxed);
    const bool more = SpinUntil(spin_, [this, &box] {
      return queued_.load(std::memory_order_acquire) > 0 ||
             IsOffer(box.job.load(std::memory_order_acquire));
    });
    if (more) continue;
    std::unique_lock<std::mutex> lock(park_mu_);
    box.state.store(kParked, std::memory_order_seq_cst);
    box.wake.wait(lock, [this, &box] {
      return stop_ || queued_.load(std::memory_order_seq_cst) > 0 ||
             IsOffer(box.job.load(std::memory_order_seq_cst));
    });
    box.state.store(kSpinning, std::memory_order_relaxed);  // awake, looking for work
    if (stop_ && queued_.load(std::memory_order_seq_cst) == 0) return;  // nothing left to run
  }
}

void ComputeUnits::ParallelFor(size_t n, size_t grain,
                               const std::function<void(size_t, size_t)>& body) {
  if (n == 0) return;
  grain = std::max<size_t>(grain, 1);
  // Up to 4 chunks per participant evens out uneven progress.
  const size_t participants = workers_.size() + (OnUnit() ? 0 : 1);
  RunChunks(n, std::min((n + grain - 1) / grain, 4 * participants), participants, body);
}

void ComputeUnits::ParallelForEachItem(size_t n,
                                       const std::function<void(size_t, size_t)>& body) {
  if (n == 0) return;
  RunChunks(n, n, workers_.size() + (OnUnit() ? 0 : 1), body);
}

// One parallel step, on its caller's stack. Its chunks are dealt as shares
// (vacc_shares.h): the caller is participant 0, and helper i of each call
// is the same worker while it is idle, so a range of the same size goes to
// the same thread call after call, and one op's output is in the cache of
// the core the next op reads it on.
struct alignas(64) ComputeUnits::Step {
  Step(size_t n, size_t chunks, int parts, const std::function<void(size_t, size_t)>* body)
      : n(n), chunks(chunks), body(body), shares(chunks, parts) {}
  void Run(int part) {
    for (size_t c; shares.Next(part, &c);) (*body)(c * n / chunks, (c + 1) * n / chunks);
  }
  const size_t n, chunks;
  const std::function<void(size_t, size_t)>* const body;
  Shares shares;
};

bool ComputeUnits::TakeStep(Mailbox& box) {
  uintptr_t job = box.job.load(std::memory_order_acquire);
  if (!IsOffer(job)) return false;
  // Busy before taking it, as in TryPop: a Submit must not count a worker
  // that is about to run a part (up to a whole GEMM share) as spinning.
  const State was = box.state.load(std::memory_order_relaxed);
  box.state.store(kBusy, std::memory_order_seq_cst);
  // Fails when the caller withdrew the offer (it finished without us).
  if (!box.job.compare_exchange_strong(job, job | kTaken, std::memory_order_acq_rel)) {
    box.state.store(was, std::memory_order_relaxed);
    return false;
  }
  reinterpret_cast<Step*>(job)->Run(box.part.load(std::memory_order_relaxed));
  // Looking for work again before its caller can see it left: that caller's
  // next step then offers this worker its part again, not another one.
  box.state.store(kSpinning, std::memory_order_relaxed);
  box.job.store(0, std::memory_order_release);  // the step's last use: its caller may return
  step_left_.Notify();
  return true;
}

void ComputeUnits::RunChunks(size_t n, size_t chunks, size_t participants,
                             const std::function<void(size_t, size_t)>& body) {
  if (chunks <= 1 || participants == 1) {
    body(0, n);
    return;
  }
  const int helpers = static_cast<int>(std::min(chunks - 1, participants - 1));
  Step step(n, chunks, helpers + 1, &body);
  const uintptr_t offer = reinterpret_cast<uintptr_t>(&step);
  const size_t boxes = workers_.size();
  const size_t own = t_worker_of == this ? static_cast<size_t>(t_worker_index) : boxes;
  // Parts 1..helpers go to workers whose mailbox is empty: spinning ones
  // first, then parked ones (waking one takes tens of microseconds), then
  // busy ones, which hold the offer until they are done or the caller
  // withdraws it.
  int part = 1;
  for (State pass : {kSpinning, kParked, kBusy}) {
    for (size_t w = 0; w < boxes && part <= helpers; ++w) {
      Mailbox& box = mailboxes_[w];
      if (w == own || box.state.load(std::memory_order_relaxed) != pass) continue;
      uintptr_t empty = 0;
      if (!box.job.compare_exchange_strong(empty, kReserved, std::memory_order_acquire)) continue;
      box.part.store(part++, std::memory_order_relaxed);
      box.job.store(offer, std::memory_order_seq_cst);
      if (box.state.load(std::memory_order_seq_cst) == kParked) Wake(w);  // that worker only
    }
  }
  step.Run(0);
  // Every chunk is taken: withdraw the offers nobody took, then wait for
  // the workers that did to leave the step. They hold chunks that are
  // short, unless a worker was preempted: then sleep rather than spin.
  for (size_t w = 0; w < boxes; ++w) {
    uintptr_t offered = offer;  // read first: a failed exchange still takes the line
    if (mailboxes_[w].job.load(std::memory_order_relaxed) == offer) {
      mailboxes_[w].job.compare_exchange_strong(offered, 0, std::memory_order_acq_rel);
    }
  }
  step_left_.Wait(spin_, [&] {
    for (size_t w = 0; w < boxes; ++w) {
      if (mailboxes_[w].job.load(std::memory_order_acquire) == (offer | kTaken)) return false;
    }
    return true;
  });
}

}  // namespace vacc
