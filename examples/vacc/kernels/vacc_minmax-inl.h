// SPDX-License-Identifier: Apache-2.0
//
// Per-target fact the elementwise bodies share: whether Highway's float
// Max/Min are x86's MAXPS/MINPS, which return their second operand when
// either operand is NaN or both are equal (+0 and -0 included). Then
// Max(0, x) is Relu and Max(b, a) keeps a on NaN and ties, each in one
// instruction. Highway's emulated targets return the number instead.
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

}  // namespace HWY_NAMESPACE
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#endif  // include guard
