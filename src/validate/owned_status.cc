// SPDX-License-Identifier: Apache-2.0
#include "owned_status.h"

namespace tfp_validator {

std::string StatusCodeName(int code) {
  static const char* const kNames[] = {"TF_OK",
                                       "TF_CANCELLED",
                                       "TF_UNKNOWN",
                                       "TF_INVALID_ARGUMENT",
                                       "TF_DEADLINE_EXCEEDED",
                                       "TF_NOT_FOUND",
                                       "TF_ALREADY_EXISTS",
                                       "TF_PERMISSION_DENIED",
                                       "TF_RESOURCE_EXHAUSTED",
                                       "TF_FAILED_PRECONDITION",
                                       "TF_ABORTED",
                                       "TF_OUT_OF_RANGE",
                                       "TF_UNIMPLEMENTED",
                                       "TF_INTERNAL",
                                       "TF_UNAVAILABLE",
                                       "TF_DATA_LOSS",
                                       "TF_UNAUTHENTICATED"};
  if (code >= 0 && code < static_cast<int>(sizeof kNames / sizeof kNames[0])) return kNames[code];
  return "TF_Code " + std::to_string(code);
}

}  // namespace tfp_validator
