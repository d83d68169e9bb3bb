// SPDX-License-Identifier: Apache-2.0
// A phase is a function from the plugin path (and the targeted release) to
// findings. validate.cc runs each in its own child process (isolation.h).
// To add a phase: write `void RunXPhase(const PhaseContext&, FindingSink&)`
// in x_phase.cc, give its rules `phase = "x"` in abi/rules.toml (and the
// phase to PHASES in tools/gen_rules.py), a TFP_PHASE_X bit in
// include/tfplugin/validate.h, a row in kPhases (validate.cc) and a name
// for --phases (validate_plugin.cc). A phase that needs a second, fresh
// process (as registration does) gives kPhases a follow-up.
#ifndef TFPLUGIN_VALIDATE_PHASES_H_
#define TFPLUGIN_VALIDATE_PHASES_H_

#include <string>
#include <vector>

#include "finding.h"

namespace tfp_validator {

struct PhaseContext {
  std::string path;     // as given
  std::string release;  // "2.21"
  int release_index;    // index in Release()
  unsigned timeout_ms = 30000;  // per phase (the runtime phase: per check)
  bool in_process = false;  // run children's work here (tfp_validate_options.in_process)
  std::string trace_path{};  // the validation layer's call trace ("": none)
};

// Phase 1, the file: exists, readable, an ELF shared object (ET_DYN, not a
// PIE) for this machine's class, byte order and architecture, not truncated.
void RunFilePhase(const PhaseContext& context, FindingSink& sink);

// Phase 2, the symbols: entry points and imports, from the dynamic symbol
// table (libelf). Needs a file the file phase passed.
void RunSymbolPhase(const PhaseContext& context, FindingSink& sink);

// Phase 3, registration: for a plugin exporting SE_InitPlugin as a function,
// loads it (dlopen, against libtfplugin_shims) and registers its platform as
// the targeted release does (registration_phase.cc): TF's checks, then
// stricter ones, then which releases' checks it passes.
void RunRegistrationPhase(const PhaseContext& context, FindingSink& sink);
// Its follow-up, in a fresh process: the same registration with struct_size
// pre-filled as 0, to find structs whose struct_size the plugin never sets.
// `first`: what RunRegistrationPhase reported.
void RunRegistrationZeroSizes(const PhaseContext& context, const std::vector<Finding>& first,
                              FindingSink& sink);

// Phase 4, runtime: for a plugin whose registration passed, conformance
// checks of the SP_StreamExecutor callbacks on each device
// (runtime_phase.cc), each in its own child process that registers the
// platform afresh (registration.h) with context.timeout_ms.
void RunRuntimePhase(const PhaseContext& context, FindingSink& sink);
// How many child processes (each with the timeout) it runs at most.
unsigned RuntimeChildCount();

// Phase 5, kernels: for a plugin exporting TF_InitKernel, opens it through
// the host (tfplugin/host.h) in a child process, lists its kernels (device
// types, duplicates), then runs the kernel conformance library's cases
// (src/conformance) for each op it has kernels for, each op in a child of
// its own (kernels_phase.cc).
void RunKernelsPhase(const PhaseContext& context, FindingSink& sink);
unsigned KernelsChildCount();

}  // namespace tfp_validator

#endif  // TFPLUGIN_VALIDATE_PHASES_H_
