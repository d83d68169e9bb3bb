// SPDX-License-Identifier: Apache-2.0
#include "profiler/vacc_xspace.h"

#include "profiler/vacc_protobuf_wire.h"

namespace vacc {
namespace xspace {
namespace {

// Field numbers, see the header.
enum : int { kSpacePlanes = 1 };
enum : int { kPlaneId = 1, kPlaneName = 2, kPlaneLines = 3, kPlaneEventMetadata = 4,
             kPlaneStatMetadata = 5 };
enum : int { kLineId = 1, kLineName = 2, kLineTimestampNs = 3, kLineEvents = 4,
             kLineDurationPs = 9 };
enum : int { kEventMetadataId = 1, kEventOffsetPs = 2, kEventDurationPs = 3, kEventStats = 4 };
enum : int { kEventMetadataIdField = 1, kEventMetadataName = 2, kEventMetadataDisplayName = 4,
             kEventMetadataStats = 5 };
enum : int { kStatMetadataId = 1, kStatMetadataName = 2 };
enum : int { kStatMetadataIdField = 1, kStatInt64 = 4, kStatString = 5 };
enum : int { kMapKey = 1, kMapValue = 2 };

ProtoWriter EncodeStat(const Stat& s) {
  ProtoWriter w;
  w.Int64(kStatMetadataIdField, s.metadata_id);
  if (s.is_string) {
    w.String(kStatString, s.str_value);
  } else {
    w.Int64(kStatInt64, s.int64_value);
  }
  return w;
}

ProtoWriter EncodeEvent(const Event& e) {
  ProtoWriter w;
  w.Int64(kEventMetadataId, e.metadata_id);
  w.Int64(kEventOffsetPs, e.offset_ps);
  w.Int64(kEventDurationPs, e.duration_ps);
  for (const Stat& s : e.stats) w.Message(kEventStats, EncodeStat(s));
  return w;
}

ProtoWriter EncodeLine(const Line& l) {
  ProtoWriter w;
  w.Int64(kLineId, l.id);
  w.String(kLineName, l.name);
  w.Int64(kLineTimestampNs, l.timestamp_ns);
  for (const Event& e : l.events) w.Message(kLineEvents, EncodeEvent(e));
  w.Int64(kLineDurationPs, l.duration_ps);
  return w;
}

ProtoWriter EncodeEventMetadata(const EventMetadata& m) {
  ProtoWriter w;
  w.Int64(kEventMetadataIdField, m.id);
  w.String(kEventMetadataName, m.name);
  if (!m.display_name.empty()) w.String(kEventMetadataDisplayName, m.display_name);
  for (const Stat& s : m.stats) w.Message(kEventMetadataStats, EncodeStat(s));
  return w;
}

ProtoWriter EncodeStatMetadata(const StatMetadata& m) {
  ProtoWriter w;
  w.Int64(kStatMetadataId, m.id);
  w.String(kStatMetadataName, m.name);
  return w;
}

// Writes one entry of the map<int64, V> field `field` of `w`: a message with
// key = 1, value = 2.
void MapEntry(ProtoWriter* w, int field, int64_t key, const ProtoWriter& value) {
  ProtoWriter entry;
  entry.Int64(kMapKey, key);
  entry.Message(kMapValue, value);
  w->Message(field, entry);
}

ProtoWriter EncodePlane(const Plane& p) {
  ProtoWriter w;
  w.Int64(kPlaneId, p.id);
  w.String(kPlaneName, p.name);
  for (const Line& l : p.lines) w.Message(kPlaneLines, EncodeLine(l));
  for (const EventMetadata& m : p.event_metadata) {
    MapEntry(&w, kPlaneEventMetadata, m.id, EncodeEventMetadata(m));
  }
  for (const StatMetadata& m : p.stat_metadata) {
    MapEntry(&w, kPlaneStatMetadata, m.id, EncodeStatMetadata(m));
  }
  return w;
}

}  // namespace

std::string Serialize(const std::vector<Plane>& planes) {
  ProtoWriter space;
  for (const Plane& p : planes) space.Message(kSpacePlanes, EncodePlane(p));
  return space.Take();
}

}  // namespace xspace
}  // namespace vacc
