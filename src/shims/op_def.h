// SPDX-License-Identifier: Apache-2.0
// Op definitions: what TensorFlow's op registry knows about an op (its
// inputs, outputs and attrs). Two sources, one registry:
//  - the ops TensorFlow itself defines (MatMul, Conv2D, ...), from the table
//    measured out of a real TensorFlow (abi/ops), so a host can run a
//    plugin's kernel for a TF op knowing its signature and attr defaults;
//  - ops a plugin defines through ops.h (TF_NewOpDefinitionBuilder ...).
// A plugin-defined op of the same name as a built-in one is an error, as in
// TensorFlow.
#ifndef TFPLUGIN_SHIMS_OP_DEF_H_
#define TFPLUGIN_SHIMS_OP_DEF_H_

#include <string>
#include <vector>

#include "attr_value.h"
#include "tensorflow/c/tf_status.h"

struct TF_ShapeInferenceContext;

namespace tfp_shims {

// One input or output: "name: T", "name: N * T", "name: list_attr",
// "name: float", "name: Ref(T)".
struct ArgDef {
  std::string name;
  TF_DataType type = static_cast<TF_DataType>(0);  // fixed type, or 0
  std::string type_attr;       // "T" in "x: T"
  std::string number_attr;     // "N" in "x: N * T"
  std::string type_list_attr;  // "Tlist" in "x: Tlist"
  bool is_ref = false;
};

// One attr: "name: type", "name: type = default", "name: {float, int32}",
// "name: int >= 2".
struct AttrDef {
  std::string name;
  AttrValue::Kind kind = AttrValue::Kind::kNone;
  bool is_list = false;
  bool has_default = false;
  AttrValue default_value;
  std::vector<TF_DataType> allowed_types;   // empty: any
  std::vector<std::string> allowed_strings; // empty: any
  bool has_minimum = false;
  int64_t minimum = 0;
};

using ShapeFn = void (*)(TF_ShapeInferenceContext*, TF_Status*);

struct OpDef {
  std::string name;
  std::vector<ArgDef> inputs, outputs;
  std::vector<AttrDef> attrs;
  bool is_commutative = false, is_aggregate = false, is_stateful = false;
  bool allows_uninitialized_input = false;
  int deprecated_version = 0;
  std::string deprecation_explanation;
  ShapeFn shape_fn = nullptr;
  bool from_plugin = false;  // defined by a plugin, not built into TensorFlow
  int owner = 0;             // the host whose plugin defined it (Registrant())

  const AttrDef* FindAttr(const std::string& attr) const;
  // "MatMul(a: T, b: T) -> (product: T); T: {...}, transpose_a: bool = false"
  std::string Signature() const;
};

// Spec parsers, for the strings ops.h's builder functions take and the
// built-in table holds. False with *error naming what is wrong.
// An arg spec alone cannot tell "x: T" (a type attr) from "x: Tlist" (a
// list(type) attr): ParseArgSpec puts the name in type_attr and
// ValidateOpDef moves it to type_list_attr once the op's attrs are known.
bool ParseArgSpec(const std::string& spec, ArgDef* out, std::string* error);
bool ParseAttrSpec(const std::string& spec, AttrDef* out, std::string* error);
// Completes and checks a def as TensorFlow's op registration does: resolves
// arg type references, then checks names (op, args, attrs; no duplicates),
// that referenced attrs exist with the right type ("N" an int with a
// minimum >= 0), and that defaults satisfy allowed values and minimums.
bool ValidateOpDef(OpDef* op, std::string* error);

// The op `name`: a plugin-defined one, else TensorFlow's; NULL if unknown.
// The pointer stays valid until ResetPluginOps (built-in ops: forever).
const OpDef* LookupOp(const std::string& name);
// Registers a plugin-defined op (what TF_RegisterOpDefinition does). Fails
// (TF_ALREADY_EXISTS / TF_INVALID_ARGUMENT) on a duplicate or invalid def.
void RegisterPluginOp(OpDef def, TF_Status* status);
// Names of the plugin-defined ops, in registration order.
std::vector<std::string> PluginOpNames();
// ... of those host `owner`'s plugin defined.
std::vector<std::string> PluginOpNamesOf(int owner);
// Forgets the ops host `owner`'s plugin defined (the host unloads it: their
// shape functions point into the unloaded library).
void RemovePluginOpsOf(int owner);
// Forgets plugin-defined ops (a host unloading its plugin).
void ResetPluginOps();
// Release whose built-in op table is compiled in ("2.21").
const char* BuiltinOpsRelease();
// Names of TensorFlow's own ops in that table, sorted.
std::vector<std::string> BuiltinOpNames();

// A node's signature once its attrs are known: attrs completed with
// defaults, input and output dtypes expanded (a "N * T" arg becomes N
// entries). Type attrs the caller did not give are inferred from
// `input_types` where the op's inputs determine them, number attrs from the
// number of inputs, as TensorFlow's graph construction does.
struct NodeSignature {
  AttrMap attrs;
  std::vector<TF_DataType> input_types, output_types;
  std::vector<std::string> input_arg, output_arg;  // arg name per expanded index
};
// Fails with TF_INVALID_ARGUMENT naming the attr or input at fault (missing
// attr, type not allowed, wrong number of inputs, type mismatch).
bool ResolveNode(const OpDef& op, const AttrMap& given, const std::vector<TF_DataType>& input_types,
                 NodeSignature* out, TF_Status* status);

// Runs `op`'s shape function (if it has one) on known input shapes. Returns
// false (status set) if the function failed; *outputs gets one shape per
// output, unknown_rank where the function left it unset.
bool InferShapes(const OpDef& op, const NodeSignature& node, const std::vector<Shape>& input_shapes,
                 std::vector<Shape>* outputs, TF_Status* status);

}  // namespace tfp_shims

#endif  // TFPLUGIN_SHIMS_OP_DEF_H_
