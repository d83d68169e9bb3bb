// SPDX-License-Identifier: Apache-2.0
// HostPlatform: see host_platform.h. The order of calls and checks is
// TensorFlow's (stream_executor C API registration, then device creation;
// teardown in reverse). Where TF would crash (a NULL callback it calls
// without checking), the host fails with a status naming the field instead.
#include "host_platform.h"

#include "shim_internal.h"

namespace tfp_shims {
namespace {

// Function-pointer types of each callback, from the newest headers: the
// signatures are the same in every release, only offsets moved.
using GetDeviceCountFn = decltype(SP_PlatformFns::get_device_count);
using CreateDeviceFn = decltype(SP_PlatformFns::create_device);
using DestroyDeviceFn = decltype(SP_PlatformFns::destroy_device);
using CreateDeviceFnsFn = decltype(SP_PlatformFns::create_device_fns);
using DestroyDeviceFnsFn = decltype(SP_PlatformFns::destroy_device_fns);
using CreateSEFn = decltype(SP_PlatformFns::create_stream_executor);
using DestroySEFn = decltype(SP_PlatformFns::destroy_stream_executor);
using CreateTimerFnsFn = decltype(SP_PlatformFns::create_timer_fns);
using DestroyTimerFnsFn = decltype(SP_PlatformFns::destroy_timer_fns);
using DestroyPlatformFn = decltype(SE_PlatformRegistrationParams::destroy_platform);
using DestroyPlatformFnsFn = decltype(SE_PlatformRegistrationParams::destroy_platform_fns);

class Status {  // a TF_Status owned here
 public:
  Status() : s_(TF_NewStatus()) {}
  ~Status() { TF_DeleteStatus(s_); }
  TF_Status* get() { return s_; }
  bool ok() const { return TF_GetCode(s_) == TF_OK; }

 private:
  TF_Status* s_;
};

// Copies a plugin's failure into `status`, prefixed with what was called.
bool Forward(TF_Status* from, TF_Status* status, const std::string& what) {
  if (TF_GetCode(from) == TF_OK) return true;
  Fail(status, TF_GetCode(from), what + " failed: " + TF_Message(from));
  return false;
}

}  // namespace

HostPlatform::HostPlatform(std::string release)
    : release_(std::move(release)),
      params_(release_, "SE_PlatformRegistrationParams"),
      platform_(release_, "SP_Platform"),
      platform_fns_(release_, "SP_PlatformFns"),
      device_fns_(release_, "SP_DeviceFns"),
      se_(release_, "SP_StreamExecutor"),
      timer_fns_(release_, "SP_TimerFns") {
  if (const StructLayout* l = FindLayout(release_, "SP_DeviceMemoryBase")) memory_struct_size_ = l->struct_size;
}

HostPlatform::~HostPlatform() { Teardown(); }

HostPlatform::Device* HostPlatform::device(int ordinal) {
  if (ordinal < 0 || ordinal >= device_count()) return nullptr;
  return devices_[static_cast<size_t>(ordinal)].get();
}

bool HostPlatform::Init(SEInitPluginFn init, TF_Status* status) {
  if (!params_.known() || !platform_.known()) {
    Fail(status, TF_INTERNAL, "no StreamExecutor layout for TensorFlow " + release_);
    return false;
  }
  // 1. SE_InitPlugin, with TF's pre-filled sizes and version.
  PrepareSEInit(&params_, &platform_, &platform_fns_);
  Status s;
  init(static_cast<SE_PlatformRegistrationParams*>(params_.data()), s.get());
  if (!Forward(s.get(), status, "SE_InitPlugin")) return false;
  registered_ = true;  // from here on, teardown calls the destroy callbacks

  // 2. TF's checks on what the plugin filled.
  if (!params_.CheckAsTensorFlow(release_, nullptr, status) ||
      !platform_.CheckAsTensorFlow(release_, nullptr, status) ||
      !platform_fns_.CheckAsTensorFlow(release_, nullptr, status)) {
    return false;
  }
  name_ = Str(platform_.Get<const char*>("name"));
  type_ = Str(platform_.Get<const char*>("type"));
  for (const auto& [field, value] : {std::pair<const char*, std::string>{"name", name_}, {"type", type_}}) {
    if (!MatchesNamePattern(release_, value)) {  // TF's rule for both strings
      Fail(status, TF_FAILED_PRECONDITION,
           std::string("SP_Platform.") + field + " '" + value + "' must match " + NamePattern(release_) +
               " (TensorFlow " + release_ + " rejects the plugin)");
      return false;
    }
  }

  // 3. Device fns, stream executor, timer fns (releases that have them).
  const auto* platform = static_cast<const SP_Platform*>(platform_.data());
  device_fns_.PrefillStructSize();
  SE_CreateDeviceFnsParams dfp{};
  dfp.struct_size = FindLayout(release_, "SE_CreateDeviceFnsParams")->struct_size;
  dfp.device_fns = static_cast<SP_DeviceFns*>(device_fns_.data());
  platform_fns_.Get<CreateDeviceFnsFn>("create_device_fns")(platform, &dfp, s.get());
  if (!Forward(s.get(), status, "SP_PlatformFns.create_device_fns")) return false;
  device_fns_created_ = true;
  if (!device_fns_.CheckAsTensorFlow(release_, nullptr, status)) return false;

  se_.PrefillStructSize();
  SE_CreateStreamExecutorParams sep{};
  sep.struct_size = FindLayout(release_, "SE_CreateStreamExecutorParams")->struct_size;
  sep.stream_executor = static_cast<SP_StreamExecutor*>(se_.data());
  platform_fns_.Get<CreateSEFn>("create_stream_executor")(platform, &sep, s.get());
  if (!Forward(s.get(), status, "SP_PlatformFns.create_stream_executor")) return false;
  se_created_ = true;
  if (!se_.CheckAsTensorFlow(release_, &platform_, status)) return false;

  auto create_timer_fns = platform_fns_.Get<CreateTimerFnsFn>("create_timer_fns");
  const bool timers_required = Requires(platform_fns_.layout(), "create_timer_fns");
  if (timers_required && create_timer_fns != nullptr && timer_fns_.known()) {
    timer_fns_.PrefillStructSize();
    create_timer_fns(platform, static_cast<SP_TimerFns*>(timer_fns_.data()), s.get());
    if (!Forward(s.get(), status, "SP_PlatformFns.create_timer_fns")) return false;
    timer_fns_created_ = true;
    if (!timer_fns_.CheckAsTensorFlow(release_, nullptr, status)) return false;
  }

  // 4. Devices: as many as get_device_count says, each with a stream.
  auto get_count = platform_fns_.Get<GetDeviceCountFn>("get_device_count");
  if (get_count == nullptr) {
    Fail(status, TF_FAILED_PRECONDITION,
         "SP_PlatformFns.get_device_count is NULL: TensorFlow " + release_ + " calls it without checking (a crash)");
    return false;
  }
  int count = -1;
  get_count(platform, &count, s.get());
  if (!Forward(s.get(), status, "SP_PlatformFns.get_device_count")) return false;
  if (count < 0 || count > kMaxDevices) {
    Fail(status, TF_FAILED_PRECONDITION,
         "SP_PlatformFns.get_device_count reported " + std::to_string(count) + " devices");
    return false;
  }
  for (int i = 0; i < count; ++i) {
    auto d = std::make_unique<Device>();
    d->ordinal = i;
    d->name = "/job:localhost/replica:0/task:0/device:" + type_ + ":" + std::to_string(i);
    d->sp_device = std::make_unique<PluginStruct>(release_, "SP_Device");
    d->sp_device->PrefillStructSize();
    SE_CreateDeviceParams cdp{};
    cdp.struct_size = FindLayout(release_, "SE_CreateDeviceParams")->struct_size;
    cdp.ordinal = i;
    cdp.device = sp(d.get());
    platform_fns_.Get<CreateDeviceFn>("create_device")(platform, &cdp, s.get());
    Device* dev = d.get();
    devices_.push_back(std::move(d));
    if (!Forward(s.get(), status, "SP_PlatformFns.create_device(ordinal " + std::to_string(i) + ")")) return false;
    dev->created = true;
    if (!dev->sp_device->CheckAsTensorFlow(release_, nullptr, status)) return false;
    SE<decltype(SP_StreamExecutor::create_stream)>("create_stream")(sp(dev), &dev->stream, s.get());
    if (!Forward(s.get(), status, "SP_StreamExecutor.create_stream")) return false;
    if (dev->stream == nullptr) {
      ContractNote("SP_StreamExecutor.create_stream returned OK but left the SP_Stream NULL");
    }
  }
  return true;
}

void HostPlatform::Teardown() {
  if (!registered_) return;
  registered_ = false;
  const auto* platform = static_cast<const SP_Platform*>(platform_.data());
  // Streams and devices first (TF destroys executors before the platform).
  for (auto it = devices_.rbegin(); it != devices_.rend(); ++it) {
    Device* d = it->get();
    if (!d->created) continue;
    if (d->stream != nullptr) {
      if (auto fn = SE<decltype(SP_StreamExecutor::destroy_stream)>("destroy_stream")) fn(sp(d), d->stream);
      d->stream = nullptr;
    }
    if (auto fn = platform_fns_.Get<DestroyDeviceFn>("destroy_device")) fn(platform, sp(d));
    d->created = false;
  }
  devices_.clear();
  if (device_fns_created_) {
    if (auto fn = platform_fns_.Get<DestroyDeviceFnsFn>("destroy_device_fns")) {
      fn(platform, static_cast<SP_DeviceFns*>(device_fns_.data()));
    }
  }
  if (se_created_) {
    if (auto fn = platform_fns_.Get<DestroySEFn>("destroy_stream_executor")) {
      fn(platform, static_cast<SP_StreamExecutor*>(se_.data()));
    }
  }
  if (timer_fns_created_) {
    if (auto fn = platform_fns_.Get<DestroyTimerFnsFn>("destroy_timer_fns")) {
      fn(platform, static_cast<SP_TimerFns*>(timer_fns_.data()));
    }
  }
  if (auto fn = params_.Get<DestroyPlatformFn>("destroy_platform")) fn(static_cast<SP_Platform*>(platform_.data()));
  if (auto fn = params_.Get<DestroyPlatformFnsFn>("destroy_platform_fns")) {
    fn(static_cast<SP_PlatformFns*>(platform_fns_.data()));
  }
  device_fns_created_ = se_created_ = timer_fns_created_ = false;
}

bool HostPlatform::Step(bool ok, TF_Status* status, const std::string& what) {
  if (!ok) Fail(status, TF_FAILED_PRECONDITION, what);
  return ok;
}

void* HostPlatform::Allocate(Device* d, uint64_t size, TF_Status* status) {
  auto fn = SE<decltype(SP_StreamExecutor::allocate)>("allocate");
  if (!Step(fn != nullptr && d != nullptr, status, "no device or SP_StreamExecutor.allocate")) return nullptr;
  SP_DeviceMemoryBase mem = DeviceMemory();
  fn(sp(d), size, /*memory_space=*/0, &mem);
  if (mem.opaque == nullptr && size > 0) {
    Fail(status, TF_RESOURCE_EXHAUSTED,
         "SP_StreamExecutor.allocate could not allocate " + std::to_string(size) + " bytes on " + d->name);
    return nullptr;
  }
  if (mem.opaque != nullptr && mem.size != size) {
    ContractNote("SP_StreamExecutor.allocate(" + std::to_string(size) + ") set SP_DeviceMemoryBase.size to " +
                 std::to_string(mem.size));
  }
  TF_SetStatus(status, TF_OK, "");
  return mem.opaque;
}

void HostPlatform::Deallocate(Device* d, void* ptr, uint64_t size) {
  auto fn = SE<decltype(SP_StreamExecutor::deallocate)>("deallocate");
  if (fn == nullptr || d == nullptr || ptr == nullptr) return;
  SP_DeviceMemoryBase mem = DeviceMemory();
  mem.opaque = ptr;
  mem.size = size;
  fn(sp(d), &mem);
}

void HostPlatform::MemcpyHtoD(Device* d, void* dst, const void* src, uint64_t size, TF_Status* status) {
  auto fn = SE<decltype(SP_StreamExecutor::sync_memcpy_htod)>("sync_memcpy_htod");
  if (!Step(fn != nullptr && d != nullptr, status, "no device or SP_StreamExecutor.sync_memcpy_htod")) return;
  SP_DeviceMemoryBase mem = DeviceMemory();
  mem.opaque = dst;
  mem.size = size;
  Status s;
  fn(sp(d), &mem, src, size, s.get());
  if (Forward(s.get(), status, "SP_StreamExecutor.sync_memcpy_htod")) TF_SetStatus(status, TF_OK, "");
}

void HostPlatform::MemcpyDtoH(Device* d, void* dst, const void* src, uint64_t size, TF_Status* status) {
  auto fn = SE<decltype(SP_StreamExecutor::sync_memcpy_dtoh)>("sync_memcpy_dtoh");
  if (!Step(fn != nullptr && d != nullptr, status, "no device or SP_StreamExecutor.sync_memcpy_dtoh")) return;
  SP_DeviceMemoryBase mem = DeviceMemory();
  mem.opaque = const_cast<void*>(src);
  mem.size = size;
  Status s;
  fn(sp(d), dst, &mem, size, s.get());
  if (Forward(s.get(), status, "SP_StreamExecutor.sync_memcpy_dtoh")) TF_SetStatus(status, TF_OK, "");
}

void HostPlatform::SyncStream(Device* d, TF_Status* status) {
  if (!Step(d != nullptr, status, "no such device")) return;
  Status s;
  // TF blocks with block_host_until_done where the plugin has it, else
  // through an event recorded on the stream.
  if (auto fn = SE<decltype(SP_StreamExecutor::block_host_until_done)>("block_host_until_done")) {
    fn(sp(d), d->stream, s.get());
    if (!Forward(s.get(), status, "SP_StreamExecutor.block_host_until_done")) return;
  } else {
    SP_Event event = nullptr;
    SE<decltype(SP_StreamExecutor::create_event)>("create_event")(sp(d), &event, s.get());
    if (!Forward(s.get(), status, "SP_StreamExecutor.create_event")) return;
    SE<decltype(SP_StreamExecutor::record_event)>("record_event")(sp(d), d->stream, event, s.get());
    if (Forward(s.get(), status, "SP_StreamExecutor.record_event")) {
      SE<decltype(SP_StreamExecutor::block_host_for_event)>("block_host_for_event")(sp(d), event, s.get());
      Forward(s.get(), status, "SP_StreamExecutor.block_host_for_event");
    }
    SE<decltype(SP_StreamExecutor::destroy_event)>("destroy_event")(sp(d), event);
    if (TF_GetCode(status) != TF_OK) return;
  }
  SE<decltype(SP_StreamExecutor::get_stream_status)>("get_stream_status")(sp(d), d->stream, s.get());
  if (Forward(s.get(), status, "the stream (SP_StreamExecutor.get_stream_status)")) TF_SetStatus(status, TF_OK, "");
}

void HostPlatform::SynchronizeAll(Device* d, TF_Status* status) {
  if (!Step(d != nullptr, status, "no such device")) return;
  Status s;
  SE<decltype(SP_StreamExecutor::synchronize_all_activity)>("synchronize_all_activity")(sp(d), s.get());
  if (Forward(s.get(), status, "SP_StreamExecutor.synchronize_all_activity")) TF_SetStatus(status, TF_OK, "");
}

int32_t HostPlatform::NumaNode(Device* d) {
  auto fn = device_fns_.Get<decltype(SP_DeviceFns::get_numa_node)>("get_numa_node");
  return fn != nullptr && d != nullptr ? fn(sp(d)) : -1;
}

int64_t HostPlatform::MemoryBandwidth(Device* d) {
  auto fn = device_fns_.Get<decltype(SP_DeviceFns::get_memory_bandwidth)>("get_memory_bandwidth");
  return fn != nullptr && d != nullptr ? fn(sp(d)) : -1;
}

double HostPlatform::Gflops(Device* d) {
  auto fn = device_fns_.Get<decltype(SP_DeviceFns::get_gflops)>("get_gflops");
  return fn != nullptr && d != nullptr ? fn(sp(d)) : -1;
}

bool HostPlatform::MemoryUsage(Device* d, int64_t* free, int64_t* total) {
  auto fn = SE<decltype(SP_StreamExecutor::device_memory_usage)>("device_memory_usage");
  return fn != nullptr && d != nullptr && fn(sp(d), free, total);
}

}  // namespace tfp_shims
