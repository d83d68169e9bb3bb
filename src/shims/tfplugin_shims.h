/* SPDX-License-Identifier: Apache-2.0
 * libtfplugin_shims control API: not part of TensorFlow's C API, for tests
 * and hosts that load plugins against the shims. C, so C hosts can use it. */
#ifndef TFPLUGIN_SHIMS_H_
#define TFPLUGIN_SHIMS_H_

#include <stddef.h>
#include <stdint.h>

#define TFP_SHIMS_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* Emulate TensorFlow `release` ("2.16"): TF_Version reports its version.
 * Returns 0, or -1 (and changes nothing) if the shims do not know it. */
TFP_SHIMS_EXPORT int tfp_shims_set_release(const char *release);
/* The release being emulated; the newest known unless set. */
TFP_SHIMS_EXPORT const char *tfp_shims_release(void);
/* 1 if the emulated release exports C API function `name` to plugins, else
 * 0 (also for a name that is no such function). The shims define every
 * release's functions so that any plugin loads; TFPLUGIN_BIND_IMPORT
 * (tfplugin/optional_import.h) asks this before binding one of them, so a
 * plugin in the host binds what it would bind in that TensorFlow. */
TFP_SHIMS_EXPORT int tfp_shims_exports(const char *name);

/* Calls so far to functions the shims do not implement. */
TFP_SHIMS_EXPORT uint64_t tfp_shims_unimplemented_calls(void);
/* Name of the last such function called, or NULL if none. */
TFP_SHIMS_EXPORT const char *tfp_shims_last_unimplemented(void);
/* Zero the counter and forget the last name. */
TFP_SHIMS_EXPORT void tfp_shims_reset_unimplemented_calls(void);

/* Contract notes: breaches of the C API's rules that TensorFlow would not
 * report (or would crash on), e.g. "TF_AllocateOutput: dtype int32 differs
 * from the node's output type float". At most 1000 are kept. */
TFP_SHIMS_EXPORT size_t tfp_shims_contract_note_count(void);
/* Note `i` (0-based), or NULL; valid until the next reset. */
TFP_SHIMS_EXPORT const char *tfp_shims_contract_note(size_t i);
TFP_SHIMS_EXPORT void tfp_shims_reset_contract_notes(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TFPLUGIN_SHIMS_H_ */
