// SPDX-License-Identifier: Apache-2.0
#include "kernels/vacc_kernel.h"

#include <atomic>
#include <cstdio>
#include <memory>

#include "profiler/vacc_profiler_session.h"
#include "profiler/vacc_protobuf_wire.h"
#include "tensorflow/c/tf_tensor.h"
#include "tfplugin/abi_release.h"

// TF_OpKernelConstruction_GetNodeDef and tf_buffer.h: TF 2.11 and later.
#define VACC_HAVE_NODE_DEF (TFPLUGIN_TF_MAJOR > 2 || TFPLUGIN_TF_MINOR >= 11)
#if VACC_HAVE_NODE_DEF
#include "tensorflow/c/tf_buffer.h"
// Optional imports: only the profiler's op names use them, and 2.7-2.10 do
// not export them from a library a plugin can link (TF_NewBuffer's family
// lives in a Python extension module there; GetNodeDef is absent). Weak, they
// are NULL where missing instead of failing the RTLD_NOW load, and vacc's
// release range stays 2.7-2.21 (validate_plugin: TFP-SYM-WEAK-IMPORT notes
// them). Every use checks the address first.
#pragma weak TF_OpKernelConstruction_GetNodeDef
#pragma weak TF_DeleteBuffer
#endif

namespace vacc {

const char kKernelDeviceType[] = "VACC";  // TODO(vendor): your platform's type

namespace {

// A TF_Status we own (TensorFlow's are passed in; these are for our calls).
struct OwnedStatus {
  TF_Status* s = TF_NewStatus();
  ~OwnedStatus() { TF_DeleteStatus(s); }
  bool ok() const { return TF_GetCode(s) == TF_OK; }
  std::string message() const { return TF_Message(s); }
};

}  // namespace

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeText(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string DataTypeName(TF_DataType type) {
  switch (type) {
    case TF_FLOAT: return "float";
    case TF_DOUBLE: return "double";
    case TF_HALF: return "half";
    case TF_BFLOAT16: return "bfloat16";
    case TF_INT32: return "int32";
    case TF_INT64: return "int64";
    case TF_BOOL: return "bool";
    case TF_UINT8: return "uint8";
    case TF_INT8: return "int8";
    default: return "dtype " + std::to_string(static_cast<int>(type));
  }
}

// ---- KernelConstruction

void KernelConstruction::Fail(TF_Code code, const std::string& message) {
  if (!ok_) return;  // keep the first error
  ok_ = false;
  OwnedStatus s;
  TF_SetStatus(s.s, code, message.c_str());
  TF_OpKernelConstruction_Failure(ctx_, s.s);
}

#define VACC_GET_ATTR(call, what)                                                  \
  OwnedStatus s;                                                                   \
  call;                                                                            \
  if (!s.ok()) {                                                                   \
    Fail(TF_GetCode(s.s), std::string("attr '") + name + "' (" what "): " + s.message()); \
    return false;                                                                  \
  }

bool KernelConstruction::GetBool(const char* name, bool* out) {
  unsigned char v = 0;
  VACC_GET_ATTR(TF_OpKernelConstruction_GetAttrBool(ctx_, name, &v, s.s), "bool");
  *out = v != 0;
  return true;
}

bool KernelConstruction::GetInt(const char* name, int64_t* out) {
  VACC_GET_ATTR(TF_OpKernelConstruction_GetAttrInt64(ctx_, name, out, s.s), "int");
  return true;
}

bool KernelConstruction::GetFloat(const char* name, float* out) {
  VACC_GET_ATTR(TF_OpKernelConstruction_GetAttrFloat(ctx_, name, out, s.s), "float");
  return true;
}

bool KernelConstruction::GetType(const char* name, TF_DataType* out) {
  VACC_GET_ATTR(TF_OpKernelConstruction_GetAttrType(ctx_, name, out, s.s), "type");
  return true;
}

bool KernelConstruction::GetString(const char* name, std::string* out) {
  int32_t list_size = 0, total = 0;
  {
    VACC_GET_ATTR(TF_OpKernelConstruction_GetAttrSize(ctx_, name, &list_size, &total, s.s),
                  "string");
  }
  std::string value(static_cast<size_t>(total), '\0');
  VACC_GET_ATTR(TF_OpKernelConstruction_GetAttrString(ctx_, name, &value[0], value.size(), s.s),
                "string");
  *out = value;
  return true;
}

bool KernelConstruction::GetIntList(const char* name, std::vector<int64_t>* out) {
  int32_t list_size = 0, total = 0;
  {
    VACC_GET_ATTR(TF_OpKernelConstruction_GetAttrSize(ctx_, name, &list_size, &total, s.s),
                  "list(int)");
  }
  out->assign(static_cast<size_t>(list_size < 0 ? 0 : list_size), 0);
  if (out->empty()) return true;
  VACC_GET_ATTR(TF_OpKernelConstruction_GetAttrInt64List(ctx_, name, out->data(), list_size, s.s),
                "list(int)");
  return true;
}

bool KernelConstruction::HasAttr(const char* name) {
  OwnedStatus s;
  return TF_OpKernelConstruction_HasAttr(ctx_, name, s.s) && s.ok();
}

#undef VACC_GET_ATTR

KernelLabel KernelConstruction::Label() {
  KernelLabel label;
  const TF_StringView name = TF_OpKernelConstruction_GetName(ctx_);
  label.node.assign(name.data != nullptr ? name.data : "", name.data != nullptr ? name.len : 0);
#if VACC_HAVE_NODE_DEF
  // The op type is field 2 ("op") of the serialized NodeDef (field 1: name).
  OwnedStatus s;
  const bool have = &TF_OpKernelConstruction_GetNodeDef != nullptr && &TF_DeleteBuffer != nullptr;
  TF_Buffer* node_def = have ? TF_OpKernelConstruction_GetNodeDef(ctx_, s.s) : nullptr;
  if (s.ok() && node_def != nullptr && node_def->data != nullptr) {
    label.op = FindStringField(
        std::string_view(static_cast<const char*>(node_def->data), node_def->length), 2);
  }
  if (node_def != nullptr) TF_DeleteBuffer(node_def);
#endif
  if (label.op.empty()) label.op = label.node;
  return label;
}

// ---- KernelContext

KernelContext::~KernelContext() {
  for (TF_Tensor* t : held_) TF_DeleteTensor(t);
}

TF_Tensor* KernelContext::Keep(TF_Tensor* t) {
  if (t != nullptr) held_.push_back(t);
  return t;
}

bool KernelContext::Fail(TF_Code code, const std::string& message) {
  if (!ok_) return false;
  ok_ = false;
  OwnedStatus s;
  TF_SetStatus(s.s, code, message.c_str());
  TF_OpKernelContext_Failure(ctx_, s.s);
  return false;
}

int KernelContext::num_inputs() const { return TF_NumInputs(ctx_); }
int KernelContext::num_outputs() const { return TF_NumOutputs(ctx_); }

namespace {

Tensor View(TF_Tensor* t) {
  Tensor v;
  v.dtype = TF_TensorType(t);
  for (int d = 0; d < TF_NumDims(t); ++d) v.shape.push_back(TF_Dim(t, d));
  v.data = TF_TensorData(t);
  return v;
}

}  // namespace

TF_Tensor* KernelContext::InputHandle(int i) {
  const bool remembered = i >= 0 && i < kRememberedInputs;
  if (remembered && inputs_[i] != nullptr) return inputs_[i];
  OwnedStatus s;
  TF_Tensor* t = nullptr;
  TF_GetInput(ctx_, i, &t, s.s);
  if (!s.ok()) {
    Fail(TF_GetCode(s.s), "input " + std::to_string(i) + ": " + s.message());
    return nullptr;
  }
  Keep(t);
  if (remembered) inputs_[i] = t;
  return t;
}

Tensor KernelContext::Hold(TF_Tensor* t) { return View(Keep(t)); }

bool KernelContext::Input(int i, Tensor* out) {
  TF_Tensor* t = InputHandle(i);
  if (t == nullptr) return false;
  *out = View(t);
  return true;
}

bool KernelContext::AllocateOutput(int i, TF_DataType dtype, const Shape& shape, Tensor* out) {
  OwnedStatus s;
  const size_t bytes = static_cast<size_t>(NumElements(shape)) * TF_DataTypeSize(dtype);
  TF_Tensor* t = Keep(TF_AllocateOutput(ctx_, i, dtype, shape.data(),
                                        static_cast<int>(shape.size()), bytes, s.s));
  if (!s.ok() || t == nullptr) {
    return Fail(s.ok() ? TF_RESOURCE_EXHAUSTED : TF_GetCode(s.s),
                "allocating output " + std::to_string(i) + " " + DataTypeName(dtype) +
                    ShapeText(shape) + ": " + (s.ok() ? "no tensor returned" : s.message()));
  }
  *out = View(t);
  return true;
}

bool KernelContext::ForwardInput(int input, int output, const Shape& shape) {
  TF_Tensor* in = InputHandle(input);
  if (in == nullptr) return false;
  OwnedStatus s;
  // A scalar placeholder that takes over the input's buffer with the new
  // shape (a zero-byte allocation may come back NULL).
  TF_Tensor* out = Keep(TF_AllocateTensor(TF_TensorType(in), nullptr, 0,
                                          TF_DataTypeSize(TF_TensorType(in))));
  TF_TensorBitcastFrom(in, TF_TensorType(in), out, shape.data(), static_cast<int>(shape.size()),
                       s.s);
  if (s.ok()) TF_SetOutput(ctx_, output, out, s.s);
  if (!s.ok()) {
    return Fail(TF_GetCode(s.s), "forwarding input " + std::to_string(input) + " as shape " +
                                     ShapeText(shape) + ": " + s.message());
  }
  return true;
}

bool KernelContext::ForwardOrAllocate(std::initializer_list<int> candidates, int output,
                                      TF_DataType dtype, const Shape& shape, Tensor* out) {
  OwnedStatus s;
  std::vector<int> inputs(candidates);
  int forwarded = -1;
  TF_Tensor* t = Keep(TF_ForwardInputOrAllocateOutput(
      ctx_, inputs.data(), static_cast<int>(inputs.size()), output, shape.data(),
      static_cast<int>(shape.size()), &forwarded, s.s));
  if (!s.ok() || t == nullptr) {
    return Fail(s.ok() ? TF_RESOURCE_EXHAUSTED : TF_GetCode(s.s),
                "allocating output " + std::to_string(output) + " " + DataTypeName(dtype) +
                    ShapeText(shape) + ": " + (s.ok() ? "no tensor returned" : s.message()));
  }
  *out = View(t);
  return true;
}

bool KernelContext::HostInts(int i, std::vector<int64_t>* out) {
  Tensor t;
  if (!Input(i, &t)) return false;
  if (t.rank() > 1) {
    return Fail(TF_INVALID_ARGUMENT, "input " + std::to_string(i) + " must be a scalar or vector, got shape " +
                                         ShapeText(t.shape));
  }
  out->clear();
  const int64_t n = t.num_elements();
  if (t.dtype == TF_INT32) {
    for (int64_t k = 0; k < n; ++k) out->push_back(t.as<int32_t>()[k]);
  } else if (t.dtype == TF_INT64) {
    for (int64_t k = 0; k < n; ++k) out->push_back(t.as<int64_t>()[k]);
  } else {
    return Fail(TF_INVALID_ARGUMENT, "input " + std::to_string(i) + " must be int32 or int64, got " +
                                         DataTypeName(t.dtype));
  }
  return true;
}

Stream* KernelContext::stream() {
  if (stream_ == nullptr) {
    OwnedStatus s;
    SP_Stream sp = TF_GetStream(ctx_, s.s);
    if (!s.ok() || sp == nullptr) {
      Fail(TF_INTERNAL, std::string("TF_GetStream: ") + (s.ok() ? "no stream" : s.message()));
      return nullptr;
    }
    stream_ = reinterpret_cast<Stream*>(sp);  // an SP_Stream is our Stream*
  }
  return stream_;
}

namespace {
std::atomic<bool> g_synchronous{true};
}  // namespace

void SetKernelsSynchronous(bool synchronous) { g_synchronous = synchronous; }
bool KernelsSynchronous() { return g_synchronous.load(std::memory_order_relaxed); }

void KernelContext::Enqueue(Work work) {
  Stream* s = stream();
  if (s == nullptr) return;
  ComputeUnits* units = &s->units();
  Stream::Work run;
  if (!profiler::ProfilingActive()) {  // the only cost of the profiler when unused
    run = [work = std::move(work), units] { return work(*units); };
  } else {
    static const KernelLabel kUnknown{"(unknown)", "(unknown)"};
    const KernelLabel& label = label_ != nullptr ? *label_ : kUnknown;
    const profiler::OpTag tag = profiler::InternOp(label.node, label.op);
    run = [work = std::move(work), units, tag, s] {
      const profiler::Clock::time_point start = profiler::Clock::now();
      Status status = work(*units);
      profiler::Record(tag, s->device_ordinal(), s, start, profiler::Clock::now());
      return status;
    };
  }
  if (!KernelsSynchronous()) {
    s->Enqueue(std::move(run));
    return;
  }
  // The stream's status: this work's error, or an earlier one's (sticky).
  const Status status = s->RunAndWait(std::move(run));
  if (!status.ok()) Fail(status.code, status.message);
}

// ---- Registration

void RegisterKernelFns(const char* op, const KernelOptions& options, CreateFn create,
                       ComputeFn compute, DeleteFn destroy) {
  std::vector<TF_DataType> types = options.types;
  const bool constrained = !types.empty();
  if (!constrained) types.push_back(TF_FLOAT);  // one unconstrained registration
  for (TF_DataType type : types) {
    OwnedStatus s;
    TF_KernelBuilder* builder = TF_NewKernelBuilder(op, kKernelDeviceType, create, compute, destroy);
    if (constrained) TF_KernelBuilder_TypeConstraint(builder, options.type_attr, type, s.s);
    for (const auto& [attr, fixed] : options.constraints) {
      if (s.ok()) TF_KernelBuilder_TypeConstraint(builder, attr, fixed, s.s);
    }
    for (const char* arg : options.host_memory) TF_KernelBuilder_HostMemory(builder, arg);
    const std::string name = std::string("vacc_") + op + (constrained ? "_" + DataTypeName(type) : "");
    if (s.ok()) {
      TF_RegisterKernelBuilder(name.c_str(), builder, s.s);  // takes the builder
    } else {
      TF_DeleteKernelBuilder(builder);
    }
    if (!s.ok()) std::fprintf(stderr, "vacc: cannot register kernel %s: %s\n", name.c_str(), s.message().c_str());
  }
}

}  // namespace vacc
