// SPDX-License-Identifier: Apache-2.0
//
// What bench_vacc_matmul, bench_vacc_conv and bench_vacc_elementwise share
// besides the device stand-in (vacc_bench_device.h): rate reporting
// (GFLOP/s, GB/s), and "the best anchor": several baselines are measured for
// the same problem and the vacc benchmark pairs with the fastest.
#ifndef TFPLUGIN_BENCH_VACC_DENSE_BENCH_H_
#define TFPLUGIN_BENCH_VACC_DENSE_BENCH_H_

#include <time.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
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

// Each anchor's rate per repetition, by anchor name. Anchors are registered
// (and so run, every repetition) before the benchmarks that use them.
inline std::map<std::string, std::vector<double>>& AnchorRates() {
  static std::map<std::string, std::vector<double>> rates;
  return rates;
}

inline void RecordAnchor(benchmark::State& state, const std::string& name,
                         const char* counter = "gflops") {
  auto it = state.counters.find(counter);
  if (it != state.counters.end()) AnchorRates()[name].push_back(it->second.value);
}

// The candidate with the highest median rate so far (the first if none ran).
inline std::string BestAnchor(const std::vector<std::string>& candidates) {
  std::string best = candidates.front();
  double best_rate = -1;
  for (const std::string& name : candidates) {
    std::vector<double> r = AnchorRates()[name];
    if (r.empty()) continue;
    std::nth_element(r.begin(), r.begin() + r.size() / 2, r.end());
    if (r[r.size() / 2] > best_rate) {
      best_rate = r[r.size() / 2];
      best = name;
    }
  }
  return best;
}

inline std::string GflopsLabel(const std::string& anchor) {
  return "anchor=" + anchor + " metric=gflops unit=GFLOP/s better=higher";
}

}  // namespace vacc_bench

#endif  // TFPLUGIN_BENCH_VACC_DENSE_BENCH_H_
