// SPDX-License-Identifier: Apache-2.0
// What the case generators (cases_*.cc) share: the seeded generator,
// tensors to and from the reference's doubles, tolerances, extreme values.
#ifndef TFPLUGIN_CONFORMANCE_INTERNAL_H_
#define TFPLUGIN_CONFORMANCE_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "conformance.h"
#include "reference.h"

namespace tfp_conformance {
namespace internal {

namespace ref = tfp_reference;

// A small deterministic generator (splitmix64): the same seed gives the
// same cases on every machine.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed * 0x9e3779b97f4a7c15ull + 1) {}
  uint64_t Next();
  // Uniform in [lo, hi] on a grid of 2^16 steps (exact in every float type
  // once rounded).
  double Uniform(double lo, double hi);
  int64_t Int(int64_t lo, int64_t hi);  // inclusive

 private:
  uint64_t state_;
};

// Values of the dtype in [lo, hi] (integers for integer dtypes).
ref::Tensor Random(Rng& rng, TF_DataType dtype, const Shape& shape, double lo = -2,
                   double hi = 2);
// |x| in [lo, hi] with a random sign: divisors kept away from 0.
ref::Tensor RandomNonzero(Rng& rng, TF_DataType dtype, const Shape& shape, double lo,
                          double hi);
// Distinct values (a shuffled ramp), so a maximum has no tie.
ref::Tensor Distinct(Rng& rng, TF_DataType dtype, const Shape& shape);

// The reference's doubles as the dtype stores them (rounded) and back.
HostTensor Encode(TF_DataType dtype, const ref::Tensor& t);
ref::Tensor Decode(const HostTensor& t);
// A 1-D int32 tensor (shapes, axes, perms) or an int32 scalar.
HostTensor Ints(const std::vector<int64_t>& values, TF_DataType dtype = TF_INT32);
HostTensor IntScalar(int64_t value, TF_DataType dtype = TF_INT32);
std::string ListText(const std::vector<int64_t>& values);  // "[1,2,2,1]"

// Inf, -inf, NaN (if `nan`), 0, -0 (if `negative_zero`), the dtype's
// largest and smallest normal with both signs, 1, -1.
std::vector<double> Extremes(TF_DataType dtype, bool nan, bool negative_zero);

// Tolerances (documented in abi/rules.toml, TFP-KERN-NUMERICS):
Tolerance Exact();
// One correctly rounded operation (+ - * /, max, min, moves, casts).
Tolerance Elementwise(TF_DataType dtype);
// exp, log, tanh, sigmoid and what is built on them (softmax, gradients).
Tolerance Transcendental(TF_DataType dtype);
// Sums of `k` terms (MatMul's inner dimension, a conv's taps, a reduction).
Tolerance Accumulated(TF_DataType dtype, int64_t k);

bool IsFloat(TF_DataType dtype);

// Starts a case: op, what, T (or SrcT) recorded in type_attrs.
Case NewCase(const std::string& op, const std::string& what, const std::string& type_attr,
             TF_DataType dtype);
// Appends output `t` (rounded to `dtype`) with its tolerance.
void Want(Case* c, TF_DataType dtype, const ref::Tensor& t, const Tolerance& tolerance);

// The generators, one per op family: append the op's cases for `dtype`.
void ElementwiseCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
                      std::vector<Case>* out);
void UnaryCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
                std::vector<Case>* out);
void GradCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
               std::vector<Case>* out);
void MatMulCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
                 std::vector<Case>* out);
void BiasCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
               std::vector<Case>* out);
void ConvCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
               std::vector<Case>* out);
void PoolCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
               std::vector<Case>* out);
void SoftmaxCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
                  std::vector<Case>* out);
void ReduceCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
                 std::vector<Case>* out);
void ShapeCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
                std::vector<Case>* out);
void CastCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
               std::vector<Case>* out);
void VariableCases(const std::string& op, TF_DataType dtype, Size size, Rng& rng,
                   std::vector<Case>* out);

}  // namespace internal
}  // namespace tfp_conformance

#endif  // TFPLUGIN_CONFORMANCE_INTERNAL_H_
