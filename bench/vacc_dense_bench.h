// SPDX-License-Identifier: Apache-2.0
//
// What bench_vacc_matmul, bench_vacc_conv and bench_vacc_elementwise share
// besides the device stand-in (vacc_bench_device.h): rate reporting
// (GFLOP/s, GB/s), and labels naming several anchors (baselines measured for
// the same problem), of which bench/run pairs the benchmark with the fastest.
#ifndef TFPLUGIN_BENCH_VACC_DENSE_BENCH_H_
#define TFPLUGIN_BENCH_VACC_DENSE_BENCH_H_

#include <time.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "vacc_bench_device.h"

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

// An anchor that ran on worker threads (OpenBLAS's pthreads, oneDNN's
// OpenMP) leaves them spinning after its last call, OpenBLAS for about
// 2^28 cycles (~0.1 s), taking a core from whatever benchmark the random
// order runs next. Called after the timed loop, outside the measurement.
inline void LetWorkerThreadsIdle(int threads) {
  if (threads > 1) std::this_thread::sleep_for(std::chrono::milliseconds(150));
}

inline std::string GflopsLabel(const std::vector<std::string>& candidates) {
  return AnchorLabel(candidates, "gflops", "GFLOP/s");
}

}  // namespace vacc_bench

#endif  // TFPLUGIN_BENCH_VACC_DENSE_BENCH_H_
