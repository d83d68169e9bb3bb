// SPDX-License-Identifier: Apache-2.0
// Cases for the kernels that update resource variables in place:
// AssignAddVariableOp, AssignSubVariableOp, ResourceApplyGradientDescent,
// ResourceApplyAdam, ResourceApplyMomentum, ResourceApplyKerasMomentum,
// ResourceApplyRMSProp, ResourceApplyCenteredRMSProp, ResourceApplyAdagrad,
// ResourceApplyAdagradV2.
// Their variable inputs are passed as variables (the host's tfp_variable, a
// DT_RESOURCE handle in host memory) and checked by value after the run;
// the ops have no outputs.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "internal.h"

namespace tfp_conformance {
namespace internal {

namespace {

std::vector<Shape> VariableShapes(Size size) {
  // A scalar, empty, a single element, shorter and longer than any SIMD
  // vector, and (large) several of a plugin's work chunks with a ragged end.
  std::vector<Shape> shapes = {{}, {0}, {1}, {7}, {3, 5}, {2, 3, 4}};
  if (size == Size::kLarge) shapes.insert(shapes.end(), {{67, 129}, {257, 129}});
  return shapes;
}

// A scalar input of `dtype` holding v (rounded as the kernel sees it).
HostTensor Scalar(TF_DataType dtype, double v) { return Encode(dtype, ref::Tensor{{}, {v}}); }

// Marks inputs `indices` as variables, wanting `values` after the run.
void WantVariables(Case* c, TF_DataType dtype, const std::vector<size_t>& indices,
                   const std::vector<ref::Tensor>& values, const Tolerance& tolerance) {
  c->variables = indices;
  for (const ref::Tensor& t : values) {
    c->want_variables.push_back(Encode(dtype, t));
    c->variable_tolerance.push_back(tolerance);
  }
}

void AssignUpdateCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
                       std::vector<Case>* out) {
  const bool add = op == "AssignAddVariableOp";
  for (const Shape& s : VariableShapes(size)) {
    Case k = NewCase(op, op + "(resource " + ShapeText(s) + ", value " + ShapeText(s) + ")", "dtype", dtype);
    k.inputs = {Encode(dtype, Random(rng, dtype, s)), Encode(dtype, Random(rng, dtype, s))};
    ref::Tensor want;
    ref::BinaryOp(add ? ref::Binary::kAdd : ref::Binary::kSub, Decode(k.inputs[0]), Decode(k.inputs[1]), &want);
    WantVariables(&k, dtype, {0}, {want}, Elementwise(dtype));
    out->push_back(std::move(k));
  }
}

void GradientDescentCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
                          std::vector<Case>* out) {
  for (const Shape& s : VariableShapes(size)) {
    const double alpha = rng.Uniform(0.01, 0.5);
    Case k = NewCase(op, op + "(var " + ShapeText(s) + ", alpha, delta)", "T", dtype);
    k.inputs = {Encode(dtype, Random(rng, dtype, s)), Scalar(dtype, alpha),
                Encode(dtype, Random(rng, dtype, s))};
    ref::Tensor var = Decode(k.inputs[0]);
    ref::ApplyGradientDescent(&var, Decode(k.inputs[1]).v[0], Decode(k.inputs[2]));
    // Two roundings (a product and a difference), or one where they fuse.
    WantVariables(&k, dtype, {0}, {var}, Accumulated(dtype, 2));
    out->push_back(std::move(k));
  }
}

void AdamCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng, std::vector<Case>* out) {
  for (bool nesterov : {false, true}) {
    for (const Shape& s : VariableShapes(size)) {
      // A step t in 1..20 of betas 0.9 and 0.999 (Keras' defaults) or others.
      const double beta1 = rng.Uniform(0.8, 0.95), beta2 = rng.Uniform(0.99, 0.9995);
      const int64_t t = rng.Int(1, 20);
      ref::AdamParams p{std::pow(beta1, t), std::pow(beta2, t), rng.Uniform(0.001, 0.1), beta1, beta2,
                        1e-3 * rng.Uniform(0.001, 1), nesterov};
      Case k = NewCase(op, op + "(var " + ShapeText(s) + ", m, v, ..., grad" +
                               (nesterov ? ", use_nesterov=true)" : ")"), "T", dtype);
      k.attrs = {{"use_nesterov", nesterov ? "true" : "false"}};
      k.inputs = {Encode(dtype, Random(rng, dtype, s)), Encode(dtype, Random(rng, dtype, s, -1, 1)),
                  Encode(dtype, Random(rng, dtype, s, 0, 4)),  // v >= 0: a mean of squares
                  Scalar(dtype, p.beta1_power), Scalar(dtype, p.beta2_power),
                  Scalar(dtype, p.lr), Scalar(dtype, p.beta1), Scalar(dtype, p.beta2),
                  Scalar(dtype, p.epsilon), Encode(dtype, Random(rng, dtype, s))};
      // The reference uses the scalars as the kernel sees them (rounded).
      p = {Decode(k.inputs[3]).v[0], Decode(k.inputs[4]).v[0], Decode(k.inputs[5]).v[0],
           Decode(k.inputs[6]).v[0], Decode(k.inputs[7]).v[0], Decode(k.inputs[8]).v[0], nesterov};
      ref::Tensor var = Decode(k.inputs[0]), m = Decode(k.inputs[1]), v = Decode(k.inputs[2]);
      ref::ApplyAdam(&var, &m, &v, p, Decode(k.inputs[9]));
      // m and v: one update each; var: a square root, a quotient and the
      // rate's own roundings (computed in T).
      WantVariables(&k, dtype, {0, 1, 2}, {var, m, v}, Transcendental(dtype));
      out->push_back(std::move(k));
    }
  }
}

void MomentumCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
                   std::vector<Case>* out) {
  const bool keras = op == "ResourceApplyKerasMomentum";
  for (bool nesterov : {false, true}) {
    for (const Shape& s : VariableShapes(size)) {
      Case k = NewCase(op, op + "(var " + ShapeText(s) + ", accum, lr, grad, momentum" +
                               (nesterov ? ", use_nesterov=true)" : ")"), "T", dtype);
      k.attrs = {{"use_nesterov", nesterov ? "true" : "false"}};
      k.inputs = {Encode(dtype, Random(rng, dtype, s)), Encode(dtype, Random(rng, dtype, s, -1, 1)),
                  Scalar(dtype, rng.Uniform(0.001, 0.1)), Encode(dtype, Random(rng, dtype, s)),
                  Scalar(dtype, rng.Uniform(0.5, 0.99))};
      ref::Tensor var = Decode(k.inputs[0]), accum = Decode(k.inputs[1]);
      ref::ApplyMomentum(&var, &accum, Decode(k.inputs[2]).v[0], Decode(k.inputs[3]),
                         Decode(k.inputs[4]).v[0], nesterov, keras);
      // accum: a product and a sum (K = 2); var: up to two products and two
      // sums more (Nesterov), fused or not.
      WantVariables(&k, dtype, {0, 1}, {var, accum}, Accumulated(dtype, 4));
      out->push_back(std::move(k));
    }
  }
}

void RMSPropCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
                  std::vector<Case>* out) {
  const bool centered = op == "ResourceApplyCenteredRMSProp";
  for (const Shape& s : VariableShapes(size)) {
    Case k = NewCase(op, op + "(var " + ShapeText(s) + (centered ? ", mg" : "") +
                             ", ms, mom, lr, rho, momentum, epsilon, grad)",
                     "T", dtype);
    // ms in [1, 2] and mg in [-0.5, 0.5]: the centered root's argument
    // ms - mg^2 + epsilon stays above 0.75 * rho whatever grad is (the new
    // mg^2 is at most rho * mg^2 + (1 - rho) * grad^2).
    k.inputs = {Encode(dtype, Random(rng, dtype, s))};
    if (centered) k.inputs.push_back(Encode(dtype, Random(rng, dtype, s, -0.5, 0.5)));
    k.inputs.push_back(Encode(dtype, Random(rng, dtype, s, 1, 2)));
    k.inputs.push_back(Encode(dtype, Random(rng, dtype, s, -1, 1)));
    for (double v : {rng.Uniform(0.001, 0.1), rng.Uniform(0.8, 0.99), rng.Uniform(0, 0.9),
                     1e-3 * rng.Uniform(0.001, 1)}) {
      k.inputs.push_back(Scalar(dtype, v));
    }
    k.inputs.push_back(Encode(dtype, Random(rng, dtype, s)));
    const size_t v = centered ? 1 : 0;  // inputs after var shift by mg
    const ref::RMSPropParams p{Decode(k.inputs[3 + v]).v[0], Decode(k.inputs[4 + v]).v[0],
                               Decode(k.inputs[5 + v]).v[0], Decode(k.inputs[6 + v]).v[0]};
    ref::Tensor var = Decode(k.inputs[0]), ms = Decode(k.inputs[1 + v]),
                mom = Decode(k.inputs[2 + v]), mg;
    if (centered) mg = Decode(k.inputs[1]);
    ref::ApplyRMSProp(&var, &ms, &mom, centered ? &mg : nullptr, p, Decode(k.inputs[7 + v]));
    // ms and mg: one update each; mom and var: a square root and a quotient
    // (1 - rho is computed in T).
    if (centered) {
      WantVariables(&k, dtype, {0, 1, 2, 3}, {var, mg, ms, mom}, Transcendental(dtype));
    } else {
      WantVariables(&k, dtype, {0, 1, 2}, {var, ms, mom}, Transcendental(dtype));
    }
    out->push_back(std::move(k));
  }
}

void AdagradCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
                  std::vector<Case>* out) {
  const bool v2 = op == "ResourceApplyAdagradV2";
  for (bool update_slots : {true, false}) {
    for (const Shape& s : VariableShapes(size)) {
      Case k = NewCase(op, op + "(var " + ShapeText(s) + ", accum, lr" + (v2 ? ", epsilon" : "") +
                               ", grad" + (update_slots ? ")" : ", update_slots=false)"),
                       "T", dtype);
      k.attrs = {{"update_slots", update_slots ? "true" : "false"}};
      // accum > 0: a sum of squares since its initial value (Keras: 0.1).
      k.inputs = {Encode(dtype, Random(rng, dtype, s)), Encode(dtype, Random(rng, dtype, s, 0.1, 2)),
                  Scalar(dtype, rng.Uniform(0.001, 0.1))};
      if (v2) k.inputs.push_back(Scalar(dtype, 1e-3 * rng.Uniform(0.001, 1)));
      k.inputs.push_back(Encode(dtype, Random(rng, dtype, s)));
      ref::Tensor var = Decode(k.inputs[0]), accum = Decode(k.inputs[1]);
      ref::ApplyAdagrad(&var, &accum, Decode(k.inputs[2]).v[0], v2 ? Decode(k.inputs[3]).v[0] : 0,
                        Decode(k.inputs.back()), update_slots);
      // accum: one fused or two rounded operations; var: a square root and
      // a quotient.
      WantVariables(&k, dtype, {0, 1}, {var, accum}, Transcendental(dtype));
      out->push_back(std::move(k));
    }
  }
}

// Each case again with a read of its variables held, so the update takes
// the copy-on-write path (the kernel's copyFunc) as well as the in-place
// one. Not for empty variables: no buffer to share.
void WithReadsHeld(std::vector<Case>* cases) {
  const size_t in_place = cases->size();
  cases->reserve(2 * in_place);  // no reallocation under `c` below
  for (size_t i = 0; i < in_place; ++i) {
    const Case& c = (*cases)[i];
    if (ref::NumElements(c.inputs[c.variables[0]].shape) == 0) continue;
    Case held = c;
    held.hold_reads = true;
    held.what += ", a read held";
    cases->push_back(std::move(held));
  }
}

}  // namespace

void VariableCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
                   std::vector<Case>* out) {
  std::vector<Case> cases;
  if (op == "ResourceApplyGradientDescent") {
    GradientDescentCases(op, dtype, size, rng, &cases);
  } else if (op == "ResourceApplyAdam") {
    AdamCases(op, dtype, size, rng, &cases);
  } else if (op == "ResourceApplyMomentum" || op == "ResourceApplyKerasMomentum") {
    MomentumCases(op, dtype, size, rng, &cases);
  } else if (op == "ResourceApplyRMSProp" || op == "ResourceApplyCenteredRMSProp") {
    RMSPropCases(op, dtype, size, rng, &cases);
  } else if (op == "ResourceApplyAdagrad" || op == "ResourceApplyAdagradV2") {
    AdagradCases(op, dtype, size, rng, &cases);
  } else {
    AssignUpdateCases(op, dtype, size, rng, &cases);
  }
  WithReadsHeld(&cases);
  for (Case& c : cases) out->push_back(std::move(c));
}

}  // namespace internal
}  // namespace tfp_conformance
