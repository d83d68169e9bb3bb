// SPDX-License-Identifier: Apache-2.0
// Scalar reference implementations of TensorFlow ops: plain loops, written
// to be obviously right rather than fast. The oracle of the kernel
// conformance library (src/conformance), which validate_plugin's kernels
// phase and the example plugin's kernel tests use.
//
// Values are doubles whatever the op's dtype: every float32, bfloat16, half
// and int32 value is exact in a double, sums accumulate in double, and the
// caller rounds the result to the dtype (RoundTo, dtype.cc). Tensors are
// dense, row-major; a shape is a list of dimensions ({} is a scalar); image
// ops use NHWC and filters HWIO, as TensorFlow's defaults.
// One file per op family:
//   tensor.cc       Tensor helpers, shapes, broadcasting
//   dtype.cc        rounding to float32 / bfloat16 / half / int32 / bool (Cast)
//   elementwise.cc  AddV2 Sub Mul RealDiv Maximum Minimum SquaredDifference
//   unary.cc        Relu Relu6 Elu Sigmoid Tanh Neg Exp Log Sqrt Rsqrt Square Identity
//   activation_grad.cc  ReluGrad Relu6Grad EluGrad SigmoidGrad TanhGrad
//   matmul.cc       MatMul, BatchMatMulV2
//   bias.cc         BiasAdd, BiasAddGrad
//   conv.cc         Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter
//   pool.cc         MaxPool, AvgPool, MaxPoolGrad, AvgPoolGrad
//   softmax.cc      Softmax, LogSoftmax, (Sparse)SoftmaxCrossEntropyWithLogits
//   reduce.cc       Sum Mean Max Min Prod
//   shape_ops.cc    Fill Reshape Squeeze ExpandDims Transpose ConcatV2 Pack
//   optimizer.cc    ResourceApplyGradientDescent, ResourceApplyAdam, ResourceApply(Keras)Momentum,
//                   ResourceApply(Centered)RMSProp, ResourceApplyAdagrad(V2)
#ifndef TFPLUGIN_REFERENCE_REFERENCE_H_
#define TFPLUGIN_REFERENCE_REFERENCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tensorflow/c/tf_datatype.h"

namespace tfp_reference {

using Shape = std::vector<int64_t>;

struct Tensor {
  Shape shape;
  std::vector<double> v;  // NumElements(shape) values, row-major
};

int64_t NumElements(const Shape& shape);
std::string ShapeText(const Shape& shape);  // "[2,1,5]", "[]"
Tensor Zeros(const Shape& shape);
// Row-major strides of `shape` (elements).
Shape Strides(const Shape& shape);

// The broadcast shape of `a` and `b` (NumPy rules: align on the right, a
// dimension of 1 stretches). False if they are incompatible.
bool BroadcastShape(const Shape& a, const Shape& b, Shape* out);

// ---- dtype.cc
// `v` as the dtype stores it: float32 / bfloat16 / half round to nearest
// even (overflow to +-inf, NaN stays NaN); int32 truncates toward zero as
// C++'s conversion does (callers keep values in range); bool is v != 0.
double RoundTo(TF_DataType dtype, double v);
// 16-bit encodings (round to nearest even).
uint16_t FloatToBfloat16(float f);
float Bfloat16ToFloat(uint16_t b);
uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);

// ---- elementwise.cc: out = x (op) y with broadcasting
enum class Binary { kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kSquaredDifference };
// "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference".
bool BinaryFromOp(const std::string& op, Binary* out);
double ApplyBinary(Binary op, double a, double b);
// Fails (false) if the shapes do not broadcast.
bool BinaryOp(Binary op, const Tensor& x, const Tensor& y, Tensor* out);

// ---- unary.cc
enum class Unary { kRelu, kRelu6, kElu, kSigmoid, kTanh, kNeg, kExp, kLog, kSqrt, kRsqrt,
                   kSquare, kIdentity };
bool UnaryFromOp(const std::string& op, Unary* out);
double ApplyUnary(Unary op, double x);
Tensor UnaryOp(Unary op, const Tensor& x);

// ---- activation_grad.cc: the op's two inputs in its order:
// ReluGrad/Relu6Grad (gradients, features), EluGrad (gradients, outputs),
// SigmoidGrad/TanhGrad (y, dy). Same shapes.
enum class Grad { kRelu, kRelu6, kElu, kSigmoid, kTanh };
bool GradFromOp(const std::string& op, Grad* out);
double ApplyGrad(Grad op, double a, double b);
Tensor GradOp(Grad op, const Tensor& a, const Tensor& b);

// ---- matmul.cc
// c[m,n] = op(a)[m,k] * op(b)[k,n]; op transposes when asked.
Tensor MatMul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b);
// x[..., r, c], y[..., r, c] (rank >= 2, batch dims broadcast); adj_x/adj_y
// transpose the last two dims (real types: the adjoint is the transpose).
// False if the shapes do not fit.
bool BatchMatMul(const Tensor& x, const Tensor& y, bool adj_x, bool adj_y, Tensor* out);

// ---- bias.cc (NHWC: the bias runs along the last dimension)
Tensor BiasAdd(const Tensor& value, const Tensor& bias);
Tensor BiasAddGrad(const Tensor& out_backprop);  // sums all but the last dim

// ---- conv.cc, pool.cc: one spatial dimension of a window op
enum class Padding { kSame, kValid, kExplicit };
struct Window {
  int64_t out;     // output size
  int64_t before;  // padding before the first input element
};
// SAME: out = ceil(in / stride), padding split with the extra cell after;
// VALID: out = ceil((in - effective_k + 1) / stride), no padding;
// EXPLICIT: out = (in + before + after - effective_k) / stride + 1.
// effective_k = (k - 1) * dilation + 1.
Window WindowFor(int64_t in, int64_t k, int64_t stride, int64_t dilation, Padding padding,
                 int64_t explicit_before = 0, int64_t explicit_after = 0);

struct Conv2DParams {
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  Padding padding = Padding::kValid;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;  // kExplicit only
};
// input [N,H,W,C], filter [KH,KW,C,O] -> [N,OH,OW,O].
Tensor Conv2D(const Tensor& input, const Tensor& filter, const Conv2DParams& p);
// The gradients of Conv2D's output with respect to its input / filter.
Tensor Conv2DBackpropInput(const Shape& input_shape, const Tensor& filter,
                           const Tensor& out_backprop, const Conv2DParams& p);
Tensor Conv2DBackpropFilter(const Tensor& input, const Shape& filter_shape,
                            const Tensor& out_backprop, const Conv2DParams& p);

struct PoolParams {
  int64_t k_h = 1, k_w = 1, stride_h = 1, stride_w = 1;
  Padding padding = Padding::kValid;  // kSame or kValid
};
// input [N,H,W,C]. Padded cells take no part: MaxPool's maximum is over the
// window's cells inside the input, AvgPool divides by their count.
Tensor MaxPool(const Tensor& input, const PoolParams& p);
Tensor AvgPool(const Tensor& input, const PoolParams& p);
// Each window's gradient goes to its maximum (the first in row-major order
// on a tie) / is spread evenly over its cells inside the input.
Tensor MaxPoolGrad(const Tensor& input, const Tensor& grad, const PoolParams& p);
Tensor AvgPoolGrad(const Shape& input_shape, const Tensor& grad, const PoolParams& p);

// ---- softmax.cc (along the last dimension)
Tensor Softmax(const Tensor& logits);
Tensor LogSoftmax(const Tensor& logits);
// features, labels [batch, classes] -> loss [batch], backprop [batch, classes]:
// loss = -sum(labels * log_softmax(features)), backprop = softmax - labels.
void SoftmaxCrossEntropy(const Tensor& features, const Tensor& labels, Tensor* loss,
                         Tensor* backprop);
// labels [batch] holds class indices (0 <= label < classes).
void SparseSoftmaxCrossEntropy(const Tensor& features, const Tensor& labels, Tensor* loss,
                               Tensor* backprop);

// ---- reduce.cc
enum class Reduce { kSum, kMean, kMax, kMin, kProd };
bool ReduceFromOp(const std::string& op, Reduce* out);
// Reduces the dimensions in `axes` (negative counts from the end; repeats
// allowed; none: the input unchanged). `integer_mean`: Mean truncates its
// quotient toward zero, as integer division does. False on a bad axis.
bool ReduceOp(Reduce op, const Tensor& x, const std::vector<int64_t>& axes, bool keep_dims,
              bool integer_mean, Tensor* out);

// ---- shape_ops.cc (false on arguments the op rejects)
Tensor Fill(const Shape& shape, double value);
// One entry may be -1 (inferred).
bool Reshape(const Tensor& x, const Shape& shape, Tensor* out);
// squeeze_dims empty: every dimension of size 1.
bool Squeeze(const Tensor& x, const std::vector<int64_t>& squeeze_dims, Tensor* out);
// dim in [-rank-1, rank].
bool ExpandDims(const Tensor& x, int64_t dim, Tensor* out);
bool Transpose(const Tensor& x, const std::vector<int64_t>& perm, Tensor* out);
// axis in [-rank, rank).
bool Concat(const std::vector<Tensor>& values, int64_t axis, Tensor* out);
// axis in [-rank-1, rank]; all values of one shape.
bool Pack(const std::vector<Tensor>& values, int64_t axis, Tensor* out);

// ---- optimizer.cc (updates in place; all tensors of one shape)
// var -= alpha * delta.
void ApplyGradientDescent(Tensor* var, double alpha, const Tensor& delta);
struct AdamParams {
  double beta1_power, beta2_power, lr, beta1, beta2, epsilon;
  bool use_nesterov;
};
// m, v: the moments; lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power);
// var -= lr_t * m / (sqrt(v) + epsilon) (Nesterov: beta1 * m + (1 - beta1) * grad
// in place of m).
void ApplyAdam(Tensor* var, Tensor* m, Tensor* v, const AdamParams& p, const Tensor& grad);
// ResourceApplyMomentum: accum = accum * momentum + grad; var -= lr * accum
// (Nesterov: var -= grad * lr + accum * momentum * lr).
// keras, ResourceApplyKerasMomentum: accum = accum * momentum - grad * lr;
// var += accum (Nesterov: var += accum * momentum - grad * lr).
void ApplyMomentum(Tensor* var, Tensor* accum, double lr, const Tensor& grad, double momentum,
                   bool use_nesterov, bool keras);
struct RMSPropParams {
  double lr, rho, momentum, epsilon;
};
// ResourceApplyRMSProp: ms = rho * ms + (1 - rho) * grad^2;
// mom = momentum * mom + lr * grad / sqrt(ms + epsilon); var -= mom.
// mg non-NULL, ResourceApplyCenteredRMSProp: mg = rho * mg + (1 - rho) * grad
// first, and the root is sqrt(ms - mg^2 + epsilon).
void ApplyRMSProp(Tensor* var, Tensor* ms, Tensor* mom, Tensor* mg, const RMSPropParams& p,
                  const Tensor& grad);
// ResourceApplyAdagrad(V2): accum += grad^2 (if update_slots);
// var -= lr * grad / (sqrt(accum) + epsilon) (V1: epsilon 0, lr * grad / sqrt(accum)).
void ApplyAdagrad(Tensor* var, Tensor* accum, double lr, double epsilon, const Tensor& grad,
                  bool update_slots);

}  // namespace tfp_reference

#endif  // TFPLUGIN_REFERENCE_REFERENCE_H_
