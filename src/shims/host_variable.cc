// SPDX-License-Identifier: Apache-2.0
// tfp_variable (host.h): a tensor in a device's memory that kernels update
// in place, reached through a DT_RESOURCE handle input, as VarHandleOp's
// variables are in TensorFlow. A handle holds the variable's address; live
// variables are registered, so a handle to a deleted variable, or a forged
// one, is an error naming the input rather than a crash.
#include "shim_internal.h"  // first: it turns the headers' "unavailable" marks off

#include <cstring>
#include <set>
#include <vector>

#include "host_internal.h"
#include "host_variable.h"

namespace {

std::mutex g_live_mu;
std::set<const tfp_variable*> g_live;  // under g_live_mu

void FreeHandle(void* data, size_t, void*) { delete static_cast<tfp_variable**>(data); }

}  // namespace

namespace tfp_shims {

tfp_variable* VariableFromHandle(const TF_Tensor* handle, const std::string& what,
                                 TF_Status* status) {
  if (handle == nullptr || TF_TensorType(handle) != TF_RESOURCE ||
      TF_TensorByteSize(handle) != sizeof(tfp_variable*)) {
    Fail(status, TF_INVALID_ARGUMENT, what + " is not a resource variable handle (DT_RESOURCE)");
    return nullptr;
  }
  tfp_variable* v = nullptr;
  std::memcpy(&v, TF_TensorData(handle), sizeof v);
  std::lock_guard<std::mutex> lock(g_live_mu);
  if (g_live.count(v) == 0) {
    Fail(status, TF_FAILED_PRECONDITION, what + ": its variable was deleted");
    return nullptr;
  }
  return v;
}

}  // namespace tfp_shims

extern "C" {

tfp_variable* tfp_variable_new(tfp_host* host, int ordinal, const TF_Tensor* initial,
                               TF_Status* status) {
  if (host == nullptr || initial == nullptr || host->platform == nullptr ||
      ordinal < 0 || ordinal >= host->platform->device_count()) {
    tfp_shims::Fail(status, TF_INVALID_ARGUMENT, "tfp_variable_new: no such host, device or tensor");
    return nullptr;
  }
  const TF_DataType dtype = TF_TensorType(initial);
  if (dtype == TF_STRING || dtype == TF_RESOURCE || dtype == TF_VARIANT) {
    tfp_shims::Fail(status, TF_UNIMPLEMENTED,
                    "tfp_variable_new: variables of strings, resources or variants");
    return nullptr;
  }
  auto* v = new tfp_variable;
  auto* dev = host->platform->device(ordinal);
  v->memory = tfp_shims::DeviceMemory{host, ordinal};
  v->binding = tfp_shims::DeviceBinding{host->platform->type(), dev->name, ordinal, dev->stream,
                                        tfp_shims::AllocateDeviceMemory, tfp_shims::FreeDeviceMemory,
                                        &v->memory};
  v->value = tfp_shims::CopyToDevice(v->binding, host, ordinal, initial, status);
  if (v->value == nullptr) {
    delete v;
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(g_live_mu);
  g_live.insert(v);
  TF_SetStatus(status, TF_OK, "");
  return v;
}

void tfp_variable_delete(tfp_variable* variable) {
  if (variable == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(g_live_mu);
    g_live.erase(variable);
  }
  TF_DeleteTensor(variable->held);
  TF_DeleteTensor(variable->value);
  delete variable;
}

void tfp_variable_hold_read(tfp_variable* variable, TF_Status* status) {
  if (variable == nullptr) {
    tfp_shims::Fail(status, TF_INVALID_ARGUMENT, "tfp_variable_hold_read: NULL variable");
    return;
  }
  std::lock_guard<std::mutex> lock(variable->mu);
  if (variable->held != nullptr) {
    tfp_shims::Fail(status, TF_FAILED_PRECONDITION, "tfp_variable_hold_read: a read is already held");
    return;
  }
  variable->held = tfp_shims::ShareTensor(variable->value);
  TF_SetStatus(status, TF_OK, "");
}

TF_Tensor* tfp_variable_release_read(tfp_variable* variable, TF_Status* status) {
  if (variable == nullptr) {
    tfp_shims::Fail(status, TF_INVALID_ARGUMENT, "tfp_variable_release_read: NULL variable");
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(variable->mu);
  if (variable->held == nullptr) {
    tfp_shims::Fail(status, TF_FAILED_PRECONDITION, "tfp_variable_release_read: no read is held");
    return nullptr;
  }
  TF_SetStatus(status, TF_OK, "");
  TF_Tensor* copy = tfp_shims::CopyToHost(variable->memory.host, variable->memory.ordinal, variable->held,
                                          false, "the held read", status);
  TF_DeleteTensor(variable->held);
  variable->held = nullptr;
  return copy;
}

TF_Tensor* tfp_variable_read(tfp_variable* variable, TF_Status* status) {
  if (variable == nullptr) {
    tfp_shims::Fail(status, TF_INVALID_ARGUMENT, "tfp_variable_read: NULL variable");
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(variable->mu);
  TF_SetStatus(status, TF_OK, "");
  return tfp_shims::CopyToHost(variable->memory.host, variable->memory.ordinal, variable->value,
                               false, "the variable", status);
}

}  // extern "C"

namespace tfp_shims {

bool PrepareToUpdate(TF_OpKernelContext* ctx, tfp_variable* variable, CopyFunc copy,
                     const std::string& what, TF_Status* status) {
  if (variable->held == nullptr || TF_TensorData(variable->held) != TF_TensorData(variable->value) ||
      TF_TensorByteSize(variable->value) == 0) {
    return true;  // the buffer is the variable's alone: update it in place
  }
  if (copy == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT,
         what + ": the variable's buffer is shared with a read, and copyFunc is NULL (TensorFlow "
                "calls it here to copy the buffer before the update)");
    return false;
  }
  const std::vector<int64_t> dims = Dims(variable->value);
  TF_Tensor* fresh = AllocateTensor(variable->binding, false, TF_TensorType(variable->value), dims.data(),
                                    static_cast<int>(dims.size()), status);
  if (fresh == nullptr) return false;
  copy(ctx, variable->value, fresh);
  TF_DeleteTensor(variable->value);  // the held read keeps the old buffer
  variable->value = fresh;
  return true;
}

// The handle tfp_op_add_variable appends: a host DT_RESOURCE scalar.
TF_Tensor* NewVariableHandle(tfp_variable* variable) {
  auto* data = new tfp_variable*(variable);
  return TF_NewTensor(TF_RESOURCE, nullptr, 0, data, sizeof *data, FreeHandle, nullptr);
}

}  // namespace tfp_shims
