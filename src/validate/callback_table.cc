// SPDX-License-Identifier: Apache-2.0
#include "callback_table.h"

#include <cstring>

namespace tfp_validator {
namespace {

const CallbackSignature kTable[] = {
#include "callback_table.inc"
};

}  // namespace

size_t CallbackSignatureCount() { return sizeof kTable / sizeof kTable[0]; }

const CallbackSignature& GetCallbackSignature(size_t i) { return kTable[i]; }

const CallbackSignature* FindCallbackSignature(const char* struct_name, const char* field) {
  for (const CallbackSignature& s : kTable) {
    if (std::strcmp(s.struct_name, struct_name) == 0 && std::strcmp(s.field, field) == 0) return &s;
  }
  return nullptr;
}

const char* HandleKindName(HandleKind kind) {
  switch (kind) {
    case HandleKind::kStream: return "stream";
    case HandleKind::kEvent: return "event";
    case HandleKind::kTimer: return "timer";
    case HandleKind::kDeviceMemory: return "device memory";
    case HandleKind::kHostMemory: return "host memory";
    case HandleKind::kUnifiedMemory: return "unified memory";
    case HandleKind::kNone: break;
  }
  return "none";
}

HandleKind RoleHandleKind(Role role) {
  switch (role) {
    case Role::kStream: case Role::kStreamOut: return HandleKind::kStream;
    case Role::kEvent: case Role::kEventOut: return HandleKind::kEvent;
    case Role::kTimer: case Role::kTimerOut: return HandleKind::kTimer;
    case Role::kDeviceMemory: case Role::kDeviceMemoryConst: return HandleKind::kDeviceMemory;
    default: return HandleKind::kNone;
  }
}

}  // namespace tfp_validator
