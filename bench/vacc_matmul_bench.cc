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
//   MatMul/KerasMLP-784-512-512-10-b256-step/tT   the eight products of one
//                     training step of that MLP (transposes as TF's MatMul
//                     gradients issue them), one after the other; the
//                     anchors make the same eight calls
//
//   MatMul/.../tT/paired   vacc, cblas_sgemm and dnnl_sgemm taking turns in
//                     one loop (vacc_paired_rounds.h); the ratio against
//                     each anchor is taken round by round
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

// C[M,N] = op(A) op(B) with op a transpose where ta/tb say: as TensorFlow's
// MatMul computes it, the transposed operand stored as the row-major tensor
// it is the transpose of.
struct Problem {
  int64_t m, k, n;
  bool ta = false, tb = false;
  std::string Name() const {
    return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  }
  double Flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * k; }
};

// What one benchmark times: a single product, or a sequence of them.
using Sequence = std::vector<Problem>;

// The eight products of one training step of bench/keras_step_bench.py's
// MLP (784-512-512-10, batch 256) as TensorFlow's MatMul gradients issue
// them: y = x W forward; dx = dy W^T (transpose_b) and dW = x^T dy
// (transpose_a) backward (the first layer's dx is not needed). Timed as one
// sequence, so the figure is the mix TensorFlow runs, transposes included.
const Sequence kMlpStep = {
    {256, 784, 512, false, false}, {256, 512, 512, false, false}, {256, 512, 10, false, false},
    {512, 256, 10, true, false},   {256, 10, 512, false, true},   {512, 256, 512, true, false},
    {256, 512, 512, false, true},  {784, 256, 512, true, false},
};

// Operands per product, filled once (random values in [-1, 1)), aligned as
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

struct SequenceOperands {
  std::vector<Operands> ops;
  double flops = 0;
  explicit SequenceOperands(const Sequence& seq) {
    for (const Problem& q : seq) {
      ops.emplace_back(q);
      flops += q.Flops();
    }
  }
};

// The three ways to compute a sequence's products, each as one call over
// the operands `o` (which must outlive it).
vacc_bench::Call OpenBlasCall(const Sequence& seq, SequenceOperands& o, int threads) {
  openblas_set_num_threads(threads);
  return [&seq, &o] {
    for (size_t i = 0; i < seq.size(); ++i) {
      const Problem& q = seq[i];
      Operands& x = o.ops[i];
      cblas_sgemm(CblasRowMajor, q.ta ? CblasTrans : CblasNoTrans, q.tb ? CblasTrans : CblasNoTrans,
                  static_cast<int>(q.m), static_cast<int>(q.n), static_cast<int>(q.k), 1.0f,
                  x.a.data(), static_cast<int>(q.ta ? q.m : q.k), x.b.data(),
                  static_cast<int>(q.tb ? q.k : q.n), 0.0f, x.c.data(), static_cast<int>(q.n));
    }
    return std::string();
  };
}

vacc_bench::Call OneDnnCall(const Sequence& seq, SequenceOperands& o, int threads) {
  omp_set_num_threads(threads);
  return [&seq, &o] {
    for (size_t i = 0; i < seq.size(); ++i) {
      const Problem& q = seq[i];
      Operands& x = o.ops[i];
      if (dnnl_sgemm(q.ta ? 'T' : 'N', q.tb ? 'T' : 'N', q.m, q.n, q.k, 1.0f, x.a.data(),
                     q.ta ? q.m : q.k, x.b.data(), q.tb ? q.k : q.n, 0.0f, x.c.data(),
                     q.n) != dnnl_success) {
        return std::string("dnnl_sgemm failed");
      }
    }
    return std::string();
  };
}

// `queued`: the work goes through the stream's queue to a unit and the host
// waits for it (VACC_SYNC_KERNELS=0, then a wait), instead of the
// synchronous kernel's path; the difference is the hand-off's cost.
vacc_bench::Call VaccCall(const Sequence& seq, SequenceOperands& o, vacc_bench::Device& device,
                          bool queued) {
  std::vector<vacc::Tensor> a, b, c;
  for (size_t i = 0; i < seq.size(); ++i) {
    const Problem& q = seq[i];
    Operands& x = o.ops[i];
    a.push_back({TF_FLOAT, q.ta ? vacc::Shape{q.k, q.m} : vacc::Shape{q.m, q.k}, x.a.data()});
    b.push_back({TF_FLOAT, q.tb ? vacc::Shape{q.n, q.k} : vacc::Shape{q.k, q.n}, x.b.data()});
    c.push_back({TF_FLOAT, {q.m, q.n}, x.c.data()});
  }
  return [&seq, &device, queued, a, b, c] {
    for (size_t i = 0; i < seq.size(); ++i) {
      const auto work = [&](vacc::ComputeUnits& units) {
        return vacc::MatMulWork(a[i], b[i], seq[i].ta, seq[i].tb, c[i], units);
      };
      const vacc::Status s = queued ? device.EnqueueAndWait(work) : device.Run(work);
      if (!s.ok()) return s.message;
    }
    return std::string();
  };
}

void OpenBlas(benchmark::State& state, Sequence seq, int threads) {
  SequenceOperands o(seq);
  vacc_bench::TimeCallGflops(state, o.flops, OpenBlasCall(seq, o, threads));
  vacc_bench::LetWorkerThreadsIdle(threads);
}

void OneDnn(benchmark::State& state, Sequence seq, int threads) {
  SequenceOperands o(seq);
  vacc_bench::TimeCallGflops(state, o.flops, OneDnnCall(seq, o, threads));
  vacc_bench::LetWorkerThreadsIdle(threads);
}

void Vacc(benchmark::State& state, Sequence seq, int threads, std::vector<std::string> anchors,
          bool queued) {
  SequenceOperands o(seq);
  vacc_bench::Device device(threads);
  vacc_bench::TimeCallGflops(state, o.flops, VaccCall(seq, o, device, queued));
  state.SetLabel(vacc_bench::GflopsLabel(anchors));
}

// vacc and both anchors taking turns (vacc_paired_rounds.h), over the same
// operands: the ratio from calls made in the same stretch of the machine.
void Paired(benchmark::State& state, Sequence seq, int threads, std::string blas,
            std::string dnnl) {
  SequenceOperands o(seq);
  vacc_bench::Device device(threads);
  vacc_bench::TimePaired(state, "gflops", "GFLOP/s", o.flops,
                         {{"vacc", VaccCall(seq, o, device, false), {}},
                          {blas, OpenBlasCall(seq, o, threads), vacc_bench::OpenBlasSpin(threads)},
                          {dnnl, OneDnnCall(seq, o, threads), vacc_bench::OpenMpSpin(threads)}});
  vacc_bench::LetWorkerThreadsIdle(threads);
}

// Registers MatMul/<name>/tT against both anchors, and the queued variant.
void RegisterWithAnchors(const std::string& name, const Sequence& seq, int t, bool queued_too) {
  const std::string suffix = name + "/t" + std::to_string(t);
  const std::string blas = "anchor/MatMul/openblas/" + suffix;
  const std::string dnnl = "anchor/MatMul/onednn/" + suffix;
  benchmark::RegisterBenchmark(blas.c_str(), OpenBlas, seq, t)->UseRealTime();
  benchmark::RegisterBenchmark(dnnl.c_str(), OneDnn, seq, t)->UseRealTime();
  const std::vector<std::string> anchors{blas, dnnl};
  benchmark::RegisterBenchmark(("MatMul/" + suffix).c_str(), Vacc, seq, t, anchors, false)
      ->UseRealTime();
  if (queued_too) {
    benchmark::RegisterBenchmark(("MatMul/" + suffix + "/queued").c_str(), Vacc, seq, t,
                                 anchors, true)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark(("MatMul/" + suffix + "/paired").c_str(), Paired, seq, t,
                               blas + "/paired", dnnl + "/paired")
      ->UseRealTime();
}

const Problem kProblems[] = {
    {256, 256, 256},   {512, 512, 512},  {1024, 1024, 1024}, {2048, 2048, 2048},
    {32, 784, 128},    {256, 1024, 1024},
    {256, 512, 10},  // an MLP's logits layer (bench/keras_step_bench.py's): a narrow B
};

void Register() {
  for (const Problem& p : kProblems) {
    for (int t : {1, 2}) {
      // Short enough for the hand-off to show: the queued variant too.
      RegisterWithAnchors(p.Name(), {p}, t, p.m * p.n * p.k <= 32 * 784 * 128);
    }
  }
  for (int t : {1, 2}) RegisterWithAnchors("KerasMLP-784-512-512-10-b256-step", kMlpStep, t, false);
}

}  // namespace

int main(int argc, char** argv) {
  if (!vacc_bench::ConfigureFromEnvironment()) return 2;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
