// SPDX-License-Identifier: Apache-2.0
// Shape inference (ops.h): a plugin's shape function, written with the C API
// only, run by InferShapes; and the handle functions' TensorFlow semantics.
#include "shim_internal.h"  // first: the shims' view of the C API headers

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "op_def.h"
#include "tensorflow/c/ops.h"

namespace {

using tfp_shims::NodeSignature;
using tfp_shims::OpDef;
using tfp_shims::Shape;

struct Status {
  TF_Status* s = TF_NewStatus();
  ~Status() { TF_DeleteStatus(s); }
  TF_Code code() const { return TF_GetCode(s); }
  std::string message() const { return TF_Message(s); }
};

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

Shape Known(std::vector<int64_t> dims) {
  Shape s;
  s.dims = std::move(dims);
  return s;
}

Shape UnknownRank() {
  Shape s;
  s.unknown_rank = true;
  return s;
}

// A matmul-like shape function, as a plugin would write it: [m, k] x [k, n]
// -> [m, n], built from Subshape + Concatenate (ops.h has no "make shape").
void MatMulShape(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* a = TF_NewShapeHandle();
  TF_ShapeHandle* b = TF_NewShapeHandle();
  TF_ShapeHandle* m = TF_NewShapeHandle();
  TF_ShapeHandle* n = TF_NewShapeHandle();
  TF_DimensionHandle* ka = TF_NewDimensionHandle();
  TF_DimensionHandle* kb = TF_NewDimensionHandle();
  do {
    TF_ShapeInferenceContextGetInput(ctx, 0, a, status);
    if (TF_GetCode(status) != TF_OK) break;
    TF_ShapeInferenceContextGetInput(ctx, 1, b, status);
    if (TF_GetCode(status) != TF_OK) break;
    TF_ShapeInferenceContextWithRank(ctx, a, 2, a, status);
    if (TF_GetCode(status) != TF_OK) break;
    TF_ShapeInferenceContextWithRank(ctx, b, 2, b, status);
    if (TF_GetCode(status) != TF_OK) break;
    TF_ShapeInferenceContextDim(ctx, a, 1, ka);
    TF_ShapeInferenceContextDim(ctx, b, 0, kb);
    if (TF_DimensionHandleValueKnown(ka) && TF_DimensionHandleValueKnown(kb) &&
        TF_DimensionHandleValue(ka) != TF_DimensionHandleValue(kb)) {
      TF_SetStatus(status, TF_INVALID_ARGUMENT, "inner dimensions differ");
      break;
    }
    TF_ShapeInferenceContextSubshape(ctx, a, 0, 1, m, status);
    if (TF_GetCode(status) != TF_OK) break;
    TF_ShapeInferenceContextSubshape(ctx, b, 1, 2, n, status);
    if (TF_GetCode(status) != TF_OK) break;
    TF_ShapeInferenceContextConcatenateShapes(ctx, m, n, m, status);
    if (TF_GetCode(status) != TF_OK) break;
    TF_ShapeInferenceContextSetOutput(ctx, 0, m, status);
  } while (false);
  TF_DeleteShapeHandle(a);
  TF_DeleteShapeHandle(b);
  TF_DeleteShapeHandle(m);
  TF_DeleteShapeHandle(n);
  TF_DeleteDimensionHandle(ka);
  TF_DeleteDimensionHandle(kb);
}

// Registers `name` (idempotent across tests) and returns its def.
const OpDef* RegisterOnce(const char* name, const std::vector<const char*>& attrs,
                          const std::vector<const char*>& inputs,
                          const std::vector<const char*>& outputs,
                          void (*fn)(TF_ShapeInferenceContext*, TF_Status*)) {
  if (const OpDef* op = tfp_shims::LookupOp(name)) return op;
  TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder(name);
  for (const char* a : attrs) TF_OpDefinitionBuilderAddAttr(b, a);
  for (const char* i : inputs) TF_OpDefinitionBuilderAddInput(b, i);
  for (const char* o : outputs) TF_OpDefinitionBuilderAddOutput(b, o);
  if (fn != nullptr) TF_OpDefinitionBuilderSetShapeInferenceFunction(b, fn);
  Status s;
  TF_RegisterOpDefinition(b, s.s);
  EXPECT_EQ(s.code(), TF_OK) << s.message();
  return tfp_shims::LookupOp(name);
}

const OpDef& MatMulOp() {
  const OpDef* op = RegisterOnce("TfpTestMatMul", {"T: {float, half}"}, {"a: T", "b: T"},
                                 {"product: T"}, MatMulShape);
  EXPECT_NE(op, nullptr);
  return *op;
}

// Resolves and infers; *status gets the result.
bool Infer(const OpDef& op, const std::vector<Shape>& in, std::vector<Shape>* out, Status* status,
           TF_DataType dtype = TF_FLOAT) {
  NodeSignature node;
  std::vector<TF_DataType> types(op.inputs.size(), dtype);
  if (!tfp_shims::ResolveNode(op, {}, types, &node, status->s)) {
    ADD_FAILURE() << status->message();
    return false;
  }
  return tfp_shims::InferShapes(op, node, in, out, status->s);
}

TEST(InferShapes, PluginShapeFunction) {
  const OpDef& op = MatMulOp();
  Status s;
  std::vector<Shape> out;
  ASSERT_TRUE(Infer(op, {Known({2, 3}), Known({3, 4})}, &out, &s)) << s.message();
  EXPECT_EQ(s.code(), TF_OK);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], Known({2, 4}));

  // Unknown dimensions flow through; they match anything.
  ASSERT_TRUE(Infer(op, {Known({-1, 3}), Known({-1, 5})}, &out, &s)) << s.message();
  EXPECT_EQ(out[0], Known({-1, 5}));

  // An unknown rank becomes rank 2 with unknown dims under WithRank.
  ASSERT_TRUE(Infer(op, {UnknownRank(), Known({7, 5})}, &out, &s)) << s.message();
  EXPECT_EQ(out[0], Known({-1, 5}));
}

TEST(InferShapes, ErrorsCarryTheOpAndInputShapes) {
  const OpDef& op = MatMulOp();
  Status s;
  std::vector<Shape> out;
  EXPECT_FALSE(Infer(op, {Known({2, 3, 4}), Known({3, 4})}, &out, &s));
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(s.message(), "Shape must be rank 2 but is rank 3")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "'TfpTestMatMul'")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "[2,3,4], [3,4]")) << s.message();

  EXPECT_FALSE(Infer(op, {Known({2, 3}), Known({4, 5})}, &out, &s));
  EXPECT_TRUE(Contains(s.message(), "inner dimensions differ")) << s.message();

  // One shape per input, or nothing runs.
  EXPECT_FALSE(Infer(op, {Known({2, 3})}, &out, &s));
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(s.message(), "1 input shapes for 2 inputs")) << s.message();
}

TEST(InferShapes, NoShapeFunctionMeansUnknownOutputs) {
  const OpDef* op =
      RegisterOnce("TfpTestNoShapeFn", {"T: type"}, {"x: T"}, {"y: T", "z: int32"}, nullptr);
  ASSERT_NE(op, nullptr);
  Status s;
  std::vector<Shape> out;
  ASSERT_TRUE(Infer(*op, {Known({2})}, &out, &s)) << s.message();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].unknown_rank);
  EXPECT_TRUE(out[1].unknown_rank);
}

// A probe op whose shape function runs whatever the test puts in g_body, so
// the handle functions can be called with a real context.
std::function<void(TF_ShapeInferenceContext*, TF_Status*)> g_body;

void ProbeShape(TF_ShapeInferenceContext* ctx, TF_Status* status) { g_body(ctx, status); }

const OpDef& ProbeOp() {
  const OpDef* op = RegisterOnce("TfpTestProbe", {"T: type", "flag: bool = false"},
                                 {"x: T", "y: int32"}, {"out: T", "out2: T"}, ProbeShape);
  EXPECT_NE(op, nullptr);
  return *op;
}

// Runs `body` as the shape function with inputs x (shape `x`) and y (`y`).
std::vector<Shape> Probe(const Shape& x, const Shape& y,
                         std::function<void(TF_ShapeInferenceContext*, TF_Status*)> body,
                         Status* status) {
  g_body = std::move(body);
  NodeSignature node;
  std::vector<Shape> out;
  const OpDef& op = ProbeOp();
  EXPECT_TRUE(tfp_shims::ResolveNode(op, {}, {TF_HALF, TF_INT32}, &node, status->s))
      << status->message();
  tfp_shims::InferShapes(op, node, {x, y}, &out, status->s);
  g_body = nullptr;
  return out;
}

// Holds a shape handle for the length of a test.
struct Handle {
  TF_ShapeHandle* h = TF_NewShapeHandle();
  ~Handle() { TF_DeleteShapeHandle(h); }
};

struct Dim {
  TF_DimensionHandle* h = TF_NewDimensionHandle();
  ~Dim() { TF_DeleteDimensionHandle(h); }
};

// The shape a handle holds, read back through an output of the probe.
Shape ShapeOf(TF_ShapeInferenceContext* ctx, TF_ShapeHandle* h) {
  Status s;
  TF_ShapeInferenceContextSetOutput(ctx, 1, h, s.s);
  EXPECT_EQ(s.code(), TF_OK) << s.message();
  Shape shape;
  shape.unknown_rank = TF_ShapeInferenceContextRankKnown(ctx, h) == 0;
  for (int64_t i = 0; i < TF_ShapeInferenceContextRank(ctx, h); ++i) {
    Dim d;
    TF_ShapeInferenceContextDim(ctx, h, i, d.h);
    shape.dims.push_back(TF_DimensionHandleValue(d.h));
  }
  return shape;
}

TEST(ShapeContext, InputsOutputsAndAttrs) {
  Status s;
  std::vector<Shape> out = Probe(
      Known({2, 3}), Known({}),
      [](TF_ShapeInferenceContext* ctx, TF_Status* st) {
        EXPECT_EQ(TF_ShapeInferenceContextNumInputs(ctx), 2);
        Handle x, y;
        Status local;
        TF_ShapeInferenceContextGetInput(ctx, 1, y.h,
                                         local.s);  // index 1 works (TF <= 2.9 rejected it)
        EXPECT_EQ(local.code(), TF_OK) << local.message();
        EXPECT_EQ(TF_ShapeInferenceContextRank(ctx, y.h), 0);
        TF_ShapeInferenceContextGetInput(ctx, 2, x.h, local.s);
        EXPECT_EQ(local.code(), TF_INVALID_ARGUMENT);
        EXPECT_TRUE(Contains(local.message(), "index 2")) << local.message();
        TF_ShapeInferenceContextGetInput(ctx, -1, x.h, local.s);
        EXPECT_EQ(local.code(), TF_INVALID_ARGUMENT);
        TF_ShapeInferenceContextSetOutput(ctx, 2, x.h, local.s);
        EXPECT_EQ(local.code(), TF_INVALID_ARGUMENT);
        EXPECT_TRUE(Contains(local.message(), "output index 2")) << local.message();

        TF_DataType t = TF_INT8;
        TF_ShapeInferenceContext_GetAttrType(ctx, "T", &t, local.s);
        EXPECT_EQ(local.code(), TF_OK) << local.message();
        EXPECT_EQ(t, TF_HALF);  // inferred from input x
        t = TF_INT8;
        TF_ShapeInferenceContext_GetAttrType(ctx, "nope", &t, local.s);
        EXPECT_EQ(local.code(), TF_NOT_FOUND);
        EXPECT_TRUE(Contains(local.message(), "'nope'")) << local.message();
        EXPECT_EQ(t, TF_INT8);  // untouched on failure
        TF_ShapeInferenceContext_GetAttrType(ctx, "flag", &t, local.s);
        EXPECT_EQ(local.code(), TF_INVALID_ARGUMENT);
        EXPECT_TRUE(Contains(local.message(), "bool")) << local.message();

        TF_ShapeInferenceContextGetInput(ctx, 0, x.h, st);
        TF_ShapeInferenceContextSetOutput(ctx, 0, x.h, st);  // out2 left unset
      },
      &s);
  ASSERT_EQ(s.code(), TF_OK) << s.message();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], Known({2, 3}));
  EXPECT_TRUE(out[1].unknown_rank);
}

TEST(ShapeContext, ScalarVectorAndFreshHandles) {
  Status s;
  Probe(
      Known({}), Known({}),
      [](TF_ShapeInferenceContext* ctx, TF_Status*) {
        TF_ShapeHandle* scalar = TF_ShapeInferenceContextScalar(ctx);
        EXPECT_EQ(ShapeOf(ctx, scalar), Known({}));
        TF_ShapeHandle* vec = TF_ShapeInferenceContextVectorFromSize(ctx, 5);
        EXPECT_EQ(ShapeOf(ctx, vec), Known({5}));
        TF_ShapeHandle* huge =
            TF_ShapeInferenceContextVectorFromSize(ctx, std::numeric_limits<size_t>::max());
        EXPECT_EQ(ShapeOf(ctx, huge), Known({-1}));
        Handle fresh;
        EXPECT_EQ(TF_ShapeInferenceContextRankKnown(ctx, fresh.h), 0);
        EXPECT_EQ(TF_ShapeInferenceContextRank(ctx, fresh.h), -1);
        Dim d;
        EXPECT_EQ(TF_DimensionHandleValueKnown(d.h), 0);
        EXPECT_EQ(TF_DimensionHandleValue(d.h), -1);
        TF_DeleteShapeHandle(scalar);
        TF_DeleteShapeHandle(vec);
        TF_DeleteShapeHandle(huge);
      },
      &s);
  EXPECT_EQ(s.code(), TF_OK) << s.message();
}

TEST(ShapeContext, WithRankFamily) {
  Status s;
  Probe(
      Known({2, 3}), UnknownRank(),
      [](TF_ShapeInferenceContext* ctx, TF_Status*) {
        Handle x, u, r;
        Status st;
        TF_ShapeInferenceContextGetInput(ctx, 0, x.h, st.s);
        TF_ShapeInferenceContextGetInput(ctx, 1, u.h, st.s);

        TF_ShapeInferenceContextWithRank(ctx, x.h, 2, r.h, st.s);
        EXPECT_EQ(st.code(), TF_OK);
        EXPECT_EQ(ShapeOf(ctx, r.h), Known({2, 3}));
        TF_ShapeInferenceContextWithRank(ctx, x.h, 1, r.h, st.s);
        EXPECT_EQ(st.code(), TF_INVALID_ARGUMENT);
        EXPECT_EQ(st.message(), "Shape must be rank 1 but is rank 2");
        EXPECT_EQ(TF_ShapeInferenceContextRankKnown(ctx, r.h), 0);  // failed result is unknown

        TF_ShapeInferenceContextWithRankAtLeast(ctx, x.h, 2, r.h, st.s);
        EXPECT_EQ(st.code(), TF_OK);
        TF_ShapeInferenceContextWithRankAtLeast(ctx, x.h, 3, r.h, st.s);
        EXPECT_EQ(st.message(), "Shape must be at least rank 3 but is rank 2");
        TF_ShapeInferenceContextWithRankAtMost(ctx, x.h, 2, r.h, st.s);
        EXPECT_EQ(st.code(), TF_OK);
        TF_ShapeInferenceContextWithRankAtMost(ctx, x.h, 1, r.h, st.s);
        EXPECT_EQ(st.message(), "Shape must be at most rank 1 but is rank 2");

        // Unknown rank: WithRank pins the rank, at-least/at-most keep it unknown.
        TF_ShapeInferenceContextWithRank(ctx, u.h, 3, r.h, st.s);
        EXPECT_EQ(st.code(), TF_OK);
        EXPECT_EQ(ShapeOf(ctx, r.h), Known({-1, -1, -1}));
        TF_ShapeInferenceContextWithRankAtLeast(ctx, u.h, 3, r.h, st.s);
        EXPECT_EQ(st.code(), TF_OK);
        EXPECT_EQ(TF_ShapeInferenceContextRankKnown(ctx, r.h), 0);
        TF_ShapeInferenceContextWithRankAtMost(ctx, u.h, 3, r.h, st.s);
        EXPECT_EQ(st.code(), TF_OK);
        EXPECT_EQ(TF_ShapeInferenceContextRankKnown(ctx, r.h), 0);

        TF_ShapeInferenceContextWithRank(ctx, u.h, -1, r.h, st.s);
        EXPECT_EQ(st.code(), TF_INVALID_ARGUMENT);
        TF_ShapeInferenceContextWithRank(ctx, x.h, int64_t{1} << 40, r.h, st.s);
        EXPECT_EQ(st.code(), TF_INVALID_ARGUMENT);
      },
      &s);
  EXPECT_EQ(s.code(), TF_OK) << s.message();
}

TEST(ShapeContext, Dim) {
  Status s;
  Probe(
      Known({2, -1, 4}), UnknownRank(),
      [](TF_ShapeInferenceContext* ctx, TF_Status*) {
        Handle x, u;
        Status st;
        TF_ShapeInferenceContextGetInput(ctx, 0, x.h, st.s);
        TF_ShapeInferenceContextGetInput(ctx, 1, u.h, st.s);
        Dim d;
        TF_ShapeInferenceContextDim(ctx, x.h, 0, d.h);
        EXPECT_EQ(TF_DimensionHandleValueKnown(d.h), 1);
        EXPECT_EQ(TF_DimensionHandleValue(d.h), 2);
        TF_ShapeInferenceContextDim(ctx, x.h, 1, d.h);
        EXPECT_EQ(TF_DimensionHandleValueKnown(d.h), 0);
        EXPECT_EQ(TF_DimensionHandleValue(d.h), -1);
        TF_ShapeInferenceContextDim(ctx, x.h, -1, d.h);  // from the end
        EXPECT_EQ(TF_DimensionHandleValue(d.h), 4);
        TF_ShapeInferenceContextDim(ctx, x.h, -3, d.h);
        EXPECT_EQ(TF_DimensionHandleValue(d.h), 2);
        for (int64_t out_of_range : {3, -4, 100}) {
          TF_ShapeInferenceContextDim(ctx, x.h, out_of_range, d.h);
          EXPECT_EQ(TF_DimensionHandleValueKnown(d.h), 0) << out_of_range;
        }
        TF_ShapeInferenceContextDim(ctx, u.h, 0, d.h);
        EXPECT_EQ(TF_DimensionHandleValueKnown(d.h), 0);
      },
      &s);
  EXPECT_EQ(s.code(), TF_OK) << s.message();
}

TEST(ShapeContext, Subshape) {
  Status s;
  Probe(
      Known({2, 3, 4, 5}), UnknownRank(),
      [](TF_ShapeInferenceContext* ctx, TF_Status*) {
        Handle x, u, r;
        Status st;
        TF_ShapeInferenceContextGetInput(ctx, 0, x.h, st.s);
        TF_ShapeInferenceContextGetInput(ctx, 1, u.h, st.s);
        const int64_t kEnd = std::numeric_limits<int64_t>::max();
        struct Case {
          int64_t start, end;
          Shape want;
        };
        for (const Case& c : {Case{0, 2, Known({2, 3})}, Case{1, kEnd, Known({3, 4, 5})},
                              Case{-2, kEnd, Known({4, 5})}, Case{1, -1, Known({3, 4})},
                              Case{1, 10, Known({3, 4, 5})}, Case{2, 2, Known({})},
                              Case{0, kEnd, Known({2, 3, 4, 5})}}) {
          TF_ShapeInferenceContextSubshape(ctx, x.h, c.start, c.end, r.h, st.s);
          EXPECT_EQ(st.code(), TF_OK) << c.start << ":" << c.end << " " << st.message();
          EXPECT_EQ(ShapeOf(ctx, r.h), c.want) << c.start << ":" << c.end;
        }
        TF_ShapeInferenceContextSubshape(ctx, x.h, 3, 1, r.h, st.s);
        EXPECT_EQ(st.code(), TF_INVALID_ARGUMENT);
        EXPECT_TRUE(Contains(st.message(), "start <= end")) << st.message();
        TF_ShapeInferenceContextSubshape(ctx, x.h, -5, kEnd, r.h, st.s);
        EXPECT_EQ(st.code(), TF_INVALID_ARGUMENT);
        EXPECT_TRUE(Contains(st.message(), "start out of bounds: -5")) << st.message();
        TF_ShapeInferenceContextSubshape(ctx, x.h, 0, -5, r.h, st.s);
        EXPECT_TRUE(Contains(st.message(), "end out of bounds: -5")) << st.message();

        TF_ShapeInferenceContextSubshape(ctx, u.h, 1, 3, r.h, st.s);
        EXPECT_EQ(st.code(), TF_OK);
        EXPECT_EQ(TF_ShapeInferenceContextRankKnown(ctx, r.h), 0);

        // The result may be the input handle itself.
        TF_ShapeInferenceContextSubshape(ctx, x.h, 1, 3, x.h, st.s);
        EXPECT_EQ(ShapeOf(ctx, x.h), Known({3, 4}));
      },
      &s);
  EXPECT_EQ(s.code(), TF_OK) << s.message();
}

TEST(ShapeContext, Concatenate) {
  Status s;
  Probe(
      Known({2}), UnknownRank(),
      [](TF_ShapeInferenceContext* ctx, TF_Status*) {
        Handle x, u, r;
        Status st;
        TF_ShapeInferenceContextGetInput(ctx, 0, x.h, st.s);
        TF_ShapeInferenceContextGetInput(ctx, 1, u.h, st.s);
        TF_ShapeHandle* v = TF_ShapeInferenceContextVectorFromSize(ctx, 3);
        TF_ShapeHandle* scalar = TF_ShapeInferenceContextScalar(ctx);
        TF_ShapeInferenceContextConcatenateShapes(ctx, x.h, v, r.h, st.s);
        EXPECT_EQ(st.code(), TF_OK);
        EXPECT_EQ(ShapeOf(ctx, r.h), Known({2, 3}));
        TF_ShapeInferenceContextConcatenateShapes(ctx, r.h, r.h, r.h, st.s);
        EXPECT_EQ(ShapeOf(ctx, r.h), Known({2, 3, 2, 3}));
        TF_ShapeInferenceContextConcatenateShapes(ctx, scalar, scalar, r.h, st.s);
        EXPECT_EQ(ShapeOf(ctx, r.h), Known({}));
        TF_ShapeInferenceContextConcatenateShapes(ctx, x.h, u.h, r.h, st.s);
        EXPECT_EQ(st.code(), TF_OK);
        EXPECT_EQ(TF_ShapeInferenceContextRankKnown(ctx, r.h), 0);
        TF_DeleteShapeHandle(v);
        TF_DeleteShapeHandle(scalar);
      },
      &s);
  EXPECT_EQ(s.code(), TF_OK) << s.message();
}

TEST(ShapeContext, SetUnknownShapeAndStatusHandling) {
  Status s;
  // The function's own status decides: a stale error in the caller's status
  // does not leak in, and SetUnknownShape overrides earlier outputs.
  TF_SetStatus(s.s, TF_INTERNAL, "stale");
  std::vector<Shape> out = Probe(
      Known({2}), Known({3}),
      [](TF_ShapeInferenceContext* ctx, TF_Status* st) {
        EXPECT_EQ(TF_GetCode(st), TF_OK);
        Handle x;
        TF_ShapeInferenceContextGetInput(ctx, 0, x.h, st);
        TF_ShapeInferenceContextSetOutput(ctx, 0, x.h, st);
        TF_ShapeInferenceContextSetUnknownShape(ctx, st);
      },
      &s);
  EXPECT_EQ(s.code(), TF_OK) << s.message();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].unknown_rank);
  EXPECT_TRUE(out[1].unknown_rank);

  // A failing function's code and message come back, with the op named.
  Probe(
      Known({2}), Known({3}),
      [](TF_ShapeInferenceContext*, TF_Status* st) {
        TF_SetStatus(st, TF_FAILED_PRECONDITION, "plugin says no");
      },
      &s);
  EXPECT_EQ(s.code(), TF_FAILED_PRECONDITION);
  EXPECT_TRUE(Contains(s.message(), "plugin says no")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "'TfpTestProbe'")) << s.message();
}

TEST(ShapeContext, NullsDoNotCrash) {
  Status s;
  Handle h;
  Dim d;
  EXPECT_EQ(TF_ShapeInferenceContextNumInputs(nullptr), 0);
  TF_ShapeInferenceContextGetInput(nullptr, 0, h.h, s.s);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  TF_ShapeInferenceContextSetOutput(nullptr, 0, h.h, s.s);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  TF_ShapeInferenceContextWithRank(nullptr, h.h, 1, h.h, s.s);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  TF_ShapeInferenceContextSubshape(nullptr, h.h, 0, 1, h.h, s.s);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  TF_ShapeInferenceContextConcatenateShapes(nullptr, h.h, h.h, h.h, s.s);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  TF_ShapeInferenceContextSetUnknownShape(nullptr, s.s);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  TF_DataType t;
  TF_ShapeInferenceContext_GetAttrType(nullptr, "T", &t, s.s);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  EXPECT_EQ(TF_ShapeInferenceContextRank(nullptr, nullptr), -1);
  EXPECT_EQ(TF_ShapeInferenceContextRankKnown(nullptr, nullptr), 0);
  TF_ShapeInferenceContextDim(nullptr, nullptr, 0, d.h);
  EXPECT_EQ(TF_DimensionHandleValueKnown(d.h), 0);
  TF_ShapeInferenceContextDim(nullptr, h.h, 0, nullptr);
  EXPECT_EQ(TF_DimensionHandleValue(nullptr), -1);
  EXPECT_EQ(TF_DimensionHandleValueKnown(nullptr), 0);
  TF_DeleteShapeHandle(nullptr);
  TF_DeleteDimensionHandle(nullptr);

  // NULL handles inside a real context.
  Status outer;
  Probe(
      Known({2}), Known({3}),
      [](TF_ShapeInferenceContext* ctx, TF_Status*) {
        Status st;
        TF_ShapeInferenceContextGetInput(ctx, 0, nullptr, st.s);
        EXPECT_EQ(st.code(), TF_INVALID_ARGUMENT);
        Handle x;
        TF_ShapeInferenceContextWithRank(ctx, x.h, 1, nullptr, st.s);
        EXPECT_EQ(st.code(), TF_INVALID_ARGUMENT);
        TF_ShapeInferenceContextConcatenateShapes(ctx, x.h, nullptr, x.h, st.s);
        EXPECT_EQ(st.code(), TF_INVALID_ARGUMENT);
        TF_ShapeInferenceContext_GetAttrType(ctx, nullptr, nullptr, st.s);
        EXPECT_EQ(st.code(), TF_INVALID_ARGUMENT);
      },
      &outer);
  EXPECT_EQ(outer.code(), TF_OK) << outer.message();
}

}  // namespace
