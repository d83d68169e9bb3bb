// SPDX-License-Identifier: Apache-2.0
//
// The float max and min that keep their first operand on NaN and ties
// (Relu, Relu6), and the NaN-propagating ones built on them (Maximum,
// Minimum, the Max and Min reductions, MaxPool). Where Highway's Max/Min
// are x86's MAXPS/MINPS, which return their second operand when either is
// NaN or both are equal (+0 and -0 included), that is one instruction with
// the operands swapped; Highway's emulated targets return the number
// instead, so there a compare and a blend.
// Highway's "-inl.h" convention: no include guard of the usual kind, one
// per target.
#if defined(VACC_KERNELS_VACC_MINMAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef VACC_KERNELS_VACC_MINMAX_INL_H_
#undef VACC_KERNELS_VACC_MINMAX_INL_H_
#else
#define VACC_KERNELS_VACC_MINMAX_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace vacc {
namespace HWY_NAMESPACE {

constexpr bool kMaxKeepsSecondNaN = HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3;

// x < y ? y : x, lane by lane: x where x is NaN or equal to y.
template <class V>
HWY_INLINE V LargerElseFirst(V x, V y) {
  namespace hn = hwy::HWY_NAMESPACE;
  if constexpr (kMaxKeepsSecondNaN) return hn::Max(y, x);
  return hn::IfThenElse(hn::Lt(x, y), y, x);
}

// y < x ? y : x, lane by lane: x where x is NaN or equal to y.
template <class V>
HWY_INLINE V SmallerElseFirst(V x, V y) {
  namespace hn = hwy::HWY_NAMESPACE;
  if constexpr (kMaxKeepsSecondNaN) return hn::Min(y, x);
  return hn::IfThenElse(hn::Lt(y, x), y, x);
}

// TensorFlow's Maximum and Minimum, and the rule of its Max reduction and
// MaxPool: NaN where either is NaN (b's NaN where both are), else the larger
// (smaller), a on ties. On x86 three operations a vector (max, NaN check,
// blend) where the compares took four.
template <class V>
HWY_INLINE V MaxPropagatingNaN(V a, V b) {
  namespace hn = hwy::HWY_NAMESPACE;
  return hn::IfThenElse(hn::IsNaN(b), b, LargerElseFirst(a, b));
}
template <class V>
HWY_INLINE V MinPropagatingNaN(V a, V b) {
  namespace hn = hwy::HWY_NAMESPACE;
  return hn::IfThenElse(hn::IsNaN(b), b, SmallerElseFirst(a, b));
}

}  // namespace HWY_NAMESPACE
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#endif  // include guard
