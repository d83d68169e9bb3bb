// SPDX-License-Identifier: Apache-2.0
// Kernel conformance: for each op of a reference set, cases (inputs, attrs)
// with the outputs TensorFlow's semantics give (from src/reference), run
// through the host (tfplugin/host.h) and compared within stated
// tolerances. Shared by validate_plugin's kernels phase (Size::kSmall) and
// plugins' own kernel tests (tests/vacc).
//
// Link with `tfplugin_conformance_dep` (libtfplugin_conformance, static,
// hidden visibility) and the host (libtfplugin_shims).
#ifndef TFPLUGIN_CONFORMANCE_CONFORMANCE_H_
#define TFPLUGIN_CONFORMANCE_CONFORMANCE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tensorflow/c/tf_datatype.h"
#include "tfplugin/host.h"

namespace tfp_conformance {

using Shape = std::vector<int64_t>;

// A dense row-major host tensor: TF_FLOAT / TF_INT32 / TF_INT64 native,
// TF_BFLOAT16 / TF_HALF as their 16-bit encodings, TF_BOOL one byte each.
struct HostTensor {
  TF_DataType dtype;
  Shape shape;
  std::vector<unsigned char> data;
};

// Pass iff |got-want| <= abs + rel*|want|; NaN must match NaN, +-inf must
// match exactly. `text` says it for humans: "|error| <= 1e-05 + 1e-05*|want|".
struct Tolerance {
  double abs = 0, rel = 0;
  std::string text;
};

// kSmall: fast, for validate_plugin. kLarge: adds large and odd shapes
// (1000+ element tensors, 67x129 matmuls, ...) and extreme values (inf,
// NaN, the type's largest and smallest normal, -0) where the op's result is
// defined.
enum class Size { kSmall, kLarge };

struct Case {
  std::string op;    // "Conv2D"
  std::string what;  // "Conv2D(x[1,5,5,3], w[3,3,3,2], strides=[1,2,2,1], padding=SAME)"
  // Set with tfp_op_set_attr (text form: "true", "[1,2,2,1]", "SAME", "float").
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> want;       // reference outputs 0..want.size()-1
  std::vector<Tolerance> tolerance;   // per output in `want`
  // Every type attr of the node and its value, given in `attrs` or inferred
  // from the inputs ({"T", float}, {"Tidx", int32}): to match a case with the
  // type constraints of registered kernels.
  std::vector<std::pair<std::string, TF_DataType>> type_attrs;
  // Inputs passed as resource variables (AssignAddVariableOp's `resource`,
  // ResourceApplyAdam's var, m and v): a variable on the device holding
  // that input's tensor, its DT_RESOURCE handle the op's input. Each is
  // compared after the run with want_variables[i] within
  // variable_tolerance[i] (i indexes `variables`).
  std::vector<size_t> variables;
  std::vector<HostTensor> want_variables;
  std::vector<Tolerance> variable_tolerance;
  // Holds a read of every variable across the run (tfp_variable_hold_read),
  // as TensorFlow does while a ReadVariableOp output is alive. The helpers
  // then make the kernel copy each buffer first (its copyFunc) and update
  // the copy; the held read must still have the initial value afterwards.
  bool hold_reads = false;
};

// Every op with cases, sorted.
std::vector<std::string> Ops();
// The op's type attr that Types and Cases mean: "T", "SrcT" for Cast,
// "dtype" for AssignAdd/SubVariableOp.
std::string TypeAttr(const std::string& op);
// Dtypes (of TypeAttr) with references for that op; empty for an unknown op.
std::vector<TF_DataType> Types(const std::string& op);
// Deterministic for a seed. Empty for an unknown op or dtype.
std::vector<Case> Cases(const std::string& op, TF_DataType dtype, Size size, uint32_t seed = 1);

struct Result {
  enum State { kPass, kMismatch, kRunFailed } state = kPass;
  // kMismatch: "max abs error .., max rel error ..; first bad element i of
  // n: got g, want w" (prefixed "output k: " for ops with several outputs)
  // or the shape/dtype difference; kRunFailed: what failed and its status.
  std::string detail;
  double max_abs = 0, max_rel = 0;  // over every checked element
  // Short forms for a report: kMismatch: the tolerance text (or dtype and
  // shape wanted) and the first bad element ("element 3 = 1.5") or the
  // dtype and shape got; kRunFailed: "a result" and the status.
  std::string want, got;
};

// Runs `c` on device `ordinal` through tfp_op_* (its variables through
// tfp_variable_*) and compares every output in c.want, then every variable.
Result Run(tfp_host* host, int ordinal, const Case& c);
// Compares one tensor (as Run does each output).
Result Compare(const HostTensor& got, const HostTensor& want, const Tolerance& tolerance);

// "float", "bfloat16", "half", "int32", "int64", "bool", else "dtype <n>".
std::string TypeName(TF_DataType dtype);
// "[2,1,5]", "[]".
std::string ShapeText(const Shape& shape);
// A tensor's element `i` as a double (any dtype above).
double Element(const HostTensor& t, int64_t i);

}  // namespace tfp_conformance

#endif  // TFPLUGIN_CONFORMANCE_CONFORMANCE_H_
