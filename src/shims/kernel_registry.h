// SPDX-License-Identifier: Apache-2.0
// Kernels registered through kernels.h (TF_NewKernelBuilder ...
// TF_RegisterKernelBuilder), and choosing one for a node the way TensorFlow
// does: same op and device type, the node's "_kernel" attr equal to the
// kernel's label, every type constraint satisfied; among several matches the
// highest priority wins, and a tie is an error.
#ifndef TFPLUGIN_SHIMS_KERNEL_REGISTRY_H_
#define TFPLUGIN_SHIMS_KERNEL_REGISTRY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attr_value.h"
#include "tensorflow/c/kernels.h"

namespace tfp_shims {

struct KernelDef {
  std::string name;  // the name given to TF_RegisterKernelBuilder
  std::string op, device_type, label;
  void* (*create)(TF_OpKernelConstruction*) = nullptr;
  void (*compute)(void*, TF_OpKernelContext*) = nullptr;
  void (*compute_async)(void*, TF_OpKernelContext*, TF_AsyncOpKernelDoneCallback*) = nullptr;
  void (*destroy)(void*) = nullptr;
  // One entry per TF_KernelBuilder_TypeConstraint call. Like TensorFlow,
  // two calls for the same attr are two constraints (both must hold), not
  // one constraint allowing two types.
  std::vector<std::pair<std::string, TF_DataType>> type_constraints;
  std::vector<std::string> host_memory_args;
  int32_t priority = 0;
  int owner = 0;  // the host whose plugin registered it (Registrant(); 0: none)

  bool IsHostMemoryArg(const std::string& arg) const;
  // Whether an arg of `dtype` is in host memory: one the kernel declared so,
  // or a resource handle, always on the host, as in TensorFlow
  // (MTypeFromDType).
  bool InHostMemory(const std::string& arg, TF_DataType dtype) const {
    return dtype == TF_RESOURCE || IsHostMemoryArg(arg);
  }
  // "MatMul on VACC {T=float} host_memory=[...] priority=1"
  std::string Describe() const;
};

// Every registered kernel, in registration order.
std::vector<KernelDef> RegisteredKernels();

// The kernel for a node of `op` on `device_type` with (complete) `attrs`.
// NOT_FOUND naming the registered candidates when none matches,
// INVALID_ARGUMENT when several match with the same priority.
bool SelectKernel(const std::string& op, const std::string& device_type, const AttrMap& attrs,
                  KernelDef* out, TF_Status* status);

// Forget every registered kernel.
void ResetKernels();

// Forget the kernels `owner` registered (a host unloading its plugin).
void RemoveKernelsOf(int owner);

}  // namespace tfp_shims

#endif  // TFPLUGIN_SHIMS_KERNEL_REGISTRY_H_
