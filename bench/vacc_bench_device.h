// SPDX-License-Identifier: Apache-2.0
//
// For the vacc kernel benchmarks: compute units and a stream built the way
// a vacc device builds them, so a benchmark enqueues the same work function
// a kernel's Compute enqueues and waits for the stream; and, for anchors,
// the same bytes on the same number of plain threads.
#ifndef BENCH_VACC_BENCH_DEVICE_H_
#define BENCH_VACC_BENCH_DEVICE_H_

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include <cstdio>
#include <string>

#include <benchmark/benchmark.h>

#include "kernels/gemm/vacc_gemm.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/vacc_simd.h"
#include "vacc_compute_units.h"
#include "vacc_config.h"
#include "vacc_heap.h"
#include "vacc_stream.h"

namespace vacc_bench {

// How long the benchmarks' Device spins before it sleeps: VACC_SPIN_US,
// once ConfigureFromEnvironment has read it, else the plugin's default.
inline std::chrono::microseconds& DeviceSpin() {
  static std::chrono::microseconds spin = vacc::Config().spin;
  return spin;
}

// The plugin's settings that the kernel benchmarks honour, read as
// SE_InitPlugin reads them (vacc::Config::FromEnvironment), since they link
// the kernels and never run it: VACC_SIMD (VACC_SIMD=AVX2 times the AVX2
// kernels on an AVX-512 machine), VACC_GEMM_TILE (the packed GEMM's tile)
// and VACC_SPIN_US (DeviceSpin). Records them in the report's context
// (bench/run prints them). False, having said why, for a value the plugin
// would reject or this build or CPU cannot take.
inline bool ConfigureFromEnvironment() {
  vacc::Config config;
  std::string error;
  if (!vacc::Config::FromEnvironment(&config, &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return false;
  }
  DeviceSpin() = config.spin;
  if (!vacc::SelectSimd(config.simd, &error)) {
    std::fprintf(stderr, "VACC_SIMD: %s\n", error.c_str());
    return false;
  }
  if (!vacc::gemm::SelectPackedTileShape(config.gemm_tile, &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return false;
  }
  benchmark::AddCustomContext("vacc_simd", vacc::SimdTargetName());
  benchmark::AddCustomContext("vacc_gemm_tile", vacc::gemm::MicroKernelName());
  benchmark::AddCustomContext("vacc_spin_us", std::to_string(config.spin.count()));
  return true;
}

// `units` compute units and one stream on them, like one vacc device with
// VACC_THREADS=units, running work the way a synchronous kernel does
// (KernelContext::Enqueue, the default inside TensorFlow): the stream is
// idle, so the calling thread runs the work acting as one unit, and splits
// it across the others (t units means t threads, the caller included).
class Device {
 public:
  explicit Device(int units)
      : units_(units, DeviceSpin()),
        stream_(std::make_shared<vacc::Stream>(&units_, DeviceSpin())) {}
  // Runs `work` as the kernel's Compute would, and waits for it.
  vacc::Status Run(const std::function<vacc::Status(vacc::ComputeUnits&)>& work) {
    return stream_->RunAndWait([this, &work] { return work(units_); });
  }
  // The asynchronous path (VACC_SYNC_KERNELS=0): queue `work` on the stream
  // for a unit to run, then wait for it.
  vacc::Status EnqueueAndWait(const std::function<vacc::Status(vacc::ComputeUnits&)>& work) {
    stream_->Enqueue([this, &work] { return work(units_); });
    return stream_->BlockUntilDone();
  }
 private:
  vacc::ComputeUnits units_;
  std::shared_ptr<vacc::Stream> stream_;
};

// Runs body(begin, end) over [0, n) split evenly on `threads` plain threads
// (the calling one included): the anchors' threading, STREAM style.
inline void SplitOnThreads(int threads, size_t n, const std::function<void(size_t, size_t)>& body) {
  std::vector<std::thread> pool;
  const size_t per = (n + static_cast<size_t>(threads) - 1) / static_cast<size_t>(threads);
  for (int t = 1; t < threads; ++t) {
    const size_t b = std::min(n, per * static_cast<size_t>(t)), e = std::min(n, b + per);
    pool.emplace_back([&body, b, e] { body(b, e); });
  }
  body(0, std::min(n, per));
  for (std::thread& t : pool) t.join();
}

// Operands aligned as a tensor buffer is on a vacc device (DeviceHeap) and
// in TensorFlow's CPU allocator: 64 bytes. A std::vector<float> is only
// 16-byte aligned, at an offset that depends on what the heap held before,
// so a kernel's rows of C could start mid-line in one benchmark and not in
// the next. (On the 7x7 stem, measured interleaved, the offset made no
// difference beyond noise; the point is measuring what TensorFlow runs.)
template <typename T>
struct DeviceAlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{vacc::DeviceHeap::kAlignment};
  DeviceAlignedAllocator() = default;
  template <typename U>
  explicit DeviceAlignedAllocator(const DeviceAlignedAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, size_t) { ::operator delete(p, kAlign); }
  bool operator==(const DeviceAlignedAllocator&) const { return true; }
  bool operator!=(const DeviceAlignedAllocator&) const { return false; }
};
using DeviceFloats = std::vector<float, DeviceAlignedAllocator<float>>;

// A page-aligned buffer of n floats, every page touched (no first-touch
// faults inside a measurement).
inline float* Floats(size_t n, float value) {
  float* p = static_cast<float*>(std::aligned_alloc(4096, (n * sizeof(float) + 4095) / 4096 * 4096));
  for (size_t i = 0; i < n; ++i) p[i] = value + static_cast<float>(i % 1000) * 1e-3f - 0.5f;
  return p;
}

}  // namespace vacc_bench

#endif  // BENCH_VACC_BENCH_DEVICE_H_
