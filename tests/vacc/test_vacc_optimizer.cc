// SPDX-License-Identifier: Apache-2.0
//
// vacc's optimizer bodies (ResourceApplyGradientDescent, ResourceApplyAdam,
// ResourceApplyMomentum, ResourceApplyKerasMomentum, ResourceApply(Centered)
// RMSProp, ResourceApplyAdagrad(V2)) on every SIMD target against the scalar reference bodies, including the
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
// rounds up to four times. RMSProp and Adagrad: as Adam, a quotient and a
// square root after fused or rounded updates.
constexpr double kGradientDescentRel = 4e-7, kAdamRel = 2e-6, kMomentumRel = 8e-7;
constexpr double kRMSPropRel = 2e-6, kAdagradRel = 2e-6;

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

TEST(VaccOptimizer, RMSPropMatchesScalarOnEveryTargetPlainAndCentered) {
  const size_t size = 1000;
  const std::vector<float> var0 = Values(size, -2, 2, false, 15), ms0 = Values(size, 1, 2, false, 16),
                           mom0 = Values(size, -1, 1, false, 17), mg0 = Values(size, -0.5, 0.5, false, 18),
                           grad = Values(size, -2, 2, false, 19);
  const RMSPropCoefficients c{0.01f, 0.1f, 0.9f, 1e-7f};
  for (bool centered : {false, true}) {
    SCOPED_TRACE(centered ? "centered" : "plain");
    ForEachSimdTarget([&](const std::string&) {
      for (size_t n : {0, 1, 7, 8, 9, 17, 33, 1000}) {
        std::vector<float> var = var0, ms = ms0, mom = mom0, mg = mg0;
        std::vector<float> var_s = var0, ms_s = ms0, mom_s = mom0, mg_s = mg0;
        RMSPropF32(var.data(), ms.data(), mom.data(), centered ? mg.data() : nullptr, grad.data(), c, n);
        scalar::RMSPropF32(var_s.data(), ms_s.data(), mom_s.data(), centered ? mg_s.data() : nullptr,
                           grad.data(), c, n);
        for (size_t i = 0; i < size; ++i) {
          ASSERT_TRUE(Near(ms[i], ms_s[i], kRMSPropRel, 1e-7)) << "ms, n " << n << " element " << i;
          ASSERT_TRUE(Near(mg[i], mg_s[i], kRMSPropRel, 1e-7)) << "mg, n " << n << " element " << i;
          ASSERT_TRUE(Near(mom[i], mom_s[i], kRMSPropRel, 1e-7)) << "mom, n " << n << " element " << i;
          ASSERT_TRUE(Near(var[i], var_s[i], kRMSPropRel, 1e-7)) << "var, n " << n << " element " << i;
          if (i >= n || !centered) {
            ASSERT_EQ(std::memcmp(&mg[i], &mg0[i], sizeof(float)), 0) << "mg written, n " << n;
          }
          if (i >= n) {
            ASSERT_TRUE(std::memcmp(&var[i], &var0[i], 4) == 0 && std::memcmp(&ms[i], &ms0[i], 4) == 0 &&
                        std::memcmp(&mom[i], &mom0[i], 4) == 0)
                << "wrote past n " << n;
          }
        }
      }
    });
  }
}

// Infinite and NaN gradients, zeros, tiny and large ones. Not so large
// that mg * mg overflows while ms is infinite: there the scalar body's
// inf - inf is NaN and the fused ms - mg * mg of the SIMD one is inf.
TEST(VaccOptimizer, RMSPropKeepsInfinityAndNaNWhereTheScalarBodyDoes) {
  const std::vector<float> grad = {INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 1e15f, -1e-30f, 1e-40f, 1.0f, 2.0f};
  const std::vector<float> var0(grad.size(), 1.0f), ms0(grad.size(), 0.0f), mom0(grad.size(), 0.0f),
      mg0(grad.size(), 0.0f);
  const RMSPropCoefficients c{0.001f, 0.1f, 0.9f, 1e-7f};
  for (bool centered : {false, true}) {
    SCOPED_TRACE(centered ? "centered" : "plain");
    ForEachSimdTarget([&](const std::string&) {
      std::vector<float> var = var0, ms = ms0, mom = mom0, mg = mg0;
      std::vector<float> var_s = var0, ms_s = ms0, mom_s = mom0, mg_s = mg0;
      RMSPropF32(var.data(), ms.data(), mom.data(), centered ? mg.data() : nullptr, grad.data(), c,
                 grad.size());
      scalar::RMSPropF32(var_s.data(), ms_s.data(), mom_s.data(), centered ? mg_s.data() : nullptr,
                         grad.data(), c, grad.size());
      for (size_t i = 0; i < grad.size(); ++i) {
        ASSERT_TRUE(Near(ms[i], ms_s[i], kRMSPropRel, 0)) << "ms, element " << i;
        ASSERT_TRUE(Near(mom[i], mom_s[i], kRMSPropRel, 1e-7)) << "mom, element " << i;
        ASSERT_TRUE(Near(var[i], var_s[i], kRMSPropRel, 1e-7)) << "var, element " << i;
      }
    });
  }
}

TEST(VaccOptimizer, AdagradMatchesScalarOnEveryTargetWithAndWithoutSlotUpdates) {
  const size_t size = 1000;
  const std::vector<float> var0 = Values(size, -2, 2, true, 20), accum0 = Values(size, 0.1, 2, true, 21),
                           grad = Values(size, -2, 2, true, 22);
  for (float epsilon : {0.0f, 1e-7f}) {  // ResourceApplyAdagrad, ResourceApplyAdagradV2
    for (bool update_slots : {true, false}) {
      SCOPED_TRACE(std::string(epsilon == 0 ? "Adagrad" : "AdagradV2") +
                   (update_slots ? "" : ", update_slots=false"));
      const AdagradCoefficients c{0.01f, epsilon, update_slots};
      ForEachSimdTarget([&](const std::string&) {
        for (size_t n : {0, 1, 7, 8, 9, 17, 33, 1000}) {
          std::vector<float> var = var0, accum = accum0, var_s = var0, accum_s = accum0;
          AdagradF32(var.data(), accum.data(), grad.data(), c, n);
          scalar::AdagradF32(var_s.data(), accum_s.data(), grad.data(), c, n);
          for (size_t i = 0; i < size; ++i) {
            ASSERT_TRUE(Near(accum[i], accum_s[i], kAdagradRel, 1e-7)) << "accum, n " << n << " element " << i;
            ASSERT_TRUE(Near(var[i], var_s[i], kAdagradRel, 1e-7)) << "var, n " << n << " element " << i;
            if (i >= n || !update_slots) {
              ASSERT_EQ(std::memcmp(&accum[i], &accum0[i], 4), 0) << "accum written, n " << n;
            }
            if (i >= n) {
              ASSERT_EQ(std::memcmp(&var[i], &var0[i], 4), 0) << "wrote past n " << n;
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
  const RMSPropCoefficients rc{0.01f, 0.1f, 0.9f, 1e-7f};
  const std::vector<float> ms0 = Values(n, 1, 2, false, 23);
  std::vector<float> rvar = var0, ms = ms0, mom = m0, mg = m0, rvar_w = var0, ms_w = ms0,
                     mom_w = m0, mg_w = m0;
  RunRMSProp(rvar.data(), ms.data(), mom.data(), mg.data(), grad.data(), rc, n, units);
  RMSPropF32(rvar_w.data(), ms_w.data(), mom_w.data(), mg_w.data(), grad.data(), rc, n);
  EXPECT_EQ(rvar, rvar_w);
  EXPECT_EQ(ms, ms_w);
  EXPECT_EQ(mom, mom_w);
  EXPECT_EQ(mg, mg_w);
  const AdagradCoefficients ac{0.01f, 1e-7f, true};
  std::vector<float> avar = var0, acc = v0, avar_w = var0, acc_w = v0;
  RunAdagrad(avar.data(), acc.data(), grad.data(), ac, n, units);
  AdagradF32(avar_w.data(), acc_w.data(), grad.data(), ac, n);
  EXPECT_EQ(avar, avar_w);
  EXPECT_EQ(acc, acc_w);
}

}  // namespace
}  // namespace vacc
