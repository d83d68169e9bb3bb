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

#include <cstdint>
#include <string>
#include <vector>

#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

#include "tfplugin_shims.h"

// Marks the hand-written definition that follows, so tools/gen_shims.py does
// not generate an "unimplemented" one. The static_assert turns a misspelt
// name into a compile error instead of a silently missing symbol.
#define TFP_SHIM_IMPLEMENTED(name) \
  static_assert(sizeof(&name) != 0, #name " must be declared")

namespace tfp_shims {

// Sets `status` (may be NULL) to `code` and `msg`.
inline void Fail(TF_Status* status, TF_Code code, const std::string& msg) {
  TF_SetStatus(status, code, msg.c_str());
}

// A C string a plugin may have left NULL, as a std::string.
inline std::string Str(const char* s) { return s != nullptr ? s : ""; }

// Validates a shape; on success `*count` is its number of elements (no
// negative dimension, no overflow).
bool ElementCount(const int64_t* dims, int num_dims, int64_t* count);

// A tensor's dims as a vector (for TF_AllocateTensor and friends).
std::vector<int64_t> Dims(const TF_Tensor* t);

// Records a call to a function the shims do not implement and, when the
// function has a status, reports TF_UNIMPLEMENTED naming it.
void Unimplemented(const char* name, TF_Status* status);

// Release being emulated ("2.21"): selected by tfp_shims_set_release.
const char* EmulatedRelease();

// The host whose plugin is registering right now (0: none). Kernels and ops
// registered meanwhile are tagged with it, so closing a host forgets exactly
// what its plugin registered (registries are process-wide, as in TF).
void SetRegistrant(int host_id);
int Registrant();

// Records a breach of a C API contract that TensorFlow would not report (or
// would crash on), e.g. a kernel allocating an output with the wrong dtype.
// The call goes on with TensorFlow's behaviour; hosts show the notes.
void ContractNote(const std::string& note);

// Tensors beyond the public C API (tensor.cc):
// wraps memory without copying or alignment fix-ups: device memory is not
// the host's to copy. `dealloc` runs once, when the last sharer is deleted.
TF_Tensor* WrapBuffer(TF_DataType dtype, const int64_t* dims, int num_dims, void* data, size_t len,
                      void (*dealloc)(void* data, size_t len, void* arg), void* arg);
// A new tensor sharing `t`'s buffer, dtype and shape (TensorFlow's shallow copy).
TF_Tensor* ShareTensor(const TF_Tensor* t);
// True if no other tensor shares `t`'s buffer: it may be reused in place.
bool BufferIsUnique(const TF_Tensor* t);

}  // namespace tfp_shims

#endif  // TFPLUGIN_SHIMS_SHIM_INTERNAL_H_
