// SPDX-License-Identifier: Apache-2.0
// TF_OpKernelConstruction: what a kernel's create function may ask about its
// node. Attr getters follow TensorFlow: a missing attr is NOT_FOUND, a value
// of another type INVALID_ARGUMENT, list getters copy at most `max_vals`
// values, GetAttrString copies at most `max_length` bytes and does not
// NUL-terminate (the length comes from TF_OpKernelConstruction_GetAttrSize).
#include <climits>
#include <cstring>
#include <string>

#include "shim_internal.h"
// After shim_internal.h (it neutralises the "unavailable" markers):
#include "kernel_runtime.h"
#include "legacy_declarations.h"
#include "tensorflow/c/tf_buffer.h"

namespace {

using tfp_shims::AttrValue;
using Kind = tfp_shims::AttrValue::Kind;

using tfp_shims::Fail;

// The attr `name` if it exists and has the wanted type; else NULL, status set.
const AttrValue* Attr(TF_OpKernelConstruction* ctx, const char* name, Kind kind, bool is_list,
                      TF_Status* status) {
  if (ctx == nullptr || ctx->node == nullptr || name == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "NULL kernel construction context or attr name");
    return nullptr;
  }
  auto it = ctx->node->attrs.find(name);
  if (it == ctx->node->attrs.end()) {
    Fail(status, TF_NOT_FOUND, "No attr named '" + std::string(name) + "' in NodeDef " + ctx->node_name);
    return nullptr;
  }
  const AttrValue& v = it->second;
  if (v.kind != kind || v.is_list != is_list) {
    Fail(status, TF_INVALID_ARGUMENT,
         "Attr '" + std::string(name) + "' of " + ctx->node_name + " has type " +
             tfp_shims::AttrTypeName(v.kind, v.is_list) + ", not " + tfp_shims::AttrTypeName(kind, is_list));
    return nullptr;
  }
  TF_SetStatus(status, TF_OK, "");
  return &v;
}

template <typename Out, typename In>
void CopyList(const std::vector<In>& in, Out* vals, int max_vals) {
  if (vals == nullptr) return;
  size_t n = std::min(in.size(), static_cast<size_t>(std::max(max_vals, 0)));
  for (size_t i = 0; i < n; ++i) vals[i] = static_cast<Out>(in[i]);
}

TF_Tensor* TensorFromValue(const tfp_shims::TensorValue& t, TF_Status* status) {
  TF_Tensor* out = TF_AllocateTensor(t.dtype, t.dims.data(), static_cast<int>(t.dims.size()), t.bytes.size());
  if (out == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "tensor attr does not hold a valid tensor");
    return nullptr;
  }
  if (!t.bytes.empty()) std::memcpy(TF_TensorData(out), t.bytes.data(), t.bytes.size());
  return out;
}

// Protocol buffer wire format, enough for the messages below.
void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void PutBytes(std::string* out, int field, const std::string& bytes) {
  PutVarint(out, static_cast<uint64_t>(field) << 3 | 2);
  PutVarint(out, bytes.size());
  out->append(bytes);
}

TF_Buffer* BufferOf(const std::string& bytes) {
  return TF_NewBufferFromString(bytes.data(), bytes.size());
}

}  // namespace

extern "C" {

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetName);
TF_StringView TF_OpKernelConstruction_GetName(TF_OpKernelConstruction* ctx) {
  if (ctx == nullptr) return TF_StringView{"", 0};
  return TF_StringView{ctx->node_name.c_str(), ctx->node_name.size()};
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_Failure);
void TF_OpKernelConstruction_Failure(TF_OpKernelConstruction* ctx, TF_Status* status) {
  if (ctx == nullptr || ctx->failure == nullptr || status == nullptr) return;
  TF_SetStatus(ctx->failure, TF_GetCode(status), TF_Message(status));
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_HasAttr);
bool TF_OpKernelConstruction_HasAttr(TF_OpKernelConstruction* ctx, const char* attr_name, TF_Status* status) {
  if (ctx == nullptr || ctx->node == nullptr || attr_name == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "NULL kernel construction context or attr name");
    return false;
  }
  TF_SetStatus(status, TF_OK, "");
  return ctx->node->attrs.count(attr_name) != 0;
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrSize);
void TF_OpKernelConstruction_GetAttrSize(TF_OpKernelConstruction* ctx, const char* attr_name,
                                         int32_t* list_size, int32_t* total_size, TF_Status* status) {
  if (ctx == nullptr || ctx->node == nullptr || attr_name == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "NULL kernel construction context or attr name");
    return;
  }
  auto it = ctx->node->attrs.find(attr_name);
  if (it == ctx->node->attrs.end()) {
    Fail(status, TF_NOT_FOUND, "No attr named '" + std::string(attr_name) + "' in NodeDef " + ctx->node_name);
    return;
  }
  const AttrValue& v = it->second;
  // list_size: number of values (-1 for a scalar); total_size: bytes of all
  // strings, or dims of all shapes (-1 for other kinds), as TensorFlow.
  int32_t list = v.is_list ? v.ListSize() : -1, total = -1;
  if (v.kind == Kind::kString) {
    size_t bytes = 0;
    if (v.is_list) {
      for (const auto& s : v.list_s) bytes += s.size();
    } else {
      bytes = v.s.size();
    }
    total = static_cast<int32_t>(std::min<size_t>(bytes, INT32_MAX));
  } else if (v.kind == Kind::kShape) {
    int64_t dims = 0;
    if (v.is_list) {
      for (const auto& s : v.list_shape) dims += s.unknown_rank ? 0 : static_cast<int64_t>(s.dims.size());
    } else {
      dims = v.shape.unknown_rank ? -1 : static_cast<int64_t>(v.shape.dims.size());
    }
    total = static_cast<int32_t>(dims);
  }
  if (list_size != nullptr) *list_size = list;
  if (total_size != nullptr) *total_size = total;
  TF_SetStatus(status, TF_OK, "");
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrType);
void TF_OpKernelConstruction_GetAttrType(TF_OpKernelConstruction* ctx, const char* attr_name,
                                         TF_DataType* val, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kType, false, status);
  if (v != nullptr && val != nullptr) *val = v->type;
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrInt32);
void TF_OpKernelConstruction_GetAttrInt32(TF_OpKernelConstruction* ctx, const char* attr_name,
                                          int32_t* val, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kInt, false, status);
  if (v == nullptr) return;
  if (v->i < INT32_MIN || v->i > INT32_MAX) {
    Fail(status, TF_INVALID_ARGUMENT,
         "Attr '" + std::string(attr_name) + "' value " + std::to_string(v->i) + " does not fit an int32");
    return;
  }
  if (val != nullptr) *val = static_cast<int32_t>(v->i);
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrInt64);
void TF_OpKernelConstruction_GetAttrInt64(TF_OpKernelConstruction* ctx, const char* attr_name,
                                          int64_t* val, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kInt, false, status);
  if (v != nullptr && val != nullptr) *val = v->i;
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrFloat);
void TF_OpKernelConstruction_GetAttrFloat(TF_OpKernelConstruction* ctx, const char* attr_name,
                                          float* val, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kFloat, false, status);
  if (v != nullptr && val != nullptr) *val = v->f;
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrBool);
void TF_OpKernelConstruction_GetAttrBool(TF_OpKernelConstruction* ctx, const char* attr_name,
                                         unsigned char* val, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kBool, false, status);
  if (v != nullptr && val != nullptr) *val = v->b ? 1 : 0;
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrString);
void TF_OpKernelConstruction_GetAttrString(TF_OpKernelConstruction* ctx, const char* attr_name,
                                           char* val, size_t max_length, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kString, false, status);
  if (v != nullptr && val != nullptr) std::memcpy(val, v->s.data(), std::min(v->s.size(), max_length));
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrTypeList);
void TF_OpKernelConstruction_GetAttrTypeList(TF_OpKernelConstruction* ctx, const char* attr_name,
                                             TF_DataType* vals, int max_vals, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kType, true, status);
  if (v != nullptr) CopyList(v->list_type, vals, max_vals);
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrInt32List);
void TF_OpKernelConstruction_GetAttrInt32List(TF_OpKernelConstruction* ctx, const char* attr_name,
                                              int32_t* vals, int max_vals, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kInt, true, status);
  if (v == nullptr) return;
  for (int64_t x : v->list_i) {
    if (x < INT32_MIN || x > INT32_MAX) {
      Fail(status, TF_INVALID_ARGUMENT,
           "Attr '" + std::string(attr_name) + "' holds " + std::to_string(x) + ", which does not fit an int32");
      return;
    }
  }
  CopyList(v->list_i, vals, max_vals);
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrInt64List);
void TF_OpKernelConstruction_GetAttrInt64List(TF_OpKernelConstruction* ctx, const char* attr_name,
                                              int64_t* vals, int max_vals, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kInt, true, status);
  if (v != nullptr) CopyList(v->list_i, vals, max_vals);
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrFloatList);
void TF_OpKernelConstruction_GetAttrFloatList(TF_OpKernelConstruction* ctx, const char* attr_name,
                                              float* vals, int max_vals, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kFloat, true, status);
  if (v != nullptr) CopyList(v->list_f, vals, max_vals);
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrBoolList);
void TF_OpKernelConstruction_GetAttrBoolList(TF_OpKernelConstruction* ctx, const char* attr_name,
                                             unsigned char* vals, int max_vals, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kBool, true, status);
  if (v == nullptr || vals == nullptr) return;
  size_t n = std::min(v->list_b.size(), static_cast<size_t>(std::max(max_vals, 0)));
  for (size_t i = 0; i < n; ++i) vals[i] = v->list_b[i] ? 1 : 0;
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrStringList);
void TF_OpKernelConstruction_GetAttrStringList(TF_OpKernelConstruction* ctx, const char* attr_name,
                                               char** values, size_t* lengths, int max_values,
                                               void* storage, size_t storage_size, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kString, true, status);
  if (v == nullptr) return;
  // Strings are packed back to back into `storage`, values[i] pointing in.
  size_t n = std::min(v->list_s.size(), static_cast<size_t>(std::max(max_values, 0)));
  size_t need = 0;
  for (size_t i = 0; i < n; ++i) need += v->list_s[i].size();
  if (need > storage_size || (need > 0 && storage == nullptr)) {
    Fail(status, TF_INVALID_ARGUMENT,
         "Attr '" + std::string(attr_name) + "': storage of " + std::to_string(storage_size) +
             " bytes cannot hold the strings' " + std::to_string(need) + " bytes");
    return;
  }
  char* p = static_cast<char*>(storage);
  for (size_t i = 0; i < n; ++i) {
    const std::string& s = v->list_s[i];
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    if (values != nullptr) values[i] = p;
    if (lengths != nullptr) lengths[i] = s.size();
    p += s.size();
  }
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrTensorShape);
void TF_OpKernelConstruction_GetAttrTensorShape(TF_OpKernelConstruction* ctx, const char* attr_name,
                                                int64_t* dims, size_t num_dims, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kShape, false, status);
  if (v == nullptr) return;
  // A fully defined shape is required, of exactly `num_dims` dimensions.
  bool unknown = v->shape.unknown_rank;
  for (int64_t d : v->shape.dims) unknown |= d < 0;
  if (unknown) {
    Fail(status, TF_INVALID_ARGUMENT, "Attr '" + std::string(attr_name) + "' is not a fully defined shape");
    return;
  }
  if (v->shape.dims.size() != num_dims) {
    Fail(status, TF_INVALID_ARGUMENT,
         "Attr '" + std::string(attr_name) + "': expected rank " + std::to_string(num_dims) +
             " but the shape has rank " + std::to_string(v->shape.dims.size()));
    return;
  }
  if (dims != nullptr) std::copy(v->shape.dims.begin(), v->shape.dims.end(), dims);
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrTensor);
void TF_OpKernelConstruction_GetAttrTensor(TF_OpKernelConstruction* ctx, const char* attr_name,
                                           TF_Tensor** val, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kTensor, false, status);
  if (v == nullptr || val == nullptr) return;
  *val = TensorFromValue(v->tensor, status);
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrTensorList);
void TF_OpKernelConstruction_GetAttrTensorList(TF_OpKernelConstruction* ctx, const char* attr_name,
                                               TF_Tensor** vals, int max_values, TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kTensor, true, status);
  if (v == nullptr || vals == nullptr) return;
  size_t n = std::min(v->list_tensor.size(), static_cast<size_t>(std::max(max_values, 0)));
  for (size_t i = 0; i < n; ++i) {
    vals[i] = TensorFromValue(v->list_tensor[i], status);
    if (vals[i] == nullptr) {
      for (size_t j = 0; j < i; ++j) {
        TF_DeleteTensor(vals[j]);
        vals[j] = nullptr;
      }
      return;
    }
  }
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetAttrFunction);
TF_Buffer* TF_OpKernelConstruction_GetAttrFunction(TF_OpKernelConstruction* ctx, const char* attr_name,
                                                   TF_Status* status) {
  const AttrValue* v = Attr(ctx, attr_name, Kind::kFunc, false, status);
  if (v == nullptr) return nullptr;
  // A serialized NameAttrList with just the function's name (field 1); the
  // shims keep no attrs for functions.
  std::string proto;
  PutBytes(&proto, 1, v->s);
  return BufferOf(proto);
}

TFP_SHIM_IMPLEMENTED(TF_OpKernelConstruction_GetNodeDef);
TF_Buffer* TF_OpKernelConstruction_GetNodeDef(TF_OpKernelConstruction* ctx, TF_Status* status) {
  if (ctx == nullptr || ctx->op == nullptr || ctx->device == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "NULL kernel construction context");
    return nullptr;
  }
  // A serialized NodeDef with name (1), op (2) and device (4). Attrs (5)
  // are left out: TF_OpKernelConstruction_GetAttr* is the way to read them.
  std::string proto;
  PutBytes(&proto, 1, ctx->node_name);
  PutBytes(&proto, 2, ctx->op->name);
  PutBytes(&proto, 4, ctx->device->device_name);
  TF_SetStatus(status, TF_OK, "");
  return BufferOf(proto);
}

}  // extern "C"
