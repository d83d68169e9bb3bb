// SPDX-License-Identifier: Apache-2.0
//
// Streams, events and timers: in-order queues of device work, and the
// markers that order work across streams and let the host wait for it.
//
// A stream's operations run one after another on some compute unit; different
// streams run concurrently. Operations are numbered in enqueue order; a stream
// publishes how far it got (its `completed` number), and everything that waits
// (another stream, an event, the host) waits for a stream to reach a number.
//
// Errors are sticky, as on a GPU: after an operation fails, the stream skips
// later work, still runs host callbacks (TensorFlow frees its context in them)
// and marks recorded events SE_EVENT_ERROR; get_stream_status reports it.
#ifndef VACC_STREAM_H_
#define VACC_STREAM_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/tf_status.h"
#include "vacc_compute_units.h"
#include "vacc_spin_lock.h"
#include "vacc_wait.h"

namespace vacc {

// A TF_Code and message, without needing TF_Status (which belongs to TF).
struct Status {
  TF_Code code = TF_OK;
  std::string message;
  bool ok() const { return code == TF_OK; }
  static Status Error(TF_Code code, std::string message) { return {code, std::move(message)}; }
};

// Copies `s` into a TF_Status TensorFlow passed us (TF_OK clears it).
void SetTfStatus(TF_Status* out, const Status& s);

class Stream : public std::enable_shared_from_this<Stream> {
 public:
  // Work run on a compute unit. It returns its own status: an error fails
  // the stream. `ok_so_far` is false if the stream had already failed; only
  // work enqueued with EnqueueAlways sees that.
  using Work = std::function<Status()>;
  using AlwaysWork = std::function<Status(const Status& so_far)>;

  // `device_ordinal`: the device the stream belongs to (profiler events).
  Stream(ComputeUnits* units, std::chrono::nanoseconds spin, int device_ordinal = 0);
  ~Stream();

  // Queue work; skipped if the stream has failed by the time it would run.
  // Returns the operation's number.
  uint64_t Enqueue(Work work);
  // Queue work that runs even on a failed stream (host callbacks, event
  // records), given the stream's status so far.
  uint64_t EnqueueAlways(AlwaysWork work);
  // Make later work on this stream wait until `other` has completed
  // operation `number`. Waiting on yourself is a no-op (you are in order).
  void EnqueueWait(std::shared_ptr<Stream> other, uint64_t number);

  // Number of the last operation enqueued (0: none yet).
  uint64_t last_enqueued() const;
  bool Reached(uint64_t number) const {
    return completed_.load(std::memory_order_seq_cst) >= number;
  }
  // Blocks the calling host thread until operation `number` is done (spins
  // briefly first). Returns the stream's status.
  Status WaitFor(uint64_t number);
  Status BlockUntilDone() { return WaitFor(last_enqueued()); }
  // Enqueue(work) then WaitFor it, with the same result, but when the stream
  // is idle the calling thread runs `work` itself (RunNowOrEnqueue), acting
  // as one of the units (ComputeUnits::ActingUnit): a synchronous kernel
  // then costs no hand-off to a unit and no wake-up of the waiting host
  // thread (each tens of microseconds when the other thread's core
  // sleeps). A busy stream queues the work behind what it has, in order.
  // TODO(vendor): real device work cannot run on the host; use Enqueue and
  // WaitFor.
  Status RunAndWait(Work work);
  // For short asynchronous operations (small copies, event records): when
  // the stream is idle, run `work` now on the calling thread, acting as a
  // unit, where it would have run had a unit taken it at once; else queue
  // it. Either way it returns the operation's number. Queued on an idle
  // stream, the operation waits for a unit to wake (tens to hundreds of
  // microseconds in a VM whose other core sleeps), and so does whatever
  // waits for it: a tf.function result read by Python waited ~150 us for
  // it (traced in TF 2.21). Not for host callbacks: TensorFlow may hold its
  // locks while it enqueues one, and the callback takes them.
  uint64_t RunNowOrEnqueue(Work work);
  uint64_t RunNowOrEnqueueAlways(AlwaysWork work);
  Status status() const;
  // The compute units this stream's work runs on (kernels split work across them).
  ComputeUnits& units() const { return *units_; }
  int device_ordinal() const { return device_ordinal_; }

 private:
  struct Op {
    uint64_t number = 0;
    Work work;                        // skipped on a failed stream
    AlwaysWork always;                // runs on a failed stream too
    std::shared_ptr<Stream> wait_on;  // a wait: for wait_on to reach wait_number
    uint64_t wait_number = 0;
    static Op Of(Work w) {
      Op op;
      op.work = std::move(w);
      return op;
    }
    static Op OfAlways(AlwaysWork w) {
      Op op;
      op.always = std::move(w);
      return op;
    }
  };
  uint64_t Push(Op op);
  // Runs op on the calling thread if the stream is idle (see
  // RunNowOrEnqueue), else queues it: its number.
  uint64_t RunNowOrPush(Op op);
  // Runs op's work (skipped when *so_far is an error) or always-work, on
  // whichever thread drains the stream; the first failure becomes the
  // stream's status and *so_far.
  void Run(Op& op, Status* so_far);
  void Drain();  // runs on a compute unit
  // Publishes that operation `number` is done and resumes the streams that
  // waited for it.
  void Complete(uint64_t number);
  // Registers `waiter` to be resumed when this stream completes `number`;
  // false (and no registration) if it already has.
  bool AddWaiter(uint64_t number, std::shared_ptr<Stream> waiter);
  void Resume();  // hand this stream back to a compute unit

  ComputeUnits* const units_;
  const std::chrono::nanoseconds spin_;
  const int device_ordinal_;
  // The queue's state, touched for a few instructions per operation.
  mutable SpinLock lock_;
  std::deque<Op> queue_;            // guarded by lock_
  uint64_t enqueued_ = 0;           // guarded by lock_
  bool scheduled_ = false;          // guarded by lock_: a unit owns the queue (or it waits)
  Status status_;                   // guarded by lock_; written only by the drainer
  std::vector<std::pair<uint64_t, std::shared_ptr<Stream>>> waiters_;  // lock_
  std::atomic<bool> has_waiters_{false};  // !waiters_.empty(), readable without lock_
  std::atomic<uint64_t> completed_{0};
  // The operations the drainer took from queue_ in one go (one lock per
  // batch, not per operation). Touched only by the one thread draining.
  std::deque<Op> batch_;
  // Where host threads wait for completed_ (vacc_wait.h): spin, then sleep.
  WaitPoint host_wait_;
};

// SP_Event: marks a point in one stream. Re-recording moves the mark; waits
// and polls use the mark as it was when they were issued.
class Event : public std::enable_shared_from_this<Event> {
 public:
  // Marks the current end of `stream`. The event must be owned by a
  // shared_ptr: the queued record keeps it alive.
  void Record(const std::shared_ptr<Stream>& stream);
  SE_EventStatus Poll() const;
  // Where the event points now: (stream, operation); stream null if never
  // recorded.
  std::pair<std::shared_ptr<Stream>, uint64_t> Mark() const;
  Status BlockHost() const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<Stream> stream_;  // guarded by mu_
  uint64_t number_ = 0;             // guarded by mu_
  uint64_t generation_ = 0;         // guarded by mu_: records so far
  uint64_t done_generation_ = 0;    // guarded by mu_
  bool failed_ = false;             // guarded by mu_: the last record ran on a failed stream
};

// SP_Timer: the device time between a start and a stop marker on a stream.
class Timer : public std::enable_shared_from_this<Timer> {
 public:
  // The queued markers keep the timer alive: own it by a shared_ptr.
  void Start(Stream* stream);
  void Stop(Stream* stream);
  // Nanoseconds between the markers once both have run; 0 before.
  uint64_t Nanoseconds() const;

 private:
  std::atomic<int64_t> start_ns_{-1};
  std::atomic<int64_t> stop_ns_{-1};
};

}  // namespace vacc

#endif  // VACC_STREAM_H_
