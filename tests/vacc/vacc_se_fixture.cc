// SPDX-License-Identifier: Apache-2.0
#include "vacc_se_fixture.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

namespace vacc_test {
namespace {

// Every variable the plugin reads (examples/vacc/vacc_config.cc).
const char* const kVaccVariables[] = {
    "VACC_DEVICE_COUNT", "VACC_THREADS",          "VACC_MEMORY_MB", "VACC_SPIN_US",
    "VACC_GFLOPS",       "VACC_MEMORY_BANDWIDTH", "VACC_USE_BFC",   "VACC_MEMORY_GROWTH",
};

void HostCallbackTrampoline(void* arg, TF_Status* status) {
  std::unique_ptr<std::function<void(TF_Status*)>> fn(
      static_cast<std::function<void(TF_Status*)>*>(arg));
  (*fn)(status);
}

}  // namespace

std::string Describe(const TF_Status* status) {
  return std::to_string(static_cast<int>(TF_GetCode(status))) + ": " + TF_Message(status);
}

ScopedVaccEnv::ScopedVaccEnv(const EnvVars& vars) {
  for (const char* name : kVaccVariables) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::make_unique<std::string>(old) : nullptr);
    unsetenv(name);
  }
  for (const auto& [name, value] : vars) {
    bool known = false;
    for (const auto& s : saved_) known = known || s.first == name;
    if (!known) {
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old ? std::make_unique<std::string>(old) : nullptr);
    }
    setenv(name.c_str(), value.c_str(), 1);
  }
}

ScopedVaccEnv::~ScopedVaccEnv() {
  for (const auto& [name, old] : saved_) {
    if (old) {
      setenv(name.c_str(), old->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
}

InitPluginFn LoadInitPlugin(std::string* error) {
  const char* path = std::getenv("TFP_VACC_PLUGIN");
  if (path == nullptr || *path == '\0') {
    *error = "TFP_VACC_PLUGIN is not set (run the test through meson test)";
    return nullptr;
  }
  return FindPluginFunction<InitPluginFn>(path, RTLD_NOW | RTLD_LOCAL, "SE_InitPlugin", error);
}

std::unique_ptr<VaccPlatform> VaccPlatform::Load(const EnvVars& env, std::string* error) {
  ScopedVaccEnv scoped_env(env);
  InitPluginFn init = LoadInitPlugin(error);
  if (init == nullptr) return nullptr;

  std::unique_ptr<VaccPlatform> p(new VaccPlatform());
  StatusPtr status = NewStatus();
  auto failed = [&](const char* step) {
    if (TF_GetCode(status.get()) == TF_OK) return false;
    *error = std::string(step) + " failed: " + Describe(status.get());
    return true;
  };

  PlatformRegistration& reg = p->reg_;
  init(&reg.params, status.get());
  if (failed("SE_InitPlugin")) return nullptr;
  p->registered_ = true;
  const SP_PlatformFns& fns = reg.platform_fns;
  if (fns.create_device_fns == nullptr || fns.create_stream_executor == nullptr ||
      fns.create_timer_fns == nullptr || fns.create_device == nullptr ||
      fns.get_device_count == nullptr || fns.destroy_device == nullptr) {
    *error = "SE_InitPlugin left an SP_PlatformFns callback NULL";
    return nullptr;
  }

  reg.CreateDeviceFns(&p->device_fns_, status.get());
  if (failed("create_device_fns")) return nullptr;
  p->have_device_fns_ = true;

  reg.CreateStreamExecutor(&p->se_, status.get());
  if (failed("create_stream_executor")) return nullptr;
  p->have_se_ = true;

  p->timer_fns_.struct_size = SP_TIMER_FNS_STRUCT_SIZE;
  fns.create_timer_fns(&reg.platform, &p->timer_fns_, status.get());
  if (failed("create_timer_fns")) return nullptr;
  p->have_timer_fns_ = true;

  int count = 0;
  fns.get_device_count(&reg.platform, &count, status.get());
  if (failed("get_device_count")) return nullptr;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    SP_Device device{};
    reg.CreateDevice(ordinal, &device, status.get());
    if (failed("create_device")) return nullptr;
    p->devices_.push_back(std::make_unique<SP_Device>(device));  // TF's copy
  }
  return p;
}

VaccPlatform::~VaccPlatform() {
  if (!registered_) return;
  const SP_PlatformFns& fns = reg_.platform_fns;
  for (auto& d : devices_) fns.destroy_device(&reg_.platform, d.get());
  devices_.clear();
  if (have_device_fns_) fns.destroy_device_fns(&reg_.platform, &device_fns_);
  if (have_se_) fns.destroy_stream_executor(&reg_.platform, &se_);
  if (have_timer_fns_) fns.destroy_timer_fns(&reg_.platform, &timer_fns_);
  reg_.Destroy();
}

Stream::Stream(const VaccPlatform& p, int ordinal) : se_(p.se()), device_(p.device(ordinal)) {
  StatusPtr status = NewStatus();
  se_.create_stream(device_, &stream_, status.get());
  EXPECT_EQ(TF_GetCode(status.get()), TF_OK) << Describe(status.get());
  EXPECT_NE(stream_, nullptr);
}

Stream::~Stream() {
  if (stream_ != nullptr) se_.destroy_stream(device_, stream_);
}

Event::Event(const VaccPlatform& p, int ordinal) : se_(p.se()), device_(p.device(ordinal)) {
  StatusPtr status = NewStatus();
  se_.create_event(device_, &event_, status.get());
  EXPECT_EQ(TF_GetCode(status.get()), TF_OK) << Describe(status.get());
  EXPECT_NE(event_, nullptr);
}

Event::~Event() {
  if (event_ != nullptr) se_.destroy_event(device_, event_);
}

DeviceMemory::DeviceMemory(const VaccPlatform& p, uint64_t size, int ordinal)
    : se_(p.se()), device_(p.device(ordinal)) {
  mem_.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE;
  se_.allocate(device_, size, 0, &mem_);
}

DeviceMemory::~DeviceMemory() { Free(); }

void DeviceMemory::Free() {
  if (mem_.opaque != nullptr) se_.deallocate(device_, &mem_);
  mem_.opaque = nullptr;
  mem_.size = 0;
}

SP_DeviceMemoryBase DeviceMemory::Slice(uint64_t offset, uint64_t size) const {
  return MemoryAt(data() + offset, size);
}

SP_DeviceMemoryBase MemoryAt(void* opaque, uint64_t size) {
  SP_DeviceMemoryBase m{};
  m.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE;
  m.opaque = opaque;
  m.size = size;
  return m;
}

bool EnqueueHostCallback(const VaccPlatform& p, SP_Stream stream,
                         std::function<void(TF_Status*)> fn, int ordinal) {
  auto* ctx = new std::function<void(TF_Status*)>(std::move(fn));
  const bool ok = p.se().host_callback(p.device(ordinal), stream, HostCallbackTrampoline, ctx);
  if (!ok) delete ctx;
  return ok;
}

std::vector<uint8_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed * 2654435761u + 12345u;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    v[i] = static_cast<uint8_t>((x >> 16) ^ i);
  }
  return v;
}

bool VaccSeTest::Load(const EnvVars& env) {
  std::string error;
  p_ = VaccPlatform::Load(env, &error);
  if (p_ == nullptr) ADD_FAILURE() << "loading libvacc.so: " << error;
  return p_ != nullptr;
}

}  // namespace vacc_test
