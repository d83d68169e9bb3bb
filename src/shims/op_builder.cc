// SPDX-License-Identifier: Apache-2.0
// TF_OpDefinitionBuilder (ops.h): a plugin defines an op from spec strings
// and registers it.
//
// Rules followed (tensorflow/c/ops.cc and OpDefBuilder):
//  - the builder only records; specs are parsed when the op is registered
//    (attrs first, so "x: T" can refer to an attr added after the input),
//    and the first bad spec fails the registration, named in the message;
//  - TF_RegisterOpDefinition takes ownership: it deletes the builder whether
//    or not registration succeeds, and reports through its status;
//  - TF_OpDefinitionBuilderSetIs{Commutative,Aggregate,Stateful} and
//    SetAllowsUninitializedInput set their flag whatever the bool says:
//    TensorFlow's implementation ignores the argument, so passing false
//    still marks the op. The shims keep that, as a plugin tested here must
//    behave the same under TensorFlow;
//  - an op without a shape function gets no shapes (InferShapes leaves its
//    outputs unknown).
// Deviation, deliberately: NULL builders and specs are ignored or reported
// instead of crashing; a NULL spec makes registration fail.
#include "shim_internal.h"

#include <string>
#include <utility>
#include <vector>

#include "op_def.h"
#include "tensorflow/c/ops.h"

struct TF_OpDefinitionBuilder {
  tfp_shims::OpDef def;  // flags, deprecation and shape function
  std::vector<std::string> attrs, inputs, outputs;
  std::string error;  // first misuse seen before registration (a NULL spec)
};

namespace {

void AddSpec(TF_OpDefinitionBuilder* b, std::vector<std::string>* specs, const char* what,
             const char* spec) {
  if (spec != nullptr) {
    specs->push_back(spec);
  } else if (b->error.empty()) {
    b->error = std::string("NULL ") + what + " spec";
  }
}

// Parses the recorded specs into b->def; false with *error naming the spec.
bool Build(TF_OpDefinitionBuilder* b, std::string* error) {
  if (!b->error.empty()) {
    *error = b->error;
    return false;
  }
  for (const auto& s : b->attrs) {
    b->def.attrs.emplace_back();
    if (!tfp_shims::ParseAttrSpec(s, &b->def.attrs.back(), error)) return false;
  }
  for (auto [specs, args] :
       {std::make_pair(&b->inputs, &b->def.inputs), std::make_pair(&b->outputs, &b->def.outputs)}) {
    for (const auto& s : *specs) {
      args->emplace_back();
      if (!tfp_shims::ParseArgSpec(s, &args->back(), error)) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" {

TFP_SHIM_IMPLEMENTED(TF_NewOpDefinitionBuilder);
TF_OpDefinitionBuilder* TF_NewOpDefinitionBuilder(const char* op_name) {
  auto* b = new TF_OpDefinitionBuilder();
  if (op_name != nullptr) {
    b->def.name = op_name;
  } else {
    b->error = "NULL op name";
  }
  return b;
}

TFP_SHIM_IMPLEMENTED(TF_DeleteOpDefinitionBuilder);
void TF_DeleteOpDefinitionBuilder(TF_OpDefinitionBuilder* builder) { delete builder; }

TFP_SHIM_IMPLEMENTED(TF_OpDefinitionBuilderAddAttr);
void TF_OpDefinitionBuilderAddAttr(TF_OpDefinitionBuilder* builder, const char* attr_spec) {
  if (builder != nullptr) AddSpec(builder, &builder->attrs, "attr", attr_spec);
}

TFP_SHIM_IMPLEMENTED(TF_OpDefinitionBuilderAddInput);
void TF_OpDefinitionBuilderAddInput(TF_OpDefinitionBuilder* builder, const char* input_spec) {
  if (builder != nullptr) AddSpec(builder, &builder->inputs, "input", input_spec);
}

TFP_SHIM_IMPLEMENTED(TF_OpDefinitionBuilderAddOutput);
void TF_OpDefinitionBuilderAddOutput(TF_OpDefinitionBuilder* builder, const char* output_spec) {
  if (builder != nullptr) AddSpec(builder, &builder->outputs, "output", output_spec);
}

// The bool is ignored, as by TensorFlow (see the top of this file).
TFP_SHIM_IMPLEMENTED(TF_OpDefinitionBuilderSetIsCommutative);
void TF_OpDefinitionBuilderSetIsCommutative(TF_OpDefinitionBuilder* builder, bool) {
  if (builder != nullptr) builder->def.is_commutative = true;
}

TFP_SHIM_IMPLEMENTED(TF_OpDefinitionBuilderSetIsAggregate);
void TF_OpDefinitionBuilderSetIsAggregate(TF_OpDefinitionBuilder* builder, bool) {
  if (builder != nullptr) builder->def.is_aggregate = true;
}

TFP_SHIM_IMPLEMENTED(TF_OpDefinitionBuilderSetIsStateful);
void TF_OpDefinitionBuilderSetIsStateful(TF_OpDefinitionBuilder* builder, bool) {
  if (builder != nullptr) builder->def.is_stateful = true;
}

TFP_SHIM_IMPLEMENTED(TF_OpDefinitionBuilderSetAllowsUninitializedInput);
void TF_OpDefinitionBuilderSetAllowsUninitializedInput(TF_OpDefinitionBuilder* builder, bool) {
  if (builder != nullptr) builder->def.allows_uninitialized_input = true;
}

TFP_SHIM_IMPLEMENTED(TF_OpDefinitionBuilderDeprecated);
void TF_OpDefinitionBuilderDeprecated(TF_OpDefinitionBuilder* builder, int version,
                                      const char* explanation) {
  if (builder == nullptr) return;
  builder->def.deprecated_version = version;
  builder->def.deprecation_explanation = explanation != nullptr ? explanation : "";
}

TFP_SHIM_IMPLEMENTED(TF_OpDefinitionBuilderSetShapeInferenceFunction);
void TF_OpDefinitionBuilderSetShapeInferenceFunction(
    TF_OpDefinitionBuilder* builder,
    void (*shape_inference_func)(TF_ShapeInferenceContext*, TF_Status*)) {
  if (builder != nullptr) builder->def.shape_fn = shape_inference_func;
}

TFP_SHIM_IMPLEMENTED(TF_RegisterOpDefinition);
void TF_RegisterOpDefinition(TF_OpDefinitionBuilder* builder, TF_Status* status) {
  if (builder == nullptr) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TF_RegisterOpDefinition: NULL builder");
    return;
  }
  std::string error;
  if (Build(builder, &error)) {
    tfp_shims::RegisterPluginOp(std::move(builder->def), status);
  } else {
    std::string msg = "TF_RegisterOpDefinition: op '" + builder->def.name + "': " + error;
    TF_SetStatus(status, TF_INVALID_ARGUMENT, msg.c_str());
  }
  delete builder;  // ownership passed to us, success or not
}

}  // extern "C"
