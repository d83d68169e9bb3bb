/* SPDX-License-Identifier: Apache-2.0
 * libtfplugin_shims control API: not part of TensorFlow's C API, for tests
 * and hosts that load plugins against the shims. C, so C hosts can use it. */
#ifndef TFPLUGIN_SHIMS_H_
#define TFPLUGIN_SHIMS_H_

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

/* Calls so far to functions the shims do not implement. */
TFP_SHIMS_EXPORT uint64_t tfp_shims_unimplemented_calls(void);
/* Name of the last such function called, or NULL if none. */
TFP_SHIMS_EXPORT const char *tfp_shims_last_unimplemented(void);
/* Zero the counter and forget the last name. */
TFP_SHIMS_EXPORT void tfp_shims_reset_unimplemented_calls(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TFPLUGIN_SHIMS_H_ */
