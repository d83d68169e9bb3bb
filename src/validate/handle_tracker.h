// SPDX-License-Identifier: Apache-2.0
// The validation layer's view of handle lifetimes: every stream, event,
// timer and allocation a create callback returned, until its destroy, and
// the ones destroyed since (to tell a use-after-destroy from a handle the
// layer never saw). Device memory is kept by address range, so copies into
// part of an allocation (as TensorFlow makes them) are found inside it.
// Thread-safe: callbacks come from any TF thread.
#ifndef TFPLUGIN_VALIDATE_HANDLE_TRACKER_H_
#define TFPLUGIN_VALIDATE_HANDLE_TRACKER_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "callback_table.h"

namespace tfp_validator {

struct HandleRecord {
  HandleKind kind = HandleKind::kNone;
  uintptr_t handle = 0;  // the handle, or an allocation's first byte
  uint64_t size = 0;     // allocations: bytes
  const void* device = nullptr;
  std::string created_by;    // the call, as the trace shows it
  std::string destroyed_by;  // "" while live
};

enum class HandleState { kLive, kDestroyed, kUnknown };

class HandleTracker {
 public:
  // Records a handle a create returned. When it is already live (the plugin
  // returned it twice), *aliased gets the earlier record, which this one
  // replaces; returns whether it was.
  bool Create(const HandleRecord& record, HandleRecord* aliased);
  // A use of a handle passed by value; *record: its record when destroyed.
  HandleState Use(HandleKind kind, uintptr_t handle, HandleRecord* record) const;
  // Ends a handle's life; kDestroyed: it already was (record: the earlier).
  HandleState Destroy(HandleKind kind, uintptr_t handle, const std::string& call,
                      HandleRecord* record);
  // Is [p, p + n) inside one live allocation? kDestroyed: p is inside one
  // that was deallocated; kUnknown: outside every allocation, or reaching
  // past the end of the one p is in (*record: that one, size 0 if none; not
  // filled for kLive).
  HandleState Range(uintptr_t p, uint64_t n, HandleRecord* record) const;
  // Removes and returns the live handles of `device` (NULL: of every device).
  std::vector<HandleRecord> TakeLive(const void* device);

 private:
  using Key = std::pair<HandleKind, uintptr_t>;
  mutable std::mutex mu_;
  std::map<Key, HandleRecord> live_;
  std::map<Key, HandleRecord> destroyed_;
};

}  // namespace tfp_validator

#endif  // TFPLUGIN_VALIDATE_HANDLE_TRACKER_H_
