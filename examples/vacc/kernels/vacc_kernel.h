// SPDX-License-Identifier: Apache-2.0
//
// The glue between TensorFlow's kernel C API (tensorflow/c/kernels.h) and
// vacc's kernels, so each kernel file holds only its op's logic:
//
//   class ReluKernel {
//    public:
//     explicit ReluKernel(KernelConstruction& k) {}      // read attrs here
//     void Compute(KernelContext& ctx) {                  // on TF's thread
//       Tensor x; Tensor y;
//       if (!ctx.Input(0, &x) || !ctx.AllocateOutput(0, x.dtype, x.shape, &y)) return;
//       ctx.Enqueue([x, y](ComputeUnits& units) { ...; return Status(); });
//     }
//   };
//   RegisterKernel<ReluKernel>("Relu", {TF_FLOAT, TF_HALF});
//
// How a kernel runs (the same contract as TensorFlow's GPU kernels):
//   - Compute runs on a TensorFlow thread. It reads inputs, allocates
//     outputs and *enqueues* the work on the op's stream; it does not wait.
//   - The work runs later, in stream order, on a compute unit, and may split
//     itself across all units (ComputeUnits::ParallelFor).
//   - Tensor memory stays valid for the work: TensorFlow hands freed memory
//     only to work enqueued later on the same stream.
//   - Errors found in Compute go to ctx.Fail (TensorFlow reports them for the
//     node); errors found by the work fail the stream (sticky, as on a GPU).
// TODO(vendor): Enqueue becomes "launch on the device's queue".
#ifndef VACC_KERNELS_VACC_KERNEL_H_
#define VACC_KERNELS_VACC_KERNEL_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "tensorflow/c/kernels.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "vacc_compute_units.h"
#include "vacc_stream.h"

namespace vacc {

using Shape = std::vector<int64_t>;

int64_t NumElements(const Shape& shape);
std::string ShapeText(const Shape& shape);   // "[2,3]"
std::string DataTypeName(TF_DataType type);  // "float", "bfloat16", ...

// A tensor as kernels see it: a view of device memory. Copyable into the
// enqueued work (TensorFlow keeps the memory alive, see above).
struct Tensor {
  TF_DataType dtype = TF_FLOAT;
  Shape shape;
  void* data = nullptr;
  int64_t num_elements() const { return NumElements(shape); }
  int64_t dim(int i) const { return shape[static_cast<size_t>(i)]; }
  int rank() const { return static_cast<int>(shape.size()); }
  template <typename T>
  T* as() const { return static_cast<T*>(data); }
};

// Which node a kernel instance runs, for the profiler (vacc_profiler.cc):
// read once when TensorFlow creates the kernel.
struct KernelLabel {
  std::string node;  // "sequential/dense/MatMul"
  std::string op;    // "MatMul"; the node name where the release cannot tell
};

// Kernel construction: attrs of the node. Errors are recorded once, and the
// kernel is then not created (TensorFlow reports the first error).
class KernelConstruction {
 public:
  explicit KernelConstruction(TF_OpKernelConstruction* ctx) : ctx_(ctx) {}
  bool ok() const { return ok_; }
  void Fail(TF_Code code, const std::string& message);

  bool GetBool(const char* name, bool* out);
  bool GetInt(const char* name, int64_t* out);
  bool GetFloat(const char* name, float* out);
  bool GetType(const char* name, TF_DataType* out);
  bool GetString(const char* name, std::string* out);
  bool GetIntList(const char* name, std::vector<int64_t>* out);
  // True if the node has attr `name` (attrs with defaults always exist).
  bool HasAttr(const char* name);
  // The node's name and op type.
  KernelLabel Label();
  TF_OpKernelConstruction* raw() const { return ctx_; }

 private:
  TF_OpKernelConstruction* ctx_;
  bool ok_ = true;
};

class KernelContext {
 public:
  // `label`: the running kernel's node, named by profiler events (may be NULL).
  explicit KernelContext(TF_OpKernelContext* ctx, const KernelLabel* label = nullptr)
      : ctx_(ctx), label_(label) {}
  ~KernelContext();  // releases the TF_Tensor handles (not the memory)
  KernelContext(const KernelContext&) = delete;
  KernelContext& operator=(const KernelContext&) = delete;

  bool ok() const { return ok_; }
  // Fails the node with `message` (TensorFlow adds the node's name when it
  // reports it); returns false so callers can `return ctx.Fail(...)`.
  bool Fail(TF_Code code, const std::string& message);

  int num_inputs() const;
  int num_outputs() const;
  bool Input(int i, Tensor* out);
  // Allocates output i (device memory, or host memory for host-memory outputs).
  bool AllocateOutput(int i, TF_DataType dtype, const Shape& shape, Tensor* out);
  // Output i is input `input` with a new shape (same buffer, no copy):
  // Reshape, Squeeze, ExpandDims, Identity. The input fetched by Input()
  // before is reused, not fetched from TensorFlow again.
  bool ForwardInput(int input, int output, const Shape& shape);
  // Output i reuses an input's buffer when TensorFlow allows it (that input
  // is not used elsewhere and has the same size), else a new allocation.
  bool ForwardOrAllocate(std::initializer_list<int> candidates, int output, TF_DataType dtype,
                         const Shape& shape, Tensor* out);
  // Reads a small host-memory int32/int64 input (shape, axes, perm) whose
  // kernel registration marks it HostMemory.
  bool HostInts(int i, std::vector<int64_t>* out);
  // The view of a tensor another C API call handed out (a variable's, from
  // TF_GetInputTensorFromVariable); its handle is released with the context.
  Tensor Hold(TF_Tensor* t);

  // The op's stream and the device's compute units.
  Stream* stream();
  // Enqueues `work` on the op's stream. Work captures Tensors by value.
  // With synchronous kernels (SetKernelsSynchronous) it then waits for the
  // work and fails the node with the work's error. While a profiling session
  // is active the work is timed and recorded as one event of this node.
  using Work = std::function<Status(ComputeUnits& units)>;
  void Enqueue(Work work);

  TF_OpKernelContext* raw() const { return ctx_; }

 private:
  TF_Tensor* Keep(TF_Tensor* t);
  // Input i's handle from TensorFlow (held until the context goes), fetched
  // once for the first kRememberedInputs inputs however often a kernel asks;
  // NULL after failing the node.
  TF_Tensor* InputHandle(int i);

  static constexpr int kRememberedInputs = 4;
  TF_OpKernelContext* ctx_;
  const KernelLabel* label_;
  bool ok_ = true;
  Stream* stream_ = nullptr;
  std::vector<TF_Tensor*> held_;
  TF_Tensor* inputs_[kRememberedInputs] = {};
};

// ---- Registration
// Registers kernel class K (constructor K(KernelConstruction&), method
// void Compute(KernelContext&)) for `op` on VACC, once per type in `types`
// for type attr `type_attr` (none: no type constraint). `host_memory` names
// the op's inputs/outputs that stay in host memory (shapes, axes). Errors
// are logged to stderr: TF_InitKernel cannot fail.
struct KernelOptions {
  const char* type_attr = "T";
  std::vector<TF_DataType> types;
  std::vector<const char*> host_memory;
  // Further fixed type constraints, e.g. {"Tidx", TF_INT32}.
  std::vector<std::pair<const char*, TF_DataType>> constraints;
};

using CreateFn = void* (*)(TF_OpKernelConstruction*);
using ComputeFn = void (*)(void*, TF_OpKernelContext*);
using DeleteFn = void (*)(void*);
void RegisterKernelFns(const char* op, const KernelOptions& options, CreateFn create,
                       ComputeFn compute, DeleteFn destroy);

// What TensorFlow holds per kernel: the kernel and the node it runs.
template <typename K>
struct KernelInstance {
  explicit KernelInstance(KernelConstruction& k) : label(k.Label()), kernel(k) {}
  KernelLabel label;
  K kernel;
};

template <typename K>
void RegisterKernel(const char* op, const KernelOptions& options) {
  RegisterKernelFns(
      op, options,
      [](TF_OpKernelConstruction* raw) -> void* {
        KernelConstruction k(raw);
        auto* instance = new KernelInstance<K>(k);
        if (k.ok()) return instance;
        delete instance;
        return nullptr;  // TensorFlow reports the construction failure
      },
      [](void* instance, TF_OpKernelContext* raw) {
        auto* in = static_cast<KernelInstance<K>*>(instance);
        KernelContext ctx(raw, &in->label);
        in->kernel.Compute(ctx);
      },
      [](void* instance) { delete static_cast<KernelInstance<K>*>(instance); });
}

// The common case: type attr "T" with these types, and the op's args that
// stay in host memory.
template <typename K>
void RegisterKernel(const char* op, std::vector<TF_DataType> types,
                    std::vector<const char*> host_memory = {}) {
  KernelOptions options;
  options.types = std::move(types);
  options.host_memory = std::move(host_memory);
  RegisterKernel<K>(op, options);
}

// VACC_SYNC_KERNELS (default 1): each kernel waits for its work before
// Compute returns. Needed inside TensorFlow because TensorFlow's own
// DEVICE_DEFAULT kernels for resource variables (AssignAddVariableOp,
// AssignSubVariableOp, ...) read and write device buffers directly from the
// host, without waiting for the stream: with asynchronous kernels such an
// update can read a gradient the stream has not computed yet (a Keras MLP
// then diverges after a few steps). 0: fully asynchronous, for plugins that
// register their own variable kernels (TF releases that export the variable
// helpers) and for hosts that run only the plugin's kernels.
// TODO(vendor): a device whose memory the host cannot touch never meets the
// race (TF would fail instead); register the variable kernels yourself.
void SetKernelsSynchronous(bool synchronous);
bool KernelsSynchronous();

// The device type kernels register for (the platform's type, "VACC").
extern const char kKernelDeviceType[];

}  // namespace vacc

#endif  // VACC_KERNELS_VACC_KERNEL_H_
