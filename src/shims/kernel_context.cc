// SPDX-License-Identifier: Apache-2.0
// TF_OpKernelContext: what a kernel's compute function reads and writes.
//
// Ownership, as in TensorFlow: TF_GetInput, TF_AllocateOutput,
// TF_ForwardInputOrAllocateOutput, TF_AllocateTemp and TF_GetMutableOutput
// return a new TF_Tensor the kernel must TF_DeleteTensor (the buffer stays
// alive while the context holds it); TF_SetOutput does not take the
// kernel's tensor, it shares its buffer.
// Deviations: TensorFlow aborts on an index out of range in the functions
// without a status (TF_InputDatatype, TF_ExpectedOutputDataType); the shims
// return 0 (an invalid TF_DataType) and record a contract note.
#include <cstring>
#include <string>

#include "shim_internal.h"
// After shim_internal.h (it neutralises the "unavailable" markers):
#include "kernel_runtime.h"
#include "legacy_declarations.h"

namespace {

using tfp_shims::ContractNote;

std::string Name(TF_OpKernelContext* ctx) {
  return ctx->node_name + " (" + (ctx->op != nullptr ? ctx->op->name : std::string("?")) + ")";
}

bool ValidInput(TF_OpKernelContext* ctx, int i, TF_Status* status, const char* fn) {
  if (ctx != nullptr && i >= 0 && static_cast<size_t>(i) < ctx->inputs.size()) return true;
  std::string msg = std::string(fn) + ": input index " + std::to_string(i) + " out of range" +
                    (ctx != nullptr ? " [0, " + std::to_string(ctx->inputs.size()) + ") of " + Name(ctx) : "");
  TF_SetStatus(status, TF_OUT_OF_RANGE, msg.c_str());
  return false;
}

bool ValidOutput(TF_OpKernelContext* ctx, int i, TF_Status* status, const char* fn) {
  if (ctx != nullptr && i >= 0 && static_cast<size_t>(i) < ctx->outputs.size()) return true;
  std::string msg = std::string(fn) + ": output index " + std::to_string(i) + " out of range" +
                    (ctx != nullptr ? " [0, " + std::to_string(ctx->outputs.size()) + ") of " + Name(ctx) : "");
  TF_SetStatus(status, TF_OUT_OF_RANGE, msg.c_str());
  return false;
}

bool OutputOnHost(TF_OpKernelContext* ctx, int i) {
  const size_t k = static_cast<size_t>(i);
  return ctx->kernel != nullptr && ctx->kernel->InHostMemory(ctx->node->output_arg[k], ctx->node->output_types[k]);
}

bool InputOnHost(TF_OpKernelContext* ctx, int i) {
  const size_t k = static_cast<size_t>(i);
  return ctx->kernel != nullptr && ctx->kernel->InHostMemory(ctx->node->input_arg[k], ctx->node->input_types[k]);
}

// Stores `t` (a new reference) as output `i`, replacing any earlier one.
void StoreOutput(TF_OpKernelContext* ctx, int i, TF_Tensor* t) {
  TF_Tensor*& slot = ctx->outputs[static_cast<size_t>(i)];
  if (slot != nullptr) TF_DeleteTensor(slot);
  slot = t;
}

TF_StringView View(const std::string& s) { return TF_StringView{s.c_str(), s.size()}; }

}  // namespace

namespace tfp_shims {

namespace {
struct DeviceFree {
  void (*free)(void*, void*, size_t);
  void* arg;
};
void FreeDevice(void* data, size_t len, void* p) {
  auto* f = static_cast<DeviceFree*>(p);
  if (data != nullptr) f->free(f->arg, data, len);
  delete f;
}
}  // namespace

TF_Tensor* AllocateTensor(const DeviceBinding& device, bool on_host, TF_DataType dtype,
                          const int64_t* dims, int num_dims, TF_Status* status) {
  int64_t count = 0;
  if (!ElementCount(dims, num_dims, &count)) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "invalid tensor shape");
    return nullptr;
  }
  size_t elem = TF_DataTypeSize(dtype);
  if (elem == 0) {
    Fail(status, TF_UNIMPLEMENTED,
         std::string("cannot allocate a tensor of type ") + DataTypeName(dtype) + " (not a fixed-size type)");
    return nullptr;
  }
  if (count > 0 && static_cast<uint64_t>(count) > SIZE_MAX / elem) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED, "tensor size overflows");
    return nullptr;
  }
  size_t bytes = elem * static_cast<size_t>(count);
  TF_Tensor* t = nullptr;
  if (on_host || device.allocate == nullptr) {
    t = TF_AllocateTensor(dtype, dims, num_dims, bytes);  // aligned host memory
  } else {
    // Device allocators may refuse 0 bytes; an empty tensor needs no memory.
    void* p = bytes > 0 ? device.allocate(device.arg, bytes) : nullptr;
    if (p != nullptr || bytes == 0) {
      t = WrapBuffer(dtype, dims, num_dims, p, bytes, FreeDevice, new DeviceFree{device.free, device.arg});
    }
  }
  if (t == nullptr) {
    Fail(status, TF_RESOURCE_EXHAUSTED,
         "OOM when allocating a tensor of " + std::to_string(bytes) + " bytes on " +
             (on_host ? std::string("the host") : device.device_name));
    return nullptr;
  }
  TF_SetStatus(status, TF_OK, "");
  return t;
}

}  // namespace tfp_shims

extern "C" {

TFP_SHIM_IMPLEMENTED(TF_NumInputs);
int TF_NumInputs(TF_OpKernelContext* ctx) { return ctx != nullptr ? static_cast<int>(ctx->inputs.size()) : 0; }

TFP_SHIM_IMPLEMENTED(TF_NumOutputs);
int TF_NumOutputs(TF_OpKernelContext* ctx) { return ctx != nullptr ? static_cast<int>(ctx->outputs.size()) : 0; }

TFP_SHIM_IMPLEMENTED(TF_GetInput);
void TF_GetInput(TF_OpKernelContext* ctx, int i, TF_Tensor** tensor, TF_Status* status) {
  if (!ValidInput(ctx, i, status, "TF_GetInput")) return;
  if (tensor == nullptr) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TF_GetInput: NULL tensor out-parameter");
    return;
  }
  *tensor = tfp_shims::ShareTensor(ctx->inputs[static_cast<size_t>(i)]);
  TF_SetStatus(status, TF_OK, "");
}

TFP_SHIM_IMPLEMENTED(TF_GetInputByName);
void TF_GetInputByName(TF_OpKernelContext* ctx, const char* inputName, TF_Tensor** tensor, TF_Status* status) {
  if (ctx == nullptr || inputName == nullptr || tensor == nullptr) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TF_GetInputByName: NULL argument");
    return;
  }
  int index = -1, count = 0;
  for (size_t k = 0; k < ctx->node->input_arg.size(); ++k) {
    if (ctx->node->input_arg[k] == inputName) {
      if (index < 0) index = static_cast<int>(k);
      ++count;
    }
  }
  if (count != 1) {
    std::string msg = count == 0 ? "TF_GetInputByName: " + Name(ctx) + " has no input named '" + inputName + "'"
                                 : "TF_GetInputByName: input '" + std::string(inputName) + "' of " + Name(ctx) +
                                       " is a list of " + std::to_string(count) + " tensors; use TF_InputRange";
    TF_SetStatus(status, TF_INVALID_ARGUMENT, msg.c_str());
    return;
  }
  TF_GetInput(ctx, index, tensor, status);
}

TFP_SHIM_IMPLEMENTED(TF_InputRange);
void TF_InputRange(TF_OpKernelContext* ctx, const char* name, TF_InputRange_Args* args) {
  if (args == nullptr) return;
  args->start = args->stop = -1;
  if (ctx == nullptr || name == nullptr) {
    TF_SetStatus(args->status, TF_INVALID_ARGUMENT, "TF_InputRange: NULL argument");
    return;
  }
  for (size_t k = 0; k < ctx->node->input_arg.size(); ++k) {
    if (ctx->node->input_arg[k] != name) continue;
    if (args->start < 0) args->start = static_cast<int>(k);
    args->stop = static_cast<int>(k) + 1;
  }
  // An arg that is an empty list still exists: find it in the op's inputs.
  bool exists = args->start >= 0;
  for (const auto& a : ctx->op->inputs) exists |= a.name == name;
  if (!exists) {
    std::string msg = "TF_InputRange: " + Name(ctx) + " has no input named '" + name + "'";
    TF_SetStatus(args->status, TF_INVALID_ARGUMENT, msg.c_str());
    return;
  }
  if (args->start < 0) args->start = args->stop = 0;
  TF_SetStatus(args->status, TF_OK, "");
}

TFP_SHIM_IMPLEMENTED(TF_InputDatatype);
TF_DataType TF_InputDatatype(TF_OpKernelContext* ctx, int index) {
  if (ctx == nullptr || index < 0 || static_cast<size_t>(index) >= ctx->node->input_types.size()) {
    ContractNote("TF_InputDatatype: index " + std::to_string(index) + " out of range (TensorFlow aborts)");
    return static_cast<TF_DataType>(0);
  }
  return ctx->node->input_types[static_cast<size_t>(index)];
}

TFP_SHIM_IMPLEMENTED(TF_ExpectedOutputDataType);
TF_DataType TF_ExpectedOutputDataType(TF_OpKernelContext* ctx, int i) {
  if (ctx == nullptr || i < 0 || static_cast<size_t>(i) >= ctx->node->output_types.size()) {
    ContractNote("TF_ExpectedOutputDataType: index " + std::to_string(i) + " out of range (TensorFlow aborts)");
    return static_cast<TF_DataType>(0);
  }
  return ctx->node->output_types[static_cast<size_t>(i)];
}

TFP_SHIM_IMPLEMENTED(TF_IsHostMemoryInput);
bool TF_IsHostMemoryInput(TF_OpKernelContext* ctx, int i, TF_Status* status) {
  if (!ValidInput(ctx, i, status, "TF_IsHostMemoryInput")) return false;
  TF_SetStatus(status, TF_OK, "");
  return InputOnHost(ctx, i);
}

TFP_SHIM_IMPLEMENTED(TF_IsHostMemoryOutput);
bool TF_IsHostMemoryOutput(TF_OpKernelContext* ctx, int i, TF_Status* status) {
  if (!ValidOutput(ctx, i, status, "TF_IsHostMemoryOutput")) return false;
  TF_SetStatus(status, TF_OK, "");
  return OutputOnHost(ctx, i);
}

TFP_SHIM_IMPLEMENTED(TF_IsRefInput);
bool TF_IsRefInput(TF_OpKernelContext* ctx, int i, TF_Status* status) {
  if (!ValidInput(ctx, i, status, "TF_IsRefInput")) return false;
  TF_SetStatus(status, TF_OK, "");
  const std::string& arg = ctx->node->input_arg[static_cast<size_t>(i)];
  for (const auto& a : ctx->op->inputs) {
    if (a.name == arg) return a.is_ref;
  }
  return false;
}

TFP_SHIM_IMPLEMENTED(TF_SetOutput);
void TF_SetOutput(TF_OpKernelContext* ctx, int i, const TF_Tensor* tensor, TF_Status* status) {
  if (!ValidOutput(ctx, i, status, "TF_SetOutput")) return;
  if (tensor == nullptr) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TF_SetOutput: NULL tensor");
    return;
  }
  TF_DataType want = ctx->node->output_types[static_cast<size_t>(i)];
  if (TF_TensorType(tensor) != want) {
    // TensorFlow's executor fails the step with the same complaint.
    std::string msg = "TF_SetOutput: output " + std::to_string(i) + " of " + Name(ctx) + " has type " +
                      tfp_shims::DataTypeName(TF_TensorType(tensor)) + ", the node declares " +
                      tfp_shims::DataTypeName(want);
    TF_SetStatus(status, TF_INVALID_ARGUMENT, msg.c_str());
    return;
  }
  StoreOutput(ctx, i, tfp_shims::ShareTensor(tensor));
  TF_SetStatus(status, TF_OK, "");
}

TFP_SHIM_IMPLEMENTED(TF_GetMutableOutput);
TF_Tensor* TF_GetMutableOutput(TF_OpKernelContext* ctx, int i, TF_Status* status) {
  if (!ValidOutput(ctx, i, status, "TF_GetMutableOutput")) return nullptr;
  TF_Tensor* out = ctx->outputs[static_cast<size_t>(i)];
  if (out == nullptr) {
    std::string msg = "TF_GetMutableOutput: output " + std::to_string(i) + " of " + Name(ctx) + " is not set yet";
    TF_SetStatus(status, TF_FAILED_PRECONDITION, msg.c_str());
    return nullptr;
  }
  TF_SetStatus(status, TF_OK, "");
  return tfp_shims::ShareTensor(out);
}

TFP_SHIM_IMPLEMENTED(TF_AllocateOutput);
TF_Tensor* TF_AllocateOutput(TF_OpKernelContext* context, int index, TF_DataType dtype, const int64_t* dims,
                             int num_dims, size_t len, TF_Status* status) {
  if (!ValidOutput(context, index, status, "TF_AllocateOutput")) return nullptr;
  // TensorFlow allocates the node's output type and ignores `dtype`/`len`;
  // a mismatch is the plugin's bug, worth a note.
  TF_DataType want = context->node->output_types[static_cast<size_t>(index)];
  if (dtype != want) {
    ContractNote("TF_AllocateOutput: " + Name(context) + " output " + std::to_string(index) + " requested " +
                 tfp_shims::DataTypeName(dtype) + " but the node's output type is " +
                 tfp_shims::DataTypeName(want) + " (TensorFlow allocates " + tfp_shims::DataTypeName(want) + ")");
  }
  TF_Tensor* t = tfp_shims::AllocateTensor(*context->device, OutputOnHost(context, index), want, dims, num_dims, status);
  if (t == nullptr) return nullptr;
  if (len != TF_TensorByteSize(t) && TF_TensorElementCount(t) != 0) {
    ContractNote("TF_AllocateOutput: " + Name(context) + " output " + std::to_string(index) + " passed len " +
                 std::to_string(len) + " but the shape needs " + std::to_string(TF_TensorByteSize(t)) +
                 " bytes (TensorFlow ignores len)");
  }
  StoreOutput(context, index, tfp_shims::ShareTensor(t));
  return t;
}

TFP_SHIM_IMPLEMENTED(TF_ForwardInputOrAllocateOutput);
TF_Tensor* TF_ForwardInputOrAllocateOutput(TF_OpKernelContext* context, const int* candidate_input_indices,
                                           int num_candidate_input_indices, int output_index,
                                           const int64_t* output_dims, int output_num_dims, int* forwarded_input,
                                           TF_Status* status) {
  if (forwarded_input != nullptr) *forwarded_input = -1;
  if (!ValidOutput(context, output_index, status, "TF_ForwardInputOrAllocateOutput")) return nullptr;
  TF_DataType want = context->node->output_types[static_cast<size_t>(output_index)];
  int64_t count = 1;
  for (int d = 0; d < output_num_dims; ++d) count *= output_dims != nullptr ? output_dims[d] : 0;
  // An input is reused when nothing else holds its buffer and it has the
  // output's type, element count and memory (host vs device).
  for (int k = 0; k < num_candidate_input_indices && candidate_input_indices != nullptr; ++k) {
    int in = candidate_input_indices[k];
    if (in < 0 || static_cast<size_t>(in) >= context->inputs.size()) continue;
    TF_Tensor* input = context->inputs[static_cast<size_t>(in)];
    if (!tfp_shims::BufferIsUnique(input) || TF_TensorType(input) != want ||
        TF_TensorElementCount(input) != count || InputOnHost(context, in) != OutputOnHost(context, output_index)) {
      continue;
    }
    TF_Tensor* out = tfp_shims::ShareTensor(input);
    TF_SetShape(out, output_dims, output_num_dims);
    StoreOutput(context, output_index, tfp_shims::ShareTensor(out));
    if (forwarded_input != nullptr) *forwarded_input = in;
    TF_SetStatus(status, TF_OK, "");
    return out;
  }
  TF_Tensor* t = tfp_shims::AllocateTensor(*context->device, OutputOnHost(context, output_index), want, output_dims,
                                           output_num_dims, status);
  if (t == nullptr) return nullptr;
  StoreOutput(context, output_index, tfp_shims::ShareTensor(t));
  return t;
}

TFP_SHIM_IMPLEMENTED(TF_AllocateTemp);
TF_Tensor* TF_AllocateTemp(TF_OpKernelContext* context, TF_DataType dtype, const int64_t* dims, int num_dims,
                           TF_AllocatorAttributes* alloc_attrs, TF_Status* status) {
  if (context == nullptr || context->device == nullptr) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TF_AllocateTemp: NULL context");
    return nullptr;
  }
  bool on_host = false;
  if (alloc_attrs != nullptr) {
    // struct_size tells which fields the caller has: on_host needs it all.
    if (alloc_attrs->struct_size < TF_ALLOCATOR_ATTRIBUTES_STRUCT_SIZE) {
      std::string msg = "TF_AllocateTemp: TF_AllocatorAttributes.struct_size is " +
                        std::to_string(alloc_attrs->struct_size) + ", expected at least " +
                        std::to_string(TF_ALLOCATOR_ATTRIBUTES_STRUCT_SIZE) +
                        " (set it to TF_ALLOCATOR_ATTRIBUTES_STRUCT_SIZE)";
      TF_SetStatus(status, TF_INVALID_ARGUMENT, msg.c_str());
      return nullptr;
    }
    on_host = alloc_attrs->on_host != 0;
  }
  return tfp_shims::AllocateTensor(*context->device, on_host, dtype, dims, num_dims, status);
}

TFP_SHIM_IMPLEMENTED(TF_GetStream);
SP_Stream TF_GetStream(TF_OpKernelContext* ctx, TF_Status* status) {
  if (ctx == nullptr || ctx->device == nullptr || ctx->device->stream == nullptr) {
    TF_SetStatus(status, TF_FAILED_PRECONDITION, "Accessing device stream is not supported for a CPU device.");
    return nullptr;
  }
  TF_SetStatus(status, TF_OK, "");
  return ctx->device->stream;
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelContext_Failure);
void TF_OpKernelContext_Failure(TF_OpKernelContext* ctx, TF_Status* status) {
  if (ctx == nullptr || ctx->failure == nullptr || status == nullptr) return;
  TF_SetStatus(ctx->failure, TF_GetCode(status), TF_Message(status));
}

TFP_SHIM_IMPLEMENTED(TF_StepId);
int64_t TF_StepId(TF_OpKernelContext* ctx) { return ctx != nullptr ? ctx->step_id : 0; }

TFP_SHIM_IMPLEMENTED(TF_GetStepId);
int64_t TF_GetStepId(TF_OpKernelContext* ctx) { return ctx != nullptr ? ctx->step_id : 0; }

// Outside loops: the root frame and first iteration, as TensorFlow reports.
TFP_SHIM_IMPLEMENTED(TF_GetFrameId);
uint64_t TF_GetFrameId(TF_OpKernelContext*) { return 0; }

TFP_SHIM_IMPLEMENTED(TF_GetIterId);
int64_t TF_GetIterId(TF_OpKernelContext*) { return 0; }

TFP_SHIM_IMPLEMENTED(TF_GetGraphDefVersion);
int TF_GetGraphDefVersion(TF_OpKernelContext* ctx) { return ctx != nullptr ? ctx->graph_def_version : 0; }

TFP_SHIM_IMPLEMENTED(TF_GetDeviceId);
int TF_GetDeviceId(TF_OpKernelContext* ctx) {
  return ctx != nullptr && ctx->device != nullptr ? ctx->device->device_id : -1;
}

TFP_SHIM_IMPLEMENTED(TF_GetDeviceName);
TF_StringView TF_GetDeviceName(TF_OpKernelContext* ctx) {
  if (ctx == nullptr || ctx->device == nullptr) return TF_StringView{"", 0};
  return View(ctx->device->device_name);
}

TFP_SHIM_IMPLEMENTED(TF_GetOpKernelName);
TF_StringView TF_GetOpKernelName(TF_OpKernelContext* ctx) {
  return ctx != nullptr ? View(ctx->node_name) : TF_StringView{"", 0};
}

TFP_SHIM_IMPLEMENTED(TF_GetResourceMgrDefaultContainerName);
TF_StringView TF_GetResourceMgrDefaultContainerName(TF_OpKernelContext*) {
  return TF_StringView{"localhost", 9};  // TensorFlow's default container
}

TFP_SHIM_IMPLEMENTED(TF_GetOpKernelRequestedInput);
TF_StringView TF_GetOpKernelRequestedInput(TF_OpKernelContext* ctx, size_t index) {
  if (ctx == nullptr || index >= ctx->input_names.size()) return TF_StringView{"", 0};
  return View(ctx->input_names[index]);
}

TFP_SHIM_IMPLEMENTED(TF_IncNumDeferredOps);
void TF_IncNumDeferredOps(TF_OpKernelContext* context) {
  if (context != nullptr) context->deferred_ops.fetch_add(1);
}

TFP_SHIM_IMPLEMENTED(TF_DecNumDeferredOps);
void TF_DecNumDeferredOps(TF_OpKernelContext* context) {
  if (context != nullptr && context->deferred_ops.fetch_sub(1) <= 0) {
    ContractNote("TF_DecNumDeferredOps: more decrements than increments");
  }
}

TFP_SHIM_IMPLEMENTED(TF_RunAsyncOpKernelDoneCallback);
void TF_RunAsyncOpKernelDoneCallback(TF_AsyncOpKernelDoneCallback* done) {
  if (done == nullptr) return;
  std::lock_guard<std::mutex> lock(done->mu);
  if (++done->calls > 1) ContractNote("TF_RunAsyncOpKernelDoneCallback: done callback run more than once");
  done->cv.notify_all();
}

}  // extern "C"
