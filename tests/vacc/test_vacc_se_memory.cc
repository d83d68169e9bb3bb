// SPDX-License-Identifier: Apache-2.0
//
// vacc's SP_StreamExecutor memory callbacks, driven as TensorFlow drives
// them: allocation and exact statistics, host and unified memory, copies
// (synchronous and on a stream), fills, and the range checks that turn a bad
// device pointer into TF_INVALID_ARGUMENT instead of a corrupted heap.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "vacc_se_fixture.h"

namespace vacc_test {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
// A small device: fast to fill, and no 4 GiB reservation per test.
const EnvVars kSmallDevice = {{"VACC_MEMORY_MB", "64"}, {"VACC_THREADS", "2"}};

// The sizes every copy is tried at: 1 byte, odd, just under a page, just over
// 64 KiB, and 5 MiB (which vacc splits across its compute units).
const uint64_t kCopySizes[] = {1, 3, 4093, 65537, 5 * kMiB};

// True if `message` names `callback` as a word of its own (so "memcpy_htod"
// is not satisfied by "sync_memcpy_htod").
bool NamesCallback(const std::string& message, const std::string& callback) {
  for (size_t at = message.find(callback); at != std::string::npos;
       at = message.find(callback, at + 1)) {
    const bool left_ok = at == 0 || !(std::isalnum(static_cast<unsigned char>(message[at - 1])) ||
                                      message[at - 1] == '_');
    const size_t end = at + callback.size();
    const bool right_ok = end == message.size() ||
                          !(std::isalnum(static_cast<unsigned char>(message[end])) ||
                            message[end] == '_');
    if (left_ok && right_ok) return true;
  }
  return false;
}

class VaccSeMemoryTest : public VaccSeTest {
 protected:
  SP_AllocatorStats Stats(int ordinal = 0) {
    SP_AllocatorStats s{};
    s.struct_size = SP_ALLOCATORSTATS_STRUCT_SIZE;
    EXPECT_TRUE(se().get_allocator_stats(dev(ordinal), &s));
    return s;
  }
  // {free, total} from device_memory_usage.
  std::pair<int64_t, int64_t> Usage(int ordinal = 0) {
    int64_t free = -1, total = -1;
    EXPECT_TRUE(se().device_memory_usage(dev(ordinal), &free, &total));
    return {free, total};
  }
  void ExpectStatsEqual(const SP_AllocatorStats& a, const SP_AllocatorStats& b) {
    EXPECT_EQ(a.num_allocs, b.num_allocs);
    EXPECT_EQ(a.bytes_in_use, b.bytes_in_use);
    EXPECT_EQ(a.peak_bytes_in_use, b.peak_bytes_in_use);
    EXPECT_EQ(a.largest_alloc_size, b.largest_alloc_size);
    EXPECT_EQ(a.bytes_reserved, b.bytes_reserved);
    EXPECT_EQ(a.largest_free_block_bytes, b.largest_free_block_bytes);
  }
  // Synchronous copies that must succeed.
  void Put(SP_DeviceMemoryBase* dst, const std::vector<uint8_t>& src, int ordinal = 0) {
    StatusPtr s = NewStatus();
    se().sync_memcpy_htod(dev(ordinal), dst, src.data(), src.size(), s.get());
    ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  }
  std::vector<uint8_t> Get(const SP_DeviceMemoryBase* src, uint64_t size, int ordinal = 0) {
    std::vector<uint8_t> out(size);
    StatusPtr s = NewStatus();
    se().sync_memcpy_dtoh(dev(ordinal), out.data(), src, size, s.get());
    EXPECT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
    return out;
  }
  void Sync(SP_Stream stream, int ordinal = 0) {
    StatusPtr s = NewStatus();
    se().block_host_until_done(dev(ordinal), stream, s.get());
    EXPECT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  }
  // An error naming `callback`, code TF_INVALID_ARGUMENT.
  void ExpectRejected(TF_Status* s, const char* callback) {
    EXPECT_EQ(TF_GetCode(s), TF_INVALID_ARGUMENT) << callback << ": " << Describe(s);
    EXPECT_TRUE(NamesCallback(TF_Message(s), callback))
        << "the message does not name " << callback << ": " << TF_Message(s);
  }
};

// Size 0 gives opaque NULL and size 0, and counts no allocation.
TEST_F(VaccSeMemoryTest, AllocateZeroGivesNull) {
  ASSERT_TRUE(Load(kSmallDevice));
  SP_DeviceMemoryBase m{};
  m.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE;
  m.opaque = &m;  // must be overwritten
  m.size = 123;
  se().allocate(dev(), 0, 0, &m);
  EXPECT_EQ(m.opaque, nullptr);
  EXPECT_EQ(m.size, 0u);
  EXPECT_EQ(Stats().num_allocs, 0);
}

// An allocation larger than the capacity (65 MiB of 64) fails with NULL.
TEST_F(VaccSeMemoryTest, AllocateBeyondCapacityGivesNull) {
  ASSERT_TRUE(Load(kSmallDevice));
  DeviceMemory m(p(), 65 * kMiB);
  EXPECT_EQ(m.data(), nullptr);
  EXPECT_EQ(m.size(), 0u);
  const SP_AllocatorStats s = Stats();
  EXPECT_EQ(s.num_allocs, 0);
  EXPECT_EQ(s.bytes_in_use, 0);
}

// Every allocation is 64-byte aligned, has the size asked for, and none
// overlaps another.
TEST_F(VaccSeMemoryTest, AllocationsAreAlignedAndDisjoint) {
  ASSERT_TRUE(Load(kSmallDevice));
  const uint64_t sizes[] = {1, 3, 63, 64, 65, 100, 4093, 65537, 1, 127};
  std::vector<std::unique_ptr<DeviceMemory>> blocks;
  for (uint64_t size : sizes) {
    blocks.push_back(std::make_unique<DeviceMemory>(p(), size));
    ASSERT_NE(blocks.back()->data(), nullptr) << size;
    EXPECT_EQ(blocks.back()->size(), size);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(blocks.back()->data()) % 64, 0u) << size;
  }
  std::vector<std::pair<uintptr_t, uint64_t>> ranges;
  for (auto& b : blocks) ranges.emplace_back(reinterpret_cast<uintptr_t>(b->data()), b->size());
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    EXPECT_GE(ranges[i].first, ranges[i - 1].first + ranges[i - 1].second);
  }
}

// get_allocator_stats is exact: counts, the sum of requested sizes, peak,
// largest size and the byte limit, across allocations and frees.
TEST_F(VaccSeMemoryTest, AllocatorStatsAreExact) {
  ASSERT_TRUE(Load(kSmallDevice));
  SP_AllocatorStats s = Stats();
  EXPECT_EQ(s.struct_size, SP_ALLOCATORSTATS_STRUCT_SIZE);
  EXPECT_EQ(s.num_allocs, 0);
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.peak_bytes_in_use, 0);
  EXPECT_EQ(s.largest_alloc_size, 0);
  EXPECT_EQ(s.has_bytes_limit, 1);
  EXPECT_EQ(s.bytes_limit, static_cast<int64_t>(64 * kMiB));
  EXPECT_EQ(Usage().second, s.bytes_limit);

  auto a = std::make_unique<DeviceMemory>(p(), 100);
  s = Stats();
  EXPECT_EQ(s.num_allocs, 1);
  EXPECT_EQ(s.bytes_in_use, 100);
  EXPECT_EQ(s.peak_bytes_in_use, 100);
  EXPECT_EQ(s.largest_alloc_size, 100);

  auto b = std::make_unique<DeviceMemory>(p(), 1000);
  s = Stats();
  EXPECT_EQ(s.num_allocs, 2);
  EXPECT_EQ(s.bytes_in_use, 1100);
  EXPECT_EQ(s.peak_bytes_in_use, 1100);
  EXPECT_EQ(s.largest_alloc_size, 1000);

  b.reset();
  s = Stats();
  EXPECT_EQ(s.num_allocs, 2);  // allocations made, not live ones
  EXPECT_EQ(s.bytes_in_use, 100);
  EXPECT_EQ(s.peak_bytes_in_use, 1100);
  EXPECT_EQ(s.largest_alloc_size, 1000);

  auto c = std::make_unique<DeviceMemory>(p(), 7);
  auto d = std::make_unique<DeviceMemory>(p(), 500);
  s = Stats();
  EXPECT_EQ(s.num_allocs, 4);
  EXPECT_EQ(s.bytes_in_use, 607);
  EXPECT_EQ(s.peak_bytes_in_use, 1100);
  EXPECT_EQ(s.largest_alloc_size, 1000);

  auto e = std::make_unique<DeviceMemory>(p(), 2000);
  s = Stats();
  EXPECT_EQ(s.num_allocs, 5);
  EXPECT_EQ(s.bytes_in_use, 2607);
  EXPECT_EQ(s.peak_bytes_in_use, 2607);
  EXPECT_EQ(s.largest_alloc_size, 2000);

  a.reset();
  c.reset();
  d.reset();
  e.reset();
  s = Stats();
  EXPECT_EQ(s.num_allocs, 5);
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.peak_bytes_in_use, 2607);
  EXPECT_EQ(s.has_bytes_limit, 1);
  EXPECT_EQ(s.bytes_limit, static_cast<int64_t>(64 * kMiB));
}

// device_memory_usage: total is the capacity; free drops by each size
// rounded up to 64 bytes and comes back on free.
TEST_F(VaccSeMemoryTest, DeviceMemoryUsageCountsRoundedBlocks) {
  ASSERT_TRUE(Load(kSmallDevice));
  const int64_t capacity = static_cast<int64_t>(64 * kMiB);
  EXPECT_EQ(Usage(), std::make_pair(capacity, capacity));
  auto a = std::make_unique<DeviceMemory>(p(), 100);  // 128
  EXPECT_EQ(Usage(), std::make_pair(capacity - 128, capacity));
  auto b = std::make_unique<DeviceMemory>(p(), 64);  // 64
  EXPECT_EQ(Usage(), std::make_pair(capacity - 192, capacity));
  auto c = std::make_unique<DeviceMemory>(p(), 1);  // 64
  EXPECT_EQ(Usage(), std::make_pair(capacity - 256, capacity));
  auto d = std::make_unique<DeviceMemory>(p(), 65537);  // 65600
  EXPECT_EQ(Usage(), std::make_pair(capacity - 256 - 65600, capacity));
  a.reset();
  EXPECT_EQ(Usage(), std::make_pair(capacity - 128 - 65600, capacity));
  b.reset();
  c.reset();
  d.reset();
  EXPECT_EQ(Usage(), std::make_pair(capacity, capacity));
}

// Filling the device to capacity, freeing everything (in an order that
// leaves holes until the end) and allocating the whole capacity again
// works: freed blocks coalesce.
TEST_F(VaccSeMemoryTest, FreedBlocksCoalesce) {
  ASSERT_TRUE(Load(kSmallDevice));
  for (int round = 0; round < 2; ++round) {
    std::vector<std::unique_ptr<DeviceMemory>> blocks;
    for (uint64_t i = 0;; ++i) {
      // Round 0: 1 MiB blocks, exactly 64 of them. Round 1: mixed sizes.
      const uint64_t size = round == 0 ? kMiB : 1 + (i * 7919) % 300000;
      auto m = std::make_unique<DeviceMemory>(p(), size);
      if (m->data() == nullptr) break;
      blocks.push_back(std::move(m));
      ASSERT_LT(blocks.size(), 100000u);
    }
    if (round == 0) {
      EXPECT_EQ(blocks.size(), 64u);
      EXPECT_EQ(Usage().first, 0);
    }
    // Free every third block, then the rest from the back.
    for (size_t i = 0; i < blocks.size(); i += 3) blocks[i].reset();
    while (!blocks.empty()) blocks.pop_back();
    EXPECT_EQ(Stats().bytes_in_use, 0);
    EXPECT_EQ(Usage().first, static_cast<int64_t>(64 * kMiB));
    DeviceMemory all(p(), 64 * kMiB);
    EXPECT_NE(all.data(), nullptr) << "round " << round;
    EXPECT_EQ(all.size(), 64 * kMiB);
  }
}

// deallocate of memory that is not a live allocation of the device (a host
// pointer, a pointer inside an allocation, an allocation already freed) is
// ignored: statistics unchanged, live memory intact.
TEST_F(VaccSeMemoryTest, DeallocateOfForeignPointerIsIgnored) {
  ASSERT_TRUE(Load(kSmallDevice));
  DeviceMemory live(p(), 1000);
  ASSERT_NE(live.data(), nullptr);
  const std::vector<uint8_t> content = Pattern(1000, 7);
  Put(live.get(), content);
  DeviceMemory freed(p(), 256);
  ASSERT_NE(freed.data(), nullptr);
  void* const freed_ptr = freed.data();
  freed.Free();
  const SP_AllocatorStats before = Stats();
  const auto usage_before = Usage();

  std::vector<uint8_t> host(256);
  SP_DeviceMemoryBase bad[] = {MemoryAt(host.data(), host.size()),
                               MemoryAt(live.data() + 64, 64), MemoryAt(freed_ptr, 256)};
  for (SP_DeviceMemoryBase& m : bad) se().deallocate(dev(), &m);

  ExpectStatsEqual(Stats(), before);
  EXPECT_EQ(Usage(), usage_before);
  EXPECT_EQ(Get(live.get(), 1000), content);
  // The block is still allocated: nothing else is handed out over it.
  DeviceMemory other(p(), 1000);
  ASSERT_NE(other.data(), nullptr);
  EXPECT_TRUE(other.data() + 1000 <= live.data() || live.data() + 1000 <= other.data());
}

// host_memory_allocate gives writable, 64-byte aligned host memory a copy can
// use, not counted as device memory; host_memory_deallocate frees it.
TEST_F(VaccSeMemoryTest, HostMemoryAllocateAndDeallocate) {
  ASSERT_TRUE(Load(kSmallDevice));
  const SP_AllocatorStats before = Stats();
  const uint64_t n = 10000;
  auto* host = static_cast<uint8_t*>(se().host_memory_allocate(dev(), n));
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(host) % 64, 0u);
  const std::vector<uint8_t> content = Pattern(n, 3);
  std::memcpy(host, content.data(), n);
  DeviceMemory m(p(), n);
  ASSERT_NE(m.data(), nullptr);
  StatusPtr s = NewStatus();
  se().sync_memcpy_htod(dev(), m.get(), host, n, s.get());
  ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  std::memset(host, 0, n);
  se().sync_memcpy_dtoh(dev(), host, m.get(), n, s.get());
  ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  EXPECT_EQ(std::vector<uint8_t>(host, host + n), content);
  EXPECT_EQ(Stats().bytes_in_use, before.bytes_in_use + static_cast<int64_t>(n));  // only m
  se().host_memory_deallocate(dev(), host);
  m.Free();
  ExpectStatsEqual(Stats(), [&] {
    SP_AllocatorStats after = before;
    after.num_allocs += 1;
    after.peak_bytes_in_use = std::max<int64_t>(before.peak_bytes_in_use, n);
    after.largest_alloc_size = std::max<int64_t>(before.largest_alloc_size, n);
    return after;
  }());
}

// Unified memory is device memory the host addresses directly: counted in
// the statistics, usable by copies, released by unified_memory_deallocate.
TEST_F(VaccSeMemoryTest, UnifiedMemoryIsCountedInStats) {
  ASSERT_TRUE(Load(kSmallDevice));
  const uint64_t n = 3000;
  auto* u = static_cast<uint8_t*>(se().unified_memory_allocate(dev(), n));
  ASSERT_NE(u, nullptr);
  SP_AllocatorStats s = Stats();
  EXPECT_EQ(s.num_allocs, 1);
  EXPECT_EQ(s.bytes_in_use, static_cast<int64_t>(n));
  EXPECT_EQ(s.largest_alloc_size, static_cast<int64_t>(n));
  EXPECT_EQ(Usage().first, static_cast<int64_t>(64 * kMiB - 3008));
  // The host writes it; a device copy reads what the host wrote.
  const std::vector<uint8_t> content = Pattern(n, 11);
  std::memcpy(u, content.data(), n);
  SP_DeviceMemoryBase um = MemoryAt(u, n);
  EXPECT_EQ(Get(&um, n), content);
  se().unified_memory_deallocate(dev(), u);
  s = Stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.peak_bytes_in_use, static_cast<int64_t>(n));
  EXPECT_EQ(Usage().first, static_cast<int64_t>(64 * kMiB));
}

// sync_memcpy_htod, _dtod and _dtoh move every byte at every size, and write
// nothing past the end of the host buffer.
TEST_F(VaccSeMemoryTest, SyncCopiesRoundTrip) {
  ASSERT_TRUE(Load(kSmallDevice));
  uint32_t seed = 100;
  for (uint64_t n : kCopySizes) {
    SCOPED_TRACE("size " + std::to_string(n));
    DeviceMemory a(p(), n), b(p(), n);
    ASSERT_NE(a.data(), nullptr);
    ASSERT_NE(b.data(), nullptr);
    const std::vector<uint8_t> src = Pattern(n, ++seed);
    ASSERT_NO_FATAL_FAILURE(Put(b.get(), Pattern(n, ++seed)));  // b differs from src
    ASSERT_NO_FATAL_FAILURE(Put(a.get(), src));
    StatusPtr s = NewStatus();
    se().sync_memcpy_dtod(dev(), b.get(), a.get(), n, s.get());
    ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
    std::vector<uint8_t> dst = Pattern(n + 64, ++seed);
    const std::vector<uint8_t> guard(dst.begin() + n, dst.end());
    se().sync_memcpy_dtoh(dev(), dst.data(), b.get(), n, s.get());
    ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
    EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin())) << "dtod or dtoh lost bytes";
    EXPECT_TRUE(std::equal(guard.begin(), guard.end(), dst.begin() + n)) << "wrote past the end";
    EXPECT_EQ(Get(a.get(), n), src);
  }
}

// memcpy_htod, _dtod and _dtoh on a stream move every byte at every size
// (5 MiB split across compute units), once the stream has run them.
TEST_F(VaccSeMemoryTest, AsyncCopiesRoundTrip) {
  ASSERT_TRUE(Load(kSmallDevice));
  uint32_t seed = 200;
  for (uint64_t n : kCopySizes) {
    SCOPED_TRACE("size " + std::to_string(n));
    DeviceMemory a(p(), n), b(p(), n);
    ASSERT_NE(a.data(), nullptr);
    ASSERT_NE(b.data(), nullptr);
    const std::vector<uint8_t> src = Pattern(n, ++seed);
    ASSERT_NO_FATAL_FAILURE(Put(b.get(), Pattern(n, ++seed)));
    std::vector<uint8_t> from_a = Pattern(n, ++seed), from_b = Pattern(n + 64, ++seed);
    const std::vector<uint8_t> guard(from_b.begin() + n, from_b.end());
    Stream stream(p());  // after the buffers: drained before they go
    StatusPtr s = NewStatus();
    se().memcpy_htod(dev(), stream, a.get(), src.data(), n, s.get());
    ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
    se().memcpy_dtoh(dev(), stream, from_a.data(), a.get(), n, s.get());
    ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
    se().memcpy_dtod(dev(), stream, b.get(), a.get(), n, s.get());
    ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
    se().memcpy_dtoh(dev(), stream, from_b.data(), b.get(), n, s.get());
    ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
    Sync(stream);
    EXPECT_EQ(from_a, src);
    EXPECT_TRUE(std::equal(src.begin(), src.end(), from_b.begin())) << "dtod lost bytes";
    EXPECT_TRUE(std::equal(guard.begin(), guard.end(), from_b.begin() + n)) << "wrote past the end";
  }
}

// A copy to or from an offset inside an allocation (TF's sub-buffers) writes
// exactly its range; every other byte of both allocations is unchanged.
TEST_F(VaccSeMemoryTest, CopiesAtAnOffsetTouchOnlyTheirRange) {
  ASSERT_TRUE(Load(kSmallDevice));
  for (bool async : {false, true}) {
    SCOPED_TRACE(async ? "on a stream" : "synchronous");
    const uint64_t n = 8192, len = 1000, at_a = 1234, at_b = 3001;
    DeviceMemory a(p(), n), b(p(), n);
    ASSERT_NE(a.data(), nullptr);
    ASSERT_NE(b.data(), nullptr);
    std::vector<uint8_t> model_a = Pattern(n, 1), model_b = Pattern(n, 2);
    ASSERT_NO_FATAL_FAILURE(Put(a.get(), model_a));
    ASSERT_NO_FATAL_FAILURE(Put(b.get(), model_b));
    const std::vector<uint8_t> src = Pattern(len, 3);
    std::vector<uint8_t> host = Pattern(len + 20, 4);
    std::vector<uint8_t> model_host = host;
    Stream stream(p());  // after the buffers: drained before they go

    SP_DeviceMemoryBase slice_a = a.Slice(at_a, len), slice_b = b.Slice(at_b, len);
    SP_DeviceMemoryBase slice_a2 = a.Slice(at_a + 10, 500);
    StatusPtr s = NewStatus();
    auto ok = [&] { ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get()); };
    if (async) {
      se().memcpy_htod(dev(), stream, &slice_a, src.data(), len, s.get());
      ok();
      se().memcpy_dtod(dev(), stream, &slice_b, &slice_a, len, s.get());
      ok();
      se().memcpy_dtoh(dev(), stream, host.data() + 7, &slice_a2, 500, s.get());
      ok();
      Sync(stream);
    } else {
      se().sync_memcpy_htod(dev(), &slice_a, src.data(), len, s.get());
      ok();
      se().sync_memcpy_dtod(dev(), &slice_b, &slice_a, len, s.get());
      ok();
      se().sync_memcpy_dtoh(dev(), host.data() + 7, &slice_a2, 500, s.get());
      ok();
    }
    std::copy(src.begin(), src.end(), model_a.begin() + at_a);
    std::copy(src.begin(), src.end(), model_b.begin() + at_b);
    std::copy(src.begin() + 10, src.begin() + 510, model_host.begin() + 7);
    EXPECT_EQ(Get(a.get(), n), model_a);
    EXPECT_EQ(Get(b.get(), n), model_b);
    EXPECT_EQ(host, model_host);
  }
}

// A copy whose device range runs past the end of its allocation (also from
// an offset, and into the allocation's rounding padding) is rejected with
// TF_INVALID_ARGUMENT naming the callback; nothing is enqueued or written.
TEST_F(VaccSeMemoryTest, CopyPastTheEndIsRejected) {
  ASSERT_TRUE(Load(kSmallDevice));
  const uint64_t n = 1000;  // a 1024-byte block: 1001..1024 is padding
  DeviceMemory a(p(), n), b(p(), n);
  ASSERT_NE(a.data(), nullptr);
  ASSERT_NE(b.data(), nullptr);
  const std::vector<uint8_t> model_a = Pattern(n, 5), model_b = Pattern(n, 6);
  ASSERT_NO_FATAL_FAILURE(Put(a.get(), model_a));
  ASSERT_NO_FATAL_FAILURE(Put(b.get(), model_b));
  const std::vector<uint8_t> src = Pattern(2 * n, 7);
  std::vector<uint8_t> host = Pattern(2 * n, 8);
  const std::vector<uint8_t> model_host = host;
  Stream stream(p());  // after the buffers: drained before they go
  SP_DeviceMemoryBase tail = a.Slice(500, 500);

  struct Case {
    SP_DeviceMemoryBase* mem;
    uint64_t size;
  };
  for (Case c : {Case{a.get(), n + 1}, Case{a.get(), 1024}, Case{a.get(), 2 * n},
                 Case{&tail, 501}}) {
    SCOPED_TRACE("size " + std::to_string(c.size));
    StatusPtr s = NewStatus();
    se().memcpy_htod(dev(), stream, c.mem, src.data(), c.size, s.get());
    ExpectRejected(s.get(), "memcpy_htod");
    se().memcpy_dtoh(dev(), stream, host.data(), c.mem, c.size, s.get());
    ExpectRejected(s.get(), "memcpy_dtoh");
    se().memcpy_dtod(dev(), stream, b.get(), c.mem, c.size, s.get());
    ExpectRejected(s.get(), "memcpy_dtod");
    se().memcpy_dtod(dev(), stream, c.mem, b.get(), c.size, s.get());
    ExpectRejected(s.get(), "memcpy_dtod");
    se().sync_memcpy_htod(dev(), c.mem, src.data(), c.size, s.get());
    ExpectRejected(s.get(), "sync_memcpy_htod");
    se().sync_memcpy_dtoh(dev(), host.data(), c.mem, c.size, s.get());
    ExpectRejected(s.get(), "sync_memcpy_dtoh");
    se().sync_memcpy_dtod(dev(), b.get(), c.mem, c.size, s.get());
    ExpectRejected(s.get(), "sync_memcpy_dtod");
    se().sync_memcpy_dtod(dev(), c.mem, b.get(), c.size, s.get());
    ExpectRejected(s.get(), "sync_memcpy_dtod");
  }
  StatusPtr s = NewStatus();
  se().block_host_until_done(dev(), stream, s.get());
  EXPECT_EQ(TF_GetCode(s.get()), TF_OK) << "the stream ran a rejected copy: " << Describe(s.get());
  se().get_stream_status(dev(), stream, s.get());
  EXPECT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  EXPECT_EQ(Get(a.get(), n), model_a);
  EXPECT_EQ(Get(b.get(), n), model_b);
  EXPECT_EQ(host, model_host);
}

// A host pointer passed as device memory is rejected by every copy and
// fill, naming the callback; the host memory is neither written nor read
// into device memory.
TEST_F(VaccSeMemoryTest, HostPointerAsDeviceMemoryIsRejected) {
  ASSERT_TRUE(Load(kSmallDevice));
  const uint64_t n = 512;
  DeviceMemory a(p(), n);
  ASSERT_NE(a.data(), nullptr);
  const std::vector<uint8_t> model_a = Pattern(n, 9);
  ASSERT_NO_FATAL_FAILURE(Put(a.get(), model_a));
  std::vector<uint8_t> fake = Pattern(n, 10), host = Pattern(n, 11);
  const std::vector<uint8_t> model_fake = fake, model_host = host;
  SP_DeviceMemoryBase not_device = MemoryAt(fake.data(), n);

  Stream stream(p());  // after the buffers: drained before they go
  StatusPtr s = NewStatus();
  se().memcpy_htod(dev(), stream, &not_device, host.data(), n, s.get());
  ExpectRejected(s.get(), "memcpy_htod");
  se().memcpy_dtoh(dev(), stream, host.data(), &not_device, n, s.get());
  ExpectRejected(s.get(), "memcpy_dtoh");
  se().memcpy_dtod(dev(), stream, &not_device, a.get(), n, s.get());
  ExpectRejected(s.get(), "memcpy_dtod");
  se().memcpy_dtod(dev(), stream, a.get(), &not_device, n, s.get());
  ExpectRejected(s.get(), "memcpy_dtod");
  se().sync_memcpy_htod(dev(), &not_device, host.data(), n, s.get());
  ExpectRejected(s.get(), "sync_memcpy_htod");
  se().sync_memcpy_dtoh(dev(), host.data(), &not_device, n, s.get());
  ExpectRejected(s.get(), "sync_memcpy_dtoh");
  se().sync_memcpy_dtod(dev(), &not_device, a.get(), n, s.get());
  ExpectRejected(s.get(), "sync_memcpy_dtod");
  se().sync_memcpy_dtod(dev(), a.get(), &not_device, n, s.get());
  ExpectRejected(s.get(), "sync_memcpy_dtod");
  se().mem_zero(dev(), stream, &not_device, n, s.get());
  ExpectRejected(s.get(), "mem_zero");
  se().memset(dev(), stream, &not_device, 0x77, n, s.get());
  ExpectRejected(s.get(), "memset");
  se().memset32(dev(), stream, &not_device, 0x01020304u, n, s.get());
  ExpectRejected(s.get(), "memset32");

  se().block_host_until_done(dev(), stream, s.get());
  EXPECT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  EXPECT_EQ(fake, model_fake);
  EXPECT_EQ(host, model_host);
  EXPECT_EQ(Get(a.get(), n), model_a);
}

// With two devices, memory of device 1 passed to device 0's callbacks is
// rejected (it is not device 0's memory) and stays unchanged.
TEST_F(VaccSeMemoryTest, OtherDevicesMemoryIsRejected) {
  EnvVars env = kSmallDevice;
  env.emplace_back("VACC_DEVICE_COUNT", "2");
  ASSERT_TRUE(Load(env));
  ASSERT_EQ(p().device_count(), 2);
  const uint64_t n = 256;
  DeviceMemory on0(p(), n, 0), on1(p(), n, 1);
  ASSERT_NE(on0.data(), nullptr);
  ASSERT_NE(on1.data(), nullptr);
  const std::vector<uint8_t> model0 = Pattern(n, 12), model1 = Pattern(n, 13);
  ASSERT_NO_FATAL_FAILURE(Put(on0.get(), model0, 0));
  ASSERT_NO_FATAL_FAILURE(Put(on1.get(), model1, 1));
  std::vector<uint8_t> host = Pattern(n, 14);
  const std::vector<uint8_t> model_host = host;
  Stream stream(p(), 0);

  StatusPtr s = NewStatus();
  se().memcpy_htod(dev(0), stream, on1.get(), host.data(), n, s.get());
  ExpectRejected(s.get(), "memcpy_htod");
  se().memcpy_dtoh(dev(0), stream, host.data(), on1.get(), n, s.get());
  ExpectRejected(s.get(), "memcpy_dtoh");
  se().memcpy_dtod(dev(0), stream, on0.get(), on1.get(), n, s.get());
  ExpectRejected(s.get(), "memcpy_dtod");
  se().memcpy_dtod(dev(0), stream, on1.get(), on0.get(), n, s.get());
  ExpectRejected(s.get(), "memcpy_dtod");
  se().sync_memcpy_htod(dev(0), on1.get(), host.data(), n, s.get());
  ExpectRejected(s.get(), "sync_memcpy_htod");
  se().sync_memcpy_dtoh(dev(0), host.data(), on1.get(), n, s.get());
  ExpectRejected(s.get(), "sync_memcpy_dtoh");
  se().sync_memcpy_dtod(dev(0), on0.get(), on1.get(), n, s.get());
  ExpectRejected(s.get(), "sync_memcpy_dtod");
  se().memset(dev(0), stream, on1.get(), 0, n, s.get());
  ExpectRejected(s.get(), "memset");

  se().block_host_until_done(dev(0), stream, s.get());
  EXPECT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  EXPECT_EQ(Get(on0.get(), n, 0), model0);
  EXPECT_EQ(Get(on1.get(), n, 1), model1);
  EXPECT_EQ(host, model_host);
  // Device 1's allocator never saw device 0's traffic, nor the other way.
  EXPECT_EQ(Stats(0).num_allocs, 1);
  EXPECT_EQ(Stats(1).num_allocs, 1);
}

// mem_zero, memset and memset32 write their range and nothing else: the
// bytes around each range keep their (non-uniform) content.
TEST_F(VaccSeMemoryTest, FillsWriteOnlyTheirRange) {
  ASSERT_TRUE(Load(kSmallDevice));
  const uint64_t n = 1024;
  DeviceMemory a(p(), n);
  ASSERT_NE(a.data(), nullptr);
  std::vector<uint8_t> model = Pattern(n, 15);
  ASSERT_NO_FATAL_FAILURE(Put(a.get(), model));

  Stream stream(p());  // after the buffers: drained before they go
  SP_DeviceMemoryBase zero = a.Slice(100, 200), set = a.Slice(401, 37), set32 = a.Slice(600, 64);
  SP_DeviceMemoryBase last = a.Slice(n - 3, 3);
  const uint32_t word = 0xDEADBEEFu;
  StatusPtr s = NewStatus();
  se().mem_zero(dev(), stream, &zero, 200, s.get());
  ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  se().memset(dev(), stream, &set, 0x5A, 37, s.get());
  ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  se().memset32(dev(), stream, &set32, word, 64, s.get());
  ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  se().memset(dev(), stream, &last, 0xC3, 3, s.get());  // up to the last byte
  ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  Sync(stream);

  std::fill(model.begin() + 100, model.begin() + 300, 0);
  std::fill(model.begin() + 401, model.begin() + 438, 0x5A);
  for (uint64_t i = 600; i < 664; i += 4) std::memcpy(&model[i], &word, 4);  // native order
  std::fill(model.end() - 3, model.end(), 0xC3);
  EXPECT_EQ(Get(a.get(), n), model);
}

// memset32 with a size that is not a multiple of 4, and fills that run past
// the allocation, are rejected naming the callback; nothing is written.
TEST_F(VaccSeMemoryTest, BadFillsAreRejected) {
  ASSERT_TRUE(Load(kSmallDevice));
  const uint64_t n = 256;
  DeviceMemory a(p(), n);
  ASSERT_NE(a.data(), nullptr);
  const std::vector<uint8_t> model = Pattern(n, 16);
  ASSERT_NO_FATAL_FAILURE(Put(a.get(), model));
  Stream stream(p());  // after the buffers: drained before they go
  StatusPtr s = NewStatus();
  for (uint64_t size : {1, 2, 3, 6, 255}) {
    se().memset32(dev(), stream, a.get(), 0x11223344u, size, s.get());
    ExpectRejected(s.get(), "memset32");
  }
  SP_DeviceMemoryBase tail = a.Slice(128, 128);
  se().memset32(dev(), stream, &tail, 0x11223344u, 132, s.get());
  ExpectRejected(s.get(), "memset32");
  se().memset(dev(), stream, &tail, 0x22, 129, s.get());
  ExpectRejected(s.get(), "memset");
  se().mem_zero(dev(), stream, a.get(), n + 1, s.get());
  ExpectRejected(s.get(), "mem_zero");
  se().block_host_until_done(dev(), stream, s.get());
  EXPECT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
  EXPECT_EQ(Get(a.get(), n), model);
}

}  // namespace
}  // namespace vacc_test
