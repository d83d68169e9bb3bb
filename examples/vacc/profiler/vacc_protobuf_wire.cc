// SPDX-License-Identifier: Apache-2.0
#include "profiler/vacc_protobuf_wire.h"

namespace vacc {

void ProtoWriter::AppendVarint(std::string* out, uint64_t value) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void ProtoWriter::AppendKey(std::string* out, int field, WireType type) {
  AppendVarint(out, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(type));
}

void ProtoWriter::Varint(int field, uint64_t value) {
  AppendKey(&out_, field, WireType::kVarint);
  AppendVarint(&out_, value);
}

void ProtoWriter::Bytes(int field, std::string_view bytes) {
  AppendKey(&out_, field, WireType::kLen);
  AppendVarint(&out_, bytes.size());
  out_.append(bytes.data(), bytes.size());
}

bool ProtoReader::ReadVarint(std::string_view data, size_t* pos, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && *pos < data.size(); shift += 7) {
    const auto byte = static_cast<uint8_t>(data[(*pos)++]);
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = v;
      return true;
    }
  }
  return false;  // truncated, or longer than 10 bytes
}

bool ProtoReader::Next(Field* field) {
  if (!ok_ || pos_ >= data_.size()) return false;
  uint64_t key = 0;
  if (!ReadVarint(data_, &pos_, &key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff) {
    ok_ = false;
    return false;
  }
  field->number = static_cast<int>(key >> 3);
  field->type = static_cast<WireType>(key & 7);
  field->bytes = {};
  field->varint = 0;
  switch (field->type) {
    case WireType::kVarint:
      ok_ = ReadVarint(data_, &pos_, &field->varint);
      break;
    case WireType::kFixed64:
    case WireType::kFixed32: {
      const size_t n = field->type == WireType::kFixed64 ? 8 : 4;
      ok_ = data_.size() - pos_ >= n;
      for (size_t i = 0; ok_ && i < n; ++i) {
        field->varint |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
      }
      pos_ += ok_ ? n : 0;
      break;
    }
    case WireType::kLen: {
      uint64_t n = 0;
      ok_ = ReadVarint(data_, &pos_, &n) && n <= data_.size() - pos_;
      if (ok_) {
        field->bytes = data_.substr(pos_, static_cast<size_t>(n));
        pos_ += static_cast<size_t>(n);
      }
      break;
    }
    default:
      ok_ = false;  // groups (3, 4) and reserved types: not used by these messages
  }
  return ok_;
}

std::string FindStringField(std::string_view message, int number) {
  ProtoReader reader(message);
  ProtoReader::Field f;
  while (reader.Next(&f)) {
    if (f.number == number && f.type == WireType::kLen) return std::string(f.bytes);
  }
  return "";
}

}  // namespace vacc
