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

Stream::Stream(ComputeUnits* units, std::chrono::nanoseconds spin, int device_ordinal)
    : units_(units), spin_(spin), device_ordinal_(device_ordinal) {}

Stream::~Stream() = default;  // the owner drained it: see Device::DestroyStream

uint64_t Stream::Push(Op op) {
  bool schedule;
  uint64_t number;
  {
    std::lock_guard<SpinLock> lock(lock_);
    number = op.number = ++enqueued_;
    queue_.push_back(std::move(op));
    schedule = !scheduled_;
    scheduled_ = true;
  }
  if (schedule) Resume();
  return number;
}

uint64_t Stream::Enqueue(Work work) { return Push(Op::Of(std::move(work))); }

uint64_t Stream::EnqueueAlways(AlwaysWork work) { return Push(Op::OfAlways(std::move(work))); }

void Stream::EnqueueWait(std::shared_ptr<Stream> other, uint64_t number) {
  if (other == nullptr || other.get() == this || other->Reached(number)) return;
  Op op;
  op.wait_on = std::move(other);
  op.wait_number = number;
  Push(std::move(op));
}

uint64_t Stream::last_enqueued() const {
  std::lock_guard<SpinLock> lock(lock_);
  return enqueued_;
}

Status Stream::status() const {
  std::lock_guard<SpinLock> lock(lock_);
  return status_;
}

void Stream::Resume() {
  units_->Submit([self = shared_from_this()] { self->Drain(); });
}

// Announces the waiter (has_waiters_) before reading completed_, while
// Complete publishes completed_ before reading has_waiters_ (all
// sequentially consistent): either we see the number reached, or Complete
// sees a waiter and takes lock_, which we hold until it is registered.
bool Stream::AddWaiter(uint64_t number, std::shared_ptr<Stream> waiter) {
  std::lock_guard<SpinLock> lock(lock_);
  has_waiters_.store(true, std::memory_order_seq_cst);
  if (completed_.load(std::memory_order_seq_cst) >= number) {
    has_waiters_.store(!waiters_.empty(), std::memory_order_seq_cst);
    return false;
  }
  waiters_.emplace_back(number, std::move(waiter));
  return true;
}

// See AddWaiter for why no wake-up is lost.
void Stream::Complete(uint64_t number) {
  completed_.store(number, std::memory_order_seq_cst);
  if (has_waiters_.load(std::memory_order_seq_cst)) {
    std::vector<std::shared_ptr<Stream>> resume;
    {
      std::lock_guard<SpinLock> lock(lock_);
      for (size_t i = 0; i < waiters_.size();) {
        if (waiters_[i].first <= number) {
          resume.push_back(std::move(waiters_[i].second));
          waiters_[i] = std::move(waiters_.back());
          waiters_.pop_back();
        } else {
          ++i;
        }
      }
      has_waiters_.store(!waiters_.empty(), std::memory_order_seq_cst);
    }
    for (auto& s : resume) s->Resume();
  }
  host_wait_.Notify();
}

void Stream::Run(Op& op, Status* so_far) {
  Status result;
  if (op.always) {
    result = op.always(*so_far);
  } else if (op.work && so_far->ok()) {
    result = op.work();
  }
  if (!result.ok() && so_far->ok()) {
    *so_far = result;  // the first failure sticks
    std::lock_guard<SpinLock> lock(lock_);
    status_ = std::move(result);
  }
}

// Where a stream's queued operations run, one at a time, on a compute unit.
// TODO(vendor): with hardware queues, submit each operation to the device's
// queue instead and complete it from the device's completion interrupt.
// Takes everything queued so far in one go: the host enqueuing and the unit
// draining then meet on the lock once per batch, not once per operation.
void Stream::Drain() {
  Status so_far;
  int ran = 0;
  for (;;) {
    {
      std::lock_guard<SpinLock> lock(lock_);
      if (queue_.empty()) {
        scheduled_ = false;
        return;
      }
      if (ran >= kOpsPerTurn) break;  // fairness: requeue behind other work
      batch_.swap(queue_);
      so_far = status_;
    }
    while (!batch_.empty()) {
      Op& op = batch_.front();
      if (op.wait_on != nullptr && !op.wait_on->Reached(op.wait_number)) {
        // Blocked. First put the rest (this wait included) back in front of
        // what arrived meanwhile: once registered as a waiter we may be
        // resumed on another unit at once, and it must find everything in
        // queue_. Then park (scheduled_ stays set) until resumed.
        const std::shared_ptr<Stream> other = op.wait_on;
        const uint64_t wait_number = op.wait_number;
        {
          std::lock_guard<SpinLock> lock(lock_);
          while (!batch_.empty()) {
            queue_.push_front(std::move(batch_.back()));
            batch_.pop_back();
          }
        }
        if (other->AddWaiter(wait_number, shared_from_this())) return;
        break;  // reached meanwhile: take the queue again
      }
      Run(op, &so_far);  // a wait that is over has nothing to run
      const uint64_t number = op.number;
      batch_.pop_front();  // release what the operation captured before reporting it done
      Complete(number);
      ++ran;
    }
  }
  Resume();
}

Status Stream::RunAndWait(Work work) { return WaitFor(RunNowOrEnqueue(std::move(work))); }

uint64_t Stream::RunNowOrPush(Op op) {
  Status so_far;
  uint64_t number;
  {
    std::lock_guard<SpinLock> lock(lock_);
    if (scheduled_) {
      number = 0;  // busy: a unit owns the queue, or another thread runs now
    } else {
      scheduled_ = true;  // this thread is the stream's drainer until it is done
      number = ++enqueued_;
      so_far = status_;
    }
  }
  if (number == 0) return Push(std::move(op));
  {
    ComputeUnits::ActingUnit acting(units_);
    Run(op, &so_far);
  }
  op = Op();  // release what the operation captured before reporting it done
  Complete(number);
  bool more;
  {
    std::lock_guard<SpinLock> lock(lock_);
    more = !queue_.empty();  // enqueued by other threads while this one ran
    if (!more) scheduled_ = false;
  }
  if (more) Resume();
  return number;
}

uint64_t Stream::RunNowOrEnqueue(Work work) { return RunNowOrPush(Op::Of(std::move(work))); }

uint64_t Stream::RunNowOrEnqueueAlways(AlwaysWork work) {
  return RunNowOrPush(Op::OfAlways(std::move(work)));
}

Status Stream::WaitFor(uint64_t number) {
  host_wait_.Wait(spin_, [&] { return Reached(number); });
  return status();
}

void Event::Record(const std::shared_ptr<Stream>& stream) {
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    generation = ++generation_;
  }
  auto self = shared_from_this();
  // Run now on an idle stream: whoever polls the event sees it complete at
  // once instead of after a unit's wake-up.
  const uint64_t number = stream->RunNowOrEnqueueAlways([self, generation](const Status& so_far) {
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
