// SPDX-License-Identifier: Apache-2.0
// Op definitions: spec and attr value parsing, the built-in op table,
// ResolveNode's attr inference and op registration through ops.h.
#include "shim_internal.h"  // first: the shims' view of the C API headers

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attr_value.h"
#include "op_def.h"
#include "tensorflow/c/ops.h"

namespace {

using tfp_shims::ArgDef;
using tfp_shims::AttrDef;
using tfp_shims::AttrMap;
using tfp_shims::AttrValue;
using tfp_shims::NodeSignature;
using tfp_shims::OpDef;
using Kind = AttrValue::Kind;

struct Status {
  TF_Status* s = TF_NewStatus();
  ~Status() { TF_DeleteStatus(s); }
  TF_Code code() const { return TF_GetCode(s); }
  std::string message() const { return TF_Message(s); }
};

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

AttrValue Parse(const std::string& text, Kind kind, bool is_list = false) {
  AttrValue v;
  std::string error;
  EXPECT_TRUE(tfp_shims::ParseAttrValue(text, kind, is_list, &v, &error)) << text << ": " << error;
  return v;
}

std::string ParseError(const std::string& text, Kind kind, bool is_list = false) {
  AttrValue v;
  std::string error;
  EXPECT_FALSE(tfp_shims::ParseAttrValue(text, kind, is_list, &v, &error)) << text;
  EXPECT_FALSE(error.empty()) << text;
  return error;
}

AttrValue TypeValue(TF_DataType dt) {
  AttrValue v;
  v.kind = Kind::kType;
  v.type = dt;
  return v;
}

AttrValue IntValue(int64_t i) {
  AttrValue v;
  v.kind = Kind::kInt;
  v.i = i;
  return v;
}

AttrValue StringValue(const std::string& s) {
  AttrValue v;
  v.kind = Kind::kString;
  v.s = s;
  return v;
}

const OpDef& Builtin(const std::string& name) {
  const OpDef* op = tfp_shims::LookupOp(name);
  EXPECT_NE(op, nullptr) << name;
  static const OpDef kEmpty;
  return op != nullptr ? *op : kEmpty;
}

// ------------------------------------------------------------- data types ---

TEST(DataType, NamesRoundTrip) {
  int named = 0;
  for (int i = 0; i < 64; ++i) {
    auto dt = static_cast<TF_DataType>(i);
    std::string name = tfp_shims::DataTypeName(dt);
    if (name == "invalid") continue;
    ++named;
    TF_DataType back;
    ASSERT_TRUE(tfp_shims::ParseDataType(name, &back)) << name;
    EXPECT_EQ(back, dt) << name;
    std::string upper = "DT_";
    for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    ASSERT_TRUE(tfp_shims::ParseDataType(upper, &back)) << upper;
    EXPECT_EQ(back, dt) << upper;
  }
  EXPECT_GE(named, 23);  // at least every type TensorFlow 2.5 had
  EXPECT_STREQ(tfp_shims::DataTypeName(TF_BFLOAT16), "bfloat16");
  EXPECT_STREQ(tfp_shims::DataTypeName(TF_HALF), "half");
  EXPECT_STREQ(tfp_shims::DataTypeName(static_cast<TF_DataType>(0)), "invalid");
  TF_DataType dt;
  EXPECT_FALSE(tfp_shims::ParseDataType("float32", &dt));  // Python's name, not TF's
  EXPECT_FALSE(tfp_shims::ParseDataType("DT_float", &dt));
  EXPECT_FALSE(tfp_shims::ParseDataType("", &dt));
}

TEST(AttrType, NamesRoundTrip) {
  for (Kind k : {Kind::kString, Kind::kInt, Kind::kFloat, Kind::kBool, Kind::kType, Kind::kShape,
                 Kind::kTensor, Kind::kFunc}) {
    for (bool list : {false, true}) {
      std::string name = tfp_shims::AttrTypeName(k, list);
      Kind kind = Kind::kNone;
      bool is_list = !list;
      ASSERT_TRUE(tfp_shims::ParseAttrType(name, &kind, &is_list)) << name;
      EXPECT_EQ(kind, k) << name;
      EXPECT_EQ(is_list, list) << name;
    }
  }
  EXPECT_EQ(tfp_shims::AttrTypeName(Kind::kShape, true), "list(shape)");
  Kind kind;
  bool is_list;
  for (const char* bad : {"floaty", "list(floaty)", "list(int", "list()", "", "List(int)"}) {
    EXPECT_FALSE(tfp_shims::ParseAttrType(bad, &kind, &is_list)) << bad;
  }
}

// ------------------------------------------------------------ attr values ---

TEST(AttrValue, CanonicalText) {
  struct Case {
    Kind kind;
    bool list;
    const char* in;
    const char* text;
  };
  const Case cases[] = {
      {Kind::kInt, false, "3", "3"},
      {Kind::kInt, false, " -17 ", "-17"},
      {Kind::kFloat, false, "0.0001", "0.0001"},
      {Kind::kFloat, false, "1e+01", "10"},  // shortest form that reads back
      {Kind::kFloat, false, "0.00001", "1e-05"},
      {Kind::kFloat, false, "1.33", "1.33"},
      {Kind::kFloat, false, "-inf", "-inf"},
      {Kind::kFloat, false, "nan", "nan"},
      {Kind::kBool, false, "true", "true"},
      {Kind::kType, false, "float", "DT_FLOAT"},
      {Kind::kType, false, "DT_INT32", "DT_INT32"},
      {Kind::kString, false, "'SAME'", "'SAME'"},
      {Kind::kString, false, "\"it's\"", "'it\\'s'"},
      {Kind::kString, false, "bare words", "'bare words'"},
      {Kind::kString, false, "'a|b\\n\\t\\\\'", "'a\\174b\\n\\t\\\\'"},
      {Kind::kString, false, "'\\x41\\102'", "'AB'"},
      {Kind::kString, false, "''", "''"},
      {Kind::kShape, false, "[2, ?]", "[2, ?]"},
      {Kind::kShape, false, "[-1,3]", "[?, 3]"},
      {Kind::kShape, false, "?", "?"},
      {Kind::kShape, false, "[]", "[]"},
      {Kind::kFunc, false, "'my_fn'", "'my_fn'"},
      {Kind::kInt, true, "[1, 2,3]", "[1, 2, 3]"},
      {Kind::kInt, true, "[ ]", "[]"},
      {Kind::kString, true, "['a', b , \"c\"]", "['a', 'b', 'c']"},
      {Kind::kType, true, "[float, DT_INT64]", "[DT_FLOAT, DT_INT64]"},
      {Kind::kShape, true, "[[2, 3], ?, []]", "[[2, 3], ?, []]"},
      {Kind::kBool, true, "[true, false]", "[true, false]"},
      {Kind::kFloat, true, "[0.75, 1]", "[0.75, 1]"},
      {Kind::kTensor, false, "Tensor(DT_UINT8, [4], [255, 0, 0, 255])",
       "Tensor(DT_UINT8, [4], [255, 0, 0, 255])"},
      {Kind::kTensor, false, "Tensor(int16, [], [-2])", "Tensor(DT_INT16, [], [-2])"},
      {Kind::kTensor, false, "Tensor(DT_FLOAT, [2, 1], [1.5, -0.25])",
       "Tensor(DT_FLOAT, [2, 1], [1.5, -0.25])"},
      {Kind::kTensor, false, "Tensor(DT_BOOL, [0], [])", "Tensor(DT_BOOL, [0], [])"},
      {Kind::kTensor, true, "[Tensor(DT_INT32, [], [1])]", "[Tensor(DT_INT32, [], [1])]"},
  };
  for (const auto& c : cases) {
    AttrValue v = Parse(c.in, c.kind, c.list);
    EXPECT_EQ(v.kind, c.kind);
    EXPECT_EQ(v.is_list, c.list);
    std::string text = tfp_shims::AttrValueText(v);
    EXPECT_EQ(text, c.text) << c.in;
    // The canonical text reads back to itself.
    EXPECT_EQ(tfp_shims::AttrValueText(Parse(text, c.kind, c.list)), text);
  }
}

TEST(AttrValue, ParsedValues) {
  EXPECT_EQ(Parse("-5", Kind::kInt).i, -5);
  EXPECT_EQ(Parse(std::to_string(std::numeric_limits<int64_t>::min()), Kind::kInt).i,
            std::numeric_limits<int64_t>::min());
  EXPECT_FLOAT_EQ(Parse("0.2", Kind::kFloat).f, 0.2f);
  EXPECT_TRUE(Parse("true", Kind::kBool).b);
  EXPECT_EQ(Parse("half", Kind::kType).type, TF_HALF);
  EXPECT_EQ(Parse("'x\\0y'", Kind::kString).s, std::string("x\0y", 3));

  AttrValue shape = Parse("[2, ?, 0]", Kind::kShape);
  EXPECT_FALSE(shape.shape.unknown_rank);
  EXPECT_EQ(shape.shape.dims, (std::vector<int64_t>{2, -1, 0}));
  EXPECT_TRUE(Parse("?", Kind::kShape).shape.unknown_rank);

  AttrValue list = Parse("[[1], ?]", Kind::kShape, true);
  ASSERT_EQ(list.ListSize(), 2);
  EXPECT_EQ(list.list_shape[0].dims, std::vector<int64_t>{1});
  EXPECT_TRUE(list.list_shape[1].unknown_rank);
  EXPECT_EQ(Parse("[]", Kind::kType, true).ListSize(), 0);
  EXPECT_EQ(Parse("3", Kind::kInt).ListSize(), -1);

  AttrValue t = Parse("Tensor(DT_INT16, [2], [-2, 258])", Kind::kTensor);
  EXPECT_EQ(t.tensor.dtype, TF_INT16);
  EXPECT_EQ(t.tensor.dims, std::vector<int64_t>{2});
  EXPECT_EQ(t.tensor.bytes, (std::vector<uint8_t>{0xfe, 0xff, 0x02, 0x01}));  // little-endian
  AttrValue f = Parse("Tensor(DT_FLOAT, [], [1])", Kind::kTensor);
  ASSERT_EQ(f.tensor.bytes.size(), sizeof(float));
  float one;
  std::memcpy(&one, f.tensor.bytes.data(), sizeof one);
  EXPECT_EQ(one, 1.0f);
}

TEST(AttrValue, Errors) {
  EXPECT_TRUE(Contains(ParseError("3.5", Kind::kInt), "3.5"));
  ParseError("", Kind::kInt);
  ParseError("99999999999999999999", Kind::kInt);
  ParseError("3 4", Kind::kInt);
  ParseError("one", Kind::kFloat);
  EXPECT_TRUE(Contains(ParseError("yes", Kind::kBool), "yes"));
  EXPECT_TRUE(Contains(ParseError("floaty", Kind::kType), "floaty"));
  ParseError("'abc", Kind::kString);
  ParseError("'a\\qb'", Kind::kString);
  ParseError("'abc' trailing", Kind::kString);
  ParseError("[2, -2]", Kind::kShape);
  ParseError("[2", Kind::kShape);
  ParseError("2", Kind::kShape);
  EXPECT_TRUE(Contains(ParseError("1, 2", Kind::kInt, true), "list(int)"));
  ParseError("[1, 2", Kind::kInt, true);
  ParseError("[1,, 2]", Kind::kInt, true);
  ParseError("[1, x]", Kind::kInt, true);
  EXPECT_TRUE(Contains(ParseError("Tensor(DT_INT32, [2], [1])", Kind::kTensor), "1 values for 2"));
  EXPECT_TRUE(Contains(ParseError("Tensor(DT_HALF, [], [1])", Kind::kTensor), "half"));
  ParseError("Tensor(DT_UINT8, [], [256])", Kind::kTensor);
  ParseError("Tensor(DT_INT8, [], [-129])", Kind::kTensor);
  ParseError("Tensor(DT_INT32, [-1], [])", Kind::kTensor);
  ParseError("Tensor(DT_INT32, [], [1]", Kind::kTensor);
  ParseError("3", Kind::kNone);
  // A failed parse leaves the output alone.
  AttrValue keep = IntValue(7);
  std::string error;
  EXPECT_FALSE(tfp_shims::ParseAttrValue("x", Kind::kInt, false, &keep, &error));
  EXPECT_EQ(keep.i, 7);
}

// ------------------------------------------------------------------ specs ---

TEST(ArgSpec, Forms) {
  ArgDef a;
  std::string error;
  ASSERT_TRUE(tfp_shims::ParseArgSpec("a: T", &a, &error)) << error;
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.type_attr, "T");
  EXPECT_EQ(static_cast<int>(a.type), 0);
  EXPECT_TRUE(a.number_attr.empty());
  EXPECT_FALSE(a.is_ref);

  ASSERT_TRUE(tfp_shims::ParseArgSpec("values:N*T", &a, &error)) << error;
  EXPECT_EQ(a.name, "values");
  EXPECT_EQ(a.number_attr, "N");
  EXPECT_EQ(a.type_attr, "T");

  ASSERT_TRUE(tfp_shims::ParseArgSpec("indices: N * int32", &a, &error)) << error;
  EXPECT_EQ(a.number_attr, "N");
  EXPECT_EQ(a.type, TF_INT32);
  EXPECT_TRUE(a.type_attr.empty());

  ASSERT_TRUE(tfp_shims::ParseArgSpec("x: float", &a, &error)) << error;
  EXPECT_EQ(a.type, TF_FLOAT);

  ASSERT_TRUE(tfp_shims::ParseArgSpec("ref: Ref(T)", &a, &error)) << error;
  EXPECT_TRUE(a.is_ref);
  EXPECT_EQ(a.type_attr, "T");

  ASSERT_TRUE(tfp_shims::ParseArgSpec("handle: Ref(string)", &a, &error)) << error;
  EXPECT_TRUE(a.is_ref);
  EXPECT_EQ(a.type, TF_STRING);
}

TEST(ArgSpec, Errors) {
  for (const char* bad : {"A: T", "x T", "x:", "x: T extra", "x: Ref(T", "x: N *", "x: * T",
                          "x: T-1", "", ": T", "x: 3 * T"}) {
    ArgDef a;
    std::string error;
    EXPECT_FALSE(tfp_shims::ParseArgSpec(bad, &a, &error)) << bad;
    EXPECT_TRUE(Contains(error, std::string("\"") + bad + "\"")) << error;
  }
}

TEST(AttrSpec, Forms) {
  AttrDef a;
  std::string error;
  ASSERT_TRUE(tfp_shims::ParseAttrSpec("T: type", &a, &error)) << error;
  EXPECT_EQ(a.kind, Kind::kType);
  EXPECT_FALSE(a.is_list || a.has_default || a.has_minimum);
  EXPECT_TRUE(a.allowed_types.empty());

  ASSERT_TRUE(tfp_shims::ParseAttrSpec("Tidx: {int32, int64} = DT_INT32", &a, &error)) << error;
  EXPECT_EQ(a.allowed_types, (std::vector<TF_DataType>{TF_INT32, TF_INT64}));
  ASSERT_TRUE(a.has_default);
  EXPECT_EQ(a.default_value.type, TF_INT32);

  ASSERT_TRUE(tfp_shims::ParseAttrSpec("data_format: {'NHWC', 'NCHW'} = 'NHWC'", &a, &error))
      << error;
  EXPECT_EQ(a.kind, Kind::kString);
  EXPECT_EQ(a.allowed_strings, (std::vector<std::string>{"NHWC", "NCHW"}));
  EXPECT_EQ(a.default_value.s, "NHWC");

  ASSERT_TRUE(tfp_shims::ParseAttrSpec("N: int >= 1", &a, &error)) << error;
  EXPECT_TRUE(a.has_minimum);
  EXPECT_EQ(a.minimum, 1);
  EXPECT_FALSE(a.has_default);

  ASSERT_TRUE(tfp_shims::ParseAttrSpec("key_index: int >= -2 = -1", &a, &error)) << error;
  EXPECT_EQ(a.minimum, -2);
  EXPECT_EQ(a.default_value.i, -1);

  ASSERT_TRUE(tfp_shims::ParseAttrSpec("dilations: list(int) = [1, 1, 1, 1]", &a, &error)) << error;
  EXPECT_TRUE(a.is_list);
  EXPECT_EQ(a.default_value.list_i, (std::vector<int64_t>{1, 1, 1, 1}));

  ASSERT_TRUE(tfp_shims::ParseAttrSpec("T: list({float, half}) >= 1", &a, &error)) << error;
  EXPECT_TRUE(a.is_list);
  EXPECT_EQ(a.kind, Kind::kType);
  EXPECT_EQ(a.allowed_types, (std::vector<TF_DataType>{TF_FLOAT, TF_HALF}));

  ASSERT_TRUE(tfp_shims::ParseAttrSpec("T: realnumbertype", &a, &error)) << error;
  EXPECT_EQ(a.kind, Kind::kType);
  EXPECT_NE(std::find(a.allowed_types.begin(), a.allowed_types.end(), TF_FLOAT),
            a.allowed_types.end());
  EXPECT_EQ(std::find(a.allowed_types.begin(), a.allowed_types.end(), TF_COMPLEX64),
            a.allowed_types.end());

  ASSERT_TRUE(tfp_shims::ParseAttrSpec("shape: shape = [?, 3]", &a, &error)) << error;
  EXPECT_EQ(a.default_value.shape.dims, (std::vector<int64_t>{-1, 3}));

  ASSERT_TRUE(tfp_shims::ParseAttrSpec("msg: string = 'a >= b = c'", &a, &error)) << error;
  EXPECT_EQ(a.default_value.s, "a >= b = c");
  EXPECT_FALSE(a.has_minimum);
}

TEST(AttrSpec, Errors) {
  struct Case {
    const char* spec;
    const char* says;
  };
  const Case cases[] = {
      {"T: floaty", "floaty"},
      {"T: {}", "empty"},
      {"T: {float, floaty}", "floaty"},
      {"T: {float", "}"},
      {"x: float >= 1", "minimum"},
      {"N: int >= 2 = 1", "minimum"},
      {"T: {float} = DT_INT32", "int32"},
      {"p: {'A', 'B'} = 'C'", "'C'"},
      {"x: int = abc", "abc"},
      {"x: list(int", "list("},
      {"x: int junk", "unexpected"},
      {"x: list(int) >= 2 = [1]", "minimum"},
      {"1x: int", "attr name"},
      {"x", "name: type"},
  };
  for (const auto& c : cases) {
    AttrDef a;
    std::string error;
    EXPECT_FALSE(tfp_shims::ParseAttrSpec(c.spec, &a, &error)) << c.spec;
    EXPECT_TRUE(Contains(error, std::string("\"") + c.spec + "\"")) << error;
    EXPECT_TRUE(Contains(error, c.says)) << c.spec << ": " << error;
  }
}

// ---------------------------------------------------------- built-in ops ---

TEST(BuiltinOps, TableIsSortedAndEveryOpParses) {
  EXPECT_GT(std::strlen(tfp_shims::BuiltinOpsRelease()), 2u);
  std::vector<std::string> names = tfp_shims::BuiltinOpNames();
  ASSERT_GT(names.size(), 1000u);  // TensorFlow has had well over a thousand since 2.0
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  int defaults = 0;
  for (const auto& name : names) {
    const OpDef* op = tfp_shims::LookupOp(name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_EQ(op->name, name);
    EXPECT_FALSE(op->from_plugin);
    // Built-in defaults survive a trip through their text.
    for (const auto& a : op->attrs) {
      if (!a.has_default) continue;
      ++defaults;
      std::string text = tfp_shims::AttrValueText(a.default_value);
      AttrValue back;
      std::string error;
      ASSERT_TRUE(tfp_shims::ParseAttrValue(text, a.kind, a.is_list, &back, &error))
          << name << ": " << error;
      EXPECT_EQ(tfp_shims::AttrValueText(back), text) << name << "." << a.name;
    }
  }
  EXPECT_GT(defaults, 1000);
}

TEST(BuiltinOps, LookupIsStableAndKnowsNoStrangers) {
  const OpDef* a = tfp_shims::LookupOp("MatMul");
  EXPECT_NE(a, nullptr);
  EXPECT_EQ(tfp_shims::LookupOp("MatMul"), a);
  EXPECT_EQ(tfp_shims::LookupOp("NoSuchOpAnywhere"), nullptr);
  EXPECT_EQ(tfp_shims::LookupOp(""), nullptr);
  EXPECT_EQ(tfp_shims::LookupOp("matmul"), nullptr);  // names are case-sensitive
}

TEST(BuiltinOps, MatMul) {
  const OpDef& op = Builtin("MatMul");
  ASSERT_EQ(op.inputs.size(), 2u);
  EXPECT_EQ(op.inputs[0].name, "a");
  EXPECT_EQ(op.inputs[0].type_attr, "T");
  EXPECT_EQ(op.inputs[1].name, "b");
  ASSERT_EQ(op.outputs.size(), 1u);
  EXPECT_EQ(op.outputs[0].name, "product");
  EXPECT_EQ(op.outputs[0].type_attr, "T");
  const AttrDef* t = op.FindAttr("T");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->kind, Kind::kType);
  EXPECT_NE(std::find(t->allowed_types.begin(), t->allowed_types.end(), TF_FLOAT),
            t->allowed_types.end());
  EXPECT_EQ(std::find(t->allowed_types.begin(), t->allowed_types.end(), TF_STRING),
            t->allowed_types.end());
  const AttrDef* ta = op.FindAttr("transpose_a");
  ASSERT_NE(ta, nullptr);
  EXPECT_EQ(ta->kind, Kind::kBool);
  ASSERT_TRUE(ta->has_default);
  EXPECT_FALSE(ta->default_value.b);
  EXPECT_EQ(op.FindAttr("transpose_c"), nullptr);
  EXPECT_FALSE(op.is_stateful || op.is_commutative || op.is_aggregate);
  EXPECT_EQ(op.Signature().rfind("MatMul(a: T, b: T) -> (product: T); ", 0), 0u) << op.Signature();
  EXPECT_TRUE(Contains(op.Signature(), "transpose_a: bool = false")) << op.Signature();
}

TEST(BuiltinOps, Conv2D) {
  const OpDef& op = Builtin("Conv2D");
  ASSERT_EQ(op.inputs.size(), 2u);
  EXPECT_EQ(op.inputs[1].name, "filter");
  const AttrDef* padding = op.FindAttr("padding");
  ASSERT_NE(padding, nullptr);
  EXPECT_EQ(padding->kind, Kind::kString);
  EXPECT_FALSE(padding->has_default);
  for (const char* p : {"SAME", "VALID"}) {
    EXPECT_NE(std::find(padding->allowed_strings.begin(), padding->allowed_strings.end(), p),
              padding->allowed_strings.end());
  }
  const AttrDef* strides = op.FindAttr("strides");
  ASSERT_NE(strides, nullptr);
  EXPECT_EQ(strides->kind, Kind::kInt);
  EXPECT_TRUE(strides->is_list);
  EXPECT_FALSE(strides->has_default);
  const AttrDef* fmt = op.FindAttr("data_format");
  ASSERT_NE(fmt, nullptr);
  ASSERT_TRUE(fmt->has_default);
  EXPECT_EQ(fmt->default_value.s, "NHWC");
  const AttrDef* dil = op.FindAttr("dilations");
  ASSERT_NE(dil, nullptr);
  EXPECT_EQ(dil->default_value.list_i, (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST(BuiltinOps, AddNAndConcatV2) {
  const OpDef& add_n = Builtin("AddN");
  ASSERT_EQ(add_n.inputs.size(), 1u);
  EXPECT_EQ(add_n.inputs[0].number_attr, "N");
  EXPECT_EQ(add_n.inputs[0].type_attr, "T");
  const AttrDef* n = add_n.FindAttr("N");
  ASSERT_NE(n, nullptr);
  EXPECT_TRUE(n->has_minimum);
  EXPECT_EQ(n->minimum, 1);
  EXPECT_TRUE(add_n.is_aggregate);
  EXPECT_TRUE(add_n.is_commutative);

  const OpDef& concat = Builtin("ConcatV2");
  ASSERT_EQ(concat.inputs.size(), 2u);
  EXPECT_EQ(concat.inputs[0].name, "values");
  EXPECT_EQ(concat.inputs[0].number_attr, "N");
  EXPECT_EQ(concat.inputs[1].name, "axis");
  EXPECT_EQ(concat.inputs[1].type_attr, "Tidx");
  const AttrDef* tidx = concat.FindAttr("Tidx");
  ASSERT_NE(tidx, nullptr);
  EXPECT_EQ(tidx->allowed_types, (std::vector<TF_DataType>{TF_INT32, TF_INT64}));
  ASSERT_TRUE(tidx->has_default);
  EXPECT_EQ(tidx->default_value.type, TF_INT32);
  EXPECT_EQ(concat.FindAttr("N")->minimum, 2);
}

TEST(BuiltinOps, TypeListAndRefArgsResolve) {
  const OpDef& identity_n = Builtin("IdentityN");
  ASSERT_EQ(identity_n.inputs.size(), 1u);
  EXPECT_EQ(identity_n.inputs[0].type_list_attr, "T");  // "input: T" with T a list(type)
  EXPECT_TRUE(identity_n.inputs[0].type_attr.empty());
  const OpDef& assign = Builtin("Assign");
  EXPECT_TRUE(assign.inputs[0].is_ref);
  EXPECT_FALSE(assign.inputs[1].is_ref);
  EXPECT_TRUE(assign.allows_uninitialized_input);
}

// ------------------------------------------------------------ ResolveNode ---

TEST(ResolveNode, InfersTypeAttrsAndFillsDefaults) {
  Status s;
  NodeSignature node;
  ASSERT_TRUE(tfp_shims::ResolveNode(Builtin("MatMul"), {}, {TF_FLOAT, TF_FLOAT}, &node, s.s))
      << s.message();
  EXPECT_EQ(s.code(), TF_OK);
  EXPECT_EQ(node.attrs.at("T").type, TF_FLOAT);
  EXPECT_FALSE(node.attrs.at("transpose_a").b);
  EXPECT_EQ(node.attrs.at("transpose_a").kind, Kind::kBool);
  EXPECT_EQ(node.input_types, (std::vector<TF_DataType>{TF_FLOAT, TF_FLOAT}));
  EXPECT_EQ(node.output_types, std::vector<TF_DataType>{TF_FLOAT});
  EXPECT_EQ(node.input_arg, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(node.output_arg, std::vector<std::string>{"product"});

  AttrMap given;
  given["transpose_b"] = Parse("true", Kind::kBool);
  ASSERT_TRUE(tfp_shims::ResolveNode(Builtin("MatMul"), given, {TF_HALF, TF_HALF}, &node, s.s));
  EXPECT_TRUE(node.attrs.at("transpose_b").b);
  EXPECT_EQ(node.output_types, std::vector<TF_DataType>{TF_HALF});
}

TEST(ResolveNode, InfersNumberAttrsFromInputCounts) {
  Status s;
  NodeSignature node;
  ASSERT_TRUE(
      tfp_shims::ResolveNode(Builtin("AddN"), {}, {TF_INT32, TF_INT32, TF_INT32}, &node, s.s))
      << s.message();
  EXPECT_EQ(node.attrs.at("N").i, 3);
  EXPECT_EQ(node.output_types, std::vector<TF_DataType>{TF_INT32});
  EXPECT_EQ(node.input_arg, (std::vector<std::string>{"inputs", "inputs", "inputs"}));

  ASSERT_TRUE(tfp_shims::ResolveNode(Builtin("ConcatV2"), {},
                                     {TF_FLOAT, TF_FLOAT, TF_FLOAT, TF_INT64}, &node, s.s))
      << s.message();
  EXPECT_EQ(node.attrs.at("N").i, 3);
  EXPECT_EQ(node.attrs.at("T").type, TF_FLOAT);
  EXPECT_EQ(node.attrs.at("Tidx").type, TF_INT64);  // the input overrides the default
  EXPECT_EQ(node.input_arg.back(), "axis");

  // Two args share N: four inputs are two each.
  ASSERT_TRUE(tfp_shims::ResolveNode(Builtin("DynamicStitch"), {},
                                     {TF_INT32, TF_INT32, TF_HALF, TF_HALF}, &node, s.s))
      << s.message();
  EXPECT_EQ(node.attrs.at("N").i, 2);
  EXPECT_EQ(node.attrs.at("T").type, TF_HALF);

  // A list(type) attr from the inputs, and the outputs it implies.
  ASSERT_TRUE(tfp_shims::ResolveNode(Builtin("IdentityN"), {}, {TF_FLOAT, TF_INT32}, &node, s.s))
      << s.message();
  EXPECT_EQ(node.attrs.at("T").list_type, (std::vector<TF_DataType>{TF_FLOAT, TF_INT32}));
  EXPECT_EQ(node.output_types, (std::vector<TF_DataType>{TF_FLOAT, TF_INT32}));

  // An output count no input determines comes from the attr.
  AttrMap given;
  given["num_split"] = IntValue(3);
  ASSERT_TRUE(tfp_shims::ResolveNode(Builtin("Split"), given, {TF_INT32, TF_FLOAT}, &node, s.s))
      << s.message();
  EXPECT_EQ(node.output_types, (std::vector<TF_DataType>{TF_FLOAT, TF_FLOAT, TF_FLOAT}));
}

TEST(ResolveNode, Errors) {
  struct Case {
    const char* op;
    AttrMap given;
    std::vector<TF_DataType> inputs;
    std::vector<const char*> says;
  };
  AttrMap t_float{{"T", TypeValue(TF_FLOAT)}};
  AttrMap bad_padding{{"strides", Parse("[1, 1, 1, 1]", Kind::kInt, true)},
                      {"padding", StringValue("FOO")}};
  AttrMap no_padding{{"strides", Parse("[1, 1, 1, 1]", Kind::kInt, true)}};
  const Case cases[] = {
      {"MatMul", t_float, {TF_FLOAT, TF_INT32}, {"'MatMul'", "input 'b' (#1)", "int32", "'T'"}},
      {"MatMul", {}, {TF_FLOAT, TF_INT32}, {"input 'b' (#1)", "int32", "float"}},
      {"MatMul", {}, {TF_STRING, TF_STRING}, {"attr 'T'", "string", "allowed"}},
      {"MatMul", {}, {TF_FLOAT}, {"takes 2 inputs, given 1"}},
      {"MatMul", {}, {TF_FLOAT, TF_FLOAT, TF_FLOAT}, {"takes 2 inputs, given 3"}},
      {"MatMul",
       {{"transpose_c", Parse("true", Kind::kBool)}},
       {TF_FLOAT, TF_FLOAT},
       {"no attr 'transpose_c'"}},
      {"MatMul", {{"T", IntValue(1)}}, {TF_FLOAT, TF_FLOAT}, {"attr 'T'", "type", "int"}},
      {"AddN", {}, {}, {"attr 'N'", "minimum 1"}},
      {"ConcatV2", {}, {TF_FLOAT, TF_INT32}, {"attr 'N'", "minimum 2"}},
      {"ConcatV2", {}, {}, {"inputs"}},
      {"DynamicStitch", {}, {TF_INT32, TF_INT32, TF_FLOAT}, {"'N'"}},
      {"DynamicStitch", {}, {TF_INT64, TF_FLOAT}, {"input 'indices' (#0)", "int64", "int32"}},
      {"Placeholder", {}, {}, {"attr 'dtype'"}},
      {"Conv2D", no_padding, {TF_FLOAT, TF_FLOAT}, {"attr 'padding'"}},
      {"Conv2D", bad_padding, {TF_FLOAT, TF_FLOAT}, {"attr 'padding'", "'FOO'", "'SAME'"}},
      {"Split", {}, {TF_INT32, TF_FLOAT}, {"attr 'num_split'"}},
      {"Split", {{"num_split", IntValue(-1)}}, {TF_INT32, TF_FLOAT}, {"num_split"}},
  };
  for (const auto& c : cases) {
    Status s;
    NodeSignature node;
    EXPECT_FALSE(tfp_shims::ResolveNode(Builtin(c.op), c.given, c.inputs, &node, s.s)) << c.op;
    EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT) << c.op;
    for (const char* says : c.says)
      EXPECT_TRUE(Contains(s.message(), says)) << c.op << ": " << s.message();
  }
}

// ------------------------------------------------- registration (ops.h) ---

void Register(TF_OpDefinitionBuilder* b, Status* s) { TF_RegisterOpDefinition(b, s->s); }

TEST(RegisterOp, ThroughTheCApi) {
  tfp_shims::ResetPluginOps();
  TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder("TfpTestScale");
  TF_OpDefinitionBuilderAddInput(b, "x: T");  // before its attr: specs are read at registration
  TF_OpDefinitionBuilderAddInput(b, "factor: float");
  TF_OpDefinitionBuilderAddOutput(b, "y: T");
  TF_OpDefinitionBuilderAddAttr(b, "T: {float, double} = DT_FLOAT");
  TF_OpDefinitionBuilderAddAttr(b, "mode: {'fast', 'exact'} = 'exact'");
  TF_OpDefinitionBuilderSetIsStateful(b, true);
  TF_OpDefinitionBuilderDeprecated(b, 42, "use TfpTestScale2");
  Status s;
  Register(b, &s);
  ASSERT_EQ(s.code(), TF_OK) << s.message();

  const OpDef* op = tfp_shims::LookupOp("TfpTestScale");
  ASSERT_NE(op, nullptr);
  EXPECT_TRUE(op->from_plugin);
  EXPECT_TRUE(op->is_stateful);
  EXPECT_FALSE(op->is_commutative);
  EXPECT_EQ(op->deprecated_version, 42);
  EXPECT_EQ(op->deprecation_explanation, "use TfpTestScale2");
  EXPECT_EQ(op->Signature(),
            "TfpTestScale(x: T, factor: float) -> (y: T); T: {float, double} = DT_FLOAT, "
            "mode: {'fast', 'exact'} = 'exact'");
  EXPECT_EQ(tfp_shims::PluginOpNames(), std::vector<std::string>{"TfpTestScale"});

  NodeSignature node;
  ASSERT_TRUE(tfp_shims::ResolveNode(*op, {}, {TF_DOUBLE, TF_FLOAT}, &node, s.s)) << s.message();
  EXPECT_EQ(node.output_types, std::vector<TF_DataType>{TF_DOUBLE});
  EXPECT_EQ(node.attrs.at("mode").s, "exact");

  tfp_shims::ResetPluginOps();
  EXPECT_EQ(tfp_shims::LookupOp("TfpTestScale"), nullptr);
  EXPECT_TRUE(tfp_shims::PluginOpNames().empty());
}

TEST(RegisterOp, FlagsAreSetWhateverTheBoolSays) {
  tfp_shims::ResetPluginOps();
  TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder("TfpTestFlags");
  TF_OpDefinitionBuilderSetIsCommutative(b, false);  // TensorFlow ignores the argument
  TF_OpDefinitionBuilderSetIsAggregate(b, false);
  TF_OpDefinitionBuilderSetAllowsUninitializedInput(b, false);
  Status s;
  Register(b, &s);
  ASSERT_EQ(s.code(), TF_OK) << s.message();
  const OpDef* op = tfp_shims::LookupOp("TfpTestFlags");
  ASSERT_NE(op, nullptr);
  EXPECT_TRUE(op->is_commutative);
  EXPECT_TRUE(op->is_aggregate);
  EXPECT_TRUE(op->allows_uninitialized_input);
  EXPECT_FALSE(op->is_stateful);
  tfp_shims::ResetPluginOps();
}

TEST(RegisterOp, ListArgsResolveAgainstAttrs) {
  tfp_shims::ResetPluginOps();
  TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder("TfpTestLists");
  TF_OpDefinitionBuilderAddAttr(b, "Tlist: list(type) >= 1");
  TF_OpDefinitionBuilderAddAttr(b, "N: int >= 0");
  TF_OpDefinitionBuilderAddInput(b, "xs: Tlist");
  TF_OpDefinitionBuilderAddInput(b, "ids: N * int64");
  TF_OpDefinitionBuilderAddOutput(b, "ys: Tlist");
  Status s;
  Register(b, &s);
  ASSERT_EQ(s.code(), TF_OK) << s.message();
  const OpDef* op = tfp_shims::LookupOp("TfpTestLists");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->inputs[0].type_list_attr, "Tlist");
  EXPECT_TRUE(op->inputs[0].type_attr.empty());
  EXPECT_EQ(op->outputs[0].type_list_attr, "Tlist");

  // Two lengths hang on two attrs: the inputs alone cannot say which is which.
  NodeSignature node;
  EXPECT_FALSE(tfp_shims::ResolveNode(*op, {}, {TF_FLOAT, TF_INT64}, &node, s.s));
  EXPECT_TRUE(Contains(s.message(), "'N'") && Contains(s.message(), "'Tlist'")) << s.message();
  AttrMap given{{"N", IntValue(1)}};
  ASSERT_TRUE(tfp_shims::ResolveNode(*op, given, {TF_FLOAT, TF_HALF, TF_INT64}, &node, s.s))
      << s.message();
  EXPECT_EQ(node.attrs.at("Tlist").list_type, (std::vector<TF_DataType>{TF_FLOAT, TF_HALF}));
  EXPECT_EQ(node.output_types, (std::vector<TF_DataType>{TF_FLOAT, TF_HALF}));
  tfp_shims::ResetPluginOps();
}

TEST(RegisterOp, DuplicatesAreRejected) {
  tfp_shims::ResetPluginOps();
  Status s;
  Register(TF_NewOpDefinitionBuilder("TfpTestTwice"), &s);
  ASSERT_EQ(s.code(), TF_OK) << s.message();
  Register(TF_NewOpDefinitionBuilder("TfpTestTwice"), &s);
  EXPECT_EQ(s.code(), TF_ALREADY_EXISTS);
  EXPECT_TRUE(Contains(s.message(), "'TfpTestTwice'")) << s.message();
  EXPECT_EQ(tfp_shims::PluginOpNames(), std::vector<std::string>{"TfpTestTwice"});

  TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder("MatMul");
  TF_OpDefinitionBuilderAddInput(b, "x: float");
  Register(b, &s);
  EXPECT_EQ(s.code(), TF_ALREADY_EXISTS);
  EXPECT_TRUE(Contains(s.message(), "TensorFlow")) << s.message();
  EXPECT_FALSE(tfp_shims::LookupOp("MatMul")->from_plugin);
  tfp_shims::ResetPluginOps();
}

TEST(RegisterOp, BadDefinitionsNameTheProblem) {
  tfp_shims::ResetPluginOps();
  struct Case {
    const char* name;
    std::vector<const char*> attrs, inputs, outputs;
    std::vector<const char*> says;
  };
  const Case cases[] = {
      {"TfpTestBad", {"T: floaty"}, {"x: T"}, {}, {"'TfpTestBad'", "\"T: floaty\"", "floaty"}},
      {"TfpTestBad", {}, {"X: float"}, {}, {"\"X: float\""}},
      {"TfpTestBad", {}, {}, {"y: U"}, {"output 'y'", "'U'"}},
      {"TfpTestBad", {"N: int"}, {"x: N * float"}, {}, {"'N'", "minimum"}},
      {"TfpTestBad", {"N: float"}, {"x: N * float"}, {}, {"'N'", "float"}},
      {"TfpTestBad", {"T: int"}, {"x: T"}, {}, {"'T'", "int"}},
      {"TfpTestBad", {"T: list(type)"}, {"x: N * T"}, {}, {"list(type)"}},
      {"TfpTestBad", {"T: type"}, {"x: T", "x: T"}, {}, {"duplicate", "'x'"}},
      {"TfpTestBad", {"T: type", "T: int"}, {}, {}, {"duplicate", "'T'"}},
      {"TfpTestBad", {"x: type"}, {"x: x"}, {}, {"duplicate", "'x'"}},
      {"lowercase", {}, {}, {}, {"'lowercase'", "op name"}},
      {"", {}, {}, {}, {"op name"}},
  };
  for (const auto& c : cases) {
    TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder(c.name);
    for (const char* a : c.attrs) TF_OpDefinitionBuilderAddAttr(b, a);
    for (const char* i : c.inputs) TF_OpDefinitionBuilderAddInput(b, i);
    for (const char* o : c.outputs) TF_OpDefinitionBuilderAddOutput(b, o);
    Status s;
    Register(b, &s);
    EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT) << c.name;
    for (const char* says : c.says) EXPECT_TRUE(Contains(s.message(), says)) << s.message();
  }
  EXPECT_TRUE(tfp_shims::PluginOpNames().empty());
}

TEST(RegisterOp, NullsDoNotCrash) {
  tfp_shims::ResetPluginOps();
  Status s;
  TF_RegisterOpDefinition(nullptr, s.s);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);

  TF_OpDefinitionBuilderAddAttr(nullptr, "T: type");
  TF_OpDefinitionBuilderAddInput(nullptr, "x: T");
  TF_OpDefinitionBuilderAddOutput(nullptr, "y: T");
  TF_OpDefinitionBuilderSetIsStateful(nullptr, true);
  TF_OpDefinitionBuilderDeprecated(nullptr, 1, nullptr);
  TF_OpDefinitionBuilderSetShapeInferenceFunction(nullptr, nullptr);
  TF_DeleteOpDefinitionBuilder(nullptr);

  TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder("TfpTestNullSpec");
  TF_OpDefinitionBuilderAddInput(b, nullptr);
  TF_OpDefinitionBuilderDeprecated(b, 3, nullptr);
  Register(b, &s);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(s.message(), "NULL input spec")) << s.message();

  Register(TF_NewOpDefinitionBuilder(nullptr), &s);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(s.message(), "NULL op name")) << s.message();

  // Registration with nowhere to report still registers.
  TF_RegisterOpDefinition(TF_NewOpDefinitionBuilder("TfpTestNoStatus"), nullptr);
  EXPECT_NE(tfp_shims::LookupOp("TfpTestNoStatus"), nullptr);

  // A builder that is never registered is deleted by its owner.
  TF_OpDefinitionBuilder* unused = TF_NewOpDefinitionBuilder("TfpTestUnused");
  TF_OpDefinitionBuilderAddAttr(unused, "T: type");
  TF_DeleteOpDefinitionBuilder(unused);
  EXPECT_EQ(tfp_shims::LookupOp("TfpTestUnused"), nullptr);
  tfp_shims::ResetPluginOps();
}

TEST(RegisterOp, PluginOpNamesKeepRegistrationOrder) {
  tfp_shims::ResetPluginOps();
  Status s;
  for (const char* name : {"TfpTestZeta", "TfpTestAlpha", "TfpTestMid"}) {
    Register(TF_NewOpDefinitionBuilder(name), &s);
    ASSERT_EQ(s.code(), TF_OK) << s.message();
  }
  EXPECT_EQ(tfp_shims::PluginOpNames(),
            (std::vector<std::string>{"TfpTestZeta", "TfpTestAlpha", "TfpTestMid"}));
  tfp_shims::ResetPluginOps();
}

}  // namespace
