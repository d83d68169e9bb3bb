// SPDX-License-Identifier: Apache-2.0
//
// bench_vacc_runtime: the vacc example plugin's StreamExecutor runtime, driven
// through the C API the way TensorFlow drives it, each benchmark next to an
// anchor measured in the same run (bench/README.md says what each one is).
//
//   bench_vacc_runtime [--vacc_plugin=PATH] [--benchmark_* options]
//
// The plugin is PATH, else $TFP_VACC_PLUGIN, else the libvacc.so of the build
// this program belongs to. Every measured benchmark carries the label
// "anchor=<name of its anchor benchmark>"; bench/run pairs them by it.
#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <benchmark/benchmark.h>

#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/tf_status.h"
#include "vacc_tf_registration.h"  // tests/vacc: the structs TF owns, pre-filled as TF does

namespace {

constexpr uint64_t kCopyBytes = uint64_t{64} << 20;  // the memcpy benchmarks' size
constexpr int kOpsPerBatch = 1000;                   // per-operation overhead: ops per sync
constexpr auto kIdleWindow = std::chrono::milliseconds(300);
constexpr uint32_t kPattern = 0x5a5a5a5a;

// A TF_Status owned here. The plugin sets every status it is handed (TF_OK on
// success), so one can be passed to call after call.
class Status {
 public:
  Status() : s_(TF_NewStatus()) {}
  ~Status() { TF_DeleteStatus(s_); }
  Status(const Status&) = delete;
  Status& operator=(const Status&) = delete;
  TF_Status* get() { return s_; }
  bool ok() const { return TF_GetCode(s_) == TF_OK; }
  std::string message() const { return TF_Message(s_); }

 private:
  TF_Status* s_;
};

// What TensorFlow holds for a loaded plugin.
struct Plugin {
  vacc_test::PlatformRegistration reg;
  SP_DeviceFns device_fns{};
  SP_StreamExecutor se{};
};

// Device 0 with one stream and the buffers the benchmarks use.
struct Device {
  SP_Device device{};
  SP_Stream stream = nullptr;
  SP_DeviceMemoryBase small{};  // 4 bytes: the tiny operations' target
  SP_DeviceMemoryBase a{};      // kCopyBytes each
  SP_DeviceMemoryBase b{};
};

Plugin g_plugin;
std::unique_ptr<Device> g_device;
// Host buffers of kCopyBytes, pre-faulted.
char* g_host_src = nullptr;
char* g_host_dst = nullptr;

// ---- loading the plugin, as stream_executor's plugin loader does

bool Fail(std::string* error, const std::string& what, Status* status = nullptr) {
  *error = what;
  if (status != nullptr) *error += ": " + status->message();
  return false;
}

bool LoadPlugin(const std::string& path, std::string* error) {
  Plugin& p = g_plugin;
  using InitFn = void (*)(SE_PlatformRegistrationParams*, TF_Status*);
  auto init = vacc_test::FindPluginFunction<InitFn>(path, RTLD_NOW | RTLD_LOCAL, "SE_InitPlugin",
                                                    error);
  if (init == nullptr) return false;

  Status status;
  init(&p.reg.params, status.get());
  if (!status.ok()) return Fail(error, "SE_InitPlugin", &status);
  const SP_PlatformFns& f = p.reg.platform_fns;
  if (f.create_device == nullptr || f.destroy_device == nullptr ||
      f.create_device_fns == nullptr || f.create_stream_executor == nullptr) {
    return Fail(error, "SE_InitPlugin left a required SP_PlatformFns callback NULL");
  }
  p.reg.CreateDeviceFns(&p.device_fns, status.get());
  if (!status.ok()) return Fail(error, "create_device_fns", &status);
  p.reg.CreateStreamExecutor(&p.se, status.get());
  if (!status.ok()) return Fail(error, "create_stream_executor", &status);
  const SP_StreamExecutor& se = p.se;
  if (se.struct_size < SP_STREAMEXECUTOR_STRUCT_SIZE || se.allocate == nullptr ||
      se.deallocate == nullptr || se.create_stream == nullptr || se.destroy_stream == nullptr ||
      se.memcpy_htod == nullptr || se.memcpy_dtoh == nullptr || se.memcpy_dtod == nullptr ||
      se.block_host_until_done == nullptr || se.memset32 == nullptr ||
      se.host_callback == nullptr) {
    return Fail(error, "the plugin's SP_StreamExecutor lacks a callback these benchmarks use");
  }
  return true;
}

void DestroyDevice() {
  if (g_device == nullptr) return;
  Device& d = *g_device;
  const SP_StreamExecutor& se = g_plugin.se;
  for (SP_DeviceMemoryBase* m : {&d.small, &d.a, &d.b}) se.deallocate(&d.device, m);
  if (d.stream != nullptr) se.destroy_stream(&d.device, d.stream);
  g_plugin.reg.platform_fns.destroy_device(&g_plugin.reg.platform, &d.device);
  g_device.reset();
}

// Creates device 0, its stream and buffers (device pages faulted in, so no
// benchmark pays for first touch). Returns it, or nullptr and *error.
Device* CreateDevice(std::string* error) {
  Plugin& p = g_plugin;
  auto d = std::make_unique<Device>();
  Status status;
  p.reg.CreateDevice(0, &d->device, status.get());
  if (!status.ok()) {
    Fail(error, "create_device(0)", &status);
    return nullptr;
  }
  g_device = std::move(d);  // from here DestroyDevice cleans up
  Device& dev = *g_device;
  p.se.create_stream(&dev.device, &dev.stream, status.get());
  if (!status.ok()) {
    Fail(error, "create_stream", &status);
    DestroyDevice();
    return nullptr;
  }
  const std::pair<SP_DeviceMemoryBase*, uint64_t> buffers[] = {
      {&dev.small, 4}, {&dev.a, kCopyBytes}, {&dev.b, kCopyBytes}};
  for (const auto& [mem, size] : buffers) {
    mem->struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE;
    p.se.allocate(&dev.device, size, 0, mem);
    if (mem->opaque == nullptr) {
      Fail(error, "allocate(" + std::to_string(size) + ") returned NULL");
      DestroyDevice();
      return nullptr;
    }
    p.se.memset32(&dev.device, dev.stream, mem, kPattern, size, status.get());
    if (!status.ok()) break;
  }
  if (status.ok()) p.se.block_host_until_done(&dev.device, dev.stream, status.get());
  if (!status.ok()) {
    Fail(error, "filling the device buffers", &status);
    DestroyDevice();
    return nullptr;
  }
  return &dev;
}

// The device for a benchmark that needs one; skips the benchmark on failure.
Device* NeedDevice(benchmark::State& state) {
  if (g_device != nullptr) return g_device.get();
  std::string error;
  Device* d = CreateDevice(&error);
  if (d == nullptr) state.SkipWithError(error.c_str());
  return d;
}

// Ends the benchmark with the error if the last call failed.
bool Check(benchmark::State& state, Status& status, const char* callback) {
  if (status.ok()) return true;
  state.SkipWithError((std::string(callback) + ": " + status.message()).c_str());
  return false;
}

char* HostBuffer(uint64_t size) {
  char* p = static_cast<char*>(std::aligned_alloc(4096, size));
  if (p != nullptr) std::memset(p, 0x5a, size);  // fault every page in now
  return p;
}

// ---- anchors

// One 4-byte store behind a call the compiler can neither inline nor elide:
// what a tiny operation costs without any device in between.
__attribute__((noinline)) void Store4(void* p, uint32_t value) {
  std::memcpy(p, &value, sizeof value);
}
void (*volatile g_store4)(void*, uint32_t) = Store4;

void AnchorPlainCall(benchmark::State& state) {
  alignas(64) uint32_t word = 0;
  for (auto _ : state) {
    g_store4(&word, kPattern);
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(word);
}

void AnchorMemcpy(benchmark::State& state) {
  for (auto _ : state) {
    std::memcpy(g_host_dst, g_host_src, kCopyBytes);
    benchmark::DoNotOptimize(g_host_dst);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kCopyBytes));
}

// Process CPU time (every thread, the device's workers included), seconds.
double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Sleeps kIdleWindow and reports the process CPU time it took per second of
// wall time (1.0 = one core busy throughout) as the "cpu_fraction" counter.
void MeasureIdleWindow(benchmark::State& state) {
  for (auto _ : state) {
    const double cpu0 = ProcessCpuSeconds();
    const auto wall0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(kIdleWindow);
    const double cpu1 = ProcessCpuSeconds();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    state.counters["cpu_fraction"] = (cpu1 - cpu0) / wall;
  }
}

// The same window with no vacc device in the process (the plugin stays loaded,
// as TensorFlow keeps it), after the same amount of host-side work.
void AnchorIdleCpu(benchmark::State& state) {
  DestroyDevice();
  std::memcpy(g_host_dst, g_host_src, kCopyBytes);
  benchmark::ClobberMemory();
  MeasureIdleWindow(state);
}

// ---- the vacc runtime

// Sets the "process_cpus" counter: process CPU seconds (every thread: the
// host's and the device's) per wall second while it lived, i.e. how many
// cores the benchmark kept busy. Informational; bench/run does not use it.
class ProcessCpuUse {
 public:
  explicit ProcessCpuUse(benchmark::State& state)
      : state_(state), cpu0_(ProcessCpuSeconds()), wall0_(std::chrono::steady_clock::now()) {}
  ~ProcessCpuUse() {
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
    if (wall > 0) state_.counters["process_cpus"] = (ProcessCpuSeconds() - cpu0_) / wall;
  }
  ProcessCpuUse(const ProcessCpuUse&) = delete;
  ProcessCpuUse& operator=(const ProcessCpuUse&) = delete;

 private:
  benchmark::State& state_;
  const double cpu0_;
  const std::chrono::steady_clock::time_point wall0_;
};

// memset32 of 4 bytes, then block_host_until_done: one operation's trip from
// the host to a compute unit and back.
void DispatchRoundTrip(benchmark::State& state) {
  Device* d = NeedDevice(state);
  if (d == nullptr) return;
  const SP_StreamExecutor& se = g_plugin.se;
  Status status;
  ProcessCpuUse cpu_use(state);
  for (auto _ : state) {
    se.memset32(&d->device, d->stream, &d->small, kPattern, 4, status.get());
    if (!Check(state, status, "memset32")) break;
    se.block_host_until_done(&d->device, d->stream, status.get());
    if (!Check(state, status, "block_host_until_done")) break;
  }
}

// kOpsPerBatch memset32s of 4 bytes, then one block_host_until_done; the time
// is per operation (each batch counts as kOpsPerBatch iterations).
void PerOperation(benchmark::State& state) {
  Device* d = NeedDevice(state);
  if (d == nullptr) return;
  const SP_StreamExecutor& se = g_plugin.se;
  Status status;
  ProcessCpuUse cpu_use(state);
  while (state.KeepRunningBatch(kOpsPerBatch)) {
    for (int i = 0; i < kOpsPerBatch; ++i) {
      se.memset32(&d->device, d->stream, &d->small, kPattern, 4, status.get());
    }
    if (!Check(state, status, "memset32")) break;
    se.block_host_until_done(&d->device, d->stream, status.get());
    if (!Check(state, status, "block_host_until_done")) break;
  }
}

void CountCall(void* arg, TF_Status*) {
  static_cast<std::atomic<int64_t>*>(arg)->fetch_add(1, std::memory_order_relaxed);
}

// host_callback, then block_host_until_done.
void HostCallbackRoundTrip(benchmark::State& state) {
  Device* d = NeedDevice(state);
  if (d == nullptr) return;
  const SP_StreamExecutor& se = g_plugin.se;
  Status status;
  ProcessCpuUse cpu_use(state);
  std::atomic<int64_t> calls{0};
  int64_t enqueued = 0;
  for (auto _ : state) {
    if (!se.host_callback(&d->device, d->stream, CountCall, &calls)) {
      state.SkipWithError("host_callback returned false");
      break;
    }
    ++enqueued;
    se.block_host_until_done(&d->device, d->stream, status.get());
    if (!Check(state, status, "block_host_until_done")) break;
  }
  if (calls.load() != enqueued) state.SkipWithError("a host callback did not run exactly once");
}

enum class Copy { kHtoD, kDtoH, kDtoD };

// One asynchronous copy of kCopyBytes, then block_host_until_done.
void AsyncMemcpy(benchmark::State& state, Copy kind) {
  Device* d = NeedDevice(state);
  if (d == nullptr) return;
  const SP_StreamExecutor& se = g_plugin.se;
  Status status;
  ProcessCpuUse cpu_use(state);
  for (auto _ : state) {
    switch (kind) {
      case Copy::kHtoD:
        se.memcpy_htod(&d->device, d->stream, &d->a, g_host_src, kCopyBytes, status.get());
        break;
      case Copy::kDtoH:
        se.memcpy_dtoh(&d->device, d->stream, g_host_dst, &d->a, kCopyBytes, status.get());
        break;
      case Copy::kDtoD:
        se.memcpy_dtod(&d->device, d->stream, &d->b, &d->a, kCopyBytes, status.get());
        break;
    }
    if (!Check(state, status, "memcpy")) break;
    se.block_host_until_done(&d->device, d->stream, status.get());
    if (!Check(state, status, "block_host_until_done")) break;
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kCopyBytes));
}

// The idle window right after some device work: the workers' spinning must
// end and the device must stop costing CPU.
void IdleCpu(benchmark::State& state) {
  Device* d = NeedDevice(state);
  if (d == nullptr) return;
  const SP_StreamExecutor& se = g_plugin.se;
  Status status;
  for (int i = 0; i < 100 && status.ok(); ++i) {
    se.memset32(&d->device, d->stream, &d->small, kPattern, 4, status.get());
    if (status.ok()) se.block_host_until_done(&d->device, d->stream, status.get());
  }
  if (status.ok()) se.memcpy_htod(&d->device, d->stream, &d->a, g_host_src, kCopyBytes, status.get());
  if (status.ok()) se.block_host_until_done(&d->device, d->stream, status.get());
  if (!Check(state, status, "device work before the idle window")) return;
  MeasureIdleWindow(state);
}

// ---- registration

// Registers `fn` as `name`. A measured benchmark names its anchor in its
// label, plus `extra` label words for bench/run (bench/README.md). Every
// benchmark reports wall time (and rates per wall second): the device works
// on other threads, so the calling thread's CPU time would say little.
benchmark::internal::Benchmark* Register(const std::string& name, const char* anchor,
                                         std::function<void(benchmark::State&)> fn,
                                         const std::string& extra = "") {
  std::string label = anchor != nullptr ? std::string("anchor=") + anchor : "";
  if (!extra.empty()) label += (label.empty() ? "" : " ") + extra;
  return benchmark::RegisterBenchmark(name.c_str(),
                                      [fn, label](benchmark::State& state) {
                                        fn(state);
                                        if (!label.empty()) state.SetLabel(label);
                                      })
      ->UseRealTime();
}

void RegisterAll() {
  const char* const kPlainCall = "anchor/plain_call";
  const char* const kMemcpy = "anchor/memcpy/64MiB";
  const char* const kIdle = "anchor/idle_cpu/300ms";

  Register(kPlainCall, nullptr, AnchorPlainCall);
  Register("StreamExecutor/dispatch_round_trip", kPlainCall, DispatchRoundTrip);
  Register("StreamExecutor/per_op_overhead/batch1000", kPlainCall, PerOperation);
  Register("StreamExecutor/host_callback_round_trip", kPlainCall, HostCallbackRoundTrip);

  Register(kMemcpy, nullptr, AnchorMemcpy)->Unit(benchmark::kMillisecond);
  const std::pair<const char*, Copy> copies[] = {
      {"htod", Copy::kHtoD}, {"dtoh", Copy::kDtoH}, {"dtod", Copy::kDtoD}};
  for (const auto& [what, kind] : copies) {
    const Copy k = kind;
    Register(std::string("StreamExecutor/memcpy_") + what + "/64MiB", kMemcpy,
             [k](benchmark::State& state) { AsyncMemcpy(state, k); })
        ->Unit(benchmark::kMillisecond);
  }

  // Last: the anchor destroys the device, which the measured one recreates.
  Register(kIdle, nullptr, AnchorIdleCpu)->Iterations(1)->Unit(benchmark::kMillisecond);
  // CPU seconds per wall second: no speed, so bench/run gives no ratio.
  Register("StreamExecutor/idle_cpu/300ms", kIdle, IdleCpu, "metric=cpu_fraction unit=cpu_s/s")
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
}

void Teardown() {
  DestroyDevice();
  // Each step only where the plugin provided it (none when loading failed).
  Plugin& p = g_plugin;
  const SP_PlatformFns& f = p.reg.platform_fns;
  if (f.destroy_device_fns != nullptr) f.destroy_device_fns(&p.reg.platform, &p.device_fns);
  if (f.destroy_stream_executor != nullptr) f.destroy_stream_executor(&p.reg.platform, &p.se);
  p.reg.Destroy();
  // Like TensorFlow, never dlclose a plugin.
}

}  // namespace

int main(int argc, char** argv) {
  // Our own option first: Google Benchmark rejects options it does not know.
  std::string plugin;
  if (const char* env = std::getenv("TFP_VACC_PLUGIN"); env != nullptr) plugin = env;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const char kOption[] = "--vacc_plugin=";
    if (std::strncmp(argv[i], kOption, sizeof kOption - 1) == 0) {
      plugin = argv[i] + sizeof kOption - 1;
    } else {
      if (std::strcmp(argv[i], "--help") == 0) {
        std::printf("bench_vacc_runtime [--vacc_plugin=PATH] [benchmark options]\n"
                    "  the plugin: PATH, else $TFP_VACC_PLUGIN, else this build's libvacc.so\n\n");
      }
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  argv[argc] = nullptr;
#ifdef TFP_VACC_PLUGIN_DEFAULT
  if (plugin.empty()) plugin = TFP_VACC_PLUGIN_DEFAULT;
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  if (plugin.empty()) {
    std::fprintf(stderr, "bench_vacc_runtime: no plugin: pass --vacc_plugin=PATH or set "
                         "TFP_VACC_PLUGIN\n");
    return 2;
  }

  std::string error;
  g_host_src = HostBuffer(kCopyBytes);
  g_host_dst = HostBuffer(kCopyBytes);
  if (g_host_src == nullptr || g_host_dst == nullptr) {
    std::fprintf(stderr, "bench_vacc_runtime: out of host memory\n");
    return 1;
  }
  Device* device = nullptr;
  if (!LoadPlugin(plugin, &error) || (device = CreateDevice(&error)) == nullptr) {
    std::fprintf(stderr, "bench_vacc_runtime: %s: %s\n", plugin.c_str(), error.c_str());
    return 1;
  }
  benchmark::AddCustomContext("vacc_plugin", plugin);
  if (device->device.hardware_name != nullptr)
    benchmark::AddCustomContext("vacc_device", device->device.hardware_name);

  RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  Teardown();
  std::free(g_host_src);
  std::free(g_host_dst);
  return 0;
}
