// SPDX-License-Identifier: Apache-2.0
// Scalar reference implementations of a few TensorFlow ops: plain loops,
// written to be obviously right rather than fast. Used by validate_plugin's
// kernels phase (TFP-KERN-NUMERICS) to check a plugin's kernels; meant to be
// reused by kernel tests. Tensors are dense, row-major; a shape is a list of
// dimensions ({} is a scalar). One file per op family:
//   elementwise.cc  AddV2, Sub, Mul, RealDiv (NumPy broadcasting), Relu, Identity
//   matmul.cc       MatMul (transpose_a, transpose_b)
#ifndef TFPLUGIN_REFERENCE_REFERENCE_H_
#define TFPLUGIN_REFERENCE_REFERENCE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tfp_reference {

using Shape = std::vector<int64_t>;

int64_t NumElements(const Shape& shape);
std::string ShapeText(const Shape& shape);  // "[2,1,5]", "[]"

// The broadcast shape of `a` and `b` (NumPy rules: align on the right, a
// dimension of 1 stretches). False if they are incompatible.
bool BroadcastShape(const Shape& a, const Shape& b, Shape* out);

enum class Binary { kAdd, kSub, kMul, kDiv };
// "AddV2", "Sub", "Mul", "RealDiv" -> the operation; false if none of them.
bool BinaryFromOp(const std::string& op, Binary* out);

// out = x (op) y with broadcasting; `out_shape` must be BroadcastShape(xs, ys).
// Integer division truncates toward zero (as TensorFlow's RealDiv on ints does
// not exist: only float types are checked for RealDiv).
template <typename T>
void BinaryOp(Binary op, const T* x, const Shape& xs, const T* y, const Shape& ys, T* out,
              const Shape& out_shape);

template <typename T>
void Relu(const T* x, int64_t n, T* out);  // max(x, 0); NaN stays NaN

template <typename T>
void Identity(const T* x, int64_t n, T* out);

// c[m,n] = op(a) [m,k] * op(b) [k,n], op = transpose or not. Shapes of the
// stored a, b: transpose_a ? [k,m] : [m,k], transpose_b ? [n,k] : [k,n].
// Accumulates in double for float.
template <typename T>
void MatMul(const T* a, const T* b, int64_t m, int64_t k, int64_t n, bool transpose_a,
            bool transpose_b, T* c);

}  // namespace tfp_reference

#endif  // TFPLUGIN_REFERENCE_REFERENCE_H_
