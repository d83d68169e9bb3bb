// SPDX-License-Identifier: Apache-2.0
//
// bench_vacc_softmax: vacc's Softmax (the function its kernel's enqueued
// work calls, RunSoftmax, on a vacc stream over 1 or 2 compute units) on
// 4096x1000 float logits, next to the classic Eigen softmax expression
// (max over rows, exp(x - max), row sums, divide: each a sweep over the
// whole tensor, as TensorFlow's Eigen kernel does) on the same number of
// plain threads. Rates are bytes of logits in plus probabilities out per
// second, so ratio = vacc's rate / Eigen's. This file is compiled with
// -mavx2 -mfma so Eigen vectorizes with the same ISA vacc dispatches to.
#include <cstddef>
#include <string>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include "kernels/vacc_softmax.h"
#include "vacc_bench_device.h"

namespace {

constexpr size_t kRows = 4096, kCols = 1000;

float* Logits() {
  static float* x = [] {
    float* p = vacc_bench::Floats(kRows * kCols, 0.0f);
    for (size_t i = 0; i < kRows * kCols; ++i) p[i] = static_cast<float>((i * 7919) % 2000) * 0.01f - 10.0f;
    return p;
  }();
  return x;
}
float* Probs() {
  static float* y = vacc_bench::Floats(kRows * kCols, 0.0f);
  return y;
}

using RowMajor = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void EigenSoftmax(const float* x, float* y, size_t rows) {
  Eigen::Map<const RowMajor> in(x, static_cast<Eigen::Index>(rows), kCols);
  Eigen::Map<RowMajor> out(y, static_cast<Eigen::Index>(rows), kCols);
  const Eigen::ArrayXf max = in.rowwise().maxCoeff();
  out = (in.colwise() - max).exp();
  const Eigen::ArrayXf sum = out.rowwise().sum();
  out.colwise() /= sum;
}

void AnchorEigen(benchmark::State& state, int threads) {
  const float* x = Logits();
  float* y = Probs();
  for (auto _ : state) {
    vacc_bench::SplitOnThreads(threads, kRows, [&](size_t b, size_t e) {
      if (e > b) EigenSoftmax(x + b * kCols, y + b * kCols, e - b);
    });
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 2 * kRows * kCols * sizeof(float)));
}

void Softmax(benchmark::State& state, int threads) {
  vacc_bench::Device dev(threads);
  const float* x = Logits();
  float* y = Probs();
  for (auto _ : state) {
    dev.Run([&](vacc::ComputeUnits& units) {
      vacc::RunSoftmax(TF_FLOAT, x, y, kRows, kCols, false, units);
      return vacc::Status();
    });
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 2 * kRows * kCols * sizeof(float)));
  state.SetLabel("anchor=anchor/eigen_softmax/4096x1000/t" + std::to_string(threads));
}

}  // namespace

int main(int argc, char** argv) {
  if (!vacc_bench::ConfigureFromEnvironment()) return 2;
  benchmark::RegisterBenchmark("anchor/eigen_softmax/4096x1000/t1", AnchorEigen, 1)->UseRealTime();
  benchmark::RegisterBenchmark("anchor/eigen_softmax/4096x1000/t2", AnchorEigen, 2)->UseRealTime();
  benchmark::RegisterBenchmark("Softmax/4096x1000/t1", Softmax, 1)->UseRealTime();
  benchmark::RegisterBenchmark("Softmax/4096x1000/t2", Softmax, 2)->UseRealTime();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
