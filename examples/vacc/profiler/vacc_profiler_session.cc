// SPDX-License-Identifier: Apache-2.0
#include "profiler/vacc_profiler_session.h"

#include <time.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "profiler/vacc_xspace.h"

namespace vacc {
namespace profiler {

namespace internal {
std::atomic<bool> g_active{false};
}  // namespace internal

namespace {

struct RecordedEvent {
  int device = 0;
  const void* stream = nullptr;
  int64_t op_id = 0;
  int64_t start_ns = 0;  // since the session's origin
  int64_t end_ns = 0;
};

struct Session {
  std::mutex mu;
  uint64_t number = 0;  // guarded by mu; 0: never started
  bool active = false;
  // TensorFlow's host events use wall-clock ns since the epoch; events are
  // timed with the steady clock from `origin` and placed after `origin_wall_ns`.
  Clock::time_point origin;
  int64_t origin_wall_ns = 0;
  std::map<std::pair<std::string, std::string>, int64_t> op_ids;  // (node, op) -> id
  std::vector<std::pair<std::string, std::string>> ops;           // id - 1 -> (node, op)
  std::vector<RecordedEvent> events;
};

Session& TheSession() {
  static Session* session = new Session;  // never destroyed: compute units may outlive statics
  return *session;
}

int64_t WallClockNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t Since(Clock::time_point origin, Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t - origin).count();
}

}  // namespace

bool StartSession(std::string* error) {
  Session& s = TheSession();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.active) {
    *error = "a VACC profiling session is already active";
    return false;
  }
  ++s.number;
  s.active = true;
  s.op_ids.clear();
  s.ops.clear();
  s.events.clear();
  s.origin = Clock::now();
  s.origin_wall_ns = WallClockNs();
  internal::g_active.store(true, std::memory_order_relaxed);
  return true;
}

bool StopSession(std::string* error) {
  Session& s = TheSession();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.active) {
    *error = "no VACC profiling session is active";
    return false;
  }
  s.active = false;
  internal::g_active.store(false, std::memory_order_relaxed);
  return true;
}

OpTag InternOp(const std::string& node, const std::string& op_type) {
  Session& s = TheSession();
  std::lock_guard<std::mutex> lock(s.mu);
  auto [it, added] = s.op_ids.emplace(std::make_pair(node, op_type), 0);
  if (added) {
    s.ops.emplace_back(node, op_type);
    it->second = static_cast<int64_t>(s.ops.size());  // ids from 1: 0 means "none"
  }
  return OpTag{s.number, it->second};
}

void Record(const OpTag& tag, int device_ordinal, const void* stream, Clock::time_point start,
            Clock::time_point end) {
  Session& s = TheSession();
  std::lock_guard<std::mutex> lock(s.mu);
  if (tag.session != s.number || tag.op_id <= 0) return;  // launched in another session
  s.events.push_back({device_ordinal, stream, tag.op_id, Since(s.origin, start),
                      Since(s.origin, end)});
}

size_t RecordedEventCount() {
  Session& s = TheSession();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.events.size();
}

std::string PlaneName(const std::string& device_type, int ordinal) {
  // TensorFlow's profiler tools take planes named with the custom-device
  // prefix "/device:CUSTOM:" as device planes (GPUs use "/device:GPU:<n>");
  // the device type keeps two plugins' planes apart, the ordinal comes last.
  return "/device:CUSTOM:" + device_type + ":" + std::to_string(ordinal);
}

std::string SerializeSession(const std::string& device_type, int device_count) {
  Session& s = TheSession();
  std::vector<RecordedEvent> events;
  std::vector<std::pair<std::string, std::string>> ops;
  int64_t origin_wall_ns = 0;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    events = s.events;
    ops = s.ops;
    origin_wall_ns = s.origin_wall_ns;
  }
  std::stable_sort(events.begin(), events.end(), [](const RecordedEvent& a, const RecordedEvent& b) {
    return a.device != b.device ? a.device < b.device : a.start_ns < b.start_ns;
  });
  int last_device = device_count - 1;
  for (const RecordedEvent& e : events) last_device = std::max(last_device, e.device);

  constexpr int64_t kTfOpStat = 1;
  std::vector<xspace::Plane> planes;
  for (int device = 0; device <= last_device; ++device) {
    xspace::Plane plane;
    plane.id = device;
    plane.name = PlaneName(device_type, device);
    plane.stat_metadata.push_back({kTfOpStat, "tf_op"});
    std::map<const void*, size_t> line_of;     // stream -> index in plane.lines
    std::vector<bool> used(ops.size() + 1, false);
    for (const RecordedEvent& e : events) {
      if (e.device != device) continue;
      auto [it, added] = line_of.emplace(e.stream, plane.lines.size());
      if (added) {
        xspace::Line line;
        line.id = static_cast<int64_t>(plane.lines.size());
        line.name = "VACC stream " + std::to_string(line.id);
        line.timestamp_ns = origin_wall_ns;
        plane.lines.push_back(std::move(line));
      }
      xspace::Line& line = plane.lines[it->second];
      const int64_t start = std::max<int64_t>(e.start_ns, 0);
      xspace::Event ev;
      ev.metadata_id = e.op_id;
      ev.offset_ps = start * 1000;
      ev.duration_ps = std::max<int64_t>(e.end_ns - start, 0) * 1000;
      line.duration_ps = std::max(line.duration_ps, ev.offset_ps + ev.duration_ps);
      line.events.push_back(std::move(ev));
      used[static_cast<size_t>(e.op_id)] = true;
    }
    for (size_t id = 1; id <= ops.size(); ++id) {
      if (!used[id]) continue;
      const auto& [node, op] = ops[id - 1];
      xspace::EventMetadata m;
      m.id = static_cast<int64_t>(id);
      m.name = node;
      m.display_name = op;
      xspace::Stat tf_op;
      tf_op.metadata_id = kTfOpStat;
      tf_op.is_string = true;
      tf_op.str_value = node + ":" + op;  // TensorFlow's "name:type" form of an op
      m.stats.push_back(std::move(tf_op));
      plane.event_metadata.push_back(std::move(m));
    }
    planes.push_back(std::move(plane));
  }
  return xspace::Serialize(planes);
}

}  // namespace profiler
}  // namespace vacc
