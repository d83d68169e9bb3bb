// SPDX-License-Identifier: Apache-2.0
#include "vacc_config.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

namespace vacc {
namespace {

// Parses an integer variable in [lo, hi]. Unset or empty: keeps *out.
bool ReadInt(const char* name, int64_t lo, int64_t hi, int64_t* out, std::string* error) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return true;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) {
    *error = std::string(name) + "='" + text + "' is not an integer in [" + std::to_string(lo) +
             ", " + std::to_string(hi) + "]";
    return false;
  }
  *out = v;
  return true;
}

bool ReadBool(const char* name, bool* out, std::string* error) {
  int64_t v = *out ? 1 : 0;
  if (!ReadInt(name, 0, 1, &v, error)) return false;
  *out = v != 0;
  return true;
}

uint64_t DefaultMemoryBytes() {
  const uint64_t four_gib = uint64_t{4096} << 20;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return four_gib;
  return std::min(four_gib, static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4);
}

}  // namespace

bool Config::FromEnvironment(Config* c, std::string* error) {
  *c = Config();
  c->compute_units = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  c->memory_bytes = DefaultMemoryBytes();
  int64_t devices = c->device_count, units = c->compute_units;
  int64_t memory_mb = static_cast<int64_t>(c->memory_bytes >> 20), spin = c->spin.count();
  int64_t gflops = 0, bandwidth = 0;
  if (!ReadInt("VACC_DEVICE_COUNT", 1, 64, &devices, error) ||
      !ReadInt("VACC_THREADS", 1, 1024, &units, error) ||
      !ReadInt("VACC_MEMORY_MB", 1, int64_t{1} << 24, &memory_mb, error) ||
      !ReadInt("VACC_SPIN_US", 0, 1000000, &spin, error) ||
      !ReadInt("VACC_GFLOPS", 0, int64_t{1} << 40, &gflops, error) ||
      !ReadInt("VACC_MEMORY_BANDWIDTH", 0, int64_t{1} << 50, &bandwidth, error) ||
      !ReadBool("VACC_USE_BFC", &c->use_bfc_allocator, error) ||
      !ReadBool("VACC_MEMORY_GROWTH", &c->force_memory_growth, error) ||
      !ReadBool("VACC_SYNC_KERNELS", &c->sync_kernels, error)) {
    return false;
  }
  c->device_count = static_cast<int>(devices);
  c->compute_units = static_cast<int>(units);
  c->memory_bytes = static_cast<uint64_t>(memory_mb) << 20;
  c->spin = std::chrono::microseconds(spin);
  c->gflops = static_cast<double>(gflops);
  c->memory_bandwidth = bandwidth;
  if (const char* simd = std::getenv("VACC_SIMD"); simd != nullptr && *simd != '\0') c->simd = simd;
  if (const char* tile = std::getenv("VACC_GEMM_TILE"); tile != nullptr && *tile != '\0') {
    c->gemm_tile = tile;
  }
  return true;
}

namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Best of a few short runs of `fn`, in seconds.
template <typename F>
double BestOf(int runs, F fn) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, Seconds(std::chrono::steady_clock::now() - t0));
  }
  return best;
}

}  // namespace

// Single-thread multiply-add throughput with 8 independent accumulators of
// the widest vector type the compiler targets, times the compute units: the
// order of magnitude TensorFlow's cost models want, not a benchmark.
double MeasureGflops(int compute_units) {
  static std::once_flag once;
  static double per_unit = 0;
  std::call_once(once, [] {
    typedef float v8 __attribute__((vector_size(32)));
    constexpr int kIters = 200000;
    volatile float seed = 1.0f;
    v8 acc[8];
    for (auto& a : acc) a = v8{} + seed;
    const v8 mul = v8{} + 0.999999f, add = v8{} + 1e-7f;
    const double s = BestOf(3, [&] {
      for (int i = 0; i < kIters; ++i)
        for (auto& a : acc) a = a * mul + add;
    });
    // Publish the result so the loop cannot be optimized away.
    float sink = 0;
    for (auto& a : acc) sink += a[0];
    seed = sink;
    per_unit = 8.0 * 8 * 2 * kIters / s / 1e9;
  });
  return per_unit * compute_units;
}

// Bytes per second memcpy moves (read + write) on 16 MiB, beyond the caches.
int64_t MeasureMemoryBandwidth() {
  static std::once_flag once;
  static int64_t bandwidth = 0;
  std::call_once(once, [] {
    const size_t n = size_t{16} << 20;
    std::unique_ptr<char[]> a(new char[n]), b(new char[n]);
    std::memset(a.get(), 1, n);
    std::memset(b.get(), 2, n);
    const double s = BestOf(3, [&] { std::memcpy(b.get(), a.get(), n); });
    bandwidth = static_cast<int64_t>(2.0 * static_cast<double>(n) / s);
  });
  return bandwidth;
}

}  // namespace vacc
