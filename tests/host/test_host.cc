// SPDX-License-Identifier: Apache-2.0
// The host (include/tfplugin/host.h) against the TESTDEV plugin
// (test_plugin.c), through nothing but host.h and the TensorFlow C API. The
// plugin's path comes in $TFP_TEST_PLUGIN; its counters (test_plugin.h) are
// read through a dlopen of the same file, which also keeps it loaded, so
// counts survive tfp_host_close.
//
// Float results: AddV2 must match a float addition exactly; MatMul must be
// within a relative 1e-5 of a double-precision reference (absolute 1e-5 for
// results of magnitude below 1).
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"
#include "test_plugin.h"
#include "tfplugin/abi_release.h"
#include "tfplugin/host.h"
#include "tfplugin_shims.h"

namespace {

// EXPECT_CONTAINS(text, part): `text` (std::string or C string) contains `part`.
::testing::AssertionResult Contains(const char* text_expr, const char* part_expr, const std::string& text,
                                    const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << text_expr << " does not contain " << part_expr << "\n  text: " << text
                                       << "\n  part: " << part;
}
::testing::AssertionResult Contains(const char* text_expr, const char* part_expr, const char* text,
                                    const std::string& part) {
  if (text == nullptr) return ::testing::AssertionFailure() << text_expr << " is NULL";
  return Contains(text_expr, part_expr, std::string(text), part);
}
#define EXPECT_CONTAINS(text, part) EXPECT_PRED_FORMAT2(Contains, text, part)

// ---- Plumbing --------------------------------------------------------------

const char* PluginPath() { return std::getenv("TFP_TEST_PLUGIN"); }

// The plugin's test helpers, through our own (pinning) handle on it.
struct Helpers {
  void* handle = nullptr;
  tfp_test_counters (*counters)() = nullptr;
  void (*reset)() = nullptr;
  int64_t (*bytes_in_use)() = nullptr;
  std::string error;
  bool ok() const { return counters && reset && bytes_in_use; }
};

const Helpers& Plugin() {
  static Helpers h = [] {
    Helpers r;
    if (PluginPath() == nullptr) {
      r.error = "TFP_TEST_PLUGIN is not set";
      return r;
    }
    r.handle = dlopen(PluginPath(), RTLD_NOW | RTLD_LOCAL);
    if (r.handle == nullptr) {
      r.error = dlerror();
      return r;
    }
    r.counters = reinterpret_cast<tfp_test_counters (*)()>(dlsym(r.handle, "tfp_test_plugin_counters"));
    r.reset = reinterpret_cast<void (*)()>(dlsym(r.handle, "tfp_test_plugin_reset_counters"));
    r.bytes_in_use = reinterpret_cast<int64_t (*)()>(dlsym(r.handle, "tfp_test_plugin_bytes_in_use"));
    if (!r.ok()) r.error = "the plugin lacks the test helpers";
    return r;
  }();
  return h;
}

tfp_test_counters Counters() { return Plugin().counters(); }
int64_t BytesInUse() { return Plugin().bytes_in_use(); }

class Status {
 public:
  Status() : s_(TF_NewStatus()) {}
  ~Status() { TF_DeleteStatus(s_); }
  Status(const Status&) = delete;
  Status& operator=(const Status&) = delete;
  operator TF_Status*() const { return s_; }
  TF_Code code() const { return TF_GetCode(s_); }
  std::string message() const { return TF_Message(s_); }

 private:
  TF_Status* s_;
};

#define EXPECT_TF_OK(s) EXPECT_EQ((s).code(), TF_OK) << (s).message()
#define ASSERT_TF_OK(s) ASSERT_EQ((s).code(), TF_OK) << (s).message()

struct HostCloser {
  void operator()(tfp_host* h) const { tfp_host_close(h); }
};
using HostPtr = std::unique_ptr<tfp_host, HostCloser>;

HostPtr OpenHost(TF_Status* status, const char* release = nullptr, int skip_kernels = 0,
                 const char* path = PluginPath()) {
  tfp_host_options options;
  options.struct_size = TFP_HOST_OPTIONS_STRUCT_SIZE;
  options.tf_release = release;
  options.skip_kernels = skip_kernels;
  return HostPtr(tfp_host_open(path, &options, status));
}

// An environment variable set for a scope: set before tfp_host_open, unset after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

struct TensorDeleter {
  void operator()(TF_Tensor* t) const { TF_DeleteTensor(t); }
};
using TensorPtr = std::unique_ptr<TF_Tensor, TensorDeleter>;

template <typename T>
TensorPtr MakeTensor(TF_DataType dtype, const std::vector<int64_t>& dims, const std::vector<T>& values) {
  size_t bytes = values.size() * sizeof(T);
  TF_Tensor* t = TF_AllocateTensor(dtype, dims.data(), static_cast<int>(dims.size()), bytes);
  if (t != nullptr && bytes > 0) std::memcpy(TF_TensorData(t), values.data(), bytes);
  return TensorPtr(t);
}

template <typename T>
std::vector<T> Values(const TF_Tensor* t) {
  std::vector<T> v(t != nullptr ? TF_TensorByteSize(t) / sizeof(T) : 0);
  if (!v.empty()) std::memcpy(v.data(), TF_TensorData(t), v.size() * sizeof(T));
  return v;
}

std::vector<int64_t> Dims(const TF_Tensor* t) {
  std::vector<int64_t> d;
  for (int i = 0; t != nullptr && i < TF_NumDims(t); ++i) d.push_back(TF_Dim(t, i));
  return d;
}

std::vector<float> RandomFloats(size_t n, std::mt19937* rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(*rng);
  return v;
}

// One node, run through tfp_op.
class Op {
 public:
  Op(tfp_host* host, const char* name, int ordinal = 0) : op_(tfp_op_new(host, name, ordinal, status_)) {}
  ~Op() { tfp_op_delete(op_); }
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;

  tfp_op* get() const { return op_; }
  const Status& status() const { return status_; }
  TF_Code code() const { return status_.code(); }
  std::string message() const { return status_.message(); }

  Op& Attr(const char* name, const char* text) {
    tfp_op_set_attr(op_, name, text, status_);
    EXPECT_TF_OK(status_) << " setting " << name << "=" << text;
    return *this;
  }
  Op& Input(const TensorPtr& t) {
    tfp_op_add_input(op_, t.get(), status_);
    EXPECT_TF_OK(status_);
    return *this;
  }
  Op& Variable(tfp_variable* v) {
    tfp_op_add_variable(op_, v, status_);
    EXPECT_TF_OK(status_);
    return *this;
  }
  TF_Code Run() {
    tfp_op_run(op_, status_);
    return status_.code();
  }
  const TF_Tensor* Out(int i = 0) const { return tfp_op_output(op_, i); }
  std::string Kernel() const {
    const char* k = tfp_op_kernel(op_);
    return k != nullptr ? k : "";
  }

 private:
  Status status_;  // declared first: the constructor reports through it
  tfp_op* op_;
};

// Every create_* the plugin saw has its destroy_*, and no device memory is left.
void ExpectBalanced(const tfp_test_counters& c) {
  EXPECT_EQ(c.create_device, c.destroy_device);
  EXPECT_EQ(c.create_device_fns, c.destroy_device_fns);
  EXPECT_EQ(c.create_stream_executor, c.destroy_stream_executor);
  EXPECT_EQ(c.create_timer_fns, c.destroy_timer_fns);
  EXPECT_EQ(c.create_stream, c.destroy_stream);
  EXPECT_EQ(c.create_event, c.destroy_event);
  EXPECT_EQ(c.create_timer, c.destroy_timer);
  EXPECT_EQ(c.device_allocs, c.device_frees);
  EXPECT_EQ(c.host_allocs, c.host_frees);
  EXPECT_EQ(c.unified_allocs, c.unified_frees);
  EXPECT_EQ(c.kernels_created, c.kernels_deleted);
  EXPECT_EQ(c.bad_deallocations, 0);
  EXPECT_EQ(BytesInUse(), 0);
}

class HostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("TFP_TEST_FAIL");
    unsetenv("TFP_TEST_DEVICES");
    ASSERT_TRUE(Plugin().ok()) << Plugin().error;
    Plugin().reset();
  }

  // A host on the plugin, emulating the newest release.
  HostPtr Open(const char* release = nullptr) {
    Status s;
    HostPtr h = OpenHost(s, release);
    EXPECT_TF_OK(s);
    EXPECT_NE(h, nullptr);
    return h;
  }
};

// ---- Loading -----------------------------------------------------------------

TEST_F(HostTest, OpensAndReportsEntryPointsAndPlatform) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  EXPECT_STREQ(tfp_host_path(h.get()), PluginPath());
  EXPECT_STREQ(tfp_host_release(h.get()), TFPLUGIN_TF_RELEASE);
  EXPECT_EQ(tfp_host_entry_points(h.get()), unsigned{TFP_ENTRY_SE_INIT_PLUGIN | TFP_ENTRY_TF_INIT_KERNEL});
  EXPECT_STREQ(tfp_host_entry_point_name(TFP_ENTRY_SE_INIT_PLUGIN), "SE_InitPlugin");
  EXPECT_STREQ(tfp_host_entry_point_name(TFP_ENTRY_TF_INIT_KERNEL), "TF_InitKernel");
  EXPECT_STREQ(tfp_host_entry_point_name(TFP_ENTRY_TF_INIT_GRAPH), "TF_InitGraph");
  EXPECT_STREQ(tfp_host_entry_point_name(TFP_ENTRY_TF_INIT_PROFILER), "TF_InitProfiler");
  EXPECT_STREQ(tfp_host_entry_point_name(TFP_ENTRY_TFNPD_INIT_PLUGIN), "TFNPD_InitPlugin");
  EXPECT_STREQ(tfp_host_entry_point_name(TFP_ENTRY_GET_PJRT_API), "GetPjrtApi");
  EXPECT_EQ(tfp_host_entry_point_name(0), nullptr);
  EXPECT_EQ(tfp_host_entry_point_name(3), nullptr);
  EXPECT_EQ(tfp_host_entry_point_name(1u << TFP_ENTRY_COUNT), nullptr);
  EXPECT_STREQ(tfp_host_platform_name(h.get()), "TESTDEV");
  EXPECT_STREQ(tfp_host_platform_type(h.get()), "TESTDEV");

  tfp_test_counters c = Counters();
  EXPECT_EQ(c.se_init_calls, 1);
  EXPECT_EQ(c.init_kernel_calls, 1);
  // (registration_errors: see ReopenRegistersEverythingAgain)
  // TensorFlow pre-fills struct_size with its own release's sizes.
  EXPECT_EQ(c.seen_params_struct_size, int64_t{SE_PLATFORM_REGISTRATION_PARAMS_STRUCT_SIZE});
  EXPECT_EQ(c.seen_platform_struct_size, int64_t{SP_PLATFORM_STRUCT_SIZE});
  EXPECT_EQ(c.seen_platform_fns_struct_size, int64_t{SP_PLATFORM_FNS_STRUCT_SIZE});
  EXPECT_EQ(c.seen_se_struct_size, int64_t{SP_STREAMEXECUTOR_STRUCT_SIZE});
  EXPECT_EQ(c.seen_device_struct_size, int64_t{SP_DEVICE_STRUCT_SIZE});
  EXPECT_EQ(c.seen_device_fns_struct_size, int64_t{SP_DEVICE_FNS_STRUCT_SIZE});
  EXPECT_EQ(c.set_force_memory_growth, 1);
  // 2.21 does not require timer fns: TensorFlow does not ask for them.
  EXPECT_EQ(c.create_timer_fns, 0);
  EXPECT_EQ(c.create_device_fns, 1);
  EXPECT_EQ(c.create_stream_executor, 1);
  EXPECT_EQ(c.create_device, 2);
  EXPECT_EQ(c.create_stream, 2);  // one compute stream per device
  tfp_host_close(nullptr);        // harmless
}

TEST_F(HostTest, OpenFailsCleanly) {
  Status s;
  EXPECT_EQ(tfp_host_open(nullptr, nullptr, s), nullptr);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);

  EXPECT_EQ(tfp_host_open("/nonexistent/libnothing.so", nullptr, s), nullptr);
  EXPECT_EQ(s.code(), TF_NOT_FOUND);
  EXPECT_CONTAINS(s.message(), "/nonexistent/libnothing.so");

  char dir[] = "/tmp/tfp_host_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string junk = std::string(dir) + "/junk.so";
  std::ofstream(junk) << "not an ELF file\n";
  EXPECT_EQ(tfp_host_open(junk.c_str(), nullptr, s), nullptr);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  EXPECT_CONTAINS(s.message(), "cannot load plugin");
  std::remove(junk.c_str());
  rmdir(dir);

  tfp_host_options small;
  small.struct_size = 8;
  small.tf_release = nullptr;
  small.skip_kernels = 0;
  EXPECT_EQ(tfp_host_open(PluginPath(), &small, s), nullptr);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  EXPECT_CONTAINS(s.message(), "TFP_HOST_OPTIONS_STRUCT_SIZE");

  EXPECT_EQ(OpenHost(s, "1.15"), nullptr);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  EXPECT_CONTAINS(s.message(), "1.15");

  // A shared object without plugin entry points: the shims library itself.
  Dl_info info;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&TF_NewStatus), &info), 0);
  EXPECT_EQ(tfp_host_open(info.dli_fname, nullptr, s), nullptr);
  EXPECT_EQ(s.code(), TF_NOT_FOUND);
  EXPECT_CONTAINS(s.message(), "neither SE_InitPlugin nor TF_InitKernel");

  EXPECT_EQ(Counters().se_init_calls, 0);  // nothing got as far as the plugin
}

TEST_F(HostTest, SkipKernels) {
  Status s;
  HostPtr h = OpenHost(s, nullptr, /*skip_kernels=*/1);
  ASSERT_TF_OK(s);
  EXPECT_EQ(tfp_host_kernel_count(h.get()), 0);
  EXPECT_EQ(Counters().init_kernel_calls, 0);
  EXPECT_EQ(tfp_host_device_count(h.get()), 2);
}

// ---- Devices and memory ------------------------------------------------------

TEST_F(HostTest, DeviceCountAndInfo) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(tfp_host_device_count(h.get()), 2);
  for (int i = 0; i < 2; ++i) {
    tfp_device_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = TFP_DEVICE_INFO_STRUCT_SIZE;
    Status s;
    tfp_host_device_info(h.get(), i, &info, s);
    ASSERT_TF_OK(s);
    EXPECT_EQ(info.ordinal, i);
    EXPECT_EQ(std::string(info.name), "/job:localhost/replica:0/task:0/device:TESTDEV:" + std::to_string(i));
    EXPECT_STREQ(info.hardware_name, "TESTDEV Accelerator");
    EXPECT_STREQ(info.device_vendor, "tfplugin");
    EXPECT_STREQ(info.pci_bus_id, i == 0 ? "0000:10:00.0" : "0000:11:00.0");
    EXPECT_EQ(info.numa_node, 0);
    EXPECT_EQ(info.memory_bandwidth, TFP_TEST_DEVICE_BANDWIDTH);
    EXPECT_DOUBLE_EQ(info.gflops, TFP_TEST_DEVICE_GFLOPS);
    EXPECT_EQ(info.memory_total, TFP_TEST_DEVICE_MEMORY);
    EXPECT_EQ(info.memory_free, TFP_TEST_DEVICE_MEMORY);
  }
  tfp_device_info info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = TFP_DEVICE_INFO_STRUCT_SIZE;
  for (int bad : {-1, 2, 1000}) {
    Status s;
    tfp_host_device_info(h.get(), bad, &info, s);
    EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT) << bad;
  }
  Status s;
  info.struct_size = 8;
  tfp_host_device_info(h.get(), 0, &info, s);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  EXPECT_CONTAINS(s.message(), "TFP_DEVICE_INFO_STRUCT_SIZE");
}

TEST_F(HostTest, DeviceCountFromEnvironment) {
  {
    ScopedEnv env("TFP_TEST_DEVICES", "3");
    HostPtr h = Open();
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(tfp_host_device_count(h.get()), 3);
    EXPECT_EQ(Counters().create_device, 3);
  }
  EXPECT_EQ(Counters().destroy_device, 3);
  {
    ScopedEnv env("TFP_TEST_DEVICES", "0");
    HostPtr h = Open();
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(tfp_host_device_count(h.get()), 0);
    Status s;
    EXPECT_EQ(tfp_op_new(h.get(), "AddV2", 0, s), nullptr);
    EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
    EXPECT_EQ(tfp_host_allocate(h.get(), 0, 16, s), nullptr);
    EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  }
  {
    ScopedEnv env("TFP_TEST_DEVICES", "many");
    Status s;
    EXPECT_EQ(OpenHost(s), nullptr);
    EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(s.message(), "SE_InitPlugin");
    EXPECT_CONTAINS(s.message(), "TFP_TEST_DEVICES");
  }
  ExpectBalanced(Counters());
}

TEST_F(HostTest, MemoryRoundTrip) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  for (int dev = 0; dev < 2; ++dev) {
    const uint64_t size = 1 << 20;
    Status s;
    void* p = tfp_host_allocate(h.get(), dev, size, s);
    ASSERT_TF_OK(s);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(BytesInUse(), int64_t{size});
    tfp_device_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = TFP_DEVICE_INFO_STRUCT_SIZE;
    tfp_host_device_info(h.get(), dev, &info, s);
    ASSERT_TF_OK(s);
    EXPECT_EQ(info.memory_free, TFP_TEST_DEVICE_MEMORY - int64_t{size});

    std::vector<unsigned char> in(size), out(size, 0);
    for (size_t i = 0; i < size; ++i) in[i] = static_cast<unsigned char>(i * 7 + dev);
    tfp_host_memcpy_htod(h.get(), dev, p, in.data(), size, s);
    ASSERT_TF_OK(s);
    tfp_host_synchronize(h.get(), dev, s);
    ASSERT_TF_OK(s);
    tfp_host_memcpy_dtoh(h.get(), dev, out.data(), p, size, s);
    ASSERT_TF_OK(s);
    EXPECT_EQ(in, out);
    tfp_host_deallocate(h.get(), dev, p, size);
    EXPECT_EQ(BytesInUse(), 0);
  }

  // Size 0: no memory, yet a valid (possibly NULL) buffer, copies of nothing.
  Status s;
  void* empty = tfp_host_allocate(h.get(), 0, 0, s);
  EXPECT_TF_OK(s);
  char byte = 'x';
  tfp_host_memcpy_htod(h.get(), 0, empty, &byte, 0, s);
  EXPECT_TF_OK(s);
  tfp_host_memcpy_dtoh(h.get(), 0, &byte, empty, 0, s);
  EXPECT_TF_OK(s);
  EXPECT_EQ(byte, 'x');
  tfp_host_deallocate(h.get(), 0, empty, 0);
  EXPECT_EQ(BytesInUse(), 0);

  // Absurd sizes fail with a status, no crash, nothing held.
  for (uint64_t huge : {uint64_t{1} << 62, ~uint64_t{0}, uint64_t(TFP_TEST_DEVICE_MEMORY) + 1}) {
    EXPECT_EQ(tfp_host_allocate(h.get(), 1, huge, s), nullptr);
    EXPECT_EQ(s.code(), TF_RESOURCE_EXHAUSTED) << huge;
    EXPECT_CONTAINS(s.message(), std::to_string(huge));
  }
  EXPECT_EQ(BytesInUse(), 0);

  // A copy the plugin rejects comes back as its status.
  tfp_host_memcpy_htod(h.get(), 0, nullptr, &byte, 1, s);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  EXPECT_CONTAINS(s.message(), "sync_memcpy_htod");
  // No such device.
  EXPECT_EQ(tfp_host_allocate(h.get(), 2, 16, s), nullptr);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  tfp_host_synchronize(h.get(), -1, s);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  h.reset();
  ExpectBalanced(Counters());
}

// ---- What the plugin registered ------------------------------------------------

const tfp_kernel_info* FindKernel(tfp_host* h, const std::string& name, tfp_kernel_info* info) {
  for (int i = 0; i < tfp_host_kernel_count(h); ++i) {
    std::memset(info, 0, sizeof *info);
    info->struct_size = TFP_KERNEL_INFO_STRUCT_SIZE;
    if (tfp_host_kernel_info(h, i, info) == 0 && name == info->name) return info;
  }
  return nullptr;
}

TEST_F(HostTest, KernelList) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(tfp_host_kernel_count(h.get()), 23);
  tfp_kernel_info info;

  ASSERT_NE(FindKernel(h.get(), "AddV2_TESTDEV_float", &info), nullptr);
  EXPECT_STREQ(info.op, "AddV2");
  EXPECT_STREQ(info.device_type, "TESTDEV");
  EXPECT_STREQ(info.label, "");
  EXPECT_EQ(info.priority, 0);
  EXPECT_EQ(info.is_async, 0);
  ASSERT_EQ(info.num_type_constraints, 1);
  EXPECT_STREQ(info.constraint_attrs[0], "T");
  EXPECT_EQ(info.constraint_types[0], TF_FLOAT);
  EXPECT_EQ(info.num_host_memory_args, 0);
  ASSERT_NE(info.op_signature, nullptr);
  EXPECT_CONTAINS(info.op_signature, "AddV2(");
  EXPECT_CONTAINS(info.description, "AddV2 on TESTDEV");

  ASSERT_NE(FindKernel(h.get(), "AddV2_TESTDEV_int32", &info), nullptr);
  ASSERT_EQ(info.num_type_constraints, 1);
  EXPECT_EQ(info.constraint_types[0], TF_INT32);

  ASSERT_NE(FindKernel(h.get(), "MatMul_TESTDEV_float", &info), nullptr);
  EXPECT_CONTAINS(info.op_signature, "transpose_a");

  ASSERT_NE(FindKernel(h.get(), "Identity_TESTDEV_p1", &info), nullptr);
  EXPECT_EQ(info.priority, 1);
  EXPECT_EQ(info.num_type_constraints, 0);
  ASSERT_NE(FindKernel(h.get(), "Identity_TESTDEV_p0", &info), nullptr);
  EXPECT_EQ(info.priority, 0);
  ASSERT_NE(FindKernel(h.get(), "Identity_TESTDEV_special", &info), nullptr);
  EXPECT_STREQ(info.label, "special");

  ASSERT_NE(FindKernel(h.get(), "Shape_TESTDEV_int32", &info), nullptr);
  ASSERT_EQ(info.num_type_constraints, 1);
  EXPECT_STREQ(info.constraint_attrs[0], "out_type");
  EXPECT_EQ(info.constraint_types[0], TF_INT32);
  ASSERT_EQ(info.num_host_memory_args, 1);
  EXPECT_STREQ(info.host_memory_args[0], "output");

  ASSERT_NE(FindKernel(h.get(), "TestAsyncIdentity_TESTDEV", &info), nullptr);
  EXPECT_EQ(info.is_async, 1);
  EXPECT_STREQ(info.op, "TestAsyncIdentity");
  ASSERT_NE(info.op_signature, nullptr);

  for (const char* name : {"TestAttrs_TESTDEV", "TestFail_TESTDEV", "TestConstructFail_TESTDEV",
                           "TestContext_TESTDEV", "TestHostCallback_TESTDEV", "TestTensorApi_TESTDEV",
                           "TestStatusApi_TESTDEV", "TestConcatLike_TESTDEV"}) {
    ASSERT_NE(FindKernel(h.get(), name, &info), nullptr) << name;
    EXPECT_EQ(info.is_async, 0) << name;
    EXPECT_NE(info.op_signature, nullptr) << name;
  }

  std::memset(&info, 0, sizeof info);
  info.struct_size = TFP_KERNEL_INFO_STRUCT_SIZE;
  EXPECT_EQ(tfp_host_kernel_info(h.get(), -1, &info), -1);
  EXPECT_EQ(tfp_host_kernel_info(h.get(), tfp_host_kernel_count(h.get()), &info), -1);
  info.struct_size = 8;
  EXPECT_EQ(tfp_host_kernel_info(h.get(), 0, &info), -1);

  // Plugin-defined ops, in registration order, and signatures.
  std::vector<std::string> ops;
  for (int i = 0; i < tfp_host_op_count(h.get()); ++i) ops.push_back(tfp_host_op_name(h.get(), i));
  EXPECT_EQ(ops, (std::vector<std::string>{"TestAsyncIdentity", "TestAttrs", "TestFail", "TestConstructFail",
                                           "TestContext", "TestHostCallback", "TestTensorApi", "TestStatusApi",
                                           "TestConcatLike"}));
  EXPECT_EQ(tfp_host_op_name(h.get(), -1), nullptr);
  EXPECT_EQ(tfp_host_op_name(h.get(), 9), nullptr);
  EXPECT_CONTAINS(tfp_host_op_signature(h.get(), "TestConcatLike"), "values: N * T");
  // The plugin built "TestRetired" and dropped the builder (TF_DeleteOpDefinitionBuilder).
  EXPECT_EQ(tfp_host_op_signature(h.get(), "TestRetired"), nullptr);
  Status s;
  EXPECT_EQ(tfp_op_new(h.get(), "TestRetired", 0, s), nullptr);
  EXPECT_EQ(s.code(), TF_NOT_FOUND);
  EXPECT_EQ(Counters().registration_errors, 0);
  const char* sig = tfp_host_op_signature(h.get(), "TestAttrs");
  ASSERT_NE(sig, nullptr);
  EXPECT_CONTAINS(sig, "TestAttrs(");
  EXPECT_CONTAINS(sig, "list(string)");
  ASSERT_NE(tfp_host_op_signature(h.get(), "MatMul"), nullptr);
  EXPECT_CONTAINS(tfp_host_op_signature(h.get(), "MatMul"), "transpose_b");
  EXPECT_EQ(tfp_host_op_signature(h.get(), "NoSuchOp"), nullptr);
}

// ---- Running kernels ---------------------------------------------------------

TEST_F(HostTest, AddV2FloatSameShapeForwardsInput) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  std::mt19937 rng(1);
  std::vector<float> x = RandomFloats(6, &rng), y = RandomFloats(6, &rng);
  {
    Op op(h.get(), "AddV2");
    ASSERT_TF_OK(op.status());
    op.Input(MakeTensor(TF_FLOAT, {2, 3}, x)).Input(MakeTensor(TF_FLOAT, {2, 3}, y));
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    ASSERT_EQ(tfp_op_num_outputs(op.get()), 1);
    const TF_Tensor* z = op.Out();
    ASSERT_NE(z, nullptr);
    EXPECT_EQ(TF_TensorType(z), TF_FLOAT);
    EXPECT_EQ(Dims(z), (std::vector<int64_t>{2, 3}));
    std::vector<float> got = Values<float>(z);
    ASSERT_EQ(got.size(), 6u);
    for (size_t i = 0; i < 6; ++i) EXPECT_EQ(got[i], x[i] + y[i]) << i;
    EXPECT_CONTAINS(op.Kernel(), "AddV2 on TESTDEV {T=float}");
    EXPECT_EQ(tfp_op_output(op.get(), 1), nullptr);
    EXPECT_EQ(tfp_op_output(op.get(), -1), nullptr);
    // The inputs were the kernel's alone: TensorFlow forwards one.
    EXPECT_EQ(Counters().addv2_forwarded, 1);

    // Same node, new inputs: same kernel instance.
    tfp_op_clear_inputs(op.get());
    std::vector<float> x2 = RandomFloats(4, &rng), y2 = RandomFloats(4, &rng);
    op.Input(MakeTensor(TF_FLOAT, {4}, x2)).Input(MakeTensor(TF_FLOAT, {4}, y2));
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    got = Values<float>(op.Out());
    ASSERT_EQ(got.size(), 4u);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(got[i], x2[i] + y2[i]) << i;
    EXPECT_EQ(Counters().kernels_created, 1);
  }
  EXPECT_EQ(Counters().kernels_deleted, 1);
  EXPECT_EQ(BytesInUse(), 0);
  EXPECT_EQ(Counters().kernel_errors, 0);
}

// ---- Resource variables --------------------------------------------------------

struct VariableDeleter {
  void operator()(tfp_variable* v) const { tfp_variable_delete(v); }
};
using VariablePtr = std::unique_ptr<tfp_variable, VariableDeleter>;

VariablePtr NewVariable(tfp_host* host, const std::vector<int64_t>& dims, const std::vector<float>& values,
                        int ordinal = 0) {
  Status s;
  VariablePtr v(tfp_variable_new(host, ordinal, MakeTensor(TF_FLOAT, dims, values).get(), s));
  EXPECT_TF_OK(s);
  return v;
}

std::vector<float> ReadVariable(tfp_variable* v) {
  Status s;
  TensorPtr t(tfp_variable_read(v, s));
  EXPECT_TF_OK(s);
  return Values<float>(t.get());
}

// AssignAdd/SubVariableOp and ResourceApplyGradientDescent update the
// variable in place through the shims' variable helpers
// (TF_AssignUpdateVariable; TF_MaybeLockVariableInputMutexesInOrder,
// TF_GetInputTensorFromVariable, TF_ReleaseVariableInputLockHolder), the
// same node again sees the updated value, and the variable's device memory
// goes with it.
TEST_F(HostTest, VariableKernelsUpdateInPlace) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  {
    VariablePtr var = NewVariable(h.get(), {2, 2}, {1, 2, 3, 4});
    ASSERT_NE(var, nullptr);
    EXPECT_EQ(ReadVariable(var.get()), (std::vector<float>{1, 2, 3, 4}));
    Op add(h.get(), "AssignAddVariableOp");
    ASSERT_TF_OK(add.status());
    add.Attr("dtype", "float");
    add.Variable(var.get());
    add.Input(MakeTensor(TF_FLOAT, {2, 2}, std::vector<float>{10, 20, 30, 40}));
    ASSERT_EQ(add.Run(), TF_OK) << add.message();
    EXPECT_EQ(tfp_op_num_outputs(add.get()), 0);
    EXPECT_EQ(ReadVariable(var.get()), (std::vector<float>{11, 22, 33, 44}));
    ASSERT_EQ(add.Run(), TF_OK) << add.message();  // the same inputs again
    EXPECT_EQ(ReadVariable(var.get()), (std::vector<float>{21, 42, 63, 84}));

    Op sub(h.get(), "AssignSubVariableOp");
    sub.Attr("dtype", "float");
    sub.Variable(var.get());
    sub.Input(MakeTensor(TF_FLOAT, {2, 2}, std::vector<float>{1, 2, 3, 4}));
    ASSERT_EQ(sub.Run(), TF_OK) << sub.message();
    EXPECT_EQ(ReadVariable(var.get()), (std::vector<float>{20, 40, 60, 80}));

    Op sgd(h.get(), "ResourceApplyGradientDescent");
    sgd.Attr("T", "float");
    sgd.Variable(var.get());
    sgd.Input(MakeTensor(TF_FLOAT, {}, std::vector<float>{0.5f}));
    sgd.Input(MakeTensor(TF_FLOAT, {2, 2}, std::vector<float>{2, 4, 6, 8}));
    ASSERT_EQ(sgd.Run(), TF_OK) << sgd.message();
    EXPECT_EQ(ReadVariable(var.get()), (std::vector<float>{19, 38, 57, 76}));
    // The lock holder released the variable's lock: a second run takes it again.
    ASSERT_EQ(sgd.Run(), TF_OK) << sgd.message();
    EXPECT_EQ(ReadVariable(var.get()), (std::vector<float>{18, 36, 54, 72}));
  }
  EXPECT_EQ(Counters().kernel_errors, 0);
  EXPECT_EQ(BytesInUse(), 0);
}

// A read held across an update (as TensorFlow holds a ReadVariableOp
// output) shares the variable's buffer: both helpers have the kernel copy
// it first (copyFunc), the read keeps the old value, the variable gets the
// update, and no device bytes leak.
TEST_F(HostTest, VariableCopyOnWriteWhileAReadIsHeld) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  {
    VariablePtr var = NewVariable(h.get(), {3}, {1, 2, 3});
    ASSERT_NE(var, nullptr);
    Status s;
    tfp_variable_hold_read(var.get(), s);
    ASSERT_TF_OK(s);
    tfp_variable_hold_read(var.get(), s);
    EXPECT_EQ(s.code(), TF_FAILED_PRECONDITION) << "a second held read";
    Op add(h.get(), "AssignAddVariableOp");
    add.Attr("dtype", "float");
    add.Variable(var.get());
    add.Input(MakeTensor(TF_FLOAT, {3}, std::vector<float>{10, 20, 30}));
    ASSERT_EQ(add.Run(), TF_OK) << add.message();
    EXPECT_EQ(ReadVariable(var.get()), (std::vector<float>{11, 22, 33}));
    TensorPtr held(tfp_variable_release_read(var.get(), s));
    ASSERT_TF_OK(s);
    EXPECT_EQ(Values<float>(held.get()), (std::vector<float>{1, 2, 3}));
    EXPECT_EQ(tfp_variable_release_read(var.get(), s), nullptr);
    EXPECT_EQ(s.code(), TF_FAILED_PRECONDITION) << "nothing held";

    tfp_variable_hold_read(var.get(), s);  // now through the lock holder's path
    Op sgd(h.get(), "ResourceApplyGradientDescent");
    sgd.Attr("T", "float");
    sgd.Variable(var.get());
    sgd.Input(MakeTensor(TF_FLOAT, {}, std::vector<float>{0.5f}));
    sgd.Input(MakeTensor(TF_FLOAT, {3}, std::vector<float>{2, 4, 6}));
    ASSERT_EQ(sgd.Run(), TF_OK) << sgd.message();
    EXPECT_EQ(ReadVariable(var.get()), (std::vector<float>{10, 20, 30}));
    held.reset(tfp_variable_release_read(var.get(), s));
    ASSERT_TF_OK(s);
    EXPECT_EQ(Values<float>(held.get()), (std::vector<float>{11, 22, 33}));
    tfp_variable_hold_read(var.get(), s);  // still held when the variable goes
  }
  EXPECT_EQ(Counters().kernel_errors, 0);
  EXPECT_EQ(BytesInUse(), 0);
}

// What goes wrong is an error naming the function and input, never a crash:
// a value of another shape (TF_AssignUpdateVariable), a plain tensor where
// a variable belongs, a deleted variable, a variable of another device.
TEST_F(HostTest, VariableErrors) {
  Status s;
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  VariablePtr var = NewVariable(h.get(), {3}, {1, 2, 3});
  ASSERT_NE(var, nullptr);
  {
    Op add(h.get(), "AssignAddVariableOp");
    add.Attr("dtype", "float");
    tfp_op_add_variable(add.get(), var.get(), s);
    ASSERT_TF_OK(s);
    add.Input(MakeTensor(TF_FLOAT, {4}, std::vector<float>{1, 1, 1, 1}));
    EXPECT_EQ(add.Run(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(add.message(), "TF_AssignUpdateVariable");
    EXPECT_CONTAINS(add.message(), "shape [3]");
    EXPECT_CONTAINS(add.message(), "shape [4]");
    EXPECT_EQ(ReadVariable(var.get()), (std::vector<float>{1, 2, 3}));  // untouched
  }
  {
    // A DT_RESOURCE tensor that is no handle of the host's.
    Op sgd(h.get(), "ResourceApplyGradientDescent");
    sgd.Attr("T", "float");
    TensorPtr forged(TF_AllocateTensor(TF_RESOURCE, nullptr, 0, 3));
    ASSERT_NE(forged, nullptr);
    sgd.Input(forged);
    sgd.Input(MakeTensor(TF_FLOAT, {}, std::vector<float>{1}));
    sgd.Input(MakeTensor(TF_FLOAT, {3}, std::vector<float>{1, 1, 1}));
    EXPECT_EQ(sgd.Run(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(sgd.message(), "TF_MaybeLockVariableInputMutexesInOrder input 0");
    EXPECT_CONTAINS(sgd.message(), "not a resource variable handle");
  }
  {
    VariablePtr gone = NewVariable(h.get(), {3}, {0, 0, 0});
    Op add(h.get(), "AssignAddVariableOp");
    add.Attr("dtype", "float");
    tfp_op_add_variable(add.get(), gone.get(), s);
    ASSERT_TF_OK(s);
    add.Input(MakeTensor(TF_FLOAT, {3}, std::vector<float>{1, 1, 1}));
    gone.reset();
    EXPECT_EQ(add.Run(), TF_FAILED_PRECONDITION);
    EXPECT_CONTAINS(add.message(), "TF_AssignUpdateVariable input 0: its variable was deleted");
  }
  {
    VariablePtr other = NewVariable(h.get(), {1}, {0}, 1);  // device 1
    Op add(h.get(), "AssignAddVariableOp");
    tfp_op_add_variable(add.get(), other.get(), s);
    EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(s.message(), "another device");
  }
  // Not a numeric variable; nor on a device the host lacks.
  TensorPtr text(TF_AllocateTensor(TF_STRING, nullptr, 0, 0));
  EXPECT_EQ(tfp_variable_new(h.get(), 0, text.get(), s), nullptr);
  EXPECT_EQ(s.code(), TF_UNIMPLEMENTED);
  EXPECT_EQ(tfp_variable_new(h.get(), 99, MakeTensor(TF_FLOAT, {1}, std::vector<float>{0}).get(), s), nullptr);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  EXPECT_EQ(Counters().kernel_errors, 0);
}

TEST_F(HostTest, AddV2Int32Broadcasting) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  struct Case {
    std::vector<int64_t> xd, yd;
    std::vector<int32_t> x, y;
    std::vector<int64_t> zd;
    std::vector<int32_t> z;
  };
  const int32_t big = INT32_MAX;
  std::vector<Case> cases = {
      {{2, 3}, {}, {1, 2, 3, 4, 5, 6}, {10}, {2, 3}, {11, 12, 13, 14, 15, 16}},      // scalar
      {{}, {3}, {100}, {1, 2, 3}, {3}, {101, 102, 103}},                             // scalar first
      {{2, 3}, {3}, {1, 2, 3, 4, 5, 6}, {10, 20, 30}, {2, 3}, {11, 22, 33, 14, 25, 36}},  // row
      {{2, 1}, {1, 3}, {1, 2}, {10, 20, 30}, {2, 3}, {11, 21, 31, 12, 22, 32}},      // outer
      {{2, 1, 2}, {3, 1}, {1, 2, 3, 4}, {0, 10, 20}, {2, 3, 2},
       {1, 2, 11, 12, 21, 22, 3, 4, 13, 14, 23, 24}},                                // rank 3
      {{2}, {2}, {big, -5}, {1, 5}, {2}, {INT32_MIN, 0}},                            // wraps
      {{0, 3}, {3}, {}, {1, 2, 3}, {0, 3}, {}},                                      // empty
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    Op op(h.get(), "AddV2", static_cast<int>(i % 2));
    op.Input(MakeTensor(TF_INT32, c.xd, c.x)).Input(MakeTensor(TF_INT32, c.yd, c.y));
    ASSERT_EQ(op.Run(), TF_OK) << "case " << i << ": " << op.message();
    EXPECT_EQ(Dims(op.Out()), c.zd) << "case " << i;
    EXPECT_EQ(Values<int32_t>(op.Out()), c.z) << "case " << i;
    EXPECT_CONTAINS(op.Kernel(), "{T=int32}");
  }
  Op bad(h.get(), "AddV2");
  bad.Input(MakeTensor<float>(TF_FLOAT, {2, 3}, std::vector<float>(6, 1.0f)))
      .Input(MakeTensor<float>(TF_FLOAT, {4}, std::vector<float>(4, 1.0f)));
  EXPECT_EQ(bad.Run(), TF_INVALID_ARGUMENT);
  EXPECT_CONTAINS(bad.message(), "Incompatible shapes: [2,3] vs. [4]");
  EXPECT_EQ(Counters().kernel_errors, 0);
}

// C = op(A) * op(B), in double.
std::vector<double> MatMulReference(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                                    int64_t k, int64_t n, bool ta, bool tb) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        double av = ta ? a[static_cast<size_t>(p * m + i)] : a[static_cast<size_t>(i * k + p)];
        double bv = tb ? b[static_cast<size_t>(j * k + p)] : b[static_cast<size_t>(p * n + j)];
        acc += av * bv;
      }
      c[static_cast<size_t>(i * n + j)] = acc;
    }
  }
  return c;
}

void ExpectMatMulClose(const std::vector<float>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5 * std::max(1.0, std::fabs(want[i]))) << what << " element " << i;
  }
}

TEST_F(HostTest, MatMulTransposes) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  std::mt19937 rng(2);
  const int64_t m = 5, k = 7, n = 3;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      std::vector<float> a = RandomFloats(m * k, &rng), b = RandomFloats(k * n, &rng);
      Op op(h.get(), "MatMul", tb);
      op.Attr("transpose_a", ta ? "true" : "false");
      tfp_op_set_attr_bool(op.get(), "transpose_b", tb);
      op.Input(MakeTensor(TF_FLOAT, ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, a))
          .Input(MakeTensor(TF_FLOAT, tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, b));
      ASSERT_EQ(op.Run(), TF_OK) << op.message();
      EXPECT_EQ(Dims(op.Out()), (std::vector<int64_t>{m, n}));
      ExpectMatMulClose(Values<float>(op.Out()), MatMulReference(a, b, m, k, n, ta, tb),
                        "ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
    }
  }
  {
    Op op(h.get(), "MatMul");  // defaults: no transposes
    op.Input(MakeTensor<float>(TF_FLOAT, {2, 3}, std::vector<float>(6, 1.0f)))
        .Input(MakeTensor<float>(TF_FLOAT, {2, 3}, std::vector<float>(6, 1.0f)));
    EXPECT_EQ(op.Run(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(op.message(), "Matrix size-incompatible: In[0]: [2,3], In[1]: [2,3]");
  }
  {
    Op op(h.get(), "MatMul");
    op.Input(MakeTensor<float>(TF_FLOAT, {3}, std::vector<float>(3, 1.0f)))
        .Input(MakeTensor<float>(TF_FLOAT, {3, 1}, std::vector<float>(3, 1.0f)));
    EXPECT_EQ(op.Run(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(op.message(), "In[0] is not a matrix");
  }
  EXPECT_EQ(BytesInUse(), 0);  // outputs and both temporaries went back
  EXPECT_EQ(Counters().kernel_errors, 0);
}

TEST_F(HostTest, IdentityPriority) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  std::vector<float> x = {1.5f, -2.0f, 3.25f, 0.0f};
  for (int dev = 0; dev < 2; ++dev) {
    Op op(h.get(), "Identity", dev);
    op.Input(MakeTensor(TF_FLOAT, {2, 2}, x));
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    EXPECT_EQ(Values<float>(op.Out()), x);
    EXPECT_EQ(Dims(op.Out()), (std::vector<int64_t>{2, 2}));
    EXPECT_CONTAINS(op.Kernel(), "priority=1");
  }
  tfp_test_counters c = Counters();
  EXPECT_EQ(c.identity_loser_runs, 0);  // the priority-0 kernel never ran
  EXPECT_EQ(c.identity_special_runs, 0);
  EXPECT_EQ(c.kernel_errors, 0);
}

TEST_F(HostTest, IdentityLabel) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  {
    Op op(h.get(), "Identity");
    op.Attr("_kernel", "no_such_label");
    op.Input(MakeTensor<float>(TF_FLOAT, {1}, {1.0f}));
    TF_Code code = op.Run();
    EXPECT_EQ(code, TF_NOT_FOUND) << op.message();
    EXPECT_CONTAINS(op.message(), "label");
  }
  {
    Op op(h.get(), "Identity", 1);
    op.Attr("_kernel", "special");
    op.Input(MakeTensor<int32_t>(TF_INT32, {3}, {7, 8, 9}));
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    EXPECT_EQ(Values<int32_t>(op.Out()), (std::vector<int32_t>{7, 8, 9}));
    EXPECT_CONTAINS(op.Kernel(), "label=special");
  }
  tfp_test_counters c = Counters();
  EXPECT_EQ(c.identity_loser_runs, 0);
  EXPECT_EQ(c.identity_special_runs, 1);
  EXPECT_EQ(c.kernel_errors, 0);
}

TEST_F(HostTest, ShapeOutputInHostMemory) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  {
    Op op(h.get(), "Shape");
    op.Input(MakeTensor<float>(TF_FLOAT, {2, 3, 4}, std::vector<float>(24, 0.5f)));
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    EXPECT_EQ(TF_TensorType(op.Out()), TF_INT32);
    EXPECT_EQ(Values<int32_t>(op.Out()), (std::vector<int32_t>{2, 3, 4}));
    EXPECT_CONTAINS(op.Kernel(), "host_memory=[output]");
  }
  {
    Op op(h.get(), "Shape", 1);
    op.Input(MakeTensor<int32_t>(TF_INT32, {}, {5}));
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    EXPECT_EQ(Dims(op.Out()), (std::vector<int64_t>{0}));
  }
  {
    Op op(h.get(), "Shape");  // out_type int64: the plugin has no such kernel
    op.Attr("out_type", "int64");
    op.Input(MakeTensor<float>(TF_FLOAT, {1}, {1.0f}));
    EXPECT_EQ(op.Run(), TF_NOT_FOUND);
    EXPECT_CONTAINS(op.message(), "out_type=int32");
  }
  EXPECT_EQ(Counters().kernel_errors, 0);
}

TEST_F(HostTest, AsyncKernel) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  {
    Op op(h.get(), "TestAsyncIdentity", 1);
    for (int run = 0; run < 3; ++run) {
      std::vector<float> x = {1.0f * run, 2.0f, 3.0f};
      tfp_op_clear_inputs(op.get());
      op.Input(MakeTensor(TF_FLOAT, {3}, x));
      ASSERT_EQ(op.Run(), TF_OK) << op.message();
      EXPECT_EQ(Values<float>(op.Out()), x);
    }
    EXPECT_CONTAINS(op.Kernel(), "async");
    tfp_op_clear_inputs(op.get());
    op.Input(MakeTensor<int64_t>(TF_INT64, {2}, {-1, 1}));  // T changes: a new kernel
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    EXPECT_EQ(Values<int64_t>(op.Out()), (std::vector<int64_t>{-1, 1}));
  }
  tfp_test_counters c = Counters();
  EXPECT_EQ(c.async_on_other_thread, 4);
  EXPECT_EQ(c.kernels_created, 2);
  EXPECT_EQ(c.kernels_deleted, 2);
  EXPECT_EQ(c.kernel_errors, 0);
}

// Walks TestAttrs' output: the values in the order the kernel read them.
class AttrReader {
 public:
  explicit AttrReader(std::vector<float> v) : v_(std::move(v)) {}
  double Next() {
    EXPECT_LT(at_, v_.size()) << "TestAttrs output too short";
    return at_ < v_.size() ? v_[at_++] : -9999.0;
  }
  int64_t Int() { return static_cast<int64_t>(Next()); }
  std::string Str() {
    int64_t n = Int();
    std::string s;
    for (int64_t i = 0; i < n; ++i) s.push_back(static_cast<char>(Int()));
    return s;
  }
  bool done() const { return at_ == v_.size(); }

 private:
  std::vector<float> v_;
  size_t at_ = 0;
};

// A host tensor as TestAttrs reports it: dtype, dims, values (as doubles).
struct TensorSeen {
  int64_t dtype = -1;
  std::vector<int64_t> dims;
  std::vector<double> values;
  bool operator==(const TensorSeen& o) const { return dtype == o.dtype && dims == o.dims && values == o.values; }
};

std::ostream& operator<<(std::ostream& os, const TensorSeen& t) {
  os << "dtype " << t.dtype << " dims [";
  for (int64_t d : t.dims) os << d << " ";
  os << "] values [";
  for (double v : t.values) os << v << " ";
  return os << "]";
}

struct AttrsSeen {
  int64_t i64, i32;
  double f;
  int64_t b, t;
  std::string s;
  int64_t shape_rank;
  std::vector<int64_t> shape_dims;  // GetAttrTensorShape
  std::vector<int64_t> li;
  std::vector<double> lf;
  std::vector<int64_t> lb, lt;
  int64_t ls_total;
  std::vector<std::string> ls;
  std::string name;
  TensorSeen tensor;
  std::vector<TensorSeen> tensors;
  std::string fn;
  std::string node_name, node_op, node_device;  // GetNodeDef
};

TensorSeen ReadTensor(AttrReader* r) {
  TensorSeen t;
  t.dtype = r->Int();
  int64_t rank = r->Int(), n = 1;
  for (int64_t d = 0; d < rank; ++d) {
    t.dims.push_back(r->Int());
    n *= t.dims.back();
  }
  for (int64_t i = 0; i < n; ++i) t.values.push_back(r->Next());
  return t;
}

AttrsSeen ReadAttrs(const TF_Tensor* out) {
  AttrsSeen a;
  AttrReader r(Values<float>(out));
  a.i64 = r.Int();
  a.i32 = r.Int();
  a.f = r.Next();
  a.b = r.Int();
  a.t = r.Int();
  EXPECT_EQ(r.Int(), -1) << "list size of a string attr";
  a.s = r.Str();
  EXPECT_EQ(r.Int(), -1) << "list size of a shape attr";
  a.shape_rank = r.Int();
  for (int64_t i = 0; i < a.shape_rank; ++i) a.shape_dims.push_back(r.Int());
  int64_t n = r.Int();
  for (int64_t i = 0; i < n; ++i) a.li.push_back(r.Int());
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(r.Int(), a.li[static_cast<size_t>(i)]) << "int32 list getter";
  n = r.Int();
  for (int64_t i = 0; i < n; ++i) a.lf.push_back(r.Next());
  n = r.Int();
  for (int64_t i = 0; i < n; ++i) a.lb.push_back(r.Int());
  n = r.Int();
  for (int64_t i = 0; i < n; ++i) a.lt.push_back(r.Int());
  n = r.Int();
  a.ls_total = r.Int();
  for (int64_t i = 0; i < n; ++i) a.ls.push_back(r.Str());
  EXPECT_EQ(r.Int(), 1) << "HasAttr(i)";
  EXPECT_EQ(r.Int(), 0) << "HasAttr(no_such_attr)";
  EXPECT_EQ(r.Int(), -1) << "list size of a scalar int";
  EXPECT_EQ(r.Int(), -1) << "total size of a scalar int";
  a.name = r.Str();
  a.tensor = ReadTensor(&r);
  n = r.Int();
  for (int64_t i = 0; i < n; ++i) a.tensors.push_back(ReadTensor(&r));
  a.fn = r.Str();
  a.node_name = r.Str();
  a.node_op = r.Str();
  a.node_device = r.Str();
  EXPECT_TRUE(r.done()) << "TestAttrs output too long";
  return a;
}

TEST_F(HostTest, AttrsOfEveryKind) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  Op op(h.get(), "TestAttrs");
  ASSERT_TF_OK(op.status());
  tfp_op_set_attr_int(op.get(), "i", -42);
  tfp_op_set_attr_float(op.get(), "f", 2.5f);
  op.Attr("b", "true");
  tfp_op_set_attr_type(op.get(), "t", TF_DOUBLE);
  tfp_op_set_attr_string(op.get(), "s", "abc def");
  op.Attr("shape", "[2, 3, 5]");
  const int64_t li[] = {5, -6, 7, 8};
  tfp_op_set_attr_int_list(op.get(), "li", li, 4);
  op.Attr("lf", "[1.5, -2.25]");
  op.Attr("lb", "[false, true, true]");
  op.Attr("lt", "[int64, bool]");
  op.Attr("ls", "['alpha', '', 'gamma']");
  op.Attr("tensor", "Tensor(DT_FLOAT, [2, 2], [1.5, -2, 0, 4])");
  op.Attr("tensors", "[Tensor(DT_INT32, [3], [7, 8, 9]), Tensor(DT_INT64, [], [-5]), Tensor(DT_BOOL, [0], [])]");
  op.Attr("fn", "'my_function'");
  ASSERT_EQ(op.Run(), TF_OK) << op.message();
  AttrsSeen a = ReadAttrs(op.Out());
  EXPECT_EQ(a.i64, -42);
  EXPECT_EQ(a.i32, -42);
  EXPECT_EQ(a.f, 2.5);
  EXPECT_EQ(a.b, 1);
  EXPECT_EQ(a.t, TF_DOUBLE);
  EXPECT_EQ(a.s, "abc def");
  EXPECT_EQ(a.shape_rank, 3);
  EXPECT_EQ(a.shape_dims, (std::vector<int64_t>{2, 3, 5}));
  EXPECT_EQ(a.li, (std::vector<int64_t>{5, -6, 7, 8}));
  EXPECT_EQ(a.lf, (std::vector<double>{1.5, -2.25}));
  EXPECT_EQ(a.lb, (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(a.lt, (std::vector<int64_t>{TF_INT64, TF_BOOL}));
  EXPECT_EQ(a.ls_total, 10);
  EXPECT_EQ(a.ls, (std::vector<std::string>{"alpha", "", "gamma"}));
  EXPECT_EQ(a.name, "TestAttrs");
  EXPECT_EQ(a.tensor, (TensorSeen{TF_FLOAT, {2, 2}, {1.5, -2, 0, 4}}));
  ASSERT_EQ(a.tensors.size(), 3u);
  EXPECT_EQ(a.tensors[0], (TensorSeen{TF_INT32, {3}, {7, 8, 9}}));
  EXPECT_EQ(a.tensors[1], (TensorSeen{TF_INT64, {}, {-5}}));
  EXPECT_EQ(a.tensors[2], (TensorSeen{TF_BOOL, {0}, {}}));
  EXPECT_EQ(a.fn, "my_function");
  EXPECT_EQ(a.node_name, "TestAttrs");
  EXPECT_EQ(a.node_op, "TestAttrs");
  EXPECT_EQ(a.node_device, "/job:localhost/replica:0/task:0/device:TESTDEV:0");
  EXPECT_EQ(Counters().kernel_errors, 0);
}

TEST_F(HostTest, AttrDefaults) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  Op op(h.get(), "TestAttrs", 1);
  op.Attr("i", "7").Attr("shape", "[]").Attr("tensor", "Tensor(DT_INT32, [], [3])").Attr("fn", "f");
  ASSERT_EQ(op.Run(), TF_OK) << op.message();
  AttrsSeen a = ReadAttrs(op.Out());
  EXPECT_EQ(a.i64, 7);
  EXPECT_EQ(a.f, 0.5);
  EXPECT_EQ(a.b, 0);
  EXPECT_EQ(a.t, TF_INT32);
  EXPECT_EQ(a.s, "hello");
  EXPECT_EQ(a.shape_rank, 0);
  EXPECT_TRUE(a.shape_dims.empty());
  EXPECT_EQ(a.li, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_TRUE(a.lf.empty());
  EXPECT_EQ(a.lb, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(a.lt, (std::vector<int64_t>{TF_FLOAT}));
  EXPECT_EQ(a.ls, (std::vector<std::string>{"x", "yz"}));
  EXPECT_EQ(a.tensor, (TensorSeen{TF_INT32, {}, {3}}));
  EXPECT_TRUE(a.tensors.empty());
  EXPECT_EQ(a.fn, "f");
  EXPECT_EQ(a.node_device, "/job:localhost/replica:0/task:0/device:TESTDEV:1");
  EXPECT_EQ(Counters().kernel_errors, 0);
}

TEST_F(HostTest, AttrErrors) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  {
    Op op(h.get(), "TestAttrs");
    Status s;
    tfp_op_set_attr(op.get(), "b", "maybe", s);
    EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(s.message(), "'b'");
    tfp_op_set_attr(op.get(), "no_such_attr", "1", s);
    EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(s.message(), "no_such_attr");
  }
  {
    // Fits int64 but not int32: GetAttrInt32 fails, so does construction.
    Op op(h.get(), "TestAttrs");
    tfp_op_set_attr_int(op.get(), "i", int64_t{1} << 40);
    op.Attr("shape", "[1]").Attr("tensor", "Tensor(DT_INT32, [], [3])").Attr("fn", "f");
    EXPECT_EQ(op.Run(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(op.message(), "GetAttrInt32(i)");
    EXPECT_CONTAINS(op.message(), "does not fit an int32");
  }
  {
    // A shape with an unknown dimension is no TensorShape: GetAttrTensorShape fails.
    Op op(h.get(), "TestAttrs");
    op.Attr("i", "1").Attr("shape", "[2, ?]").Attr("tensor", "Tensor(DT_INT32, [], [3])").Attr("fn", "f");
    EXPECT_EQ(op.Run(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(op.message(), "GetAttrTensorShape(shape)");
  }
  {
    // The func and tensor attrs have no defaults.
    Op op(h.get(), "TestAttrs");
    op.Attr("i", "1").Attr("shape", "[1]");
    EXPECT_EQ(op.Run(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(op.message(), "is not given");
  }
}

// The contract notes the shims recorded since `from`, for a failure message.
std::string NotesSince(size_t from) {
  std::string all;
  for (size_t i = from; i < tfp_shims_contract_note_count(); ++i) {
    all += std::string("\n  ") + tfp_shims_contract_note(i);
  }
  return all;
}

// "2.21" -> 221, as TestContext reports TF_Version ("2.21.0").
int64_t ReleaseCode(const std::string& release) {
  size_t dot = release.find('.');
  return std::stoll(release.substr(0, dot)) * 100 + std::stoll(release.substr(dot + 1));
}

// TestContext's output, in order (test_plugin.c, context_compute).
std::vector<int64_t> ContextValuesOf(tfp_host* h, int dev) {
  Op op(h, "TestContext", dev);
  op.Input(MakeTensor<int32_t>(TF_INT32, {2}, {1, 2}));
  EXPECT_EQ(op.Run(), TF_OK) << op.message();
  EXPECT_EQ(TF_TensorType(op.Out()), TF_INT64);
  return Values<int64_t>(op.Out());
}

TEST_F(HostTest, ContextValues) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  const size_t notes = tfp_shims_contract_note_count();
  for (int dev = 0; dev < 2; ++dev) {
    std::vector<int64_t> v = ContextValuesOf(h.get(), dev);
    ASSERT_EQ(v.size(), 16u);
    EXPECT_GE(v[10], 0) << "TF_GetGraphDefVersion";
    v[10] = 0;
    // device id, step id > 0, inputs, outputs, frame id, iter id,
    // device name has ":TESTDEV:", input 0 type, output 0 type,
    // TF_GetStepId > 0 (and == TF_StepId), graph def version (checked above),
    // TF_IsRefInput(0), TF_GetOpKernelName == the construction's name,
    // resource container "localhost", TF_GetOpKernelRequestedInput(0) non-empty,
    // TF_Version's major * 100 + minor
    EXPECT_EQ(v, (std::vector<int64_t>{dev, 1, 1, 1, 0, 0, 1, TF_INT32, TF_INT64, 1, 0, 0, 1, 1, 1,
                                       ReleaseCode(TFPLUGIN_TF_RELEASE)}));
  }
  EXPECT_EQ(Counters().kernel_errors, 0);
  EXPECT_EQ(tfp_shims_contract_note_count(), notes) << NotesSince(notes);
}

// ---- The rest of the C API, each call checked inside the plugin ------------------

TEST_F(HostTest, TensorApi) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  const size_t notes = tfp_shims_contract_note_count();
  const std::vector<float> x = {1.5f, -2.0f, 0.0f, 3.25f, -0.0f, 1e-3f};
  {
    Op op(h.get(), "TestTensorApi", 1);
    op.Input(MakeTensor(TF_FLOAT, {2, 3}, x));
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    ASSERT_EQ(tfp_op_num_outputs(op.get()), 2);
    // y: the input's bits as int32, flattened (TF_TensorBitcastFrom, shared with the input)
    std::vector<int32_t> bits(x.size());
    std::memcpy(bits.data(), x.data(), x.size() * sizeof(float));
    EXPECT_EQ(TF_TensorType(op.Out(0)), TF_INT32);
    EXPECT_EQ(Dims(op.Out(0)), (std::vector<int64_t>{6}));
    EXPECT_EQ(Values<int32_t>(op.Out(0)), bits);
    // facts: elements, TF_TensorDefaultAlignment, TF_NewTensor deallocator
    // calls (one in place, one copied), the input is aligned
    EXPECT_EQ(Values<int64_t>(op.Out(1)),
              (std::vector<int64_t>{6, static_cast<int64_t>(TF_TensorDefaultAlignment()), 2, 1}));

    // Empty input, same node and kernel.
    tfp_op_clear_inputs(op.get());
    op.Input(MakeTensor<float>(TF_FLOAT, {0, 3}, {}));
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    EXPECT_EQ(Dims(op.Out(0)), (std::vector<int64_t>{0}));
    EXPECT_EQ(Values<int64_t>(op.Out(1))[0], 0);
  }
  tfp_test_counters c = Counters();
  EXPECT_EQ(c.kernel_errors, 0);
  EXPECT_EQ(c.kernels_created, c.kernels_deleted);
  EXPECT_EQ(BytesInUse(), 0);  // the shared input/output buffer went back once
  EXPECT_EQ(c.bad_deallocations, 0);
  EXPECT_EQ(tfp_shims_contract_note_count(), notes) << NotesSince(notes);
}

// What TensorFlow's ErrnoToCode (tsl/platform/errors.cc) gives each errno.
struct ErrnoCode {
  int err;
  TF_Code code;
};

std::vector<int32_t> StatusApiCodes(tfp_host* h, const std::vector<ErrnoCode>& cases, std::string* error) {
  std::vector<int64_t> errnos;
  for (const ErrnoCode& c : cases) errnos.push_back(c.err);
  Op op(h, "TestStatusApi");
  tfp_op_set_attr_int_list(op.get(), "errnos", errnos.data(), static_cast<int>(errnos.size()));
  if (op.Run() != TF_OK) *error = op.message();
  return Values<int32_t>(op.Out());
}

TEST_F(HostTest, StatusApi) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  const size_t notes = tfp_shims_contract_note_count();
  // The kernel checks payloads, the TSL_ twins and the message format itself;
  // the codes come back out.
  const std::vector<ErrnoCode> cases = {
      {0, TF_OK},
      {ENOENT, TF_NOT_FOUND},
      {EACCES, TF_PERMISSION_DENIED},
      {EPERM, TF_PERMISSION_DENIED},
      {ENOSPC, TF_RESOURCE_EXHAUSTED},
      {ENOMEM, TF_RESOURCE_EXHAUSTED},
      {EINVAL, TF_INVALID_ARGUMENT},
      {EEXIST, TF_ALREADY_EXISTS},
      {ETIMEDOUT, TF_DEADLINE_EXCEEDED},
      {ENOSYS, TF_UNIMPLEMENTED},
      {EAGAIN, TF_UNAVAILABLE},
      {ECANCELED, TF_CANCELLED},
      {EFBIG, TF_OUT_OF_RANGE},
      {EBUSY, TF_FAILED_PRECONDITION},
      {EDEADLK, TF_ABORTED},
      {EIO, TF_UNKNOWN},
      {9999, TF_UNKNOWN},  // no such errno
  };
  std::string error;
  std::vector<int32_t> got = StatusApiCodes(h.get(), cases, &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(got.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(got[i], cases[i].code) << "errno " << cases[i].err;
  {
    Op op(h.get(), "TestStatusApi");  // no errnos: an empty output
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    EXPECT_EQ(Dims(op.Out()), (std::vector<int64_t>{0}));
  }
  {
    // A kernel failing with an errno status: "<context>; <strerror>".
    Op op(h.get(), "TestStatusApi", 1);
    tfp_op_set_attr_int(op.get(), "fail_errno", ENOENT);
    EXPECT_EQ(op.Run(), TF_NOT_FOUND);
    EXPECT_EQ(op.message(), std::string("TestStatusApi: cannot open /no/such/file; ") + std::strerror(ENOENT));
    EXPECT_EQ(tfp_op_num_outputs(op.get()), 0);
  }
  EXPECT_EQ(Counters().kernel_errors, 0);
  EXPECT_EQ(tfp_shims_contract_note_count(), notes) << NotesSince(notes);
}

// The errnos whose code the shims got wrong once: TensorFlow maps them, the
// shims' table (src/shims/status.cc, CodeFromErrno) left them out (UNKNOWN).
TEST_F(HostTest, StatusFromIOErrorRareErrnos) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  const std::vector<ErrnoCode> cases = {
      {ENOSTR, TF_INVALID_ARGUMENT},
      {ENOTBLK, TF_FAILED_PRECONDITION},
      {ESHUTDOWN, TF_FAILED_PRECONDITION},
      {ENOSR, TF_RESOURCE_EXHAUSTED},
  };
  std::string error;
  std::vector<int32_t> got = StatusApiCodes(h.get(), cases, &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(got.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(got[i], cases[i].code) << "errno " << cases[i].err;
}

TEST_F(HostTest, VariadicInputs) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  const size_t notes = tfp_shims_contract_note_count();
  {
    // N = 4 (inferred from the inputs), float, one of them empty.
    Op op(h.get(), "TestConcatLike");
    op.Input(MakeTensor<float>(TF_FLOAT, {2, 3}, {1, 2, 3, 4, 5, 6}))
        .Input(MakeTensor<float>(TF_FLOAT, {1, 3}, {7, 8, 9}))
        .Input(MakeTensor<float>(TF_FLOAT, {0, 3}, {}))
        .Input(MakeTensor<float>(TF_FLOAT, {2, 3}, {10, 11, 12, 13, 14, 15}));
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    EXPECT_EQ(Dims(op.Out()), (std::vector<int64_t>{5, 3}));
    EXPECT_EQ(Values<float>(op.Out()), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
    EXPECT_CONTAINS(op.Kernel(), "TestConcatLike on TESTDEV");
  }
  {
    // N = 1: the list is a single tensor, TF_GetInputByName finds it.
    Op op(h.get(), "TestConcatLike", 1);
    op.Input(MakeTensor<int32_t>(TF_INT32, {4}, {-1, 0, 1, 2}));
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    EXPECT_EQ(Values<int32_t>(op.Out()), (std::vector<int32_t>{-1, 0, 1, 2}));
  }
  {
    // Any fixed-size type, N given explicitly, rank 3.
    Op op(h.get(), "TestConcatLike");
    op.Attr("N", "2");
    op.Input(MakeTensor<int64_t>(TF_INT64, {1, 1, 2}, {INT64_MAX, INT64_MIN}))
        .Input(MakeTensor<int64_t>(TF_INT64, {2, 1, 2}, {1, 2, 3, 4}));
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    EXPECT_EQ(Dims(op.Out()), (std::vector<int64_t>{3, 1, 2}));
    EXPECT_EQ(Values<int64_t>(op.Out()), (std::vector<int64_t>{INT64_MAX, INT64_MIN, 1, 2, 3, 4}));
  }
  tfp_test_counters c = Counters();
  EXPECT_EQ(c.concat_computes, 3);
  EXPECT_EQ(c.kernel_errors, 0);
  EXPECT_EQ(c.kernels_created, c.kernels_deleted);
  EXPECT_EQ(BytesInUse(), 0);
  EXPECT_EQ(tfp_shims_contract_note_count(), notes) << NotesSince(notes);  // outputs as inferred
}

struct BadShapes {
  std::vector<std::vector<int64_t>> inputs;
  std::string message;
};

// A plugin op's shape function failing fails the node before its kernel runs.
TEST_F(HostTest, ShapeFunctionRejectsBadRanks) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  const std::vector<BadShapes> cases = {
      {{{}}, "Shape must be at least rank 1 but is rank 0"},                           // WithRankAtLeast
      {{{1, 1, 1, 1, 1, 1, 1, 1, 1}}, "Shape must be at most rank 8 but is rank 9"},   // WithRankAtMost
      {{{2, 3}, {3}}, "Shape must be rank 2 but is rank 1"},                           // WithRank
      {{{2, 3}, {2, 3}, {1, 3, 1}}, "Shape must be rank 2 but is rank 3"},
      {{{2, 3}, {2, 4}}, "TestConcatLike: dimension 1 of input 1 is 4, of input 0 3"},  // Dim
  };
  for (const BadShapes& bad : cases) {
    SCOPED_TRACE(bad.message);
    Op op(h.get(), "TestConcatLike");
    for (const auto& dims : bad.inputs) {
      int64_t n = 1;
      for (int64_t d : dims) n *= d;
      op.Input(MakeTensor(TF_FLOAT, dims, std::vector<float>(static_cast<size_t>(n), 1.0f)));
    }
    EXPECT_EQ(op.Run(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(op.message(), bad.message);
    EXPECT_CONTAINS(op.message(), "TestConcatLike");
    EXPECT_EQ(tfp_op_num_outputs(op.get()), 0);
  }
  tfp_test_counters c = Counters();
  EXPECT_EQ(c.concat_computes, 0);  // no kernel ran
  EXPECT_EQ(c.kernel_errors, 0);
  EXPECT_EQ(BytesInUse(), 0);
}

// ---- Errors -------------------------------------------------------------------

TEST_F(HostTest, UnknownOp) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  Status s;
  EXPECT_EQ(tfp_op_new(h.get(), "NoSuchOp", 0, s), nullptr);
  EXPECT_EQ(s.code(), TF_NOT_FOUND);
  EXPECT_CONTAINS(s.message(), "NoSuchOp");
  EXPECT_EQ(tfp_op_new(h.get(), "AddV2", 5, s), nullptr);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  tfp_op_run(nullptr, s);
  EXPECT_EQ(s.code(), TF_INVALID_ARGUMENT);
  tfp_op_delete(nullptr);
}

TEST_F(HostTest, NoKernelForType) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  Op op(h.get(), "AddV2");
  op.Input(MakeTensor<int64_t>(TF_INT64, {1}, {1})).Input(MakeTensor<int64_t>(TF_INT64, {1}, {2}));
  EXPECT_EQ(op.Run(), TF_NOT_FOUND);
  EXPECT_CONTAINS(op.message(), "'AddV2'");
  EXPECT_CONTAINS(op.message(), "TESTDEV");
  EXPECT_CONTAINS(op.message(), "AddV2 on TESTDEV {T=float}");
  EXPECT_CONTAINS(op.message(), "AddV2 on TESTDEV {T=int32}");
  EXPECT_CONTAINS(op.message(), "T=int64");
  EXPECT_EQ(tfp_op_num_outputs(op.get()), 0);
  EXPECT_EQ(tfp_op_kernel(op.get()), nullptr);

  Op sub(h.get(), "Sub");  // TensorFlow's op, no TESTDEV kernel at all
  sub.Input(MakeTensor<float>(TF_FLOAT, {1}, {1})).Input(MakeTensor<float>(TF_FLOAT, {1}, {2}));
  EXPECT_EQ(sub.Run(), TF_NOT_FOUND);
  EXPECT_CONTAINS(sub.message(), "'Sub'");
  EXPECT_CONTAINS(sub.message(), "no kernel of this op is registered");
}

TEST_F(HostTest, MissingRequiredAttr) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  Op op(h.get(), "TestFail");
  EXPECT_EQ(op.Run(), TF_INVALID_ARGUMENT);
  EXPECT_CONTAINS(op.message(), "attr 'code' is not given");
  EXPECT_EQ(Counters().kernels_created, 0);
}

TEST_F(HostTest, WrongInputs) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  {
    Op op(h.get(), "AddV2");
    op.Input(MakeTensor<float>(TF_FLOAT, {1}, {1}));
    EXPECT_EQ(op.Run(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(op.message(), "takes 2 inputs, given 1");
  }
  {
    Op op(h.get(), "AddV2");
    for (int i = 0; i < 3; ++i) op.Input(MakeTensor<float>(TF_FLOAT, {1}, {1}));
    EXPECT_EQ(op.Run(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(op.message(), "takes 2 inputs, given 3");
  }
  {
    Op op(h.get(), "AddV2");  // T is float from x, y is int32
    op.Input(MakeTensor<float>(TF_FLOAT, {1}, {1})).Input(MakeTensor<int32_t>(TF_INT32, {1}, {1}));
    EXPECT_EQ(op.Run(), TF_INVALID_ARGUMENT);
    EXPECT_CONTAINS(op.message(), "has type int32 but attr 'T' is float");
  }
  {
    Op op(h.get(), "MatMul");
    EXPECT_EQ(op.Run(), TF_INVALID_ARGUMENT);  // no inputs
    EXPECT_CONTAINS(op.message(), "takes 2 inputs, given 0");
  }
  EXPECT_EQ(Counters().kernels_created, 0);  // none got as far as a kernel
}

TEST_F(HostTest, KernelFailureComesBackUnchanged) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  {
    Op op(h.get(), "TestFail");
    tfp_op_set_attr_int(op.get(), "code", TF_FAILED_PRECONDITION);
    tfp_op_set_attr_string(op.get(), "message", "custom failure: 42% of nothing");
    EXPECT_EQ(op.Run(), TF_FAILED_PRECONDITION);
    EXPECT_EQ(op.message(), "custom failure: 42% of nothing");
    EXPECT_EQ(tfp_op_num_outputs(op.get()), 0);
  }
  {
    Op op(h.get(), "TestFail", 1);
    op.Attr("code", "8");  // RESOURCE_EXHAUSTED, default message
    EXPECT_EQ(op.Run(), TF_RESOURCE_EXHAUSTED);
    EXPECT_EQ(op.message(), "TestFail failed as asked");
  }
  {
    Op op(h.get(), "TestFail");
    op.Attr("code", "0");  // succeeds
    EXPECT_EQ(op.Run(), TF_OK) << op.message();
    EXPECT_EQ(Dims(op.Out()), (std::vector<int64_t>{0}));
  }
  EXPECT_EQ(BytesInUse(), 0);
}

TEST_F(HostTest, ConstructionFailure) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  {
    Op op(h.get(), "TestConstructFail");
    for (int run = 0; run < 2; ++run) {
      EXPECT_EQ(op.Run(), TF_FAILED_PRECONDITION);
      EXPECT_CONTAINS(op.message(), "kernel construction of TestConstructFail on TESTDEV failed");
      EXPECT_CONTAINS(op.message(), "TestConstructFail refuses to be constructed");
      EXPECT_EQ(tfp_op_num_outputs(op.get()), 0);
    }
  }
  tfp_test_counters c = Counters();
  EXPECT_EQ(c.construct_fail_computes, 0);
  EXPECT_EQ(c.kernels_created, 2);
  EXPECT_EQ(c.kernels_deleted, 2);  // the failed kernels' state is not leaked
}

TEST_F(HostTest, StreamFailureIsReportedAndSticky) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  {
    Op op(h.get(), "TestHostCallback", 1);
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    EXPECT_EQ(Values<int32_t>(op.Out()), (std::vector<int32_t>{1}));  // ran exactly once
  }
  EXPECT_EQ(Counters().host_callbacks, 1);
  {
    Op op(h.get(), "TestHostCallback", 1);
    op.Attr("fail", "true");
    EXPECT_EQ(op.Run(), TF_DATA_LOSS);
    EXPECT_CONTAINS(op.message(), "the host callback failed on purpose");
  }
  {
    // Device 1's stream stays failed: later work there fails with its error...
    Op op(h.get(), "AddV2", 1);
    op.Input(MakeTensor<float>(TF_FLOAT, {1}, {1})).Input(MakeTensor<float>(TF_FLOAT, {1}, {2}));
    EXPECT_EQ(op.Run(), TF_DATA_LOSS);
    EXPECT_CONTAINS(op.message(), "failed on purpose");
  }
  {
    // ...while device 0 is unaffected.
    Op op(h.get(), "AddV2", 0);
    op.Input(MakeTensor<float>(TF_FLOAT, {1}, {1})).Input(MakeTensor<float>(TF_FLOAT, {1}, {2}));
    ASSERT_EQ(op.Run(), TF_OK) << op.message();
    EXPECT_EQ(Values<float>(op.Out()), (std::vector<float>{3}));
  }
  EXPECT_EQ(Counters().host_callbacks, 2);
  h.reset();
  ExpectBalanced(Counters());
}

// ---- TFP_TEST_FAIL: a misbehaving plugin is a status, never an abort ---------

struct FailMode {
  const char* mode;
  TF_Code code;
  std::vector<std::string> message_parts;
};

TEST_F(HostTest, FailureModes) {
  const std::vector<FailMode> modes = {
      {"se_init", TF_INTERNAL, {"SE_InitPlugin", "TFP_TEST_FAIL=se_init"}},
      {"no_struct_size", TF_FAILED_PRECONDITION, {"SP_Platform.struct_size", "SP_PLATFORM_STRUCT_SIZE"}},
      {"null_memset", TF_FAILED_PRECONDITION, {"SP_StreamExecutor.memset is NULL"}},
      {"bad_name", TF_FAILED_PRECONDITION, {"SP_Platform.name", "'testdev'"}},
  };
  for (const FailMode& m : modes) {
    SCOPED_TRACE(m.mode);
    Plugin().reset();
    {
      Status s;
      ScopedEnv env("TFP_TEST_FAIL", m.mode);
      HostPtr h = OpenHost(s);
      EXPECT_EQ(h, nullptr);
      EXPECT_EQ(s.code(), m.code) << s.message();
      EXPECT_CONTAINS(s.message(), PluginPath());
      for (const std::string& part : m.message_parts) EXPECT_CONTAINS(s.message(), part);
    }
    tfp_test_counters c = Counters();
    EXPECT_EQ(c.se_init_calls, 1);
    EXPECT_EQ(c.init_kernel_calls, 0);
    // Whatever was created got destroyed; the platform once registered is
    // destroyed once (not at all if SE_InitPlugin itself failed).
    ExpectBalanced(c);
    const int64_t registered = std::string(m.mode) == "se_init" ? 0 : 1;
    EXPECT_EQ(c.destroy_platform, registered);
    EXPECT_EQ(c.destroy_platform_fns, registered);
  }
  // And the plugin is fine once the variable is gone.
  Plugin().reset();
  HostPtr h = Open();
  EXPECT_NE(h, nullptr);
}

// ---- Teardown -------------------------------------------------------------------

TEST_F(HostTest, TeardownCallsEveryDestroyOnce) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  std::mt19937 rng(3);
  {
    Op add(h.get(), "AddV2"), mm(h.get(), "MatMul", 1), id(h.get(), "Identity", 1), as(h.get(), "TestAsyncIdentity");
    add.Input(MakeTensor(TF_FLOAT, {8}, RandomFloats(8, &rng))).Input(MakeTensor(TF_FLOAT, {8}, RandomFloats(8, &rng)));
    mm.Input(MakeTensor(TF_FLOAT, {4, 4}, RandomFloats(16, &rng))).Input(MakeTensor(TF_FLOAT, {4, 4}, RandomFloats(16, &rng)));
    id.Input(MakeTensor(TF_FLOAT, {3}, RandomFloats(3, &rng)));
    as.Input(MakeTensor(TF_FLOAT, {5}, RandomFloats(5, &rng)));
    for (Op* op : {&add, &mm, &id, &as}) ASSERT_EQ(op->Run(), TF_OK) << op->message();
    // A buffer of our own is still out while the ops exist.
    Status s;
    void* p = tfp_host_allocate(h.get(), 0, 4096, s);
    ASSERT_TF_OK(s);
    EXPECT_EQ(BytesInUse(), 4096);
    tfp_host_deallocate(h.get(), 0, p, 4096);
    EXPECT_EQ(Counters().kernels_created, 4);
  }
  EXPECT_EQ(BytesInUse(), 0);
  EXPECT_EQ(Counters().kernels_deleted, 4);
  h.reset();
  tfp_test_counters c = Counters();
  EXPECT_EQ(c.create_device, 2);
  EXPECT_EQ(c.destroy_device, 2);
  EXPECT_EQ(c.create_stream, 2);
  EXPECT_EQ(c.destroy_stream, 2);
  EXPECT_EQ(c.destroy_device_fns, 1);
  EXPECT_EQ(c.destroy_stream_executor, 1);
  EXPECT_EQ(c.destroy_platform, 1);
  EXPECT_EQ(c.destroy_platform_fns, 1);
  EXPECT_EQ(c.destroy_timer_fns, 0);  // never created in 2.21
  EXPECT_GT(c.device_allocs, 0);
  ExpectBalanced(c);
}

// ---- Threads --------------------------------------------------------------------

TEST_F(HostTest, FourThreadsOneHost) {
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  constexpr int kThreads = 4, kRuns = 200;
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      const bool matmul = t % 2 == 1;
      Op op(h.get(), matmul ? "MatMul" : "AddV2", t / 2);
      for (int run = 0; run < kRuns; ++run) {
        tfp_op_clear_inputs(op.get());
        const int64_t m = 1 + run % 5, k = 1 + run % 7, n = 1 + run % 3;
        std::vector<float> a = RandomFloats(matmul ? m * k : 16, &rng);
        std::vector<float> b = RandomFloats(matmul ? k * n : 16, &rng);
        Status s;
        TensorPtr ta = matmul ? MakeTensor(TF_FLOAT, {m, k}, a) : MakeTensor(TF_FLOAT, {4, 4}, a);
        TensorPtr tb = matmul ? MakeTensor(TF_FLOAT, {k, n}, b) : MakeTensor(TF_FLOAT, {4, 4}, b);
        tfp_op_add_input(op.get(), ta.get(), s);
        tfp_op_add_input(op.get(), tb.get(), s);
        tfp_op_run(op.get(), s);
        if (s.code() != TF_OK) {
          if (failed++ == 0) ADD_FAILURE() << "thread " << t << " run " << run << ": " << s.message();
          continue;
        }
        std::vector<float> got = Values<float>(tfp_op_output(op.get(), 0));
        bool ok;
        if (matmul) {
          std::vector<double> want = MatMulReference(a, b, m, k, n, false, false);
          ok = got.size() == want.size();
          for (size_t i = 0; ok && i < got.size(); ++i) {
            ok = std::fabs(got[i] - want[i]) <= 1e-5 * std::max(1.0, std::fabs(want[i]));
          }
        } else {
          ok = got.size() == a.size();
          for (size_t i = 0; ok && i < got.size(); ++i) ok = got[i] == a[i] + b[i];
        }
        if (!ok) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(BytesInUse(), 0);
  tfp_test_counters c = Counters();
  EXPECT_EQ(c.kernels_created, kThreads);
  EXPECT_EQ(c.kernels_deleted, kThreads);
  EXPECT_EQ(c.kernel_errors, 0);
  EXPECT_EQ(c.bad_deallocations, 0);
}

// ---- Discovery ------------------------------------------------------------------

std::vector<std::string> Paths(char** paths) {
  std::vector<std::string> v;
  for (char** p = paths; p != nullptr && *p != nullptr; ++p) v.push_back(*p);
  return v;
}

TEST_F(HostTest, Discovery) {
  char dir[] = "/tmp/tfp_discover_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string d = dir;
  for (const char* f : {"d.txt", "c.so.x", "b.so.1", "a.so"}) std::ofstream(d + "/" + f) << "x";
  Status s;
  char** paths = nullptr;
  EXPECT_EQ(tfp_host_discover(dir, &paths, s), 2);
  EXPECT_TF_OK(s);
  EXPECT_EQ(Paths(paths), (std::vector<std::string>{d + "/a.so", d + "/b.so.1"}));
  tfp_host_free_paths(paths);

  // A file is itself.
  EXPECT_EQ(tfp_host_discover(PluginPath(), &paths, s), 1);
  EXPECT_EQ(Paths(paths), (std::vector<std::string>{PluginPath()}));
  tfp_host_free_paths(paths);

  EXPECT_EQ(tfp_host_discover((d + "/missing").c_str(), &paths, s), -1);
  EXPECT_EQ(s.code(), TF_NOT_FOUND);
  tfp_host_free_paths(paths);  // NULL: harmless

  {
    ScopedEnv env("TF_PLUGGABLE_DEVICE_LIBRARY_PATH", dir);
    EXPECT_EQ(tfp_host_discover_env(&paths, s), 2);
    EXPECT_TF_OK(s);
    EXPECT_EQ(Paths(paths), (std::vector<std::string>{d + "/a.so", d + "/b.so.1"}));
    tfp_host_free_paths(paths);
  }
  {
    ScopedEnv env("TF_PLUGGABLE_DEVICE_LIBRARY_PATH", "");
    EXPECT_EQ(tfp_host_discover_env(&paths, s), 0);
    EXPECT_TF_OK(s);
    EXPECT_TRUE(Paths(paths).empty());
    tfp_host_free_paths(paths);
  }
  unsetenv("TF_PLUGGABLE_DEVICE_LIBRARY_PATH");
  EXPECT_EQ(tfp_host_discover_env(&paths, s), 0);
  EXPECT_TF_OK(s);
  tfp_host_free_paths(paths);
  {
    // What TensorFlow would find there, it can load.
    ScopedEnv env("TF_PLUGGABLE_DEVICE_LIBRARY_PATH", PluginPath());
    ASSERT_EQ(tfp_host_discover_env(&paths, s), 1);
    HostPtr h = OpenHost(s, nullptr, 0, paths[0]);
    EXPECT_TF_OK(s);
    EXPECT_STREQ(tfp_host_platform_name(h.get()), "TESTDEV");
    tfp_host_free_paths(paths);
  }

  for (const char* f : {"d.txt", "c.so.x", "b.so.1", "a.so"}) std::remove((d + "/" + f).c_str());
  rmdir(dir);
}

// ---- Opening again, and emulating older releases ------------------------------

TEST_F(HostTest, ReopenRegistersEverythingAgain) {
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    Plugin().reset();
    HostPtr h = Open();
    ASSERT_NE(h, nullptr);
    // Every earlier test opened the plugin too: a host that forgets the
    // plugin's ops on close lets it register them again.
    EXPECT_EQ(Counters().registration_errors, 0);
    EXPECT_EQ(tfp_host_kernel_count(h.get()), 23);
    EXPECT_EQ(tfp_host_op_count(h.get()), 9);
    Op op(h.get(), "TestContext");
    op.Input(MakeTensor<float>(TF_FLOAT, {1}, {1}));
    EXPECT_EQ(op.Run(), TF_OK) << op.message();
  }
}

struct Emulated {
  const char* release;
  int64_t platform_size, se_size;
  int64_t memory_growth;
};

TEST_F(HostTest, EmulatesOlderReleases) {
  // 2.5: SP_Platform ends at use_bfc_allocator and SP_StreamExecutor has no
  // mem_zero/memset/memset32; 2.9 has both. Both require timer fns.
  const std::vector<Emulated> releases = {
      {"2.9", int64_t{SP_PLATFORM_STRUCT_SIZE}, int64_t{SP_STREAMEXECUTOR_STRUCT_SIZE}, 1},
      {"2.5", int64_t{TF_OFFSET_OF_END(SP_Platform, use_bfc_allocator)},
       int64_t{SP_STREAMEXECUTOR_STRUCT_SIZE} - 3 * int64_t{sizeof(void*)}, 0},
  };
  for (const Emulated& r : releases) {
    SCOPED_TRACE(r.release);
    Plugin().reset();
    {
      HostPtr h = Open(r.release);
      ASSERT_NE(h, nullptr);
      EXPECT_STREQ(tfp_host_release(h.get()), r.release);
      tfp_test_counters c = Counters();
      EXPECT_EQ(c.seen_platform_struct_size, r.platform_size);
      EXPECT_EQ(c.seen_se_struct_size, r.se_size);
      EXPECT_EQ(c.set_force_memory_growth, r.memory_growth);
      EXPECT_EQ(c.create_timer_fns, 1);
      EXPECT_EQ(c.seen_timer_fns_struct_size, int64_t{SP_TIMER_FNS_STRUCT_SIZE});
      EXPECT_EQ(tfp_host_device_count(h.get()), 2);

      std::mt19937 rng(4);
      std::vector<float> a = RandomFloats(6, &rng), b = RandomFloats(6, &rng);
      Op mm(h.get(), "MatMul", 1);
      mm.Input(MakeTensor(TF_FLOAT, {2, 3}, a)).Input(MakeTensor(TF_FLOAT, {3, 2}, b));
      ASSERT_EQ(mm.Run(), TF_OK) << mm.message();
      ExpectMatMulClose(Values<float>(mm.Out()), MatMulReference(a, b, 2, 3, 2, false, false), r.release);
      // TF_Version follows the emulated release.
      std::vector<int64_t> v = ContextValuesOf(h.get(), 0);
      ASSERT_EQ(v.size(), 16u);
      EXPECT_EQ(v[15], ReleaseCode(r.release));
    }
    tfp_test_counters c = Counters();
    EXPECT_EQ(c.destroy_timer_fns, 1);
    EXPECT_EQ(c.destroy_platform, 1);
    ExpectBalanced(c);
  }
  // Back to the newest, explicitly: tests after this one must not depend on
  // the NoReleaseMeansTheNewest bug being fixed.
  HostPtr newest = Open(TFPLUGIN_TF_RELEASE);
}

TEST_F(HostTest, NoReleaseMeansTheNewest) {
  { HostPtr h = Open("2.5"); }
  HostPtr h = Open();
  ASSERT_NE(h, nullptr);
  EXPECT_STREQ(tfp_host_release(h.get()), TFPLUGIN_TF_RELEASE);
  EXPECT_EQ(Counters().seen_platform_struct_size, int64_t{SP_PLATFORM_STRUCT_SIZE});
}

}  // namespace
