/* SPDX-License-Identifier: Apache-2.0 */

/*
 * Translation unit 1 of 2: plays the peer that fills structs. Including the
 * header here and in struct_size_main.c proves it defines nothing that links.
 */
#include "struct_size_toy.h"
#include "tfplugin/struct_size.h"

/* File-scope assertions, portable across data models. */
TFP_STATIC_ASSERT(sizeof(TFP_Toy) >= TFP_TOY_STRUCT_SIZE, toy_size_covers_last_member);
TFP_ASSERT_OFFSET(TFP_Toy, struct_size, 0);
TFP_ASSERT_OFFSET(TFP_Toy, a, sizeof(size_t) + sizeof(void*));
TFP_ASSERT_FIELD(TFP_Toy, b, sizeof(size_t) + sizeof(void*) + sizeof(int), sizeof(int));

/* A peer built against version 1 only knows members up to `a`. */
void tfp_toy_fill_v1(TFP_Toy* toy) {
  TFP_STRUCT_INIT(toy, TFP_TOY_V1_STRUCT_SIZE);
  toy->a = 1;
}

void tfp_toy_fill_current(TFP_Toy* toy) {
  TFP_STRUCT_INIT(toy, TFP_TOY_STRUCT_SIZE);
  toy->a = 1;
  toy->b = 2;
  toy->c = 3.0;
}
