// SPDX-License-Identifier: Apache-2.0
//
// vacc's registration as TensorFlow performs it: SE_InitPlugin, the platform
// and device callbacks, configuration from the environment, version and
// struct_size negotiation with older and newer TensorFlow cores, and a
// teardown that finds handles still alive.
#include <atomic>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "vacc_se_fixture.h"

namespace vacc_test {
namespace {

const EnvVars kSmall = {{"VACC_MEMORY_MB", "64"}, {"VACC_THREADS", "2"}};

// TF 2.7's SP_Platform: it ended at use_bfc_allocator.
constexpr size_t kTf27PlatformSize = TF_OFFSET_OF_END(SP_Platform, use_bfc_allocator);
static_assert(kTf27PlatformSize == 34, "SP_Platform as TF 2.7 knew it");
// TF 2.5's SP_StreamExecutor: no mem_zero/memset/memset32 before host_callback.
constexpr size_t kTf25StreamExecutorSize = 264;

bool Contains(const char* haystack, const char* needle) {
  return haystack != nullptr && std::strstr(haystack, needle) != nullptr;
}

// A byte buffer larger than the struct, filled with 0xAB, with the struct at
// its start and struct_size pre-filled as a TensorFlow core would.
template <typename T>
class Prefilled {
 public:
  static constexpr size_t kSlack = 64;
  explicit Prefilled(size_t struct_size) {
    std::memset(bytes_, 0xAB, sizeof bytes_);
    std::memcpy(bytes_, &struct_size, sizeof struct_size);
  }
  T* get() { return reinterpret_cast<T*>(bytes_); }
  size_t struct_size() const {
    size_t s;
    std::memcpy(&s, bytes_, sizeof s);
    return s;
  }
  // True if every byte from `from` to the end of the buffer is still 0xAB.
  bool UntouchedFrom(size_t from) const {
    for (size_t i = from; i < sizeof bytes_; ++i) {
      if (bytes_[i] != 0xAB) return false;
    }
    return true;
  }

 private:
  alignas(alignof(T)) unsigned char bytes_[sizeof(T) + kSlack];
};

// SE_InitPlugin called with the given platform struct, as TensorFlow would.
class VaccSeRegistrationTest : public VaccSeTest {
 protected:
  void SetUp() override {
    std::string error;
    init_ = LoadInitPlugin(&error);
    ASSERT_NE(init_, nullptr) << error;
  }
  // Runs SE_InitPlugin with `env` in place; returns its status code.
  TF_Code Init(const EnvVars& env, SP_Platform* platform, SP_PlatformFns* fns,
               int32_t major = SE_MAJOR) {
    ScopedVaccEnv scoped(env);
    params_ = PlatformParams(platform, fns);
    params_.major_version = major;
    init_(&params_, status_.get());
    return TF_GetCode(status_.get());
  }
  // TF's cleanup of a platform registered without devices.
  void DestroyPlatform(SP_Platform* platform, SP_PlatformFns* fns) {
    ASSERT_NE(params_.destroy_platform, nullptr);
    ASSERT_NE(params_.destroy_platform_fns, nullptr);
    params_.destroy_platform(platform);
    params_.destroy_platform_fns(fns);
  }
  std::string Message() const { return TF_Message(status_.get()); }

  InitPluginFn init_ = nullptr;
  SE_PlatformRegistrationParams params_{};
  StatusPtr status_ = NewStatus();
};

// SP_Platform: name and type "VACC", unified memory supported, BFC allocator
// and memory growth on by default, struct_size our own.
TEST_F(VaccSeRegistrationTest, PlatformDefaults) {
  ASSERT_TRUE(Load(kSmall));
  const SP_Platform& pl = p().platform();
  EXPECT_EQ(pl.struct_size, SP_PLATFORM_STRUCT_SIZE);
  ASSERT_NE(pl.name, nullptr);
  ASSERT_NE(pl.type, nullptr);
  EXPECT_STREQ(pl.name, "VACC");
  EXPECT_STREQ(pl.type, "VACC");
  EXPECT_EQ(pl.supports_unified_memory, 1);
  EXPECT_EQ(pl.use_bfc_allocator, 1);
  EXPECT_EQ(pl.force_memory_growth, 1);
}

// VACC_USE_BFC=0 and VACC_MEMORY_GROWTH=0 turn the two allocator flags off.
TEST_F(VaccSeRegistrationTest, AllocatorFlagsFromEnvironment) {
  EnvVars env = kSmall;
  env.emplace_back("VACC_USE_BFC", "0");
  env.emplace_back("VACC_MEMORY_GROWTH", "0");
  ASSERT_TRUE(Load(env));
  EXPECT_EQ(p().platform().use_bfc_allocator, 0);
  EXPECT_EQ(p().platform().force_memory_growth, 0);
  EXPECT_EQ(p().platform().supports_unified_memory, 1);
}

// Every callback of SP_PlatformFns, SP_DeviceFns, SP_StreamExecutor and
// SP_TimerFns is set, and each table reports our struct_size.
TEST_F(VaccSeRegistrationTest, EveryCallbackIsSet) {
  ASSERT_TRUE(Load(kSmall));
  EXPECT_NE(p().params().destroy_platform, nullptr);
  EXPECT_NE(p().params().destroy_platform_fns, nullptr);

  const SP_PlatformFns& pf = p().platform_fns();
  EXPECT_EQ(pf.struct_size, SP_PLATFORM_FNS_STRUCT_SIZE);
  EXPECT_NE(pf.get_device_count, nullptr);
  EXPECT_NE(pf.create_device, nullptr);
  EXPECT_NE(pf.destroy_device, nullptr);
  EXPECT_NE(pf.create_device_fns, nullptr);
  EXPECT_NE(pf.destroy_device_fns, nullptr);
  EXPECT_NE(pf.create_stream_executor, nullptr);
  EXPECT_NE(pf.destroy_stream_executor, nullptr);
  EXPECT_NE(pf.create_timer_fns, nullptr);
  EXPECT_NE(pf.destroy_timer_fns, nullptr);

  const SP_DeviceFns& df = p().device_fns();
  EXPECT_EQ(df.struct_size, SP_DEVICE_FNS_STRUCT_SIZE);
  EXPECT_NE(df.get_numa_node, nullptr);
  EXPECT_NE(df.get_memory_bandwidth, nullptr);
  EXPECT_NE(df.get_gflops, nullptr);

  const SP_TimerFns& tf = p().timer_fns();
  EXPECT_EQ(tf.struct_size, SP_TIMER_FNS_STRUCT_SIZE);
  EXPECT_NE(tf.nanoseconds, nullptr);

  const SP_StreamExecutor& se = p().se();
  EXPECT_EQ(se.struct_size, SP_STREAMEXECUTOR_STRUCT_SIZE);
#define EXPECT_SET(field) EXPECT_NE(se.field, nullptr) << #field
  EXPECT_SET(allocate);
  EXPECT_SET(deallocate);
  EXPECT_SET(host_memory_allocate);
  EXPECT_SET(host_memory_deallocate);
  EXPECT_SET(unified_memory_allocate);
  EXPECT_SET(unified_memory_deallocate);
  EXPECT_SET(get_allocator_stats);
  EXPECT_SET(device_memory_usage);
  EXPECT_SET(create_stream);
  EXPECT_SET(destroy_stream);
  EXPECT_SET(create_stream_dependency);
  EXPECT_SET(get_stream_status);
  EXPECT_SET(create_event);
  EXPECT_SET(destroy_event);
  EXPECT_SET(get_event_status);
  EXPECT_SET(record_event);
  EXPECT_SET(wait_for_event);
  EXPECT_SET(create_timer);
  EXPECT_SET(destroy_timer);
  EXPECT_SET(start_timer);
  EXPECT_SET(stop_timer);
  EXPECT_SET(memcpy_dtoh);
  EXPECT_SET(memcpy_htod);
  EXPECT_SET(memcpy_dtod);
  EXPECT_SET(sync_memcpy_dtoh);
  EXPECT_SET(sync_memcpy_htod);
  EXPECT_SET(sync_memcpy_dtod);
  EXPECT_SET(block_host_for_event);
  EXPECT_SET(block_host_until_done);
  EXPECT_SET(synchronize_all_activity);
  EXPECT_SET(mem_zero);
  EXPECT_SET(memset);
  EXPECT_SET(memset32);
  EXPECT_SET(host_callback);
#undef EXPECT_SET
}

// SP_Device: every string set, the ordinal TF asked for, a handle, and a
// distinct PCI bus id per device.
TEST_F(VaccSeRegistrationTest, DeviceFields) {
  EnvVars env = kSmall;
  env.emplace_back("VACC_DEVICE_COUNT", "2");
  ASSERT_TRUE(Load(env));
  ASSERT_EQ(p().device_count(), 2);
  std::set<std::string> bus_ids;
  for (int i = 0; i < 2; ++i) {
    const SP_Device* d = dev(i);
    EXPECT_EQ(d->struct_size, SP_DEVICE_STRUCT_SIZE);
    EXPECT_EQ(d->ordinal, i);
    EXPECT_NE(d->device_handle, nullptr);
    ASSERT_NE(d->hardware_name, nullptr);
    ASSERT_NE(d->device_vendor, nullptr);
    ASSERT_NE(d->pci_bus_id, nullptr);
    EXPECT_STRNE(d->hardware_name, "");
    EXPECT_STRNE(d->device_vendor, "");
    EXPECT_STRNE(d->pci_bus_id, "");
    bus_ids.insert(d->pci_bus_id);
  }
  EXPECT_EQ(bus_ids.size(), 2u) << "both devices report the same pci_bus_id";
  EXPECT_NE(dev(0)->device_handle, dev(1)->device_handle);
}

// SP_DeviceFns: a NUMA node of -1 or more, positive bandwidth and GFLOP/s
// (measured when not configured).
TEST_F(VaccSeRegistrationTest, DeviceFnsReportFacts) {
  ASSERT_TRUE(Load(kSmall));
  const SP_DeviceFns& df = p().device_fns();
  EXPECT_GE(df.get_numa_node(dev()), -1);
  EXPECT_GT(df.get_memory_bandwidth(dev()), 0);
  EXPECT_GT(df.get_gflops(dev()), 0.0);
}

// VACC_GFLOPS and VACC_MEMORY_BANDWIDTH are reported as configured.
TEST_F(VaccSeRegistrationTest, DeviceFnsFromEnvironment) {
  EnvVars env = kSmall;
  env.emplace_back("VACC_GFLOPS", "123");
  env.emplace_back("VACC_MEMORY_BANDWIDTH", "4567");
  ASSERT_TRUE(Load(env));
  EXPECT_EQ(p().device_fns().get_gflops(dev()), 123.0);
  EXPECT_EQ(p().device_fns().get_memory_bandwidth(dev()), 4567);
}

// get_device_count reports VACC_DEVICE_COUNT (default 1), and that many
// devices can be created.
TEST_F(VaccSeRegistrationTest, DeviceCountFromEnvironment) {
  for (const char* count : {"", "1", "3"}) {
    SCOPED_TRACE(std::string("VACC_DEVICE_COUNT=") + count);
    EnvVars env = kSmall;
    if (*count) env.emplace_back("VACC_DEVICE_COUNT", count);
    ASSERT_TRUE(Load(env));
    int reported = -1;
    StatusPtr s = NewStatus();
    p().platform_fns().get_device_count(&p().platform(), &reported, s.get());
    EXPECT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
    EXPECT_EQ(reported, *count ? std::stoi(count) : 1);
    EXPECT_EQ(p().device_count(), reported);
    p_.reset();
  }
}

// create_device with an ordinal out of range fails with TF_INVALID_ARGUMENT
// and a message about the ordinal.
TEST_F(VaccSeRegistrationTest, CreateDeviceOrdinalOutOfRange) {
  EnvVars env = kSmall;
  env.emplace_back("VACC_DEVICE_COUNT", "2");
  ASSERT_TRUE(Load(env));
  for (int ordinal : {2, 3, -1}) {
    SCOPED_TRACE("ordinal " + std::to_string(ordinal));
    SP_Device device{};
    device.struct_size = SP_DEVICE_STRUCT_SIZE;
    SE_CreateDeviceParams params{};
    params.struct_size = SE_CREATE_DEVICE_PARAMS_STRUCT_SIZE;
    params.ordinal = ordinal;
    params.device = &device;
    StatusPtr s = NewStatus();
    p().platform_fns().create_device(&p().platform(), &params, s.get());
    EXPECT_EQ(TF_GetCode(s.get()), TF_INVALID_ARGUMENT) << Describe(s.get());
    EXPECT_TRUE(Contains(TF_Message(s.get()), "ordinal")) << TF_Message(s.get());
    EXPECT_EQ(device.device_handle, nullptr);
  }
}

// A malformed variable makes SE_InitPlugin fail with a message naming it.
TEST_F(VaccSeRegistrationTest, MalformedEnvironmentFailsInit) {
  const EnvVars bad[] = {{{"VACC_THREADS", "abc"}},      {{"VACC_MEMORY_MB", "0"}},
                         {{"VACC_DEVICE_COUNT", "0"}},   {{"VACC_USE_BFC", "2"}},
                         {{"VACC_MEMORY_GROWTH", "yes"}}, {{"VACC_THREADS", "4x"}}};
  for (const EnvVars& env : bad) {
    SCOPED_TRACE(env[0].first + "=" + env[0].second);
    SP_Platform platform{};
    platform.struct_size = SP_PLATFORM_STRUCT_SIZE;
    SP_PlatformFns fns{};
    fns.struct_size = SP_PLATFORM_FNS_STRUCT_SIZE;
    EXPECT_EQ(Init(env, &platform, &fns), TF_INVALID_ARGUMENT) << Message();
    EXPECT_NE(Message().find(env[0].first), std::string::npos) << Message();
    // The full loader reports it too.
    std::string error;
    EXPECT_EQ(VaccPlatform::Load(env, &error), nullptr);
    EXPECT_NE(error.find(env[0].first), std::string::npos) << error;
  }
}

// A TensorFlow whose StreamExecutor C API has another major version is
// refused with TF_FAILED_PRECONDITION.
TEST_F(VaccSeRegistrationTest, OtherMajorVersionIsRefused) {
  SP_Platform platform{};
  platform.struct_size = SP_PLATFORM_STRUCT_SIZE;
  SP_PlatformFns fns{};
  fns.struct_size = SP_PLATFORM_FNS_STRUCT_SIZE;
  EXPECT_EQ(Init(kSmall, &platform, &fns, SE_MAJOR + 1), TF_FAILED_PRECONDITION) << Message();
}

// TF 2.7 pre-fills SP_Platform with 34 bytes (up to use_bfc_allocator): the
// plugin fills only those, keeps struct_size 34 and writes nothing from
// byte 34 on (force_memory_growth is not there).
TEST_F(VaccSeRegistrationTest, OlderPlatformStructIsFilledOnlyAsFarAsItGoes) {
  Prefilled<SP_Platform> platform(kTf27PlatformSize);
  SP_PlatformFns fns{};
  fns.struct_size = SP_PLATFORM_FNS_STRUCT_SIZE;
  ASSERT_EQ(Init(kSmall, platform.get(), &fns), TF_OK) << Message();
  EXPECT_EQ(platform.struct_size(), kTf27PlatformSize);
  EXPECT_TRUE(platform.UntouchedFrom(kTf27PlatformSize)) << "wrote past TF 2.7's SP_Platform";
  EXPECT_STREQ(platform.get()->name, "VACC");
  EXPECT_STREQ(platform.get()->type, "VACC");
  EXPECT_EQ(platform.get()->supports_unified_memory, 1);
  EXPECT_EQ(platform.get()->use_bfc_allocator, 1);
  DestroyPlatform(platform.get(), &fns);
}

// A newer core's larger SP_Platform: the plugin fills what it knows, reports
// its own size, and leaves the core's extra bytes alone.
TEST_F(VaccSeRegistrationTest, NewerPlatformStructGetsOurSize) {
  Prefilled<SP_Platform> platform(SP_PLATFORM_STRUCT_SIZE + 16);
  SP_PlatformFns fns{};
  fns.struct_size = SP_PLATFORM_FNS_STRUCT_SIZE;
  ASSERT_EQ(Init(kSmall, platform.get(), &fns), TF_OK) << Message();
  EXPECT_EQ(platform.struct_size(), SP_PLATFORM_STRUCT_SIZE);
  EXPECT_TRUE(platform.UntouchedFrom(SP_PLATFORM_STRUCT_SIZE)) << "wrote past our SP_Platform";
  EXPECT_STREQ(platform.get()->name, "VACC");
  EXPECT_EQ(platform.get()->force_memory_growth, 1);
  DestroyPlatform(platform.get(), &fns);
}

// struct_size 0 (a host that did not say): the plugin assumes and reports
// its own size.
TEST_F(VaccSeRegistrationTest, ZeroStructSizeGetsOurSize) {
  Prefilled<SP_Platform> platform(0);
  SP_PlatformFns fns{};
  ASSERT_EQ(Init(kSmall, platform.get(), &fns), TF_OK) << Message();
  EXPECT_EQ(platform.struct_size(), SP_PLATFORM_STRUCT_SIZE);
  EXPECT_EQ(fns.struct_size, SP_PLATFORM_FNS_STRUCT_SIZE);
  EXPECT_TRUE(platform.UntouchedFrom(SP_PLATFORM_STRUCT_SIZE));
  EXPECT_STREQ(platform.get()->name, "VACC");
  DestroyPlatform(platform.get(), &fns);
}

// TF 2.5's SP_StreamExecutor (264 bytes, a different layout) is refused by
// create_stream_executor with TF_FAILED_PRECONDITION about struct_size, and
// nothing past its end is written; a newer core's larger one gets our size.
TEST_F(VaccSeRegistrationTest, StreamExecutorStructSizeNegotiation) {
  SP_Platform platform{};
  platform.struct_size = SP_PLATFORM_STRUCT_SIZE;
  SP_PlatformFns fns{};
  fns.struct_size = SP_PLATFORM_FNS_STRUCT_SIZE;
  ASSERT_EQ(Init(kSmall, &platform, &fns), TF_OK) << Message();
  ASSERT_NE(fns.create_stream_executor, nullptr);
  {
    Prefilled<SP_StreamExecutor> se(kTf25StreamExecutorSize);
    SE_CreateStreamExecutorParams params{};
    params.struct_size = SE_CREATE_STREAM_EXECUTOR_PARAMS_STRUCT_SIZE;
    params.stream_executor = se.get();
    StatusPtr s = NewStatus();
    fns.create_stream_executor(&platform, &params, s.get());
    EXPECT_EQ(TF_GetCode(s.get()), TF_FAILED_PRECONDITION) << Describe(s.get());
    EXPECT_TRUE(Contains(TF_Message(s.get()), "struct_size")) << TF_Message(s.get());
    EXPECT_TRUE(se.UntouchedFrom(kTf25StreamExecutorSize));
  }
  {
    Prefilled<SP_StreamExecutor> se(SP_STREAMEXECUTOR_STRUCT_SIZE + 24);
    SE_CreateStreamExecutorParams params{};
    params.struct_size = SE_CREATE_STREAM_EXECUTOR_PARAMS_STRUCT_SIZE;
    params.stream_executor = se.get();
    StatusPtr s = NewStatus();
    fns.create_stream_executor(&platform, &params, s.get());
    EXPECT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
    EXPECT_EQ(se.struct_size(), SP_STREAMEXECUTOR_STRUCT_SIZE);
    EXPECT_TRUE(se.UntouchedFrom(SP_STREAMEXECUTOR_STRUCT_SIZE));
    EXPECT_NE(se.get()->host_callback, nullptr);
    fns.destroy_stream_executor(&platform, se.get());
  }
  DestroyPlatform(&platform, &fns);
}

// Tearing the platform down with streams, events, timers and memory still
// alive, and work still queued, is clean: every queued host callback runs
// exactly once, and nothing leaks or is used after free (ASan).
TEST_F(VaccSeRegistrationTest, TeardownWithLiveHandles) {
  EnvVars env = kSmall;
  env.emplace_back("VACC_DEVICE_COUNT", "2");
  ASSERT_TRUE(Load(env));
  std::atomic<int> callbacks{0};
  const std::vector<uint8_t> src = Pattern(1 << 20, 1);
  int enqueued = 0;
  for (int d = 0; d < 2; ++d) {
    const SP_StreamExecutor& se = p().se();
    StatusPtr s = NewStatus();
    SP_Stream streams[2] = {};
    SP_Event event = nullptr;
    SP_Timer timer = nullptr;
    for (SP_Stream& st : streams) {
      se.create_stream(dev(d), &st, s.get());
      ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
    }
    se.create_event(dev(d), &event, s.get());
    ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
    se.create_timer(dev(d), &timer, s.get());
    ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
    SP_DeviceMemoryBase mem[2] = {};  // one per stream: they run concurrently
    for (SP_DeviceMemoryBase& m : mem) {
      m.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE;
      se.allocate(dev(d), src.size(), 0, &m);
      ASSERT_NE(m.opaque, nullptr);
    }
    ASSERT_NE(se.host_memory_allocate(dev(d), 4096), nullptr);
    ASSERT_NE(se.unified_memory_allocate(dev(d), 4096), nullptr);
    se.start_timer(dev(d), streams[0], timer, s.get());
    for (int i = 0; i < 20; ++i) {
      se.memcpy_htod(dev(d), streams[i % 2], &mem[i % 2], src.data(), src.size(), s.get());
      ASSERT_EQ(TF_GetCode(s.get()), TF_OK) << Describe(s.get());
      ASSERT_TRUE(EnqueueHostCallback(p(), streams[i % 2], [&](TF_Status*) { callbacks++; }, d));
      ++enqueued;
    }
    se.record_event(dev(d), streams[0], event, s.get());
    se.wait_for_event(dev(d), streams[1], event, s.get());
    se.stop_timer(dev(d), streams[0], timer, s.get());
  }
  p_.reset();  // destroy_device with all of it alive
  EXPECT_EQ(callbacks.load(), enqueued);
}

}  // namespace
}  // namespace vacc_test
