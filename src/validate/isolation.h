// SPDX-License-Identifier: Apache-2.0
// Running a phase in a child process (fork + pipe + timeout + waitpid), in
// the manner of clap-validator: whatever the phase does (a plugin's ELF
// constructor crashing, SE_InitPlugin hanging, exit() in plugin code, a
// malformed file tripping a parser) the validator survives and reports it.
#ifndef TFPLUGIN_VALIDATE_ISOLATION_H_
#define TFPLUGIN_VALIDATE_ISOLATION_H_

#include <functional>
#include <string>
#include <vector>

#include "finding.h"

namespace tfp_validator {

enum class PhaseEnd {
  kCompleted,  // the child sent its complete report
  kCrashed,    // killed by a signal
  kTimedOut,   // killed at the timeout
  kExited,     // exited without a complete report
};

struct IsolatedRun {
  std::vector<Finding> findings;  // what the phase sent, plus a TFP-ISOLATION-* finding
  PhaseEnd end = PhaseEnd::kCompleted;
};

// Runs `body` in a forked child with `timeout_ms`. The child sends each
// finding over a pipe as it is made, so a crash keeps what came before.
// Returns false, with the reason in *error, only if no child could be
// started (pipe or fork failed).
//
// Test hook: the environment variable TFP_VALIDATE_TEST_FAULT=<phase>:<fault>
// makes the child of that phase misbehave (fault: segv, abort, hang, exit,
// garbage, late-segv: after its findings), to test this isolation.
bool RunIsolated(const char* phase_name, const std::function<void(FindingSink&)>& body,
                 unsigned timeout_ms, IsolatedRun* out, std::string* error);

// RunIsolated, or with `in_process` (tfp_validate_options.in_process) `body`
// right here in this process: no fork, no timeout, no test faults; what it
// reports is kept and an exception becomes TFP-ISOLATION-EXIT. A crash or
// hang of `body` is then the caller's.
bool RunPhase(const char* phase_name, const std::function<void(FindingSink&)>& body,
              unsigned timeout_ms, bool in_process, IsolatedRun* out, std::string* error);

// "SIGSEGV (Segmentation fault)"
std::string SignalName(int signal);
// "30 s", "1.5 s"
std::string DurationText(unsigned ms);

// The wire format between a phase's child and the parent (exposed for tests).
std::string EncodeFinding(const Finding& finding);
std::string EncodeEnd();
std::string EncodeError(const std::string& message);
struct Decoded {
  std::vector<Finding> findings;
  bool complete = false;   // the end marker arrived
  bool malformed = false;  // bytes that are no record
  std::string error;       // an error record's message
};
Decoded DecodeReport(const std::string& bytes);

}  // namespace tfp_validator

#endif  // TFPLUGIN_VALIDATE_ISOLATION_H_
