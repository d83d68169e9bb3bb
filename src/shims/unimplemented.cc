// SPDX-License-Identifier: Apache-2.0
// Bookkeeping for the generated "unimplemented" definitions
// (shim_unimplemented.cc): a plugin calling one keeps running, the call is
// counted so hosts and tests can see what a plugin needed but did not get.
#include "shim_internal.h"

#include <atomic>
#include <string>

namespace {
std::atomic<uint64_t> g_calls{0};
// Names are string literals from the generated file: static storage, so the
// pointer stays valid and an atomic pointer is enough.
std::atomic<const char*> g_last{nullptr};
}  // namespace

namespace tfp_shims {

void Unimplemented(const char* name, TF_Status* status) {
  g_calls.fetch_add(1, std::memory_order_relaxed);
  g_last.store(name, std::memory_order_relaxed);
  if (status != nullptr) {
    std::string msg = std::string(name) + " is not implemented by the tfplugin shims";
    TF_SetStatus(status, TF_UNIMPLEMENTED, msg.c_str());
  }
}

}  // namespace tfp_shims

extern "C" {

uint64_t tfp_shims_unimplemented_calls(void) { return g_calls.load(std::memory_order_relaxed); }

const char* tfp_shims_last_unimplemented(void) { return g_last.load(std::memory_order_relaxed); }

void tfp_shims_reset_unimplemented_calls(void) {
  g_calls.store(0, std::memory_order_relaxed);
  g_last.store(nullptr, std::memory_order_relaxed);
}

}  // extern "C"
