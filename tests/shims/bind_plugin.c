/* SPDX-License-Identifier: Apache-2.0
 * A plugin that binds C API functions at run time (tfplugin/optional_import.h),
 * loaded RTLD_LOCAL by test_dlopen.c, so that the shims it links are not in the
 * global scope: the lookup must find them by soname, as it finds TensorFlow
 * 2.18's local libraries. Prints each failed check; returns how many failed. */
#include <dlfcn.h>
#include <stdio.h>

#include <string.h>

#include "tensorflow/c/tf_status.h"
#include "tfplugin/optional_import.h"
#include "tfplugin_shims.h"

#define CHECK(cond)                                              \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                \
    }                                                            \
  } while (0)

__attribute__((visibility("default"))) int bind_plugin_run(void);

int bind_plugin_run(void) {
  int failures = 0;
  /* The premise: the shims are loaded, but not in the global scope. */
  void *global = dlopen(NULL, RTLD_LAZY);
  CHECK(global != NULL && dlsym(global, "TF_NewStatus") == NULL);
  if (global != NULL) dlclose(global);
  /* Found (through TFPLUGIN_SHIMS_LIBRARY): the very function this plugin
   * imports, and it works. */
  TFPLUGIN_PFN_TF_NewStatus new_status = NULL;
  CHECK(TFPLUGIN_BIND_IMPORT(TF_NewStatus, &new_status) == 1);
  CHECK(new_status == &TF_NewStatus);
  if (new_status != NULL) {
    TF_Status *status = new_status();
    CHECK(status != NULL && TF_GetCode(status) == TF_OK);
    TF_DeleteStatus(status);
  }
  /* A helper only TensorFlow 2.6-2.18 export. The shims define it, but bind
   * it only while they emulate such a release. */
  const char *emulated = tfp_shims_release();
  TFPLUGIN_PFN_TF_AssignUpdateVariable assign_update = NULL;
  CHECK(tfp_shims_set_release("2.18") == 0);
  CHECK(TFPLUGIN_BIND_IMPORT(TF_AssignUpdateVariable, &assign_update) == 1);
  CHECK(assign_update != NULL);
  CHECK(tfp_shims_set_release("2.19") == 0);
  CHECK(TFPLUGIN_BIND_IMPORT(TF_AssignUpdateVariable, &assign_update) == 0);
  CHECK(assign_update == NULL);
  /* 2.5 predates it. */
  CHECK(tfp_shims_set_release("2.5") == 0);
  CHECK(TFPLUGIN_BIND_IMPORT(TF_AssignUpdateVariable, &assign_update) == 0);
  /* What the shims answer: every release exports TF_NewStatus; nothing is
   * exported under a name that is no C API function. */
  CHECK(tfp_shims_exports("TF_NewStatus") == 1);
  CHECK(tfp_shims_exports("TF_AssignUpdateVariable") == 0);
  CHECK(tfp_shims_exports("TF_NoSuchFunction") == 0);
  CHECK(tfp_shims_exports("tfp_shims_exports") == 0);
  CHECK(tfp_shims_exports(NULL) == 0);
  CHECK(tfp_shims_set_release(emulated) == 0);
  CHECK(strcmp(tfp_shims_release(), emulated) == 0);
  /* Not the shims' soname in the list: not found, since they are not in the
   * global scope; and the pointer is cleared. */
  new_status = &TF_NewStatus;
  CHECK(tfplugin_bind_import(&new_status, sizeof new_status, "TF_NewStatus",
                             "libtensorflow_framework.so.2:libnot_a_library.so.9") == 0);
  CHECK(new_status == NULL);
  /* A name nothing exports. */
  CHECK(tfplugin_bind_import(&new_status, sizeof new_status, "TF_NoSuchFunction",
                             TFPLUGIN_SHIMS_LIBRARY) == 0);
  CHECK(new_status == NULL);
  /* Found at the end of a list, past empty and oversized entries. */
  CHECK(tfplugin_bind_import(&new_status, sizeof new_status, "TF_NewStatus",
                             "::libnot_a_library.so.9:" TFPLUGIN_SHIMS_LIBRARY) == 1);
  CHECK(new_status == &TF_NewStatus);
  /* A destination that is not pointer-sized gets nothing. */
  char small[2] = {1, 1};
  CHECK(tfplugin_bind_import(small, sizeof small, "TF_NewStatus", TFPLUGIN_SHIMS_LIBRARY) == 0);
  CHECK(small[0] == 0 && small[1] == 0);
  /* None of those lookups loaded a library. */
  CHECK(dlopen("libnot_a_library.so.9", RTLD_LAZY | RTLD_NOLOAD) == NULL);
  CHECK(dlopen("libtensorflow_framework.so.2", RTLD_LAZY | RTLD_NOLOAD) == NULL);
  return failures;
}
