// SPDX-License-Identifier: Apache-2.0
//
// What bench_vacc_matmul, bench_vacc_conv and bench_vacc_elementwise share
// besides the device stand-in (vacc_bench_device.h): rate reporting
// (GFLOP/s, GB/s), labels naming several anchors (baselines measured for
// the same problem), of which bench/run pairs the benchmark with the
// fastest, and paired benchmarks, whose anchors take turns with them in one
// loop (vacc_paired_rounds.h).
#ifndef TFPLUGIN_BENCH_VACC_DENSE_BENCH_H_
#define TFPLUGIN_BENCH_VACC_DENSE_BENCH_H_

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "vacc_bench_device.h"
#include "vacc_paired_rounds.h"

namespace vacc_bench {

inline double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Times the loop and sets the `counter` (e.g. "gflops") to `units` per
// iteration, in billions per second (wall time: the work runs on other
// threads). Also "<counter>_cpu": the same per CPU-second of the whole
// process (spinning included). On a loaded machine wall-time rates fall with
// the share of the cores we get; this one mostly does not, so it is the
// figure to compare when the machine is busy.
template <typename F>
void TimeRate(benchmark::State& state, const char* counter, double units, F&& once) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = ProcessCpuSeconds();
  for (auto _ : state) {
    if (!once()) return;
  }
  const double cpu = ProcessCpuSeconds() - cpu_start;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double billions = units * static_cast<double>(state.iterations()) / 1e9;
  if (seconds > 0) state.counters[counter] = billions / seconds;
  if (cpu > 0) state.counters[std::string(counter) + "_cpu"] = billions / cpu;
}

template <typename F>
void TimeGflops(benchmark::State& state, double flops, F&& once) {
  TimeRate(state, "gflops", flops, std::forward<F>(once));
}

// The label naming a benchmark's anchor candidates: bench/run pairs it with
// whichever ran fastest (its median) in this run. bench/run chooses, not the
// program, because with random interleaving (bench/run's default) a
// benchmark's repetitions may run before its anchors' do.
inline std::string AnchorLabel(const std::vector<std::string>& candidates, const char* metric,
                               const char* unit) {
  std::string names;
  for (const std::string& name : candidates) names += (names.empty() ? "" : "|") + name;
  return "anchor=" + names + " metric=" + metric + " unit=" + unit + " better=higher";
}

// How long a library's worker threads spin after a call on `threads`
// threads, taking a core from whatever runs next: OpenBLAS's for about 2^28
// cycles (~0.1 s); libgomp's (oneDNN's OpenMP) ~6 ms here (the CPU time
// its second thread burned after a 512^3 dnnl_sgemm at t2).
inline std::chrono::milliseconds OpenBlasSpin(int threads) {
  return std::chrono::milliseconds(threads > 1 ? 150 : 0);
}
inline std::chrono::milliseconds OpenMpSpin(int threads) {
  return std::chrono::milliseconds(threads > 1 ? 10 : 0);
}

// An anchor that ran on worker threads (OpenBLAS's pthreads, oneDNN's
// OpenMP) leaves them spinning after its last call, taking a core from
// whatever benchmark the random order runs next. Called after the timed
// loop, outside the measurement.
inline void LetWorkerThreadsIdle(int threads) {
  std::this_thread::sleep_for(std::max(OpenBlasSpin(threads), OpenMpSpin(threads)));
}

// Times `call` in the loop as TimeRate does; a failed call ends the
// benchmark with its error.
inline void TimeCallRate(benchmark::State& state, const char* counter, double units,
                         const Call& call) {
  TimeRate(state, counter, units, [&] {
    const std::string error = call();
    if (!error.empty()) state.SkipWithError(error.c_str());
    return error.empty();
  });
}

inline void TimeCallGflops(benchmark::State& state, double flops, const Call& call) {
  TimeCallRate(state, "gflops", flops, call);
}

// The fewest rounds a paired repetition runs: kMinRoundsPerRepetition, or
// VACC_BENCH_MIN_ROUNDS, a count from 1 to 1000000 (bench/run --quick sets
// 1, so that a smoke test stays short). Read once; for any other value,
// count 0 and the error that says so.
struct PairedRoundsSetting {
  size_t count = 0;
  std::string error;
};
inline const PairedRoundsSetting& PairedMinRounds() {
  static const PairedRoundsSetting setting = [] {
    const char* text = std::getenv("VACC_BENCH_MIN_ROUNDS");
    PairedRoundsSetting s;
    s.count = MinRoundsSetting(text);
    if (s.count == 0) {
      s.error = std::string("VACC_BENCH_MIN_ROUNDS='") + text +
                "' is not a count of rounds per repetition from 1 to 1000000";
    }
    return s;
  }();
  return setting;
}

// A paired benchmark (vacc_paired_rounds.h): each iteration of the loop is
// one round of contenders[0] (what the benchmark measures) and its anchors
// (the first iteration more, up to PairedMinRounds().count, when a round is
// long).
// Counters, per repetition: `metric`, contenders[0]'s rate over all its
// batches (`units` per call, in billions per second); `metric@NAME`, anchor
// NAME's; `ratio@NAME`, the median over the rounds of contenders[0]'s speed
// over NAME's. The label (PairedLabel) tells bench/run to read them.
inline void TimePaired(benchmark::State& state, const char* metric, const char* unit,
                       double units, std::vector<Contender> contenders) {
  std::vector<std::string> anchors;
  for (size_t i = 1; i < contenders.size(); ++i) anchors.push_back(contenders[i].name);
  // Short enough for several rounds per repetition; long enough to average
  // over the few-millisecond stalls this VM has (bench/README.md).
  PairedRounds rounds(std::move(contenders), std::chrono::milliseconds(20));
  const PairedRoundsSetting& min_rounds = PairedMinRounds();
  if (min_rounds.count == 0) {
    state.SkipWithError(min_rounds.error.c_str());
    return;
  }
  for (auto _ : state) {
    if (!rounds.RunIteration(min_rounds.count, kRepetitionSeconds)) {
      state.SkipWithError(rounds.error().c_str());
      return;
    }
  }
  state.counters[metric] = units * rounds.CallsPerSecond(0) / 1e9;
  for (size_t i = 0; i < anchors.size(); ++i) {
    state.counters[std::string(metric) + "@" + anchors[i]] =
        units * rounds.CallsPerSecond(i + 1) / 1e9;
    state.counters["ratio@" + anchors[i]] = rounds.MedianSpeedup(i + 1);
  }
  state.SetLabel(AnchorLabel(anchors, metric, unit) + " paired=yes");
}

inline std::string GflopsLabel(const std::vector<std::string>& candidates) {
  return AnchorLabel(candidates, "gflops", "GFLOP/s");
}

}  // namespace vacc_bench

#endif  // TFPLUGIN_BENCH_VACC_DENSE_BENCH_H_
