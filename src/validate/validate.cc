// SPDX-License-Identifier: Apache-2.0
// tfp_validate: the phases in order, each in its own child process (or, with
// options->in_process, in this one), and the C API over the report.
#include "tfplugin/validate.h"

#include <cstring>
#include <string>
#include <vector>

#include "isolation.h"
#include "phases.h"
#include "report.h"

namespace tfp_validator {
namespace {

constexpr unsigned kDefaultTimeoutMs = 30000;

struct PhaseDef {
  Phase phase;
  unsigned bit;  // TFP_PHASE_*
  void (*run)(const PhaseContext&, FindingSink&);
  bool gate;  // later phases need this one to pass
  // Run after `run` completed, in a fresh child of its own (one that has
  // not loaded the plugin yet), given what `run` reported; or NULL.
  void (*followup)(const PhaseContext&, const std::vector<Finding>&, FindingSink&);
  bool per_check = false;  // the timeout is per child of the phase (RuntimeChildCount)
};

// In the order they run.
const PhaseDef kPhases[] = {
    {Phase::kFile, TFP_PHASE_FILE, RunFilePhase, true, nullptr},
    {Phase::kSymbols, TFP_PHASE_SYMBOLS, RunSymbolPhase, false, nullptr},
    // Registration gates runtime: its checks need a platform TF would register.
    {Phase::kRegistration, TFP_PHASE_REGISTRATION, RunRegistrationPhase, true, RunRegistrationZeroSizes},
    {Phase::kRuntime, TFP_PHASE_RUNTIME, RunRuntimePhase, false, nullptr, true},
    {Phase::kKernels, TFP_PHASE_KERNELS, RunKernelsPhase, false, nullptr, true},
};

void SetStatus(TF_Status* status, TF_Code code, const std::string& message) {
  if (status != nullptr) TF_SetStatus(status, code, message.c_str());
}

std::string KnownReleases() {
  std::string out;
  for (int i = 0; i < ReleaseCount(); ++i) {
    if (i != 0) out += ", ";
    out += Release(i);
  }
  return out;
}

// "2.16.1" -> "2.16": exports are measured per minor release.
std::string MinorRelease(const char* release) {
  std::string r = release;
  size_t first = r.find('.');
  size_t second = first == std::string::npos ? first : r.find('.', first + 1);
  return second == std::string::npos ? r : r.substr(0, second);
}

tfp_severity CSeverity(Severity severity) {
  switch (severity) {
    case Severity::kError: return TFP_SEVERITY_ERROR;
    case Severity::kWarning: return TFP_SEVERITY_WARNING;
    case Severity::kInfo: return TFP_SEVERITY_INFO;
  }
  return TFP_SEVERITY_ERROR;
}

// Parses `list` ("TFP-SYM-NO-ENTRY,TFP-RT-*") into a mask over the rule
// table; false, with the message in *error, for an id or prefix naming no rule.
bool RuleMask(const char* list, const char* what, std::vector<bool>* mask, std::string* error) {
  mask->assign(static_cast<size_t>(kRuleCount), false);
  const std::string text = list;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    start = comma + 1;
    const size_t b = item.find_first_not_of(" \t");
    const size_t e = item.find_last_not_of(" \t");
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    if (item.empty()) continue;
    bool any = false;
    const bool prefix = item.back() == '*';
    const std::string stem = prefix ? item.substr(0, item.size() - 1) : item;
    for (int i = 0; i < kRuleCount; ++i) {
      const std::string id = GetRule(i).id;
      if (prefix ? id.compare(0, stem.size(), stem) == 0 : id == stem) {
        (*mask)[static_cast<size_t>(i)] = true;
        any = true;
      }
    }
    if (!any) {
      *error = std::string("unknown rule ") + (prefix ? "prefix" : "id") + " \"" + item + "\" in " +
               what + " (validate_plugin --list-rules lists them)";
      return false;
    }
  }
  return true;
}

tfp_outcome Outcome(PhaseEnd end, size_t errors, size_t warnings) {
  switch (end) {
    case PhaseEnd::kCrashed:
    case PhaseEnd::kExited:
      return TFP_OUTCOME_CRASH;
    case PhaseEnd::kTimedOut:
      return TFP_OUTCOME_TIMEOUT;
    case PhaseEnd::kCompleted:
      break;
  }
  return errors != 0 ? TFP_OUTCOME_FAIL : warnings != 0 ? TFP_OUTCOME_WARN : TFP_OUTCOME_PASS;
}

}  // namespace
}  // namespace tfp_validator

using namespace tfp_validator;  // NOLINT: the C API implementation

extern "C" {

tfp_report* tfp_validate(const char* path, const tfp_validate_options* options, TF_Status* status) {
  if (path == nullptr) {
    SetStatus(status, TF_INVALID_ARGUMENT, "tfp_validate: path is NULL");
    return nullptr;
  }
  const char* release = nullptr;
  unsigned timeout_ms = 0, phases = 0;
  bool in_process = false;
  const char* rules = nullptr;
  const char* skip_rules = nullptr;
  std::string trace_path;
  if (options != nullptr) {
    const size_t size = options->struct_size;
    if (size == 0) {
      SetStatus(status, TF_INVALID_ARGUMENT,
                "tfp_validate: options->struct_size is 0 (set it to TFP_VALIDATE_OPTIONS_STRUCT_SIZE)");
      return nullptr;
    }
    if (size >= TF_OFFSET_OF_END(tfp_validate_options, tf_release)) release = options->tf_release;
    if (size >= TF_OFFSET_OF_END(tfp_validate_options, timeout_ms)) timeout_ms = options->timeout_ms;
    if (size >= TF_OFFSET_OF_END(tfp_validate_options, phases)) phases = options->phases;
    if (size >= TF_OFFSET_OF_END(tfp_validate_options, in_process)) {
      in_process = options->in_process != 0;
    }
    if (size >= TF_OFFSET_OF_END(tfp_validate_options, rules)) rules = options->rules;
    if (size >= TF_OFFSET_OF_END(tfp_validate_options, skip_rules)) skip_rules = options->skip_rules;
    if (size >= TF_OFFSET_OF_END(tfp_validate_options, trace_path) && options->trace_path != nullptr) {
      trace_path = options->trace_path;
    }
  }
  int release_index = ReleaseCount() - 1;
  if (release != nullptr && release[0] != '\0') {
    release_index = ReleaseIndex(release);
    if (release_index < 0) release_index = ReleaseIndex(MinorRelease(release).c_str());
    if (release_index < 0) {
      SetStatus(status, TF_INVALID_ARGUMENT,
                std::string("unknown TensorFlow release \"") + release + "\"; known: " + KnownReleases());
      return nullptr;
    }
  }
  if (timeout_ms == 0) timeout_ms = kDefaultTimeoutMs;
  if (phases == 0) phases = TFP_PHASE_ALL;
  phases |= TFP_PHASE_FILE;

  std::vector<bool> reported;
  if ((rules != nullptr && rules[0] != '\0') || (skip_rules != nullptr && skip_rules[0] != '\0')) {
    std::string error;
    std::vector<bool> skipped;
    if (rules != nullptr && rules[0] != '\0') {
      if (!RuleMask(rules, "rules", &reported, &error)) {
        SetStatus(status, TF_INVALID_ARGUMENT, "tfp_validate: " + error);
        return nullptr;
      }
    } else {
      reported.assign(static_cast<size_t>(kRuleCount), true);
    }
    if (skip_rules != nullptr && skip_rules[0] != '\0') {
      if (!RuleMask(skip_rules, "skip_rules", &skipped, &error)) {
        SetStatus(status, TF_INVALID_ARGUMENT, "tfp_validate: " + error);
        return nullptr;
      }
      for (size_t i = 0; i < reported.size(); ++i) reported[i] = reported[i] && !skipped[i];
    }
  }

  tfp_report* report = new tfp_report;
  report->path = path;
  report->release = Release(release_index);
  report->reported = std::move(reported);
  PhaseContext context{report->path, report->release, release_index, timeout_ms};
  context.in_process = in_process;
  context.trace_path = trace_path;
  bool blocked = false;
  for (const PhaseDef& def : kPhases) {
    const char* name = PhaseName(def.phase);
    if (blocked || !(phases & def.bit)) {
      report->phases.push_back({name, TFP_OUTCOME_SKIP});
      continue;
    }
    IsolatedRun run;
    std::string error;
    auto body = [&](FindingSink& sink) { def.run(context, sink); };
    const unsigned phase_timeout =
        def.per_check ? timeout_ms * ((def.phase == Phase::kKernels ? KernelsChildCount()
                                                                   : RuntimeChildCount()) + 1)
                     : timeout_ms;
    bool started = RunPhase(name, body, phase_timeout, in_process, &run, &error);
    if (started && def.followup != nullptr && run.end == PhaseEnd::kCompleted) {
      IsolatedRun second;
      const std::vector<Finding>& first = run.findings;
      auto followup = [&](FindingSink& sink) { def.followup(context, first, sink); };
      started = RunPhase(name, followup, timeout_ms, in_process, &second, &error);
      for (Finding& f : second.findings) run.findings.push_back(std::move(f));
      run.end = second.end;
    }
    if (!started) {
      SetStatus(status, TF_INTERNAL, "tfp_validate: cannot run the " + std::string(name) +
                                         " phase in a child process: " + error);
      delete report;
      return nullptr;
    }
    const size_t errors = report->errors, warnings = report->warnings;
    size_t all_errors = 0, all_warnings = 0;  // rules not reported too
    for (const Finding& f : run.findings) {
      if (!NotCheckedReason(f).empty()) {
        report->not_checked[RuleIndex(f.rule)] = NotCheckedReason(f);
        continue;
      }
      const Severity severity = GetRule(f.rule).severity;
      all_errors += severity == Severity::kError;
      all_warnings += severity == Severity::kWarning;
      report->Add(f);
    }
    // The outcome shown counts the reported rules; whether later phases can
    // run (and whether the file was validated) counts every finding.
    const tfp_outcome outcome =
        Outcome(run.end, report->errors - errors, report->warnings - warnings);
    report->phases.push_back({name, outcome});
    const tfp_outcome real = Outcome(run.end, all_errors, all_warnings);
    const bool passed = real == TFP_OUTCOME_PASS || real == TFP_OUTCOME_WARN;
    if (def.gate && !passed) blocked = true;
    if (def.phase == Phase::kFile) report->validated = passed;
  }
  SetStatus(status, TF_OK, "");
  return report;
}

void tfp_report_delete(tfp_report* report) { delete report; }

const char* tfp_report_path(const tfp_report* r) { return r != nullptr ? r->path.c_str() : nullptr; }
const char* tfp_report_release(const tfp_report* r) {
  return r != nullptr ? r->release.c_str() : nullptr;
}
int tfp_report_validated(const tfp_report* r) { return r != nullptr && r->validated ? 1 : 0; }
size_t tfp_report_error_count(const tfp_report* r) { return r != nullptr ? r->errors : 0; }
size_t tfp_report_warning_count(const tfp_report* r) { return r != nullptr ? r->warnings : 0; }
int tfp_report_exit_status(const tfp_report* r) { return r != nullptr ? r->ExitStatus() : 2; }

int tfp_report_rule_reported(const tfp_report* r, const char* rule_id) {
  if (r == nullptr || rule_id == nullptr) return 0;
  for (int i = 0; i < kRuleCount; ++i) {
    if (std::strcmp(GetRule(i).id, rule_id) == 0) {
      return r->reported.empty() || r->reported[static_cast<size_t>(i)] ? 1 : 0;
    }
  }
  return 0;
}

const char* tfp_report_rule_not_checked(const tfp_report* r, const char* rule_id) {
  if (r == nullptr || rule_id == nullptr) return nullptr;
  for (const auto& [index, reason] : r->not_checked) {
    if (std::strcmp(GetRule(index).id, rule_id) != 0) continue;
    for (const tfp_finding& f : r->findings) {
      if (std::strcmp(f.rule->id, rule_id) == 0) return nullptr;  // it did find something
    }
    return reason.c_str();
  }
  return nullptr;
}

size_t tfp_report_phase_count(const tfp_report* r) { return r != nullptr ? r->phases.size() : 0; }
const char* tfp_report_phase_name(const tfp_report* r, size_t i) {
  return r != nullptr && i < r->phases.size() ? r->phases[i].name.c_str() : nullptr;
}
tfp_outcome tfp_report_phase_outcome(const tfp_report* r, size_t i) {
  return r != nullptr && i < r->phases.size() ? r->phases[i].outcome : TFP_OUTCOME_SKIP;
}
const char* tfp_outcome_name(tfp_outcome outcome) {
  switch (outcome) {
    case TFP_OUTCOME_SKIP: return "skip";
    case TFP_OUTCOME_PASS: return "pass";
    case TFP_OUTCOME_WARN: return "warn";
    case TFP_OUTCOME_FAIL: return "fail";
    case TFP_OUTCOME_CRASH: return "crash";
    case TFP_OUTCOME_TIMEOUT: return "timeout";
  }
  return "unknown";
}

size_t tfp_report_finding_count(const tfp_report* r) { return r != nullptr ? r->findings.size() : 0; }
const tfp_finding* tfp_report_finding(const tfp_report* r, size_t i) {
  return r != nullptr && i < r->findings.size() ? &r->findings[i] : nullptr;
}

const char* tfp_finding_rule_id(const tfp_finding* f) { return f != nullptr ? f->rule->id : nullptr; }
tfp_severity tfp_finding_severity(const tfp_finding* f) {
  return f != nullptr ? CSeverity(f->rule->severity) : TFP_SEVERITY_ERROR;
}
const char* tfp_finding_severity_name(const tfp_finding* f) {
  return f != nullptr ? SeverityName(f->rule->severity) : nullptr;
}
const char* tfp_finding_phase(const tfp_finding* f) {
  return f != nullptr ? PhaseName(f->rule->phase) : nullptr;
}
const char* tfp_finding_subject(const tfp_finding* f) { return f != nullptr ? f->subject.c_str() : nullptr; }
const char* tfp_finding_message(const tfp_finding* f) { return f != nullptr ? f->message.c_str() : nullptr; }
const char* tfp_finding_expected(const tfp_finding* f) {
  return f != nullptr ? f->expected.c_str() : nullptr;
}
const char* tfp_finding_actual(const tfp_finding* f) { return f != nullptr ? f->actual.c_str() : nullptr; }
const char* tfp_finding_fix(const tfp_finding* f) { return f != nullptr ? f->fix.c_str() : nullptr; }
const char* tfp_finding_summary(const tfp_finding* f) { return f != nullptr ? f->rule->summary : nullptr; }
size_t tfp_finding_field_count(const tfp_finding* f) { return f != nullptr ? f->fields.size() : 0; }
const char* tfp_finding_field_name(const tfp_finding* f, size_t i) {
  return f != nullptr && i < f->fields.size() ? f->fields[i].first.c_str() : nullptr;
}
const char* tfp_finding_field_value(const tfp_finding* f, size_t i) {
  return f != nullptr && i < f->fields.size() ? f->fields[i].second.c_str() : nullptr;
}
const char* tfp_finding_field(const tfp_finding* f, const char* name) {
  if (f == nullptr || name == nullptr) return nullptr;
  for (const auto& field : f->fields) {
    if (field.first == name) return field.second.c_str();
  }
  return nullptr;
}

size_t tfp_rule_count(void) { return static_cast<size_t>(kRuleCount); }
const char* tfp_rule_id(size_t i) {
  return i < tfp_rule_count() ? GetRule(static_cast<int>(i)).id : nullptr;
}
const char* tfp_rule_phase(size_t i) {
  return i < tfp_rule_count() ? PhaseName(GetRule(static_cast<int>(i)).phase) : nullptr;
}
tfp_severity tfp_rule_severity(size_t i) {
  return i < tfp_rule_count() ? CSeverity(GetRule(static_cast<int>(i)).severity) : TFP_SEVERITY_ERROR;
}
const char* tfp_rule_summary(size_t i) {
  return i < tfp_rule_count() ? GetRule(static_cast<int>(i)).summary : nullptr;
}
const char* tfp_validate_release_revisions(size_t i) {
  return i < tfp_validate_release_count() ? ReleaseRevisions(static_cast<int>(i)) : nullptr;
}
size_t tfp_validate_release_count(void) { return static_cast<size_t>(ReleaseCount()); }
const char* tfp_validate_release(size_t i) {
  return i < tfp_validate_release_count() ? Release(static_cast<int>(i)) : nullptr;
}

}  // extern "C"
