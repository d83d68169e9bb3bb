// SPDX-License-Identifier: Apache-2.0
//
// vacc's optimizer bodies (ResourceApplyGradientDescent, ResourceApplyAdam,
// ResourceApplyMomentum, ResourceApplyKerasMomentum)
// on every SIMD target against the scalar reference bodies, including the
// tail of every vector width and extreme values, and their split across
// compute units against one call over the whole range.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/vacc_optimizer.h"
#include "vacc_compute_units.h"
#include "vacc_kernel_test_util.h"

namespace vacc {
namespace {

using vacc_test::ForEachSimdTarget;
using vacc_test::Near;
using vacc_test::Values;

// The SIMD bodies fuse a multiply and an add where the scalar ones round
// twice: float32 results agree within a few ulp of the operands. Adam's
// quotient and square root add one rounding each; momentum's Nesterov var
// rounds up to four times.
constexpr double kGradientDescentRel = 4e-7, kAdamRel = 2e-6, kMomentumRel = 8e-7;

TEST(VaccOptimizer, GradientDescentMatchesScalarOnEveryTarget) {
  const std::vector<float> var0 = Values(1000, -2, 2, true, 1), delta = Values(1000, -2, 2, true, 2);
  ForEachSimdTarget([&](const std::string&) {
    for (size_t n : {0, 1, 3, 7, 8, 9, 16, 17, 33, 1000}) {
      std::vector<float> got = var0, want = var0;
      GradientDescentF32(got.data(), delta.data(), 0.3f, n);
      scalar::GradientDescentF32(want.data(), delta.data(), 0.3f, n);
      for (size_t i = 0; i < var0.size(); ++i) {
        // |error| relative to the operands, not the (possibly cancelled) result.
        const double scale = std::fabs(var0[i]) + std::fabs(0.3 * delta[i]);
        ASSERT_TRUE(Near(got[i], want[i], 0, kGradientDescentRel * scale)) << "n " << n << " element " << i;
        if (i >= n) {
          ASSERT_EQ(std::memcmp(&got[i], &var0[i], sizeof(float)), 0) << "wrote past n " << n;
        }
      }
    }
  });
}

TEST(VaccOptimizer, AdamMatchesScalarOnEveryTargetPlainAndNesterov) {
  const size_t size = 1000;
  const std::vector<float> var0 = Values(size, -2, 2, false, 3), m0 = Values(size, -1, 1, false, 4),
                           v0 = Values(size, 0, 4, false, 5), grad = Values(size, -2, 2, false, 6);
  for (bool nesterov : {false, true}) {
    SCOPED_TRACE(nesterov ? "nesterov" : "plain");
    const AdamCoefficients c = MakeAdamCoefficients(0.01f, 0.729f, 0.997f, 0.9f, 0.999f, 1e-7f, nesterov);
    ForEachSimdTarget([&](const std::string&) {
      for (size_t n : {0, 1, 7, 8, 9, 17, 33, 1000}) {
        std::vector<float> var = var0, m = m0, v = v0, var_s = var0, m_s = m0, v_s = v0;
        AdamF32(var.data(), m.data(), v.data(), grad.data(), c, n);
        scalar::AdamF32(var_s.data(), m_s.data(), v_s.data(), grad.data(), c, n);
        for (size_t i = 0; i < size; ++i) {
          ASSERT_TRUE(Near(m[i], m_s[i], kAdamRel, 1e-7)) << "m, n " << n << " element " << i;
          ASSERT_TRUE(Near(v[i], v_s[i], kAdamRel, 1e-7)) << "v, n " << n << " element " << i;
          ASSERT_TRUE(Near(var[i], var_s[i], kAdamRel, 1e-7)) << "var, n " << n << " element " << i;
          if (i >= n) {
            ASSERT_TRUE(var[i] == var0[i] && m[i] == m0[i] && v[i] == v0[i]) << "wrote past n " << n;
          }
        }
      }
    });
  }
}

TEST(VaccOptimizer, AdamKeepsInfinityAndNaNWhereTheScalarBodyDoes) {
  std::vector<float> grad = {INFINITY, NAN, 0.0f, -0.0f, 1e30f, -1e-30f, 1.0f, 2.0f, 3.0f};
  const std::vector<float> var0(grad.size(), 1.0f), m0(grad.size(), 0.0f), v0(grad.size(), 0.0f);
  const AdamCoefficients c = MakeAdamCoefficients(0.001f, 0.9f, 0.999f, 0.9f, 0.999f, 1e-7f, false);
  ForEachSimdTarget([&](const std::string&) {
    std::vector<float> var = var0, m = m0, v = v0, var_s = var0, m_s = m0, v_s = v0;
    AdamF32(var.data(), m.data(), v.data(), grad.data(), c, grad.size());
    scalar::AdamF32(var_s.data(), m_s.data(), v_s.data(), grad.data(), c, grad.size());
    for (size_t i = 0; i < grad.size(); ++i) {
      ASSERT_TRUE(Near(var[i], var_s[i], kAdamRel, 1e-7)) << "element " << i;
      ASSERT_TRUE(Near(v[i], v_s[i], kAdamRel, 0)) << "element " << i;
    }
  });
}

TEST(VaccOptimizer, MomentumMatchesScalarOnEveryTargetBothOpsPlainAndNesterov) {
  const size_t size = 1000;
  const std::vector<float> var0 = Values(size, -2, 2, true, 12), accum0 = Values(size, -1, 1, true, 13),
                           grad = Values(size, -2, 2, true, 14);
  for (bool keras : {false, true}) {
    for (bool nesterov : {false, true}) {
      SCOPED_TRACE(std::string(keras ? "keras" : "momentum") + (nesterov ? ", nesterov" : ""));
      const MomentumCoefficients c{0.05f, 0.9f, nesterov, keras};
      ForEachSimdTarget([&](const std::string&) {
        for (size_t n : {0, 1, 7, 8, 9, 17, 33, 1000}) {
          std::vector<float> var = var0, accum = accum0, var_s = var0, accum_s = accum0;
          MomentumF32(var.data(), accum.data(), grad.data(), c, n);
          scalar::MomentumF32(var_s.data(), accum_s.data(), grad.data(), c, n);
          for (size_t i = 0; i < size; ++i) {
            // Relative to the operands' size, not the (possibly cancelled) result.
            const double scale = std::fabs(var0[i]) + std::fabs(accum0[i]) + std::fabs(grad[i]);
            ASSERT_TRUE(Near(accum[i], accum_s[i], 0, kMomentumRel * scale)) << "accum, n " << n << " element " << i;
            ASSERT_TRUE(Near(var[i], var_s[i], 0, kMomentumRel * scale)) << "var, n " << n << " element " << i;
            if (i >= n) {
              ASSERT_TRUE(std::memcmp(&var[i], &var0[i], 4) == 0 && std::memcmp(&accum[i], &accum0[i], 4) == 0)
                  << "wrote past n " << n;
            }
          }
        }
      });
    }
  }
}

TEST(VaccOptimizer, SplitAcrossUnitsMatchesOneCall) {
  ComputeUnits units(2, std::chrono::microseconds(0));
  const size_t n = 3 * 16384 + 123;  // several work chunks and a ragged end
  const std::vector<float> var0 = Values(n, -2, 2, false, 8), m0 = Values(n, -1, 1, false, 9),
                           v0 = Values(n, 0, 4, false, 10), grad = Values(n, -2, 2, false, 11);
  std::vector<float> split = var0, whole = var0;
  RunGradientDescent(split.data(), grad.data(), 0.1f, n, units);
  GradientDescentF32(whole.data(), grad.data(), 0.1f, n);
  ASSERT_EQ(split, whole);
  const AdamCoefficients c = MakeAdamCoefficients(0.01f, 0.9f, 0.999f, 0.9f, 0.999f, 1e-7f, true);
  std::vector<float> var = var0, m = m0, v = v0, var_w = var0, m_w = m0, v_w = v0;
  RunAdam(var.data(), m.data(), v.data(), grad.data(), c, n, units);
  AdamF32(var_w.data(), m_w.data(), v_w.data(), grad.data(), c, n);
  EXPECT_EQ(var, var_w);
  EXPECT_EQ(m, m_w);
  EXPECT_EQ(v, v_w);
  const MomentumCoefficients mc{0.05f, 0.9f, true, true};
  std::vector<float> mvar = var0, accum = m0, mvar_w = var0, accum_w = m0;
  RunMomentum(mvar.data(), accum.data(), grad.data(), mc, n, units);
  MomentumF32(mvar_w.data(), accum_w.data(), grad.data(), mc, n);
  EXPECT_EQ(mvar, mvar_w);
  EXPECT_EQ(accum, accum_w);
}

}  // namespace
}  // namespace vacc
