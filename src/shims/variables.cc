// SPDX-License-Identifier: Apache-2.0
// The resource-variable helpers of tensorflow/c/kernels_experimental.h
// (TensorFlow exports them from 2.6 to 2.18) over the host's variables
// (host_variable.h). What they do, as TensorFlow's do:
//  - TF_GetInputTensorFromVariable: the variable's tensor, updated in place;
//    when another tensor shares its buffer (the host holds a read:
//    tfp_variable_hold_read), first a new buffer the kernel's copyFunc
//    fills, as TensorFlow copies on write.
//  - TF_MaybeLockVariableInputMutexesInOrder: locks the variables of the
//    given inputs, each once, in address order (so two kernels locking the
//    same ones cannot deadlock); the holder unlocks them on release.
//  - TF_AssignUpdateVariable: under the variable's lock, checks the value
//    has the variable's dtype and shape, copies on write as above, then
//    calls updateFunc(ctx, var, value, Op) to apply it in place.
// A non-resource input, a deleted variable or a bad index is an error naming
// the function and the input, never a crash.
#include "shim_internal.h"  // first: it turns the headers' "unavailable" marks off

#include <algorithm>
#include <string>
#include <vector>

#include "attr_value.h"
#include "host_variable.h"
#include "kernel_runtime.h"
#include "tensorflow/c/kernels_experimental.h"

struct TF_VariableInputLockHolder {
  std::vector<tfp_variable*> locked;  // in locking order
};

namespace {

using tfp_shims::Fail;

std::string What(const char* function, int input) {
  return std::string(function) + " input " + std::to_string(input);
}

// The variable behind the kernel's input `input`, else NULL with status set.
tfp_variable* VariableInput(TF_OpKernelContext* ctx, int input, const char* function,
                            TF_Status* status) {
  if (ctx == nullptr || input < 0 || static_cast<size_t>(input) >= ctx->inputs.size()) {
    Fail(status, TF_INVALID_ARGUMENT, What(function, input) + ": no such input");
    return nullptr;
  }
  return tfp_shims::VariableFromHandle(ctx->inputs[static_cast<size_t>(input)],
                                       What(function, input), status);
}

// "float, shape [2, 3]": a tensor's dtype and shape, for messages.
std::string TypeAndShape(const TF_Tensor* t) {
  return std::string(tfp_shims::DataTypeName(TF_TensorType(t))) + ", shape " +
         tfp_shims::ShapeText(tfp_shims::Shape{false, tfp_shims::Dims(t)});
}

}  // namespace

extern "C" {

TFP_SHIM_IMPLEMENTED(TF_GetInputTensorFromVariable);
void TF_GetInputTensorFromVariable(TF_OpKernelContext* ctx, int input, bool lock_held,
                                   bool isVariantType, bool sparse,
                                   void (*copyFunc)(TF_OpKernelContext*, TF_Tensor*, TF_Tensor*),
                                   TF_Tensor** out, TF_Status* status) {
  (void)isVariantType;
  (void)sparse;
  if (out == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "TF_GetInputTensorFromVariable: NULL out-parameter");
    return;
  }
  *out = nullptr;
  tfp_variable* v = VariableInput(ctx, input, "TF_GetInputTensorFromVariable", status);
  if (v == nullptr) return;
  std::unique_lock<std::mutex> lock(v->mu, std::defer_lock);
  if (!lock_held) lock.lock();
  if (!tfp_shims::PrepareToUpdate(ctx, v, copyFunc, What("TF_GetInputTensorFromVariable", input), status)) {
    return;
  }
  *out = tfp_shims::ShareTensor(v->value);
  TF_SetStatus(status, TF_OK, "");
}

TFP_SHIM_IMPLEMENTED(TF_MaybeLockVariableInputMutexesInOrder);
void TF_MaybeLockVariableInputMutexesInOrder(
    TF_OpKernelContext* ctx, bool do_lock, bool sparse, const int* const inputs, size_t len,
    void (*copyFunc)(TF_OpKernelContext*, TF_Tensor*, TF_Tensor*),
    TF_VariableInputLockHolder** lockHolder, TF_Status* status) {
  (void)sparse;
  (void)copyFunc;
  if (lockHolder == nullptr || (inputs == nullptr && len > 0)) {
    Fail(status, TF_INVALID_ARGUMENT, "TF_MaybeLockVariableInputMutexesInOrder: NULL argument");
    return;
  }
  *lockHolder = nullptr;
  std::vector<tfp_variable*> variables;
  for (size_t i = 0; i < len; ++i) {
    tfp_variable* v =
        VariableInput(ctx, inputs[i], "TF_MaybeLockVariableInputMutexesInOrder", status);
    if (v == nullptr) return;
    variables.push_back(v);
  }
  std::sort(variables.begin(), variables.end());
  variables.erase(std::unique(variables.begin(), variables.end()), variables.end());
  auto* holder = new TF_VariableInputLockHolder;
  if (do_lock) {
    for (tfp_variable* v : variables) v->mu.lock();
    holder->locked = std::move(variables);
  }
  *lockHolder = holder;
  TF_SetStatus(status, TF_OK, "");
}

TFP_SHIM_IMPLEMENTED(TF_ReleaseVariableInputLockHolder);
void TF_ReleaseVariableInputLockHolder(TF_VariableInputLockHolder* lockHolder) {
  if (lockHolder == nullptr) return;
  for (auto it = lockHolder->locked.rbegin(); it != lockHolder->locked.rend(); ++it) {
    (*it)->mu.unlock();
  }
  delete lockHolder;
}

TFP_SHIM_IMPLEMENTED(TF_AssignUpdateVariable);
void TF_AssignUpdateVariable(TF_OpKernelContext* ctx, int input_index, int value_index, int Op,
                             int isVariantType,
                             void (*copyFunc)(TF_OpKernelContext*, TF_Tensor*, TF_Tensor*),
                             void (*updateFunc)(TF_OpKernelContext*, TF_Tensor*, TF_Tensor*, int),
                             TF_Status* status) {
  (void)isVariantType;
  tfp_variable* v = VariableInput(ctx, input_index, "TF_AssignUpdateVariable", status);
  if (v == nullptr) return;
  if (value_index < 0 || static_cast<size_t>(value_index) >= ctx->inputs.size()) {
    Fail(status, TF_INVALID_ARGUMENT, What("TF_AssignUpdateVariable", value_index) + ": no such input");
    return;
  }
  if (updateFunc == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "TF_AssignUpdateVariable: NULL updateFunc");
    return;
  }
  const TF_Tensor* value = ctx->inputs[static_cast<size_t>(value_index)];
  std::lock_guard<std::mutex> lock(v->mu);
  if (TF_TensorType(value) != TF_TensorType(v->value) ||
      tfp_shims::Dims(value) != tfp_shims::Dims(v->value)) {
    Fail(status, TF_INVALID_ARGUMENT,
         "TF_AssignUpdateVariable: cannot update a variable (" + TypeAndShape(v->value) +
             ") with a value (" + TypeAndShape(value) + "): dtype and shape must be equal");
    return;
  }
  if (!tfp_shims::PrepareToUpdate(ctx, v, copyFunc, What("TF_AssignUpdateVariable", input_index), status)) {
    return;
  }
  TF_Tensor* var = tfp_shims::ShareTensor(v->value);
  TF_Tensor* val = tfp_shims::ShareTensor(value);
  updateFunc(ctx, var, val, Op);
  TF_DeleteTensor(var);
  TF_DeleteTensor(val);
  TF_SetStatus(status, TF_OK, "");
}

}  // extern "C"
