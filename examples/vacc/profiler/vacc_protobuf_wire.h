// SPDX-License-Identifier: Apache-2.0
//
// The protobuf wire format, just enough of it for the profiler: writing the
// XSpace TensorFlow expects from collect_data_xspace (vacc_xspace.h) and
// reading one field of a serialized NodeDef. No protobuf library: a plugin
// that linked its own libprotobuf next to TensorFlow's could clash with it,
// and the few messages involved need only two wire types.
//
// Facts of the format (public protobuf encoding documentation):
//   - a field is a key varint (field_number << 3 | wire_type) then its value;
//   - wire type 0 (VARINT): base-128, least significant group first, high
//     bit = "more bytes follow"; int64 values are their two's complement as
//     uint64 (so negative numbers take 10 bytes);
//   - wire type 2 (LEN): a varint byte count, then the bytes; used for
//     strings, bytes, embedded messages and each entry of a map (a message
//     with key = field 1, value = field 2);
//   - repeated fields are the field written once per element; unknown fields
//     are skipped by readers, so writers may omit any field left at default.
#ifndef VACC_PROFILER_VACC_PROTOBUF_WIRE_H_
#define VACC_PROFILER_VACC_PROTOBUF_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vacc {

enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

// Appends fields to a message being built. Embedded messages are built in
// their own ProtoWriter and added with Message() (the length must come first).
class ProtoWriter {
 public:
  void Varint(int field, uint64_t value);
  void Int64(int field, int64_t value) { Varint(field, static_cast<uint64_t>(value)); }
  void Bytes(int field, std::string_view bytes);
  void String(int field, std::string_view s) { Bytes(field, s); }
  void Message(int field, const ProtoWriter& message) { Bytes(field, message.data()); }

  const std::string& data() const { return out_; }
  std::string Take() { return std::move(out_); }
  size_t size() const { return out_.size(); }

  // The raw encodings, for callers and tests.
  static void AppendVarint(std::string* out, uint64_t value);
  static void AppendKey(std::string* out, int field, WireType type);

 private:
  std::string out_;
};

// Reads a message field by field. Next() returns false at the end or on
// malformed input (then ok() is false).
class ProtoReader {
 public:
  explicit ProtoReader(std::string_view data) : data_(data) {}

  struct Field {
    int number = 0;
    WireType type = WireType::kVarint;
    uint64_t varint = 0;    // kVarint (and the raw bits of kFixed64/kFixed32)
    std::string_view bytes;  // kLen
  };
  bool Next(Field* field);
  bool ok() const { return ok_; }

  static bool ReadVarint(std::string_view data, size_t* pos, uint64_t* value);

 private:
  std::string_view data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// The first LEN field `number` of `message` ("" if absent or malformed).
std::string FindStringField(std::string_view message, int number);

}  // namespace vacc

#endif  // VACC_PROFILER_VACC_PROTOBUF_WIRE_H_
