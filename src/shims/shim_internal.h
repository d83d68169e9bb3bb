// SPDX-License-Identifier: Apache-2.0
// Internal to libtfplugin_shims: how every shim translation unit sees the
// TensorFlow C API. Include this before any tensorflow/c/... header.
#ifndef TFPLUGIN_SHIMS_SHIM_INTERNAL_H_
#define TFPLUGIN_SHIMS_SHIM_INTERNAL_H_

// Our include roots mark functions a release does not export as unavailable
// (a compile error on use). The shims *define* those functions, so the marker
// must expand to nothing here. abi_release.h has an include guard, so
// redefining the macro right after including it wins for every later header.
#include "tfplugin/abi_release.h"
#undef TFPLUGIN_UNAVAILABLE
#define TFPLUGIN_UNAVAILABLE(msg)

#include "tensorflow/c/tf_status.h"

#include "tfplugin_shims.h"

// Marks the hand-written definition that follows, so tools/gen_shims.py does
// not generate an "unimplemented" one. The static_assert turns a misspelt
// name into a compile error instead of a silently missing symbol.
#define TFP_SHIM_IMPLEMENTED(name) \
  static_assert(sizeof(&name) != 0, #name " must be declared")

namespace tfp_shims {

// Records a call to a function the shims do not implement and, when the
// function has a status, reports TF_UNIMPLEMENTED naming it.
void Unimplemented(const char* name, TF_Status* status);

// Release being emulated ("2.21"): selected by tfp_shims_set_release.
const char* EmulatedRelease();

}  // namespace tfp_shims

#endif  // TFPLUGIN_SHIMS_SHIM_INTERNAL_H_
