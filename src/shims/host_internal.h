// SPDX-License-Identifier: Apache-2.0
// The host's state, shared by host.cc (loading, listing) and host_op.cc
// (running ops).
#ifndef TFPLUGIN_SHIMS_HOST_INTERNAL_H_
#define TFPLUGIN_SHIMS_HOST_INTERNAL_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "host_platform.h"
#include "kernel_registry.h"
#include "kernel_runtime.h"
#include "tfplugin/host.h"

struct tfp_host {
  int id = 0;  // owner tag of the kernels this plugin registered
  std::string path, release;
  void* handle = nullptr;  // dlopen
  unsigned entry_points = 0;
  std::unique_ptr<tfp_shims::HostPlatform> platform;

  // Kernels and ops the plugin registered, with C views for tfp_kernel_info.
  struct Kernel {
    tfp_shims::KernelDef def;
    std::vector<const char*> constraint_attrs, host_memory_args;
    std::vector<TF_DataType> constraint_types;
    std::string signature, description;
  };
  std::vector<Kernel> kernels;
  std::vector<std::string> ops;
  std::mutex signatures_mu;
  std::map<std::string, std::string> signatures;  // tfp_host_op_signature cache
};

namespace tfp_shims {

// Where the host's device tensors go: device `ordinal` of `host`. An op or a
// variable keeps one as its DeviceBinding's arg, for these two callbacks.
struct DeviceMemory {
  tfp_host* host = nullptr;
  int ordinal = 0;
};
void* AllocateDeviceMemory(void* device_memory, size_t bytes);  // NULL: refused
void FreeDeviceMemory(void* device_memory, void* ptr, size_t bytes);

// A copy of host tensor `in` in `binding`'s memory on device `ordinal`, and
// a host copy of `t` (in host memory already if `on_host`; `what` names it
// in errors). NULL with status set on failure.
TF_Tensor* CopyToDevice(const DeviceBinding& binding, tfp_host* host, int ordinal, const TF_Tensor* in,
                        TF_Status* status);
TF_Tensor* CopyToHost(tfp_host* host, int ordinal, const TF_Tensor* t, bool on_host, const std::string& what,
                      TF_Status* status);

}  // namespace tfp_shims

#endif  // TFPLUGIN_SHIMS_HOST_INTERNAL_H_
