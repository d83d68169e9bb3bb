// SPDX-License-Identifier: Apache-2.0
//
// bench_vacc_conv: vacc's Conv2D against oneDNN in the same run.
//
//   Conv2D/NxHxWxC-COUT-KHxKW[sS]/tT   vacc's Conv2D work (Conv2DWork, what the
//                    kernel enqueues) on a stream of T compute units: float32,
//                    NHWC input, HWIO filter, SAME padding
//   anchor/Conv2D/onednn/.../tT        oneDNN's convolution primitive,
//                    forward_inference, src/dst NHWC, weights in the format
//                    oneDNN picks (reordered from HWIO once, outside the
//                    timing), omp_set_num_threads(T)
//   Conv2D/.../tT/paired   vacc and oneDNN's direct convolution taking turns
//                    in one loop (vacc_paired_rounds.h); the ratio is taken
//                    round by round
//
// Rates are GFLOP/s: 2 * N*OH*OW * COUT * KH*KW*C per convolution.
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "dnnl.hpp"
#include "kernels/vacc_conv.h"
#include "vacc_dense_bench.h"

namespace {

struct Problem {
  int64_t n, h, w, c, out_c, k, stride;
  vacc::ConvGeometry Geometry() const {
    vacc::ConvGeometry g;
    g.batch = n;
    g.in_h = h;
    g.in_w = w;
    g.in_c = c;
    g.k_h = g.k_w = k;
    g.out_c = out_c;
    g.stride_h = g.stride_w = stride;
    std::string error;
    vacc::ComputeConvOutput(vacc::Padding::kSame, {}, &g, &error);
    return g;
  }
  std::string Name() const {
    return std::to_string(n) + "x" + std::to_string(h) + "x" + std::to_string(w) + "x" +
           std::to_string(c) + "-" + std::to_string(out_c) + "-" + std::to_string(k) + "x" +
           std::to_string(k) + (stride == 1 ? "" : "s" + std::to_string(stride));
  }
  double Flops() const {
    const vacc::ConvGeometry g = Geometry();
    return 2.0 * static_cast<double>(g.batch * g.out_h * g.out_w) * static_cast<double>(out_c) *
           static_cast<double>(k * k * c);
  }
};

struct Operands {
  vacc_bench::DeviceFloats x, filter, y;
  explicit Operands(const vacc::ConvGeometry& g)
      : x(static_cast<size_t>(vacc::NumElements(g.InputShape()))),
        filter(static_cast<size_t>(vacc::NumElements(g.FilterShape()))),
        y(static_cast<size_t>(vacc::NumElements(g.OutputShape()))) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : x) v = dist(rng);
    for (float& v : filter) v = dist(rng);
  }
};

// oneDNN's forward convolution of p by `algorithm` (convolution_direct, or
// convolution_winograd, which oneDNN has only for some shapes and CPUs:
// dnnl::error when it has none).
dnnl::convolution_forward::primitive_desc OneDnnConv(const vacc::ConvGeometry& g,
                                                     dnnl::algorithm algorithm,
                                                     const dnnl::engine& engine) {
  using dnnl::memory;
  // oneDNN's dims are always in N, C, H, W order; the tag says the layout.
  const memory::dims src_dims = {g.batch, g.in_c, g.in_h, g.in_w};
  const memory::dims wei_dims = {g.out_c, g.in_c, g.k_h, g.k_w};
  const memory::dims dst_dims = {g.batch, g.out_c, g.out_h, g.out_w};
  const int64_t pad_bottom = (g.out_h - 1) * g.stride_h + g.k_h - g.in_h - g.pad_top;
  const int64_t pad_right = (g.out_w - 1) * g.stride_w + g.k_w - g.in_w - g.pad_left;
  const memory::desc src_md(src_dims, memory::data_type::f32, memory::format_tag::nhwc);
  const memory::desc dst_md(dst_dims, memory::data_type::f32, memory::format_tag::nhwc);
  const memory::desc wei_any(wei_dims, memory::data_type::f32, memory::format_tag::any);
  const dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, algorithm, src_md, wei_any, dst_md,
      {g.stride_h, g.stride_w}, {g.pad_top, g.pad_left}, {pad_bottom, pad_right});
  return dnnl::convolution_forward::primitive_desc(desc, engine);
}

// oneDNN's convolution of g by `algorithm` as one call over `o` (which must
// outlive it); the primitive, its memories and the weights' reorder are made
// here, once.
vacc_bench::Call OneDnnCall(const vacc::ConvGeometry& g, Operands& o, int threads,
                            dnnl::algorithm algorithm) {
  using dnnl::memory;
  omp_set_num_threads(threads);
  struct Primitive {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    memory src, wei, dst;
    dnnl::convolution_forward conv;
  };
  auto st = std::make_shared<Primitive>();
  const auto pd = OneDnnConv(g, algorithm, st->engine);
  const memory::dims wei_dims = {g.out_c, g.in_c, g.k_h, g.k_w};
  st->src = memory(pd.src_desc(), st->engine, o.x.data());
  st->dst = memory(pd.dst_desc(), st->engine, o.y.data());
  memory wei_hwio({wei_dims, memory::data_type::f32, memory::format_tag::hwio}, st->engine,
                  o.filter.data());
  st->wei = memory(pd.weights_desc(), st->engine);
  dnnl::reorder(wei_hwio, st->wei).execute(st->stream, wei_hwio, st->wei);  // not timed
  st->stream.wait();
  st->conv = dnnl::convolution_forward(pd);
  return [st] {
    st->conv.execute(st->stream, {{DNNL_ARG_SRC, st->src},
                                  {DNNL_ARG_WEIGHTS, st->wei},
                                  {DNNL_ARG_DST, st->dst}});
    st->stream.wait();
    return std::string();
  };
}

// vacc's Conv2D work on `device` as one call over `o` (which must outlive it).
vacc_bench::Call VaccCall(const vacc::ConvGeometry& g, Operands& o, vacc_bench::Device& device) {
  const vacc::Tensor x{TF_FLOAT, g.InputShape(), o.x.data()};
  const vacc::Tensor filter{TF_FLOAT, g.FilterShape(), o.filter.data()};
  const vacc::Tensor y{TF_FLOAT, g.OutputShape(), o.y.data()};
  return [g, x, filter, y, &device] {
    const vacc::Status s = device.Run(
        [&](vacc::ComputeUnits& units) { return vacc::Conv2DWork(g, x, filter, y, units); });
    return s.ok() ? std::string() : s.message;
  };
}

void OneDnn(benchmark::State& state, Problem p, int threads, dnnl::algorithm algorithm) {
  const vacc::ConvGeometry g = p.Geometry();
  Operands o(g);
  vacc_bench::TimeCallGflops(state, p.Flops(), OneDnnCall(g, o, threads, algorithm));
  vacc_bench::LetWorkerThreadsIdle(threads);
}

void Vacc(benchmark::State& state, Problem p, int threads, std::vector<std::string> anchors) {
  const vacc::ConvGeometry g = p.Geometry();
  Operands o(g);
  vacc_bench::Device device(threads);
  vacc_bench::TimeCallGflops(state, p.Flops(), VaccCall(g, o, device));
  state.SetLabel(vacc_bench::GflopsLabel(anchors));
}

// vacc and oneDNN's direct convolution taking turns (vacc_paired_rounds.h)
// over the same operands: the ratio from calls made in the same stretch.
void Paired(benchmark::State& state, Problem p, int threads, std::string dnnl) {
  const vacc::ConvGeometry g = p.Geometry();
  Operands o(g);
  vacc_bench::Device device(threads);
  vacc_bench::TimePaired(
      state, "gflops", "GFLOP/s", p.Flops(),
      {{"vacc", VaccCall(g, o, device), {}},
       {dnnl, OneDnnCall(g, o, threads, dnnl::algorithm::convolution_direct),
        vacc_bench::OpenMpSpin(threads)}});
  vacc_bench::LetWorkerThreadsIdle(threads);
}

const Problem kProblems[] = {
    {8, 56, 56, 64, 64, 3, 1},     // ResNet stage 1, 3x3
    {1, 224, 224, 3, 64, 7, 2},    // ResNet stem: 3 input channels, stride 2
    {8, 28, 28, 256, 128, 1, 1},   // a 1x1 bottleneck: a plain GEMM
};

void Register() {
  for (const Problem& p : kProblems) {
    for (int t : {1, 2}) {
      const std::string suffix = p.Name() + "/t" + std::to_string(t);
      const std::string dnnl = "anchor/Conv2D/onednn/" + suffix;
      benchmark::RegisterBenchmark(dnnl.c_str(), OneDnn, p, t, dnnl::algorithm::convolution_direct)
          ->UseRealTime();
      std::vector<std::string> anchors = {dnnl};
      // vacc runs 3x3 stride-1 convolutions by Winograd's algorithm, so
      // oneDNN's own Winograd convolution competes there too.
      // Registered only where oneDNN has one for this shape on this CPU
      // (oneDNN 2.6 has none for NHWC float32 inference on the CPUs seen
      // so far); the run says which.
      if (p.k == 3 && p.stride == 1) {
        const std::string wino = "anchor/Conv2D/onednn_winograd/" + suffix;
        try {
          OneDnnConv(p.Geometry(), dnnl::algorithm::convolution_winograd,
                     dnnl::engine(dnnl::engine::kind::cpu, 0));
          anchors.push_back(wino);
          benchmark::RegisterBenchmark(wino.c_str(), OneDnn, p, t,
                                       dnnl::algorithm::convolution_winograd)
              ->UseRealTime();
        } catch (const dnnl::error& e) {
          std::fprintf(stderr, "%s: not run: oneDNN has no Winograd convolution for this "
                       "shape on this CPU (%s)\n", wino.c_str(), e.what());
        }
      }
      benchmark::RegisterBenchmark(("Conv2D/" + suffix).c_str(), Vacc, p, t, anchors)
          ->UseRealTime();
      benchmark::RegisterBenchmark(("Conv2D/" + suffix + "/paired").c_str(), Paired, p, t,
                                   dnnl + "/paired")
          ->UseRealTime();
    }
  }
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
