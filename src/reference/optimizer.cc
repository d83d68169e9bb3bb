// SPDX-License-Identifier: Apache-2.0
// The optimizer updates of ResourceApplyGradientDescent, ResourceApplyAdam,
// ResourceApplyMomentum, ResourceApplyKerasMomentum, ResourceApplyRMSProp,
// ResourceApplyCenteredRMSProp, ResourceApplyAdagrad and
// ResourceApplyAdagradV2, in place on the variables, as TensorFlow's op
// definitions state them.
#include <cmath>
#include <cstddef>

#include "reference.h"

namespace tfp_reference {

void ApplyGradientDescent(Tensor* var, double alpha, const Tensor& delta) {
  for (size_t i = 0; i < var->v.size(); ++i) var->v[i] -= alpha * delta.v[i];
}

void ApplyAdam(Tensor* var, Tensor* m, Tensor* v, const AdamParams& p, const Tensor& grad) {
  const double lr_t = p.lr * std::sqrt(1 - p.beta2_power) / (1 - p.beta1_power);
  for (size_t i = 0; i < var->v.size(); ++i) {
    const double g = grad.v[i];
    m->v[i] = p.beta1 * m->v[i] + (1 - p.beta1) * g;
    v->v[i] = p.beta2 * v->v[i] + (1 - p.beta2) * g * g;
    const double step = p.use_nesterov ? p.beta1 * m->v[i] + (1 - p.beta1) * g : m->v[i];
    var->v[i] -= lr_t * step / (std::sqrt(v->v[i]) + p.epsilon);
  }
}

void ApplyMomentum(Tensor* var, Tensor* accum, double lr, const Tensor& grad, double momentum,
                   bool use_nesterov, bool keras) {
  for (size_t i = 0; i < var->v.size(); ++i) {
    const double g = grad.v[i];
    double& a = accum->v[i];
    if (keras) {
      a = a * momentum - g * lr;
      var->v[i] += use_nesterov ? a * momentum - g * lr : a;
    } else {
      a = a * momentum + g;
      var->v[i] -= use_nesterov ? g * lr + a * momentum * lr : lr * a;
    }
  }
}

void ApplyRMSProp(Tensor* var, Tensor* ms, Tensor* mom, Tensor* mg, const RMSPropParams& p,
                  const Tensor& grad) {
  for (size_t i = 0; i < var->v.size(); ++i) {
    const double g = grad.v[i];
    ms->v[i] = p.rho * ms->v[i] + (1 - p.rho) * g * g;
    double den = ms->v[i] + p.epsilon;
    if (mg != nullptr) {
      mg->v[i] = p.rho * mg->v[i] + (1 - p.rho) * g;
      den -= mg->v[i] * mg->v[i];
    }
    mom->v[i] = p.momentum * mom->v[i] + p.lr * g / std::sqrt(den);
    var->v[i] -= mom->v[i];
  }
}

void ApplyAdagrad(Tensor* var, Tensor* accum, double lr, double epsilon, const Tensor& grad,
                  bool update_slots) {
  for (size_t i = 0; i < var->v.size(); ++i) {
    const double g = grad.v[i];
    if (update_slots) accum->v[i] += g * g;
    var->v[i] -= lr * g / (std::sqrt(accum->v[i]) + epsilon);
  }
}

}  // namespace tfp_reference
