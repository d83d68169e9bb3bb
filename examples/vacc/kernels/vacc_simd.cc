// SPDX-License-Identifier: Apache-2.0
#include "kernels/vacc_simd.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "hwy/highway.h"
#include "hwy/targets.h"

namespace vacc {
namespace {

std::atomic<bool> g_scalar{false};
// The Highway target chosen by SelectSimd, 0 for the CPU's best.
std::atomic<int64_t> g_target{0};

// Highway's own portable fallback is called "SCALAR"; ours (the plain C++
// reference bodies) is "scalar". Name Highway's "HWY_SCALAR" to keep them apart.
std::string TargetName(int64_t target) {
  const std::string name = hwy::TargetName(target);
  return name == "SCALAR" ? "HWY_SCALAR" : name;
}

}  // namespace

std::vector<std::string> AvailableSimdTargets() {
  std::vector<std::string> names;
  // SupportedAndGeneratedTargets: compiled into this build (HWY_TARGETS) and
  // supported by this CPU, best first. A selected target narrows it to
  // itself, so lift the selection while asking.
  hwy::SetSupportedTargetsForTest(0);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) names.push_back(TargetName(target));
  hwy::SetSupportedTargetsForTest(g_target.load());
  return names;
}

bool SelectSimd(const std::string& choice, std::string* error) {
  if (choice.empty() || choice == "best") {
    g_scalar = false;
    g_target = 0;
    hwy::SetSupportedTargetsForTest(0);  // 0: back to what the CPU supports
    return true;
  }
  if (choice == "scalar") {
    g_scalar = true;
    return true;
  }
  std::string known;
  // Choose among everything the CPU has, not just the current selection.
  hwy::SetSupportedTargetsForTest(0);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    const std::string name = TargetName(target);
    known += ", " + name;
    if (name == choice) {
      g_scalar = false;
      g_target = target;
      // Restricts Highway's dispatch to this one target, process-wide.
      hwy::SetSupportedTargetsForTest(target);
      return true;
    }
  }
  hwy::SetSupportedTargetsForTest(g_target.load());  // unchanged
  *error = "VACC_SIMD='" + choice + "' is not available: choose best, scalar" + known +
           " (the targets this build has that this CPU supports)";
  return false;
}

bool UseScalarKernels() { return g_scalar.load(std::memory_order_relaxed); }

std::string SimdTargetName() {
  if (UseScalarKernels()) return "scalar";
  return TargetName(hwy::SupportedAndGeneratedTargets().front());
}

namespace {
// cpuid's vendor string ("GenuineIntel", "AuthenticAMD"); empty off x86.
std::string CpuVendor() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return "";
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  return vendor;
#else
  return "";
#endif
}
}  // namespace

bool HostCpuIsAmd() {
  static const bool amd = CpuVendor() == "AuthenticAMD";
  return amd;
}

int HostIntelModel() {
  static const int model = []() -> int {
#if defined(__x86_64__) || defined(__i386__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (CpuVendor() != "GenuineIntel" || __get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return -1;
    if (((eax >> 8) & 0xf) != 6) return -1;  // family
    return static_cast<int>(((eax >> 12) & 0xf0) | ((eax >> 4) & 0xf));
#else
    return -1;
#endif
  }();
  return model;
}

}  // namespace vacc
