// SPDX-License-Identifier: Apache-2.0
#include "vacc_compute_units.h"

#include <algorithm>
#include <memory>

namespace vacc {
namespace {

// The ComputeUnits the current thread belongs to, if any.
thread_local const ComputeUnits* t_units = nullptr;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#else
  std::this_thread::yield();
#endif
}

}  // namespace

bool SpinUntil(std::chrono::nanoseconds budget, const std::function<bool()>& done) {
  if (done()) return true;
  if (budget.count() <= 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (;;) {
    // Reading the clock costs more than a pause: check it every 32 rounds.
    for (int i = 0; i < 32; ++i) {
      CpuRelax();
      if (done()) return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
  }
}

ComputeUnits::ComputeUnits(int count, std::chrono::nanoseconds spin) : spin_(spin) {
  workers_.reserve(static_cast<size_t>(std::max(1, count)));
  for (int i = 0; i < std::max(1, count); ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ComputeUnits::~ComputeUnits() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

bool ComputeUnits::OnUnit() const { return t_units == this; }

void ComputeUnits::Submit(Task task) {
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(std::move(task));
  queued_.store(queue_.size(), std::memory_order_release);
  // Wake a sleeper only when the spinning workers cannot take all the work:
  // most hand-overs then cost no system call.
  const bool wake = sleeping_ > 0 &&
                    queue_.size() > static_cast<size_t>(spinning_.load(std::memory_order_acquire));
  lock.unlock();
  if (wake) wake_.notify_one();
}

bool ComputeUnits::TryPop(Task* task) {
  std::lock_guard<std::mutex> lock(mu_);
  if (queue_.empty()) return false;
  *task = std::move(queue_.front());
  queue_.pop_front();
  queued_.store(queue_.size(), std::memory_order_release);
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
    std::unique_lock<std::mutex> lock(mu_);
    ++sleeping_;
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    --sleeping_;
    if (queue_.empty()) return;  // stop_, and nothing left to run
  }
}

void ComputeUnits::ParallelFor(size_t n, size_t grain,
                               const std::function<void(size_t, size_t)>& body) {
  if (n == 0) return;
  grain = std::max<size_t>(grain, 1);
  // Up to 4 chunks per participant evens out uneven progress.
  const size_t participants = workers_.size() + (OnUnit() ? 0 : 1);
  const size_t chunks = std::min((n + grain - 1) / grain, 4 * participants);
  if (chunks <= 1) {
    body(0, n);
    return;
  }
  struct Job {
    size_t n, chunks;
    const std::function<void(size_t, size_t)>* body;
    std::atomic<size_t> next{0};
    std::atomic<size_t> done{0};
    void RunChunks() {
      for (size_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) {
        (*body)(c * n / chunks, (c + 1) * n / chunks);
        done.fetch_add(1, std::memory_order_release);
      }
    }
  };
  // Shared: a helper that starts after the last chunk was taken still reads
  // `next`, possibly after this call returned.
  auto job = std::make_shared<Job>();
  job->n = n;
  job->chunks = chunks;
  job->body = &body;
  const size_t helpers = std::min(chunks - 1, participants - 1);
  for (size_t i = 0; i < helpers; ++i) Submit([job] { job->RunChunks(); });
  job->RunChunks();
  // Only chunks another thread has claimed are left; they are short.
  while (job->done.load(std::memory_order_acquire) < chunks) {
    if (!SpinUntil(spin_, [&] { return job->done.load(std::memory_order_acquire) >= chunks; }))
      std::this_thread::yield();
  }
}

}  // namespace vacc
