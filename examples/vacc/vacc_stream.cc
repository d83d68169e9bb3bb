// SPDX-License-Identifier: Apache-2.0
#include "vacc_stream.h"

#include <chrono>
#include <utility>

namespace vacc {

void SetTfStatus(TF_Status* out, const Status& s) {
  if (out != nullptr) TF_SetStatus(out, s.code, s.ok() ? "" : s.message.c_str());
}

namespace {
int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// Operations a stream runs before it lets other streams have its unit.
constexpr int kOpsPerTurn = 64;
}  // namespace

Stream::Stream(ComputeUnits* units, std::chrono::nanoseconds spin) : units_(units), spin_(spin) {}

Stream::~Stream() = default;  // the owner drained it: see Device::DestroyStream

uint64_t Stream::Push(Op op) {
  bool schedule;
  uint64_t number;
  {
    std::lock_guard<std::mutex> lock(mu_);
    number = op.number = ++enqueued_;
    queue_.push_back(std::move(op));
    schedule = !scheduled_;
    scheduled_ = true;
  }
  if (schedule) Resume();
  return number;
}

uint64_t Stream::Enqueue(Work work) {
  Op op;
  op.work = [w = std::move(work)](const Status&) { return w(); };
  return Push(std::move(op));
}

uint64_t Stream::EnqueueAlways(AlwaysWork work) {
  Op op;
  op.work = std::move(work);
  op.always = true;
  return Push(std::move(op));
}

void Stream::EnqueueWait(std::shared_ptr<Stream> other, uint64_t number) {
  if (other == nullptr || other.get() == this || other->Reached(number)) return;
  Op op;
  op.wait_on = std::move(other);
  op.wait_number = number;
  Push(std::move(op));
}

uint64_t Stream::last_enqueued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return enqueued_;
}

Status Stream::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

void Stream::Resume() {
  units_->Submit([self = shared_from_this()] { self->Drain(); });
}

bool Stream::AddWaiter(uint64_t number, std::shared_ptr<Stream> waiter) {
  std::lock_guard<std::mutex> lock(mu_);
  if (completed_.load(std::memory_order_relaxed) >= number) return false;
  waiters_.emplace_back(number, std::move(waiter));
  return true;
}

// The one place a stream's operations run, one at a time, on a compute unit.
// TODO(vendor): with hardware queues, submit each operation to the device's
// queue instead and complete it from the device's completion interrupt.
// Never holds two streams' locks at once.
void Stream::Drain() {
  for (int turn = 0;; ++turn) {
    Op* op;
    Status so_far;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty()) {
        scheduled_ = false;
        return;
      }
      if (turn == kOpsPerTurn) break;  // requeue below, behind other streams
      op = &queue_.front();  // stays valid: only this thread pops
      so_far = status_;
    }
    Status result;
    if (op->wait_on != nullptr) {
      // Blocked: park (keeping scheduled_) until the other stream resumes us.
      if (op->wait_on->AddWaiter(op->wait_number, shared_from_this())) return;
    } else if (so_far.ok() || op->always) {
      result = op->work(so_far);
    }
    std::vector<std::shared_ptr<Stream>> resume;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!result.ok() && status_.ok()) status_ = std::move(result);
      const uint64_t done = op->number;
      queue_.pop_front();
      completed_.store(done, std::memory_order_release);
      for (size_t i = 0; i < waiters_.size();) {
        if (waiters_[i].first <= done) {
          resume.push_back(std::move(waiters_[i].second));
          waiters_[i] = std::move(waiters_.back());
          waiters_.pop_back();
        } else {
          ++i;
        }
      }
      if (host_waiters_ > 0) host_wake_.notify_all();
    }
    for (auto& s : resume) s->Resume();
  }
  Resume();  // fairness: let other queued work have this unit first
}

Status Stream::WaitFor(uint64_t number) {
  if (!SpinUntil(spin_, [&] { return Reached(number); })) {
    std::unique_lock<std::mutex> lock(mu_);
    ++host_waiters_;
    host_wake_.wait(lock, [&] { return Reached(number); });
    --host_waiters_;
  }
  return status();
}

void Event::Record(const std::shared_ptr<Stream>& stream) {
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    generation = ++generation_;
  }
  auto self = shared_from_this();
  const uint64_t number = stream->EnqueueAlways([self, generation](const Status& so_far) {
    std::lock_guard<std::mutex> lock(self->mu_);
    if (generation > self->done_generation_) {
      self->done_generation_ = generation;
      self->failed_ = !so_far.ok();
    }
    return Status();
  });
  std::lock_guard<std::mutex> lock(mu_);
  // A later Record may have overtaken us; then its mark stands.
  if (generation == generation_) {
    stream_ = stream;
    number_ = number;
  }
}

SE_EventStatus Event::Poll() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (generation_ == 0) return SE_EVENT_COMPLETE;  // never recorded: nothing to wait for
  if (done_generation_ < generation_) return SE_EVENT_PENDING;
  return failed_ ? SE_EVENT_ERROR : SE_EVENT_COMPLETE;
}

std::pair<std::shared_ptr<Stream>, uint64_t> Event::Mark() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {stream_, number_};
}

Status Event::BlockHost() const {
  auto [stream, number] = Mark();
  if (stream != nullptr) stream->WaitFor(number);
  if (Poll() == SE_EVENT_ERROR) {
    return Status::Error(TF_INTERNAL, "the event was recorded on a stream that had failed");
  }
  return Status();
}

void Timer::Start(Stream* stream) {
  stop_ns_.store(-1);
  start_ns_.store(-1);
  stream->Enqueue([self = shared_from_this()] {
    self->start_ns_.store(NowNs(), std::memory_order_release);
    return Status();
  });
}

void Timer::Stop(Stream* stream) {
  stream->Enqueue([self = shared_from_this()] {
    self->stop_ns_.store(NowNs(), std::memory_order_release);
    return Status();
  });
}

uint64_t Timer::Nanoseconds() const {
  const int64_t start = start_ns_.load(std::memory_order_acquire);
  const int64_t stop = stop_ns_.load(std::memory_order_acquire);
  return start < 0 || stop < start ? 0 : static_cast<uint64_t>(stop - start);
}

}  // namespace vacc
