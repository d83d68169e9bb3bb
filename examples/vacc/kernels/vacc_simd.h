// SPDX-License-Identifier: Apache-2.0
//
// Which instruction set the kernels run with. Every kernel has two bodies:
// a plain C++ scalar one (the reference, obviously right) and a SIMD one
// written once with Google Highway and compiled for every x86/Arm/RISC-V
// target Highway knows; at run time Highway picks the best one the CPU has.
//
// VACC_SIMD chooses (read in SE_InitPlugin, so a bad value fails loudly):
//   unset, "best"  the best target this CPU supports (Highway's dispatch)
//   "scalar"       the scalar reference bodies: to tell a SIMD bug from a
//                  model bug, and what the tests compare against
//   "AVX2", "SSE4", "AVX3", "EMU128", ...  exactly that Highway target; an
//                  error if this build or this CPU lacks it (tests run every
//                  kernel once per target the machine has)
// TODO(vendor): on real hardware the device's own ISA replaces this; keep
// the scalar bodies as your reference.
#ifndef VACC_KERNELS_VACC_SIMD_H_
#define VACC_KERNELS_VACC_SIMD_H_

#include <string>
#include <vector>

namespace vacc {

// Applies a VACC_SIMD value. False, with *error naming the value and the
// choices, if it is unknown or not available here.
bool SelectSimd(const std::string& choice, std::string* error);

// True when VACC_SIMD=scalar: kernels run their scalar bodies.
bool UseScalarKernels();

// "AVX2", or "scalar": what kernels run with now (for logs and benchmarks).
std::string SimdTargetName();

// The Highway targets this build has that this CPU supports, best first.
std::vector<std::string> AvailableSimdTargets();

// True on an AMD x86 CPU (cpuid's vendor string). Some choices measured
// differently on AMD Zen4, which runs 512-bit vector instructions as two
// 256-bit halves, and on an Intel Xeon with full-width units (the GEMM's
// in-place path for a longer A, the width of streaming stores); Debian's
// Highway (1.0.3) has no Zen4 target to tell them apart at compile time.
bool HostCpuIsAmd();

// The model number of an Intel x86 CPU of family 6 (cpuid's, with the
// extended model: 106 for an Ice Lake server Xeon), -1 on any other CPU.
int HostIntelModel();

}  // namespace vacc

#endif  // VACC_KERNELS_VACC_SIMD_H_
