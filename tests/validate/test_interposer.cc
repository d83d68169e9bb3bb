// SPDX-License-Identifier: Apache-2.0
// The validation layer (src/validate/interposer.h) over a fake
// SP_StreamExecutor: the generated signature table, closures that forward,
// and the checks no fixture plugin can provoke alone (a stream entered by two
// threads at once is the caller's doing).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "callback_table.h"
#include "interposer.h"
#include "plugin_struct.h"
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/tf_status.h"

namespace tfp_validator {
namespace {

using tfp_shims::PluginStruct;

std::atomic<int> g_inside{0};
std::atomic<int> g_destroys{0};
std::atomic<int> g_tf_callback_runs{0};
char g_stream_storage[2];

void FakeCreateStream(const SP_Device*, SP_Stream* s, TF_Status*) {
  *s = reinterpret_cast<SP_Stream>(&g_stream_storage[0]);
}
void FakeDestroyStream(const SP_Device*, SP_Stream) { ++g_destroys; }
// Waits (boundedly) until a second thread is inside too.
void FakeMemcpyHtod(const SP_Device*, SP_Stream, SP_DeviceMemoryBase*, const void*, uint64_t,
                    TF_Status*) {
  ++g_inside;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (g_inside.load() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
}
TF_Bool FakeHostCallback(const SP_Device*, SP_Stream, SE_StatusCallbackFn fn, void* arg) {
  TF_Status* s = TF_NewStatus();
  fn(arg, s);
  fn(arg, s);  // the fault: twice
  TF_DeleteStatus(s);
  return 1;
}
void TfCallback(void*, TF_Status*) { ++g_tf_callback_runs; }

struct Fixture {
  PluginStruct se{"2.21", "SP_StreamExecutor"};
  std::vector<LayerReport> reports;
  std::mutex mu;
  Interposer layer{"2.21", [this](const LayerReport& r) {
                     std::lock_guard<std::mutex> lock(mu);
                     reports.push_back(r);
                   }};
  Fixture() {
    se.Set<void*>("create_stream", reinterpret_cast<void*>(&FakeCreateStream));
    se.Set<void*>("destroy_stream", reinterpret_cast<void*>(&FakeDestroyStream));
    se.Set<void*>("memcpy_htod", reinterpret_cast<void*>(&FakeMemcpyHtod));
    se.Set<void*>("host_callback", reinterpret_cast<void*>(&FakeHostCallback));
    layer.ReportAll(true);
  }
  bool Reported(RuleId rule) {
    std::lock_guard<std::mutex> lock(mu);
    for (const LayerReport& r : reports) {
      if (r.rule == rule) return true;
    }
    return false;
  }
};

TEST(CallbackTable, RolesFromTypes) {
  const CallbackSignature* m = FindCallbackSignature("SP_StreamExecutor", "memcpy_htod");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->async);
  ASSERT_EQ(m->param_count, 6);
  const Role want[] = {Role::kDevice,      Role::kStream, Role::kDeviceMemory,
                       Role::kHostPointer, Role::kSize,   Role::kStatus};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(m->roles[i], want[i]) << i;
  EXPECT_EQ(m->params[4], FfiKind::kUInt64);
  const CallbackSignature* c = FindCallbackSignature("SP_StreamExecutor", "create_stream");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->effect, Effect::kCreates);
  EXPECT_EQ(c->kind, HandleKind::kStream);
  EXPECT_EQ(c->roles[1], Role::kStreamOut);
  const CallbackSignature* h = FindCallbackSignature("SP_StreamExecutor", "host_callback");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->roles[2], Role::kHostCallbackFn);
  EXPECT_EQ(h->roles[3], Role::kHostCallbackArg);
  EXPECT_EQ(h->ret, FfiKind::kUInt8);
  const CallbackSignature* d = FindCallbackSignature("SP_StreamExecutor", "deallocate");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->effect, Effect::kDestroys);
  EXPECT_EQ(d->kind, HandleKind::kDeviceMemory);
}

TEST(CallbackTable, CoversEveryCallbackOfEveryRelease) {
  for (const char* name : {"SP_StreamExecutor", "SP_PlatformFns", "SP_DeviceFns", "SP_TimerFns"}) {
    for (const char* rel : {"2.5", "2.13", "2.21"}) {
      const tfp_shims::StructLayout* l = tfp_shims::FindLayout(rel, name);
      ASSERT_NE(l, nullptr) << name << " " << rel;
      for (uint32_t i = 0; i < l->num_fields; ++i) {
        if (!l->fields[i].is_function) continue;
        EXPECT_NE(FindCallbackSignature(name, l->fields[i].name), nullptr)
            << name << "." << l->fields[i].name << " in " << rel;
      }
    }
  }
}

TEST(Interposer, InstallsClosuresThatForward) {
  Fixture f;
  EXPECT_EQ(f.layer.Install(f.se), 4u);
  void* create = f.se.Get<void*>("create_stream");
  EXPECT_NE(create, reinterpret_cast<void*>(&FakeCreateStream));
  EXPECT_EQ(f.layer.Original(create), reinterpret_cast<void*>(&FakeCreateStream));
  EXPECT_EQ(f.layer.Install(f.se), 0u);  // already ours
  SP_Stream s = nullptr;
  TF_Status* st = TF_NewStatus();
  reinterpret_cast<decltype(SP_StreamExecutor::create_stream)>(create)(nullptr, &s, st);
  EXPECT_EQ(s, reinterpret_cast<SP_Stream>(&g_stream_storage[0]));
  EXPECT_EQ(f.layer.calls(), 1u);
  TF_DeleteStatus(st);
}

// The layer installed over the fake, its counters at zero; a test calls the
// closures the layer put in place of the fake's callbacks.
class InstalledLayer : public ::testing::Test {
 protected:
  void SetUp() override {
    f_.layer.Install(f_.se);
    g_destroys = 0;
    g_tf_callback_runs = 0;
  }
  // The closure now in SP_StreamExecutor::<field>, typed as that field.
  template <typename Fn>
  Fn Installed(Fn SP_StreamExecutor::*, const char* field) {
    return reinterpret_cast<Fn>(f_.se.Get<void*>(field));
  }

  Fixture f_;
};

TEST_F(InstalledLayer, DoubleDestroyReportedAndNotForwarded) {
  auto create = Installed(&SP_StreamExecutor::create_stream, "create_stream");
  auto destroy = Installed(&SP_StreamExecutor::destroy_stream, "destroy_stream");
  TF_Status* st = TF_NewStatus();
  SP_Stream s = nullptr;
  create(nullptr, &s, st);
  destroy(nullptr, s);
  EXPECT_FALSE(f_.Reported(RuleId::kRtDoubleDestroy));
  destroy(nullptr, s);
  EXPECT_TRUE(f_.Reported(RuleId::kRtDoubleDestroy));
  EXPECT_EQ(g_destroys.load(), 1);
  TF_DeleteStatus(st);
}

TEST_F(InstalledLayer, HostCallbackSecondRunNotForwarded) {
  auto host_callback = Installed(&SP_StreamExecutor::host_callback, "host_callback");
  EXPECT_EQ(host_callback(nullptr, reinterpret_cast<SP_Stream>(&g_stream_storage[1]), TfCallback,
                          nullptr),
            1);
  EXPECT_EQ(g_tf_callback_runs.load(), 1);
  EXPECT_TRUE(f_.Reported(RuleId::kRtHostCallbackOnce));
}

TEST_F(InstalledLayer, StreamEnteredByTwoThreads) {
  auto htod = Installed(&SP_StreamExecutor::memcpy_htod, "memcpy_htod");
  SP_Stream s = reinterpret_cast<SP_Stream>(&g_stream_storage[0]);
  g_inside = 0;
  auto body = [&] {
    TF_Status* st = TF_NewStatus();
    htod(nullptr, s, nullptr, nullptr, 0, st);
    TF_DeleteStatus(st);
  };
  std::thread a(body), b(body);
  a.join();
  b.join();
  EXPECT_TRUE(f_.Reported(RuleId::kRtStreamConcurrent));
}

TEST_F(InstalledLayer, OneThreadNeverConcurrent) {
  auto htod = Installed(&SP_StreamExecutor::memcpy_htod, "memcpy_htod");
  g_inside = 1;  // the fake returns at once
  TF_Status* st = TF_NewStatus();
  for (int i = 0; i < 3; ++i) {
    htod(nullptr, reinterpret_cast<SP_Stream>(&g_stream_storage[0]), nullptr, nullptr, 0, st);
  }
  TF_DeleteStatus(st);
  EXPECT_FALSE(f_.Reported(RuleId::kRtStreamConcurrent));
}

}  // namespace
}  // namespace tfp_validator
