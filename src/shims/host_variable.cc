// SPDX-License-Identifier: Apache-2.0
// tfp_variable (host.h): a tensor in a device's memory that kernels update
// in place, reached through a DT_RESOURCE handle input, as VarHandleOp's
// variables are in TensorFlow. A handle holds the variable's address; live
// variables are registered, so a handle to a deleted variable, or a forged
// one, is an error naming the input rather than a crash.
#include "shim_internal.h"  // first: it turns the headers' "unavailable" marks off

#include <cstring>
#include <set>

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
  TF_DeleteTensor(variable->value);
  delete variable;
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

// The handle tfp_op_add_variable appends: a host DT_RESOURCE scalar.
TF_Tensor* NewVariableHandle(tfp_variable* variable) {
  auto* data = new tfp_variable*(variable);
  return TF_NewTensor(TF_RESOURCE, nullptr, 0, data, sizeof *data, FreeHandle, nullptr);
}

}  // namespace tfp_shims
