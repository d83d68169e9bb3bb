// SPDX-License-Identifier: Apache-2.0
//
// bench_vacc_matmul: vacc's MatMul against OpenBLAS and oneDNN in the same run.
//
//   MatMul/MxKxN/tT   vacc's MatMul work (MatMulWork, what the kernel enqueues)
//                     on a stream of T compute units, float32, row-major,
//                     no transposes: C[M,N] = A[M,K] * B[K,N]
//   anchor/MatMul/openblas/MxKxN/tT   cblas_sgemm, openblas_set_num_threads(T)
//   anchor/MatMul/onednn/MxKxN/tT     dnnl_sgemm, omp_set_num_threads(T)
//
// Rates are GFLOP/s (2*M*N*K per product). Each MatMul benchmark pairs with
// whichever anchor had the higher median in this run (the label says which).
#include <omp.h>

#include <cblas.h>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "dnnl.h"
#include "kernels/vacc_matmul.h"
#include "vacc_dense_bench.h"

namespace {

struct Problem {
  int64_t m, k, n;
  std::string Name() const {
    return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  }
  double Flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * k; }
};

// Operands per problem, filled once (random values in [-1, 1)), aligned as
// on a vacc device (DeviceFloats).
struct Operands {
  vacc_bench::DeviceFloats a, b, c;
  explicit Operands(const Problem& p)
      : a(static_cast<size_t>(p.m * p.k)), b(static_cast<size_t>(p.k * p.n)),
        c(static_cast<size_t>(p.m * p.n)) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
  }
};

void OpenBlas(benchmark::State& state, Problem p, int threads) {
  Operands o(p);
  openblas_set_num_threads(threads);
  vacc_bench::TimeGflops(state, p.Flops(), [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(p.m),
                static_cast<int>(p.n), static_cast<int>(p.k), 1.0f, o.a.data(),
                static_cast<int>(p.k), o.b.data(), static_cast<int>(p.n), 0.0f, o.c.data(),
                static_cast<int>(p.n));
    return true;
  });
  vacc_bench::LetWorkerThreadsIdle(threads);
}

void OneDnn(benchmark::State& state, Problem p, int threads) {
  Operands o(p);
  omp_set_num_threads(threads);
  vacc_bench::TimeGflops(state, p.Flops(), [&] {
    if (dnnl_sgemm('N', 'N', p.m, p.n, p.k, 1.0f, o.a.data(), p.k, o.b.data(), p.n, 0.0f,
                   o.c.data(), p.n) != dnnl_success) {
      state.SkipWithError("dnnl_sgemm failed");
      return false;
    }
    return true;
  });
  vacc_bench::LetWorkerThreadsIdle(threads);
}

// `queued`: the work goes through the stream's queue to a unit and the host
// waits for it (VACC_SYNC_KERNELS=0, then a wait), instead of the
// synchronous kernel's path; the difference is the hand-off's cost.
void Vacc(benchmark::State& state, Problem p, int threads, std::vector<std::string> anchors,
          bool queued) {
  Operands o(p);
  vacc::Tensor a{TF_FLOAT, {p.m, p.k}, o.a.data()};
  vacc::Tensor b{TF_FLOAT, {p.k, p.n}, o.b.data()};
  vacc::Tensor c{TF_FLOAT, {p.m, p.n}, o.c.data()};
  vacc_bench::Device device(threads);
  vacc_bench::TimeGflops(state, p.Flops(), [&] {
    const auto work = [&](vacc::ComputeUnits& units) {
      return vacc::MatMulWork(a, b, false, false, c, units);
    };
    const vacc::Status s = queued ? device.EnqueueAndWait(work) : device.Run(work);
    if (!s.ok()) state.SkipWithError(s.message.c_str());
    return s.ok();
  });
  state.SetLabel(vacc_bench::GflopsLabel(anchors));
}

const Problem kProblems[] = {
    {256, 256, 256},   {512, 512, 512},  {1024, 1024, 1024}, {2048, 2048, 2048},
    {32, 784, 128},    {256, 1024, 1024},
    {256, 512, 10},  // an MLP's logits layer (bench/keras_step_bench.py's): a narrow B
};

void Register() {
  for (const Problem& p : kProblems) {
    for (int t : {1, 2}) {
      const std::string suffix = p.Name() + "/t" + std::to_string(t);
      const std::string blas = "anchor/MatMul/openblas/" + suffix;
      const std::string dnnl = "anchor/MatMul/onednn/" + suffix;
      benchmark::RegisterBenchmark(blas.c_str(), OpenBlas, p, t)->UseRealTime();
      benchmark::RegisterBenchmark(dnnl.c_str(), OneDnn, p, t)->UseRealTime();
      benchmark::RegisterBenchmark(("MatMul/" + suffix).c_str(), Vacc, p, t,
                                   std::vector<std::string>{blas, dnnl}, false)
          ->UseRealTime();
      if (p.m * p.n * p.k <= 32 * 784 * 128) {  // short enough for the hand-off to show
        benchmark::RegisterBenchmark(("MatMul/" + suffix + "/queued").c_str(), Vacc, p, t,
                                     std::vector<std::string>{blas, dnnl}, true)
            ->UseRealTime();
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (!vacc_bench::SelectSimdFromEnvironment()) return 2;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
