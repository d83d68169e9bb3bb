// SPDX-License-Identifier: Apache-2.0
//
// Every kernel libvacc.so registers, run through the SDK host the way
// TensorFlow runs it (inputs copied to the device, the kernel enqueued on a
// stream, outputs copied back) and compared with the SDK's conformance oracle
// (src/conformance: cases and tolerances per op and dtype, references in
// src/reference), with the large case set: odd and large shapes,
// broadcasting, empty tensors, extreme values.
//
// Meson runs this program once per VACC_SIMD value (the plain scalar bodies,
// Highway's best target, and each target by name). A target this CPU or build
// lacks makes SE_InitPlugin fail with "is not available": the program then
// exits 77, which meson reports as skipped, with the reason printed.
//
// Also checked: every op the example must provide (issue list in kRequired)
// is registered for float32, and every registered (op, dtype) has cases in
// the oracle, so a kernel can never be shipped unchecked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "conformance.h"
#include "tensorflow/c/tf_status.h"
#include "tfplugin/host.h"
#include "tfplugin_shims.h"

namespace {

tfp_host* g_host = nullptr;

// (op, dtype) pairs the plugin registers for its own device type.
std::map<std::string, std::set<TF_DataType>> RegisteredKernels(tfp_host* host) {
  std::map<std::string, std::set<TF_DataType>> out;
  const std::string type = tfp_host_platform_type(host);
  for (int i = 0; i < tfp_host_kernel_count(host); ++i) {
    tfp_kernel_info k{};
    k.struct_size = TFP_KERNEL_INFO_STRUCT_SIZE;
    if (tfp_host_kernel_info(host, i, &k) != 0 || type != k.device_type) continue;
    // The dtype the oracle's cases are indexed by is the op's main type attr
    // (T for most ops, SrcT for Cast); a kernel without it is float32.
    const std::string type_attr = tfp_conformance::TypeAttr(k.op);
    bool constrained = false;
    for (int c = 0; c < k.num_type_constraints; ++c) {
      if (type_attr == k.constraint_attrs[c]) {
        out[k.op].insert(k.constraint_types[c]);
        constrained = true;
      }
    }
    if (!constrained) out[k.op].insert(TF_FLOAT);
  }
  return out;
}

// The ops issue 6 asks the example to provide (float32), forward and grads.
const char* const kRequired[] = {
    "MatMul", "BatchMatMulV2", "BiasAdd", "BiasAddGrad", "Conv2D", "Conv2DBackpropInput",
    "Conv2DBackpropFilter", "MaxPool", "AvgPool", "MaxPoolGrad", "AvgPoolGrad", "Relu", "Relu6",
    "Elu", "Sigmoid", "Tanh", "ReluGrad", "Relu6Grad", "EluGrad", "SigmoidGrad", "TanhGrad",
    "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference", "Neg", "Exp",
    "Log", "Sqrt", "Rsqrt", "Square", "Softmax", "LogSoftmax", "SoftmaxCrossEntropyWithLogits",
    "SparseSoftmaxCrossEntropyWithLogits", "Sum", "Mean", "Max", "Min", "Prod", "Cast",
    "Identity", "Fill", "ZerosLike", "OnesLike", "Reshape", "Squeeze", "ExpandDims",
    "Transpose", "ConcatV2", "Pack"};

// The variable kernels, registered exactly where the emulated release
// exports TensorFlow's variable helpers (2.6-2.18).
const char* const kVariableOps[] = {"AssignAddVariableOp", "AssignSubVariableOp",
                                    "ResourceApplyGradientDescent", "ResourceApplyAdam",
                                    "ResourceApplyMomentum", "ResourceApplyKerasMomentum",
                                    "ResourceApplyRMSProp", "ResourceApplyCenteredRMSProp",
                                    "ResourceApplyAdagrad", "ResourceApplyAdagradV2"};

class KernelCases : public testing::Test {
 public:
  KernelCases(std::string op, TF_DataType dtype) : op_(std::move(op)), dtype_(dtype) {}
  void TestBody() override {
    const auto cases = tfp_conformance::Cases(op_, dtype_, tfp_conformance::Size::kLarge);
    ASSERT_FALSE(cases.empty()) << "the oracle has no cases for " << op_;
    int failed = 0;
    for (const auto& c : cases) {
      const tfp_conformance::Result r = tfp_conformance::Run(g_host, 0, c);
      if (r.state == tfp_conformance::Result::kPass) continue;
      ++failed;
      ADD_FAILURE() << c.what << ": "
                    << (r.state == tfp_conformance::Result::kRunFailed ? "run failed: " : "mismatch: ")
                    << r.detail
                    << (r.state == tfp_conformance::Result::kMismatch ? " (want " + r.want + ")" : "");
      if (failed >= 5) {
        ADD_FAILURE() << "further cases not run after 5 failures";
        return;
      }
    }
    std::printf("  %s: %zu cases\n", op_.c_str(), cases.size());
  }

 private:
  std::string op_;
  TF_DataType dtype_;
};


}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const char* path = std::getenv("TFP_VACC_PLUGIN");
  const char* simd = std::getenv("VACC_SIMD");
  if (path == nullptr) {
    std::fprintf(stderr, "TFP_VACC_PLUGIN is not set (meson test sets it)\n");
    return 2;
  }
  tfp_host_options options{};
  options.struct_size = TFP_HOST_OPTIONS_STRUCT_SIZE;
  const char* release = std::getenv("TFP_TF_RELEASE");  // unset or empty: the newest
  options.tf_release = release != nullptr && *release != 0 ? release : nullptr;
  TF_Status* status = TF_NewStatus();
  g_host = tfp_host_open(path, &options, status);
  if (g_host == nullptr) {
    const std::string message = TF_Message(status);
    TF_DeleteStatus(status);
    if (message.find("is not available") != std::string::npos) {
      std::printf("skipped: VACC_SIMD=%s: %s\n", simd ? simd : "", message.c_str());
      return 77;
    }
    std::fprintf(stderr, "cannot open %s: %s\n", path, message.c_str());
    return 1;
  }
  TF_DeleteStatus(status);
  std::printf("VACC_SIMD=%s, emulating TensorFlow %s\n", simd ? simd : "(unset: best)",
              tfp_host_release(g_host));

  const auto registered = RegisteredKernels(g_host);
  const auto oracle_ops = tfp_conformance::Ops();
  const std::set<std::string> with_cases(oracle_ops.begin(), oracle_ops.end());
  for (const char* op : kRequired) {
    testing::RegisterTest("Coverage", (std::string("registered_float32_") + op).c_str(), nullptr,
                          nullptr, __FILE__, __LINE__, [op, &registered]() -> testing::Test* {
                            struct T : testing::Test {
                              std::string op;
                              bool ok;
                              void TestBody() override {
                                EXPECT_TRUE(ok) << op << " has no float32 kernel on VACC";
                              }
                            };
                            auto* t = new T;
                            t->op = op;
                            auto it = registered.find(op);
                            t->ok = it != registered.end() && it->second.count(TF_FLOAT) > 0;
                            return t;
                          });
  }
  const bool helpers = tfp_shims_exports("TF_AssignUpdateVariable") == 1;
  for (const char* op : kVariableOps) {
    const bool has = registered.count(op) > 0;
    const std::string name = std::string(helpers ? "registered_" : "not_registered_") + op;
    testing::RegisterTest("Coverage", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [op, has, helpers]() -> testing::Test* {
                            struct T : testing::Test {
                              std::string op;
                              bool has, helpers;
                              void TestBody() override {
                                EXPECT_EQ(has, helpers)
                                    << op << (has ? " is" : " is not") << " registered, but TensorFlow "
                                    << tfp_shims_release() << (helpers ? " exports" : " does not export")
                                    << " the variable helpers";
                              }
                            };
                            auto* t = new T;
                            t->op = op;
                            t->has = has;
                            t->helpers = helpers;
                            return t;
                          });
  }
  for (const auto& [op, types] : registered) {
    for (TF_DataType dtype : types) {
      const auto oracle_types = tfp_conformance::Types(op);
      const bool checked = with_cases.count(op) &&
                           std::find(oracle_types.begin(), oracle_types.end(), dtype) != oracle_types.end();
      const std::string name = op + "_" + tfp_conformance::TypeName(dtype);
      if (!checked) {
        testing::RegisterTest("Coverage", ("oracle_has_" + name).c_str(), nullptr, nullptr, __FILE__,
                              __LINE__, [name]() -> testing::Test* {
                                struct T : testing::Test {
                                  std::string name;
                                  void TestBody() override {
                                    ADD_FAILURE() << "vacc registers " << name
                                                  << " but src/conformance has no cases for it";
                                  }
                                };
                                auto* t = new T;
                                t->name = name;
                                return t;
                              });
        continue;
      }
      testing::RegisterTest("Kernel", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                            [op = op, dtype]() -> testing::Test* { return new KernelCases(op, dtype); });
    }
  }
  const int rc = RUN_ALL_TESTS();
  tfp_host_close(g_host);
  return rc;
}
