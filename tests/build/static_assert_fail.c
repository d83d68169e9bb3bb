/* SPDX-License-Identifier: Apache-2.0 */

/*
 * Negative compile test for TFP_STATIC_ASSERT (driven by compile_fail.py).
 * Compiles cleanly as is; each TFP_FAIL_* define must make it fail to compile.
 */
#include <stddef.h>

#include "tfplugin/struct_size.h"

typedef struct Pair {
  size_t struct_size;
  int x;
} Pair;

TFP_STATIC_ASSERT(1, tfp_true_at_file_scope);
#if defined(TFP_FAIL_FILE_SCOPE)
TFP_STATIC_ASSERT(0, tfp_false_at_file_scope);
#endif
#if defined(TFP_FAIL_ASSERT_OFFSET)
TFP_ASSERT_OFFSET(Pair, x, 3);
#endif

int main(void) {
  TFP_STATIC_ASSERT(1, tfp_true_at_block_scope);
#if defined(TFP_FAIL_BLOCK_SCOPE)
  TFP_STATIC_ASSERT(0, tfp_false_at_block_scope);
#endif
  return 0;
}
