// SPDX-License-Identifier: Apache-2.0
// The StreamExecutor side of the host: registers a plugin's platform through
// SE_InitPlugin the way TensorFlow R does (see host.h), owns its devices,
// stream executor and streams, and tears it all down in TF's order.
#ifndef TFPLUGIN_SHIMS_HOST_PLATFORM_H_
#define TFPLUGIN_SHIMS_HOST_PLATFORM_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugin_struct.h"
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"

namespace tfp_shims {

using SEInitPluginFn = void (*)(SE_PlatformRegistrationParams*, TF_Status*);

class HostPlatform {
 public:
  struct Device {
    int ordinal = 0;
    std::string name;  // /job:localhost/replica:0/task:0/device:<TYPE>:<ordinal>
    std::unique_ptr<PluginStruct> sp_device;  // SP_Device
    bool created = false;
    // The host's compute stream for kernels. Like TensorFlow, the host lets
    // kernels from several threads enqueue on it at once: a plugin's streams
    // must be thread-safe.
    SP_Stream stream = nullptr;
  };

  explicit HostPlatform(std::string release);
  ~HostPlatform();  // Teardown()
  HostPlatform(const HostPlatform&) = delete;
  HostPlatform& operator=(const HostPlatform&) = delete;

  // SE_InitPlugin, TF's checks, device fns, stream executor, (timer fns
  // where the release has them), every device and a stream per device.
  bool Init(SEInitPluginFn init, TF_Status* status);
  void Teardown();

  const std::string& name() const { return name_; }
  const std::string& type() const { return type_; }
  int device_count() const { return static_cast<int>(devices_.size()); }
  Device* device(int ordinal);

  // Calls into SP_StreamExecutor / SP_DeviceFns, with status and checks.
  void* Allocate(Device* d, uint64_t size, TF_Status* status);
  void Deallocate(Device* d, void* ptr, uint64_t size);
  void MemcpyHtoD(Device* d, void* dst, const void* src, uint64_t size, TF_Status* status);
  void MemcpyDtoH(Device* d, void* dst, const void* src, uint64_t size, TF_Status* status);
  // Waits until everything enqueued on the device's stream is done, and
  // reports the stream's status.
  void SyncStream(Device* d, TF_Status* status);
  void SynchronizeAll(Device* d, TF_Status* status);
  int32_t NumaNode(Device* d);
  int64_t MemoryBandwidth(Device* d);
  double Gflops(Device* d);
  bool MemoryUsage(Device* d, int64_t* free, int64_t* total);
  SP_Device* sp(Device* d) { return static_cast<SP_Device*>(d->sp_device->data()); }

 private:
  template <typename Fn>
  Fn SE(const char* field) const { return se_.Get<Fn>(field); }
  bool Step(bool ok, TF_Status* status, const std::string& what);
  // An SP_DeviceMemoryBase with this release's struct_size (looked up once).
  SP_DeviceMemoryBase DeviceMemory() const {
    SP_DeviceMemoryBase mem{};
    mem.struct_size = memory_struct_size_;
    return mem;
  }

  std::string release_;
  std::string name_, type_;
  PluginStruct params_, platform_, platform_fns_, device_fns_, se_, timer_fns_;
  bool registered_ = false, device_fns_created_ = false, se_created_ = false, timer_fns_created_ = false;
  std::vector<std::unique_ptr<Device>> devices_;
  size_t memory_struct_size_ = 0;  // SP_DeviceMemoryBase's, for this release
};

}  // namespace tfp_shims

#endif  // TFPLUGIN_SHIMS_HOST_PLATFORM_H_
