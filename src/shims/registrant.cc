// SPDX-License-Identifier: Apache-2.0
// Which host's plugin is registering kernels and ops (shim_internal.h).
#include <atomic>

#include "shim_internal.h"

namespace tfp_shims {
namespace {
std::atomic<int> g_registrant{0};
}  // namespace

void SetRegistrant(int host_id) { g_registrant.store(host_id); }
int Registrant() { return g_registrant.load(); }

}  // namespace tfp_shims
