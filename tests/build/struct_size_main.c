/* SPDX-License-Identifier: Apache-2.0 */

/*
 * Translation unit 2 of 2: plays the side that reads structs, and exercises
 * every macro in tfplugin/struct_size.h. Also compiled as C++ (a copy named .cpp).
 */
#include <stdio.h>
#include <string.h>

#include "struct_size_toy.h"
#include "tfplugin/tfplugin.h" /* the umbrella must be enough */

/* Exact layout on LP64 (x86_64, aarch64 Linux): what generated headers pin. */
#if defined(__LP64__)
TFP_ASSERT_SIZE(TFP_Toy, 32);
TFP_ASSERT_FIELD(TFP_Toy, c, 24, 8);
TFP_STATIC_ASSERT(TFP_TOY_V1_STRUCT_SIZE == 20, toy_v1_ends_after_a);
#endif
TFP_STATIC_ASSERT(TF_OFFSET_OF_END(TFP_Toy, b) == TFP_OFFSET_OF_END(TFP_Toy, b),
                  tf_spelling_agrees);

static int failures = 0;

/* Not assert(): it would vanish under NDEBUG. */
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)

static void test_init_zeroes_and_sets_size(void) {
  TFP_Toy toy;
  memset(&toy, 0xAB, sizeof toy);
  TFP_STRUCT_INIT(&toy, TFP_TOY_STRUCT_SIZE);
  CHECK(toy.struct_size == TFP_TOY_STRUCT_SIZE);
  CHECK(toy.ext == NULL);
  CHECK(toy.a == 0 && toy.b == 0 && toy.c == 0.0);
}

static void test_has_field_on_older_peer(void) {
  TFP_Toy toy;
  tfp_toy_fill_v1(&toy);
  CHECK(TFP_HAS_FIELD(&toy, TFP_Toy, struct_size));
  CHECK(TFP_HAS_FIELD(&toy, TFP_Toy, a));
  CHECK(!TFP_HAS_FIELD(&toy, TFP_Toy, b));
  CHECK(!TFP_HAS_FIELD(&toy, TFP_Toy, c));
}

static void test_has_field_on_current_peer(void) {
  TFP_Toy toy;
  tfp_toy_fill_current(&toy);
  CHECK(TFP_HAS_FIELD(&toy, TFP_Toy, b));
  CHECK(TFP_HAS_FIELD(&toy, TFP_Toy, c));
  CHECK(toy.c == 3.0);
}

static void test_has_field_null(void) {
  const TFP_Toy* none = NULL;
  CHECK(!TFP_HAS_FIELD(none, TFP_Toy, a));
}

static void test_struct_size_check(void) {
  TFP_Toy toy;
  TFP_STRUCT_INIT(&toy, 0);
  CHECK(TFP_STRUCT_SIZE_CHECK(&toy, TFP_Toy, a)); /* forgot struct_size */

  tfp_toy_fill_v1(&toy);
  CHECK(!TFP_STRUCT_SIZE_CHECK(&toy, TFP_Toy, a)); /* enough for a v1 reader */
  CHECK(TFP_STRUCT_SIZE_CHECK(&toy, TFP_Toy, c));  /* too small for a v2 reader */

  tfp_toy_fill_current(&toy);
  CHECK(!TFP_STRUCT_SIZE_CHECK(&toy, TFP_Toy, c));

  toy.struct_size = sizeof(TFP_Toy) + 64; /* newer peer: larger is accepted */
  CHECK(!TFP_STRUCT_SIZE_CHECK(&toy, TFP_Toy, c));
}

int main(void) {
  TFP_STATIC_ASSERT(TFP_TOY_V1_STRUCT_SIZE < TFP_TOY_STRUCT_SIZE, block_scope_assert);
  TFP_ASSERT_OFFSET(TFP_Toy, struct_size, 0);

  test_init_zeroes_and_sets_size();
  test_has_field_on_older_peer();
  test_has_field_on_current_peer();
  test_has_field_null();
  test_struct_size_check();

  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("struct_size: all checks passed\n");
  return 0;
}
