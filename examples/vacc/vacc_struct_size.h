// SPDX-License-Identifier: Apache-2.0
//
// struct_size negotiation with the TensorFlow core that loaded us.
//
// TensorFlow pre-fills every struct it hands the plugin with its own
// struct_size. The core may come from an older or newer release than the
// headers we were built with:
//   - newer core, larger struct: fill the fields we know and report our size;
//     the core leaves the rest at their defaults.
//   - older core, smaller struct: fill only the fields that fit (writing past
//     its end would corrupt the core's memory) and report its size.
//   - a core whose layout is not a prefix of ours (a field moved between
//     releases) is refused with a clear error: rebuild against its release.
// tfplugin generates, per include root, which sizes are compatible
// (TFPLUGIN_<S>_OLDEST_COMPATIBLE_SIZE, TFPLUGIN_<S>_NEWER_COMPATIBLE in
// tfplugin/abi_release.h); this file only applies them.
#ifndef VACC_STRUCT_SIZE_H_
#define VACC_STRUCT_SIZE_H_

#include <cstddef>
#include <string>
#include <type_traits>

#include "tensorflow/c/tf_status.h"
#include "tfplugin/abi_release.h"
#include "tfplugin/struct_size.h"

namespace vacc {

// The number of bytes of *s both sides understand, or 0 (after setting
// *status, if given) when the core's layout of this struct is incompatible.
template <typename T>
size_t NegotiateSize(const T* s, size_t ours, size_t oldest_compatible, bool newer_compatible,
                     const char* struct_name, TF_Status* status) {
  const size_t theirs = s->struct_size;
  // 0: the core did not say. Every TensorFlow release says; a host that does
  // not is assumed to match our headers.
  if (theirs == 0 || theirs == ours) return ours;
  if (theirs > ours && newer_compatible) return ours;
  if (theirs < ours && theirs >= oldest_compatible) return theirs;
  const std::string message =
      std::string(struct_name) + ".struct_size is " + std::to_string(theirs) +
      ", but this plugin was built against TensorFlow " TFPLUGIN_TF_RELEASE
      " headers, where it is " + std::to_string(ours) +
      " and that layout differs from this TensorFlow's: rebuild the plugin with the tfplugin "
      "headers of the TensorFlow release that loads it";
  if (status != nullptr) TF_SetStatus(status, TF_FAILED_PRECONDITION, message.c_str());
  return 0;
}

}  // namespace vacc

// NegotiateSize for struct S, with the generated compatibility facts.
#define VACC_NEGOTIATE(ptr, S, MACRO_PREFIX, status)                                           \
  ::vacc::NegotiateSize((ptr), MACRO_PREFIX##_STRUCT_SIZE,                                     \
                        TFPLUGIN_##MACRO_PREFIX##_OLDEST_COMPATIBLE_SIZE,                     \
                        TFPLUGIN_##MACRO_PREFIX##_NEWER_COMPATIBLE != 0, #S, (status))

// Sets ptr->FIELD = VALUE only if FIELD lies inside the negotiated `size`.
#define VACC_SET(ptr, size, FIELD, VALUE)                                                \
  do {                                                                                   \
    if (TFP_OFFSET_OF_END(std::remove_pointer_t<decltype(ptr)>, FIELD) <= (size))        \
      (ptr)->FIELD = (VALUE);                                                            \
  } while (0)

#endif  // VACC_STRUCT_SIZE_H_
