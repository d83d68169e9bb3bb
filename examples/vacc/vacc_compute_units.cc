// SPDX-License-Identifier: Apache-2.0
#include "vacc_compute_units.h"

#include <pthread.h>

#include <algorithm>
#include <memory>

#include "vacc_shares.h"

namespace vacc {
namespace {

// The ComputeUnits the current thread belongs to, if any.
thread_local const ComputeUnits* t_units = nullptr;

}  // namespace

ComputeUnits::ComputeUnits(int count, std::chrono::nanoseconds spin, const std::string& name)
    : spin_(spin) {
  workers_.reserve(static_cast<size_t>(std::max(1, count)));
  for (int i = 0; i < std::max(1, count); ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
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
  wake_.notify_all();
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
  // Wake a sleeper only when the spinning workers cannot take all the work:
  // most hand-overs then cost no system call.
  if (sleeping_.load(std::memory_order_seq_cst) > 0 &&
      queued > static_cast<size_t>(spinning_.load(std::memory_order_seq_cst))) {
    std::lock_guard<std::mutex> lock(park_mu_);  // not between a check and a wait
    wake_.notify_one();
  }
}

bool ComputeUnits::TryPop(Task* task) {
  if (queued_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<SpinLock> lock(queue_lock_);
  if (queue_.empty()) return false;
  *task = std::move(queue_.front());
  queue_.pop_front();
  queued_.store(queue_.size(), std::memory_order_seq_cst);
  return true;
}

void ComputeUnits::WorkerLoop() {
  t_units = this;
  Task task;
  for (;;) {
    if (TryPop(&task)) {
      task();
      task = nullptr;  // release what the task captured before idling
      continue;
    }
    // Idle: spin for a while, then sleep until Submit wakes us.
    spinning_.fetch_add(1, std::memory_order_acq_rel);
    const bool more = SpinUntil(
        spin_, [this] { return queued_.load(std::memory_order_acquire) > 0; });
    spinning_.fetch_sub(1, std::memory_order_acq_rel);
    if (more) continue;
    std::unique_lock<std::mutex> lock(park_mu_);
    sleeping_.fetch_add(1, std::memory_order_seq_cst);
    wake_.wait(lock, [this] { return stop_ || queued_.load(std::memory_order_seq_cst) > 0; });
    sleeping_.fetch_sub(1, std::memory_order_seq_cst);
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

void ComputeUnits::RunChunks(size_t n, size_t chunks, size_t participants,
                             const std::function<void(size_t, size_t)>& body) {
  if (chunks <= 1 || participants == 1) {
    body(0, n);
    return;
  }
  const size_t helpers = std::min(chunks - 1, participants - 1);
  // The chunks are dealt as shares (vacc_shares.h): the caller is
  // participant 0, helpers number themselves as they start. A range of
  // the same size then goes to the same thread every call, so one op's
  // output is in the cache of the core the next op reads it on.
  struct Job {
    Job(size_t n, size_t chunks, size_t parts, const std::function<void(size_t, size_t)>* body)
        : n(n), chunks(chunks), body(body), shares(chunks, static_cast<int>(parts)) {}
    const size_t n, chunks;
    const std::function<void(size_t, size_t)>* const body;
    Shares shares;
    std::atomic<int> next_helper{1};
    std::atomic<size_t> done{0};
    WaitPoint all_done;  // the caller sleeps here when its spin runs out
    void Run(int part) {
      for (size_t c; shares.Next(part, &c);) {
        (*body)(c * n / chunks, (c + 1) * n / chunks);
        if (done.fetch_add(1, std::memory_order_release) + 1 == chunks) all_done.Notify();
      }
    }
  };
  // Shared: a helper that starts after the last chunk was taken still reads
  // the shares, possibly after this call returned.
  auto job = std::make_shared<Job>(n, chunks, helpers + 1, &body);
  for (size_t i = 0; i < helpers; ++i) {
    Submit([job] { job->Run(job->next_helper.fetch_add(1, std::memory_order_relaxed)); });
  }
  job->Run(0);
  // Only chunks another thread has claimed are left; they are short,
  // unless that thread was preempted: then sleep rather than spin.
  job->all_done.Wait(spin_, [&] { return job->done.load(std::memory_order_acquire) >= chunks; });
}

}  // namespace vacc
