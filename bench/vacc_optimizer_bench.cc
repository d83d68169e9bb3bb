// SPDX-License-Identifier: Apache-2.0
//
// bench_vacc_optimizer: vacc's optimizer updates (ResourceApplyAdam,
// ResourceApplyGradientDescent, ResourceApplyMomentum, ResourceApplyRMSProp,
// ResourceApplyAdagradV2) over DRAM-sized variables (16 Mi floats, 64 MiB
// per tensor), each next to two anchors measured in the same run:
//   - anchor/adam_traffic, anchor/sgd_traffic, anchor/momentum_traffic,
//     anchor/rmsprop_traffic, anchor/adagrad_traffic: a plain AVX2 loop
//     moving the same bytes in place (Adam and RMSProp read var, two slots
//     and the gradient and write the first three back; SGD reads var and
//     delta and writes var; momentum and Adagrad read var, a slot and the
//     gradient and write the first two) with one add per stream: the
//     machine's bandwidth for this access pattern, the bound a memory-bound
//     update can reach;
//   - anchor/eigen_adam, anchor/eigen_sgd, anchor/eigen_momentum,
//     anchor/eigen_rmsprop, anchor/eigen_adagrad: the update as an Eigen
//     expression per tensor (Adam m, then v, then var: three passes;
//     RMSProp ms, mom, var: three; momentum accum, then var, and Adagrad
//     accum, then var: two), the way a CPU functor written with Eigen
//     tensors computes it.
// Rates are bytes moved per second, so ratio = vacc's rate / the anchor's.
// vacc runs RunAdam / RunGradientDescent / RunMomentum / RunRMSProp /
// RunAdagrad (what its kernels'
// enqueued work calls) on a vacc stream over 1 or 2 compute units; /paired rows take turns
// with their anchors in one loop (vacc_paired_rounds.h).
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <Eigen/Core>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/vacc_optimizer.h"
#include "vacc_bench_device.h"
#include "vacc_dense_bench.h"

namespace {

constexpr size_t kN = size_t{16} << 20;  // floats per tensor
constexpr char kSize[] = "16Mi";
constexpr char kRate[] = "gbps";  // GB (1e9 bytes) moved per second

struct Buffers {
  float* var = vacc_bench::Floats(kN, 0.0f);
  float* m = vacc_bench::Floats(kN, 0.0f);
  float* v = vacc_bench::Floats(kN, 1.0f);  // a mean of squares: stays above g^2 = 0.01
  float* grad = vacc_bench::Floats(kN, 0.1f);
};
Buffers& Bufs() {
  static Buffers* b = new Buffers;  // lives for the process
  return *b;
}

enum class Update { kAdam, kSgd, kMomentum, kRMSProp, kAdagrad };

// Adam and RMSProp: 4 tensors read, 3 written; SGD: 2 read, 1 written;
// momentum and Adagrad: 3 read, 2 written.
double BytesMoved(Update u) {
  const bool two_slots = u == Update::kAdam || u == Update::kRMSProp;
  const double tensors = two_slots ? 7.0 : u == Update::kSgd ? 3.0 : 5.0;
  return tensors * static_cast<double>(kN) * sizeof(float);
}

// ---- anchors

__attribute__((target("avx2"))) void AdamTraffic(float* w, float* m, float* v, const float* g,
                                                 size_t begin, size_t end) {
  for (size_t i = begin; i < end; i += 8) {  // kN is a multiple of 8 per thread
    const __m256 gi = _mm256_load_ps(g + i);
    _mm256_store_ps(m + i, _mm256_add_ps(_mm256_load_ps(m + i), gi));
    _mm256_store_ps(v + i, _mm256_add_ps(_mm256_load_ps(v + i), gi));
    _mm256_store_ps(w + i, _mm256_add_ps(_mm256_load_ps(w + i), gi));
  }
}

__attribute__((target("avx2"))) void SgdTraffic(float* w, const float* d, size_t begin,
                                                size_t end) {
  for (size_t i = begin; i < end; i += 8) {
    _mm256_store_ps(w + i, _mm256_add_ps(_mm256_load_ps(w + i), _mm256_load_ps(d + i)));
  }
}

__attribute__((target("avx2"))) void MomentumTraffic(float* w, float* a, const float* g,
                                                     size_t begin, size_t end) {
  for (size_t i = begin; i < end; i += 8) {
    const __m256 gi = _mm256_load_ps(g + i);
    _mm256_store_ps(a + i, _mm256_add_ps(_mm256_load_ps(a + i), gi));
    _mm256_store_ps(w + i, _mm256_add_ps(_mm256_load_ps(w + i), gi));
  }
}

using Map = Eigen::Map<Eigen::ArrayXf, Eigen::Aligned64>;

void EigenAdam(Buffers& b, size_t begin, size_t end, const vacc::AdamCoefficients& c) {
  const Eigen::Index n = static_cast<Eigen::Index>(end - begin);
  Map w(b.var + begin, n), m(b.m + begin, n), v(b.v + begin, n);
  const Map g(b.grad + begin, n);
  m += (g - m) * c.one_minus_beta1;
  v += (g.square() - v) * c.one_minus_beta2;
  w -= (m * c.lr_t) / (v.sqrt() + c.epsilon);
}

void EigenSgd(Buffers& b, size_t begin, size_t end, float alpha) {
  const Eigen::Index n = static_cast<Eigen::Index>(end - begin);
  Map w(b.var + begin, n);
  const Map d(b.grad + begin, n);
  w -= alpha * d;
}

// accum (in m's buffer) = accum * momentum + g; var -= lr * accum.
void EigenMomentum(Buffers& b, size_t begin, size_t end, const vacc::MomentumCoefficients& c) {
  const Eigen::Index n = static_cast<Eigen::Index>(end - begin);
  Map w(b.var + begin, n), a(b.m + begin, n);
  const Map g(b.grad + begin, n);
  a = a * c.momentum + g;
  w -= c.lr * a;
}

// ms (in v's buffer) += (g^2 - ms) * (1 - rho); mom (in m's) = mom *
// momentum + lr * g / sqrt(ms + epsilon); var -= mom.
void EigenRMSProp(Buffers& b, size_t begin, size_t end, const vacc::RMSPropCoefficients& c) {
  const Eigen::Index n = static_cast<Eigen::Index>(end - begin);
  Map w(b.var + begin, n), mom(b.m + begin, n), ms(b.v + begin, n);
  const Map g(b.grad + begin, n);
  ms += (g.square() - ms) * c.one_minus_rho;
  mom = mom * c.momentum + (g * c.lr) / (ms + c.epsilon).sqrt();
  w -= mom;
}

// accum (in v's buffer) += g^2; var -= lr * g / (sqrt(accum) + epsilon).
void EigenAdagrad(Buffers& b, size_t begin, size_t end, const vacc::AdagradCoefficients& c) {
  const Eigen::Index n = static_cast<Eigen::Index>(end - begin);
  Map w(b.var + begin, n), accum(b.v + begin, n);
  const Map g(b.grad + begin, n);
  accum += g.square();
  w -= (g * c.lr) / (accum.sqrt() + c.epsilon);
}

const vacc::MomentumCoefficients kMomentum{1e-3f, 0.9f, false, false};
const vacc::RMSPropCoefficients kRMSProp{1e-3f, 0.1f, 0.9f, 1e-7f};
const vacc::AdagradCoefficients kAdagrad{1e-3f, 1e-7f, true};

const vacc::AdamCoefficients& Coefficients() {
  static const vacc::AdamCoefficients c =
      vacc::MakeAdamCoefficients(1e-3f, 0.9f, 0.999f, 0.9f, 0.999f, 1e-7f, false);
  return c;
}

std::string AnchorName(const std::string& kind, int threads) {
  return "anchor/" + kind + "/" + kSize + "/t" + std::to_string(threads);
}

// kind: "{adam,sgd,momentum,rmsprop,adagrad}_traffic",
// "eigen_{adam,sgd,momentum,rmsprop,adagrad}". The chunks are split on
// 64-byte boundaries for the aligned loads. RMSProp moves Adam's streams
// (v's buffer as ms, m's as mom), Adagrad momentum's (v's as accum).
vacc_bench::Call AnchorCall(const std::string& kind, int threads) {
  // The kind is resolved once, not on every timed call.
  using Pass = void (*)(Buffers&, size_t, size_t);
  const std::pair<const char*, Pass> kPasses[] = {
      {"adam_traffic",
       [](Buffers& b, size_t i, size_t e) { AdamTraffic(b.var, b.m, b.v, b.grad, i, e); }},
      {"sgd_traffic", [](Buffers& b, size_t i, size_t e) { SgdTraffic(b.var, b.grad, i, e); }},
      {"momentum_traffic",
       [](Buffers& b, size_t i, size_t e) { MomentumTraffic(b.var, b.m, b.grad, i, e); }},
      {"rmsprop_traffic",
       [](Buffers& b, size_t i, size_t e) { AdamTraffic(b.var, b.m, b.v, b.grad, i, e); }},
      {"adagrad_traffic",
       [](Buffers& b, size_t i, size_t e) { MomentumTraffic(b.var, b.v, b.grad, i, e); }},
      {"eigen_adam", [](Buffers& b, size_t i, size_t e) { EigenAdam(b, i, e, Coefficients()); }},
      {"eigen_sgd", [](Buffers& b, size_t i, size_t e) { EigenSgd(b, i, e, 1e-3f); }},
      {"eigen_momentum", [](Buffers& b, size_t i, size_t e) { EigenMomentum(b, i, e, kMomentum); }},
      {"eigen_rmsprop", [](Buffers& b, size_t i, size_t e) { EigenRMSProp(b, i, e, kRMSProp); }},
      {"eigen_adagrad", [](Buffers& b, size_t i, size_t e) { EigenAdagrad(b, i, e, kAdagrad); }},
  };
  Pass pass = nullptr;
  for (const auto& [name, p] : kPasses) {
    if (kind == name) pass = p;
  }
  if (pass == nullptr) std::abort();  // AnchorKinds names only the kinds above
  Buffers* buffers = &Bufs();
  return [pass, threads, buffers] {
    vacc_bench::SplitOnThreads(threads, kN / 16,
                               [&](size_t lo, size_t hi) { pass(*buffers, lo * 16, hi * 16); });
    benchmark::ClobberMemory();
    return std::string();
  };
}

std::vector<std::string> AnchorKinds(Update u) {
  if (u == Update::kAdam) return {"adam_traffic", "eigen_adam"};
  if (u == Update::kSgd) return {"sgd_traffic", "eigen_sgd"};
  if (u == Update::kRMSProp) return {"rmsprop_traffic", "eigen_rmsprop"};
  if (u == Update::kAdagrad) return {"adagrad_traffic", "eigen_adagrad"};
  return {"momentum_traffic", "eigen_momentum"};
}

void Anchor(benchmark::State& state, Update u, std::string kind, int threads) {
  vacc_bench::TimeCallRate(state, kRate, BytesMoved(u), AnchorCall(kind, threads));
}

// ---- vacc

// The update on a `threads`-unit device, paired with the faster of its two
// anchors (`paired`: in the same loop).
void RunUpdate(benchmark::State& state, Update u, int threads, bool paired) {
  Buffers& b = Bufs();
  vacc_bench::Device dev(threads);
  const vacc_bench::Call vacc = [&] {
    dev.Run([&](vacc::ComputeUnits& units) {
      switch (u) {
        case Update::kAdam:
          vacc::RunAdam(b.var, b.m, b.v, b.grad, Coefficients(), kN, units);
          break;
        case Update::kSgd:
          vacc::RunGradientDescent(b.var, b.grad, 1e-3f, kN, units);
          break;
        case Update::kMomentum:
          vacc::RunMomentum(b.var, b.m, b.grad, kMomentum, kN, units);
          break;
        case Update::kRMSProp:
          vacc::RunRMSProp(b.var, b.v, b.m, nullptr, b.grad, kRMSProp, kN, units);
          break;
        case Update::kAdagrad:
          vacc::RunAdagrad(b.var, b.v, b.grad, kAdagrad, kN, units);
          break;
      }
      return vacc::Status();
    });
    return std::string();
  };
  std::vector<std::string> anchors;
  for (const std::string& kind : AnchorKinds(u)) anchors.push_back(AnchorName(kind, threads));
  if (paired) {
    std::vector<vacc_bench::Contender> contenders = {{"vacc", vacc, {}}};
    for (const std::string& kind : AnchorKinds(u)) {
      contenders.push_back({AnchorName(kind, threads) + "/paired", AnchorCall(kind, threads), {}});
    }
    vacc_bench::TimePaired(state, kRate, "GB/s", BytesMoved(u), std::move(contenders));
    return;
  }
  vacc_bench::TimeCallRate(state, kRate, BytesMoved(u), vacc);
  state.SetLabel(vacc_bench::AnchorLabel(anchors, kRate, "GB/s"));
}

}  // namespace

int main(int argc, char** argv) {
  if (!vacc_bench::ConfigureFromEnvironment()) return 2;
  const std::pair<Update, const char*> kUpdates[] = {{Update::kAdam, "ResourceApplyAdam"},
                                                     {Update::kSgd, "ResourceApplyGradientDescent"},
                                                     {Update::kMomentum, "ResourceApplyMomentum"},
                                                     {Update::kRMSProp, "ResourceApplyRMSProp"},
                                                     {Update::kAdagrad, "ResourceApplyAdagradV2"}};
  for (int t : {1, 2}) {
    for (const auto& [u, op] : kUpdates) {
      for (const std::string& kind : AnchorKinds(u)) {
        benchmark::RegisterBenchmark(AnchorName(kind, t).c_str(), Anchor, u, kind, t)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  for (int t : {1, 2}) {
    for (bool paired : {false, true}) {
      const std::string suffix =
          std::string("/") + kSize + "/t" + std::to_string(t) + (paired ? "/paired" : "");
      for (const auto& [u, op] : kUpdates) {
        benchmark::RegisterBenchmark((op + suffix).c_str(), RunUpdate, u, t, paired)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
