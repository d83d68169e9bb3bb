/* SPDX-License-Identifier: Apache-2.0 */

/*
 * Negative compile test for TFPLUGIN_BIND_IMPORT (tfplugin/optional_import.h,
 * driven by compile_fail.py): binding into a pointer of the function's own
 * type compiles; with TFP_FAIL_BIND_WRONG_TYPE, binding into a pointer of
 * another type must not (an error in C++, an incompatible-pointer warning
 * made an error by -Werror in C).
 */
#include "tfplugin/optional_import.h"

int main(void) {
  TFPLUGIN_PFN_TF_NewStatus right;
#if defined(TFP_FAIL_BIND_WRONG_TYPE)
  void (*wrong)(int);
  if (TFPLUGIN_BIND_IMPORT(TF_NewStatus, &wrong)) return 2;
#endif
  return TFPLUGIN_BIND_IMPORT(TF_NewStatus, &right);
}
