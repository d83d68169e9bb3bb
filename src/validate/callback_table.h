// SPDX-License-Identifier: Apache-2.0
// The validation layer's signature table: every callback field of every
// plugin struct, its libffi types and what each parameter is. Generated
// (callback_table.inc) by tools/gen_callback_table.py from
// abi/tfplugin-abi.json: roles come from the measured C types, lifecycle
// effects from abi/contracts.toml.
#ifndef TFPLUGIN_VALIDATE_CALLBACK_TABLE_H_
#define TFPLUGIN_VALIDATE_CALLBACK_TABLE_H_

#include <cstddef>
#include <cstdint>

namespace tfp_validator {

enum class FfiKind : uint8_t { kVoid, kPointer, kUInt8, kUInt32, kUInt64, kSInt32, kSInt64, kDouble, kFloat };

// What a parameter is to the layer.
enum class Role : uint8_t {
  kOther,
  kPlatform,
  kDevice,
  kStatus,             // TF_Status *
  kStream,             // SP_Stream (by value: a use, or the destroyed one)
  kStreamOut,          // SP_Stream * (filled by a create)
  kEvent,
  kEventOut,
  kTimer,
  kTimerOut,
  kDeviceMemory,       // SP_DeviceMemoryBase * (written, or filled by allocate)
  kDeviceMemoryConst,  // const SP_DeviceMemoryBase * (read)
  kSize,               // a byte count (uint64_t size / bytes)
  kHostPointer,        // void *
  kHostCallbackFn,     // SE_StatusCallbackFn
  kHostCallbackArg,    // the void * passed to it
};

enum class Effect : uint8_t { kNone, kCreates, kDestroys };
enum class HandleKind : uint8_t { kNone, kStream, kEvent, kTimer, kDeviceMemory, kHostMemory, kUnifiedMemory };

constexpr int kMaxCallbackParams = 8;

struct CallbackSignature {
  const char* struct_name;  // "SP_StreamExecutor"
  const char* field;        // "memcpy_htod"
  const char* c_type;       // as measured
  const char* family;       // "stream_executor"
  bool async;               // enqueues on its SP_Stream (contract sync = "async")
  FfiKind ret;
  int param_count;
  FfiKind params[kMaxCallbackParams];
  Role roles[kMaxCallbackParams];
  const char* names[kMaxCallbackParams];
  Effect effect;
  HandleKind kind;
};

size_t CallbackSignatureCount();
const CallbackSignature& GetCallbackSignature(size_t i);
// The row for Struct.field, or NULL.
const CallbackSignature* FindCallbackSignature(const char* struct_name, const char* field);
const char* HandleKindName(HandleKind kind);  // "stream", "device memory"
// The handle kind a role passes or fills (kStream for kStream and kStreamOut), or kNone.
HandleKind RoleHandleKind(Role role);

}  // namespace tfp_validator

#endif  // TFPLUGIN_VALIDATE_CALLBACK_TABLE_H_
