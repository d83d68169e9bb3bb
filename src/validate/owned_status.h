// SPDX-License-Identifier: Apache-2.0
// A TF_Status the validator owns (from libtfplugin_shims), passed to plugin
// callbacks, with the texts findings quote. One definition for every phase.
#ifndef TFPLUGIN_VALIDATE_OWNED_STATUS_H_
#define TFPLUGIN_VALIDATE_OWNED_STATUS_H_

#include <string>

#include "tensorflow/c/tf_status.h"

namespace tfp_validator {

// "TF_INTERNAL"; "TF_Code 42" for a value TF does not define.
std::string StatusCodeName(int code);

class OwnedStatus {
 public:
  OwnedStatus() : s_(TF_NewStatus()) {}
  ~OwnedStatus() { TF_DeleteStatus(s_); }
  OwnedStatus(const OwnedStatus&) = delete;
  OwnedStatus& operator=(const OwnedStatus&) = delete;
  TF_Status* get() { return s_; }
  bool ok() const { return TF_GetCode(s_) == TF_OK; }
  std::string code() const { return StatusCodeName(TF_GetCode(s_)); }
  // The message, or "(no message)" when the plugin set none.
  std::string message() const {
    const char* m = TF_Message(s_);
    return m != nullptr && m[0] != '\0' ? m : "(no message)";
  }
  // "TF_INTERNAL: message"
  std::string text() const { return code() + ": " + message(); }

 private:
  TF_Status* s_;
};

}  // namespace tfp_validator

#endif  // TFPLUGIN_VALIDATE_OWNED_STATUS_H_
