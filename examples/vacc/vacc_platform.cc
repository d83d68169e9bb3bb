// SPDX-License-Identifier: Apache-2.0
//
// SE_InitPlugin and the platform-level callbacks: what TensorFlow calls to
// learn about the platform, create its devices and get the callback tables.
//
// Order TensorFlow follows (stream_executor's plugin loader):
//   SE_InitPlugin -> create_device_fns -> create_stream_executor
//   (-> create_timer_fns, releases that use timers), then per device ordinal
//   on first use: create_device, get_device_count. At exit: destroy_device for
//   each device, destroy_device_fns, destroy_stream_executor,
//   destroy_timer_fns, destroy_platform, destroy_platform_fns.
// All of these run on a TensorFlow thread, one at a time, never concurrently
// with each other; status arrives TF_OK and is only set on failure.
#include <sys/stat.h>

#include <cstdio>
#include <new>
#include <string>

#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/tf_status.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/vacc_kernel.h"
#include "kernels/vacc_simd.h"
#include "vacc_callbacks.h"
#include "vacc_config.h"
#include "vacc_device.h"
#include "vacc_struct_size.h"

namespace vacc {
namespace {

// Read once in SE_InitPlugin; the platform lives as long as the process.
Config g_config;

constexpr char kPlatformName[] = "VACC";  // TODO(vendor): your platform's name
constexpr char kDeviceType[] = "VACC";    // shown by TF as /device:VACC:<n>
constexpr char kVendor[] = "tfplugin example (virtual accelerator on CPU threads)";

void SetError(TF_Status* status, TF_Code code, const std::string& message) {
  TF_SetStatus(status, code, message.c_str());
}

// ---- SP_PlatformFns

// Out: *device_count. Must agree with the ordinals create_device accepts.
void GetDeviceCount(const SP_Platform*, int* device_count, TF_Status* status) {
  *device_count = g_config.device_count;
  TF_SetStatus(status, TF_OK, "");
}

// In: params->ordinal; params->device pre-filled by TF (struct_size set).
// Out: every SP_Device field. device_handle is ours until destroy_device.
void CreateDevice(const SP_Platform*, SE_CreateDeviceParams* params, TF_Status* status) {
  const size_t params_size =
      VACC_NEGOTIATE(params, SE_CreateDeviceParams, SE_CREATE_DEVICE_PARAMS, status);
  if (params_size == 0) return;
  if (params->ordinal < 0 || params->ordinal >= g_config.device_count) {
    return SetError(status, TF_INVALID_ARGUMENT,
                    "create_device: ordinal " + std::to_string(params->ordinal) +
                        " is out of range: VACC has " + std::to_string(g_config.device_count) +
                        " device(s) (VACC_DEVICE_COUNT)");
  }
  SP_Device* device = params->device;
  const size_t size = VACC_NEGOTIATE(device, SP_Device, SP_DEVICE, status);
  if (size == 0) return;
  // TODO(vendor): open the hardware here.
  Device* vacc = new (std::nothrow) Device(params->ordinal, g_config);
  if (vacc == nullptr || !vacc->heap().ok()) {
    delete vacc;
    return SetError(status, TF_RESOURCE_EXHAUSTED,
                    "create_device: could not reserve " +
                        std::to_string(g_config.memory_bytes >> 20) +
                        " MiB of address space for VACC:" + std::to_string(params->ordinal) +
                        " (VACC_MEMORY_MB)");
  }
  device->struct_size = size;
  VACC_SET(device, size, ext, nullptr);
  VACC_SET(device, size, ordinal, params->ordinal);
  VACC_SET(device, size, device_handle, vacc);
  // The strings live in the Device, which outlives every use TF makes.
  VACC_SET(device, size, hardware_name, vacc->hardware_name().c_str());
  VACC_SET(device, size, device_vendor, kVendor);
  VACC_SET(device, size, pci_bus_id, vacc->pci_bus_id().c_str());
  TF_SetStatus(status, TF_OK, "");
}

// TF passes its own copy of the SP_Device create_device filled.
void DestroyDevice(const SP_Platform*, SP_Device* device) {
  delete Device::From(device);
  device->device_handle = nullptr;
}

// ---- SP_DeviceFns: facts TF puts in the device description.

int32_t GetNumaNode(const SP_Device*) {
  // TODO(vendor): the NUMA node the device is attached to. Host memory here:
  // node 0 where the kernel reports NUMA nodes, else unknown (-1).
  struct stat st;
  return stat("/sys/devices/system/node/node0", &st) == 0 ? 0 : -1;
}

// Bytes per second.
int64_t GetMemoryBandwidth(const SP_Device* device) {
  const Config& c = Device::From(device)->config();
  return c.memory_bandwidth > 0 ? c.memory_bandwidth : MeasureMemoryBandwidth();
}

double GetGflops(const SP_Device* device) {
  const Config& c = Device::From(device)->config();
  return c.gflops > 0 ? c.gflops : MeasureGflops(c.compute_units);
}

void CreateDeviceFns(const SP_Platform*, SE_CreateDeviceFnsParams* params, TF_Status* status) {
  if (VACC_NEGOTIATE(params, SE_CreateDeviceFnsParams, SE_CREATE_DEVICE_FNS_PARAMS, status) == 0)
    return;
  SP_DeviceFns* fns = params->device_fns;
  const size_t size = VACC_NEGOTIATE(fns, SP_DeviceFns, SP_DEVICE_FNS, status);
  if (size == 0) return;
  fns->struct_size = size;
  VACC_SET(fns, size, ext, nullptr);
  VACC_SET(fns, size, get_numa_node, GetNumaNode);
  VACC_SET(fns, size, get_memory_bandwidth, GetMemoryBandwidth);
  VACC_SET(fns, size, get_gflops, GetGflops);
  TF_SetStatus(status, TF_OK, "");
}

void DestroyDeviceFns(const SP_Platform*, SP_DeviceFns*) {}  // nothing allocated

void CreateStreamExecutor(const SP_Platform*, SE_CreateStreamExecutorParams* params,
                          TF_Status* status) {
  if (VACC_NEGOTIATE(params, SE_CreateStreamExecutorParams, SE_CREATE_STREAM_EXECUTOR_PARAMS,
                     status) == 0)
    return;
  SP_StreamExecutor* se = params->stream_executor;
  const size_t size = VACC_NEGOTIATE(se, SP_StreamExecutor, SP_STREAMEXECUTOR, status);
  if (size == 0) return;
  FillStreamExecutor(se, size);
  TF_SetStatus(status, TF_OK, "");
}

void DestroyStreamExecutor(const SP_Platform*, SP_StreamExecutor*) {}

// Releases that create timer fns call this; newer ones only destroy_timer_fns
// (on a table they never had us fill), so that must not assume anything.
void CreateTimerFns(const SP_Platform*, SP_TimerFns* timer_fns, TF_Status* status) {
  const size_t size = VACC_NEGOTIATE(timer_fns, SP_TimerFns, SP_TIMER_FNS, status);
  if (size == 0) return;
  FillTimerFns(timer_fns, size);
  TF_SetStatus(status, TF_OK, "");
}

void DestroyTimerFns(const SP_Platform*, SP_TimerFns*) {}

void DestroyPlatform(SP_Platform*) {}        // the strings are static
void DestroyPlatformFns(SP_PlatformFns*) {}

}  // namespace
}  // namespace vacc

// The entry point TensorFlow looks up after dlopen. In: params with
// major/minor/patch_version and pre-filled platform and platform_fns. Out:
// both filled, plus the two destroy callbacks. On error: set status; TF then
// rejects the plugin (and frees nothing of ours).
extern "C" __attribute__((visibility("default"))) void SE_InitPlugin(
    SE_PlatformRegistrationParams* params, TF_Status* status) {
  using namespace vacc;
  if (params == nullptr || params->platform == nullptr || params->platform_fns == nullptr) {
    return SetError(status, TF_INVALID_ARGUMENT,
                    "SE_InitPlugin: params, params->platform or params->platform_fns is NULL");
  }
  // The StreamExecutor C API promises compatibility within a major version.
  if (params->major_version != SE_MAJOR) {
    return SetError(status, TF_FAILED_PRECONDITION,
                    "SE_InitPlugin: TensorFlow's StreamExecutor C API is version " +
                        std::to_string(params->major_version) + "." +
                        std::to_string(params->minor_version) + "." +
                        std::to_string(params->patch_version) +
                        ", this plugin was built for major version " + std::to_string(SE_MAJOR));
  }
  std::string error;
  Config config;
  if (!Config::FromEnvironment(&config, &error)) {
    return SetError(status, TF_INVALID_ARGUMENT, "SE_InitPlugin: " + error);
  }
  // Checked here because TF_InitKernel, which runs next, cannot fail.
  if (!SelectSimd(config.simd, &error)) {
    return SetError(status, TF_INVALID_ARGUMENT, "SE_InitPlugin: " + error);
  }
  if (!gemm::SelectPackedTileShape(config.gemm_tile, &error)) {
    return SetError(status, TF_INVALID_ARGUMENT, "SE_InitPlugin: " + error);
  }
  SetKernelsSynchronous(config.sync_kernels);
  const size_t params_size =
      VACC_NEGOTIATE(params, SE_PlatformRegistrationParams, SE_PLATFORM_REGISTRATION_PARAMS,
                     status);
  if (params_size == 0) return;

  SP_Platform* platform = params->platform;
  const size_t psize = VACC_NEGOTIATE(platform, SP_Platform, SP_PLATFORM, status);
  if (psize == 0) return;
  platform->struct_size = psize;
  VACC_SET(platform, psize, ext, nullptr);
  VACC_SET(platform, psize, name, kPlatformName);
  VACC_SET(platform, psize, type, kDeviceType);
  // vacc memory is host memory, so unified memory is simply device memory.
  VACC_SET(platform, psize, supports_unified_memory, 1);
  VACC_SET(platform, psize, use_bfc_allocator, config.use_bfc_allocator ? 1 : 0);
#if TFPLUGIN_STREAM_EXECUTOR_REVISION >= 3  // added in TF 2.9
  VACC_SET(platform, psize, force_memory_growth, config.force_memory_growth ? 1 : 0);
#endif

  SP_PlatformFns* fns = params->platform_fns;
  const size_t fsize = VACC_NEGOTIATE(fns, SP_PlatformFns, SP_PLATFORM_FNS, status);
  if (fsize == 0) return;
  fns->struct_size = fsize;
  VACC_SET(fns, fsize, ext, nullptr);
  VACC_SET(fns, fsize, get_device_count, GetDeviceCount);
  VACC_SET(fns, fsize, create_device, CreateDevice);
  VACC_SET(fns, fsize, destroy_device, DestroyDevice);
  VACC_SET(fns, fsize, create_device_fns, CreateDeviceFns);
  VACC_SET(fns, fsize, destroy_device_fns, DestroyDeviceFns);
  VACC_SET(fns, fsize, create_stream_executor, CreateStreamExecutor);
  VACC_SET(fns, fsize, destroy_stream_executor, DestroyStreamExecutor);
  VACC_SET(fns, fsize, create_timer_fns, CreateTimerFns);
  VACC_SET(fns, fsize, destroy_timer_fns, DestroyTimerFns);

  VACC_SET(params, params_size, destroy_platform, DestroyPlatform);
  VACC_SET(params, params_size, destroy_platform_fns, DestroyPlatformFns);
  g_config = config;  // only once everything succeeded
  TF_SetStatus(status, TF_OK, "");
}
