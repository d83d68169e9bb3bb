// SPDX-License-Identifier: Apache-2.0
// Running a case through the host and comparing its outputs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "conformance.h"
#include "reference.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

namespace tfp_conformance {

namespace {

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

Result Failed(const std::string& what, const std::string& status) {
  Result r;
  r.state = Result::kRunFailed;
  r.detail = what + ": " + status;
  r.want = "a result";
  r.got = status;
  return r;
}

// Owns what Run makes, whichever way it returns.
struct Resources {
  TF_Status* status = TF_NewStatus();
  tfp_op* op = nullptr;
  std::vector<tfp_variable*> variables;  // deleted after the op that uses them
  ~Resources() {
    tfp_op_delete(op);
    for (tfp_variable* v : variables) tfp_variable_delete(v);
    TF_DeleteStatus(status);
  }
  bool ok() const { return TF_GetCode(status) == TF_OK; }
  std::string text() const {
    return std::string("TF_Code ") + std::to_string(static_cast<int>(TF_GetCode(status))) + ": " + TF_Message(status);
  }
};

}  // namespace

Result Compare(const HostTensor& got, const HostTensor& want, const Tolerance& tolerance) {
  Result r;
  if (got.dtype != want.dtype || got.shape != want.shape) {
    r.state = Result::kMismatch;
    r.want = TypeName(want.dtype) + " " + ShapeText(want.shape);
    r.got = TypeName(got.dtype) + " " + ShapeText(got.shape);
    r.detail = "output of the wrong shape or type: " + r.got + ", want " + r.want;
    return r;
  }
  const int64_t n = tfp_reference::NumElements(want.shape);
  int64_t first_bad = -1;
  double bad_got = 0, bad_want = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double g = Element(got, i), w = Element(want, i);
    double err;
    bool pass;
    if (std::isnan(w) || std::isnan(g)) {
      pass = std::isnan(w) && std::isnan(g);
      err = pass ? 0 : INFINITY;
    } else if (std::isinf(w) || std::isinf(g)) {
      pass = g == w;
      err = pass ? 0 : INFINITY;
    } else {
      err = std::fabs(g - w);
      pass = err <= tolerance.abs + tolerance.rel * std::fabs(w);
    }
    r.max_abs = std::max(r.max_abs, err);
    if (w != 0 && !std::isinf(w)) r.max_rel = std::max(r.max_rel, err / std::fabs(w));
    if (!pass && first_bad < 0) first_bad = i, bad_got = g, bad_want = w;
  }
  if (first_bad < 0) return r;
  r.state = Result::kMismatch;
  r.detail = "max abs error " + Num(r.max_abs) + ", max rel error " + Num(r.max_rel) +
             "; first bad element " + std::to_string(first_bad) + " of " + std::to_string(n) +
             ": got " + Num(bad_got) + ", want " + Num(bad_want);
  r.want = tolerance.text;
  r.got = "element " + std::to_string(first_bad) + " = " + Num(bad_got);
  return r;
}

Result Run(tfp_host* host, int ordinal, const Case& c) {
  Resources res;
  res.op = tfp_op_new(host, c.op.c_str(), ordinal, res.status);
  if (res.op == nullptr) return Failed("tfp_op_new", res.text());
  for (const auto& [name, value] : c.attrs) {
    tfp_op_set_attr(res.op, name.c_str(), value.c_str(), res.status);
    if (!res.ok()) return Failed("setting attr " + name + "=" + value, res.text());
  }
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const HostTensor& t = c.inputs[i];
    TF_Tensor* in = TF_AllocateTensor(t.dtype, t.shape.data(), static_cast<int>(t.shape.size()), t.data.size());
    if (in == nullptr) return Failed("making an input tensor", "TF_AllocateTensor failed");
    if (!t.data.empty()) std::memcpy(TF_TensorData(in), t.data.data(), t.data.size());
    if (std::find(c.variables.begin(), c.variables.end(), i) == c.variables.end()) {
      tfp_op_add_input(res.op, in, res.status);
    } else {
      tfp_variable* v = tfp_variable_new(host, ordinal, in, res.status);
      if (v != nullptr) {
        res.variables.push_back(v);
        if (c.hold_reads) tfp_variable_hold_read(v, res.status);
        if (res.ok()) tfp_op_add_variable(res.op, v, res.status);
      }
    }
    TF_DeleteTensor(in);
    if (!res.ok()) return Failed("adding input " + std::to_string(i), res.text());
  }
  tfp_op_run(res.op, res.status);
  if (!res.ok()) return Failed("the kernel failed", res.text());
  if (c.hold_reads) {
    // The update must have gone to a copy: the read keeps the initial value.
    for (size_t k = 0; k < res.variables.size(); ++k) {
      TF_Tensor* held = tfp_variable_release_read(res.variables[k], res.status);
      if (held == nullptr) return Failed("releasing the held read", res.text());
      const HostTensor& initial = c.inputs[c.variables[k]];
      const bool kept = TF_TensorByteSize(held) == initial.data.size() &&
                        std::memcmp(TF_TensorData(held), initial.data.data(), initial.data.size()) == 0;
      TF_DeleteTensor(held);
      if (!kept) {
        Result r;
        r.state = Result::kMismatch;
        r.want = "the initial value";
        r.got = "a changed value";
        r.detail = "variable input " + std::to_string(c.variables[k]) +
                   ": a read held across the update changed (the update or the kernel's "
                   "copyFunc wrote to the buffer the read shares)";
        return r;
      }
    }
  }
  Result all;
  const size_t checked = c.want.size() + c.variables.size();
  for (size_t i = 0; i < checked; ++i) {
    const bool output = i < c.want.size();
    const size_t k = output ? i : i - c.want.size();
    TF_Tensor* variable_value = nullptr;
    const TF_Tensor* out;
    std::string name;
    if (output) {
      out = tfp_op_output(res.op, static_cast<int>(k));
      name = "output " + std::to_string(k);
    } else {
      out = variable_value = tfp_variable_read(res.variables[k], res.status);
      name = "variable input " + std::to_string(c.variables[k]);
    }
    if (out == nullptr) return Failed(name, output ? std::string("missing") : res.text());
    HostTensor got{TF_TensorType(out), {}, {}};
    for (int d = 0; d < TF_NumDims(out); ++d) got.shape.push_back(TF_Dim(out, d));
    const auto* bytes = static_cast<const unsigned char*>(TF_TensorData(out));
    got.data.assign(bytes, bytes + TF_TensorByteSize(out));
    TF_DeleteTensor(variable_value);
    Result r = output ? Compare(got, c.want[k], c.tolerance[k])
                      : Compare(got, c.want_variables[k], c.variable_tolerance[k]);
    all.max_abs = std::max(all.max_abs, r.max_abs);
    all.max_rel = std::max(all.max_rel, r.max_rel);
    if (r.state != Result::kPass && all.state == Result::kPass) {
      all.state = r.state;
      // Named when it could be another: several checked, or a variable.
      all.detail = (checked > 1 || !output ? name + ": " : "") + r.detail;
      all.want = r.want;
      all.got = r.got;
    }
  }
  return all;
}

}  // namespace tfp_conformance
