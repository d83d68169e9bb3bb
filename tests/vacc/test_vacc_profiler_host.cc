// SPDX-License-Identifier: Apache-2.0
//
// vacc's pluggable profiler as TensorFlow drives it: libvacc.so opened by
// the SDK's host (which registers the device and kernels but does not call
// TF_InitProfiler), TF_InitProfiler called with TF-owned, pre-sized structs,
// then start -> ops run on VACC:0 -> stop -> collect_data_xspace (size
// query, then copy), and the XSpace decoded by an independent decoder.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "proto_test_decoder.h"
#include "vacc_host_test_util.h"
#include "vacc_tf_registration.h"

namespace {

using vacc_test::HostPtr;
using vacc_test::StatusPtr;

using InitProfilerFn = void (*)(TF_ProfilerRegistrationParams*, TF_Status*);

class VaccProfiler : public ::testing::Test {
 protected:
  void SetUp() override {
    host_ = vacc_test::OpenHost("best");
    ASSERT_NE(host_, nullptr);
    EXPECT_TRUE(tfp_host_entry_points(host_.get()) & TFP_ENTRY_TF_INIT_PROFILER);
    // The host loaded the plugin RTLD_LOCAL; RTLD_NOLOAD finds the same copy.
    // It is never closed: the plugin stays loaded, as TensorFlow never
    // unloads plugins. vacc's profiler session lives as long as the process
    // (compute units may outlive static destructors); unloading the library
    // would orphan it, which LeakSanitizer rightly reports.
    std::string error;
    auto init = vacc_test::FindPluginFunction<InitProfilerFn>(
        vacc_test::PluginPath(), RTLD_NOW | RTLD_NOLOAD, "TF_InitProfiler", &error);
    ASSERT_NE(init, nullptr) << error;
    StatusPtr status;
    init(&reg_.params, status.s);
    ASSERT_EQ(status.code(), TF_OK) << status.message();
  }
  // As TensorFlow does when the profiler goes: the plugin frees its session.
  void TearDown() override { reg_.Destroy(); }

  TF_Code Call(void (*fn)(const TP_Profiler*, TF_Status*), std::string* message = nullptr) {
    StatusPtr status;
    fn(&reg_.profiler, status.s);
    if (message != nullptr) *message = status.message();
    return status.code();
  }

  // collect_data_xspace as TensorFlow calls it: size first, then the bytes.
  std::string Collect() {
    StatusPtr status;
    size_t size = 0;
    reg_.fns.collect_data_xspace(&reg_.profiler, nullptr, &size, status.s);
    EXPECT_EQ(status.code(), TF_OK) << status.message();
    std::vector<uint8_t> buffer(size + 16, 0xee);
    size_t capacity = size;
    reg_.fns.collect_data_xspace(&reg_.profiler, buffer.data(), &capacity, status.s);
    EXPECT_EQ(status.code(), TF_OK) << status.message();
    EXPECT_EQ(capacity, size);
    EXPECT_EQ(buffer[size], 0xee) << "wrote past the size it reported";
    return std::string(buffer.begin(), buffer.begin() + static_cast<long>(size));
  }

  void RunMatMulAndRelu() {
    auto a = vacc_test::MakeTensor<float>(TF_FLOAT, {4, 3}, std::vector<float>(12, 1.0f));
    auto b = vacc_test::MakeTensor<float>(TF_FLOAT, {3, 2}, std::vector<float>(6, -2.0f));
    const auto mm = vacc_test::RunNode(host_.get(), "MatMul", {}, {a.get(), b.get()});
    ASSERT_EQ(mm.code, TF_OK) << mm.message;
    EXPECT_EQ(mm.values, std::vector<float>(8, -6.0f));
    const auto relu = vacc_test::RunNode(host_.get(), "Relu", {}, {a.get()});
    ASSERT_EQ(relu.code, TF_OK) << relu.message;
  }

  HostPtr host_;
  vacc_test::ProfilerRegistration reg_;
};

TEST_F(VaccProfiler, RegistersEverythingTensorFlowRequires) {
  EXPECT_STREQ(reg_.profiler.device_type, "VACC");
  EXPECT_EQ(reg_.profiler.struct_size, static_cast<size_t>(TP_PROFILER_STRUCT_SIZE));
  EXPECT_EQ(reg_.fns.struct_size, static_cast<size_t>(TP_PROFILER_FNS_STRUCT_SIZE));
  EXPECT_NE(reg_.fns.start, nullptr);
  EXPECT_NE(reg_.fns.stop, nullptr);
  EXPECT_NE(reg_.fns.collect_data_xspace, nullptr);
  EXPECT_NE(reg_.params.destroy_profiler, nullptr);
  EXPECT_NE(reg_.params.destroy_profiler_fns, nullptr);
}

TEST_F(VaccProfiler, KernelsRunDuringASessionBecomeEventsOnTheDevicePlane) {
  RunMatMulAndRelu();  // before the session: must not appear
  ASSERT_EQ(Call(reg_.fns.start), TF_OK);
  RunMatMulAndRelu();
  RunMatMulAndRelu();
  ASSERT_EQ(Call(reg_.fns.stop), TF_OK);
  RunMatMulAndRelu();  // after it: must not appear either

  const auto planes = proto_test::DecodeXSpace(Collect());
  ASSERT_EQ(planes.size(), 1u);  // VACC_DEVICE_COUNT defaults to 1
  const proto_test::XPlane& p = planes[0];
  EXPECT_EQ(p.name, "/device:CUSTOM:VACC:0");
  std::multiset<std::string> ops;
  for (const auto& line : p.lines) {
    EXPECT_GT(line.timestamp_ns, 1600000000LL * 1000000000LL);
    for (const auto& e : line.events) {
      ASSERT_EQ(p.event_metadata.count(e.metadata_id), 1u);
      const auto& md = p.event_metadata.at(e.metadata_id);
      ops.insert(md.display_name);
      EXPECT_FALSE(md.name.empty());
      EXPECT_EQ(md.tf_op, md.name + ":" + md.display_name);
      EXPECT_GE(e.offset_ps, 0);
      EXPECT_LE(e.offset_ps + e.duration_ps, line.duration_ps);
    }
  }
  EXPECT_EQ(ops.count("MatMul"), 2u);
  EXPECT_EQ(ops.count("Relu"), 2u);
  EXPECT_EQ(ops.size(), 4u);
}

TEST_F(VaccProfiler, CallbacksReportMisuse) {
  std::string message;
  EXPECT_EQ(Call(reg_.fns.stop, &message), TF_FAILED_PRECONDITION);  // not started
  ASSERT_EQ(Call(reg_.fns.start), TF_OK);
  EXPECT_EQ(Call(reg_.fns.start, &message), TF_FAILED_PRECONDITION);  // already started
  EXPECT_NE(message.find("already active"), std::string::npos) << message;
  RunMatMulAndRelu();
  ASSERT_EQ(Call(reg_.fns.stop), TF_OK);

  StatusPtr status;
  size_t size = 0;
  reg_.fns.collect_data_xspace(&reg_.profiler, nullptr, &size, status.s);
  ASSERT_EQ(status.code(), TF_OK);
  ASSERT_GT(size, 0u);
  std::vector<uint8_t> small(size - 1);
  size_t capacity = small.size();
  reg_.fns.collect_data_xspace(&reg_.profiler, small.data(), &capacity, status.s);
  EXPECT_EQ(status.code(), TF_INVALID_ARGUMENT);
  EXPECT_EQ(capacity, size);  // still tells the size it needs
}

}  // namespace
