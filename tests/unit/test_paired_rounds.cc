// SPDX-License-Identifier: Apache-2.0
//
// bench/vacc_paired_rounds.h's bookkeeping on a fake clock: calls advance
// the clock by what they "cost", so every rate and ratio is known (to the
// rounding of the clock's sums).
#include "vacc_paired_rounds.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace vacc_bench {
namespace {

using std::chrono::milliseconds;

struct FakeTime {
  double now = 0;
  std::vector<std::pair<double, double>> sleeps;  // (when, seconds)
  RoundClock Clock() {
    return {[this] { return now; },
            [this](std::chrono::nanoseconds d) {
              sleeps.push_back({now, std::chrono::duration<double>(d).count()});
              now += std::chrono::duration<double>(d).count();
            }};
  }
  // A call that takes `ms` milliseconds and logs who ran.
  Call Costing(double ms, std::vector<std::string>* log, std::string name) {
    return [this, ms, log, name] {
      now += ms / 1000;
      if (log) log->push_back(name);
      return std::string();
    };
  }
};

TEST(PairedRounds, RotatesTheOrderEveryRound) {
  FakeTime t;
  PairedRounds rounds({{"vacc", t.Costing(1, nullptr, "")},
                       {"a", t.Costing(1, nullptr, "")},
                       {"b", t.Costing(1, nullptr, "")}},
                      milliseconds(1), t.Clock());
  const std::vector<std::vector<size_t>> want = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 1, 2}};
  for (const auto& order : want) {
    ASSERT_TRUE(rounds.RunRound());
    EXPECT_EQ(rounds.last_order(), order);
  }
  EXPECT_EQ(rounds.rounds(), 4u);
}

TEST(PairedRounds, BatchesRunUntilTheBatchTimeAfterOneUntimedCall) {
  FakeTime t;
  std::vector<std::string> log;
  PairedRounds rounds({{"vacc", t.Costing(2, &log, "vacc")}, {"a", t.Costing(4, &log, "a")}},
                      milliseconds(10), t.Clock());
  ASSERT_TRUE(rounds.RunRound());
  // vacc: 1 untimed + 5 timed (10 ms); a: 1 untimed + 3 timed (12 ms >= 10).
  EXPECT_EQ(std::count(log.begin(), log.end(), "vacc"), 6);
  EXPECT_EQ(std::count(log.begin(), log.end(), "a"), 4);
  EXPECT_NEAR(rounds.CallsPerSecond(0), 500.0, 1e-9 * 500.0);
  EXPECT_NEAR(rounds.CallsPerSecond(1), 250.0, 1e-9 * 250.0);
  EXPECT_NEAR(rounds.MedianSpeedup(1), 2.0, 1e-9 * 2.0);
}

TEST(PairedRounds, TheUntimedCallTakesTheColdStart) {
  FakeTime t;
  int calls = 0;
  // The first call of every batch is slow (threads asleep, cold caches).
  Call cold_first = [&] {
    t.now += (calls++ % 3 == 0) ? 0.1 : 0.001;
    return std::string();
  };
  PairedRounds rounds({{"vacc", t.Costing(1, nullptr, "")}, {"a", cold_first}},
                      std::chrono::microseconds(1500), t.Clock());
  ASSERT_TRUE(rounds.RunRound());
  EXPECT_NEAR(rounds.CallsPerSecond(1), 1000.0, 1e-9 * 1000.0);
  EXPECT_NEAR(rounds.MedianSpeedup(1), 1.0, 1e-9 * 1.0);
}

TEST(PairedRounds, SleepsAfterASpinningLibraryOutsideTheTiming) {
  FakeTime t;
  PairedRounds rounds({{"vacc", t.Costing(1, nullptr, "")},
                       {"blas", t.Costing(1, nullptr, ""), milliseconds(150)}},
                      milliseconds(1), t.Clock());
  ASSERT_TRUE(rounds.RunRound());  // vacc, then blas
  ASSERT_EQ(t.sleeps.size(), 1u);
  EXPECT_DOUBLE_EQ(t.sleeps[0].first, 0.004);  // after blas's batch (2 calls each)
  EXPECT_DOUBLE_EQ(t.sleeps[0].second, 0.15);
  ASSERT_TRUE(rounds.RunRound());  // blas, then vacc: vacc starts after the sleep
  ASSERT_EQ(t.sleeps.size(), 2u);
  EXPECT_NEAR(rounds.CallsPerSecond(0), 1000.0, 1e-9 * 1000.0);  // no sleep counted
  EXPECT_NEAR(rounds.CallsPerSecond(1), 1000.0, 1e-9 * 1000.0);
}

TEST(PairedRounds, TheRatioIsTheMedianOverRounds) {
  FakeTime t;
  // vacc's cost per call changes from round to round; the anchor's is 1 ms.
  const std::vector<double> vacc_ms = {1.0, 0.5, 4.0, 0.25};
  size_t round = 0;
  int in_round = 0;
  Call vacc = [&] {
    t.now += vacc_ms[round] / 1000;
    if (++in_round == 2) in_round = 0, ++round;  // 1 untimed + 1 timed call
    return std::string();
  };
  PairedRounds rounds({{"vacc", vacc}, {"a", t.Costing(1, nullptr, "")}}, milliseconds(0),
                      t.Clock());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(rounds.RunRound());
  EXPECT_NEAR(rounds.MedianSpeedup(1), 1.0, 1e-9 * 1.0);  // speedups 1, 2, 0.25
  ASSERT_TRUE(rounds.RunRound());
  EXPECT_NEAR(rounds.MedianSpeedup(1), 1.5, 1e-9 * 1.5);  // 1, 2, 0.25, 4: middle two
  EXPECT_EQ(rounds.MedianSpeedup(0), 0.0);  // contender 0 against itself: none
}

// The rounds run by `iterations` iterations (RunIteration, a minimum of 8)
// against repetitions of `repetition_seconds`, for two contenders whose
// rounds take 6 ms (calls of 1 ms and 2 ms, each run twice: untimed, timed).
size_t RoundsAfter(int iterations, double repetition_seconds) {
  FakeTime t;
  PairedRounds rounds({{"vacc", t.Costing(1, nullptr, "")}, {"a", t.Costing(2, nullptr, "")}},
                      milliseconds(0), t.Clock());
  for (int i = 0; i < iterations; ++i) {
    if (!rounds.RunIteration(8, repetition_seconds)) return 0;
  }
  return rounds.rounds();
}

TEST(PairedRounds, ALongFirstRoundIsFollowedByTheMinimumInTheSameIteration) {
  // 40 ms holds fewer than 8 rounds of 6 ms: the first iteration runs 8,
  // the later ones one each.
  EXPECT_EQ(RoundsAfter(1, 0.040), 8u);
  EXPECT_EQ(RoundsAfter(2, 0.040), 9u);
}

TEST(PairedRounds, AShortFirstRoundLeavesTheCountToTheBenchmark) {
  // 0.5 s holds 83 of them: one round an iteration.
  EXPECT_EQ(RoundsAfter(1, 0.5), 1u);
  EXPECT_EQ(RoundsAfter(2, 0.5), 2u);
}

TEST(PairedRounds, RunIterationStopsAtAFailedCall) {
  FakeTime t;
  int calls = 0;
  // The anchor fails on its fourth call: the second round's timed one.
  Call flaky = [&] {
    t.now += 0.001;
    return ++calls == 4 ? std::string("failed") : std::string();
  };
  PairedRounds rounds({{"vacc", t.Costing(1, nullptr, "")}, {"anchor/x", flaky}},
                      milliseconds(0), t.Clock());
  // 4 ms rounds against 20 ms: the first iteration goes on to a second.
  EXPECT_FALSE(rounds.RunIteration(8, 0.020));
  EXPECT_EQ(rounds.rounds(), 1u);
  EXPECT_EQ(rounds.error(), "anchor/x: failed");
}

TEST(MinRoundsSetting, UnsetMeansTheDefaultAndOnlyPositiveIntegersCount) {
  EXPECT_EQ(MinRoundsSetting(nullptr), kMinRoundsPerRepetition);
  EXPECT_EQ(MinRoundsSetting("1"), 1u);
  EXPECT_EQ(MinRoundsSetting("32"), 32u);
  EXPECT_EQ(MinRoundsSetting("1000000"), 1000000u);
  for (const char* bad : {"", "0", "-1", "+2", " 2", "2 ", "2x", "1.5", "1000001",
                          "99999999999999999999999"}) {
    EXPECT_EQ(MinRoundsSetting(bad), 0u) << "'" << bad << "'";
  }
}

TEST(PairedRounds, AFailedCallStopsTheRoundAndSaysWhich) {
  FakeTime t;
  PairedRounds rounds({{"vacc", t.Costing(1, nullptr, "")},
                       {"anchor/x", [] { return std::string("dnnl_sgemm failed"); }}},
                      milliseconds(1), t.Clock());
  EXPECT_FALSE(rounds.RunRound());
  EXPECT_EQ(rounds.error(), "anchor/x: dnnl_sgemm failed");
  EXPECT_EQ(rounds.rounds(), 0u);
  // vacc's batch of the failed round does not count.
  EXPECT_EQ(rounds.CallsPerSecond(0), 0.0);
}

}  // namespace
}  // namespace vacc_bench
