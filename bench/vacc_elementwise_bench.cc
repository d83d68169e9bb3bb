// SPDX-License-Identifier: Apache-2.0
//
// bench_vacc_elementwise: vacc's memory-bound kernels on DRAM-sized tensors
// (64 Mi floats, 256 MiB per tensor, far beyond the 32 MiB L3), and a bias
// add on a Conv2D output that stays in L3 (1568 Ki floats), each next to
// STREAM-style anchors: a plain AVX2 loop moving the same bytes on the same
// number of threads, once with plain stores and once with streaming
// (non-temporal) stores; the vacc benchmark pairs with the faster of the
// two in this run. Rates are bytes moved per second (reads + writes), so
// ratio = vacc's rate / the anchor's. bench/README.md describes each one.
//
// vacc runs the function its kernel's enqueued work calls (RunBinary,
// RunUnary) on a vacc stream over 1 or 2 compute units.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

#include <benchmark/benchmark.h>

#include "kernels/vacc_broadcast.h"
#include "kernels/vacc_elementwise.h"
#include "vacc_bench_device.h"
#include "vacc_dense_bench.h"

namespace {

constexpr size_t kN = size_t{64} << 20;  // floats per tensor
constexpr size_t kChannels = 1024;       // BiasAdd: [64Ki, 1024] + [1024]
// BiasAdd after the 3x3 Conv2D of bench_vacc_conv: [8*56*56, 64] + [64],
// 6.1 MiB (in L3, so plain stores): many short rows.
constexpr size_t kConvPixels = 8 * 56 * 56, kConvChannels = 64;
constexpr size_t kConvN = kConvPixels * kConvChannels;

struct Buffers {
  float* a = vacc_bench::Floats(kN, 1.0f);
  float* b = vacc_bench::Floats(kN, 2.0f);
  float* c = vacc_bench::Floats(kN, 0.0f);
};
Buffers& Bufs() {
  static Buffers* b = new Buffers;  // lives for the process
  return *b;
}

// ---- anchors: STREAM add (c = a + b) and copy (c = a), AVX2, unrolled x2,
// with plain stores or streaming ones (_mm256_stream_ps: c's lines are not
// read first, so a copy moves 2 bytes per byte instead of 3).

template <bool kStream>
__attribute__((target("avx2"))) inline void Store8(float* p, __m256 v) {
  if (kStream) {
    _mm256_stream_ps(p, v);
  } else {
    _mm256_storeu_ps(p, v);
  }
}

// c is 4096-aligned and chunks start at multiples of 16 floats, so every
// streamed vector is aligned.
template <bool kStream>
__attribute__((target("avx2"))) void StreamAdd(const float* a, const float* b, float* c, size_t begin, size_t end) {
  size_t i = begin;
  for (; i + 16 <= end; i += 16) {
    Store8<kStream>(c + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    Store8<kStream>(c + i + 8, _mm256_add_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8)));
  }
  for (; i < end; ++i) c[i] = a[i] + b[i];
  if (kStream) _mm_sfence();
}

template <bool kStream>
__attribute__((target("avx2"))) void StreamCopy(const float* a, float* c, size_t begin, size_t end) {
  size_t i = begin;
  for (; i + 16 <= end; i += 16) {
    Store8<kStream>(c + i, _mm256_loadu_ps(a + i));
    Store8<kStream>(c + i + 8, _mm256_loadu_ps(a + i + 8));
  }
  for (; i < end; ++i) c[i] = a[i];
  if (kStream) _mm_sfence();
}

// "anchor/stream_copy/64Mi/t1", "anchor/stream_copy_nt/64Mi/t1" (streaming stores), ...
std::string AnchorName(const std::string& kind, bool streaming, int threads,
                       const std::string& size = "64Mi") {
  return "anchor/" + kind + (streaming ? "_nt" : "") + "/" + size + "/t" + std::to_string(threads);
}

constexpr char kRate[] = "gbps";  // the counter: GB (1e9 bytes) moved per second

template <bool kStream>
void AnchorAdd(benchmark::State& state, int threads) {
  Buffers& m = Bufs();
  vacc_bench::TimeRate(state, kRate, 3.0 * kN * sizeof(float), [&] {
    vacc_bench::SplitOnThreads(threads, kN, [&](size_t b, size_t e) { StreamAdd<kStream>(m.a, m.b, m.c, b, e); });
    benchmark::ClobberMemory();
    return true;
  });
}

// A copy of the first n floats of a to c.
template <bool kStream>
void AnchorCopy(benchmark::State& state, int threads, size_t n) {
  Buffers& m = Bufs();
  vacc_bench::TimeRate(state, kRate, 2.0 * n * sizeof(float), [&] {
    vacc_bench::SplitOnThreads(threads, n, [&](size_t b, size_t e) { StreamCopy<kStream>(m.a, m.c, b, e); });
    benchmark::ClobberMemory();
    return true;
  });
}

// ---- vacc

// Times `work` on a `threads`-unit device and pairs it with the faster of
// the plain and streaming anchors `kind` ("stream_add", "stream_copy").
void TimeVacc(benchmark::State& state, int threads, const char* kind, double bytes,
              const std::function<void(vacc::ComputeUnits&)>& work,
              const std::string& size = "64Mi") {
  vacc_bench::Device dev(threads);
  vacc_bench::TimeRate(state, kRate, bytes, [&] {
    dev.Run([&](vacc::ComputeUnits& units) {
      work(units);
      return vacc::Status();
    });
    return true;
  });
  state.SetLabel(vacc_bench::AnchorLabel(
      {AnchorName(kind, false, threads, size), AnchorName(kind, true, threads, size)}, kRate,
      "GB/s"));
}

// AddV2 of two same-shape tensors: one vector-vector run per chunk.
void AddV2(benchmark::State& state, int threads) {
  Buffers& m = Bufs();
  vacc::BroadcastPlan plan;
  vacc::PlanBroadcast({static_cast<int64_t>(kN)}, {static_cast<int64_t>(kN)}, &plan);
  TimeVacc(state, threads, "stream_add", 3.0 * kN * sizeof(float), [&](vacc::ComputeUnits& units) {
    vacc::RunBinary(vacc::BinaryOp::kAdd, plan, TF_FLOAT, m.a, m.b, m.c, units);
  });
}

// BiasAdd NHWC: [kN / C, C] + [C], the bias read from cache (2 streams).
void BiasAdd(benchmark::State& state, int threads) {
  Buffers& m = Bufs();
  vacc::BroadcastPlan plan;
  vacc::PlanBroadcast({static_cast<int64_t>(kN / kChannels), static_cast<int64_t>(kChannels)},
                      {static_cast<int64_t>(kChannels)}, &plan);
  TimeVacc(state, threads, "stream_copy", 2.0 * kN * sizeof(float), [&](vacc::ComputeUnits& units) {
    vacc::RunBinary(vacc::BinaryOp::kAdd, plan, TF_FLOAT, m.a, m.b, m.c, units);
  });
}

// BiasAdd on the 3x3 Conv2D's output: 25088 rows of 64 (a run each).
void BiasAddConv(benchmark::State& state, int threads) {
  Buffers& m = Bufs();
  vacc::BroadcastPlan plan;
  vacc::PlanBroadcast({static_cast<int64_t>(kConvPixels), static_cast<int64_t>(kConvChannels)},
                      {static_cast<int64_t>(kConvChannels)}, &plan);
  TimeVacc(
      state, threads, "stream_copy", 2.0 * kConvN * sizeof(float),
      [&](vacc::ComputeUnits& units) {
        vacc::RunBinary(vacc::BinaryOp::kAdd, plan, TF_FLOAT, m.a, m.b, m.c, units);
      },
      "1568Ki");
}

void Relu(benchmark::State& state, int threads) {
  Buffers& m = Bufs();
  TimeVacc(state, threads, "stream_copy", 2.0 * kN * sizeof(float), [&](vacc::ComputeUnits& units) {
    vacc::RunUnary(vacc::UnaryOp::kRelu, TF_FLOAT, m.a, m.c, kN, units);
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (!vacc_bench::SelectSimdFromEnvironment()) return 2;
  // The anchors; bench/run pairs each vacc benchmark with the faster of its two.
  for (int t : {1, 2}) {
    for (bool nt : {false, true}) {
      const std::string add = AnchorName("stream_add", nt, t), copy = AnchorName("stream_copy", nt, t);
      benchmark::RegisterBenchmark(add.c_str(), nt ? AnchorAdd<true> : AnchorAdd<false>, t)
          ->UseRealTime()->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(copy.c_str(), nt ? AnchorCopy<true> : AnchorCopy<false>, t, kN)
          ->UseRealTime()->Unit(benchmark::kMillisecond);
    }
  }
  // The L3-sized bias add on one thread only: the anchors start their
  // threads per call (SplitOnThreads), ~0.1 ms against a 0.3 ms copy.
  for (bool nt : {false, true}) {
    const std::string conv_copy = AnchorName("stream_copy", nt, 1, "1568Ki");
    benchmark::RegisterBenchmark(conv_copy.c_str(), nt ? AnchorCopy<true> : AnchorCopy<false>, 1,
                                 kConvN)
        ->UseRealTime()->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("BiasAdd/25088x64/t1", BiasAddConv, 1)
      ->UseRealTime()->Unit(benchmark::kMicrosecond);
  for (int t : {1, 2}) {
    const std::string suffix = "/t" + std::to_string(t);
    benchmark::RegisterBenchmark(("AddV2/64Mi" + suffix).c_str(), AddV2, t)->UseRealTime()->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BiasAdd/65536x1024" + suffix).c_str(), BiasAdd, t)->UseRealTime()->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("Relu/64Mi" + suffix).c_str(), Relu, t)->UseRealTime()->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
