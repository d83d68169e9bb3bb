// SPDX-License-Identifier: Apache-2.0
//
// vacc's streams, events, host callbacks, waits and timers, driven through
// SP_StreamExecutor as TensorFlow drives them. Ordering is established with
// host callbacks that block on a promise (a Gate), never with timing: a test
// may sleep briefly to give a wrong implementation the chance to run too
// early, but what it asserts never depends on how long anything took.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "vacc_se_fixture.h"

namespace vacc_test {
namespace {

// 4 compute units: a Gate blocks one of them while the others keep going.
const EnvVars kEnv = {{"VACC_MEMORY_MB", "64"}, {"VACC_THREADS", "4"}};

void GiveAWrongImplementationAChance() {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// A host callback that holds its stream (and one compute unit) until
// Release(). Started() tells when the stream reached it. Its state is shared
// with the callback, so the Gate may go before the callback has returned;
// the destructor releases it, so no test leaves a stream blocked.
class Gate {
 public:
  Gate() : state_(std::make_shared<State>()) {
    state_->released = state_->release.get_future().share();
    started_ = state_->started.get_future().share();
  }
  ~Gate() { Release(); }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

  // Enqueues the blocking callback; `then` runs in it after the release.
  void EnqueueOn(const VaccPlatform& p, SP_Stream stream, std::function<void()> then = {},
                 int ordinal = 0) {
    auto state = state_;
    ASSERT_TRUE(EnqueueHostCallback(
        p, stream,
        [state, then](TF_Status*) {
          state->started.set_value();
          state->released.wait();
          if (then) then();
        },
        ordinal));
  }
  void WaitStarted() { started_.wait(); }
  void Release() {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->was_released) state_->release.set_value();
    state_->was_released = true;
  }

 private:
  struct State {
    std::promise<void> started, release;
    std::shared_future<void> released;
    std::mutex mu;
    bool was_released = false;
  };
  std::shared_ptr<State> state_;
  std::shared_future<void> started_;
};

// What ran, in order, from whichever thread.
class Log {
 public:
  void Add(const std::string& s) {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.push_back(s);
  }
  std::vector<std::string> Get() {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> entries_;
};

class VaccSeStreamTest : public VaccSeTest {
 protected:
  void ExpectOk(TF_Status* s) { EXPECT_EQ(TF_GetCode(s), TF_OK) << Describe(s); }
  TF_Code SyncCode(SP_Stream stream, int ordinal = 0) {
    StatusPtr s = NewStatus();
    se().block_host_until_done(dev(ordinal), stream, s.get());
    return TF_GetCode(s.get());
  }
  TF_Code BlockForEvent(SP_Event event) {
    StatusPtr s = NewStatus();
    se().block_host_for_event(dev(), event, s.get());
    return TF_GetCode(s.get());
  }
  SE_EventStatus Poll(SP_Event event) { return se().get_event_status(dev(), event); }
  void Record(SP_Stream stream, SP_Event event) {
    StatusPtr s = NewStatus();
    se().record_event(dev(), stream, event, s.get());
    ExpectOk(s.get());
  }
  void WaitFor(SP_Stream stream, SP_Event event) {
    StatusPtr s = NewStatus();
    se().wait_for_event(dev(), stream, event, s.get());
    ExpectOk(s.get());
  }
  void Put(SP_DeviceMemoryBase* dst, const std::vector<uint8_t>& src) {
    StatusPtr s = NewStatus();
    se().sync_memcpy_htod(dev(), dst, src.data(), src.size(), s.get());
    ExpectOk(s.get());
  }
  std::vector<uint8_t> Get(const SP_DeviceMemoryBase* src, uint64_t size) {
    std::vector<uint8_t> out(size);
    StatusPtr s = NewStatus();
    se().sync_memcpy_dtoh(dev(), out.data(), src, size, s.get());
    ExpectOk(s.get());
    return out;
  }
};

// Operations run in enqueue order: of 1000 copies into one buffer the last
// one wins, and a copy-out after every 100th sees exactly that one.
TEST_F(VaccSeStreamTest, OperationsRunInOrder) {
  ASSERT_TRUE(Load(kEnv));
  const uint64_t n = 4096;
  std::vector<std::vector<uint8_t>> patterns, snapshots;
  for (uint32_t i = 0; i < 1000; ++i) patterns.push_back(Pattern(n, i));
  snapshots.resize(10, std::vector<uint8_t>(n));
  std::vector<uint8_t> last(n);
  DeviceMemory buf(p(), n);
  ASSERT_NE(buf.data(), nullptr);
  Stream stream(p());  // declared last: destroyed (drained) first
  StatusPtr s = NewStatus();
  for (size_t i = 0; i < patterns.size(); ++i) {
    se().memcpy_htod(dev(), stream, buf.get(), patterns[i].data(), n, s.get());
    ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
    if (i % 100 == 99) {
      se().memcpy_dtoh(dev(), stream, snapshots[i / 100].data(), buf.get(), n, s.get());
      ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
    }
  }
  se().memcpy_dtoh(dev(), stream, last.data(), buf.get(), n, s.get());
  ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  EXPECT_EQ(SyncCode(stream), TF_OK);
  EXPECT_EQ(last, patterns.back());
  for (size_t k = 0; k < snapshots.size(); ++k) EXPECT_EQ(snapshots[k], patterns[k * 100 + 99]) << k;
}

// A host callback that sets an error fails the stream for good: the error is
// reported by get_stream_status and block_host_until_done, later copies and
// fills are skipped, later host callbacks still run exactly once and get the
// error on entry, and an event recorded after it reports SE_EVENT_ERROR.
TEST_F(VaccSeStreamTest, HostCallbackErrorIsSticky) {
  ASSERT_TRUE(Load(kEnv));
  std::atomic<int> first_runs{0}, second_runs{0}, third_runs{0};
  std::atomic<int> second_saw{-1}, third_saw{-1};
  const uint64_t n = 512;
  const std::vector<uint8_t> model = Pattern(n, 1);
  std::vector<uint8_t> host = Pattern(n, 2);
  const std::vector<uint8_t> model_host = host;
  DeviceMemory buf(p(), n);
  ASSERT_NE(buf.data(), nullptr);
  Put(buf.get(), model);
  Stream stream(p());
  Event before(p()), event(p());

  Record(stream, before);  // recorded before the failure: stays COMPLETE
  ASSERT_TRUE(EnqueueHostCallback(p(), stream, [&](TF_Status* st) {
    first_runs++;
    TF_SetStatus(st, TF_INTERNAL, "boom from the first callback");
  }));
  StatusPtr s = NewStatus();
  se().memset(dev(), stream, buf.get(), 0xEE, n, s.get());
  ExpectOk(s.get());  // enqueued; skipped when the stream gets there
  se().memcpy_dtoh(dev(), stream, host.data(), buf.get(), n, s.get());
  ExpectOk(s.get());
  ASSERT_TRUE(EnqueueHostCallback(p(), stream, [&](TF_Status* st) {
    second_runs++;
    second_saw = TF_GetCode(st);  // leaves the error in place
  }));
  ASSERT_TRUE(EnqueueHostCallback(p(), stream, [&](TF_Status* st) {
    third_runs++;
    third_saw = TF_GetCode(st);
    TF_SetStatus(st, TF_OK, "");  // succeeding does not clear the stream's error
  }));
  Record(stream, event);

  se().block_host_until_done(dev(), stream, s.get());
  EXPECT_EQ(TF_GetCode(s.get()), TF_INTERNAL) << Describe(s.get());
  se().get_stream_status(dev(), stream, s.get());
  EXPECT_EQ(TF_GetCode(s.get()), TF_INTERNAL) << Describe(s.get());
  EXPECT_NE(std::string(TF_Message(s.get())).find("boom from the first callback"),
            std::string::npos)
      << TF_Message(s.get());
  EXPECT_EQ(first_runs.load(), 1);
  EXPECT_EQ(second_runs.load(), 1);
  EXPECT_EQ(third_runs.load(), 1);
  EXPECT_EQ(second_saw.load(), TF_INTERNAL);
  EXPECT_EQ(third_saw.load(), TF_INTERNAL);
  EXPECT_EQ(Poll(event), SE_EVENT_ERROR);
  EXPECT_NE(BlockForEvent(event), TF_OK);
  EXPECT_EQ(Poll(before), SE_EVENT_COMPLETE);
  EXPECT_EQ(BlockForEvent(before), TF_OK);
  EXPECT_EQ(Get(buf.get(), n), model) << "the memset after the failure ran";
  EXPECT_EQ(host, model_host) << "the copy after the failure ran";

  // Work enqueued later is skipped too, callbacks still run once each.
  std::atomic<int> later_runs{0};
  se().memset(dev(), stream, buf.get(), 0x11, n, s.get());
  ExpectOk(s.get());
  ASSERT_TRUE(EnqueueHostCallback(p(), stream, [&](TF_Status* st) {
    later_runs++;
    EXPECT_EQ(TF_GetCode(st), TF_INTERNAL);
  }));
  EXPECT_EQ(SyncCode(stream), TF_INTERNAL);
  EXPECT_EQ(later_runs.load(), 1);
  EXPECT_EQ(Get(buf.get(), n), model);
  EXPECT_EQ(first_runs.load() + second_runs.load() + third_runs.load(), 3);
}

// A stream's failure stays on that stream: another stream of the device
// keeps running its work and reports TF_OK.
TEST_F(VaccSeStreamTest, ErrorDoesNotLeakToOtherStreams) {
  ASSERT_TRUE(Load(kEnv));
  const uint64_t n = 64;
  DeviceMemory buf(p(), n);
  ASSERT_NE(buf.data(), nullptr);
  Stream bad(p()), good(p());
  ASSERT_TRUE(EnqueueHostCallback(p(), bad, [](TF_Status* st) {
    TF_SetStatus(st, TF_ABORTED, "bad stream");
  }));
  EXPECT_EQ(SyncCode(bad), TF_ABORTED);
  StatusPtr s = NewStatus();
  se().memset(dev(), good, buf.get(), 0x42, n, s.get());
  ExpectOk(s.get());
  EXPECT_EQ(SyncCode(good), TF_OK);
  EXPECT_EQ(Get(buf.get(), n), std::vector<uint8_t>(n, 0x42));
}

// An event never recorded is complete: polling says so, blocking on it and
// waiting for it return at once.
TEST_F(VaccSeStreamTest, NeverRecordedEventIsComplete) {
  ASSERT_TRUE(Load(kEnv));
  std::atomic<int> ran{0};
  Stream stream(p());
  Event event(p());
  EXPECT_EQ(Poll(event), SE_EVENT_COMPLETE);
  EXPECT_EQ(BlockForEvent(event), TF_OK);
  WaitFor(stream, event);
  ASSERT_TRUE(EnqueueHostCallback(p(), stream, [&](TF_Status*) { ran++; }));
  EXPECT_EQ(SyncCode(stream), TF_OK);
  EXPECT_EQ(ran.load(), 1);
}

// An event recorded behind a blocked callback is PENDING until the stream
// gets past it, then COMPLETE.
TEST_F(VaccSeStreamTest, EventPendingUntilStreamReachesIt) {
  ASSERT_TRUE(Load(kEnv));
  Stream stream(p());
  Event event(p());
  Gate gate;
  gate.EnqueueOn(p(), stream);
  Record(stream, event);
  gate.WaitStarted();
  EXPECT_EQ(Poll(event), SE_EVENT_PENDING);
  GiveAWrongImplementationAChance();
  EXPECT_EQ(Poll(event), SE_EVENT_PENDING);
  gate.Release();
  EXPECT_EQ(BlockForEvent(event), TF_OK);
  EXPECT_EQ(Poll(event), SE_EVENT_COMPLETE);
  EXPECT_EQ(SyncCode(stream), TF_OK);
}

// wait_for_event: stream B waits for an event on A recorded behind a blocked
// callback; B's later work runs only after A's callback, and sees the data
// A wrote before the record.
TEST_F(VaccSeStreamTest, WaitForEventOrdersStreams) {
  ASSERT_TRUE(Load(kEnv));
  Log log;
  const uint64_t n = 4096;
  const std::vector<uint8_t> pattern = Pattern(n, 3);
  std::vector<uint8_t> seen_by_b(n);
  std::atomic<bool> b_ran{false};
  DeviceMemory buf(p(), n);
  ASSERT_NE(buf.data(), nullptr);
  Put(buf.get(), Pattern(n, 4));
  Stream a(p()), b(p());
  Event event(p());
  Gate gate;

  gate.EnqueueOn(p(), a, [&] { log.Add("A"); });
  StatusPtr s = NewStatus();
  se().memcpy_htod(dev(), a, buf.get(), pattern.data(), n, s.get());
  ExpectOk(s.get());
  Record(a, event);
  WaitFor(b, event);
  se().memcpy_dtoh(dev(), b, seen_by_b.data(), buf.get(), n, s.get());
  ExpectOk(s.get());
  ASSERT_TRUE(EnqueueHostCallback(p(), b, [&](TF_Status*) {
    log.Add("B");
    b_ran = true;
  }));

  gate.WaitStarted();
  GiveAWrongImplementationAChance();
  EXPECT_FALSE(b_ran.load()) << "B ran before the event it waits for";
  gate.Release();
  EXPECT_EQ(SyncCode(b), TF_OK);
  EXPECT_EQ(SyncCode(a), TF_OK);
  EXPECT_EQ(log.Get(), (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(seen_by_b, pattern);
}

// Re-recording an event moves its mark: recorded again behind a blocked
// callback it is PENDING again; recorded once more on an idle stream it is
// COMPLETE while the first stream is still blocked.
TEST_F(VaccSeStreamTest, ReRecordingMovesTheMark) {
  ASSERT_TRUE(Load(kEnv));
  Stream a(p()), idle(p());
  Event event(p());
  Record(a, event);
  EXPECT_EQ(BlockForEvent(event), TF_OK);
  EXPECT_EQ(Poll(event), SE_EVENT_COMPLETE);

  Gate gate;
  gate.EnqueueOn(p(), a);
  Record(a, event);
  gate.WaitStarted();
  EXPECT_EQ(Poll(event), SE_EVENT_PENDING);

  Record(idle, event);  // the mark moves to `idle`, which has nothing queued
  EXPECT_EQ(BlockForEvent(event), TF_OK);
  EXPECT_EQ(Poll(event), SE_EVENT_COMPLETE);
  // `a` is still blocked: the event no longer points there.
  gate.Release();
  EXPECT_EQ(SyncCode(a), TF_OK);
  EXPECT_EQ(Poll(event), SE_EVENT_COMPLETE);
}

// A wait uses the event's mark as it was when the wait was enqueued: moving
// the mark afterwards to an idle stream does not release the waiter early.
TEST_F(VaccSeStreamTest, WaitKeepsTheMarkItWasGiven) {
  ASSERT_TRUE(Load(kEnv));
  Log log;
  std::atomic<bool> b_ran{false};
  Stream a(p()), b(p()), idle(p());
  Event event(p());
  Gate gate;
  gate.EnqueueOn(p(), a, [&] { log.Add("A"); });
  Record(a, event);
  WaitFor(b, event);
  Record(idle, event);
  ASSERT_TRUE(EnqueueHostCallback(p(), b, [&](TF_Status*) {
    log.Add("B");
    b_ran = true;
  }));
  gate.WaitStarted();
  EXPECT_EQ(SyncCode(idle), TF_OK);
  GiveAWrongImplementationAChance();
  EXPECT_FALSE(b_ran.load());
  gate.Release();
  EXPECT_EQ(SyncCode(b), TF_OK);
  EXPECT_EQ(log.Get(), (std::vector<std::string>{"A", "B"}));
}

// Destroying an event whose record is still queued (and that a stream waits
// for) is safe: the record runs later without touching freed memory, and
// the waiter is still released in order.
TEST_F(VaccSeStreamTest, DestroyEventWithQueuedRecordIsSafe) {
  ASSERT_TRUE(Load(kEnv));
  Log log;
  std::atomic<bool> b_ran{false};
  Stream a(p()), b(p());
  Gate gate;
  gate.EnqueueOn(p(), a, [&] { log.Add("A"); });
  SP_Event event = nullptr;
  StatusPtr s = NewStatus();
  se().create_event(dev(), &event, s.get());
  ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  Record(a, event);
  WaitFor(b, event);
  se().destroy_event(dev(), event);
  ASSERT_TRUE(EnqueueHostCallback(p(), b, [&](TF_Status*) {
    log.Add("B");
    b_ran = true;
  }));
  gate.WaitStarted();
  GiveAWrongImplementationAChance();
  EXPECT_FALSE(b_ran.load()) << "B ran before the destroyed event's record";
  gate.Release();
  EXPECT_EQ(SyncCode(a), TF_OK);
  EXPECT_EQ(SyncCode(b), TF_OK);
  EXPECT_EQ(log.Get(), (std::vector<std::string>{"A", "B"}));
}

// create_stream_dependency: work enqueued on the dependent stream afterwards
// runs after everything enqueued on the other one before the call, and not
// after what the other stream gets later.
TEST_F(VaccSeStreamTest, StreamDependencyOrdersStreams) {
  ASSERT_TRUE(Load(kEnv));
  Log log;
  std::atomic<bool> b_ran{false};
  std::promise<void> b_done;
  Stream a(p()), b(p());
  Gate first, second;
  first.EnqueueOn(p(), a, [&] { log.Add("A1"); });
  StatusPtr s = NewStatus();
  se().create_stream_dependency(dev(), b, a, s.get());
  ExpectOk(s.get());
  second.EnqueueOn(p(), a, [&] { log.Add("A2"); });  // after the dependency
  ASSERT_TRUE(EnqueueHostCallback(p(), b, [&](TF_Status*) {
    log.Add("B");
    b_ran = true;
    b_done.set_value();
  }));

  first.WaitStarted();
  GiveAWrongImplementationAChance();
  EXPECT_FALSE(b_ran.load()) << "B ran before the work it depends on";
  first.Release();
  // B must finish while A is held by `second`. (The bound only turns a hang
  // of a wrong implementation into a failure.)
  EXPECT_EQ(b_done.get_future().wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "B waited for work enqueued on A after the dependency";
  second.Release();
  EXPECT_EQ(SyncCode(a), TF_OK);
  EXPECT_EQ(SyncCode(b), TF_OK);
  EXPECT_EQ(log.Get(), (std::vector<std::string>{"A1", "B", "A2"}));
}

// host_callback returns true and runs the callback exactly once, after the
// stream's earlier work: a preceding memcpy_dtoh has filled the host buffer.
// A NULL callback or stream is refused (false).
TEST_F(VaccSeStreamTest, HostCallbackRunsOnceAfterEarlierWork) {
  ASSERT_TRUE(Load(kEnv));
  const uint64_t n = 65537;
  const std::vector<uint8_t> pattern = Pattern(n, 5);
  std::vector<uint8_t> host(n, 0);
  std::atomic<int> runs{0};
  std::atomic<bool> saw_data{false};
  DeviceMemory buf(p(), n);
  ASSERT_NE(buf.data(), nullptr);
  Put(buf.get(), pattern);
  Stream stream(p());
  StatusPtr s = NewStatus();
  se().memcpy_dtoh(dev(), stream, host.data(), buf.get(), n, s.get());
  ExpectOk(s.get());
  EXPECT_TRUE(EnqueueHostCallback(p(), stream, [&](TF_Status* st) {
    runs++;
    saw_data = host == pattern;
    EXPECT_EQ(TF_GetCode(st), TF_OK);
  }));
  EXPECT_EQ(SyncCode(stream), TF_OK);
  EXPECT_EQ(runs.load(), 1);
  EXPECT_TRUE(saw_data.load());
  EXPECT_FALSE(se().host_callback(dev(), stream, nullptr, nullptr));
  EXPECT_FALSE(EnqueueHostCallback(p(), nullptr, [&](TF_Status*) { runs++; }));
  EXPECT_EQ(SyncCode(stream), TF_OK);
  EXPECT_EQ(runs.load(), 1);
}

// On an idle stream a copy of up to 64 KiB (the example's kRunNowCopyBytes)
// and an event record are done when the call returns, even with the
// device's only unit held by another stream; a larger copy is queued and
// waits for the unit. (A plugin may also queue small ones: this checks the
// example's choice, not a TensorFlow rule.)
TEST_F(VaccSeStreamTest, SmallCopiesAndRecordsOnAnIdleStreamRunAtOnce) {
  ASSERT_TRUE(Load({{"VACC_MEMORY_MB", "64"}, {"VACC_THREADS", "1"}}));
  const uint64_t small = 64 << 10, large = small + 4;
  const std::vector<uint8_t> pattern = Pattern(large, 9);
  std::vector<uint8_t> small_out(small, 0), large_out(large, 0);
  DeviceMemory buf(p(), large);
  ASSERT_NE(buf.data(), nullptr);
  Put(buf.get(), pattern);
  Stream busy(p()), idle(p());
  Event event(p());
  Gate gate;
  gate.EnqueueOn(p(), busy);
  gate.WaitStarted();  // the only unit is taken until the release
  StatusPtr s = NewStatus();
  se().memcpy_dtoh(dev(), idle, small_out.data(), buf.get(), small, s.get());
  ExpectOk(s.get());
  EXPECT_TRUE(std::equal(small_out.begin(), small_out.end(), pattern.begin()));
  Record(idle, event);
  EXPECT_EQ(Poll(event), SE_EVENT_COMPLETE);
  se().memcpy_dtoh(dev(), idle, large_out.data(), buf.get(), large, s.get());
  ExpectOk(s.get());
  GiveAWrongImplementationAChance();
  EXPECT_EQ(large_out, std::vector<uint8_t>(large, 0));  // queued behind the gate
  gate.Release();
  EXPECT_EQ(SyncCode(idle), TF_OK);
  EXPECT_EQ(large_out, pattern);
  EXPECT_EQ(SyncCode(busy), TF_OK);
}

// block_host_until_done returns only when the stream's queued work has run.
TEST_F(VaccSeStreamTest, BlockHostUntilDoneWaitsForTheStream) {
  ASSERT_TRUE(Load(kEnv));
  const uint64_t n = 1024;
  const std::vector<uint8_t> pattern = Pattern(n, 6);
  std::vector<uint8_t> host(n, 0);
  std::atomic<int> after{0};
  DeviceMemory buf(p(), n);
  ASSERT_NE(buf.data(), nullptr);
  Stream stream(p());
  EXPECT_EQ(SyncCode(stream), TF_OK);  // nothing queued
  Gate gate;
  gate.EnqueueOn(p(), stream);
  StatusPtr s = NewStatus();
  se().memcpy_htod(dev(), stream, buf.get(), pattern.data(), n, s.get());
  ExpectOk(s.get());
  se().memcpy_dtoh(dev(), stream, host.data(), buf.get(), n, s.get());
  ExpectOk(s.get());
  ASSERT_TRUE(EnqueueHostCallback(p(), stream, [&](TF_Status*) { after++; }));
  std::thread releaser([&] {
    gate.WaitStarted();
    GiveAWrongImplementationAChance();
    gate.Release();
  });
  EXPECT_EQ(SyncCode(stream), TF_OK);
  EXPECT_EQ(after.load(), 1);
  EXPECT_EQ(host, pattern);
  releaser.join();
}

// synchronize_all_activity returns only when every stream of the device
// has run everything queued on it.
TEST_F(VaccSeStreamTest, SynchronizeAllActivityWaitsForEveryStream) {
  ASSERT_TRUE(Load(kEnv));
  constexpr int kStreams = 4;
  const uint64_t n = 2048;
  std::array<std::vector<uint8_t>, kStreams> patterns, hosts;
  std::atomic<int> finished{0};
  std::vector<std::unique_ptr<DeviceMemory>> bufs;
  std::vector<std::unique_ptr<Stream>> streams;  // destroyed (drained) before bufs
  std::vector<std::unique_ptr<Gate>> gates;
  StatusPtr s = NewStatus();
  for (int i = 0; i < kStreams; ++i) {
    streams.push_back(std::make_unique<Stream>(p()));
    bufs.push_back(std::make_unique<DeviceMemory>(p(), n));
    ASSERT_NE(bufs[i]->data(), nullptr);
    patterns[i] = Pattern(n, 10 + i);
    hosts[i].assign(n, 0);
  }
  // Streams 0 and 1 are held by gates (of 4 units, two stay free for the rest).
  for (int i = 0; i < kStreams; ++i) {
    if (i < 2) {
      gates.push_back(std::make_unique<Gate>());
      gates.back()->EnqueueOn(p(), *streams[i]);
    }
    se().memcpy_htod(dev(), *streams[i], bufs[i]->get(), patterns[i].data(), n, s.get());
    ExpectOk(s.get());
    se().memcpy_dtoh(dev(), *streams[i], hosts[i].data(), bufs[i]->get(), n, s.get());
    ExpectOk(s.get());
    ASSERT_TRUE(EnqueueHostCallback(p(), *streams[i], [&](TF_Status*) { finished++; }));
  }
  std::thread releaser([&] {
    for (auto& g : gates) g->WaitStarted();
    GiveAWrongImplementationAChance();
    for (auto& g : gates) g->Release();
  });
  se().synchronize_all_activity(dev(), s.get());
  ExpectOk(s.get());
  EXPECT_EQ(finished.load(), kStreams);
  for (int i = 0; i < kStreams; ++i) EXPECT_EQ(hosts[i], patterns[i]) << i;
  releaser.join();
}

// Timers: start and stop enqueue markers; nanoseconds is 0 until the stream
// has run both, then positive (the stream was held between them).
TEST_F(VaccSeStreamTest, TimerMeasuresBetweenMarkers) {
  ASSERT_TRUE(Load(kEnv));
  Stream stream(p());
  SP_Timer timer = nullptr;
  StatusPtr s = NewStatus();
  se().create_timer(dev(), &timer, s.get());
  ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  ASSERT_NE(timer, nullptr);
  {
    Gate gate;
    se().start_timer(dev(), stream, timer, s.get());
    ExpectOk(s.get());
    gate.EnqueueOn(p(), stream);
    se().stop_timer(dev(), stream, timer, s.get());
    ExpectOk(s.get());
    gate.WaitStarted();
    EXPECT_EQ(p().timer_fns().nanoseconds(timer), 0u) << "stopped before the stop marker ran";
    gate.Release();
  }
  EXPECT_EQ(SyncCode(stream), TF_OK);
  EXPECT_GT(p().timer_fns().nanoseconds(timer), 0u);
  se().destroy_timer(dev(), timer);
}

// Stress: 8 streams, 4 host threads each enqueueing 2000 mixed operations
// (copies both ways, device-to-device copies, fills, counting host
// callbacks, record/wait across streams, some on streams other threads use).
// Every callback runs exactly once, in its stream's order, every copy-out
// sees the buffer as the operations before it left it, and the final
// buffers are as computed. Run with spinning workers and with VACC_SPIN_US=0
// (every hand-over parks and wakes a thread).
class VaccSeStressTest : public VaccSeStreamTest,
                         public ::testing::WithParamInterface<const char*> {};

TEST_P(VaccSeStressTest, ManyStreamsManyThreads) {
  EnvVars env = kEnv;
  env.emplace_back("VACC_SPIN_US", GetParam());
  ASSERT_TRUE(Load(env));
  constexpr int kStreams = 8, kThreads = 4, kOps = 2000;
  constexpr uint64_t kBuf = 4096, kHalf = kBuf / 2;
  struct Snapshot {
    std::vector<uint8_t> host, expected;
  };
  struct PerThread {
    std::deque<std::vector<uint8_t>> sources;  // alive until the streams ran
    std::deque<Snapshot> snapshots;
    std::vector<SP_Event> events;
    std::array<int, 2> callbacks_enqueued{};
    std::array<std::vector<uint8_t>, 2> model;
    int errors = 0;
  };
  std::array<std::atomic<int>, kStreams> callbacks_run{};
  std::array<int, kStreams> next_seq{};  // touched only by that stream's callbacks, in order
  std::atomic<int> out_of_order{0};
  std::array<PerThread, kThreads> per_thread;
  std::vector<std::unique_ptr<DeviceMemory>> bufs;
  std::vector<std::unique_ptr<Stream>> streams;  // destroyed (drained) before bufs
  for (int i = 0; i < kStreams; ++i) {
    streams.push_back(std::make_unique<Stream>(p()));
    bufs.push_back(std::make_unique<DeviceMemory>(p(), kBuf));
    ASSERT_NE(bufs[i]->data(), nullptr);
  }
  for (int t = 0; t < kThreads; ++t) {
    for (int k = 0; k < 2; ++k) {
      per_thread[t].model[k] = Pattern(kBuf, 100 + 2 * t + k);
      Put(bufs[2 * t + k]->get(), per_thread[t].model[k]);
    }
  }

  auto worker = [&](int t) {
    PerThread& me = per_thread[t];
    std::mt19937 rng(1234 + t);
    auto uniform = [&](uint64_t lo, uint64_t hi) {  // [lo, hi]
      return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
    };
    for (int e = 0; e < 4; ++e) {
      SP_Event ev = nullptr;
      StatusPtr s = NewStatus();
      se().create_event(dev(), &ev, s.get());
      if (TF_GetCode(s.get()) != TF_OK) ++me.errors;
      me.events.push_back(ev);
    }
    StatusPtr s = NewStatus();
    auto check = [&] {
      if (TF_GetCode(s.get()) != TF_OK) ++me.errors;
    };
    for (int op = 0; op < kOps; ++op) {
      const int k = static_cast<int>(uniform(0, 1));
      const int sid = 2 * t + k;
      SP_Stream stream = *streams[sid];
      DeviceMemory& buf = *bufs[sid];
      std::vector<uint8_t>& model = me.model[k];
      const uint64_t len = uniform(1, 512);
      const uint64_t off = uniform(0, kBuf - len);
      SP_DeviceMemoryBase at = buf.Slice(off, len);
      switch (uniform(0, 6)) {
        case 0: {  // htod
          me.sources.push_back(Pattern(len, static_cast<uint32_t>(rng())));
          se().memcpy_htod(dev(), stream, &at, me.sources.back().data(), len, s.get());
          check();
          std::copy(me.sources.back().begin(), me.sources.back().end(), model.begin() + off);
          break;
        }
        case 1: {  // memset
          const uint8_t v = static_cast<uint8_t>(rng());
          se().memset(dev(), stream, &at, v, len, s.get());
          check();
          std::fill(model.begin() + off, model.begin() + off + len, v);
          break;
        }
        case 2: {  // memset32 on a 4-byte aligned range
          const uint64_t off4 = off & ~uint64_t{3}, len4 = (len + 3) & ~uint64_t{3};
          if (off4 + len4 > kBuf) break;
          SP_DeviceMemoryBase at4 = buf.Slice(off4, len4);
          const uint32_t v = static_cast<uint32_t>(rng());
          se().memset32(dev(), stream, &at4, v, len4, s.get());
          check();
          for (uint64_t i = off4; i < off4 + len4; i += 4) std::memcpy(&model[i], &v, 4);
          break;
        }
        case 3: {  // dtoh snapshot
          me.snapshots.push_back(
              {std::vector<uint8_t>(len, 0),
               std::vector<uint8_t>(model.begin() + off, model.begin() + off + len)});
          se().memcpy_dtoh(dev(), stream, me.snapshots.back().host.data(), &at, len, s.get());
          check();
          break;
        }
        case 4: {  // dtod between the two halves of the buffer
          const uint64_t l = std::min<uint64_t>(len, kHalf);
          const uint64_t from = uniform(0, kHalf - l), to = kHalf + uniform(0, kHalf - l);
          const bool up = uniform(0, 1) == 1;
          SP_DeviceMemoryBase src = buf.Slice(up ? from : to, l), dst = buf.Slice(up ? to : from, l);
          se().memcpy_dtod(dev(), stream, &dst, &src, l, s.get());
          check();
          std::memmove(&model[up ? to : from], &model[up ? from : to], l);
          break;
        }
        case 5: {  // counting host callback, checks its stream's order
          const int seq = me.callbacks_enqueued[k]++;
          if (!EnqueueHostCallback(p(), stream, [&, sid, seq](TF_Status* st) {
                if (next_seq[sid] != seq || TF_GetCode(st) != TF_OK) out_of_order++;
                next_seq[sid]++;
                callbacks_run[sid]++;
              })) {
            ++me.errors;
          }
          break;
        }
        case 6: {  // record here, make some stream (any thread's) wait for it
          SP_Event ev = me.events[uniform(0, me.events.size() - 1)];
          se().record_event(dev(), stream, ev, s.get());
          check();
          se().wait_for_event(dev(), *streams[uniform(0, kStreams - 1)], ev, s.get());
          check();
          break;
        }
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();

  StatusPtr s = NewStatus();
  se().synchronize_all_activity(dev(), s.get());
  ExpectOk(s.get());
  EXPECT_EQ(out_of_order.load(), 0);
  for (int t = 0; t < kThreads; ++t) {
    PerThread& me = per_thread[t];
    EXPECT_EQ(me.errors, 0) << "thread " << t;
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(callbacks_run[2 * t + k].load(), me.callbacks_enqueued[k]) << "stream " << 2 * t + k;
      EXPECT_EQ(Get(bufs[2 * t + k]->get(), kBuf), me.model[k]) << "stream " << 2 * t + k;
    }
    EXPECT_GT(me.snapshots.size(), 100u);  // the mix really ran every kind
    EXPECT_GT(me.callbacks_enqueued[0] + me.callbacks_enqueued[1], 100);
    int bad = 0;
    for (const Snapshot& snap : me.snapshots) bad += snap.host != snap.expected;
    EXPECT_EQ(bad, 0) << "thread " << t << ": of " << me.snapshots.size() << " copy-outs";
    for (SP_Event ev : me.events) se().destroy_event(dev(), ev);
  }
}

INSTANTIATE_TEST_SUITE_P(Spin, VaccSeStressTest, ::testing::Values("0", "50"));

// Two devices driven at the same time from two threads, each allocating,
// copying, filling and calling back on its own stream, get their own results.
TEST_F(VaccSeStreamTest, TwoDevicesConcurrently) {
  EnvVars env = kEnv;
  env.emplace_back("VACC_DEVICE_COUNT", "2");
  ASSERT_TRUE(Load(env));
  ASSERT_EQ(p().device_count(), 2);
  constexpr int kIters = 300;
  std::array<int, 2> wrong{}, errors{};
  std::array<std::atomic<int>, 2> callbacks{};
  auto worker = [&](int d) {
    Stream stream(p(), d);
    StatusPtr s = NewStatus();
    for (int i = 0; i < kIters; ++i) {
      const uint64_t n = 1 + (static_cast<uint64_t>(i) * 977 + d * 131) % 20000;
      DeviceMemory buf(p(), n, d);
      if (buf.data() == nullptr) {
        ++errors[d];
        continue;
      }
      const std::vector<uint8_t> src = Pattern(n, static_cast<uint32_t>(d * 100000 + i));
      std::vector<uint8_t> host(n, 0), expected = src;
      const uint64_t fill = n / 3;
      std::fill(expected.begin(), expected.begin() + fill, static_cast<uint8_t>(d + 1));
      se().memcpy_htod(dev(d), stream, buf.get(), src.data(), n, s.get());
      errors[d] += TF_GetCode(s.get()) != TF_OK;
      se().memset(dev(d), stream, buf.get(), static_cast<uint8_t>(d + 1), fill, s.get());
      errors[d] += TF_GetCode(s.get()) != TF_OK;
      se().memcpy_dtoh(dev(d), stream, host.data(), buf.get(), n, s.get());
      errors[d] += TF_GetCode(s.get()) != TF_OK;
      errors[d] += !EnqueueHostCallback(p(), stream, [&, d](TF_Status*) { callbacks[d]++; }, d);
      se().block_host_until_done(dev(d), stream, s.get());
      errors[d] += TF_GetCode(s.get()) != TF_OK;
      wrong[d] += host != expected;
    }
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(errors[d], 0) << "device " << d;
    EXPECT_EQ(wrong[d], 0) << "device " << d;
    EXPECT_EQ(callbacks[d].load(), kIters) << "device " << d;
    SP_AllocatorStats st{};
    st.struct_size = SP_ALLOCATORSTATS_STRUCT_SIZE;
    ASSERT_TRUE(se().get_allocator_stats(dev(d), &st));
    EXPECT_EQ(st.num_allocs, kIters) << "device " << d;
    EXPECT_EQ(st.bytes_in_use, 0) << "device " << d;
  }
}

}  // namespace
}  // namespace vacc_test
