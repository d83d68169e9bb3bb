// SPDX-License-Identifier: Apache-2.0
//
// The two vector widths the micro-kernels are compiled for, per Highway
// target (included inside each kernel file's per-target pass, hence -inl
// and no include guard of the usual kind): FullTag, the target's whole
// vector, and HalfTag, half of it, for a narrow B (vacc_gemm_microkernel.h);
// the tallest tile the kernels take, kTileRows; KeepInRegister.
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

// Rows of a tile of C (the row kernels' tallest tile, and the packed
// kernel's MR but on AVX-512): 2 accumulators per row + 2 B vectors + 1
// broadcast A value must fit the registers. 6 rows fill 15 of AVX2's and
// SSE4's 16; AVX-512 has 32 and takes 8 rows, 16 accumulators, in the row
// kernels. Highway numbers better x86 targets lower.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr int kTileRows = 8;
#else
constexpr int kTileRows = 6;
#endif
// The packed kernel's MR: on AVX-512 12 rows, 24 accumulators + 2 B
// vectors + 1 broadcast (measured: vacc_gemm_microkernel.cc).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr int kPackedTileRows = 12;
#else
constexpr int kPackedTileRows = kTileRows;
#endif

// Keeps v in its register until here: for a broadcast A value, after both
// of its FMAs. With 8 rows GCC 12 otherwise writes the second FMA's sum
// into the broadcast's register (the 132 form), so accumulators move
// between registers from step to step and the loop ends with register
// copies, on the FMA ports' schedule. An empty asm that reads the value
// forbids that (no instruction is emitted). The packed 8 x 32 tile in L1,
// against the same tile written with plain intrinsics (alternating,
// medians of 15): 0.98-0.99x with it, 0.95-0.98x without.
template <class V>
HWY_INLINE void KeepInRegister(const V& v) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3 && (defined(__GNUC__) || defined(__clang__))
  asm("" : : "v"(v.raw));
#else
  (void)v;
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace gemm
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#endif  // VACC_GEMM_TAGS_INL_H_
