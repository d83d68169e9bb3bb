// SPDX-License-Identifier: Apache-2.0
//
// The elementwise bodies' float max and min that keep their first operand
// on NaN and ties (Relu, Relu6, Maximum, Minimum). Where Highway's Max/Min
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

}  // namespace HWY_NAMESPACE
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#endif  // include guard
