// SPDX-License-Identifier: Apache-2.0
//
// vacc's variable kernels end to end through the SDK host emulating
// TensorFlow 2.18 (the last release that exports the variable helpers):
// several optimizer steps on the same variables against a loop written
// here, the errors TensorFlow would report (named by input and shape, the
// variable left as it was), and no variable kernels at all where the
// emulated release lacks the helpers. The values of one step are checked on
// every SIMD target by the conformance runs (vacc_conformance_*).
// Tolerance: float32 1e-5 relative to 1 + |want| over three steps.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "vacc_host_test_util.h"

namespace vacc_test {
namespace {

struct VariableDeleter {
  void operator()(tfp_variable* v) const { tfp_variable_delete(v); }
};
using VariablePtr = std::unique_ptr<tfp_variable, VariableDeleter>;

HostPtr OpenRelease(const char* release) {
  tfp_host_options options{};
  options.struct_size = TFP_HOST_OPTIONS_STRUCT_SIZE;
  options.tf_release = release;
  StatusPtr status;
  HostPtr host(tfp_host_open(PluginPath(), &options, status.s));
  EXPECT_EQ(status.code(), TF_OK) << status.message();
  return host;
}

template <typename T>
VariablePtr NewVariable(tfp_host* host, TF_DataType dtype, const std::vector<int64_t>& dims,
                        const std::vector<T>& values) {
  TensorPtr initial = MakeTensor(dtype, dims, values);
  StatusPtr status;
  VariablePtr v(tfp_variable_new(host, 0, initial.get(), status.s));
  EXPECT_EQ(status.code(), TF_OK) << status.message();
  return v;
}

std::vector<float> Read(tfp_variable* v) {
  StatusPtr status;
  TensorPtr t(tfp_variable_read(v, status.s));
  EXPECT_EQ(status.code(), TF_OK) << status.message();
  if (t == nullptr) return {};
  std::vector<float> out(TF_TensorByteSize(t.get()) / sizeof(float));
  std::memcpy(out.data(), TF_TensorData(t.get()), out.size() * sizeof(float));
  return out;
}

TensorPtr Scalar(float v) { return MakeTensor<float>(TF_FLOAT, {}, {v}); }

// One node: `variables` first (the op's leading resource inputs), then
// `inputs`. Returns the status; *message gets its text.
TF_Code RunWithVariables(tfp_host* host, const char* op_name, const std::vector<tfp_variable*>& variables,
            const std::vector<const TF_Tensor*>& inputs, std::string* message,
            const std::vector<std::pair<const char*, bool>>& bools = {}) {
  StatusPtr status;
  OpPtr op(tfp_op_new(host, op_name, 0, status.s));
  if (op == nullptr) {
    *message = status.message();
    return status.code();
  }
  for (const auto& [name, value] : bools) tfp_op_set_attr_bool(op.get(), name, value);
  for (tfp_variable* v : variables) {
    if (status.code() == TF_OK) tfp_op_add_variable(op.get(), v, status.s);
  }
  for (const TF_Tensor* t : inputs) {
    if (status.code() == TF_OK) tfp_op_add_input(op.get(), t, status.s);
  }
  if (status.code() == TF_OK) tfp_op_run(op.get(), status.s);
  *message = status.message();
  return status.code();
}

void ExpectNear(const std::vector<float>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::fabs(got[i] - want[i]), 1e-5 * (1 + std::fabs(want[i]))) << what << " [" << i << "]";
  }
}

TEST(VaccVariablesHost, AdamStepsKeepTheirStateAcrossRuns) {
  HostPtr host = OpenRelease("2.18");
  ASSERT_NE(host, nullptr);
  const size_t n = 37;
  std::vector<float> var0(n), grad(n);
  for (size_t i = 0; i < n; ++i) var0[i] = 0.05f * static_cast<float>(i) - 1, grad[i] = std::sin(1.0f * i);
  VariablePtr var = NewVariable(host.get(), TF_FLOAT, {37}, var0);
  VariablePtr m = NewVariable(host.get(), TF_FLOAT, {37}, std::vector<float>(n, 0));
  VariablePtr v = NewVariable(host.get(), TF_FLOAT, {37}, std::vector<float>(n, 0));
  TensorPtr g = MakeTensor(TF_FLOAT, {37}, grad);
  std::vector<double> want_var(var0.begin(), var0.end()), want_m(n), want_v(n);
  const double lr = 0.01, beta1 = 0.9, beta2 = 0.999, eps = 1e-7;
  for (int t = 1; t <= 3; ++t) {
    TensorPtr b1p = Scalar(std::pow(0.9f, t)), b2p = Scalar(std::pow(0.999f, t)), lr_t = Scalar(0.01f),
              b1 = Scalar(0.9f), b2 = Scalar(0.999f), e = Scalar(1e-7f);
    std::string message;
    ASSERT_EQ(RunWithVariables(host.get(), "ResourceApplyAdam", {var.get(), m.get(), v.get()},
                  {b1p.get(), b2p.get(), lr_t.get(), b1.get(), b2.get(), e.get(), g.get()}, &message,
                  {{"use_locking", t == 2}}),
              TF_OK)
        << message;
    const double rate = lr * std::sqrt(1 - std::pow(beta2, t)) / (1 - std::pow(beta1, t));
    for (size_t i = 0; i < n; ++i) {
      want_m[i] = beta1 * want_m[i] + (1 - beta1) * grad[i];
      want_v[i] = beta2 * want_v[i] + (1 - beta2) * grad[i] * grad[i];
      want_var[i] -= rate * want_m[i] / (std::sqrt(want_v[i]) + eps);
    }
  }
  ExpectNear(Read(m.get()), want_m, "m");
  ExpectNear(Read(v.get()), want_v, "v");
  ExpectNear(Read(var.get()), want_var, "var");
}

TEST(VaccVariablesHost, AssignAddThenSubThenGradientDescent) {
  HostPtr host = OpenRelease("2.18");
  ASSERT_NE(host, nullptr);
  VariablePtr var = NewVariable<float>(host.get(), TF_FLOAT, {2, 2}, {1, 2, 3, 4});
  TensorPtr value = MakeTensor<float>(TF_FLOAT, {2, 2}, {0.5f, -1, 2, 0});
  TensorPtr alpha = Scalar(0.5f), delta = MakeTensor<float>(TF_FLOAT, {2, 2}, {2, 4, -2, 8});
  std::string message;
  ASSERT_EQ(RunWithVariables(host.get(), "AssignAddVariableOp", {var.get()}, {value.get()}, &message), TF_OK) << message;
  ASSERT_EQ(RunWithVariables(host.get(), "AssignAddVariableOp", {var.get()}, {value.get()}, &message), TF_OK) << message;
  ASSERT_EQ(RunWithVariables(host.get(), "AssignSubVariableOp", {var.get()}, {value.get()}, &message), TF_OK) << message;
  EXPECT_EQ(Read(var.get()), (std::vector<float>{1.5f, 1, 5, 4}));
  ASSERT_EQ(RunWithVariables(host.get(), "ResourceApplyGradientDescent", {var.get()}, {alpha.get(), delta.get()}, &message),
            TF_OK)
      << message;
  EXPECT_EQ(Read(var.get()), (std::vector<float>{0.5f, -1, 6, 0}));
}

// A read held across the update (TensorFlow holds ReadVariableOp outputs)
// shares the variable's buffer: the helpers call vacc's copyFunc first, for
// both kinds of kernel (through TF_AssignUpdateVariable, and through the
// lock holder and TF_GetInputTensorFromVariable). The read keeps the old
// value; the update lands on the copy.
TEST(VaccVariablesHost, CopyOnWriteKeepsAHeldRead) {
  HostPtr host = OpenRelease("2.18");
  ASSERT_NE(host, nullptr);
  const size_t n = 1000;  // several vectors and a tail
  std::vector<float> initial(n), delta(n);
  for (size_t i = 0; i < n; ++i) initial[i] = static_cast<float>(i), delta[i] = 2.0f;
  VariablePtr var = NewVariable(host.get(), TF_FLOAT, {1000}, initial);
  TensorPtr value = MakeTensor(TF_FLOAT, {1000}, delta), alpha = Scalar(0.5f);
  struct Step {
    const char* op;
    std::vector<const TF_Tensor*> inputs;
    float shift;  // what the step adds to every element
  };
  const Step steps[] = {{"AssignAddVariableOp", {value.get()}, 2.0f},
                        {"ResourceApplyGradientDescent", {alpha.get(), value.get()}, -1.0f}};
  std::vector<float> before = initial;
  for (const Step& step : steps) {
    StatusPtr status;
    tfp_variable_hold_read(var.get(), status.s);
    ASSERT_EQ(status.code(), TF_OK) << status.message();
    std::string message;
    ASSERT_EQ(RunWithVariables(host.get(), step.op, {var.get()}, step.inputs, &message), TF_OK) << message;
    TensorPtr held(tfp_variable_release_read(var.get(), status.s));
    ASSERT_EQ(status.code(), TF_OK) << status.message();
    ASSERT_EQ(std::memcmp(TF_TensorData(held.get()), before.data(), n * sizeof(float)), 0)
        << step.op << ": the held read changed";
    for (float& x : before) x += step.shift;
    EXPECT_EQ(Read(var.get()), before) << step.op;
  }
}

TEST(VaccVariablesHost, ErrorsNameTheInputAndLeaveTheVariable) {
  HostPtr host = OpenRelease("2.18");
  ASSERT_NE(host, nullptr);
  const std::vector<float> initial = {1, 2, 3};
  VariablePtr var = NewVariable(host.get(), TF_FLOAT, {3}, initial);
  VariablePtr half = NewVariable<uint16_t>(host.get(), TF_HALF, {3}, {0x3c00, 0x3c00, 0x3c00});
  TensorPtr four = MakeTensor<float>(TF_FLOAT, {4}, {1, 1, 1, 1}), three = MakeTensor<float>(TF_FLOAT, {3}, {1, 1, 1});
  TensorPtr alpha = Scalar(0.5f), pair = MakeTensor<float>(TF_FLOAT, {2}, {1, 1});
  VariablePtr var3 = NewVariable<float>(host.get(), TF_FLOAT, {3}, {0, 0, 0});
  VariablePtr var4 = NewVariable<float>(host.get(), TF_FLOAT, {4}, {0, 0, 0, 0});
  struct Case {
    const char* op;
    std::vector<tfp_variable*> variables;
    std::vector<const TF_Tensor*> inputs;
    std::vector<std::string> expect;  // in the message
  };
  const Case cases[] = {
      {"AssignAddVariableOp", {var.get()}, {four.get()}, {"shape [3]", "shape [4]"}},
      {"AssignSubVariableOp", {var.get()}, {four.get()}, {"shape [3]", "shape [4]"}},
      {"ResourceApplyGradientDescent", {var.get()}, {pair.get(), three.get()}, {"alpha is not a scalar", "[2]"}},
      {"ResourceApplyGradientDescent", {var.get()}, {alpha.get(), four.get()},
       {"var and delta do not have the same shape", "[3] [4]"}},
      {"ResourceApplyGradientDescent", {half.get()}, {alpha.get(), three.get()},
       {"var is a half variable", "T is float"}},
      // var, accum; lr, grad, momentum
      {"ResourceApplyMomentum", {var.get(), var3.get()}, {alpha.get(), three.get(), pair.get()},
       {"momentum is not a scalar", "[2]"}},
      {"ResourceApplyKerasMomentum", {var.get(), var4.get()}, {alpha.get(), three.get(), alpha.get()},
       {"var and accum do not have the same shape", "[3] [4]"}},
      {"ResourceApplyKerasMomentum", {var.get(), var3.get()}, {pair.get(), three.get(), alpha.get()},
       {"lr is not a scalar", "[2]"}},
      // var, ms, mom (centered: var, mg, ms, mom); lr, rho, momentum, epsilon, grad
      {"ResourceApplyRMSProp", {var.get(), var3.get(), var4.get()},
       {alpha.get(), alpha.get(), alpha.get(), alpha.get(), three.get()},
       {"var and mom do not have the same shape", "[3] [4]"}},
      {"ResourceApplyCenteredRMSProp", {var.get(), var4.get(), var3.get(), var3.get()},
       {alpha.get(), alpha.get(), alpha.get(), alpha.get(), three.get()},
       {"var and mg do not have the same shape", "[3] [4]"}},
      {"ResourceApplyRMSProp", {var.get(), var3.get(), var3.get()},
       {alpha.get(), pair.get(), alpha.get(), alpha.get(), three.get()},
       {"rho is not a scalar", "[2]"}},
      // var, accum; lr, (V2: epsilon,) grad
      {"ResourceApplyAdagradV2", {var.get(), var3.get()}, {alpha.get(), pair.get(), three.get()},
       {"epsilon is not a scalar", "[2]"}},
      {"ResourceApplyAdagrad", {var.get(), var3.get()}, {alpha.get(), four.get()},
       {"var and grad do not have the same shape", "[3] [4]"}},
  };
  for (const Case& c : cases) {
    std::string message;
    EXPECT_EQ(RunWithVariables(host.get(), c.op, c.variables, c.inputs, &message), TF_INVALID_ARGUMENT) << c.op << ": " << message;
    for (const std::string& e : c.expect) EXPECT_NE(message.find(e), std::string::npos) << c.op << ": " << message;
  }
  EXPECT_EQ(Read(var.get()), initial);
  EXPECT_EQ(Read(var3.get()), std::vector<float>({0, 0, 0}));
}

// Two momentum steps on the same variables, values worked out by hand:
// accum 0 -> 1 -> 0.5 + 1 = 1.5 (momentum 0.5, grad 1); var -= 0.1 * accum.
TEST(VaccVariablesHost, MomentumStepsKeepTheirAccumulator) {
  HostPtr host = OpenRelease("2.18");
  ASSERT_NE(host, nullptr);
  VariablePtr var = NewVariable<float>(host.get(), TF_FLOAT, {2}, {1, 2});
  VariablePtr accum = NewVariable<float>(host.get(), TF_FLOAT, {2}, {0, 0});
  TensorPtr lr = Scalar(0.1f), grad = MakeTensor<float>(TF_FLOAT, {2}, {1, -1}), momentum = Scalar(0.5f);
  std::string message;
  for (int step = 0; step < 2; ++step) {
    ASSERT_EQ(RunWithVariables(host.get(), "ResourceApplyMomentum", {var.get(), accum.get()},
                               {lr.get(), grad.get(), momentum.get()}, &message),
              TF_OK)
        << message;
  }
  ExpectNear(Read(accum.get()), {1.5, -1.5}, "accum");
  ExpectNear(Read(var.get()), {1 - 0.1 - 0.15, 2 + 0.1 + 0.15}, "var");
  // Keras' form with Nesterov on the same variables: accum = 1.5 * 0.5 - 0.1
  // = 0.65; var += 0.65 * 0.5 - 0.1 = 0.225.
  ASSERT_EQ(RunWithVariables(host.get(), "ResourceApplyKerasMomentum", {var.get(), accum.get()},
                             {lr.get(), grad.get(), momentum.get()}, &message, {{"use_nesterov", true}}),
            TF_OK)
      << message;
  ExpectNear(Read(accum.get()), {0.65, -0.65}, "keras accum");
  ExpectNear(Read(var.get()), {0.75 + 0.225, 2.25 - 0.225}, "keras var");
}

// RMSProp steps, values worked out by hand: rho 0.5, momentum 0.5, lr 0.1,
// epsilon 0, grad +-1 on ms = 1 keep ms at 0.5 + 0.5 = 1, so mom is
// 0.1, then 0.05 + 0.1 = 0.15. A centered step after them: mg = 0.5 * 0 +
// 0.5 * 1 = 0.5, the root sqrt(1 - 0.25), mom = 0.075 + 0.1 / sqrt(0.75).
TEST(VaccVariablesHost, RMSPropStepsKeepTheirSlots) {
  HostPtr host = OpenRelease("2.18");
  ASSERT_NE(host, nullptr);
  VariablePtr var = NewVariable<float>(host.get(), TF_FLOAT, {2}, {1, 2});
  VariablePtr ms = NewVariable<float>(host.get(), TF_FLOAT, {2}, {1, 1});
  VariablePtr mom = NewVariable<float>(host.get(), TF_FLOAT, {2}, {0, 0});
  VariablePtr mg = NewVariable<float>(host.get(), TF_FLOAT, {2}, {0, 0});
  TensorPtr lr = Scalar(0.1f), half = Scalar(0.5f), zero = Scalar(0.0f);
  TensorPtr grad = MakeTensor<float>(TF_FLOAT, {2}, {1, -1});
  std::string message;
  for (int step = 0; step < 2; ++step) {
    ASSERT_EQ(RunWithVariables(host.get(), "ResourceApplyRMSProp", {var.get(), ms.get(), mom.get()},
                               {lr.get(), half.get(), half.get(), zero.get(), grad.get()}, &message),
              TF_OK)
        << message;
  }
  ExpectNear(Read(ms.get()), {1, 1}, "ms");
  ExpectNear(Read(mom.get()), {0.15, -0.15}, "mom");
  ExpectNear(Read(var.get()), {0.75, 2.25}, "var");
  ASSERT_EQ(RunWithVariables(host.get(), "ResourceApplyCenteredRMSProp",
                             {var.get(), mg.get(), ms.get(), mom.get()},
                             {lr.get(), half.get(), half.get(), zero.get(), grad.get()}, &message),
            TF_OK)
      << message;
  const double centered_mom = 0.075 + 0.1 / std::sqrt(0.75);
  ExpectNear(Read(mg.get()), {0.5, -0.5}, "mg");
  ExpectNear(Read(mom.get()), {centered_mom, -centered_mom}, "centered mom");
  ExpectNear(Read(var.get()), {0.75 - centered_mom, 2.25 + centered_mom}, "centered var");
}

// Adagrad steps by hand: accum 3 + 1 = 4, var -= 0.1 * 1 / 2; then V2 with
// epsilon 0.5: accum 5, var -= 0.1 / (sqrt(5) + 0.5); then without slot
// updates: accum stays 5, var -= 0.1 / sqrt(5).
TEST(VaccVariablesHost, AdagradStepsWithAndWithoutSlotUpdates) {
  HostPtr host = OpenRelease("2.18");
  ASSERT_NE(host, nullptr);
  VariablePtr var = NewVariable<float>(host.get(), TF_FLOAT, {2}, {1, 2});
  VariablePtr accum = NewVariable<float>(host.get(), TF_FLOAT, {2}, {3, 3});
  TensorPtr lr = Scalar(0.1f), epsilon = Scalar(0.5f);
  TensorPtr grad = MakeTensor<float>(TF_FLOAT, {2}, {1, -1});
  std::string message;
  ASSERT_EQ(RunWithVariables(host.get(), "ResourceApplyAdagrad", {var.get(), accum.get()},
                             {lr.get(), grad.get()}, &message),
            TF_OK)
      << message;
  ExpectNear(Read(accum.get()), {4, 4}, "accum");
  ExpectNear(Read(var.get()), {0.95, 2.05}, "var");
  ASSERT_EQ(RunWithVariables(host.get(), "ResourceApplyAdagradV2", {var.get(), accum.get()},
                             {lr.get(), epsilon.get(), grad.get()}, &message),
            TF_OK)
      << message;
  const double v2 = 0.1 / (std::sqrt(5.0) + 0.5), v1 = 0.1 / std::sqrt(5.0);
  ExpectNear(Read(accum.get()), {5, 5}, "V2 accum");
  ExpectNear(Read(var.get()), {0.95 - v2, 2.05 + v2}, "V2 var");
  ASSERT_EQ(RunWithVariables(host.get(), "ResourceApplyAdagrad", {var.get(), accum.get()},
                             {lr.get(), grad.get()}, &message, {{"update_slots", false}}),
            TF_OK)
      << message;
  ExpectNear(Read(accum.get()), {5, 5}, "accum without slot updates");
  ExpectNear(Read(var.get()), {0.95 - v2 - v1, 2.05 + v2 + v1}, "var without slot updates");
}

TEST(VaccVariablesHost, NoVariableKernelsWhereTheReleaseLacksTheHelpers) {
  for (const char* release : {"2.19", "2.21"}) {
    HostPtr host = OpenRelease(release);
    ASSERT_NE(host, nullptr);
    for (int i = 0; i < tfp_host_kernel_count(host.get()); ++i) {
      tfp_kernel_info k{};
      k.struct_size = TFP_KERNEL_INFO_STRUCT_SIZE;
      ASSERT_EQ(tfp_host_kernel_info(host.get(), i, &k), 0);
      const std::string op = k.op;
      EXPECT_TRUE(op.find("Variable") == std::string::npos && op.find("ResourceApply") == std::string::npos)
          << op << " registered for TensorFlow " << release;
    }
  }
}

}  // namespace
}  // namespace vacc_test
