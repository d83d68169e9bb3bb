// SPDX-License-Identifier: Apache-2.0
// What a kernel sees while it is built and run: TF_OpKernelConstruction and
// TF_OpKernelContext, filled by a host (host_op.cc) and read by the plugin
// through kernels.h. The host supplies the device: its stream, how to
// allocate and free device memory, its name and id.
#ifndef TFPLUGIN_SHIMS_KERNEL_RUNTIME_H_
#define TFPLUGIN_SHIMS_KERNEL_RUNTIME_H_

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "kernel_registry.h"
#include "op_def.h"
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/kernels.h"

namespace tfp_shims {

// The device a kernel runs on, as the host provides it. `stream` NULL means
// a host (CPU) device: TF_GetStream then fails as in TensorFlow.
struct DeviceBinding {
  std::string device_type;   // "VACC"
  std::string device_name;   // "/job:localhost/replica:0/task:0/device:VACC:0"
  int device_id = 0;
  SP_Stream stream = nullptr;
  // Device memory; NULL on failure. `free` gets what `allocate` returned.
  void* (*allocate)(void* arg, size_t bytes) = nullptr;
  void (*free)(void* arg, void* ptr, size_t bytes) = nullptr;
  void* arg = nullptr;
};

// A tensor of `dtype`/`dims` in device memory (or host memory if
// `on_host`), freed through `device` when its last sharer goes. NULL with
// `status` set (RESOURCE_EXHAUSTED naming the size) on failure.
TF_Tensor* AllocateTensor(const DeviceBinding& device, bool on_host, TF_DataType dtype,
                          const int64_t* dims, int num_dims, TF_Status* status);

}  // namespace tfp_shims

struct TF_OpKernelConstruction {
  const tfp_shims::OpDef* op = nullptr;
  const tfp_shims::NodeSignature* node = nullptr;
  const tfp_shims::KernelDef* kernel = nullptr;
  const tfp_shims::DeviceBinding* device = nullptr;
  std::string node_name;
  TF_Status* failure = nullptr;  // set by TF_OpKernelConstruction_Failure
};

// Done callback of an asynchronous kernel: the host waits on it.
struct TF_AsyncOpKernelDoneCallback {
  std::mutex mu;
  std::condition_variable cv;
  int calls = 0;
};

struct TF_OpKernelContext {
  const tfp_shims::OpDef* op = nullptr;
  const tfp_shims::NodeSignature* node = nullptr;
  const tfp_shims::KernelDef* kernel = nullptr;
  const tfp_shims::DeviceBinding* device = nullptr;
  std::string node_name;
  std::vector<std::string> input_names;  // TF_GetOpKernelRequestedInput
  std::vector<TF_Tensor*> inputs;        // owned by the host
  std::vector<TF_Tensor*> outputs;       // owned by the context; NULL until set
  TF_Status* failure = nullptr;          // set by TF_OpKernelContext_Failure
  int64_t step_id = 0;
  int graph_def_version = 0;
  std::atomic<int> deferred_ops{0};
};

#endif  // TFPLUGIN_SHIMS_KERNEL_RUNTIME_H_
