// SPDX-License-Identifier: Apache-2.0
// TF_Status / TSL_Status: a code, a message and key/value payloads, with
// TensorFlow's observable rules (from its documented C API behaviour):
//  - setting TF_OK clears the message and payloads, as TF builds an OK status;
//  - setting any code replaces the whole status, payloads included;
//  - payloads on an OK status are dropped (absl::Status::SetPayload is a
//    no-op on OK), setting an existing key replaces its value.
// TF_Status is TSL_Status (a typedef in tf_status.h), so each TF_ function
// and its TSL_ twin share one implementation.
// Deviation, deliberately: TensorFlow dereferences a NULL status; the shims
// treat it as "nowhere to report" (setters do nothing, getters return TF_OK
// and ""), since they exist to keep a plugin running, not to reproduce a crash.
#include "shim_internal.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

struct TSL_Status {
  TSL_Code code = TSL_OK;
  std::string message;
  std::vector<std::pair<std::string, std::string>> payloads;  // insertion order
};

namespace {

TSL_Status* NewStatus() { return new TSL_Status(); }

void DeleteStatus(TSL_Status* s) { delete s; }

void SetStatus(TSL_Status* s, TSL_Code code, const char* msg) {
  if (s == nullptr) return;
  s->payloads.clear();
  s->code = code;
  if (code == TSL_OK) {
    s->message.clear();
  } else {
    s->message = msg != nullptr ? msg : "";
  }
}

void SetPayload(TSL_Status* s, const char* key, const char* value) {
  if (s == nullptr || s->code == TSL_OK || key == nullptr) return;
  std::string v = value != nullptr ? value : "";
  for (auto& kv : s->payloads) {
    if (kv.first == key) {
      kv.second = std::move(v);
      return;
    }
  }
  s->payloads.emplace_back(key, std::move(v));
}

void ForEachPayload(const TSL_Status* s, TSL_PayloadVisitor visitor, void* capture) {
  if (s == nullptr || visitor == nullptr) return;
  // Copy first: a visitor may legitimately modify the status it walks.
  auto payloads = s->payloads;
  for (const auto& kv : payloads) visitor(kv.first.c_str(), kv.second.c_str(), capture);
}

// errno -> canonical code, grouped the way POSIX errors map onto the
// canonical error space (what went wrong, not which call failed).
TSL_Code CodeFromErrno(int e) {
  switch (e) {
    case 0: return TSL_OK;
    case EINVAL: case ENAMETOOLONG: case E2BIG: case EDESTADDRREQ: case EDOM:
    case EFAULT: case EILSEQ: case ENOPROTOOPT: case ENOTSOCK: case ENOTTY:
    case EPROTOTYPE: case ESPIPE:
#ifdef ENOSTR
    case ENOSTR:
#endif
      return TSL_INVALID_ARGUMENT;
    case ETIMEDOUT: case ETIME:
      return TSL_DEADLINE_EXCEEDED;
    case ENODEV: case ENOENT: case ENXIO: case ESRCH:
      return TSL_NOT_FOUND;
    case EEXIST: case EADDRNOTAVAIL: case EALREADY:
      return TSL_ALREADY_EXISTS;
    case EPERM: case EACCES: case EROFS:
      return TSL_PERMISSION_DENIED;
    case ENOTEMPTY: case EISDIR: case ENOTDIR: case EADDRINUSE: case EBADF:
    case EBUSY: case ECHILD: case EISCONN: case ENOTCONN: case EPIPE: case ETXTBSY:
#ifdef ENOTBLK
    case ENOTBLK:
#endif
#ifdef ESHUTDOWN
    case ESHUTDOWN:
#endif
      return TSL_FAILED_PRECONDITION;
    case ENOSPC: case EMFILE: case EMLINK: case ENFILE: case ENOBUFS: case ENODATA:
    case ENOMEM: case EUSERS: case EDQUOT:
#ifdef ENOSR
    case ENOSR:
#endif
      return TSL_RESOURCE_EXHAUSTED;
    case EFBIG: case EOVERFLOW: case ERANGE:
      return TSL_OUT_OF_RANGE;
    case ENOSYS: case ENOTSUP: case EAFNOSUPPORT: case EPFNOSUPPORT:
    case EPROTONOSUPPORT: case ESOCKTNOSUPPORT: case EXDEV:
      return TSL_UNIMPLEMENTED;
    case EAGAIN: case ECONNREFUSED: case ECONNABORTED: case ECONNRESET: case EINTR:
    case EHOSTDOWN: case EHOSTUNREACH: case ENETDOWN: case ENETRESET:
    case ENETUNREACH: case ENOLCK: case ENOLINK: case ENONET:
      return TSL_UNAVAILABLE;
    case EDEADLK: case ESTALE:
      return TSL_ABORTED;
    case ECANCELED:
      return TSL_CANCELLED;
    default:
      return TSL_UNKNOWN;
  }
}

void SetStatusFromIOError(TSL_Status* s, int error_code, const char* context) {
  if (s == nullptr) return;
  char buf[256];
  // GNU strerror_r (g++ defines _GNU_SOURCE): thread-safe, returns the text.
  const char* text = strerror_r(error_code, buf, sizeof buf);
  std::string msg = context != nullptr ? context : "";
  msg += "; ";
  msg += text;
  SetStatus(s, CodeFromErrno(error_code), msg.c_str());
}

TSL_Code GetCode(const TSL_Status* s) { return s != nullptr ? s->code : TSL_OK; }

const char* Message(const TSL_Status* s) {
  return s != nullptr ? s->message.c_str() : "";
}

}  // namespace

extern "C" {

TFP_SHIM_IMPLEMENTED(TF_NewStatus);
TF_Status* TF_NewStatus(void) { return NewStatus(); }
TFP_SHIM_IMPLEMENTED(TF_DeleteStatus);
void TF_DeleteStatus(TF_Status* s) { DeleteStatus(s); }
TFP_SHIM_IMPLEMENTED(TF_SetStatus);
void TF_SetStatus(TF_Status* s, TF_Code code, const char* msg) { SetStatus(s, code, msg); }
TFP_SHIM_IMPLEMENTED(TF_SetPayload);
void TF_SetPayload(TF_Status* s, const char* key, const char* value) { SetPayload(s, key, value); }
TFP_SHIM_IMPLEMENTED(TF_ForEachPayload);
void TF_ForEachPayload(const TF_Status* s, TSL_PayloadVisitor visitor, void* capture) {
  ForEachPayload(s, visitor, capture);
}
TFP_SHIM_IMPLEMENTED(TF_SetStatusFromIOError);
void TF_SetStatusFromIOError(TF_Status* s, int error_code, const char* context) {
  SetStatusFromIOError(s, error_code, context);
}
TFP_SHIM_IMPLEMENTED(TF_GetCode);
TF_Code TF_GetCode(const TF_Status* s) { return GetCode(s); }
TFP_SHIM_IMPLEMENTED(TF_Message);
const char* TF_Message(const TF_Status* s) { return Message(s); }

TFP_SHIM_IMPLEMENTED(TSL_NewStatus);
TSL_Status* TSL_NewStatus(void) { return NewStatus(); }
TFP_SHIM_IMPLEMENTED(TSL_DeleteStatus);
void TSL_DeleteStatus(TSL_Status* s) { DeleteStatus(s); }
TFP_SHIM_IMPLEMENTED(TSL_SetStatus);
void TSL_SetStatus(TSL_Status* s, TSL_Code code, const char* msg) { SetStatus(s, code, msg); }
TFP_SHIM_IMPLEMENTED(TSL_SetPayload);
void TSL_SetPayload(TSL_Status* s, const char* key, const char* value) {
  SetPayload(s, key, value);
}
TFP_SHIM_IMPLEMENTED(TSL_ForEachPayload);
void TSL_ForEachPayload(const TSL_Status* s, TSL_PayloadVisitor visitor, void* capture) {
  ForEachPayload(s, visitor, capture);
}
TFP_SHIM_IMPLEMENTED(TSL_SetStatusFromIOError);
void TSL_SetStatusFromIOError(TSL_Status* s, int error_code, const char* context) {
  SetStatusFromIOError(s, error_code, context);
}
TFP_SHIM_IMPLEMENTED(TSL_GetCode);
TSL_Code TSL_GetCode(const TSL_Status* s) { return GetCode(s); }
TFP_SHIM_IMPLEMENTED(TSL_Message);
const char* TSL_Message(const TSL_Status* s) { return Message(s); }

}  // extern "C"
