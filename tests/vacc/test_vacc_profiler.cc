// SPDX-License-Identifier: Apache-2.0
//
// vacc's profiler pieces, linked directly: the protobuf wire encoder against
// byte strings from the format's specification, the XSpace it writes
// decoded by an independent decoder (proto_test_decoder.h), and the session
// recorder fed from several threads.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "profiler/vacc_profiler_session.h"
#include "profiler/vacc_protobuf_wire.h"
#include "profiler/vacc_xspace.h"
#include "proto_test_decoder.h"

namespace vacc {
namespace {

std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    if (!out.empty()) out += ' ';
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string VarintBytes(uint64_t v) {
  std::string out;
  ProtoWriter::AppendVarint(&out, v);
  return out;
}

TEST(ProtobufWire, VarintsAsTheSpecificationEncodesThem) {
  EXPECT_EQ(Hex(VarintBytes(0)), "00");
  EXPECT_EQ(Hex(VarintBytes(1)), "01");
  EXPECT_EQ(Hex(VarintBytes(127)), "7f");
  EXPECT_EQ(Hex(VarintBytes(128)), "80 01");
  EXPECT_EQ(Hex(VarintBytes(150)), "96 01");  // the specification's example
  EXPECT_EQ(Hex(VarintBytes(300)), "ac 02");
  EXPECT_EQ(Hex(VarintBytes(UINT64_MAX)), "ff ff ff ff ff ff ff ff ff 01");
}

TEST(ProtobufWire, FieldsKeysAndNegativeInt64) {
  ProtoWriter w;
  w.Varint(1, 150);  // key 0x08
  EXPECT_EQ(Hex(w.data()), "08 96 01");
  ProtoWriter s;
  s.String(2, "testing");  // key 0x12, length 7
  EXPECT_EQ(Hex(s.data()), "12 07 74 65 73 74 69 6e 67");
  ProtoWriter n;
  n.Int64(1, -1);  // two's complement: ten bytes
  EXPECT_EQ(Hex(n.data()), "08 ff ff ff ff ff ff ff ff ff 01");
  ProtoWriter big;
  big.Int64(16, 0);  // field 16 needs a two-byte key: (16 << 3) = 128
  EXPECT_EQ(Hex(big.data()), "80 01 00");
}

TEST(ProtobufWire, EmbeddedMessagesCarryTheirLength) {
  ProtoWriter inner;
  inner.Varint(1, 150);
  ProtoWriter outer;
  outer.Message(3, inner);  // the specification's "embedded message" example
  EXPECT_EQ(Hex(outer.data()), "1a 03 08 96 01");
  ProtoWriter empty_outer;
  empty_outer.Message(3, ProtoWriter());
  EXPECT_EQ(Hex(empty_outer.data()), "1a 00");
}

TEST(ProtobufWire, ReaderRoundTripsAndRejectsMalformedInput) {
  ProtoWriter w;
  w.Int64(1, -5);
  w.String(2, "MatMul");
  w.Varint(20000, 7);
  ProtoReader r(w.data());
  ProtoReader::Field f;
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.number, 1);
  EXPECT_EQ(static_cast<int64_t>(f.varint), -5);
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.number, 2);
  EXPECT_EQ(f.bytes, "MatMul");
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.number, 20000);
  EXPECT_EQ(f.varint, 7u);
  EXPECT_FALSE(r.Next(&f));
  EXPECT_TRUE(r.ok());

  EXPECT_EQ(FindStringField(w.data(), 2), "MatMul");
  EXPECT_EQ(FindStringField(w.data(), 3), "");

  // The reader keeps a view: the bytes must outlive it.
  const std::string short_len("\x12\x05" "ab", 4);  // length 5, 2 bytes follow
  ProtoReader truncated(short_len);
  EXPECT_FALSE(truncated.Next(&f));
  EXPECT_FALSE(truncated.ok());
  const std::string open_varint("\x08\xff\xff", 3);  // varint never ends
  ProtoReader endless(open_varint);
  EXPECT_FALSE(endless.Next(&f));
  EXPECT_FALSE(endless.ok());
  EXPECT_EQ(FindStringField(std::string("\x12\x05" "ab", 4), 2), "");
}

TEST(XSpace, SerializedWithTensorFlowsFieldNumbers) {
  xspace::Plane plane;
  plane.id = 3;
  plane.name = "/device:CUSTOM:VACC:3";
  plane.stat_metadata.push_back({1, "tf_op"});
  xspace::EventMetadata m;
  m.id = 7;
  m.name = "dense/MatMul";
  m.display_name = "MatMul";
  xspace::Stat stat;
  stat.metadata_id = 1;
  stat.is_string = true;
  stat.str_value = "dense/MatMul:MatMul";
  m.stats.push_back(stat);
  plane.event_metadata.push_back(m);
  xspace::Line line;
  line.id = 0;
  line.name = "VACC stream 0";
  line.timestamp_ns = 1700000000123456789;
  line.duration_ps = 9000;
  line.events.push_back({7, 1000, 2000, {}});
  line.events.push_back({7, 5000, 4000, {}});
  plane.lines.push_back(line);

  const std::vector<proto_test::XPlane> planes =
      proto_test::DecodeXSpace(xspace::Serialize({plane, xspace::Plane{}}));
  ASSERT_EQ(planes.size(), 2u);
  const proto_test::XPlane& p = planes[0];
  EXPECT_EQ(p.id, 3);
  EXPECT_EQ(p.name, "/device:CUSTOM:VACC:3");
  ASSERT_EQ(p.stat_metadata.size(), 1u);
  EXPECT_EQ(p.stat_metadata.at(1), "tf_op");
  ASSERT_EQ(p.event_metadata.count(7), 1u);
  EXPECT_EQ(p.event_metadata.at(7).name, "dense/MatMul");
  EXPECT_EQ(p.event_metadata.at(7).display_name, "MatMul");
  EXPECT_EQ(p.event_metadata.at(7).tf_op, "dense/MatMul:MatMul");
  ASSERT_EQ(p.lines.size(), 1u);
  EXPECT_EQ(p.lines[0].name, "VACC stream 0");
  EXPECT_EQ(p.lines[0].timestamp_ns, 1700000000123456789);
  EXPECT_EQ(p.lines[0].duration_ps, 9000);
  ASSERT_EQ(p.lines[0].events.size(), 2u);
  EXPECT_EQ(p.lines[0].events[1].metadata_id, 7);
  EXPECT_EQ(p.lines[0].events[1].offset_ps, 5000);
  EXPECT_EQ(p.lines[0].events[1].duration_ps, 4000);
  EXPECT_TRUE(planes[1].lines.empty());
}

// The session recorder is process-wide; these tests run it start to stop.
TEST(ProfilerSession, RecordsOnlyWhileActiveAndFromManyThreads) {
  std::string error;
  EXPECT_FALSE(profiler::ProfilingActive());
  EXPECT_FALSE(profiler::StopSession(&error));  // none active
  EXPECT_FALSE(error.empty());

  ASSERT_TRUE(profiler::StartSession(&error)) << error;
  EXPECT_TRUE(profiler::ProfilingActive());
  EXPECT_FALSE(profiler::StartSession(&error));  // one at a time
  const profiler::OpTag matmul = profiler::InternOp("dense/MatMul", "MatMul");
  const profiler::OpTag relu = profiler::InternOp("dense/Relu", "Relu");
  EXPECT_EQ(profiler::InternOp("dense/MatMul", "MatMul").op_id, matmul.op_id);
  EXPECT_NE(matmul.op_id, relu.op_id);

  int stream_a = 0, stream_b = 0;  // stand-ins: only their addresses matter
  constexpr int kThreads = 4, kPerThread = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const auto start = profiler::Clock::now();
        profiler::Record(i % 2 ? relu : matmul, t % 2, t < 2 ? &stream_a : &stream_b, start,
                         start + std::chrono::microseconds(3));
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE(profiler::StopSession(&error)) << error;
  EXPECT_FALSE(profiler::ProfilingActive());
  EXPECT_EQ(profiler::RecordedEventCount(), static_cast<size_t>(kThreads * kPerThread));

  const auto planes = proto_test::DecodeXSpace(profiler::SerializeSession("VACC", 3));
  ASSERT_EQ(planes.size(), 3u);  // one per device, the idle one too
  size_t events = 0;
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(planes[static_cast<size_t>(d)].name, "/device:CUSTOM:VACC:" + std::to_string(d));
    EXPECT_EQ(planes[static_cast<size_t>(d)].id, d);
  }
  for (int d = 0; d < 2; ++d) {
    const auto& p = planes[static_cast<size_t>(d)];
    // Devices 0 and 1 each got one thread on stream_a and one on stream_b.
    ASSERT_EQ(p.lines.size(), 2u) << p.name;
    EXPECT_EQ(p.event_metadata.at(matmul.op_id).display_name, "MatMul");
    EXPECT_EQ(p.event_metadata.at(relu.op_id).tf_op, "dense/Relu:Relu");
    for (const auto& line : p.lines) {
      EXPECT_GT(line.timestamp_ns, 1600000000LL * 1000000000LL);  // wall clock, after 2020
      int64_t last = -1;
      for (const auto& e : line.events) {
        EXPECT_GE(e.offset_ps, last);  // sorted by start
        last = e.offset_ps;
        EXPECT_EQ(e.duration_ps, 3000000);  // 3 us in ps
        EXPECT_EQ(p.event_metadata.count(e.metadata_id), 1u);
        EXPECT_LE(e.offset_ps + e.duration_ps, line.duration_ps);
        ++events;
      }
    }
  }
  EXPECT_TRUE(planes[2].lines.empty());
  EXPECT_TRUE(planes[2].event_metadata.empty());
  EXPECT_EQ(events, static_cast<size_t>(kThreads * kPerThread));

  // Work launched in that session and finishing in the next is not counted.
  ASSERT_TRUE(profiler::StartSession(&error)) << error;
  const auto now = profiler::Clock::now();
  profiler::Record(matmul, 0, &stream_a, now, now);
  EXPECT_EQ(profiler::RecordedEventCount(), 0u);
  ASSERT_TRUE(profiler::StopSession(&error)) << error;
  const auto empty = proto_test::DecodeXSpace(profiler::SerializeSession("VACC", 1));
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_TRUE(empty[0].lines.empty());
}

}  // namespace
}  // namespace vacc
