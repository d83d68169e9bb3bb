// SPDX-License-Identifier: Apache-2.0
// The conformance library (src/conformance): its cases are well formed and
// deterministic, Compare applies the tolerance rules, and Run passes a
// right kernel and catches a wrong one (the host's test plugin, TESTDEV,
// path in argv[1]).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "conformance.h"
#include "reference.h"

namespace tfp_conformance {
namespace {

const char* g_plugin = nullptr;

size_t Bytes(TF_DataType t) {
  return t == TF_BFLOAT16 || t == TF_HALF ? 2 : t == TF_BOOL ? 1 : t == TF_INT64 || t == TF_DOUBLE ? 8 : 4;
}

size_t Count(const Shape& s) {
  size_t n = 1;
  for (int64_t d : s) n *= static_cast<size_t>(d);
  return n;
}

HostTensor Floats(const Shape& shape, const std::vector<float>& v) {
  HostTensor t{TF_FLOAT, shape, std::vector<unsigned char>(v.size() * 4)};
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

TEST(Conformance, EveryOpHasWellFormedCases) {
  const std::vector<std::string> ops = Ops();
  EXPECT_GE(ops.size(), 50u);
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  for (const std::string& op : ops) {
    ASSERT_FALSE(Types(op).empty()) << op;
    for (TF_DataType dtype : Types(op)) {
      for (Size size : {Size::kSmall, Size::kLarge}) {
        const std::vector<Case> cases = Cases(op, dtype, size);
        ASSERT_FALSE(cases.empty()) << op << " " << TypeName(dtype);
        for (const Case& c : cases) {
          SCOPED_TRACE(c.what);
          EXPECT_EQ(c.op, op);
          EXPECT_FALSE(c.what.empty());
          // Something to check: outputs, or variables updated in place.
          ASSERT_FALSE(c.want.empty() && c.want_variables.empty());
          EXPECT_EQ(c.want.size(), c.tolerance.size());
          EXPECT_EQ(c.want_variables.size(), c.variables.size());
          EXPECT_EQ(c.variable_tolerance.size(), c.variables.size());
          for (size_t i = 0; i < c.variables.size(); ++i) {
            ASSERT_LT(c.variables[i], c.inputs.size());
            const HostTensor& initial = c.inputs[c.variables[i]];
            EXPECT_EQ(c.want_variables[i].dtype, initial.dtype);
            EXPECT_EQ(c.want_variables[i].shape, initial.shape);  // updated in place
          }
          for (const HostTensor& t : c.want_variables) {
            EXPECT_EQ(t.data.size(), Count(t.shape) * Bytes(t.dtype));
          }
          if (c.hold_reads) {
            EXPECT_FALSE(c.variables.empty());
          }
          ASSERT_FALSE(c.type_attrs.empty());
          EXPECT_EQ(c.type_attrs[0].first, TypeAttr(op));
          EXPECT_EQ(c.type_attrs[0].second, dtype);
          for (const HostTensor& t : c.inputs) EXPECT_EQ(t.data.size(), Count(t.shape) * Bytes(t.dtype));
          for (const HostTensor& t : c.want) EXPECT_EQ(t.data.size(), Count(t.shape) * Bytes(t.dtype));
        }
        // Every non-empty variable case runs both ways: in place, and with
        // a read held (the kernel's copyFunc path).
        for (const Case& c : cases) {
          if (c.variables.empty() || c.hold_reads || Count(c.inputs[c.variables[0]].shape) == 0) continue;
          const auto twin = std::find_if(cases.begin(), cases.end(), [&](const Case& h) {
            return h.hold_reads && h.inputs[0].data == c.inputs[0].data && h.attrs == c.attrs;
          });
          EXPECT_NE(twin, cases.end()) << c.what << ": no case with a read held";
        }
      }
    }
  }
  EXPECT_TRUE(Cases("NoSuchOp", TF_FLOAT, Size::kSmall).empty());
  EXPECT_TRUE(Cases("RealDiv", TF_INT32, Size::kSmall).empty());  // no reference for it
}

TEST(Conformance, LargeAddsShapesAndExtremes) {
  const std::vector<Case> small = Cases("AddV2", TF_FLOAT, Size::kSmall);
  const std::vector<Case> large = Cases("AddV2", TF_FLOAT, Size::kLarge);
  EXPECT_GT(large.size(), small.size());
  bool big = false, extreme = false;
  for (const Case& c : large) {
    big = big || Count(c.inputs[0].shape) >= 1000;
    for (size_t i = 0; i < Count(c.want[0].shape); ++i) extreme = extreme || std::isnan(Element(c.want[0], i));
  }
  EXPECT_TRUE(big);
  EXPECT_TRUE(extreme);
}

TEST(Conformance, CasesAreDeterministicPerSeed) {
  const std::vector<Case> a = Cases("Conv2D", TF_FLOAT, Size::kSmall, 7);
  const std::vector<Case> b = Cases("Conv2D", TF_FLOAT, Size::kSmall, 7);
  const std::vector<Case> c = Cases("Conv2D", TF_FLOAT, Size::kSmall, 8);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.size(), c.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].inputs[0].data, b[i].inputs[0].data);
    EXPECT_EQ(a[i].want[0].data, b[i].want[0].data);
  }
  EXPECT_NE(a[0].inputs[0].data, c[0].inputs[0].data);
}

TEST(Conformance, CompareAppliesTheTolerance) {
  const Tolerance t{0.1, 0.01, "|error| <= 0.1 + 0.01*|want|"};
  EXPECT_EQ(Compare(Floats({2}, {1.1f, 100}), Floats({2}, {1, 101}), t).state, Result::kPass);
  const Result r = Compare(Floats({2}, {1, 103}), Floats({2}, {1, 101}), t);
  EXPECT_EQ(r.state, Result::kMismatch);
  EXPECT_NE(r.detail.find("first bad element 1 of 2: got 103, want 101"), std::string::npos) << r.detail;
  EXPECT_NEAR(r.max_abs, 2, 1e-6);
  EXPECT_EQ(r.want, t.text);
  EXPECT_EQ(r.got, "element 1 = 103");
}

TEST(Conformance, CompareNeedsNanForNanAndTheSameInfinity) {
  const Tolerance loose{1e30, 1e30, "loose"};
  EXPECT_EQ(Compare(Floats({2}, {NAN, INFINITY}), Floats({2}, {NAN, INFINITY}), loose).state, Result::kPass);
  EXPECT_EQ(Compare(Floats({1}, {0}), Floats({1}, {NAN}), loose).state, Result::kMismatch);
  EXPECT_EQ(Compare(Floats({1}, {NAN}), Floats({1}, {0}), loose).state, Result::kMismatch);
  EXPECT_EQ(Compare(Floats({1}, {-INFINITY}), Floats({1}, {INFINITY}), loose).state, Result::kMismatch);
  EXPECT_EQ(Compare(Floats({1}, {3e38f}), Floats({1}, {INFINITY}), loose).state, Result::kMismatch);
}

TEST(Conformance, CompareChecksShapeAndType) {
  const Tolerance t{1, 1, ""};
  Result r = Compare(Floats({2, 1}, {1, 2}), Floats({2}, {1, 2}), t);
  EXPECT_EQ(r.state, Result::kMismatch);
  EXPECT_EQ(r.got, "float [2,1]");
  HostTensor ints{TF_INT32, {2}, std::vector<unsigned char>(8)};
  EXPECT_EQ(Compare(ints, Floats({2}, {0, 0}), t).state, Result::kMismatch);
}

// What a plugin computing in float (then rounding to the dtype) gets must
// pass: the tolerances leave room for float arithmetic and libm, extreme
// values included.
float FloatUnary(const std::string& op, float x) {
  if (op == "Relu") return x < 0 ? 0 : x;
  if (op == "Relu6") return std::fmin(std::fmax(x, 0.0f), 6.0f);
  if (op == "Elu") return x > 0 ? x : std::expm1(x);
  if (op == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (op == "Tanh") return std::tanh(x);
  if (op == "Neg") return -x;
  if (op == "Exp") return std::exp(x);
  if (op == "Log") return std::log(x);
  if (op == "Sqrt") return std::sqrt(x);
  if (op == "Rsqrt") return 1 / std::sqrt(x);
  if (op == "Square") return x * x;
  return x;
}

TEST(Conformance, FloatImplementationsPassUnaryCases) {
  for (const char* op : {"Relu", "Relu6", "Elu", "Sigmoid", "Tanh", "Neg", "Exp", "Log", "Sqrt",
                         "Rsqrt", "Square", "Identity"}) {
    for (TF_DataType dtype : {TF_FLOAT, TF_BFLOAT16, TF_HALF}) {
      for (const Case& c : Cases(op, dtype, Size::kLarge)) {
        HostTensor got = c.want[0];
        tfp_reference::Tensor values{c.want[0].shape, {}};
        for (size_t i = 0; i < Count(c.inputs[0].shape); ++i) {
          values.v.push_back(FloatUnary(op, static_cast<float>(Element(c.inputs[0], i))));
        }
        for (size_t i = 0; i < values.v.size(); ++i) {
          const double v = tfp_reference::RoundTo(dtype, values.v[i]);
          if (dtype == TF_FLOAT) {
            const float f = static_cast<float>(v);
            std::memcpy(got.data.data() + 4 * i, &f, 4);
          } else {
            const uint16_t h = dtype == TF_HALF ? tfp_reference::FloatToHalf(static_cast<float>(v))
                                                : tfp_reference::FloatToBfloat16(static_cast<float>(v));
            std::memcpy(got.data.data() + 2 * i, &h, 2);
          }
        }
        const Result r = Compare(got, c.want[0], c.tolerance[0]);
        EXPECT_EQ(r.state, Result::kPass) << TypeName(dtype) << " " << c.what << ": " << r.detail;
      }
    }
  }
}

// ---- Through the host, on the test plugin's kernels
class WithPlugin : public ::testing::Test {
 protected:
  void Open(const char* fail_mode) {
    if (fail_mode) setenv("TFP_TEST_FAIL", fail_mode, 1);
    else unsetenv("TFP_TEST_FAIL");
    TF_Status* s = TF_NewStatus();
    tfp_host_options options{};
    options.struct_size = TFP_HOST_OPTIONS_STRUCT_SIZE;
    host_ = tfp_host_open(g_plugin, &options, s);
    ASSERT_NE(host_, nullptr) << TF_Message(s);
    TF_DeleteStatus(s);
  }
  void TearDown() override {
    tfp_host_close(host_);
    unsetenv("TFP_TEST_FAIL");
  }
  tfp_host* host_ = nullptr;
};

TEST_F(WithPlugin, RightKernelsPass) {
  Open(nullptr);
  for (const char* op : {"AddV2", "MatMul"}) {
    for (const Case& c : Cases(op, TF_FLOAT, Size::kLarge)) {
      const Result r = tfp_conformance::Run(host_, 0, c);
      EXPECT_EQ(r.state, Result::kPass) << c.what << ": " << r.detail;
    }
  }
}

TEST_F(WithPlugin, WrongKernelIsAMismatch) {
  Open("kern_addv2_ulp");  // AddV2 float: element 0 off by 1000 ulp
  const Case c = Cases("AddV2", TF_FLOAT, Size::kSmall)[0];
  const Result r = tfp_conformance::Run(host_, 0, c);
  EXPECT_EQ(r.state, Result::kMismatch);
  EXPECT_NE(r.detail.find("first bad element 0 of"), std::string::npos) << r.detail;
}

TEST_F(WithPlugin, FailingKernelIsARunFailure) {
  Open("kern_error");  // MatMul fails with TF_INTERNAL
  const Result r = tfp_conformance::Run(host_, 0, Cases("MatMul", TF_FLOAT, Size::kSmall)[0]);
  EXPECT_EQ(r.state, Result::kRunFailed);
  EXPECT_NE(r.detail.find("fixture: MatMul refuses to run"), std::string::npos) << r.detail;
  // No kernel at all (no bfloat16 AddV2 in the plugin): also a run failure.
  EXPECT_EQ(tfp_conformance::Run(host_, 0, Cases("AddV2", TF_BFLOAT16, Size::kSmall)[0]).state, Result::kRunFailed);
}

}  // namespace
}  // namespace tfp_conformance

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: test_conformance <test plugin .so>\n");
    return 2;
  }
  tfp_conformance::g_plugin = argv[1];
  return RUN_ALL_TESTS();
}
