// SPDX-License-Identifier: Apache-2.0
//
// The optimizer updates of ResourceApplyGradientDescent, ResourceApplyAdam,
// ResourceApplyMomentum, ResourceApplyKerasMomentum, ResourceApplyRMSProp,
// ResourceApplyCenteredRMSProp, ResourceApplyAdagrad and
// ResourceApplyAdagradV2 (vacc_variables.cc), in place over a variable's
// buffer: one pass reads each element of var (its slots, the gradient) once
// and writes it once. Each entry point runs
// the SIMD body (Highway, the target VACC_SIMD selected) or, with
// VACC_SIMD=scalar, the scalar reference body in namespace scalar.
#ifndef VACC_KERNELS_VACC_OPTIMIZER_H_
#define VACC_KERNELS_VACC_OPTIMIZER_H_

#include <cstddef>

namespace vacc {

// var[i] -= alpha * delta[i], i < n.
void GradientDescentF32(float* var, const float* delta, float alpha, size_t n);

// Adam's step for one element range, with TensorFlow's op semantics:
//   lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
//   m += (g - m) * (1 - beta1)
//   v += (g * g - v) * (1 - beta2)
//   var -= lr_t * m / (sqrt(v) + epsilon)                    (plain)
//   var -= lr_t * (m * beta1 + g * (1 - beta1)) / (sqrt(v) + epsilon)  (Nesterov)
// AdamCoefficients holds what is the same for every element.
struct AdamCoefficients {
  float lr_t, beta1, one_minus_beta1, one_minus_beta2, epsilon;
  bool nesterov;
};
AdamCoefficients MakeAdamCoefficients(float lr, float beta1_power, float beta2_power, float beta1,
                                      float beta2, float epsilon, bool nesterov);
void AdamF32(float* var, float* m, float* v, const float* grad, const AdamCoefficients& c,
             size_t n);

// The two momentum ops' step, with TensorFlow's op semantics:
//   ResourceApplyMomentum        accum = accum * momentum + g
//                                var -= lr * accum                      (plain)
//                                var -= g * lr + accum * momentum * lr  (Nesterov)
//   ResourceApplyKerasMomentum   accum = accum * momentum - g * lr
//                                var += accum                           (plain)
//                                var += accum * momentum - g * lr       (Nesterov)
struct MomentumCoefficients {
  float lr, momentum;
  bool nesterov;
  bool keras;  // ResourceApplyKerasMomentum
};
void MomentumF32(float* var, float* accum, const float* grad, const MomentumCoefficients& c,
                 size_t n);

// The two RMSProp ops' step, with TensorFlow's op semantics:
//   mg  = mg + (g - mg) * (1 - rho)                       (centered only)
//   ms  = ms + (g * g - ms) * (1 - rho)
//   mom = mom * momentum + lr * g / sqrt(ms + epsilon)     (plain)
//   mom = mom * momentum + lr * g / sqrt(ms - mg * mg + epsilon)  (centered)
//   var -= mom
// mg is NULL unless centered (ResourceApplyCenteredRMSProp).
struct RMSPropCoefficients {
  float lr, one_minus_rho, momentum, epsilon;
};
void RMSPropF32(float* var, float* ms, float* mom, float* mg, const float* grad,
                const RMSPropCoefficients& c, size_t n);

// The two Adagrad ops' step (epsilon 0 for ResourceApplyAdagrad, where
// sqrt(accum) + 0 is TensorFlow's sqrt(accum)):
//   accum += g * g                                          (if update_slots)
//   var -= lr * g / (sqrt(accum) + epsilon)
struct AdagradCoefficients {
  float lr, epsilon;
  bool update_slots;
};
void AdagradF32(float* var, float* accum, const float* grad, const AdagradCoefficients& c,
                size_t n);

class ComputeUnits;
// What the kernels' enqueued work does: the update over n elements, split
// across the compute units in kElementwiseGrain chunks.
void RunGradientDescent(float* var, const float* delta, float alpha, size_t n, ComputeUnits& units);
void RunAdam(float* var, float* m, float* v, const float* grad, const AdamCoefficients& c, size_t n,
             ComputeUnits& units);
void RunMomentum(float* var, float* accum, const float* grad, const MomentumCoefficients& c,
                 size_t n, ComputeUnits& units);
void RunRMSProp(float* var, float* ms, float* mom, float* mg, const float* grad,
                const RMSPropCoefficients& c, size_t n, ComputeUnits& units);
void RunAdagrad(float* var, float* accum, const float* grad, const AdagradCoefficients& c,
                size_t n, ComputeUnits& units);

namespace scalar {
void GradientDescentF32(float* var, const float* delta, float alpha, size_t n);
void AdamF32(float* var, float* m, float* v, const float* grad, const AdamCoefficients& c,
             size_t n);
void MomentumF32(float* var, float* accum, const float* grad, const MomentumCoefficients& c,
                 size_t n);
void RMSPropF32(float* var, float* ms, float* mom, float* mg, const float* grad,
                const RMSPropCoefficients& c, size_t n);
void AdagradF32(float* var, float* accum, const float* grad, const AdagradCoefficients& c,
                size_t n);
}  // namespace scalar

}  // namespace vacc

#endif  // VACC_KERNELS_VACC_OPTIMIZER_H_
