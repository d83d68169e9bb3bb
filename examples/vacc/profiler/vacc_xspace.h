// SPDX-License-Identifier: Apache-2.0
//
// The XSpace a pluggable profiler hands TensorFlow (collect_data_xspace),
// as plain structs, and its serialization. Only the fields vacc fills.
//
// Field numbers (TensorFlow's profiler protos, tsl/profiler/protobuf/
// xplane.proto; checked against the xplane_pb2 descriptors TF 2.21 ships):
//   XSpace          planes=1 (XPlane)
//   XPlane          id=1 name=2 lines=3 (XLine)
//                   event_metadata=4 (map<int64, XEventMetadata>)
//                   stat_metadata=5 (map<int64, XStatMetadata>)
//   XLine           id=1 name=2 timestamp_ns=3 events=4 duration_ps=9
//   XEvent          metadata_id=1 offset_ps=2 duration_ps=3 stats=4 (XStat)
//   XEventMetadata  id=1 name=2 display_name=4 stats=5 (XStat)
//   XStatMetadata   id=1 name=2
//   XStat           metadata_id=1 int64_value=4 str_value=5
// All integers are int64 varints. Times: a line's timestamp_ns is absolute
// (the clock of TensorFlow's host events: wall-clock ns since the epoch);
// each event's offset_ps is from that timestamp, in picoseconds.
#ifndef VACC_PROFILER_VACC_XSPACE_H_
#define VACC_PROFILER_VACC_XSPACE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace vacc {
namespace xspace {

struct Stat {
  int64_t metadata_id = 0;
  bool is_string = false;
  int64_t int64_value = 0;
  std::string str_value;
};

struct Event {
  int64_t metadata_id = 0;
  int64_t offset_ps = 0;
  int64_t duration_ps = 0;
  std::vector<Stat> stats;
};

struct Line {
  int64_t id = 0;
  std::string name;
  int64_t timestamp_ns = 0;
  int64_t duration_ps = 0;
  std::vector<Event> events;
};

struct EventMetadata {
  int64_t id = 0;
  std::string name;
  std::string display_name;
  std::vector<Stat> stats;
};

struct StatMetadata {
  int64_t id = 0;
  std::string name;
};

struct Plane {
  int64_t id = 0;
  std::string name;
  std::vector<Line> lines;
  std::vector<EventMetadata> event_metadata;  // ids unique within the plane
  std::vector<StatMetadata> stat_metadata;
};

// The serialized XSpace holding `planes`.
std::string Serialize(const std::vector<Plane>& planes);

}  // namespace xspace
}  // namespace vacc

#endif  // VACC_PROFILER_VACC_XSPACE_H_
