// SPDX-License-Identifier: Apache-2.0
// Shape inference (ops.h): the context a plugin's shape function sees, its
// shape and dimension handles, and InferShapes, which runs the function.
//
// TensorFlow's handles point into shapes its InferenceContext owns; here a
// handle holds its shape by value. Nothing in the C API can tell the
// difference (it has no handle identity comparisons), and a value cannot
// dangle when a plugin keeps a handle longer than the context.
//
// Rules followed (TensorFlow's InferenceContext and tensorflow/c/ops.cc):
//  - a new shape handle is an unknown shape, a new dimension handle an
//    unknown dimension (-1); an output the function leaves unset is unknown;
//  - WithRank on an unknown shape gives a shape of that rank with unknown
//    dims, WithRankAtLeast/AtMost give it back unchanged; on a mismatch
//    the result becomes unknown and the status says
//    "Shape must be rank 2 but is rank 3" (at least / at most);
//  - Dim out of range (or of an unknown shape) gives an unknown dimension;
//    negative indexes count from the end;
//  - Subshape takes Python-like [start, end) with negative indexes from the
//    end, clamps end to the rank, and fails when start > end after that;
//  - Concatenate of anything with an unknown shape is unknown;
//  - the shape function gets a fresh status; its code and message are the
//    result (InferShapes adds the op and input shapes to the message).
// Deviations, deliberately: TensorFlow dereferences NULL context, handle
// and result pointers and aborts on some bad indexes; the shims report
// TF_INVALID_ARGUMENT where there is a status and otherwise do nothing.
// TensorFlow <= 2.9 rejected every input/output index but 0 (an inverted
// range check, tensorflow#56906); the shims check the range correctly.
#include "shim_internal.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "op_def.h"
#include "tensorflow/c/ops.h"

using tfp_shims::Shape;

struct TF_ShapeHandle {
  Shape shape = UnknownShape();
  static Shape UnknownShape() {
    Shape s;
    s.unknown_rank = true;
    return s;
  }
};

struct TF_DimensionHandle {
  int64_t value = -1;  // -1: unknown
};

struct TF_ShapeInferenceContext {
  const tfp_shims::OpDef* op;
  const tfp_shims::NodeSignature* node;
  std::vector<Shape> inputs;
  std::vector<Shape> outputs;  // unknown until the function sets them
};

namespace {

int64_t Rank(const Shape& s) { return s.unknown_rank ? -1 : static_cast<int64_t>(s.dims.size()); }

// Every shape-inference failure is INVALID_ARGUMENT, as in TensorFlow.
void Invalid(TF_Status* status, const std::string& msg) { tfp_shims::Fail(status, TF_INVALID_ARGUMENT, msg); }

// Common NULL checks of the functions taking a handle, a result and a status.
bool CheckArgs(const char* fn, TF_ShapeInferenceContext* ctx, const void* handle,
               const void* result, TF_Status* status) {
  const char* missing = ctx == nullptr      ? "context"
                        : handle == nullptr ? "shape handle"
                        : result == nullptr ? "result handle"
                                            : nullptr;
  if (missing == nullptr) return true;
  Invalid(status, std::string(fn) + ": NULL " + missing);
  return false;
}

enum class RankCheck { kExactly, kAtLeast, kAtMost };

void WithRank(const char* fn, RankCheck check, TF_ShapeInferenceContext* ctx,
              TF_ShapeHandle* handle, int64_t rank, TF_ShapeHandle* result, TF_Status* status) {
  if (!CheckArgs(fn, ctx, handle, result, status)) return;
  if (rank > std::numeric_limits<int32_t>::max()) {
    result->shape = TF_ShapeHandle::UnknownShape();
    Invalid(status,
         std::string(fn) + ": rank " + std::to_string(rank) + " is larger than a rank can be");
    return;
  }
  const Shape in = handle->shape;  // copy: result may be handle
  if (in.unknown_rank) {
    if (check == RankCheck::kExactly) {
      if (rank < 0) {
        result->shape = TF_ShapeHandle::UnknownShape();
        Invalid(status, std::string(fn) + ": rank " + std::to_string(rank) + " is negative");
        return;
      }
      result->shape = Shape();
      result->shape.dims.assign(static_cast<size_t>(rank), -1);
    } else {
      result->shape = in;
    }
    TF_SetStatus(status, TF_OK, "");
    return;
  }
  int64_t r = Rank(in);
  bool ok = check == RankCheck::kExactly   ? r == rank
            : check == RankCheck::kAtLeast ? r >= rank
                                           : r <= rank;
  if (!ok) {
    const char* how = check == RankCheck::kExactly   ? ""
                      : check == RankCheck::kAtLeast ? "at least "
                                                     : "at most ";
    result->shape = TF_ShapeHandle::UnknownShape();
    Invalid(status, "Shape must be " + std::string(how) + "rank " + std::to_string(rank) +
                     " but is rank " + std::to_string(r));
    return;
  }
  result->shape = in;
  TF_SetStatus(status, TF_OK, "");
}

std::string ShapeString(const Shape& s) {
  if (s.unknown_rank) return "?";
  std::string out = "[";
  for (size_t i = 0; i < s.dims.size(); ++i) {
    out += (i > 0 ? "," : "") + (s.dims[i] < 0 ? std::string("?") : std::to_string(s.dims[i]));
  }
  return out + "]";
}

}  // namespace

extern "C" {

TFP_SHIM_IMPLEMENTED(TF_NewShapeHandle);
TF_ShapeHandle* TF_NewShapeHandle(void) { return new TF_ShapeHandle(); }

TFP_SHIM_IMPLEMENTED(TF_DeleteShapeHandle);
void TF_DeleteShapeHandle(TF_ShapeHandle* handle) { delete handle; }

TFP_SHIM_IMPLEMENTED(TF_NewDimensionHandle);
TF_DimensionHandle* TF_NewDimensionHandle(void) { return new TF_DimensionHandle(); }

TFP_SHIM_IMPLEMENTED(TF_DeleteDimensionHandle);
void TF_DeleteDimensionHandle(TF_DimensionHandle* handle) { delete handle; }

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContextNumInputs);
int64_t TF_ShapeInferenceContextNumInputs(TF_ShapeInferenceContext* ctx) {
  return ctx != nullptr ? static_cast<int64_t>(ctx->inputs.size()) : 0;
}

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContextGetInput);
void TF_ShapeInferenceContextGetInput(TF_ShapeInferenceContext* ctx, int i, TF_ShapeHandle* handle,
                                      TF_Status* status) {
  if (!CheckArgs("TF_ShapeInferenceContextGetInput", ctx, handle, handle, status)) return;
  if (i < 0 || static_cast<size_t>(i) >= ctx->inputs.size()) {
    Invalid(status, "TF_ShapeInferenceContextGetInput: input index " + std::to_string(i) +
                     " out of range: the op has " + std::to_string(ctx->inputs.size()) + " inputs");
    return;
  }
  handle->shape = ctx->inputs[static_cast<size_t>(i)];
  TF_SetStatus(status, TF_OK, "");
}

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContextSetOutput);
void TF_ShapeInferenceContextSetOutput(TF_ShapeInferenceContext* ctx, int i, TF_ShapeHandle* handle,
                                       TF_Status* status) {
  if (!CheckArgs("TF_ShapeInferenceContextSetOutput", ctx, handle, handle, status)) return;
  if (i < 0 || static_cast<size_t>(i) >= ctx->outputs.size()) {
    Invalid(status, "TF_ShapeInferenceContextSetOutput: output index " + std::to_string(i) +
                     " out of range: the op has " + std::to_string(ctx->outputs.size()) +
                     " outputs");
    return;
  }
  ctx->outputs[static_cast<size_t>(i)] = handle->shape;
  TF_SetStatus(status, TF_OK, "");
}

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContextScalar);
TF_ShapeHandle* TF_ShapeInferenceContextScalar(TF_ShapeInferenceContext*) {
  auto* h = new TF_ShapeHandle();
  h->shape = Shape();  // rank 0
  return h;
}

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContextVectorFromSize);
TF_ShapeHandle* TF_ShapeInferenceContextVectorFromSize(TF_ShapeInferenceContext*, size_t size) {
  auto* h = new TF_ShapeHandle();
  h->shape = Shape();
  // A size no int64 dimension can hold is unknown (TensorFlow's int64
  // conversion of SIZE_MAX gives its unknown-dimension value, -1).
  h->shape.dims.push_back(size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                              ? -1
                              : static_cast<int64_t>(size));
  return h;
}

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContext_GetAttrType);
void TF_ShapeInferenceContext_GetAttrType(TF_ShapeInferenceContext* ctx, const char* attr_name,
                                          TF_DataType* val, TF_Status* status) {
  if (ctx == nullptr || attr_name == nullptr || val == nullptr) {
    Invalid(status, "TF_ShapeInferenceContext_GetAttrType: NULL context, attr name or result");
    return;
  }
  const auto& attrs = ctx->node->attrs;
  auto it = attrs.find(attr_name);
  if (it == attrs.end()) {
    std::string msg =
        "No attr named '" + std::string(attr_name) + "' in op '" + ctx->op->name + "'";
    TF_SetStatus(status, TF_NOT_FOUND, msg.c_str());
    return;
  }
  if (it->second.kind != tfp_shims::AttrValue::Kind::kType || it->second.is_list) {
    Invalid(status, "Attr '" + std::string(attr_name) + "' of op '" + ctx->op->name + "' is a " +
                     tfp_shims::AttrTypeName(it->second.kind, it->second.is_list) + ", not a type");
    return;
  }
  *val = it->second.type;
  TF_SetStatus(status, TF_OK, "");
}

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContextRank);
int64_t TF_ShapeInferenceContextRank(TF_ShapeInferenceContext*, TF_ShapeHandle* handle) {
  return handle != nullptr ? Rank(handle->shape) : -1;
}

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContextRankKnown);
int TF_ShapeInferenceContextRankKnown(TF_ShapeInferenceContext*, TF_ShapeHandle* handle) {
  return handle != nullptr && !handle->shape.unknown_rank ? 1 : 0;
}

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContextWithRank);
void TF_ShapeInferenceContextWithRank(TF_ShapeInferenceContext* ctx, TF_ShapeHandle* handle,
                                      int64_t rank, TF_ShapeHandle* result, TF_Status* status) {
  WithRank("TF_ShapeInferenceContextWithRank", RankCheck::kExactly, ctx, handle, rank, result,
           status);
}

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContextWithRankAtLeast);
void TF_ShapeInferenceContextWithRankAtLeast(TF_ShapeInferenceContext* ctx, TF_ShapeHandle* handle,
                                             int64_t rank, TF_ShapeHandle* result,
                                             TF_Status* status) {
  WithRank("TF_ShapeInferenceContextWithRankAtLeast", RankCheck::kAtLeast, ctx, handle, rank,
           result, status);
}

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContextWithRankAtMost);
void TF_ShapeInferenceContextWithRankAtMost(TF_ShapeInferenceContext* ctx, TF_ShapeHandle* handle,
                                            int64_t rank, TF_ShapeHandle* result,
                                            TF_Status* status) {
  WithRank("TF_ShapeInferenceContextWithRankAtMost", RankCheck::kAtMost, ctx, handle, rank, result,
           status);
}

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContextDim);
void TF_ShapeInferenceContextDim(TF_ShapeInferenceContext*, TF_ShapeHandle* shape_handle, int64_t i,
                                 TF_DimensionHandle* result) {
  if (result == nullptr) return;
  result->value = -1;
  if (shape_handle == nullptr) return;
  int64_t rank = Rank(shape_handle->shape);  // -1 for unknown: every i is out of range
  if (i < -rank || i >= rank) return;
  result->value = shape_handle->shape.dims[static_cast<size_t>(i < 0 ? rank + i : i)];
}

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContextSubshape);
void TF_ShapeInferenceContextSubshape(TF_ShapeInferenceContext* ctx, TF_ShapeHandle* shape_handle,
                                      int64_t start, int64_t end, TF_ShapeHandle* result,
                                      TF_Status* status) {
  if (!CheckArgs("TF_ShapeInferenceContextSubshape", ctx, shape_handle, result, status)) return;
  const Shape in = shape_handle->shape;  // copy: result may be shape_handle
  const int64_t rank = Rank(in);
  if (start == 0 && ((rank >= 0 && end >= rank) || end == std::numeric_limits<int64_t>::max())) {
    result->shape = in;  // the whole shape, known or not
    TF_SetStatus(status, TF_OK, "");
    return;
  }
  if (in.unknown_rank) {
    result->shape = TF_ShapeHandle::UnknownShape();
    TF_SetStatus(status, TF_OK, "");
    return;
  }
  int64_t s = start > rank ? rank : start;
  int64_t e = end > rank ? rank : end;
  std::string err;
  if (s < 0 && (s += rank) < 0) {
    err = "Subshape start out of bounds: " + std::to_string(start) + ", for shape with rank " +
          std::to_string(rank);
  } else if (e < 0 && (e += rank) < 0) {
    err = "Subshape end out of bounds: " + std::to_string(end) + ", for shape with rank " +
          std::to_string(rank);
  } else if (s > e) {
    err = "Subshape must have computed start <= end, but is " + std::to_string(s) + " and " +
          std::to_string(e) + " (computed from start " + std::to_string(start) + " and end " +
          std::to_string(end) + " over shape with rank " + std::to_string(rank) + ")";
  }
  if (!err.empty()) {
    result->shape = TF_ShapeHandle::UnknownShape();
    Invalid(status, err);
    return;
  }
  result->shape = Shape();
  result->shape.dims.assign(in.dims.begin() + s, in.dims.begin() + e);
  TF_SetStatus(status, TF_OK, "");
}

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContextSetUnknownShape);
void TF_ShapeInferenceContextSetUnknownShape(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  if (ctx == nullptr) {
    Invalid(status, "TF_ShapeInferenceContextSetUnknownShape: NULL context");
    return;
  }
  for (auto& out : ctx->outputs) out = TF_ShapeHandle::UnknownShape();
  TF_SetStatus(status, TF_OK, "");
}

TFP_SHIM_IMPLEMENTED(TF_DimensionHandleValueKnown);
int TF_DimensionHandleValueKnown(TF_DimensionHandle* dim_handle) {
  return dim_handle != nullptr && dim_handle->value >= 0 ? 1 : 0;
}

TFP_SHIM_IMPLEMENTED(TF_DimensionHandleValue);
int64_t TF_DimensionHandleValue(TF_DimensionHandle* dim_handle) {
  return dim_handle != nullptr ? dim_handle->value : -1;
}

TFP_SHIM_IMPLEMENTED(TF_ShapeInferenceContextConcatenateShapes);
void TF_ShapeInferenceContextConcatenateShapes(TF_ShapeInferenceContext* ctx, TF_ShapeHandle* first,
                                               TF_ShapeHandle* second, TF_ShapeHandle* result,
                                               TF_Status* status) {
  if (!CheckArgs("TF_ShapeInferenceContextConcatenateShapes", ctx, first, result, status) ||
      !CheckArgs("TF_ShapeInferenceContextConcatenateShapes", ctx, second, result, status)) {
    return;
  }
  if (first->shape.unknown_rank || second->shape.unknown_rank) {
    result->shape = TF_ShapeHandle::UnknownShape();
  } else {
    Shape s = first->shape;  // copy: result may be either input
    s.dims.insert(s.dims.end(), second->shape.dims.begin(), second->shape.dims.end());
    result->shape = std::move(s);
  }
  TF_SetStatus(status, TF_OK, "");
}

}  // extern "C"

namespace tfp_shims {

bool InferShapes(const OpDef& op, const NodeSignature& node, const std::vector<Shape>& input_shapes,
                 std::vector<Shape>* outputs, TF_Status* status) {
  if (input_shapes.size() != node.input_types.size()) {
    Invalid(status, "op '" + op.name + "': " + std::to_string(input_shapes.size()) +
                     " input shapes for " + std::to_string(node.input_types.size()) + " inputs");
    return false;
  }
  TF_ShapeInferenceContext ctx{
      &op, &node, input_shapes,
      std::vector<Shape>(node.output_types.size(), TF_ShapeHandle::UnknownShape())};
  if (op.shape_fn != nullptr) {
    // A fresh status, as TensorFlow gives the function: what it leaves there
    // is the result, whatever the caller's status held before.
    TF_Status* fn_status = TF_NewStatus();
    op.shape_fn(&ctx, fn_status);
    TF_Code code = TF_GetCode(fn_status);
    if (code != TF_OK) {
      std::string msg =
          std::string(TF_Message(fn_status)) + " for op '" + op.name + "' with input shapes: ";
      for (size_t i = 0; i < input_shapes.size(); ++i)
        msg += (i > 0 ? ", " : "") + ShapeString(input_shapes[i]);
      TF_SetStatus(status, code, msg.c_str());
      TF_DeleteStatus(fn_status);
      return false;
    }
    TF_DeleteStatus(fn_status);
  }
  if (outputs != nullptr) *outputs = std::move(ctx.outputs);
  TF_SetStatus(status, TF_OK, "");
  return true;
}

}  // namespace tfp_shims
