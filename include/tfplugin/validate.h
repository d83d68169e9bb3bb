/* SPDX-License-Identifier: Apache-2.0
 * tfplugin validator: check a built PluggableDevice plugin against the ABI
 * of a TensorFlow release before TensorFlow loads it (and aborts on it).
 * The validate_plugin command is a thin front end to this API.
 *
 * Validation runs in phases (file, symbols, registration, runtime). Each phase runs
 * in a forked child process with a timeout, so a plugin (or a malformed
 * file) that crashes or hangs becomes a finding, never a crash of the
 * caller (unless options->in_process asks otherwise, for debugging).
 * The registration phase loads the plugin and runs its code
 * (SE_InitPlugin and the callbacks TensorFlow calls to set up a platform):
 * leave TFP_PHASE_REGISTRATION out of `phases` for code you do not trust.
 * The runtime phase runs the device callbacks (one child per check).
 * A finding names a stable rule id (docs/rules.md), its severity, the thing
 * at fault (the file, a symbol, a struct field), and what was expected,
 * what was found and how to fix it.
 *
 * C99, and C++11 or later. Link with libtfplugin_validate; TF_Status comes
 * from libtfplugin_shims (or TensorFlow).
 */
#ifndef TFPLUGIN_VALIDATE_H_
#define TFPLUGIN_VALIDATE_H_

#include <stddef.h>

#include "tensorflow/c/tf_status.h"
#include "tfplugin/struct_size.h"

#define TFP_VALIDATE_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* Phases (bits of tfp_validate_options.phases). The file phase always runs:
 * the others need a readable ELF shared object for this machine. */
#define TFP_PHASE_FILE (1u << 0)    /* the file: ELF shared object for this machine */
#define TFP_PHASE_SYMBOLS (1u << 1) /* dynamic symbols: entry points, imports */
#define TFP_PHASE_REGISTRATION (1u << 2) /* SE_InitPlugin: loads and runs plugin code */
#define TFP_PHASE_RUNTIME (1u << 3) /* device callbacks: memory, streams, events */
#define TFP_PHASE_KERNELS (1u << 4) /* TF_InitKernel: kernels, their results */
#define TFP_PHASE_ALL (~0u)         /* every phase this library implements */

typedef struct tfp_validate_options {
  size_t struct_size;     /* TFP_VALIDATE_OPTIONS_STRUCT_SIZE */
  const char *tf_release; /* release to check against: "2.16" ("2.16.1" too); NULL: the newest */
  unsigned timeout_ms;    /* per phase; 0: 30000 */
  unsigned phases;        /* TFP_PHASE_* bits; 0: TFP_PHASE_ALL */
  /* Added later: a caller whose struct_size ends before a field gets its
   * default (0 / NULL). */
  /* Non-zero: every phase and check runs in the calling process, one after
   * the other: no fork, no timeout, no test faults. For debugging a plugin
   * under a debugger: a plugin that crashes or hangs then crashes or hangs
   * the caller, and a phase sees what earlier ones left loaded. */
  int in_process;
  /* Rules to report: comma-separated ids ("TFP-SYM-NO-ENTRY") or prefixes
   * ending in '*' ("TFP-RT-*"); NULL or "": every rule. An id or prefix
   * naming no rule is INVALID_ARGUMENT. The checks still run; findings of
   * other rules are dropped from the report and its counts. */
  const char *rules;
  /* Rules not to report, in the same form; applied after `rules`. */
  const char *skip_rules;
  /* A file the runtime phase's validation layer appends its call trace to:
   * every plugin callback a check makes, one line each, with its arguments
   * and result (docs/validation-layer.md). NULL or "": no trace. */
  const char *trace_path;
} tfp_validate_options;
#define TFP_VALIDATE_OPTIONS_STRUCT_SIZE TF_OFFSET_OF_END(tfp_validate_options, trace_path)

typedef enum tfp_severity {
  TFP_SEVERITY_ERROR = 0,
  TFP_SEVERITY_WARNING = 1,
  TFP_SEVERITY_INFO = 2 /* information, not a problem: in neither count */
} tfp_severity;

/* What happened to a phase (clap-validator's vocabulary). */
typedef enum tfp_outcome {
  TFP_OUTCOME_SKIP = 0,    /* not run: not requested, or an earlier phase failed */
  TFP_OUTCOME_PASS = 1,    /* no findings */
  TFP_OUTCOME_WARN = 2,    /* warnings only */
  TFP_OUTCOME_FAIL = 3,    /* errors */
  TFP_OUTCOME_CRASH = 4,   /* the phase's process died (signal, early exit) */
  TFP_OUTCOME_TIMEOUT = 5  /* the phase's process was killed at the timeout */
} tfp_outcome;

typedef struct tfp_report tfp_report;
typedef struct tfp_finding tfp_finding;

/* Validates the plugin at `path`. Problems with the plugin are findings in
 * the report, not errors: status is set (and NULL returned) only for bad
 * arguments (NULL path, unknown release, struct_size 0: INVALID_ARGUMENT)
 * or when no child process can be started (INTERNAL). `options` may be NULL
 * (all defaults); `status` may be NULL. Free the report with
 * tfp_report_delete. */
TFP_VALIDATE_EXPORT tfp_report *tfp_validate(const char *path, const tfp_validate_options *options,
                                             TF_Status *status);
/* NULL is ok. */
TFP_VALIDATE_EXPORT void tfp_report_delete(tfp_report *report);

/* The path validated, and the release checked against ("2.21"). */
TFP_VALIDATE_EXPORT const char *tfp_report_path(const tfp_report *report);
TFP_VALIDATE_EXPORT const char *tfp_report_release(const tfp_report *report);
/* Non-zero when the file phase passed, i.e. the file could be validated. */
TFP_VALIDATE_EXPORT int tfp_report_validated(const tfp_report *report);
TFP_VALIDATE_EXPORT size_t tfp_report_error_count(const tfp_report *report);
TFP_VALIDATE_EXPORT size_t tfp_report_warning_count(const tfp_report *report);
/* validate_plugin's exit status: 0 no errors, 1 errors, 2 not validated. */
TFP_VALIDATE_EXPORT int tfp_report_exit_status(const tfp_report *report);

/* Non-zero when findings of rule `rule_id` are in the report: the rule
 * exists and options->rules / skip_rules select it. */
TFP_VALIDATE_EXPORT int tfp_report_rule_reported(const tfp_report *report, const char *rule_id);

/* Why rule `rule_id`'s check did not run although its phase did (it does
 * not apply to this plugin or release: no TF_InitKernel, no device, no
 * kernel of a reference op, a release without timers, ...); NULL if it ran,
 * found something, or is unknown. Valid as long as the report. */
TFP_VALIDATE_EXPORT const char *tfp_report_rule_not_checked(const tfp_report *report,
                                                            const char *rule_id);

/* Phases, in the order they run: 0 <= i < tfp_report_phase_count. */
TFP_VALIDATE_EXPORT size_t tfp_report_phase_count(const tfp_report *report);
/* "file", "symbols", "registration"; NULL if i is out of range. */
TFP_VALIDATE_EXPORT const char *tfp_report_phase_name(const tfp_report *report, size_t i);
TFP_VALIDATE_EXPORT tfp_outcome tfp_report_phase_outcome(const tfp_report *report, size_t i);
/* "pass", "warn", "fail", "crash", "timeout", "skip". */
TFP_VALIDATE_EXPORT const char *tfp_outcome_name(tfp_outcome outcome);

/* Findings in the order found: 0 <= i < tfp_report_finding_count. The
 * finding and its strings live as long as the report. NULL if out of range. */
TFP_VALIDATE_EXPORT size_t tfp_report_finding_count(const tfp_report *report);
TFP_VALIDATE_EXPORT const tfp_finding *tfp_report_finding(const tfp_report *report, size_t i);

/* "TFP-SYM-UNDEFINED-IMPORT" */
TFP_VALIDATE_EXPORT const char *tfp_finding_rule_id(const tfp_finding *finding);
TFP_VALIDATE_EXPORT tfp_severity tfp_finding_severity(const tfp_finding *finding);
/* "error", "warning" or "info" */
TFP_VALIDATE_EXPORT const char *tfp_finding_severity_name(const tfp_finding *finding);
/* The rule's phase: "file", "symbols", "registration", "isolation" */
TFP_VALIDATE_EXPORT const char *tfp_finding_phase(const tfp_finding *finding);
/* What is at fault: the file path, a symbol ("TF_AssignVariable"), a
 * struct field ("SP_Platform.name"), a phase ("symbols phase"). */
TFP_VALIDATE_EXPORT const char *tfp_finding_subject(const tfp_finding *finding);
/* "undefined symbol not exported by TensorFlow 2.21 (exported by 2.6-2.18)" */
TFP_VALIDATE_EXPORT const char *tfp_finding_message(const tfp_finding *finding);
TFP_VALIDATE_EXPORT const char *tfp_finding_expected(const tfp_finding *finding);
TFP_VALIDATE_EXPORT const char *tfp_finding_actual(const tfp_finding *finding);
TFP_VALIDATE_EXPORT const char *tfp_finding_fix(const tfp_finding *finding);
/* The rule's one-sentence summary. */
TFP_VALIDATE_EXPORT const char *tfp_finding_summary(const tfp_finding *finding);
/* The named values the texts were made from ("symbol", "releases", ...;
 * docs/rules.md lists them): 0 <= i < tfp_finding_field_count. */
TFP_VALIDATE_EXPORT size_t tfp_finding_field_count(const tfp_finding *finding);
TFP_VALIDATE_EXPORT const char *tfp_finding_field_name(const tfp_finding *finding, size_t i);
TFP_VALIDATE_EXPORT const char *tfp_finding_field_value(const tfp_finding *finding, size_t i);
/* The value of field `name`, or NULL. */
TFP_VALIDATE_EXPORT const char *tfp_finding_field(const tfp_finding *finding, const char *name);

/* ---- The rule table and releases (for listings and tooling) */
TFP_VALIDATE_EXPORT size_t tfp_rule_count(void);
/* Rule i's id, phase name, severity and summary; NULL / ERROR if out of range. */
TFP_VALIDATE_EXPORT const char *tfp_rule_id(size_t i);
TFP_VALIDATE_EXPORT const char *tfp_rule_phase(size_t i);
TFP_VALIDATE_EXPORT tfp_severity tfp_rule_severity(size_t i);
TFP_VALIDATE_EXPORT const char *tfp_rule_summary(size_t i);
/* Known releases, oldest first ("2.5" ... ); the last is the default. */
TFP_VALIDATE_EXPORT size_t tfp_validate_release_count(void);
TFP_VALIDATE_EXPORT const char *tfp_validate_release(size_t i);
/* Release i's ABI revisions (docs/abi-versions.md), e.g. "SE3 K2 G3 P1";
 * NULL if out of range. */
TFP_VALIDATE_EXPORT const char *tfp_validate_release_revisions(size_t i);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TFPLUGIN_VALIDATE_H_ */
