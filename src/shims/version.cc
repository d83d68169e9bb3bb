// SPDX-License-Identifier: Apache-2.0
// TF_Version and the emulated release. A plugin may branch on TF_Version, so
// a host can make the shims pose as any measured release; the default is the
// newest. The version string is the measured wheel's (shim_releases.h).
#include "shim_internal.h"

#include <atomic>
#include <cstring>

#include "shim_releases.h"
#include "tensorflow/c/c_api.h"

namespace {
constexpr size_t kNumReleases = sizeof(tfp_shims::kReleases) / sizeof(tfp_shims::kReleases[0]);
std::atomic<const tfp_shims::ReleaseInfo*> g_release{&tfp_shims::kReleases[kNumReleases - 1]};
}  // namespace

namespace tfp_shims {
const char* EmulatedRelease() { return g_release.load()->release; }
}  // namespace tfp_shims

extern "C" {

int tfp_shims_set_release(const char* release) {
  if (release == nullptr) return -1;
  for (const auto& r : tfp_shims::kReleases) {
    if (std::strcmp(r.release, release) == 0) {
      g_release.store(&r);
      return 0;
    }
  }
  return -1;
}

const char* tfp_shims_release(void) { return tfp_shims::EmulatedRelease(); }

TFP_SHIM_IMPLEMENTED(TF_Version);
const char* TF_Version(void) { return g_release.load()->version; }

}  // extern "C"
