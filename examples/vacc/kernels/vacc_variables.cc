// SPDX-License-Identifier: Apache-2.0
//
// Kernels that update resource variables in place: AssignAddVariableOp,
// AssignSubVariableOp, ResourceApplyGradientDescent, ResourceApplyAdam,
// ResourceApplyMomentum, ResourceApplyKerasMomentum, ResourceApplyRMSProp,
// ResourceApplyCenteredRMSProp, ResourceApplyAdagrad, ResourceApplyAdagradV2.
//
// They need four functions of tensorflow/c/kernels_experimental.h that
// TensorFlow exports from 2.6 to 2.18 only. Calling them directly would make
// the plugin fail to load in 2.19+ (RTLD_NOW), so they are bound at
// TF_InitKernel with TFPLUGIN_BIND_IMPORT and the kernels are registered
// only when all four were found. Elsewhere TensorFlow's own DEVICE_DEFAULT
// kernels update VACC variables (README "Variables and optimizers").
//
// The update runs on the op's stream like every other kernel, while the
// variable's lock is held: work already queued (the gradient) comes first,
// and work queued later by any op sees the new value.
// TODO(vendor): your device's update kernels go in the Enqueue'd work.
#include <initializer_list>
#include <string>
#include <vector>

#include "kernels/vacc_broadcast.h"
#include "kernels/vacc_elementwise.h"
#include "kernels/vacc_kernel.h"
#include "kernels/vacc_optimizer.h"
#include "vacc_copy.h"
#include "tfplugin/optional_import.h"

namespace vacc {
namespace {

// TF_AssignUpdateVariable's `Op`: TensorFlow's dense update types.
constexpr int kUpdateAdd = 0, kUpdateSub = 1;

// The helpers, bound once by RegisterVariableKernels (before any kernel runs).
struct VariableHelpers {
  TFPLUGIN_PFN_TF_GetInputTensorFromVariable get_input = nullptr;
  TFPLUGIN_PFN_TF_MaybeLockVariableInputMutexesInOrder lock_inputs = nullptr;
  TFPLUGIN_PFN_TF_ReleaseVariableInputLockHolder release_lock = nullptr;
  TFPLUGIN_PFN_TF_AssignUpdateVariable assign_update = nullptr;
};
VariableHelpers g_helpers;

// The C API's callbacks carry no user data: a kernel publishes its context
// for the duration of the helper call, which runs them on the same thread.
thread_local KernelContext* t_current = nullptr;

class CurrentContext {
 public:
  explicit CurrentContext(KernelContext& ctx) : previous_(t_current) { t_current = &ctx; }
  ~CurrentContext() { t_current = previous_; }

 private:
  KernelContext* previous_;
};

// The kernel that a callback runs for; NULL (failing the node) if a helper
// called back outside the kernel's call, which would be a vacc bug.
KernelContext* CurrentFor(TF_OpKernelContext* raw, const char* callback) {
  if (t_current != nullptr && t_current->raw() == raw) return t_current;
  TF_Status* s = TF_NewStatus();
  TF_SetStatus(s, TF_INTERNAL, (std::string(callback) + " called outside its kernel's helper call").c_str());
  TF_OpKernelContext_Failure(raw, s);
  TF_DeleteStatus(s);
  return nullptr;
}

// copyFunc: TensorFlow asks for a copy of a variable's buffer when another
// tensor still shares it (copy on write: a read taken before the update
// keeps the old value). A device-to-device copy in stream order.
void CopyOnDevice(TF_OpKernelContext* raw, TF_Tensor* source, TF_Tensor* dest) {
  KernelContext* ctx = CurrentFor(raw, "copyFunc");
  if (ctx == nullptr) return;
  const size_t bytes = TF_TensorByteSize(source);
  if (bytes != TF_TensorByteSize(dest)) {
    ctx->Fail(TF_INTERNAL, "copyFunc: source of " + std::to_string(bytes) + " bytes, destination of " +
                               std::to_string(TF_TensorByteSize(dest)));
    return;
  }
  if (bytes == 0) return;
  const char* from = static_cast<const char*>(TF_TensorData(source));
  char* to = static_cast<char*>(TF_TensorData(dest));
  ctx->Enqueue([from, to, bytes](ComputeUnits& units) {
    Copy(units, to, from, bytes);
    return Status();
  });
}

// updateFunc of TF_AssignUpdateVariable: var op= value, called with the
// variable locked and its dtype and shape checked equal to the value's.
void UpdateOnDevice(TF_OpKernelContext* raw, TF_Tensor* var, TF_Tensor* value, int op) {
  KernelContext* ctx = CurrentFor(raw, "updateFunc");
  if (ctx == nullptr) return;
  const int64_t n = TF_TensorElementCount(var);
  if (n == 0) return;
  if (op != kUpdateAdd && op != kUpdateSub) {  // only what our kernels pass
    ctx->Fail(TF_INTERNAL, "updateFunc: Op " + std::to_string(op) + " is neither add (0) nor subtract (1)");
    return;
  }
  const TF_DataType dtype = TF_TensorType(var);
  void* target = TF_TensorData(var);
  const void* operand = TF_TensorData(value);
  const BinaryOp binary = op == kUpdateAdd ? BinaryOp::kAdd : BinaryOp::kSub;
  BroadcastPlan plan;
  PlanBroadcast({n}, {n}, &plan);
  ctx->Enqueue([binary, plan, dtype, target, operand](ComputeUnits& units) {
    RunBinary(binary, plan, dtype, target, operand, target, units);
    return Status();
  });
}

bool StatusOk(KernelContext& ctx, TF_Status* s) {
  if (TF_GetCode(s) == TF_OK) return true;
  return ctx.Fail(TF_GetCode(s), TF_Message(s));
}

// AssignAddVariableOp, AssignSubVariableOp (resource, value).
template <int kOp>
class AssignUpdateKernel {
 public:
  explicit AssignUpdateKernel(KernelConstruction&) {}
  void Compute(KernelContext& ctx) {
    CurrentContext current(ctx);
    TF_Status* s = TF_NewStatus();
    g_helpers.assign_update(ctx.raw(), 0, 1, kOp, /*isVariantType=*/false, CopyOnDevice,
                            UpdateOnDevice, s);
    StatusOk(ctx, s);
    TF_DeleteStatus(s);
  }
};

// The variables among an op's inputs, locked in TensorFlow's order (by
// address, each once) for the kernel's lifetime when use_locking is set.
// Both helpers may call copyFunc, so the kernel's context is current.
class VariableLocks {
 public:
  VariableLocks(KernelContext& ctx, bool exclusive, std::initializer_list<int> inputs)
      : current_(ctx), exclusive_(exclusive) {
    const std::vector<int> list(inputs);
    TF_Status* s = TF_NewStatus();
    g_helpers.lock_inputs(ctx.raw(), exclusive, /*isVariantType=*/false, list.data(),
                          static_cast<int>(list.size()), CopyOnDevice, &holder_, s);
    ok_ = StatusOk(ctx, s);
    TF_DeleteStatus(s);
  }
  ~VariableLocks() {
    if (holder_ != nullptr) g_helpers.release_lock(holder_);
  }
  VariableLocks(const VariableLocks&) = delete;
  VariableLocks& operator=(const VariableLocks&) = delete;
  bool ok() const { return ok_; }

  // Input `i`'s variable tensor, which must be initialized and of `dtype`.
  bool Get(KernelContext& ctx, int i, const char* name, TF_DataType dtype, Tensor* out) {
    TF_Status* s = TF_NewStatus();
    TF_Tensor* t = nullptr;
    g_helpers.get_input(ctx.raw(), i, /*lock_held=*/exclusive_, /*isVariantType=*/false,
                        /*sparse=*/false, CopyOnDevice, &t, s);
    const bool ok = StatusOk(ctx, s);
    TF_DeleteStatus(s);
    if (!ok) return false;
    if (t == nullptr) return ctx.Fail(TF_INTERNAL, std::string(name) + ": no tensor from TF_GetInputTensorFromVariable");
    *out = ctx.Hold(t);
    if (out->dtype != dtype) {
      return ctx.Fail(TF_INVALID_ARGUMENT, std::string(name) + " is a " + DataTypeName(out->dtype) +
                                               " variable, the op's T is " + DataTypeName(dtype));
    }
    return true;
  }

 private:
  CurrentContext current_;
  bool exclusive_;
  bool ok_ = false;
  TF_VariableInputLockHolder* holder_ = nullptr;
};

bool ScalarInput(KernelContext& ctx, int i, const char* name, Tensor* out) {
  if (!ctx.Input(i, out)) return false;
  if (out->rank() == 0) return true;
  return ctx.Fail(TF_INVALID_ARGUMENT, std::string(name) + " is not a scalar: " + ShapeText(out->shape));
}

bool SameShape(KernelContext& ctx, const Tensor& var, const char* var_name, const Tensor& other,
               const char* other_name) {
  if (var.shape == other.shape) return true;
  return ctx.Fail(TF_INVALID_ARGUMENT, std::string(var_name) + " and " + other_name +
                                           " do not have the same shape: " + ShapeText(var.shape) +
                                           " " + ShapeText(other.shape));
}

// The two variables of a one-slot optimizer (momentum, Adagrad): var
// (input 0) and accum (input 1), locked, of grad's dtype, all three of one
// shape. False when the kernel failed or the variables are empty (nothing
// to update).
bool VarAndAccum(KernelContext& ctx, VariableLocks& locks, const Tensor& grad, Tensor* var,
                 Tensor* accum) {
  return locks.ok() && locks.Get(ctx, 0, "var", grad.dtype, var) &&
         locks.Get(ctx, 1, "accum", grad.dtype, accum) &&
         SameShape(ctx, *var, "var", *accum, "accum") && SameShape(ctx, *var, "var", grad, "grad") &&
         var->num_elements() != 0;
}

// ResourceApplyGradientDescent (var, alpha, delta): var -= alpha * delta.
class ApplyGradientDescentKernel {
 public:
  explicit ApplyGradientDescentKernel(KernelConstruction& k) { k.GetBool("use_locking", &use_locking_); }
  void Compute(KernelContext& ctx) {
    Tensor alpha, delta, var;
    if (!ScalarInput(ctx, 1, "alpha", &alpha) || !ctx.Input(2, &delta)) return;
    VariableLocks locks(ctx, use_locking_, {0});
    if (!locks.ok() || !locks.Get(ctx, 0, "var", delta.dtype, &var) ||
        !SameShape(ctx, var, "var", delta, "delta") || var.num_elements() == 0) {
      return;
    }
    // alpha is read by the work: it is device memory, written by earlier work.
    ctx.Enqueue([var, alpha, delta](ComputeUnits& units) {
      RunGradientDescent(var.as<float>(), delta.as<float>(), *alpha.as<float>(),
                         static_cast<size_t>(var.num_elements()), units);
      return Status();
    });
  }

 private:
  bool use_locking_ = false;
};

// ResourceApplyAdam (var, m, v, beta1_power, beta2_power, lr, beta1, beta2,
// epsilon, grad).
class ApplyAdamKernel {
 public:
  explicit ApplyAdamKernel(KernelConstruction& k) {
    if (k.GetBool("use_locking", &use_locking_)) k.GetBool("use_nesterov", &nesterov_);
  }
  void Compute(KernelContext& ctx) {
    static const char* const kScalars[] = {"beta1_power", "beta2_power", "lr", "beta1", "beta2",
                                           "epsilon"};
    Tensor scalars[6], grad, var, m, v;
    for (int i = 0; i < 6; ++i) {
      if (!ScalarInput(ctx, 3 + i, kScalars[i], &scalars[i])) return;
    }
    if (!ctx.Input(9, &grad)) return;
    VariableLocks locks(ctx, use_locking_, {0, 1, 2});
    if (!locks.ok() || !locks.Get(ctx, 0, "var", grad.dtype, &var) ||
        !locks.Get(ctx, 1, "m", grad.dtype, &m) || !locks.Get(ctx, 2, "v", grad.dtype, &v) ||
        !SameShape(ctx, var, "var", m, "m") || !SameShape(ctx, var, "var", v, "v") ||
        !SameShape(ctx, var, "var", grad, "grad") || var.num_elements() == 0) {
      return;
    }
    const float* s[6];
    for (int i = 0; i < 6; ++i) s[i] = scalars[i].as<float>();
    const bool nesterov = nesterov_;
    ctx.Enqueue([var, m, v, grad, s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3], s4 = s[4], s5 = s[5],
                 nesterov](ComputeUnits& units) {
      const AdamCoefficients c = MakeAdamCoefficients(*s2, *s0, *s1, *s3, *s4, *s5, nesterov);
      RunAdam(var.as<float>(), m.as<float>(), v.as<float>(), grad.as<float>(), c,
              static_cast<size_t>(var.num_elements()), units);
      return Status();
    });
  }

 private:
  bool use_locking_ = false;
  bool nesterov_ = false;
};

// ResourceApplyMomentum and, kKeras, ResourceApplyKerasMomentum (var, accum,
// lr, grad, momentum).
template <bool kKeras>
class ApplyMomentumKernel {
 public:
  explicit ApplyMomentumKernel(KernelConstruction& k) {
    if (k.GetBool("use_locking", &use_locking_)) k.GetBool("use_nesterov", &nesterov_);
  }
  void Compute(KernelContext& ctx) {
    Tensor lr, grad, momentum, var, accum;
    if (!ScalarInput(ctx, 2, "lr", &lr) || !ctx.Input(3, &grad) ||
        !ScalarInput(ctx, 4, "momentum", &momentum)) {
      return;
    }
    VariableLocks locks(ctx, use_locking_, {0, 1});
    if (!VarAndAccum(ctx, locks, grad, &var, &accum)) return;
    const bool nesterov = nesterov_;
    ctx.Enqueue([var, accum, grad, lr, momentum, nesterov](ComputeUnits& units) {
      const MomentumCoefficients c{*lr.as<float>(), *momentum.as<float>(), nesterov, kKeras};
      RunMomentum(var.as<float>(), accum.as<float>(), grad.as<float>(), c,
                  static_cast<size_t>(var.num_elements()), units);
      return Status();
    });
  }

 private:
  bool use_locking_ = false;
  bool nesterov_ = false;
};

// ResourceApplyRMSProp (var, ms, mom, lr, rho, momentum, epsilon, grad)
// and, kCentered, ResourceApplyCenteredRMSProp (var, mg, ms, mom, lr, rho,
// momentum, epsilon, grad).
template <bool kCentered>
class ApplyRMSPropKernel {
 public:
  explicit ApplyRMSPropKernel(KernelConstruction& k) { k.GetBool("use_locking", &use_locking_); }
  void Compute(KernelContext& ctx) {
    constexpr int kFirstScalar = kCentered ? 4 : 3;  // after the variables
    static const char* const kScalars[] = {"lr", "rho", "momentum", "epsilon"};
    Tensor scalars[4], grad, var, ms, mom, mg;
    for (int i = 0; i < 4; ++i) {
      if (!ScalarInput(ctx, kFirstScalar + i, kScalars[i], &scalars[i])) return;
    }
    if (!ctx.Input(kFirstScalar + 4, &grad)) return;
    VariableLocks locks(ctx, use_locking_, kCentered ? std::initializer_list<int>{0, 1, 2, 3}
                                                     : std::initializer_list<int>{0, 1, 2});
    const int ms_input = kCentered ? 2 : 1;
    if (!locks.ok() || !locks.Get(ctx, 0, "var", grad.dtype, &var) ||
        (kCentered && !locks.Get(ctx, 1, "mg", grad.dtype, &mg)) ||
        !locks.Get(ctx, ms_input, "ms", grad.dtype, &ms) ||
        !locks.Get(ctx, ms_input + 1, "mom", grad.dtype, &mom) ||
        (kCentered && !SameShape(ctx, var, "var", mg, "mg")) ||
        !SameShape(ctx, var, "var", ms, "ms") || !SameShape(ctx, var, "var", mom, "mom") ||
        !SameShape(ctx, var, "var", grad, "grad") || var.num_elements() == 0) {
      return;
    }
    const float *lr = scalars[0].as<float>(), *rho = scalars[1].as<float>(),
                *momentum = scalars[2].as<float>(), *epsilon = scalars[3].as<float>();
    ctx.Enqueue([var, ms, mom, mg, grad, lr, rho, momentum, epsilon](ComputeUnits& units) {
      const RMSPropCoefficients c{*lr, 1.0f - *rho, *momentum, *epsilon};
      RunRMSProp(var.as<float>(), ms.as<float>(), mom.as<float>(),
                 kCentered ? mg.as<float>() : nullptr, grad.as<float>(), c,
                 static_cast<size_t>(var.num_elements()), units);
      return Status();
    });
  }

 private:
  bool use_locking_ = false;
};

// ResourceApplyAdagrad (var, accum, lr, grad) and, kV2,
// ResourceApplyAdagradV2 (var, accum, lr, epsilon, grad).
template <bool kV2>
class ApplyAdagradKernel {
 public:
  explicit ApplyAdagradKernel(KernelConstruction& k) {
    if (k.GetBool("use_locking", &use_locking_)) k.GetBool("update_slots", &update_slots_);
  }
  void Compute(KernelContext& ctx) {
    Tensor lr, epsilon, grad, var, accum;
    if (!ScalarInput(ctx, 2, "lr", &lr) || (kV2 && !ScalarInput(ctx, 3, "epsilon", &epsilon)) ||
        !ctx.Input(kV2 ? 4 : 3, &grad)) {
      return;
    }
    VariableLocks locks(ctx, use_locking_, {0, 1});
    if (!VarAndAccum(ctx, locks, grad, &var, &accum)) return;
    const bool update_slots = update_slots_;
    ctx.Enqueue([var, accum, grad, lr, epsilon, update_slots](ComputeUnits& units) {
      const AdagradCoefficients c{*lr.as<float>(), kV2 ? *epsilon.as<float>() : 0.0f,
                                  update_slots};
      RunAdagrad(var.as<float>(), accum.as<float>(), grad.as<float>(), c,
                 static_cast<size_t>(var.num_elements()), units);
      return Status();
    });
  }

 private:
  bool use_locking_ = false;
  bool update_slots_ = true;
};

bool BindVariableHelpers() {
  VariableHelpers h;
  const bool all = TFPLUGIN_BIND_IMPORT(TF_GetInputTensorFromVariable, &h.get_input) &&
                   TFPLUGIN_BIND_IMPORT(TF_MaybeLockVariableInputMutexesInOrder, &h.lock_inputs) &&
                   TFPLUGIN_BIND_IMPORT(TF_ReleaseVariableInputLockHolder, &h.release_lock) &&
                   TFPLUGIN_BIND_IMPORT(TF_AssignUpdateVariable, &h.assign_update);
  if (all) g_helpers = h;
  return all;
}

}  // namespace

bool RegisterVariableKernels() {
  if (!BindVariableHelpers()) return false;  // TensorFlow 2.19+: its own kernels take over
  // The resource handles stay in host memory, as TensorFlow keeps them.
  KernelOptions assign;
  assign.type_attr = "dtype";
  assign.types = {TF_FLOAT, TF_BFLOAT16, TF_HALF};
  assign.host_memory = {"resource"};
  RegisterKernel<AssignUpdateKernel<kUpdateAdd>>("AssignAddVariableOp", assign);
  RegisterKernel<AssignUpdateKernel<kUpdateSub>>("AssignSubVariableOp", assign);
  RegisterKernel<ApplyGradientDescentKernel>("ResourceApplyGradientDescent", {TF_FLOAT}, {"var"});
  RegisterKernel<ApplyAdamKernel>("ResourceApplyAdam", {TF_FLOAT}, {"var", "m", "v"});
  RegisterKernel<ApplyMomentumKernel<false>>("ResourceApplyMomentum", {TF_FLOAT}, {"var", "accum"});
  RegisterKernel<ApplyMomentumKernel<true>>("ResourceApplyKerasMomentum", {TF_FLOAT},
                                            {"var", "accum"});
  RegisterKernel<ApplyRMSPropKernel<false>>("ResourceApplyRMSProp", {TF_FLOAT},
                                            {"var", "ms", "mom"});
  RegisterKernel<ApplyRMSPropKernel<true>>("ResourceApplyCenteredRMSProp", {TF_FLOAT},
                                           {"var", "mg", "ms", "mom"});
  RegisterKernel<ApplyAdagradKernel<false>>("ResourceApplyAdagrad", {TF_FLOAT}, {"var", "accum"});
  RegisterKernel<ApplyAdagradKernel<true>>("ResourceApplyAdagradV2", {TF_FLOAT}, {"var", "accum"});
  return true;
}

}  // namespace vacc
