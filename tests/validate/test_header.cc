// SPDX-License-Identifier: Apache-2.0
// include/tfplugin/validate.h from C++11: the same checks as from C99.
#include "test_header.c"  // NOLINT: deliberately the C test, compiled as C++
