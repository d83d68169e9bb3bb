// SPDX-License-Identifier: Apache-2.0
//
// Paired rounds: a benchmark and its anchors take turns inside one loop, so
// that each ratio compares calls made within milliseconds of each other.
//
// Google Benchmark's random interleaving puts a benchmark's repetitions and
// its anchor's in the same run, but each repetition still runs alone for
// half a second or more, and on a shared VM two such stretches differ by
// 10-25%: enough to hide or invent a 5% difference. Here a round runs every
// contender for one batch of calls (at least `batch` long, at least one
// call), in an order rotated by one each round (so none always follows the
// same other), and the ratio is taken round by round; its median over the
// rounds is the figure.
//
// A benchmark repetition runs at least kMinRoundsPerRepetition rounds
// (RunIteration). Google Benchmark ends a repetition once it has run for
// its minimum time (0.5 s), which a long call fills in one round: at
// 2048^3 on one unit (~0.1 s a call, three contenders, an untimed call
// each) every repetition was one round, so the row's figure was the median
// of ten single rounds; the AddV2 / BiasAdd / Relu rows on 64 Mi floats ran
// two to four. Rounds shorter than the minimum time over that count get
// enough iterations from Google Benchmark itself; a longer first round is
// followed, in the same iteration, by the rest. (Running them all in every
// first iteration would lengthen the short rows' runs that Google
// Benchmark times only to choose an iteration count, and then discards.)
//
// A contender whose library leaves worker threads spinning after a call
// (OpenMP for ~6 ms, OpenBLAS for ~0.1 s) says how long in `idle_after`: the
// round sleeps that long, untimed, before the next contender's batch, which
// would otherwise start with a core taken.
//
// No Google Benchmark types here (TimePaired in vacc_dense_bench.h runs the
// rounds in a benchmark's loop), so the bookkeeping is unit-tested with a
// fake clock (tests/unit/test_paired_rounds.cc).
#ifndef TFPLUGIN_BENCH_VACC_PAIRED_ROUNDS_H_
#define TFPLUGIN_BENCH_VACC_PAIRED_ROUNDS_H_

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace vacc_bench {

// One call of what is measured: "" when it worked, else what failed.
using Call = std::function<std::string()>;

struct Contender {
  std::string name;  // the benchmark's own name, or its anchor's
  Call call;
  // How long the library's worker threads keep spinning after a call.
  std::chrono::nanoseconds idle_after{0};
};

// What the rounds need of time: the steady clock and a real sleep, or a
// fake in the tests.
struct RoundClock {
  std::function<double()> seconds;
  std::function<void(std::chrono::nanoseconds)> sleep;

  static RoundClock Real() {
    return {[] {
              return std::chrono::duration<double>(
                         std::chrono::steady_clock::now().time_since_epoch())
                  .count();
            },
            [](std::chrono::nanoseconds d) { std::this_thread::sleep_for(d); }};
  }
};

// The fewest rounds a benchmark repetition runs, and the minimum time of
// a repetition they are counted against (Google Benchmark's default; see
// above).
constexpr size_t kMinRoundsPerRepetition = 8;
constexpr double kRepetitionSeconds = 0.5;

// The rounds a setting asks for (VACC_BENCH_MIN_ROUNDS; NULL when unset):
// kMinRoundsPerRepetition when unset, the count when it is a positive
// decimal integer of at most 1000000, else 0 (the caller says why).
inline size_t MinRoundsSetting(const char* text) {
  if (text == nullptr) return kMinRoundsPerRepetition;
  size_t n = 0;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return 0;
    n = n * 10 + static_cast<size_t>(*c - '0');
    if (n > 1000000) return 0;
  }
  return n;  // 0 for "" and "0"
}

class PairedRounds {
 public:
  PairedRounds(std::vector<Contender> contenders, std::chrono::nanoseconds batch,
               RoundClock clock = RoundClock::Real())
      : contenders_(std::move(contenders)),
        batch_seconds_(std::chrono::duration<double>(batch).count()),
        clock_(std::move(clock)),
        calls_(contenders_.size(), 0),
        seconds_(contenders_.size(), 0.0),
        speedups_(contenders_.size()) {}

  // Runs the next round. False when a call failed: error() says which and
  // why, and nothing of that round counts.
  bool RunRound() {
    const size_t n = contenders_.size();
    std::vector<int64_t> round_calls(n, 0);
    std::vector<double> round_seconds(n, 0.0);
    order_.clear();
    for (size_t turn = 0; turn < n; ++turn) {
      const size_t i = (turn + rounds_) % n;
      order_.push_back(i);
      // One untimed call first: it wakes the library's threads and brings
      // the operands back into cache after the other contenders' turns.
      if (!Call(i)) return false;
      int64_t calls = 0;
      const double start = clock_.seconds();
      double elapsed = 0;
      do {
        if (!Call(i)) return false;
        ++calls;
        elapsed = clock_.seconds() - start;
      } while (elapsed < batch_seconds_);
      round_calls[i] = calls;
      round_seconds[i] = elapsed;
      if (contenders_[i].idle_after.count() > 0) clock_.sleep(contenders_[i].idle_after);
    }
    // Speed ratio of contender 0 to i: calls per second, cross-multiplied.
    for (size_t i = 0; i < n; ++i) {
      calls_[i] += round_calls[i];
      seconds_[i] += round_seconds[i];
      if (i > 0 && round_seconds[0] > 0 && round_seconds[i] > 0) {
        speedups_[i].push_back(static_cast<double>(round_calls[0]) * round_seconds[i] /
                               (round_seconds[0] * static_cast<double>(round_calls[i])));
      }
    }
    ++rounds_;
    return true;
  }

  // One benchmark iteration: a round, and if it was the first and took at
  // least repetition_seconds / min_rounds (so that a repetition that long
  // would hold fewer than min_rounds), more, up to min_rounds in all.
  // False, as RunRound, when a call failed.
  bool RunIteration(size_t min_rounds, double repetition_seconds) {
    const double start = clock_.seconds();
    if (!RunRound()) return false;
    if (rounds_ != 1 ||
        (clock_.seconds() - start) * static_cast<double>(min_rounds) < repetition_seconds) {
      return true;
    }
    while (rounds_ < min_rounds) {
      if (!RunRound()) return false;
    }
    return true;
  }

  size_t rounds() const { return rounds_; }
  const std::string& error() const { return error_; }
  // The contenders' indices in the order the last round ran them.
  const std::vector<size_t>& last_order() const { return order_; }

  // Calls per second of contender i over all its batches so far.
  double CallsPerSecond(size_t i) const {
    return seconds_[i] > 0 ? static_cast<double>(calls_[i]) / seconds_[i] : 0;
  }

  // The median over the rounds of contender 0's speed over contender i's
  // (i >= 1), the mean of the middle two for an even count; 0 before any.
  double MedianSpeedup(size_t i) const {
    if (i == 0 || i >= speedups_.size() || speedups_[i].empty()) return 0;
    std::vector<double> v = speedups_[i];
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
    const double upper = v[mid];
    if (v.size() % 2 == 1) return upper;
    return (upper + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid))) /
           2;
  }

 private:
  bool Call(size_t i) {
    const std::string e = contenders_[i].call();
    if (!e.empty()) error_ = contenders_[i].name + ": " + e;
    return e.empty();
  }

  std::vector<Contender> contenders_;
  double batch_seconds_;
  RoundClock clock_;
  std::vector<int64_t> calls_;
  std::vector<double> seconds_;
  std::vector<std::vector<double>> speedups_;  // [contender][round]
  std::vector<size_t> order_;
  size_t rounds_ = 0;
  std::string error_;
};

}  // namespace vacc_bench

#endif  // TFPLUGIN_BENCH_VACC_PAIRED_ROUNDS_H_
