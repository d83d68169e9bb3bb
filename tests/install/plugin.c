/* SPDX-License-Identifier: Apache-2.0
 *
 * A tiny plugin written the way vendors write theirs: plain TensorFlow include
 * paths, no tfplugin-specific #ifdefs. Which TensorFlow release it targets is
 * decided only by the build's include path (pkg-config tfplugin-tf<release>).
 * tests/install/install_consumers.py builds it with Make, CMake and Meson
 * against a staged `meson install` and dlopens the result.
 *
 * It calls no TF_* function, so it links (and loads) without TensorFlow.
 */
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/kernels.h"
#include "tfplugin/abi_release.h"
#include "tfplugin/struct_size.h"

/* Not a TensorFlow entry point: lets the test ask which include root this
 * library was compiled against. */
TF_CAPI_EXPORT const char *tfp_built_for(void);

const char *tfp_built_for(void) { return TFPLUGIN_TF_RELEASE; }

void SE_InitPlugin(SE_PlatformRegistrationParams *params, TF_Status *status) {
  (void)status;
  params->platform->struct_size = SP_PLATFORM_STRUCT_SIZE;
  params->platform->name = "TFPTEST";
  params->platform->type = "TFPTEST";
}

void TF_InitKernel(void) {}
