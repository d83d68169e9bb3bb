// SPDX-License-Identifier: Apache-2.0
// The op table: which generator makes each op's cases, for which dtypes.
#include <algorithm>
#include <string>
#include <vector>

#include "internal.h"

namespace tfp_conformance {

namespace {

using Generator = void (*)(const std::string&, TF_DataType, Size, internal::Rng&,
                           std::vector<Case>*);

struct OpEntry {
  const char* op;
  Generator generate;
  std::vector<TF_DataType> types;
};

const std::vector<OpEntry>& Table() {
  using namespace internal;
  const std::vector<TF_DataType> f = {TF_FLOAT};
  const std::vector<TF_DataType> fi = {TF_FLOAT, TF_INT32};
  const std::vector<TF_DataType> f16 = {TF_FLOAT, TF_BFLOAT16, TF_HALF};
  const std::vector<TF_DataType> f16i = {TF_FLOAT, TF_BFLOAT16, TF_HALF, TF_INT32};
  // Data movement: every type a model's tensors have.
  const std::vector<TF_DataType> all = {TF_FLOAT, TF_BFLOAT16, TF_HALF, TF_INT32, TF_INT64,
                                        TF_BOOL};
  static const std::vector<OpEntry> table = {
      {"AddV2", ElementwiseCases, f16i},
      {"Sub", ElementwiseCases, f16i},
      {"Mul", ElementwiseCases, f16i},
      {"RealDiv", ElementwiseCases, f16},
      {"Maximum", ElementwiseCases, f16i},
      {"Minimum", ElementwiseCases, f16i},
      {"SquaredDifference", ElementwiseCases, f16i},
      {"Relu", UnaryCases, f16i},
      {"Relu6", UnaryCases, f16i},
      {"Elu", UnaryCases, f16},
      {"Sigmoid", UnaryCases, f16},
      {"Tanh", UnaryCases, f16},
      {"Neg", UnaryCases, f16i},
      {"Exp", UnaryCases, f16},
      {"Log", UnaryCases, f16},
      {"Sqrt", UnaryCases, f16},
      {"Rsqrt", UnaryCases, f16},
      {"Square", UnaryCases, f16i},
      {"Identity", UnaryCases, all},
      {"ReluGrad", GradCases, f16},
      {"Relu6Grad", GradCases, f16},
      {"EluGrad", GradCases, f16},
      {"SigmoidGrad", GradCases, f16},
      {"TanhGrad", GradCases, f16},
      {"MatMul", MatMulCases, f16i},
      {"BatchMatMulV2", MatMulCases, f16i},
      {"BiasAdd", BiasCases, f16i},
      {"BiasAddGrad", BiasCases, f16i},
      {"Conv2D", ConvCases, f16},
      {"Conv2DBackpropInput", ConvCases, f16},
      {"Conv2DBackpropFilter", ConvCases, f16},
      {"MaxPool", PoolCases, f16},
      {"AvgPool", PoolCases, f16},
      {"MaxPoolGrad", PoolCases, f16},
      {"AvgPoolGrad", PoolCases, f16},
      {"Softmax", SoftmaxCases, f16},
      {"LogSoftmax", SoftmaxCases, f16},
      {"SoftmaxCrossEntropyWithLogits", SoftmaxCases, f16},
      {"SparseSoftmaxCrossEntropyWithLogits", SoftmaxCases, f16},
      {"Sum", ReduceCases, f16i},
      {"Mean", ReduceCases, f16i},
      {"Max", ReduceCases, f16i},
      {"Min", ReduceCases, f16i},
      {"Prod", ReduceCases, f16i},
      {"Cast", CastCases, {TF_FLOAT, TF_INT32, TF_INT64, TF_BFLOAT16, TF_HALF, TF_BOOL}},
      {"Fill", ShapeCases, all},
      {"ZerosLike", ShapeCases, all},
      {"OnesLike", ShapeCases, all},
      {"Reshape", ShapeCases, all},
      {"Squeeze", ShapeCases, all},
      {"ExpandDims", ShapeCases, all},
      {"Transpose", ShapeCases, all},
      {"ConcatV2", ShapeCases, all},
      {"Pack", ShapeCases, all},
      // In-place updates of resource variables.
      {"AssignAddVariableOp", VariableCases, f16},
      {"AssignSubVariableOp", VariableCases, f16},
      {"ResourceApplyGradientDescent", VariableCases, f},
      {"ResourceApplyAdam", VariableCases, f},
      {"ResourceApplyKerasMomentum", VariableCases, f},
      {"ResourceApplyMomentum", VariableCases, f},
      {"ResourceApplyRMSProp", VariableCases, f},
      {"ResourceApplyCenteredRMSProp", VariableCases, f},
      {"ResourceApplyAdagrad", VariableCases, f},
      {"ResourceApplyAdagradV2", VariableCases, f},
  };
  return table;
}

const OpEntry* Find(const std::string& op) {
  for (const OpEntry& e : Table()) {
    if (op == e.op) return &e;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> Ops() {
  std::vector<std::string> ops;
  for (const OpEntry& e : Table()) ops.push_back(e.op);
  std::sort(ops.begin(), ops.end());
  return ops;
}

std::string TypeAttr(const std::string& op) {
  if (op == "Cast") return "SrcT";
  if (op == "AssignAddVariableOp" || op == "AssignSubVariableOp") return "dtype";
  return "T";
}

std::vector<TF_DataType> Types(const std::string& op) {
  const OpEntry* e = Find(op);
  return e ? e->types : std::vector<TF_DataType>{};
}

std::vector<Case> Cases(const std::string& op, TF_DataType dtype, Size size, uint32_t seed) {
  const OpEntry* e = Find(op);
  std::vector<Case> cases;
  if (e == nullptr || std::find(e->types.begin(), e->types.end(), dtype) == e->types.end()) return cases;
  // One stream per (op, dtype, seed): an op's cases do not shift when
  // another op's change.
  uint64_t h = seed;
  for (char ch : op) h = h * 131 + static_cast<unsigned char>(ch);
  internal::Rng rng(h * 64 + static_cast<uint64_t>(dtype));
  e->generate(op, dtype, size, rng, &cases);
  return cases;
}

}  // namespace tfp_conformance
