/* Together with all_headers_a.c: every plugin-facing header, twice linked. */
#include <stdio.h>

#include "tfplugin/tensorflow.h"
#include "tfplugin/tfplugin.h"

size_t tfp_other_tu_platform_size(void);

int main(void) {
  SP_StreamExecutor se;
  TFP_STRUCT_INIT(&se, SP_STREAMEXECUTOR_STRUCT_SIZE);
  if (!TFP_HAS_FIELD(&se, SP_StreamExecutor, host_callback)) {
    printf("FAIL %s: SP_STREAMEXECUTOR_STRUCT_SIZE does not cover host_callback\n",
           TFPLUGIN_TF_RELEASE);
    return 1;
  }
  if (tfp_other_tu_platform_size() != SP_PLATFORM_STRUCT_SIZE) {
    printf("FAIL %s: struct_size differs between translation units\n", TFPLUGIN_TF_RELEASE);
    return 1;
  }
  printf("tf%s (%s): all headers in two TUs\n", TFPLUGIN_TF_RELEASE, TFPLUGIN_ABI_REVISIONS);
  return 0;
}
