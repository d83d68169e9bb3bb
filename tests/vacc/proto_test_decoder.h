// SPDX-License-Identifier: Apache-2.0
//
// An independent protobuf wire decoder for the profiler tests: written from
// the format's public description, sharing no code with the plugin's
// encoder (examples/vacc/profiler/vacc_protobuf_wire.*), so a bug there
// cannot cancel out here. Decodes a message into its fields; embedded
// messages are decoded on demand with Decode(field.bytes).
#ifndef TESTS_VACC_PROTO_TEST_DECODER_H_
#define TESTS_VACC_PROTO_TEST_DECODER_H_

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace proto_test {

struct Field {
  int wire_type = 0;
  uint64_t varint = 0;
  std::string bytes;
};

// field number -> its occurrences, in order.
using Message = std::map<int, std::vector<Field>>;

inline uint64_t ReadVarint(const std::string& d, size_t* pos) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    if (*pos >= d.size() || shift > 63) throw std::runtime_error("bad varint");
    const unsigned char b = static_cast<unsigned char>(d[(*pos)++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
}

// Throws std::runtime_error on malformed input.
inline Message Decode(const std::string& d) {
  Message m;
  size_t pos = 0;
  while (pos < d.size()) {
    const uint64_t key = ReadVarint(d, &pos);
    Field f;
    f.wire_type = static_cast<int>(key & 7);
    if (f.wire_type == 0) {
      f.varint = ReadVarint(d, &pos);
    } else if (f.wire_type == 2) {
      const uint64_t n = ReadVarint(d, &pos);
      if (n > d.size() - pos) throw std::runtime_error("length past the end");
      f.bytes = d.substr(pos, n);
      pos += n;
    } else {
      throw std::runtime_error("unexpected wire type " + std::to_string(f.wire_type));
    }
    m[static_cast<int>(key >> 3)].push_back(f);
  }
  return m;
}

inline int64_t Int(const Message& m, int field) {
  auto it = m.find(field);
  return it == m.end() ? 0 : static_cast<int64_t>(it->second.back().varint);
}
inline std::string Str(const Message& m, int field) {
  auto it = m.find(field);
  return it == m.end() ? "" : it->second.back().bytes;
}
inline std::vector<Message> Messages(const Message& m, int field) {
  std::vector<Message> out;
  auto it = m.find(field);
  if (it != m.end()) {
    for (const Field& f : it->second) out.push_back(Decode(f.bytes));
  }
  return out;
}

// An XSpace, decoded with TensorFlow's xplane.proto field numbers (see
// examples/vacc/profiler/vacc_xspace.h).
struct XEvent {
  int64_t metadata_id, offset_ps, duration_ps;
};
struct XLine {
  int64_t id, timestamp_ns, duration_ps;
  std::string name;
  std::vector<XEvent> events;
};
struct XEventMetadata {
  std::string name, display_name, tf_op;  // tf_op: the string stat named "tf_op"
};
struct XPlane {
  int64_t id;
  std::string name;
  std::vector<XLine> lines;
  std::map<int64_t, XEventMetadata> event_metadata;
  std::map<int64_t, std::string> stat_metadata;  // id -> name
};

inline std::vector<XPlane> DecodeXSpace(const std::string& bytes) {
  std::vector<XPlane> planes;
  for (const Message& p : Messages(Decode(bytes), 1)) {
    XPlane plane{Int(p, 1), Str(p, 2), {}, {}, {}};
    for (const Message& entry : Messages(p, 5)) {
      const Message v = Decode(Str(entry, 2));
      plane.stat_metadata[Int(entry, 1)] = Str(v, 2);
      if (Int(v, 1) != Int(entry, 1)) throw std::runtime_error("stat metadata id != map key");
    }
    for (const Message& entry : Messages(p, 4)) {
      const Message v = Decode(Str(entry, 2));
      if (Int(v, 1) != Int(entry, 1)) throw std::runtime_error("event metadata id != map key");
      XEventMetadata md{Str(v, 2), Str(v, 4), ""};
      for (const Message& stat : Messages(v, 5)) {
        if (plane.stat_metadata[Int(stat, 1)] == "tf_op") md.tf_op = Str(stat, 5);
      }
      plane.event_metadata[Int(entry, 1)] = md;
    }
    for (const Message& l : Messages(p, 3)) {
      XLine line{Int(l, 1), Int(l, 3), Int(l, 9), Str(l, 2), {}};
      for (const Message& e : Messages(l, 4)) line.events.push_back({Int(e, 1), Int(e, 2), Int(e, 3)});
      plane.lines.push_back(line);
    }
    planes.push_back(plane);
  }
  return planes;
}

}  // namespace proto_test

#endif  // TESTS_VACC_PROTO_TEST_DECODER_H_
