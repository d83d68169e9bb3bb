// SPDX-License-Identifier: Apache-2.0
//
// The vacc device runtime through its C++ API: the heap, the compute units,
// streams, events, timers and the configuration, below the C callbacks.
#include <pthread.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "vacc_compute_units.h"
#include "vacc_config.h"
#include "vacc_heap.h"
#include "vacc_shares.h"
#include "vacc_stream.h"
#include "vacc_thread_state.h"
#include "vacc_wait.h"

namespace vacc {
namespace {

constexpr std::chrono::microseconds kSpin{20};

// ---- DeviceHeap

// Allocations are aligned, distinct, counted exactly, and 0 bytes gives NULL.
TEST(Heap, AllocatesAlignedAndCountsExactly) {
  DeviceHeap heap(1 << 20);
  ASSERT_TRUE(heap.ok());
  EXPECT_EQ(heap.Allocate(0), nullptr);
  void* a = heap.Allocate(100);
  void* b = heap.Allocate(1);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % DeviceHeap::kAlignment, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % DeviceHeap::kAlignment, 0u);
  HeapStats s = heap.Stats();
  EXPECT_EQ(s.num_allocs, 2);
  EXPECT_EQ(s.live_allocs, 2);
  EXPECT_EQ(s.bytes_in_use, 101);
  EXPECT_EQ(s.bytes_reserved, 128 + 64);
  EXPECT_EQ(s.largest_alloc_size, 100);
  EXPECT_EQ(s.bytes_limit, 1 << 20);
  ASSERT_TRUE(heap.Deallocate(a));
  s = heap.Stats();
  EXPECT_EQ(s.bytes_in_use, 1);
  EXPECT_EQ(s.peak_bytes_in_use, 101);
  EXPECT_EQ(s.num_allocs, 2);
  EXPECT_EQ(s.live_allocs, 1);
  EXPECT_TRUE(heap.Deallocate(b));
}

// Freed neighbours coalesce: after freeing everything in a scrambled order
// the whole capacity is one block again.
TEST(Heap, CoalescesToOneBlock) {
  const uint64_t capacity = 64 * 1024;
  DeviceHeap heap(capacity);
  std::vector<void*> blocks;
  for (void* p; (p = heap.Allocate(1000)) != nullptr;) blocks.push_back(p);
  EXPECT_EQ(blocks.size(), capacity / 1024);  // 1000 rounds up to 1024
  EXPECT_EQ(heap.Stats().largest_free_block_bytes, 0);
  for (size_t i = 0; i < blocks.size(); i += 2) ASSERT_TRUE(heap.Deallocate(blocks[i]));
  EXPECT_EQ(heap.Stats().largest_free_block_bytes, 1024);  // holes, not yet merged
  EXPECT_EQ(heap.Allocate(2048), nullptr);
  for (size_t i = 1; i < blocks.size(); i += 2) ASSERT_TRUE(heap.Deallocate(blocks[i]));
  EXPECT_EQ(heap.Stats().largest_free_block_bytes, static_cast<int64_t>(capacity));
  void* all = heap.Allocate(capacity);
  EXPECT_NE(all, nullptr);
  EXPECT_TRUE(heap.Deallocate(all));
}

// Best fit: a request goes to the smallest hole that holds it.
TEST(Heap, BestFit) {
  DeviceHeap heap(16 * 1024);
  void* a = heap.Allocate(4096);
  void* sep1 = heap.Allocate(64);
  void* b = heap.Allocate(1024);
  void* sep2 = heap.Allocate(64);
  ASSERT_TRUE(a && sep1 && b && sep2);
  ASSERT_TRUE(heap.Deallocate(a));  // 4096 hole
  ASSERT_TRUE(heap.Deallocate(b));  // 1024 hole
  EXPECT_EQ(heap.Allocate(1000), b);
  EXPECT_EQ(heap.Allocate(4000), a);
}

// Beyond capacity fails cleanly, and so does an absurd size.
TEST(Heap, ExhaustionReturnsNull) {
  DeviceHeap heap(4096);
  EXPECT_EQ(heap.Allocate(4097), nullptr);
  EXPECT_EQ(heap.Allocate(uint64_t{1} << 62), nullptr);
  void* p = heap.Allocate(4096);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(heap.Allocate(1), nullptr);
  EXPECT_TRUE(heap.Deallocate(p));
}

// Deallocate accepts only the start of a live block; twice is refused.
TEST(Heap, DeallocateRejectsForeignAndRepeated) {
  DeviceHeap heap(4096);
  int on_stack = 0;
  char* p = static_cast<char*>(heap.Allocate(256));
  EXPECT_FALSE(heap.Deallocate(&on_stack));
  EXPECT_FALSE(heap.Deallocate(p + 64));
  EXPECT_TRUE(heap.Deallocate(p));
  EXPECT_FALSE(heap.Deallocate(p));
  EXPECT_EQ(heap.Stats().live_allocs, 0);
}

// Contains: ranges inside one live allocation (its requested size) only.
TEST(Heap, ContainsChecksRanges) {
  DeviceHeap heap(4096);
  char* p = static_cast<char*>(heap.Allocate(100));
  char* q = static_cast<char*>(heap.Allocate(100));
  EXPECT_TRUE(heap.Contains(p, 100));
  EXPECT_TRUE(heap.Contains(p + 99, 1));
  EXPECT_TRUE(heap.Contains(p + 100, 0));
  EXPECT_FALSE(heap.Contains(p, 101));      // into the rounding slack
  EXPECT_FALSE(heap.Contains(p + 50, 60));
  EXPECT_FALSE(heap.Contains(q - 1, 2));    // straddles two blocks
  int on_stack = 0;
  EXPECT_FALSE(heap.Contains(&on_stack, 1));
  EXPECT_FALSE(heap.Owns(&on_stack));
  EXPECT_TRUE(heap.Owns(p));
  heap.Deallocate(p);
  EXPECT_FALSE(heap.Contains(p, 1));        // freed
}

// ---- ComputeUnits

// Every index of [0, n) is visited exactly once, for many n and grains,
// from outside the units.
TEST(ComputeUnits, ParallelForCoversEachIndexOnce) {
  ComputeUnits units(3, kSpin);
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{64}, size_t{1000},
                   size_t{4099}}) {
    for (size_t grain : {size_t{1}, size_t{3}, size_t{100}, size_t{5000}}) {
      std::vector<std::atomic<int>> hits(n);
      units.ParallelFor(n, grain, [&](size_t b, size_t e) {
        ASSERT_LE(b, e);
        ASSERT_LE(e, n);
        for (size_t i = b; i < e; ++i) hits[i].fetch_add(1);
      });
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
    }
  }
}

// Item by item: every index once, one per call, from the caller or a unit.
TEST(ComputeUnits, ParallelForEachItemHandsOutSingleItems) {
  ComputeUnits units(3, kSpin);
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{5}, size_t{97}}) {
    std::vector<std::atomic<int>> hits(n);
    units.ParallelForEachItem(n, [&](size_t b, size_t e) {
      ASSERT_EQ(e, b + 1) << "n=" << n;
      ASSERT_LT(b, n);
      hits[b].fetch_add(1);
    });
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

// The work really spreads: with the units blocked until every participant
// has arrived, ParallelFor only finishes if several threads take part.
// Shares: every item is taken exactly once, each participant first takes
// its own share in order, and once one stops the others finish its share.
TEST(Shares, EachItemOnceOwnShareFirst) {
  for (int parts : {1, 2, 3}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{5}, size_t{64}}) {
      Shares shares(n, parts);
      size_t item;
      // Participant 0 alone first: its own share, from the front.
      std::vector<size_t> taken;
      for (size_t i = 0; i < n / static_cast<size_t>(parts); ++i) {
        ASSERT_TRUE(shares.Next(0, &item));
        taken.push_back(item);
        EXPECT_EQ(item, i) << parts << " parts, " << n << " items";
      }
      // Then everyone, concurrently, until nothing is left.
      std::vector<std::atomic<int>> count(n);
      for (size_t t : taken) count[t]++;
      std::vector<std::thread> threads;
      for (int p = 0; p < parts; ++p) {
        threads.emplace_back([&, p] {
          for (size_t i; shares.Next(p, &i);) count[i]++;
        });
      }
      for (std::thread& t : threads) t.join();
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(count[i].load(), 1) << "item " << i;
      EXPECT_FALSE(shares.Next(0, &item));
    }
  }
  // A participant that never comes: the others take its whole share, from the back.
  Shares shares(8, 2);
  std::vector<size_t> order;
  for (size_t i; shares.Next(0, &i);) order.push_back(i);
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 7, 6, 5, 4}));
}

// The caller's share comes first: chunk 0 runs on the calling thread every
// call, so consecutive ops hand the same range to the same thread. (The
// helper's chunk waits until chunk 0 has started: a helper that finished
// its own share first could otherwise take chunk 0 from the back.)
TEST(ComputeUnits, ParallelForGivesTheCallerTheFirstShare) {
  ComputeUnits units(1, std::chrono::microseconds(200));
  for (int call = 0; call < 50; ++call) {
    std::atomic<bool> first_started{false};
    std::thread::id first_ran_on;
    units.ParallelFor(2, 1, [&](size_t begin, size_t) {
      if (begin == 0) {
        first_ran_on = std::this_thread::get_id();
        first_started = true;
      } else {
        while (!first_started) std::this_thread::yield();
      }
    });
    ASSERT_EQ(first_ran_on, std::this_thread::get_id()) << "call " << call;
  }
}

// Each helper part goes to the same worker call after call while the
// workers spin between calls (the first spinning worker gets part 1, the
// next part 2, ...), so a range runs on the same core from one op to the
// next.
// Every chunk waits until all have started, so none is taken by another
// participant. Workers that numbered themselves as they came would
// reshuffle the parts between calls.
TEST(ComputeUnits, ParallelForGivesEachHelperTheSamePartEveryCall) {
  ComputeUnits units(3, std::chrono::milliseconds(200));  // nobody parks between calls
  constexpr size_t kParts = 4;                              // the caller and three helpers
  std::vector<std::thread::id> first(kParts);
  for (int call = 0; call < 30; ++call) {
    std::atomic<size_t> started{0};
    std::vector<std::thread::id> ran_on(kParts);
    units.ParallelFor(kParts, 1, [&](size_t begin, size_t) {
      ran_on[begin] = std::this_thread::get_id();
      started.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (started.load() < kParts && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
    });
    ASSERT_EQ(std::set<std::thread::id>(ran_on.begin(), ran_on.end()).size(), kParts)
        << "call " << call << ": a chunk was not run by its own participant";
    if (call == 0) first = ran_on;
    for (size_t part = 0; part < kParts; ++part) {
      ASSERT_EQ(ran_on[part], first[part]) << "call " << call << ", part " << part;
    }
  }
}

// A parked worker is woken for its part: with a spin of 0 the only unit
// parks at once, and the helper's chunk still runs on it, not on the
// caller (which, had the wake-up been lost, would take that chunk itself
// after waiting out its bound).
TEST(ComputeUnits, ParallelForWakesAParkedUnit) {
  ComputeUnits units(1, std::chrono::microseconds(0));
  std::promise<pid_t> worker;
  units.Submit([&] { worker.set_value(CurrentTid()); });
  const pid_t worker_tid = worker.get_future().get();
  for (int call = 0; call < 5; ++call) {
    ASSERT_TRUE(SeenAsleep(worker_tid)) << "call " << call;
    std::atomic<bool> helper_started{false};
    std::atomic<pid_t> helper_tid{0};
    units.ParallelFor(2, 1, [&](size_t begin, size_t) {
      if (begin == 1) {
        helper_tid.store(CurrentTid());
        helper_started.store(true);
        return;
      }
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!helper_started.load() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    });
    ASSERT_EQ(helper_tid.load(), worker_tid) << "call " << call;
  }
}

// Submits two tasks that each wait (up to 10 s) until both have started,
// and returns the threads they ran on: two, unless the second task was
// left queued while the first held the other worker.
std::set<pid_t> TwoTasksThatWaitForEachOther(ComputeUnits& units) {
  // Shared with the tasks, not on this stack: a task still queued when
  // this gives up (a failing run) must not touch a frame that is gone.
  struct Rendezvous {
    std::atomic<int> arrived{0};
    std::mutex mu;
    std::set<pid_t> tids;
  };
  const auto shared = std::make_shared<Rendezvous>();
  for (int i = 0; i < 2; ++i) {
    units.Submit([shared] {
      {
        std::lock_guard<std::mutex> lock(shared->mu);
        shared->tids.insert(CurrentTid());
      }
      shared->arrived.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (shared->arrived.load() < 2 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
      shared->arrived.fetch_add(1);  // done waiting: 4 once both are
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (shared->arrived.load() < 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::lock_guard<std::mutex> lock(shared->mu);
  return shared->tids;
}

// Submit wakes a parked unit for each task the spinning ones cannot take.
// Both units parked: the first Submit wakes one, and the second, before
// that one has even run (still reading as parked), must wake the other;
// a rule that woke the first parked unit it found woke the same one
// twice, and the second task waited out the first's 10 s.
TEST(ComputeUnits, SubmitWakesAParkedUnitPerTask) {
  ComputeUnits units(2, std::chrono::microseconds(0));
  const std::set<pid_t> tids = TwoTasksThatWaitForEachOther(units);
  ASSERT_EQ(tids.size(), 2u) << "the two tasks did not run on two workers";
  for (int round = 0; round < 5; ++round) {
    for (pid_t tid : tids) ASSERT_TRUE(SeenAsleep(tid)) << "round " << round;
    EXPECT_EQ(TwoTasksThatWaitForEachOther(units), tids) << "round " << round;
  }
}

// An offer wakes only the worker it is for. Two units, both parked (a spin
// of 0): each call's one helper part goes to one of them, and the other
// must not wake. Woken for nothing, it would find no work, spin for its
// budget and sleep again: one more voluntary context switch each call (as
// when all parked workers shared one condition variable).
TEST(ComputeUnits, ParallelForWakesOnlyTheUnitItOffersAPart) {
  ComputeUnits units(2, std::chrono::microseconds(0));
  const std::set<pid_t> tids = TwoTasksThatWaitForEachOther(units);
  ASSERT_EQ(tids.size(), 2u) << "the two tasks did not run on two workers";
  for (int call = 0; call < 5; ++call) {
    std::map<pid_t, long> before;
    for (pid_t tid : tids) {
      ASSERT_TRUE(SeenAsleep(tid)) << "call " << call;
      before[tid] = VoluntarySwitches(tid);
      ASSERT_GE(before[tid], 0);
    }
    std::atomic<pid_t> helper_tid{0};
    units.ParallelFor(2, 1, [&](size_t begin, size_t) {
      if (begin == 1) {
        helper_tid.store(CurrentTid());
        return;
      }
      // Long enough for a worker woken by mistake to wake, spin and park.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (helper_tid.load() == 0 && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    });
    ASSERT_EQ(tids.count(helper_tid.load()), 1u) << "call " << call << ": no worker helped";
    for (pid_t tid : tids) {
      if (tid == helper_tid.load()) continue;
      ASSERT_TRUE(SeenAsleep(tid)) << "call " << call;
      EXPECT_EQ(VoluntarySwitches(tid), before[tid])
          << "call " << call << ": the unit not offered a part was woken";
    }
  }
}

// A unit busy with other work (a stream's operations) is offered a part
// only after the idle ones, parked or not: with one unit held by a task
// and the other parked, the helper's chunk runs on the parked one, woken
// for it, not on the caller after waiting for the busy one.
TEST(ComputeUnits, ParallelForPrefersAParkedUnitToABusyOne) {
  ComputeUnits units(2, std::chrono::microseconds(0));
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<pid_t> busy_tid{0};
  units.Submit([&, released] {
    busy_tid.store(CurrentTid());
    released.wait();
  });
  const auto started_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (busy_tid.load() == 0 && std::chrono::steady_clock::now() < started_by) {
    std::this_thread::yield();
  }
  if (busy_tid.load() == 0) {
    release.set_value();  // else the units' destructor would wait for it forever
    FAIL() << "the holding task never started";
  }
  std::atomic<pid_t> helper_tid{0};
  units.ParallelFor(2, 1, [&](size_t begin, size_t) {
    if (begin == 1) {
      helper_tid.store(CurrentTid());
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (helper_tid.load() == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  release.set_value();
  EXPECT_NE(helper_tid.load(), 0);
  EXPECT_NE(helper_tid.load(), CurrentTid()) << "the caller ran the helper's chunk";
  EXPECT_NE(helper_tid.load(), busy_tid.load());
}

TEST(ComputeUnits, ParallelForUsesSeveralThreads) {
  ComputeUnits units(2, kSpin);
  std::atomic<int> arrived{0};
  std::mutex mu;
  std::set<std::thread::id> threads;
  units.ParallelFor(3, 1, [&](size_t, size_t) {
    {
      std::lock_guard<std::mutex> lock(mu);
      threads.insert(std::this_thread::get_id());
    }
    arrived.fetch_add(1);
    // Wait (bounded) for a second participant: a serial implementation
    // would reach the end with one thread id only.
    for (int i = 0; i < 2000 && arrived.load() < 2; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  EXPECT_GE(threads.size(), 2u);
}

// Each worker is named "<name>-u<i>", cut to Linux's 15 characters.
TEST(ComputeUnits, WorkersAreNamed) {
  ComputeUnits units(2, kSpin, "vacc3");
  std::mutex mu;
  std::set<std::string> names;
  std::atomic<int> arrived{0};
  std::promise<void> both;
  std::shared_future<void> go = both.get_future().share();
  for (int i = 0; i < 2; ++i) {
    units.Submit([&, go] {
      char name[16] = {};
      pthread_getname_np(pthread_self(), name, sizeof name);
      {
        std::lock_guard<std::mutex> lock(mu);
        names.insert(name);
      }
      // Hold this unit until both ran, so that each task gets its own.
      if (arrived.fetch_add(1) == 1) both.set_value();
      go.wait();
    });
  }
  go.wait();
  EXPECT_EQ(names, (std::set<std::string>{"vacc3-u0", "vacc3-u1"}));
  ComputeUnits long_named(1, kSpin, "a-very-long-device-name");
  std::string got;
  std::promise<void> done;
  long_named.Submit([&] {
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof name);
    got = name;
    done.set_value();
  });
  done.get_future().wait();
  EXPECT_EQ(got, "a-very-long-dev");
}

// ---- WaitPoint

// A waiter whose condition is false spins for its budget, then sleeps (seen
// in /proc) until Notify; one whose condition holds returns at once, and
// Notify with nobody asleep is a no-op.
TEST(WaitPoint, SleepsAfterItsSpinAndWakesOnNotify) {
  WaitPoint point;
  std::atomic<bool> ready{false};
  point.Notify();
  for (auto spin : {std::chrono::microseconds(0), std::chrono::microseconds(50)}) {
    ready.store(false);
    std::atomic<pid_t> tid{0};
    std::thread waiter([&] {
      tid.store(CurrentTid());
      point.Wait(spin, [&] { return ready.load(); });
    });
    while (tid.load() == 0) std::this_thread::yield();
    EXPECT_TRUE(SeenAsleep(tid.load())) << "spin " << spin.count() << " us";
    ready.store(true);
    point.Notify();
    waiter.join();
  }
  point.Wait(std::chrono::microseconds(0), [&] { return ready.load(); });  // already true
}

// ParallelFor's caller, its own share done and a helper's chunk held up (as
// by a preempted unit), sleeps until that chunk is done instead of spinning
// and yielding, which on a loaded machine takes core time from the helper.
TEST(ComputeUnits, ParallelForCallerSleepsWhileAHelperIsHeld) {
  ComputeUnits units(1, kSpin);
  std::promise<void> open_gate;
  std::shared_future<void> gate = open_gate.get_future().share();
  std::atomic<pid_t> caller{0};
  std::atomic<bool> helper_started{false}, caller_share_done{false};
  std::thread t([&] {
    caller.store(CurrentTid());
    units.ParallelFor(2, 1, [&](size_t begin, size_t) {
      if (CurrentTid() != caller.load()) {  // the helper's chunk: held
        helper_started.store(true);
        gate.wait();
        return;
      }
      // The caller's chunk (it may also take the other, if it gets there
      // first: then nothing is held and the test cannot see a sleep).
      if (begin == 0) {
        while (!helper_started.load()) std::this_thread::yield();
        caller_share_done.store(true);
      }
    });
  });
  while (!caller_share_done.load()) std::this_thread::yield();
  EXPECT_TRUE(SeenAsleep(caller.load()));
  open_gate.set_value();
  t.join();
}

// Called from a unit, and nested, it still completes and covers everything.
TEST(ComputeUnits, ParallelForFromUnitAndNested) {
  ComputeUnits units(2, kSpin);
  std::promise<long> result;
  units.Submit([&] {
    EXPECT_TRUE(units.OnUnit());
    std::atomic<long> sum{0};
    units.ParallelFor(8, 1, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) {
        units.ParallelFor(100, 10, [&](size_t b2, size_t e2) {
          for (size_t j = b2; j < e2; ++j) sum.fetch_add(static_cast<long>(i * 100 + j));
        });
      }
    });
    result.set_value(sum.load());
  });
  // sum of 0..799
  EXPECT_EQ(result.get_future().get(), 799L * 800 / 2);
  EXPECT_FALSE(units.OnUnit());
}

// Several threads start steps at once (as streams on different host
// threads do): their offers race for the same mailboxes, some are taken,
// some withdrawn, and steps run nested inside others' parts. Every call
// still covers each of its indices exactly once, and only returns once
// each is done.
TEST(ComputeUnits, ParallelForFromManyThreadsAtOnce) {
  ComputeUnits units(3, kSpin);
  std::atomic<int> bad_calls{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int call = 0; call < 200; ++call) {
        const size_t n = 1 + static_cast<size_t>((call * 7 + t) % 40);
        std::vector<std::atomic<int>> hits(n);
        units.ParallelFor(n, 1, [&](size_t b, size_t e) {
          for (size_t i = b; i < e; ++i) {
            if (call % 10 == 0) {  // now and then a step inside a part
              std::atomic<int> inner{0};
              units.ParallelFor(8, 1, [&](size_t b2, size_t e2) {
                inner.fetch_add(static_cast<int>(e2 - b2));
              });
              if (inner.load() != 8) bad_calls.fetch_add(1);
            }
            // Long enough that a helper still in its chunk when its
            // caller returned would be seen in the count below.
            const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(5);
            while (std::chrono::steady_clock::now() < until) {
            }
            hits[i].fetch_add(1);
          }
        });
        for (size_t i = 0; i < n; ++i) {
          if (hits[i].load() != 1) bad_calls.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& c : callers) c.join();
  EXPECT_EQ(bad_calls.load(), 0);
}

// With every unit blocked, ParallelFor from outside finishes on the caller.
TEST(ComputeUnits, ParallelForWhileAllUnitsBusy) {
  ComputeUnits units(2, kSpin);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> blocked{0};
  for (int i = 0; i < 2; ++i) {
    units.Submit([&, released] {
      blocked.fetch_add(1);
      released.wait();
    });
  }
  while (blocked.load() < 2) std::this_thread::yield();
  std::atomic<int> count{0};
  units.ParallelFor(1000, 1, [&](size_t b, size_t e) { count.fetch_add(static_cast<int>(e - b)); });
  EXPECT_EQ(count.load(), 1000);
  release.set_value();
}

// Tasks submitted from many threads all run exactly once, also those still
// queued when the units are destroyed.
TEST(ComputeUnits, SubmitFromManyThreadsAndDrainOnDestruction) {
  std::atomic<int> ran{0};
  {
    ComputeUnits units(2, std::chrono::microseconds(0));  // park at once
    std::vector<std::thread> producers;
    for (int t = 0; t < 4; ++t) {
      producers.emplace_back([&] {
        for (int i = 0; i < 2500; ++i) units.Submit([&] { ran.fetch_add(1); });
      });
    }
    for (auto& p : producers) p.join();
  }
  EXPECT_EQ(ran.load(), 10000);
}

// ---- Stream

// Operations run in enqueue order, and their numbers count up.
TEST(Stream, RunsInOrder) {
  ComputeUnits units(2, kSpin);
  auto s = std::make_shared<Stream>(&units, kSpin);
  std::vector<int> order;
  uint64_t last = 0;
  for (int i = 0; i < 500; ++i) {
    last = s->Enqueue([&order, i] {
      order.push_back(i);  // one stream: never two of these at once
      return Status();
    });
  }
  EXPECT_EQ(last, 500u);
  EXPECT_EQ(s->last_enqueued(), 500u);
  EXPECT_TRUE(s->BlockUntilDone().ok());
  ASSERT_EQ(order.size(), 500u);
  for (int i = 0; i < 500; ++i) ASSERT_EQ(order[i], i);
}

// A failed operation makes the status sticky: later work is skipped, work
// enqueued with EnqueueAlways still runs and sees the error.
TEST(Stream, ErrorsAreSticky) {
  ComputeUnits units(1, kSpin);
  auto s = std::make_shared<Stream>(&units, kSpin);
  bool skipped_ran = false;
  Status seen;
  s->Enqueue([] { return Status::Error(TF_DATA_LOSS, "kernel exploded"); });
  s->Enqueue([&] {
    skipped_ran = true;
    return Status();
  });
  s->EnqueueAlways([&](const Status& so_far) {
    seen = so_far;
    return Status();  // an OK result does not clear the failure
  });
  const Status done = s->BlockUntilDone();
  EXPECT_EQ(done.code, TF_DATA_LOSS);
  EXPECT_EQ(done.message, "kernel exploded");
  EXPECT_FALSE(skipped_ran);
  EXPECT_EQ(seen.code, TF_DATA_LOSS);
  EXPECT_EQ(s->status().code, TF_DATA_LOSS);
}

// ---- Stream::RunAndWait (the synchronous kernel's path)

// On an idle stream the caller runs the work itself, counted as one of the
// units: a ParallelFor inside uses the caller and at most size() - 1 others.
TEST(Stream, RunAndWaitOnIdleStreamRunsOnCallerAsAUnit) {
  ComputeUnits units(2, kSpin);
  auto s = std::make_shared<Stream>(&units, kSpin);
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id ran_on;
  std::mutex mu;
  std::set<std::thread::id> helpers;
  std::atomic<long> sum{0};
  const Status st = s->RunAndWait([&] {
    ran_on = std::this_thread::get_id();
    EXPECT_TRUE(units.OnUnit());
    units.ParallelFor(64, 1, [&](size_t b, size_t e) {
      {
        std::lock_guard<std::mutex> lock(mu);
        helpers.insert(std::this_thread::get_id());
      }
      for (size_t i = b; i < e; ++i) sum.fetch_add(static_cast<long>(i));
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // let a unit join in
    });
    return Status();
  });
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(ran_on, caller);
  EXPECT_EQ(sum.load(), 63L * 64 / 2);
  EXPECT_LE(helpers.size(), 2u);  // the caller and one unit: a device of 2
  EXPECT_FALSE(units.OnUnit());   // the scope ended with the work
  EXPECT_EQ(s->last_enqueued(), 1u);
  EXPECT_TRUE(s->Reached(1));
}

// With a single unit, work run inline splits across nobody else.
TEST(Stream, RunAndWaitOnOneUnitDeviceUsesOnlyTheCaller) {
  ComputeUnits units(1, kSpin);
  auto s = std::make_shared<Stream>(&units, kSpin);
  std::set<std::thread::id> threads;
  std::mutex mu;
  ASSERT_TRUE(s->RunAndWait([&] {
                 units.ParallelFor(16, 1, [&](size_t, size_t) {
                   std::lock_guard<std::mutex> lock(mu);
                   threads.insert(std::this_thread::get_id());
                 });
                 return Status();
               }).ok());
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
}

// On a busy stream the work queues behind what is there, runs on a unit,
// in order; what others enqueue during an inline run runs after it.
TEST(Stream, RunAndWaitKeepsStreamOrder) {
  ComputeUnits units(2, kSpin);
  auto s = std::make_shared<Stream>(&units, kSpin);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<int> order;  // one stream: never two writers at once
  s->Enqueue([&, released] {
    released.wait();
    order.push_back(1);
    return Status();
  });
  std::thread::id ran_on;
  auto busy = std::async(std::launch::async, [&] {
    return s->RunAndWait([&] {
      ran_on = std::this_thread::get_id();
      order.push_back(2);
      return Status();
    });
  });
  // Let RunAndWait find the stream busy before the first operation ends.
  while (s->last_enqueued() < 2) std::this_thread::yield();
  release.set_value();
  EXPECT_TRUE(busy.get().ok());
  EXPECT_FALSE(units.OnUnit());
  EXPECT_NE(ran_on, std::this_thread::get_id());
  // Inline now (idle); another thread enqueues while it runs.
  std::atomic<bool> third_enqueued{false};
  ASSERT_TRUE(s->RunAndWait([&] {
                 order.push_back(3);
                 std::thread([&] {
                   s->Enqueue([&] {
                     order.push_back(4);
                     return Status();
                   });
                   third_enqueued = true;
                 }).join();
                 return Status();
               }).ok());
  ASSERT_TRUE(third_enqueued.load());
  EXPECT_TRUE(s->BlockUntilDone().ok());  // a unit ran the 4th after the inline 3rd
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(s->last_enqueued(), 4u);
}

// Errors stay sticky across both paths: a failing inline run fails the
// stream; on a failed stream the work is skipped and the error returned.
TEST(Stream, RunAndWaitErrorsAreSticky) {
  ComputeUnits units(1, kSpin);
  auto s = std::make_shared<Stream>(&units, kSpin);
  const Status first = s->RunAndWait([] { return Status::Error(TF_ABORTED, "inline failed"); });
  EXPECT_EQ(first.code, TF_ABORTED);
  bool ran = false;
  const Status second = s->RunAndWait([&] {
    ran = true;
    return Status();
  });
  EXPECT_FALSE(ran);
  EXPECT_EQ(second.code, TF_ABORTED);
  EXPECT_EQ(second.message, "inline failed");
  bool queued_ran = false;
  s->Enqueue([&] {
    queued_ran = true;
    return Status();
  });
  EXPECT_EQ(s->BlockUntilDone().code, TF_ABORTED);
  EXPECT_FALSE(queued_ran);
}

// ---- Stream::RunNowOrEnqueue (small copies, event records)

// Holds the device's only unit on another stream until the returned
// promise is set: whatever still needs a unit cannot run meanwhile.
std::promise<void> OccupyOnlyUnit(ComputeUnits& units, std::shared_ptr<Stream>* other) {
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::promise<void> started;
  *other = std::make_shared<Stream>(&units, kSpin);
  (*other)->Enqueue([open, &started] {
    started.set_value();
    open.wait();
    return Status();
  });
  started.get_future().wait();
  return gate;
}

// Idle: it runs now, on the caller, though the only unit is busy elsewhere.
// Busy: it queues behind the stream's work, in order. Failed: work is
// skipped, always-work runs and sees the error.
TEST(Stream, RunNowOrEnqueueRunsOnCallerOnlyWhenIdle) {
  ComputeUnits units(1, kSpin);
  std::shared_ptr<Stream> other;
  std::promise<void> unit_free = OccupyOnlyUnit(units, &other);
  auto s = std::make_shared<Stream>(&units, kSpin);
  std::thread::id ran_on;
  const uint64_t first = s->RunNowOrEnqueue([&] {
    ran_on = std::this_thread::get_id();
    return Status();
  });
  EXPECT_EQ(first, 1u);
  EXPECT_TRUE(s->Reached(first));  // done before it returned: no unit was free
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_FALSE(units.OnUnit());

  std::vector<int> order;
  s->Enqueue([&] {  // needs the unit: the stream is busy until it is free
    order.push_back(1);
    return Status();
  });
  const uint64_t third = s->RunNowOrEnqueue([&] {
    order.push_back(2);
    return Status();
  });
  EXPECT_EQ(third, 3u);
  EXPECT_FALSE(s->Reached(third));
  EXPECT_TRUE(order.empty());
  unit_free.set_value();
  EXPECT_TRUE(s->BlockUntilDone().ok());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));

  EXPECT_EQ(s->RunNowOrEnqueue([] { return Status::Error(TF_DATA_LOSS, "lost"); }), 4u);
  bool skipped_ran = false;
  s->RunNowOrEnqueue([&] {
    skipped_ran = true;
    return Status();
  });
  Status seen;
  s->RunNowOrEnqueueAlways([&](const Status& so_far) {
    seen = so_far;
    return Status();
  });
  EXPECT_FALSE(skipped_ran);
  EXPECT_EQ(seen.code, TF_DATA_LOSS);
  EXPECT_EQ(s->status().code, TF_DATA_LOSS);
  EXPECT_TRUE(other->BlockUntilDone().ok());
}

// EnqueueWait holds back later work until the other stream gets there; the
// waiting stream does not occupy a unit meanwhile (one unit only here).
TEST(Stream, WaitsForAnotherStream) {
  ComputeUnits units(1, kSpin);
  auto a = std::make_shared<Stream>(&units, kSpin);
  auto b = std::make_shared<Stream>(&units, kSpin);
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::atomic<bool> a_done{false}, b_ran_before_a{false};
  std::atomic<bool> b_ran{false};
  // A first waits on an event-like flag set from the host via B's side: use a
  // host-side gate on A so B has to park.
  a->Enqueue([open, &a_done] {
    open.wait();
    a_done = true;
    return Status();
  });
  b->EnqueueWait(a, a->last_enqueued());
  b->Enqueue([&] {
    b_ran_before_a = !a_done.load();
    b_ran = true;
    return Status();
  });
  // The single unit is busy with A's gate; B must not have run.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(b_ran.load());
  gate.set_value();
  EXPECT_TRUE(b->BlockUntilDone().ok());
  EXPECT_TRUE(b_ran.load());
  EXPECT_FALSE(b_ran_before_a.load());
}

// A wait for work that has already completed (or for itself) costs nothing
// and does not block.
TEST(Stream, WaitForReachedOrSelfIsNoop) {
  ComputeUnits units(1, kSpin);
  auto a = std::make_shared<Stream>(&units, kSpin);
  a->Enqueue([] { return Status(); });
  ASSERT_TRUE(a->BlockUntilDone().ok());
  const uint64_t before = a->last_enqueued();
  a->EnqueueWait(a, before + 5);  // self
  a->EnqueueWait(nullptr, 1);
  EXPECT_EQ(a->last_enqueued(), before);
  auto b = std::make_shared<Stream>(&units, kSpin);
  b->EnqueueWait(a, before);  // already reached
  EXPECT_EQ(b->last_enqueued(), 0u);
}

// Host waits work with spinning disabled (the waiter parks) and enabled.
TEST(Stream, HostWaitParksAndSpins) {
  for (auto spin : {std::chrono::microseconds(0), std::chrono::microseconds(200)}) {
    ComputeUnits units(1, spin);
    auto s = std::make_shared<Stream>(&units, spin);
    std::atomic<int> ran{0};
    for (int i = 0; i < 100; ++i) {
      s->Enqueue([&] {
        ran.fetch_add(1);
        return Status();
      });
      if (i % 10 == 0) {
        EXPECT_TRUE(s->BlockUntilDone().ok());
      }
    }
    EXPECT_TRUE(s->WaitFor(s->last_enqueued()).ok());
    EXPECT_EQ(ran.load(), 100);
  }
}

// Many streams on two units: each keeps its own order under contention.
TEST(Stream, ManyStreamsKeepTheirOrder) {
  ComputeUnits units(2, kSpin);
  constexpr int kStreams = 16, kOps = 300;
  std::vector<std::shared_ptr<Stream>> streams;
  std::vector<std::vector<int>> seen(kStreams);
  for (int i = 0; i < kStreams; ++i) streams.push_back(std::make_shared<Stream>(&units, kSpin));
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&, t] {
      for (int i = t; i < kStreams; i += 4)
        for (int k = 0; k < kOps; ++k)
          streams[i]->Enqueue([&seen, i, k] {
            seen[i].push_back(k);
            return Status();
          });
    });
  }
  for (auto& p : producers) p.join();
  for (auto& s : streams) ASSERT_TRUE(s->BlockUntilDone().ok());
  for (int i = 0; i < kStreams; ++i) {
    ASSERT_EQ(seen[i].size(), static_cast<size_t>(kOps));
    for (int k = 0; k < kOps; ++k) ASSERT_EQ(seen[i][k], k);
  }
}

// Different streams run at the same time: an operation on A that waits for
// one on B can only finish if B runs while A's operation is still running
// (bounded wait, so a serial runtime fails instead of hanging).
TEST(Stream, DifferentStreamsRunConcurrently) {
  ComputeUnits units(2, kSpin);
  auto a = std::make_shared<Stream>(&units, kSpin);
  auto b = std::make_shared<Stream>(&units, kSpin);
  std::promise<void> b_started;
  std::shared_future<void> b_seen = b_started.get_future().share();
  std::atomic<bool> overlapped{false};
  a->Enqueue([b_seen, &overlapped] {
    overlapped = b_seen.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    return Status();
  });
  b->Enqueue([&b_started] {
    b_started.set_value();
    return Status();
  });
  EXPECT_TRUE(a->BlockUntilDone().ok());
  EXPECT_TRUE(b->BlockUntilDone().ok());
  EXPECT_TRUE(overlapped.load()) << "stream B's work did not run while A's was running";
}

// A stream that waits on another, which completes at the same moment,
// always gets resumed: thousands of races between the wait being registered
// and the number being reached, parking and spinning. A lost wake-up shows
// as a wait that never ends (bounded here, so it fails instead of hanging).
TEST(Stream, CrossStreamWaitsNeverLoseWakeups) {
  for (auto spin : {std::chrono::microseconds(0), std::chrono::microseconds(20)}) {
    ComputeUnits units(2, spin);
    auto a = std::make_shared<Stream>(&units, spin);
    auto b = std::make_shared<Stream>(&units, spin);
    std::atomic<int> b_ran{0};
    for (int i = 0; i < 3000; ++i) {
      a->Enqueue([] { return Status(); });
      b->EnqueueWait(a, a->last_enqueued());
      b->Enqueue([&] {
        b_ran.fetch_add(1);
        return Status();
      });
    }
    auto done = std::async(std::launch::async, [&] { return b->BlockUntilDone().ok(); });
    ASSERT_EQ(done.wait_for(std::chrono::seconds(60)), std::future_status::ready)
        << "stream B never resumed (spin " << spin.count() << " us): lost wake-up";
    EXPECT_TRUE(done.get());
    EXPECT_EQ(b_ran.load(), 3000);
  }
}

// ---- Event

// Never recorded: complete. Recorded behind a blocked operation: pending
// until it runs. Recorded on a failed stream: error.
TEST(Event, PendingCompleteAndError) {
  ComputeUnits units(1, kSpin);
  auto s = std::make_shared<Stream>(&units, kSpin);
  auto e = std::make_shared<Event>();
  EXPECT_EQ(e->Poll(), SE_EVENT_COMPLETE);
  EXPECT_EQ(e->Mark().first, nullptr);
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  s->Enqueue([open] {
    open.wait();
    return Status();
  });
  e->Record(s);
  EXPECT_EQ(e->Poll(), SE_EVENT_PENDING);
  EXPECT_EQ(e->Mark().first, s);
  EXPECT_EQ(e->Mark().second, s->last_enqueued());
  gate.set_value();
  EXPECT_TRUE(e->BlockHost().ok());
  EXPECT_EQ(e->Poll(), SE_EVENT_COMPLETE);

  s->Enqueue([] { return Status::Error(TF_INTERNAL, "boom"); });
  e->Record(s);
  EXPECT_FALSE(e->BlockHost().ok());
  EXPECT_EQ(e->Poll(), SE_EVENT_ERROR);
}

// On an idle stream a record completes before Record returns, even with
// no unit free to run it: a poll right after sees the event complete.
TEST(Event, RecordOnIdleStreamCompletesAtOnce) {
  ComputeUnits units(1, kSpin);
  std::shared_ptr<Stream> other;
  std::promise<void> unit_free = OccupyOnlyUnit(units, &other);
  auto s = std::make_shared<Stream>(&units, kSpin);
  auto e = std::make_shared<Event>();
  e->Record(s);
  EXPECT_EQ(e->Poll(), SE_EVENT_COMPLETE);
  EXPECT_EQ(e->Mark().second, 1u);
  unit_free.set_value();
  EXPECT_TRUE(other->BlockUntilDone().ok());
}

// The record keeps the event alive after its owner dropped it.
TEST(Event, OutlivesOwnerWhileRecordQueued) {
  ComputeUnits units(1, kSpin);
  auto s = std::make_shared<Stream>(&units, kSpin);
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  s->Enqueue([open] {
    open.wait();
    return Status();
  });
  {
    auto e = std::make_shared<Event>();
    e->Record(s);
  }  // last owner gone; the queued record still refers to it
  gate.set_value();
  EXPECT_TRUE(s->BlockUntilDone().ok());
}

// ---- Timer

// Zero before both markers ran; then the device time between them.
TEST(Timer, MeasuresBetweenMarkers) {
  ComputeUnits units(1, kSpin);
  auto s = std::make_shared<Stream>(&units, kSpin);
  auto t = std::make_shared<Timer>();
  EXPECT_EQ(t->Nanoseconds(), 0u);
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  s->Enqueue([open] {
    open.wait();
    return Status();
  });
  t->Start(s.get());
  s->Enqueue([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return Status();
  });
  t->Stop(s.get());
  EXPECT_EQ(t->Nanoseconds(), 0u);  // the stream has not got there yet
  gate.set_value();
  ASSERT_TRUE(s->BlockUntilDone().ok());
  EXPECT_GE(t->Nanoseconds(), 2000000u);  // at least the 2 ms slept in between
}

// ---- Config

struct EnvGuard {
  explicit EnvGuard(const char* name, const char* value) : name_(name) {
    setenv(name, value, 1);
  }
  ~EnvGuard() { unsetenv(name_); }
  const char* name_;
};

// Defaults, valid values and each kind of invalid value (named in the error).
TEST(Config, ReadsAndRejectsEnvironment) {
  Config c;
  std::string error;
  ASSERT_TRUE(Config::FromEnvironment(&c, &error)) << error;
  EXPECT_EQ(c.device_count, 1);
  EXPECT_GE(c.compute_units, 1);
  EXPECT_GT(c.memory_bytes, 0u);
  EXPECT_TRUE(c.use_bfc_allocator);
  EXPECT_TRUE(c.force_memory_growth);
  {
    EnvGuard a("VACC_DEVICE_COUNT", "3"), b("VACC_THREADS", "5"), m("VACC_MEMORY_MB", "16"),
        s("VACC_SPIN_US", "0"), bfc("VACC_USE_BFC", "0"), g("VACC_GFLOPS", "123");
    ASSERT_TRUE(Config::FromEnvironment(&c, &error)) << error;
    EXPECT_EQ(c.device_count, 3);
    EXPECT_EQ(c.compute_units, 5);
    EXPECT_EQ(c.memory_bytes, uint64_t{16} << 20);
    EXPECT_EQ(c.spin.count(), 0);
    EXPECT_FALSE(c.use_bfc_allocator);
    EXPECT_DOUBLE_EQ(c.gflops, 123.0);
  }
  const struct {
    const char* name;
    const char* value;
  } bad[] = {{"VACC_THREADS", "abc"},     {"VACC_THREADS", "0"},       {"VACC_DEVICE_COUNT", "65"},
             {"VACC_MEMORY_MB", "0"},     {"VACC_MEMORY_MB", "12x"},   {"VACC_USE_BFC", "2"},
             {"VACC_SPIN_US", "-1"},      {"VACC_MEMORY_GROWTH", "yes"}};
  for (const auto& b : bad) {
    EnvGuard guard(b.name, b.value);
    error.clear();
    EXPECT_FALSE(Config::FromEnvironment(&c, &error)) << b.name << "=" << b.value;
    EXPECT_NE(error.find(b.name), std::string::npos) << error;
    EXPECT_NE(error.find(b.value), std::string::npos) << error;
  }
}

// Measured device figures are positive and stable within a process.
TEST(Config, MeasuredFiguresArePositiveAndCached) {
  const double g = MeasureGflops(2);
  EXPECT_GT(g, 0.0);
  EXPECT_DOUBLE_EQ(MeasureGflops(4), 2 * g);
  const int64_t bw = MeasureMemoryBandwidth();
  EXPECT_GT(bw, 0);
  EXPECT_EQ(MeasureMemoryBandwidth(), bw);
}

}  // namespace
}  // namespace vacc
