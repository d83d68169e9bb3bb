// SPDX-License-Identifier: Apache-2.0
// TF_Version and the emulated release. A plugin may branch on TF_Version or
// bind functions only some releases export (TFPLUGIN_BIND_IMPORT), so a host
// can make the shims pose as any measured release; the default is the
// newest. The version string and the exports are the measured wheel's
// (shim_releases.h).
#include "shim_internal.h"

#include <algorithm>
#include <atomic>
#include <iterator>
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

int tfp_shims_exports(const char* name) {
  if (name == nullptr) return 0;
  const auto less = [](const char* a, const char* b) { return std::strcmp(a, b) < 0; };
  if (!std::binary_search(std::begin(tfp_shims::kImports), std::end(tfp_shims::kImports), name, less)) {
    return 0;  // not a function of TensorFlow's plugin C API
  }
  for (const char* const* u = g_release.load()->unexported; *u != nullptr; ++u) {
    if (std::strcmp(*u, name) == 0) return 0;
  }
  return 1;
}

TFP_SHIM_IMPLEMENTED(TF_Version);
const char* TF_Version(void) { return g_release.load()->version; }

}  // extern "C"
