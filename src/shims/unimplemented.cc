// SPDX-License-Identifier: Apache-2.0
// Bookkeeping for the generated "unimplemented" definitions
// (shim_unimplemented.cc): a plugin calling one keeps running, the call is
// counted so hosts and tests can see what a plugin needed but did not get.
#include "shim_internal.h"

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

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

std::mutex g_notes_mu;
std::vector<std::string> g_notes;
constexpr size_t kMaxNotes = 1000;  // a plugin breaching a contract in a loop

void ContractNote(const std::string& note) {
  std::lock_guard<std::mutex> lock(g_notes_mu);
  if (g_notes.size() < kMaxNotes) g_notes.push_back(note);
}

}  // namespace tfp_shims

extern "C" {

size_t tfp_shims_contract_note_count(void) {
  std::lock_guard<std::mutex> lock(tfp_shims::g_notes_mu);
  return tfp_shims::g_notes.size();
}

const char* tfp_shims_contract_note(size_t i) {
  std::lock_guard<std::mutex> lock(tfp_shims::g_notes_mu);
  // Notes are only appended until reset, so the pointer stays valid until then.
  return i < tfp_shims::g_notes.size() ? tfp_shims::g_notes[i].c_str() : nullptr;
}

void tfp_shims_reset_contract_notes(void) {
  std::lock_guard<std::mutex> lock(tfp_shims::g_notes_mu);
  tfp_shims::g_notes.clear();
}

uint64_t tfp_shims_unimplemented_calls(void) { return g_calls.load(std::memory_order_relaxed); }

const char* tfp_shims_last_unimplemented(void) { return g_last.load(std::memory_order_relaxed); }

void tfp_shims_reset_unimplemented_calls(void) {
  g_calls.store(0, std::memory_order_relaxed);
  g_last.store(nullptr, std::memory_order_relaxed);
}

}  // extern "C"
