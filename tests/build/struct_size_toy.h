/* SPDX-License-Identifier: Apache-2.0 */

/*
 * A toy ABI struct shaped like TensorFlow's: struct_size first, members only
 * ever appended. Version 1 ended at `a`; version 2 appended `b` and `c`.
 */
#ifndef TFPLUGIN_TESTS_STRUCT_SIZE_TOY_H_
#define TFPLUGIN_TESTS_STRUCT_SIZE_TOY_H_

#include <stddef.h>

#include "tfplugin/struct_size.h"

typedef struct TFP_Toy {
  size_t struct_size;
  void* ext;
  int a; /* last member of version 1 */
  int b;
  double c;
} TFP_Toy;

#define TFP_TOY_V1_STRUCT_SIZE TFP_OFFSET_OF_END(TFP_Toy, a)
#define TFP_TOY_STRUCT_SIZE TFP_OFFSET_OF_END(TFP_Toy, c)

/* Defined in struct_size_fill.c: the "other side" filling a struct. */
void tfp_toy_fill_v1(TFP_Toy* toy);
void tfp_toy_fill_current(TFP_Toy* toy);

#endif /* TFPLUGIN_TESTS_STRUCT_SIZE_TOY_H_ */
