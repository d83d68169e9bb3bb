// SPDX-License-Identifier: Apache-2.0
//
// The elementwise bodies shared by the kernels of several families (unary,
// binary, bias, activation gradients) and by the tests and benchmarks that
// compare them. Each entry point runs the SIMD body (Highway, the target
// VACC_SIMD selected) or, with VACC_SIMD=scalar, the scalar reference body;
// namespace scalar holds the reference bodies themselves.
#ifndef VACC_KERNELS_VACC_ELEMENTWISE_H_
#define VACC_KERNELS_VACC_ELEMENTWISE_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "tensorflow/c/tf_datatype.h"

namespace vacc {

enum class UnaryOp : int {
  kRelu, kRelu6, kElu, kSigmoid, kTanh, kNeg, kExp, kLog, kSqrt, kRsqrt, kSquare,
};

// Binary ops; the activation gradients are binary ops of same-shape inputs
// in TensorFlow's input order: ReluGrad/Relu6Grad (gradients, features),
// EluGrad (gradients, outputs), SigmoidGrad/TanhGrad (y, dy).
enum class BinaryOp : int {
  kAdd, kSub, kMul, kDiv, kMax, kMin, kSquaredDiff,
  kReluGrad, kRelu6Grad, kEluGrad, kSigmoidGrad, kTanhGrad,
};

// Which operand is a single value repeated (a broadcast scalar).
enum class Operands : int { kVectorVector, kScalarVector, kVectorScalar };

// How the SIMD bodies write their output. kStreaming: non-temporal stores
// (past the caches, no read of the destination's lines first), for outputs
// too big to stay in cache for whoever reads them next: on a DRAM-sized
// tensor a copy-like op then moves 2 bytes per byte instead of 3 (see
// kStreamingStoreBytes). The caller fences (hwy::FlushStream) before
// anyone else reads the output. 16-bit floats and the scalar bodies store
// normally either way.
enum class Stores : int { kCached, kStreaming };

// y[i] = op(x[i]), i < n. In place (x == y) is fine.
void UnaryF32(UnaryOp op, const float* x, float* y, size_t n, Stores stores = Stores::kCached);
// Neg and Square only (the int32 unary ops TensorFlow models use).
void UnaryI32(UnaryOp op, const int32_t* x, int32_t* y, size_t n,
              Stores stores = Stores::kCached);

// out[i] = op(a[i or 0], b[i or 0]), i < n, as `form` says.
void BinaryF32(BinaryOp op, Operands form, const float* a, const float* b, float* out, size_t n,
               Stores stores = Stores::kCached);
// kAdd, kSub, kMul, kMax, kMin, kSquaredDiff (wrapping like TensorFlow's int32).
void BinaryI32(BinaryOp op, Operands form, const int32_t* a, const int32_t* b, int32_t* out,
               size_t n, Stores stores = Stores::kCached);

// True if the op has a body for this dtype.
bool UnarySupports(UnaryOp op, TF_DataType dtype);
bool BinarySupports(BinaryOp op, TF_DataType dtype);

// Any dtype the op supports (float, bfloat16, half, int32): 16-bit floats
// go through float in stack blocks. Pointers are to the dtype's elements.
void UnaryAny(UnaryOp op, TF_DataType dtype, const void* x, void* y, size_t n,
              Stores stores = Stores::kCached);
void BinaryAny(BinaryOp op, Operands form, TF_DataType dtype, const void* a, const void* b,
               void* out, size_t n, Stores stores = Stores::kCached);
// BinaryAny over `rows` runs of n: run r reads a + r * a_row_step and
// b + r * b_row_step (in elements; 0 repeats a row) and writes out + r * n.
// One SIMD dispatch for all the rows (float32).
void BinaryRowsAny(BinaryOp op, Operands form, TF_DataType dtype, const void* a,
                   int64_t a_row_step, const void* b, int64_t b_row_step, void* out, size_t rows,
                   size_t n, Stores stores = Stores::kCached);

class ComputeUnits;
// What a unary kernel's enqueued work does: UnaryAny over n elements in
// kElementwiseGrain chunks across the compute units.
void RunUnary(UnaryOp op, TF_DataType dtype, const void* x, void* y, size_t n, ComputeUnits& units);

namespace scalar {
void UnaryF32(UnaryOp op, const float* x, float* y, size_t n);
void UnaryI32(UnaryOp op, const int32_t* x, int32_t* y, size_t n);
void BinaryF32(BinaryOp op, Operands form, const float* a, const float* b, float* out, size_t n);
void BinaryI32(BinaryOp op, Operands form, const int32_t* a, const int32_t* b, int32_t* out,
               size_t n);
}  // namespace scalar

// Elements per chunk handed to a compute unit: big enough to amortise the
// hand-off (~0.2 us), small enough that a chunk's inputs and output (3 x 64
// KiB for float) stay in L2 and the units balance.
constexpr size_t kElementwiseGrain = 16384;

// Outputs of at least this many bytes are written with streaming stores
// (RunUnary, RunBinary): with its inputs that is at least the 32 MiB L3 of
// the Zen3 host, so the output would not be in cache for the next op anyway.
// Measured on Zen3, 256 MiB Relu: 25 ms streaming vs 36 ms cached (glibc's
// memcpy streams above a similar size for the same reason).
// TODO(vendor): a device sizes this from its own last-level cache.
constexpr size_t kStreamingStoreBytes = size_t{16} << 20;

// The stores RunUnary/RunBinary use for an output of `bytes`.
inline Stores StoresFor(size_t bytes) {
  return bytes >= kStreamingStoreBytes ? Stores::kStreaming : Stores::kCached;
}

// The vectors streaming stores write (vacc_store-inl.h): the SIMD target's
// own, or 256 bits wide when that is wider. Chosen for the host CPU
// (HostCpuIsAmd): 256 bits on AMD, full width elsewhere. On Zen4 a
// DRAM-sized BiasAdd and Relu on one unit ran ~5% faster with 256-bit
// vectors (medians of 6 alternating runs: 1.04-1.05x; AddV2 1.01x), and a
// plain loop showed the same (a bias add streamed at 0.87-0.88x a copy's
// rate with zmm, 0.94-0.96x with ymm). On an Intel Xeon (Emerald Rapids
// class) it is the other way round: a 256 MiB Relu with 512-bit streaming
// stores ran 1.11x a 256-bit streaming copy (one core, alternating, medians
// of 15), the same Relu with 256-bit stores 0.98x.
enum class StreamingWidth : int { kTargetVector, k256Bit };
StreamingWidth CurrentStreamingWidth();
// For tests: run the other width on this host (both must compute the same).
void SetStreamingWidth(StreamingWidth width);

// How RunUnary and RunBinary split n output elements of `element_size`
// bytes: ParallelFor in kElementwiseGrain chunks, body(begin, end, stores)
// with the stores StoresFor picks for the whole output; a chunk's streamed
// stores are fenced before the unit reports it done.
// vacc_elementwise_parallel.cc.
void ParallelElementwise(ComputeUnits& units, size_t n, size_t element_size,
                         const std::function<void(size_t, size_t, Stores)>& body);

}  // namespace vacc

#endif  // VACC_KERNELS_VACC_ELEMENTWISE_H_
