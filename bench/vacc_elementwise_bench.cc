// SPDX-License-Identifier: Apache-2.0
//
// bench_vacc_elementwise: vacc's memory-bound kernels on DRAM-sized tensors
// (64 Mi floats, 256 MiB per tensor, far beyond the 32 MiB L3), and a bias
// add on a Conv2D output that stays in L3 (1568 Ki floats), each next to
// STREAM-style anchors: a plain loop moving the same bytes on the same
// number of threads, with plain stores, with 256-bit streaming
// (non-temporal) stores and, where the CPU has AVX-512, with 512-bit ones;
// the vacc benchmark pairs with the fastest of them in this run. Rates are
// bytes moved per second (reads + writes), so ratio = vacc's rate / the
// anchor's. bench/README.md describes each one.
//
// vacc runs the function its kernel's enqueued work calls (RunBinary,
// RunUnary) on a vacc stream over 1 or 2 compute units. The DRAM-sized ops
// also run /paired: taking turns with their anchors in one loop
// (vacc_paired_rounds.h), the ratio taken round by round.
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

// ---- anchors: STREAM add (c = a + b) and copy (c = a), unrolled x2, AVX2
// with plain stores or streaming ones (_mm256_stream_ps: c's lines are not
// read first, so a copy moves 2 bytes per byte instead of 3), and, where
// the CPU has AVX-512, streaming 512-bit stores too (_mm512_stream_ps: on
// an Intel Xeon a 512-bit streaming copy ran ~1.1x the 256-bit one, so the
// vacc kernels, which stream at the target's width there, meet it).
enum class AnchorStores { kPlain, kStream256, kStream512 };

template <AnchorStores kStores>
__attribute__((target("avx2"))) inline void Store8(float* p, __m256 v) {
  if (kStores == AnchorStores::kStream256) {
    _mm256_stream_ps(p, v);
  } else {
    _mm256_storeu_ps(p, v);
  }
}

// c is 4096-aligned and chunks start at multiples of 16 floats, so every
// streamed vector is aligned.
template <AnchorStores kStores>
__attribute__((target("avx2"))) void StreamAdd(const float* a, const float* b, float* c, size_t begin, size_t end) {
  size_t i = begin;
  for (; i + 16 <= end; i += 16) {
    Store8<kStores>(c + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    Store8<kStores>(c + i + 8, _mm256_add_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8)));
  }
  for (; i < end; ++i) c[i] = a[i] + b[i];
  if (kStores != AnchorStores::kPlain) _mm_sfence();
}

template <AnchorStores kStores>
__attribute__((target("avx2"))) void StreamCopy(const float* a, float* c, size_t begin, size_t end) {
  size_t i = begin;
  for (; i + 16 <= end; i += 16) {
    Store8<kStores>(c + i, _mm256_loadu_ps(a + i));
    Store8<kStores>(c + i + 8, _mm256_loadu_ps(a + i + 8));
  }
  for (; i < end; ++i) c[i] = a[i];
  if (kStores != AnchorStores::kPlain) _mm_sfence();
}

// The 512-bit streaming loops (one line per step, as the pairs above).
template <>
__attribute__((target("avx512f"))) void StreamAdd<AnchorStores::kStream512>(
    const float* a, const float* b, float* c, size_t begin, size_t end) {
  size_t i = begin;
  for (; i + 16 <= end; i += 16) {
    _mm512_stream_ps(c + i, _mm512_add_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
  }
  for (; i < end; ++i) c[i] = a[i] + b[i];
  _mm_sfence();
}

template <>
__attribute__((target("avx512f"))) void StreamCopy<AnchorStores::kStream512>(const float* a,
                                                                            float* c,
                                                                            size_t begin,
                                                                            size_t end) {
  size_t i = begin;
  for (; i + 16 <= end; i += 16) _mm512_stream_ps(c + i, _mm512_loadu_ps(a + i));
  for (; i < end; ++i) c[i] = a[i];
  _mm_sfence();
}

// The store kinds this CPU runs.
std::vector<AnchorStores> AnchorStoreKinds() {
  std::vector<AnchorStores> kinds = {AnchorStores::kPlain, AnchorStores::kStream256};
  if (__builtin_cpu_supports("avx512f")) kinds.push_back(AnchorStores::kStream512);
  return kinds;
}

// "anchor/stream_copy/64Mi/t1", "anchor/stream_copy_nt/64Mi/t1" (streaming
// stores), "anchor/stream_copy_nt512/64Mi/t1" (512-bit streaming stores), ...
std::string AnchorName(const std::string& kind, AnchorStores stores, int threads,
                       const std::string& size = "64Mi") {
  const char* suffix = stores == AnchorStores::kStream256   ? "_nt"
                       : stores == AnchorStores::kStream512 ? "_nt512"
                                                            : "";
  return "anchor/" + kind + suffix + "/" + size + "/t" + std::to_string(threads);
}

constexpr char kRate[] = "gbps";  // the counter: GB (1e9 bytes) moved per second

// An anchor as a call: the STREAM add (add) or copy of the first n floats,
// with kStores stores, split on `threads` plain threads. The buffers are
// made (and faulted in) here, before any call is timed.
template <AnchorStores kStores>
vacc_bench::Call AnchorLoopCall(bool add, int threads, size_t n) {
  Buffers* buffers = &Bufs();
  return [add, threads, n, buffers] {
    Buffers& m = *buffers;
    vacc_bench::SplitOnThreads(threads, n, [&](size_t b, size_t e) {
      if (add) {
        StreamAdd<kStores>(m.a, m.b, m.c, b, e);
      } else {
        StreamCopy<kStores>(m.a, m.c, b, e);
      }
    });
    benchmark::ClobberMemory();
    return std::string();
  };
}

vacc_bench::Call AnchorCall(const std::string& kind, AnchorStores stores, int threads, size_t n) {
  const bool add = kind == "stream_add";
  switch (stores) {
    case AnchorStores::kPlain:
      return AnchorLoopCall<AnchorStores::kPlain>(add, threads, n);
    case AnchorStores::kStream256:
      return AnchorLoopCall<AnchorStores::kStream256>(add, threads, n);
    case AnchorStores::kStream512:
      return AnchorLoopCall<AnchorStores::kStream512>(add, threads, n);
  }
  return nullptr;  // not reached: every AnchorStores has its case
}

// Bytes an add (c = a + b) or a copy of n floats reads and writes.
double BytesMoved(const std::string& kind, size_t n) {
  return (kind == "stream_add" ? 3.0 : 2.0) * static_cast<double>(n) * sizeof(float);
}

void Anchor(benchmark::State& state, std::string kind, AnchorStores stores, int threads,
            size_t n) {
  vacc_bench::TimeCallRate(state, kRate, BytesMoved(kind, n), AnchorCall(kind, stores, threads, n));
}

// Registers the anchor `kind` ("stream_add", "stream_copy") over n floats
// with each store kind this CPU runs (AnchorStoreKinds).
void RegisterAnchors(const std::string& kind, int threads, size_t n, const std::string& size,
                     benchmark::TimeUnit unit) {
  for (AnchorStores stores : AnchorStoreKinds()) {
    benchmark::RegisterBenchmark(AnchorName(kind, stores, threads, size).c_str(), Anchor, kind,
                                 stores, threads, n)
        ->UseRealTime()
        ->Unit(unit);
  }
}

// ---- vacc

// Times `work` on a `threads`-unit device and pairs it with the fastest of
// the anchors `kind` ("stream_add", "stream_copy") over the same bytes;
// `paired`: the anchors run in the same loop (vacc_paired_rounds.h).
void TimeVacc(benchmark::State& state, int threads, const char* kind, size_t n,
              const std::function<void(vacc::ComputeUnits&)>& work,
              const std::string& size = "64Mi", bool paired = false) {
  const double bytes = BytesMoved(kind, n);
  vacc_bench::Device dev(threads);
  const vacc_bench::Call vacc = [&] {
    dev.Run([&](vacc::ComputeUnits& units) {
      work(units);
      return vacc::Status();
    });
    return std::string();
  };
  if (paired) {
    std::vector<vacc_bench::Contender> contenders = {{"vacc", vacc, {}}};
    for (AnchorStores stores : AnchorStoreKinds()) {
      contenders.push_back({AnchorName(kind, stores, threads, size) + "/paired",
                            AnchorCall(kind, stores, threads, n), {}});
    }
    vacc_bench::TimePaired(state, kRate, "GB/s", bytes, std::move(contenders));
    return;
  }
  vacc_bench::TimeCallRate(state, kRate, bytes, vacc);
  std::vector<std::string> anchors;
  for (AnchorStores stores : AnchorStoreKinds()) {
    anchors.push_back(AnchorName(kind, stores, threads, size));
  }
  state.SetLabel(vacc_bench::AnchorLabel(anchors, kRate, "GB/s"));
}

// AddV2 of two same-shape tensors: one vector-vector run per chunk.
void AddV2(benchmark::State& state, int threads, bool paired) {
  Buffers& m = Bufs();
  vacc::BroadcastPlan plan;
  vacc::PlanBroadcast({static_cast<int64_t>(kN)}, {static_cast<int64_t>(kN)}, &plan);
  TimeVacc(
      state, threads, "stream_add", kN,
      [&](vacc::ComputeUnits& units) {
        vacc::RunBinary(vacc::BinaryOp::kAdd, plan, TF_FLOAT, m.a, m.b, m.c, units);
      },
      "64Mi", paired);
}

// BiasAdd NHWC: [kN / C, C] + [C], the bias read from cache (2 streams).
void BiasAdd(benchmark::State& state, int threads, bool paired) {
  Buffers& m = Bufs();
  vacc::BroadcastPlan plan;
  vacc::PlanBroadcast({static_cast<int64_t>(kN / kChannels), static_cast<int64_t>(kChannels)},
                      {static_cast<int64_t>(kChannels)}, &plan);
  TimeVacc(
      state, threads, "stream_copy", kN,
      [&](vacc::ComputeUnits& units) {
        vacc::RunBinary(vacc::BinaryOp::kAdd, plan, TF_FLOAT, m.a, m.b, m.c, units);
      },
      "64Mi", paired);
}

// BiasAdd on the 3x3 Conv2D's output: 25088 rows of 64 (a run each).
void BiasAddConv(benchmark::State& state, int threads) {
  Buffers& m = Bufs();
  vacc::BroadcastPlan plan;
  vacc::PlanBroadcast({static_cast<int64_t>(kConvPixels), static_cast<int64_t>(kConvChannels)},
                      {static_cast<int64_t>(kConvChannels)}, &plan);
  TimeVacc(
      state, threads, "stream_copy", kConvN,
      [&](vacc::ComputeUnits& units) {
        vacc::RunBinary(vacc::BinaryOp::kAdd, plan, TF_FLOAT, m.a, m.b, m.c, units);
      },
      "1568Ki");
}

void Relu(benchmark::State& state, int threads, bool paired) {
  Buffers& m = Bufs();
  TimeVacc(
      state, threads, "stream_copy", kN,
      [&](vacc::ComputeUnits& units) {
        vacc::RunUnary(vacc::UnaryOp::kRelu, TF_FLOAT, m.a, m.c, kN, units);
      },
      "64Mi", paired);
}

}  // namespace

int main(int argc, char** argv) {
  if (!vacc_bench::ConfigureFromEnvironment()) return 2;
  // The anchors; bench/run pairs each vacc benchmark with the fastest of
  // its kind (plain, 256-bit streaming and, with AVX-512, 512-bit streaming
  // stores).
  for (int t : {1, 2}) {
    RegisterAnchors("stream_add", t, kN, "64Mi", benchmark::kMillisecond);
    RegisterAnchors("stream_copy", t, kN, "64Mi", benchmark::kMillisecond);
  }
  // The L3-sized bias add on one thread only: the anchors start their
  // threads per call (SplitOnThreads), ~0.1 ms against a 0.3 ms copy.
  RegisterAnchors("stream_copy", 1, kConvN, "1568Ki", benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BiasAdd/25088x64/t1", BiasAddConv, 1)
      ->UseRealTime()->Unit(benchmark::kMicrosecond);
  // Each op alone and, /paired, taking turns with its anchors in one loop.
  for (int t : {1, 2}) {
    for (bool paired : {false, true}) {
      const std::string suffix = "/t" + std::to_string(t) + (paired ? "/paired" : "");
      benchmark::RegisterBenchmark(("AddV2/64Mi" + suffix).c_str(), AddV2, t, paired)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("BiasAdd/65536x1024" + suffix).c_str(), BiasAdd, t, paired)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("Relu/64Mi" + suffix).c_str(), Relu, t, paired)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
