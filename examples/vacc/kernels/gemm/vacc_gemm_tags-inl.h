// SPDX-License-Identifier: Apache-2.0
//
// The two vector widths the micro-kernels are compiled for, per Highway
// target (included inside each kernel file's per-target pass, hence -inl
// and no include guard of the usual kind): FullTag, the target's whole
// vector, and HalfTag, half of it, for a narrow B (vacc_gemm_microkernel.h).
#if defined(VACC_GEMM_TAGS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef VACC_GEMM_TAGS_INL_H_
#undef VACC_GEMM_TAGS_INL_H_
#else
#define VACC_GEMM_TAGS_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace vacc {
namespace gemm {
namespace HWY_NAMESPACE {

using FullTag = hwy::HWY_NAMESPACE::ScalableTag<float>;
// At least one lane: the scalar target's half is its whole.
using HalfTag = hwy::HWY_NAMESPACE::CappedTag<float, (HWY_LANES(float) > 1 ? HWY_LANES(float) / 2 : 1)>;

}  // namespace HWY_NAMESPACE
}  // namespace gemm
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#endif  // VACC_GEMM_TAGS_INL_H_
