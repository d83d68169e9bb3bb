// SPDX-License-Identifier: Apache-2.0
// tfp_op: one node run on a device the way TensorFlow's executor runs it
// (host.h): resolve attrs and types against the op definition, select and
// create the kernel, stage inputs in device memory (host-memory args stay on
// the host), compute on the device's stream, wait, bring outputs back.
#include <atomic>
#include <cstring>

#include "host_internal.h"
#include "host_variable.h"
#include "kernel_runtime.h"
#include "op_def.h"
#include "shim_internal.h"

using tfp_shims::AttrValue;

struct tfp_op {
  tfp_host* host = nullptr;
  const tfp_shims::OpDef* op = nullptr;
  int ordinal = 0;
  std::string node_name;
  tfp_shims::AttrMap attrs;
  std::vector<TF_Tensor*> inputs;  // host copies, owned

  // The kernel, created on first run and kept while attrs and types hold.
  bool prepared = false;
  tfp_shims::NodeSignature node;
  tfp_shims::KernelDef kernel;
  tfp_shims::DeviceMemory memory;  // the binding's arg
  tfp_shims::DeviceBinding binding;
  void* kernel_state = nullptr;
  std::string kernel_description;

  std::vector<TF_Tensor*> outputs;  // host copies of the last run, owned
};

namespace {

using tfp_shims::Fail;

void DeleteAll(std::vector<TF_Tensor*>* v) {
  for (TF_Tensor* t : *v) TF_DeleteTensor(t);
  v->clear();
}

void DestroyKernel(tfp_op* op) {
  if (op->prepared && op->kernel.destroy != nullptr) op->kernel.destroy(op->kernel_state);
  op->kernel_state = nullptr;
  op->prepared = false;
}

}  // namespace

namespace tfp_shims {

void* AllocateDeviceMemory(void* device_memory, size_t bytes) {
  auto* m = static_cast<DeviceMemory*>(device_memory);
  TF_Status* s = TF_NewStatus();
  void* p = m->host->platform->Allocate(m->host->platform->device(m->ordinal), bytes, s);
  TF_DeleteStatus(s);
  return p;
}

void FreeDeviceMemory(void* device_memory, void* ptr, size_t bytes) {
  auto* m = static_cast<DeviceMemory*>(device_memory);
  m->host->platform->Deallocate(m->host->platform->device(m->ordinal), ptr, bytes);
}

TF_Tensor* CopyToDevice(const DeviceBinding& binding, tfp_host* host, int ordinal, const TF_Tensor* in,
                        TF_Status* status) {
  const std::vector<int64_t> dims = Dims(in);
  TF_Tensor* t = AllocateTensor(binding, false, TF_TensorType(in), dims.data(), static_cast<int>(dims.size()), status);
  if (t == nullptr) return nullptr;
  if (TF_TensorByteSize(in) > 0) {
    host->platform->MemcpyHtoD(host->platform->device(ordinal), TF_TensorData(t), TF_TensorData(in),
                               TF_TensorByteSize(in), status);
    if (TF_GetCode(status) != TF_OK) {
      TF_DeleteTensor(t);
      return nullptr;
    }
  }
  return t;
}

TF_Tensor* CopyToHost(tfp_host* host, int ordinal, const TF_Tensor* t, bool on_host, const std::string& what,
                      TF_Status* status) {
  const std::vector<int64_t> dims = Dims(t);
  const size_t bytes = TF_TensorByteSize(t);
  TF_Tensor* copy = TF_AllocateTensor(TF_TensorType(t), dims.data(), static_cast<int>(dims.size()), bytes);
  if (copy == nullptr) {
    Fail(status, TF_RESOURCE_EXHAUSTED, "cannot allocate a host copy of " + what);
    return nullptr;
  }
  if (bytes == 0) return copy;
  if (on_host) {
    std::memcpy(TF_TensorData(copy), TF_TensorData(t), bytes);
  } else {
    host->platform->MemcpyDtoH(host->platform->device(ordinal), TF_TensorData(copy), TF_TensorData(t), bytes,
                               status);
    if (TF_GetCode(status) != TF_OK) {
      TF_DeleteTensor(copy);
      return nullptr;
    }
  }
  return copy;
}

}  // namespace tfp_shims

namespace {

// Selects and creates the kernel for the current attrs and input types.
bool Prepare(tfp_op* op, TF_Status* status) {
  std::vector<TF_DataType> types;
  for (TF_Tensor* t : op->inputs) types.push_back(TF_TensorType(t));
  tfp_shims::NodeSignature node;
  if (!tfp_shims::ResolveNode(*op->op, op->attrs, types, &node, status)) return false;
  if (op->prepared && node.attrs == op->node.attrs && node.input_types == op->node.input_types) return true;
  DestroyKernel(op);
  op->node = std::move(node);
  const std::string& type = op->host->platform->type();
  if (!tfp_shims::SelectKernel(op->op->name, type, op->node.attrs, &op->kernel, status)) return false;
  auto* dev = op->host->platform->device(op->ordinal);
  op->memory = tfp_shims::DeviceMemory{op->host, op->ordinal};
  op->binding = tfp_shims::DeviceBinding{type, dev->name, op->ordinal, dev->stream,
                                         tfp_shims::AllocateDeviceMemory, tfp_shims::FreeDeviceMemory,
                                         &op->memory};
  TF_OpKernelConstruction ctx;
  ctx.op = op->op;
  ctx.node = &op->node;
  ctx.kernel = &op->kernel;
  ctx.device = &op->binding;
  ctx.node_name = op->node_name;
  ctx.failure = TF_NewStatus();
  op->kernel_state = op->kernel.create != nullptr ? op->kernel.create(&ctx) : nullptr;
  bool ok = TF_GetCode(ctx.failure) == TF_OK;
  if (!ok) {
    Fail(status, TF_GetCode(ctx.failure),
         "kernel construction of " + op->kernel.Describe() + " failed: " + TF_Message(ctx.failure));
    // TensorFlow deletes the kernel even when construction failed, NULL state included.
    if (op->kernel.destroy != nullptr) op->kernel.destroy(op->kernel_state);
    op->kernel_state = nullptr;
  }
  TF_DeleteStatus(ctx.failure);
  op->prepared = ok;
  op->kernel_description = op->kernel.Describe();
  return ok;
}

// Input `i` where the kernel wants it: shared host tensor, or a device copy.
TF_Tensor* StageInput(tfp_op* op, size_t i, TF_Status* status) {
  TF_Tensor* in = op->inputs[i];
  if (op->kernel.InHostMemory(op->node.input_arg[i], TF_TensorType(in))) return tfp_shims::ShareTensor(in);
  return tfp_shims::CopyToDevice(op->binding, op->host, op->ordinal, in, status);
}

// Output `i` on the host.
TF_Tensor* FetchOutput(tfp_op* op, size_t i, TF_Tensor* out, TF_Status* status) {
  return tfp_shims::CopyToHost(op->host, op->ordinal, out,
                               op->kernel.InHostMemory(op->node.output_arg[i], TF_TensorType(out)),
                               "output " + std::to_string(i), status);
}

// The kernel's output against what the op's shape function promised: TF
// does not check this at run time, but graphs built on the promise break.
void CheckInferred(tfp_op* op, size_t i, const tfp_shims::Shape& want, const TF_Tensor* got) {
  if (want.unknown_rank) return;
  bool ok = want.dims.size() == static_cast<size_t>(TF_NumDims(got));
  for (size_t d = 0; ok && d < want.dims.size(); ++d) {
    ok = want.dims[d] < 0 || want.dims[d] == TF_Dim(got, static_cast<int>(d));
  }
  if (ok) return;
  std::string w = "[";
  for (size_t d = 0; d < want.dims.size(); ++d) w += (d ? ", " : "") + (want.dims[d] < 0 ? std::string("?") : std::to_string(want.dims[d]));
  std::string g = "[";
  for (int d = 0; d < TF_NumDims(got); ++d) g += (d ? ", " : "") + std::to_string(TF_Dim(got, d));
  tfp_shims::ContractNote(op->op->name + " output " + std::to_string(i) + " has shape " + g + "], but the op's " +
                          "shape function inferred " + w + "]");
}

void Compute(tfp_op* op, TF_OpKernelContext* ctx) {
  if (op->kernel.compute != nullptr) {
    op->kernel.compute(op->kernel_state, ctx);
    return;
  }
  TF_AsyncOpKernelDoneCallback done;
  op->kernel.compute_async(op->kernel_state, ctx, &done);
  std::unique_lock<std::mutex> lock(done.mu);
  done.cv.wait(lock, [&] { return done.calls > 0; });
}

// The typed setters: an attr of `kind`, filled by `fill`.
template <typename Fill>
void SetAttr(tfp_op* op, const char* name, AttrValue::Kind kind, Fill fill) {
  if (op == nullptr || name == nullptr) return;
  AttrValue v;
  v.kind = kind;
  fill(&v);
  op->attrs[name] = v;
}

}  // namespace

extern "C" {

tfp_op* tfp_op_new(tfp_host* host, const char* op_name, int ordinal, TF_Status* status) {
  if (host == nullptr || op_name == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "tfp_op_new: NULL argument");
    return nullptr;
  }
  if (host->platform == nullptr || host->platform->device(ordinal) == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT,
         "tfp_op_new: no device " + std::to_string(ordinal) +
             (host->platform ? "" : " (the plugin registered no device: no SE_InitPlugin)"));
    return nullptr;
  }
  const tfp_shims::OpDef* def = tfp_shims::LookupOp(op_name);
  if (def == nullptr) {
    Fail(status, TF_NOT_FOUND,
         std::string("Op type not registered '") + op_name + "': neither TensorFlow " +
             tfp_shims::BuiltinOpsRelease() + " nor the plugin defines it");
    return nullptr;
  }
  auto* op = new tfp_op();
  op->host = host;
  op->op = def;
  op->ordinal = ordinal;
  op->node_name = def->name;
  TF_SetStatus(status, TF_OK, "");
  return op;
}

void tfp_op_delete(tfp_op* op) {
  if (op == nullptr) return;
  DestroyKernel(op);
  DeleteAll(&op->inputs);
  DeleteAll(&op->outputs);
  delete op;
}

void tfp_op_set_attr(tfp_op* op, const char* name, const char* value, TF_Status* status) {
  if (op == nullptr || name == nullptr || value == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "tfp_op_set_attr: NULL argument");
    return;
  }
  const tfp_shims::AttrDef* def = op->op->FindAttr(name);
  AttrValue v;
  std::string error;
  if (def == nullptr && name[0] == '_') {  // internal attrs, e.g. "_kernel" (a kernel label)
    v.kind = AttrValue::Kind::kString;
    v.s = value;
  } else if (def == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, std::string("op ") + op->op->name + " has no attr '" + name + "'; its signature: " +
                                          op->op->Signature());
    return;
  } else if (!tfp_shims::ParseAttrValue(value, def->kind, def->is_list, &v, &error)) {
    Fail(status, TF_INVALID_ARGUMENT,
         std::string("attr '") + name + "' of " + op->op->name + " (" + tfp_shims::AttrTypeName(def->kind, def->is_list) +
             "): " + error);
    return;
  }
  op->attrs[name] = v;
  TF_SetStatus(status, TF_OK, "");
}

void tfp_op_set_attr_int(tfp_op* op, const char* name, int64_t value) {
  SetAttr(op, name, AttrValue::Kind::kInt, [&](AttrValue* v) { v->i = value; });
}

void tfp_op_set_attr_float(tfp_op* op, const char* name, float value) {
  SetAttr(op, name, AttrValue::Kind::kFloat, [&](AttrValue* v) { v->f = value; });
}

void tfp_op_set_attr_bool(tfp_op* op, const char* name, int value) {
  SetAttr(op, name, AttrValue::Kind::kBool, [&](AttrValue* v) { v->b = value != 0; });
}

void tfp_op_set_attr_type(tfp_op* op, const char* name, TF_DataType value) {
  SetAttr(op, name, AttrValue::Kind::kType, [&](AttrValue* v) { v->type = value; });
}

void tfp_op_set_attr_string(tfp_op* op, const char* name, const char* value) {
  if (value == nullptr) return;
  SetAttr(op, name, AttrValue::Kind::kString, [&](AttrValue* v) { v->s = value; });
}

void tfp_op_set_attr_int_list(tfp_op* op, const char* name, const int64_t* values, int n) {
  if (n < 0 || (n > 0 && values == nullptr)) return;
  SetAttr(op, name, AttrValue::Kind::kInt, [&](AttrValue* v) {
    v->is_list = true;
    v->list_i.assign(values, values + n);
  });
}

void tfp_op_add_input(tfp_op* op, const TF_Tensor* host_tensor, TF_Status* status) {
  if (op == nullptr || host_tensor == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "tfp_op_add_input: NULL argument");
    return;
  }
  // A private copy: the kernel may write to (forward) its inputs.
  const std::vector<int64_t> dims = tfp_shims::Dims(host_tensor);
  size_t bytes = TF_TensorByteSize(host_tensor);
  TF_Tensor* copy = TF_AllocateTensor(TF_TensorType(host_tensor), dims.data(), static_cast<int>(dims.size()), bytes);
  if (copy == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "tfp_op_add_input: cannot copy the tensor (unsupported dtype or shape)");
    return;
  }
  if (bytes > 0) std::memcpy(TF_TensorData(copy), TF_TensorData(host_tensor), bytes);
  op->inputs.push_back(copy);
  TF_SetStatus(status, TF_OK, "");
}

void tfp_op_add_variable(tfp_op* op, tfp_variable* variable, TF_Status* status) {
  if (op == nullptr || variable == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "tfp_op_add_variable: NULL argument");
    return;
  }
  if (variable->memory.host != op->host || variable->memory.ordinal != op->ordinal) {
    Fail(status, TF_INVALID_ARGUMENT, "tfp_op_add_variable: the variable is on another device");
    return;
  }
  TF_Tensor* handle = tfp_shims::NewVariableHandle(variable);
  if (handle == nullptr) {
    Fail(status, TF_RESOURCE_EXHAUSTED, "tfp_op_add_variable: no host memory");
    return;
  }
  op->inputs.push_back(handle);
  TF_SetStatus(status, TF_OK, "");
}

void tfp_op_clear_inputs(tfp_op* op) {
  if (op != nullptr) DeleteAll(&op->inputs);
}

void tfp_op_run(tfp_op* op, TF_Status* status) {
  if (op == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "tfp_op_run: NULL op");
    return;
  }
  DeleteAll(&op->outputs);
  if (!Prepare(op, status)) return;
  // Shape inference, as TensorFlow runs it when the node is added to a graph:
  // a plugin op's shape function failing is the node's failure.
  std::vector<tfp_shims::Shape> inferred;
  if (op->op->shape_fn != nullptr) {
    std::vector<tfp_shims::Shape> in_shapes;
    for (TF_Tensor* t : op->inputs) {
      tfp_shims::Shape shape;
      for (int d = 0; d < TF_NumDims(t); ++d) shape.dims.push_back(TF_Dim(t, d));
      in_shapes.push_back(shape);
    }
    if (!tfp_shims::InferShapes(*op->op, op->node, in_shapes, &inferred, status)) return;
  }

  TF_OpKernelContext ctx;
  ctx.op = op->op;
  ctx.node = &op->node;
  ctx.kernel = &op->kernel;
  ctx.device = &op->binding;
  ctx.node_name = op->node_name;
  ctx.outputs.assign(op->node.output_types.size(), nullptr);
  ctx.failure = TF_NewStatus();
  ctx.graph_def_version = 0;
  static std::atomic<int64_t> next_step{1};
  ctx.step_id = next_step.fetch_add(1);
  for (size_t i = 0; i < op->inputs.size(); ++i) {
    ctx.input_names.push_back(op->node.input_arg[i] + ":" + std::to_string(i));
    TF_Tensor* staged = StageInput(op, i, status);
    if (staged == nullptr) break;
    ctx.inputs.push_back(staged);
  }
  bool ok = ctx.inputs.size() == op->inputs.size();
  if (ok) {
    Compute(op, &ctx);
    // Work the kernel enqueued must finish before outputs are read or any
    // buffer is freed, whether or not the kernel failed.
    TF_Status* sync = TF_NewStatus();
    op->host->platform->SyncStream(op->host->platform->device(op->ordinal), sync);
    if (TF_GetCode(ctx.failure) != TF_OK) {
      Fail(status, TF_GetCode(ctx.failure), TF_Message(ctx.failure));  // the kernel's own status
      ok = false;
    } else if (TF_GetCode(sync) != TF_OK) {
      Fail(status, TF_GetCode(sync), TF_Message(sync));
      ok = false;
    }
    TF_DeleteStatus(sync);
  }
  for (size_t i = 0; ok && i < ctx.outputs.size(); ++i) {
    if (ctx.outputs[i] == nullptr) {
      Fail(status, TF_INTERNAL,
           "kernel " + op->kernel_description + " did not set output " + std::to_string(i) + " (" +
               op->node.output_arg[i] + ")");
      ok = false;
      break;
    }
    if (i < inferred.size()) CheckInferred(op, i, inferred[i], ctx.outputs[i]);
    TF_Tensor* host = FetchOutput(op, i, ctx.outputs[i], status);
    if (host == nullptr) {
      ok = false;
      break;
    }
    op->outputs.push_back(host);
  }
  if (!ok) DeleteAll(&op->outputs);
  else TF_SetStatus(status, TF_OK, "");
  DeleteAll(&ctx.inputs);
  DeleteAll(&ctx.outputs);
  TF_DeleteStatus(ctx.failure);
}

int tfp_op_num_outputs(const tfp_op* op) { return op ? static_cast<int>(op->outputs.size()) : 0; }

const TF_Tensor* tfp_op_output(const tfp_op* op, int i) {
  if (op == nullptr || i < 0 || static_cast<size_t>(i) >= op->outputs.size()) return nullptr;
  return op->outputs[static_cast<size_t>(i)];
}

const char* tfp_op_kernel(const tfp_op* op) {
  return op && op->prepared ? op->kernel_description.c_str() : nullptr;
}

}  // extern "C"
