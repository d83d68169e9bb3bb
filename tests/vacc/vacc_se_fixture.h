// SPDX-License-Identifier: Apache-2.0
//
// Loads libvacc.so the way TensorFlow's PluggableDevice loader does and
// hands the tests its callback tables, plus RAII helpers for the handles the
// tests create. Path of the plugin: $TFP_VACC_PLUGIN (set by meson test).
//
// TensorFlow's order (stream_executor/plugin loader):
//   dlopen(RTLD_NOW | RTLD_LOCAL), dlsym("SE_InitPlugin"), SE_InitPlugin,
//   create_device_fns, create_stream_executor, create_timer_fns, then per
//   ordinal create_device (TF keeps a copy of the SP_Device by value) and
//   get_device_count. Teardown: destroy_device per device,
//   destroy_device_fns, destroy_stream_executor, destroy_timer_fns,
//   destroy_platform, destroy_platform_fns.
// The plugin reads its VACC_* variables in SE_InitPlugin: Load sets the ones
// a test asks for (and clears every other VACC_* variable) only while it
// loads, and restores the environment afterwards.
#ifndef TESTS_VACC_VACC_SE_FIXTURE_H_
#define TESTS_VACC_VACC_SE_FIXTURE_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/tf_status.h"
#include "vacc_tf_registration.h"

namespace vacc_test {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// ---- TF_Status

struct StatusDeleter {
  void operator()(TF_Status* s) const { TF_DeleteStatus(s); }
};
using StatusPtr = std::unique_ptr<TF_Status, StatusDeleter>;
inline StatusPtr NewStatus() { return StatusPtr(TF_NewStatus()); }

// "CODE: message", for assertion output.
std::string Describe(const TF_Status* status);

// ---- environment

// Sets `vars` and unsets every other VACC_* variable the plugin reads; the
// destructor restores what was there before.
class ScopedVaccEnv {
 public:
  explicit ScopedVaccEnv(const EnvVars& vars);
  ~ScopedVaccEnv();
  ScopedVaccEnv(const ScopedVaccEnv&) = delete;
  ScopedVaccEnv& operator=(const ScopedVaccEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::unique_ptr<std::string>>> saved_;
};

// ---- loading

// dlopen(RTLD_NOW | RTLD_LOCAL) of $TFP_VACC_PLUGIN and dlsym of
// SE_InitPlugin. The library is never closed (TensorFlow never unloads a
// plugin); loading again returns the same handle. NULL and *error on failure.
using InitPluginFn = void (*)(SE_PlatformRegistrationParams*, TF_Status*);
InitPluginFn LoadInitPlugin(std::string* error);

// A registered platform with its devices, torn down in TF's order.
class VaccPlatform {
 public:
  // Full registration with `env` in place. NULL and *error on failure (a
  // partly registered platform is torn down again).
  static std::unique_ptr<VaccPlatform> Load(const EnvVars& env, std::string* error);
  ~VaccPlatform();
  VaccPlatform(const VaccPlatform&) = delete;
  VaccPlatform& operator=(const VaccPlatform&) = delete;

  const SP_Platform& platform() const { return reg_.platform; }
  const SP_PlatformFns& platform_fns() const { return reg_.platform_fns; }
  const SP_DeviceFns& device_fns() const { return device_fns_; }
  const SP_StreamExecutor& se() const { return se_; }
  const SP_TimerFns& timer_fns() const { return timer_fns_; }
  const SE_PlatformRegistrationParams& params() const { return reg_.params; }
  // What get_device_count reported (and the number of devices created).
  int device_count() const { return static_cast<int>(devices_.size()); }
  // TF's by-value copy of the SP_Device create_device filled for `ordinal`.
  const SP_Device* device(int ordinal = 0) const { return devices_.at(ordinal).get(); }

 private:
  VaccPlatform() = default;

  PlatformRegistration reg_;
  SP_DeviceFns device_fns_{};
  SP_StreamExecutor se_{};
  SP_TimerFns timer_fns_{};
  bool registered_ = false, have_device_fns_ = false, have_se_ = false, have_timer_fns_ = false;
  std::vector<std::unique_ptr<SP_Device>> devices_;
};

// ---- handles (each must not outlive the VaccPlatform it came from)

class Stream {
 public:
  Stream(const VaccPlatform& p, int ordinal = 0);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  SP_Stream get() const { return stream_; }
  operator SP_Stream() const { return stream_; }

 private:
  const SP_StreamExecutor& se_;
  const SP_Device* device_;
  SP_Stream stream_ = nullptr;
};

class Event {
 public:
  Event(const VaccPlatform& p, int ordinal = 0);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  SP_Event get() const { return event_; }
  operator SP_Event() const { return event_; }

 private:
  const SP_StreamExecutor& se_;
  const SP_Device* device_;
  SP_Event event_ = nullptr;
};

// Device memory from allocate (memory space 0), deallocated on destruction.
class DeviceMemory {
 public:
  DeviceMemory(const VaccPlatform& p, uint64_t size, int ordinal = 0);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  SP_DeviceMemoryBase* get() { return &mem_; }
  const SP_DeviceMemoryBase& mem() const { return mem_; }
  char* data() const { return static_cast<char*>(mem_.opaque); }
  uint64_t size() const { return mem_.size; }
  // An SP_DeviceMemoryBase for [offset, offset + size) of this allocation,
  // the way TensorFlow passes a sub-buffer.
  SP_DeviceMemoryBase Slice(uint64_t offset, uint64_t size) const;
  // Deallocates now (the destructor then does nothing).
  void Free();

 private:
  const SP_StreamExecutor& se_;
  const SP_Device* device_;
  SP_DeviceMemoryBase mem_{};
};

// An SP_DeviceMemoryBase naming arbitrary memory (what a caller bug passes).
SP_DeviceMemoryBase MemoryAt(void* opaque, uint64_t size);

// Enqueues `fn` as a host callback; its context is freed inside the
// trampoline, as TensorFlow does, so a callback run twice or never shows up
// under ASan. Returns what host_callback returned (the context is freed at
// once if it returned false).
bool EnqueueHostCallback(const VaccPlatform& p, SP_Stream stream,
                         std::function<void(TF_Status*)> fn, int ordinal = 0);

// n pseudo-random bytes, a different sequence for each seed (never uniform,
// so a copy or fill that hits the wrong bytes shows).
std::vector<uint8_t> Pattern(size_t n, uint32_t seed);

// ---- the fixture

class VaccSeTest : public ::testing::Test {
 protected:
  // Loads the plugin with `env`; ADD_FAILURE and false on failure. Use as
  // ASSERT_TRUE(Load({...})).
  bool Load(const EnvVars& env = {});
  void TearDown() override { p_.reset(); }

  const VaccPlatform& p() const { return *p_; }
  const SP_StreamExecutor& se() const { return p_->se(); }
  const SP_Device* dev(int ordinal = 0) const { return p_->device(ordinal); }

  std::unique_ptr<VaccPlatform> p_;
};

}  // namespace vacc_test

#endif  // TESTS_VACC_VACC_SE_FIXTURE_H_
