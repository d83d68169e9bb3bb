// SPDX-License-Identifier: Apache-2.0
// The host's resource variables (host.h, tfp_variable): what the shims'
// variable helpers (variables.cc) find behind a kernel's DT_RESOURCE input.
#ifndef TFPLUGIN_SHIMS_HOST_VARIABLE_H_
#define TFPLUGIN_SHIMS_HOST_VARIABLE_H_

#include <mutex>
#include <string>

#include "host_internal.h"
#include "kernel_runtime.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"
#include "tfplugin/host.h"

struct tfp_variable {
  tfp_shims::DeviceMemory memory;    // its device (host, ordinal); the binding's arg
  tfp_shims::DeviceBinding binding;  // where `value` lives (device memory)
  TF_Tensor* value = nullptr;        // updated in place by kernels
  // A read the host holds (tfp_variable_hold_read): it shares value's buffer
  // until an update has the kernel copy it (PrepareToUpdate).
  TF_Tensor* held = nullptr;
  std::mutex mu;                     // TF_MaybeLockVariableInputMutexesInOrder's
};

namespace tfp_shims {

// The variable behind `handle` (a DT_RESOURCE scalar tfp_op_add_variable
// made, whose variable is alive), else NULL with `status` set naming `what`
// (the caller: a C API function and its input).
tfp_variable* VariableFromHandle(const TF_Tensor* handle, const std::string& what,
                                 TF_Status* status);

// A new DT_RESOURCE scalar on the host holding `variable`'s handle.
TF_Tensor* NewVariableHandle(tfp_variable* variable);

// Before a kernel updates `variable` in place (its lock held): if another
// tensor shares the buffer (a held read), TensorFlow's copy on write: a new
// buffer, copyFunc(ctx, old, new) by the kernel, and the variable takes the
// new one. False with `status` set naming `what` if that fails (copyFunc
// NULL, no device memory).
using CopyFunc = void (*)(TF_OpKernelContext*, TF_Tensor*, TF_Tensor*);
bool PrepareToUpdate(TF_OpKernelContext* ctx, tfp_variable* variable, CopyFunc copy,
                     const std::string& what, TF_Status* status);

}  // namespace tfp_shims

#endif  // TFPLUGIN_SHIMS_HOST_VARIABLE_H_
