// SPDX-License-Identifier: Apache-2.0
// The validation layer's per-call cost (src/validate/interposer.h): the same
// trivial plugin callbacks called directly (the anchor) and through the
// layer's libffi closures. get_stream_status checks one handle; memcpy_htod
// also checks a device range and the stream's thread; create/destroy_stream
// update the handle tracker.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "interposer.h"
#include "plugin_struct.h"
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/tf_status.h"

namespace {

using tfp_validator::Interposer;

void GetStreamStatus(const SP_Device*, SP_Stream, TF_Status*) {}
void MemcpyHtod(const SP_Device*, SP_Stream, SP_DeviceMemoryBase*, const void*, uint64_t,
                TF_Status*) {}
void Allocate(const SP_Device*, uint64_t size, int64_t, SP_DeviceMemoryBase* mem) {
  mem->opaque = std::malloc(size);
  mem->size = size;
}
void CreateStream(const SP_Device*, SP_Stream* s, TF_Status*) {
  *s = reinterpret_cast<SP_Stream>(std::malloc(1));
}
void DestroyStream(const SP_Device*, SP_Stream s) { std::free(s); }

struct Table {
  tfp_shims::PluginStruct se{"2.21", "SP_StreamExecutor"};
  explicit Table(bool layered) {
    se.Set<void*>("get_stream_status", reinterpret_cast<void*>(&GetStreamStatus));
    se.Set<void*>("memcpy_htod", reinterpret_cast<void*>(&MemcpyHtod));
    se.Set<void*>("allocate", reinterpret_cast<void*>(&Allocate));
    se.Set<void*>("create_stream", reinterpret_cast<void*>(&CreateStream));
    se.Set<void*>("destroy_stream", reinterpret_cast<void*>(&DestroyStream));
    if (layered) {
      static Interposer* layer = new Interposer("2.21", [](const tfp_validator::LayerReport&) {});
      layer->Install(se);
    }
  }
  template <typename F>
  F Fn(const char* name) { return reinterpret_cast<F>(se.Get<void*>(name)); }
};

template <bool kLayered>
void BM_GetStreamStatus(benchmark::State& state) {
  Table t(kLayered);
  auto create = t.Fn<decltype(SP_StreamExecutor::create_stream)>("create_stream");
  auto status_fn = t.Fn<decltype(SP_StreamExecutor::get_stream_status)>("get_stream_status");
  TF_Status* s = TF_NewStatus();
  SP_Stream stream = nullptr;
  create(nullptr, &stream, s);
  for (auto _ : state) status_fn(nullptr, stream, s);
  TF_DeleteStatus(s);
  if (kLayered) state.SetLabel("anchor=anchor/direct/get_stream_status");
}
BENCHMARK_TEMPLATE(BM_GetStreamStatus, false)->Name("anchor/direct/get_stream_status");
BENCHMARK_TEMPLATE(BM_GetStreamStatus, true)->Name("Layer/get_stream_status");

template <bool kLayered>
void BM_MemcpyHtod(benchmark::State& state) {
  Table t(kLayered);
  auto create = t.Fn<decltype(SP_StreamExecutor::create_stream)>("create_stream");
  auto allocate = t.Fn<decltype(SP_StreamExecutor::allocate)>("allocate");
  auto htod = t.Fn<decltype(SP_StreamExecutor::memcpy_htod)>("memcpy_htod");
  TF_Status* s = TF_NewStatus();
  SP_Stream stream = nullptr;
  create(nullptr, &stream, s);
  SP_DeviceMemoryBase mem{SP_DEVICE_MEMORY_BASE_STRUCT_SIZE, nullptr, nullptr, 0, 0};
  allocate(nullptr, 4096, 0, &mem);
  char host[256] = {};
  for (auto _ : state) htod(nullptr, stream, &mem, host, sizeof host, s);
  TF_DeleteStatus(s);
  if (kLayered) state.SetLabel("anchor=anchor/direct/memcpy_htod");
}
BENCHMARK_TEMPLATE(BM_MemcpyHtod, false)->Name("anchor/direct/memcpy_htod");
BENCHMARK_TEMPLATE(BM_MemcpyHtod, true)->Name("Layer/memcpy_htod");

template <bool kLayered>
void BM_CreateDestroyStream(benchmark::State& state) {
  Table t(kLayered);
  auto create = t.Fn<decltype(SP_StreamExecutor::create_stream)>("create_stream");
  auto destroy = t.Fn<decltype(SP_StreamExecutor::destroy_stream)>("destroy_stream");
  TF_Status* s = TF_NewStatus();
  for (auto _ : state) {
    SP_Stream stream = nullptr;
    create(nullptr, &stream, s);
    destroy(nullptr, stream);
  }
  TF_DeleteStatus(s);
  if (kLayered) state.SetLabel("anchor=anchor/direct/create_destroy_stream");
}
BENCHMARK_TEMPLATE(BM_CreateDestroyStream, false)->Name("anchor/direct/create_destroy_stream");
BENCHMARK_TEMPLATE(BM_CreateDestroyStream, true)->Name("Layer/create_destroy_stream");

}  // namespace

BENCHMARK_MAIN();
