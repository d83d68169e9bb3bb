// SPDX-License-Identifier: Apache-2.0
//
// Optimizer updates (vacc_optimizer.h): SIMD bodies compiled once per
// Highway target beside their scalar references. Both are memory-bound
// (Adam moves 7 floats per element), so the bodies keep to one pass and
// split across the compute units like the elementwise ops.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/vacc_optimizer.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cmath>
#include <cstddef>
#include <cstring>

#include "kernels/vacc_optimizer.h"

HWY_BEFORE_NAMESPACE();
namespace vacc {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Runs step(w, r) over n elements a vector at a time: w[s] points into
// stream `written[s]` (loaded and stored by step), r[s] into the read-only
// stream `read[s]`. The last partial vector goes through aligned stack
// copies, so it gets the same arithmetic as the full ones (Highway 1.0.3
// has no LoadN, and SSE4's MaskedLoad reads the whole vector); only the
// written streams are copied back.
template <size_t kWritten, size_t kRead, class Step>
HWY_INLINE void ForEachVector(size_t lanes, float* const (&written)[kWritten],
                              const float* const (&read)[kRead], size_t n, const Step& step) {
  float* w[kWritten];
  const float* r[kRead];
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    for (size_t s = 0; s < kWritten; ++s) w[s] = written[s] + i;
    for (size_t s = 0; s < kRead; ++s) r[s] = read[s] + i;
    step(w, r);
  }
  if (i == n) return;
  constexpr size_t kMax = HWY_MAX_BYTES / sizeof(float);
  HWY_ALIGN float tw[kWritten][kMax] = {}, tr[kRead][kMax] = {};
  const size_t bytes = (n - i) * sizeof(float);
  for (size_t s = 0; s < kWritten; ++s) {
    std::memcpy(tw[s], written[s] + i, bytes);
    w[s] = tw[s];
  }
  for (size_t s = 0; s < kRead; ++s) {
    std::memcpy(tr[s], read[s] + i, bytes);
    r[s] = tr[s];
  }
  step(w, r);
  for (size_t s = 0; s < kWritten; ++s) std::memcpy(written[s] + i, tw[s], bytes);
}

void GradientDescentF32(float* HWY_RESTRICT var, const float* HWY_RESTRICT delta, float alpha,
                        size_t n) {
  const hn::ScalableTag<float> d;
  const auto a = hn::Set(d, alpha);
  ForEachVector(hn::Lanes(d), {var}, {delta}, n,
                [&](float* const* w, const float* const* r) HWY_ATTR {
                  hn::StoreU(hn::NegMulAdd(a, hn::LoadU(d, r[0]), hn::LoadU(d, w[0])), d, w[0]);
                });
}

template <class D, class V>
HWY_INLINE V AdamStep(D d, const AdamCoefficients& c, V g, V& m, V& v, V w) {
  m = hn::MulAdd(hn::Sub(g, m), hn::Set(d, c.one_minus_beta1), m);
  v = hn::MulAdd(hn::Sub(hn::Mul(g, g), v), hn::Set(d, c.one_minus_beta2), v);
  const V num = c.nesterov
                    ? hn::MulAdd(m, hn::Set(d, c.beta1), hn::Mul(g, hn::Set(d, c.one_minus_beta1)))
                    : m;
  const V den = hn::Add(hn::Sqrt(v), hn::Set(d, c.epsilon));
  return hn::Sub(w, hn::Div(hn::Mul(num, hn::Set(d, c.lr_t)), den));
}

void AdamF32(float* HWY_RESTRICT var, float* HWY_RESTRICT m, float* HWY_RESTRICT v,
             const float* HWY_RESTRICT grad, const AdamCoefficients& c, size_t n) {
  const hn::ScalableTag<float> d;
  // Zero lanes past n in the tail give sqrt(0) + epsilon, never copied back.
  ForEachVector(hn::Lanes(d), {var, m, v}, {grad}, n,
                [&](float* const* w, const float* const* r) HWY_ATTR {
                  auto vm = hn::LoadU(d, w[1]), vv = hn::LoadU(d, w[2]);
                  const auto nw = AdamStep(d, c, hn::LoadU(d, r[0]), vm, vv, hn::LoadU(d, w[0]));
                  hn::StoreU(vm, d, w[1]);
                  hn::StoreU(vv, d, w[2]);
                  hn::StoreU(nw, d, w[0]);
                });
}

// Returns the new var; accum updated in place. FMA where the scalar body
// rounds a product and a sum separately: within the stated tolerance.
template <class D, class V>
HWY_INLINE V MomentumStep(D d, const MomentumCoefficients& c, V g, V& accum, V w) {
  const V lr = hn::Set(d, c.lr), mom = hn::Set(d, c.momentum);
  if (c.keras) {
    accum = hn::NegMulAdd(g, lr, hn::Mul(accum, mom));
    return hn::Add(w, c.nesterov ? hn::NegMulAdd(g, lr, hn::Mul(accum, mom)) : accum);
  }
  accum = hn::MulAdd(accum, mom, g);
  if (c.nesterov) return hn::Sub(w, hn::MulAdd(hn::Mul(accum, mom), lr, hn::Mul(g, lr)));
  return hn::NegMulAdd(accum, lr, w);
}

void MomentumF32(float* HWY_RESTRICT var, float* HWY_RESTRICT accum, const float* HWY_RESTRICT grad,
                 const MomentumCoefficients& c, size_t n) {
  const hn::ScalableTag<float> d;
  ForEachVector(hn::Lanes(d), {var, accum}, {grad}, n,
                [&](float* const* w, const float* const* r) HWY_ATTR {
                  auto a = hn::LoadU(d, w[1]);
                  const auto nw = MomentumStep(d, c, hn::LoadU(d, r[0]), a, hn::LoadU(d, w[0]));
                  hn::StoreU(a, d, w[1]);
                  hn::StoreU(nw, d, w[0]);
                });
}

// Returns mom's new value, ms (and mg, centered) updated in place.
template <bool kCentered, class D, class V>
HWY_INLINE V RMSPropStep(D d, const RMSPropCoefficients& c, V g, V& ms, V& mg, V mom) {
  const V one_minus_rho = hn::Set(d, c.one_minus_rho);
  ms = hn::MulAdd(hn::Sub(hn::Mul(g, g), ms), one_minus_rho, ms);
  V den = hn::Add(ms, hn::Set(d, c.epsilon));
  if (kCentered) {
    mg = hn::MulAdd(hn::Sub(g, mg), one_minus_rho, mg);
    den = hn::NegMulAdd(mg, mg, den);
  }
  const V step = hn::Div(hn::Mul(g, hn::Set(d, c.lr)), hn::Sqrt(den));
  return hn::MulAdd(mom, hn::Set(d, c.momentum), step);
}

// written: var, ms, mom (and mg, centered).
template <bool kCentered, size_t kWritten>
HWY_INLINE void RMSPropOver(float* const (&written)[kWritten], const float* HWY_RESTRICT grad,
                            const RMSPropCoefficients& c, size_t n) {
  static_assert(kWritten == (kCentered ? 4 : 3), "mg is written only when centered");
  const hn::ScalableTag<float> d;
  // Zero lanes past n in the tail give sqrt(epsilon), never copied back.
  ForEachVector(hn::Lanes(d), written, {grad}, n,
                [&](float* const* w, const float* const* r) HWY_ATTR {
                  auto ms = hn::LoadU(d, w[1]), mg = hn::Zero(d);
                  if constexpr (kCentered) mg = hn::LoadU(d, w[3]);
                  const auto mom =
                      RMSPropStep<kCentered>(d, c, hn::LoadU(d, r[0]), ms, mg, hn::LoadU(d, w[2]));
                  hn::StoreU(ms, d, w[1]);
                  if constexpr (kCentered) hn::StoreU(mg, d, w[3]);
                  hn::StoreU(mom, d, w[2]);
                  hn::StoreU(hn::Sub(hn::LoadU(d, w[0]), mom), d, w[0]);
                });
}

void RMSPropF32(float* HWY_RESTRICT var, float* HWY_RESTRICT ms, float* HWY_RESTRICT mom,
                float* HWY_RESTRICT mg, const float* HWY_RESTRICT grad,
                const RMSPropCoefficients& c, size_t n) {
  if (mg != nullptr) {
    RMSPropOver<true>({var, ms, mom, mg}, grad, c, n);
  } else {
    RMSPropOver<false>({var, ms, mom}, grad, c, n);
  }
}

void AdagradF32(float* HWY_RESTRICT var, float* HWY_RESTRICT accum,
                const float* HWY_RESTRICT grad, const AdagradCoefficients& c, size_t n) {
  const hn::ScalableTag<float> d;
  const auto lr = hn::Set(d, c.lr), epsilon = hn::Set(d, c.epsilon);
  const bool update = c.update_slots;
  // Zero lanes past n in the tail divide by epsilon (or 0), never copied back.
  ForEachVector(hn::Lanes(d), {var, accum}, {grad}, n,
                [&](float* const* w, const float* const* r) HWY_ATTR {
                  const auto g = hn::LoadU(d, r[0]);
                  auto a = hn::LoadU(d, w[1]);
                  if (update) {
                    a = hn::MulAdd(g, g, a);
                    hn::StoreU(a, d, w[1]);
                  }
                  const auto step = hn::Div(hn::Mul(g, lr), hn::Add(hn::Sqrt(a), epsilon));
                  hn::StoreU(hn::Sub(hn::LoadU(d, w[0]), step), d, w[0]);
                });
}

}  // namespace HWY_NAMESPACE
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels/vacc_elementwise.h"
#include "kernels/vacc_simd.h"

namespace vacc {

HWY_EXPORT(GradientDescentF32);
HWY_EXPORT(AdamF32);
HWY_EXPORT(MomentumF32);
HWY_EXPORT(RMSPropF32);
HWY_EXPORT(AdagradF32);

namespace scalar {

void GradientDescentF32(float* var, const float* delta, float alpha, size_t n) {
  for (size_t i = 0; i < n; ++i) var[i] -= alpha * delta[i];
}

void AdamF32(float* var, float* m, float* v, const float* grad, const AdamCoefficients& c,
             size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float g = grad[i];
    m[i] += (g - m[i]) * c.one_minus_beta1;
    v[i] += (g * g - v[i]) * c.one_minus_beta2;
    const float num = c.nesterov ? m[i] * c.beta1 + g * c.one_minus_beta1 : m[i];
    var[i] -= num * c.lr_t / (std::sqrt(v[i]) + c.epsilon);
  }
}

void MomentumF32(float* var, float* accum, const float* grad, const MomentumCoefficients& c,
                 size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float g = grad[i];
    if (c.keras) {
      accum[i] = accum[i] * c.momentum - g * c.lr;
      var[i] += c.nesterov ? accum[i] * c.momentum - g * c.lr : accum[i];
    } else {
      accum[i] = accum[i] * c.momentum + g;
      var[i] -= c.nesterov ? g * c.lr + accum[i] * c.momentum * c.lr : c.lr * accum[i];
    }
  }
}

void RMSPropF32(float* var, float* ms, float* mom, float* mg, const float* grad,
                const RMSPropCoefficients& c, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float g = grad[i];
    ms[i] += (g * g - ms[i]) * c.one_minus_rho;
    float den = ms[i] + c.epsilon;
    if (mg != nullptr) {
      mg[i] += (g - mg[i]) * c.one_minus_rho;
      den -= mg[i] * mg[i];
    }
    mom[i] = mom[i] * c.momentum + g * c.lr / std::sqrt(den);
    var[i] -= mom[i];
  }
}

void AdagradF32(float* var, float* accum, const float* grad, const AdagradCoefficients& c,
                size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float g = grad[i];
    if (c.update_slots) accum[i] += g * g;
    var[i] -= g * c.lr / (std::sqrt(accum[i]) + c.epsilon);
  }
}

}  // namespace scalar

AdamCoefficients MakeAdamCoefficients(float lr, float beta1_power, float beta2_power, float beta1,
                                      float beta2, float epsilon, bool nesterov) {
  // In float, as TensorFlow computes them for a float variable.
  return AdamCoefficients{lr * std::sqrt(1.0f - beta2_power) / (1.0f - beta1_power),
                          beta1,
                          1.0f - beta1,
                          1.0f - beta2,
                          epsilon,
                          nesterov};
}

void GradientDescentF32(float* var, const float* delta, float alpha, size_t n) {
  if (UseScalarKernels()) return scalar::GradientDescentF32(var, delta, alpha, n);
  HWY_DYNAMIC_DISPATCH(GradientDescentF32)(var, delta, alpha, n);
}

void AdamF32(float* var, float* m, float* v, const float* grad, const AdamCoefficients& c,
             size_t n) {
  if (UseScalarKernels()) return scalar::AdamF32(var, m, v, grad, c, n);
  HWY_DYNAMIC_DISPATCH(AdamF32)(var, m, v, grad, c, n);
}

void MomentumF32(float* var, float* accum, const float* grad, const MomentumCoefficients& c,
                 size_t n) {
  if (UseScalarKernels()) return scalar::MomentumF32(var, accum, grad, c, n);
  HWY_DYNAMIC_DISPATCH(MomentumF32)(var, accum, grad, c, n);
}

void RMSPropF32(float* var, float* ms, float* mom, float* mg, const float* grad,
                const RMSPropCoefficients& c, size_t n) {
  if (UseScalarKernels()) return scalar::RMSPropF32(var, ms, mom, mg, grad, c, n);
  HWY_DYNAMIC_DISPATCH(RMSPropF32)(var, ms, mom, mg, grad, c, n);
}

void AdagradF32(float* var, float* accum, const float* grad, const AdagradCoefficients& c,
                size_t n) {
  if (UseScalarKernels()) return scalar::AdagradF32(var, accum, grad, c, n);
  HWY_DYNAMIC_DISPATCH(AdagradF32)(var, accum, grad, c, n);
}

// The updates read what they write, so streaming stores would gain nothing:
// the chunks ignore the store choice ParallelElementwise offers.
void RunGradientDescent(float* var, const float* delta, float alpha, size_t n,
                        ComputeUnits& units) {
  ParallelElementwise(units, n, sizeof(float), [=](size_t begin, size_t end, Stores) {
    GradientDescentF32(var + begin, delta + begin, alpha, end - begin);
  });
}

void RunAdam(float* var, float* m, float* v, const float* grad, const AdamCoefficients& c, size_t n,
             ComputeUnits& units) {
  ParallelElementwise(units, n, sizeof(float), [=, &c](size_t begin, size_t end, Stores) {
    AdamF32(var + begin, m + begin, v + begin, grad + begin, c, end - begin);
  });
}

void RunMomentum(float* var, float* accum, const float* grad, const MomentumCoefficients& c,
                 size_t n, ComputeUnits& units) {
  ParallelElementwise(units, n, sizeof(float), [=, &c](size_t begin, size_t end, Stores) {
    MomentumF32(var + begin, accum + begin, grad + begin, c, end - begin);
  });
}

void RunRMSProp(float* var, float* ms, float* mom, float* mg, const float* grad,
                const RMSPropCoefficients& c, size_t n, ComputeUnits& units) {
  ParallelElementwise(units, n, sizeof(float), [=, &c](size_t begin, size_t end, Stores) {
    RMSPropF32(var + begin, ms + begin, mom + begin, mg != nullptr ? mg + begin : nullptr,
               grad + begin, c, end - begin);
  });
}

void RunAdagrad(float* var, float* accum, const float* grad, const AdagradCoefficients& c,
                size_t n, ComputeUnits& units) {
  ParallelElementwise(units, n, sizeof(float), [=, &c](size_t begin, size_t end, Stores) {
    AdagradF32(var + begin, accum + begin, grad + begin, c, end - begin);
  });
}

}  // namespace vacc
#endif  // HWY_ONCE
