// SPDX-License-Identifier: Apache-2.0
#include "handle_tracker.h"

namespace tfp_validator {
namespace {

// The record of the allocation of `kind` containing address p, if any.
template <typename Map>
const HandleRecord* Containing(const Map& m, HandleKind kind, uintptr_t p) {
  auto it = m.upper_bound({kind, p});
  if (it == m.begin()) return nullptr;
  --it;
  if (it->first.first != kind) return nullptr;
  const HandleRecord& r = it->second;
  // An allocation of 0 bytes still owns its first address.
  const uint64_t extent = r.size == 0 ? 1 : r.size;
  return p - r.handle < extent ? &r : nullptr;
}

}  // namespace

bool HandleTracker::Create(const HandleRecord& record, HandleRecord* aliased) {
  std::lock_guard<std::mutex> lock(mu_);
  const Key key{record.kind, record.handle};
  destroyed_.erase(key);  // the address is reused: a new life
  auto it = live_.find(key);
  const bool was_live = it != live_.end();
  if (was_live) {
    *aliased = it->second;
    it->second = record;
  } else {
    live_.emplace(key, record);
  }
  return was_live;
}

HandleState HandleTracker::Use(HandleKind kind, uintptr_t handle, HandleRecord* record) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Key key{kind, handle};
  // The common case copies nothing: records carry the creating call's text.
  if (live_.count(key) != 0) return HandleState::kLive;
  if (auto it = destroyed_.find(key); it != destroyed_.end()) {
    *record = it->second;
    return HandleState::kDestroyed;
  }
  return HandleState::kUnknown;
}

HandleState HandleTracker::Destroy(HandleKind kind, uintptr_t handle, const std::string& call,
                                   HandleRecord* record) {
  std::lock_guard<std::mutex> lock(mu_);
  const Key key{kind, handle};
  if (auto it = live_.find(key); it != live_.end()) {
    it->second.destroyed_by = call;
    *record = it->second;
    destroyed_[key] = it->second;
    live_.erase(it);
    return HandleState::kLive;
  }
  if (auto it = destroyed_.find(key); it != destroyed_.end()) {
    *record = it->second;
    return HandleState::kDestroyed;
  }
  return HandleState::kUnknown;
}

HandleState HandleTracker::Range(uintptr_t p, uint64_t n, HandleRecord* record) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (const HandleRecord* r = Containing(live_, HandleKind::kDeviceMemory, p)) {
    if (n <= r->size - (p - r->handle)) return HandleState::kLive;
    *record = *r;
    return HandleState::kUnknown;
  }
  if (const HandleRecord* r = Containing(destroyed_, HandleKind::kDeviceMemory, p)) {
    *record = *r;
    return HandleState::kDestroyed;
  }
  *record = HandleRecord{};
  return HandleState::kUnknown;
}

std::vector<HandleRecord> HandleTracker::TakeLive(const void* device) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<HandleRecord> out;
  for (auto it = live_.begin(); it != live_.end();) {
    if (device == nullptr || it->second.device == device) {
      out.push_back(it->second);
      it = live_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

}  // namespace tfp_validator
