// SPDX-License-Identifier: Apache-2.0
//
// TensorFlow's side of registering libvacc.so, for the tests and benchmarks
// that load the plugin without TensorFlow: the init function looked up as
// TF's loaders do, and the structs TF owns during a registration, pre-filled
// as TF pre-fills them: every struct_size TF's own, the API version TF was
// built with, the structs the plugin fills pointed at.
//
// TensorFlow's order (stream_executor's plugin loader; the profiler's):
//   dlopen(RTLD_NOW | RTLD_LOCAL), dlsym(SE_InitPlugin), SE_InitPlugin,
//   create_device_fns, create_stream_executor, ..., create_device per
//   ordinal; TF_InitProfiler with its own params. A plugin is never closed.
// Header-only, no gtest: bench/ includes it too.
#ifndef TESTS_VACC_VACC_TF_REGISTRATION_H_
#define TESTS_VACC_VACC_TF_REGISTRATION_H_

#include <dlfcn.h>

#include <string>

#include "tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h"
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/tf_status.h"

namespace vacc_test {

// dlopen(path, flags), then dlsym(symbol) as Fn; nullptr and *error on
// failure. The library is not closed (TensorFlow never unloads a plugin):
// opening it again returns the same handle.
template <typename Fn>
Fn FindPluginFunction(const std::string& path, int flags, const char* symbol,
                      std::string* error) {
  void* handle = dlopen(path.c_str(), flags);
  if (handle == nullptr) {
    *error = "dlopen(" + path + "): " + dlerror();
    return nullptr;
  }
  void* sym = dlsym(handle, symbol);
  if (sym == nullptr) {
    *error = path + " exports no " + symbol;
    return nullptr;
  }
  return reinterpret_cast<Fn>(sym);
}

// SE_InitPlugin's params, pointing at the structs the plugin fills (their
// struct_size is the caller's to set).
inline SE_PlatformRegistrationParams PlatformParams(SP_Platform* platform, SP_PlatformFns* fns) {
  SE_PlatformRegistrationParams params{};
  params.struct_size = SE_PLATFORM_REGISTRATION_PARAMS_STRUCT_SIZE;
  params.major_version = SE_MAJOR;
  params.minor_version = SE_MINOR;
  params.patch_version = SE_PATCH;
  params.platform = platform;
  params.platform_fns = fns;
  return params;
}

// SE_InitPlugin's arguments. Not copyable: params points into it.
struct PlatformRegistration {
  SE_PlatformRegistrationParams params{};
  SP_Platform platform{};
  SP_PlatformFns platform_fns{};

  PlatformRegistration() {
    platform.struct_size = SP_PLATFORM_STRUCT_SIZE;
    platform_fns.struct_size = SP_PLATFORM_FNS_STRUCT_SIZE;
    params = PlatformParams(&platform, &platform_fns);
  }
  PlatformRegistration(const PlatformRegistration&) = delete;
  PlatformRegistration& operator=(const PlatformRegistration&) = delete;

  // create_device_fns into *out.
  void CreateDeviceFns(SP_DeviceFns* out, TF_Status* status) {
    SE_CreateDeviceFnsParams p{};
    p.struct_size = SE_CREATE_DEVICE_FNS_PARAMS_STRUCT_SIZE;
    out->struct_size = SP_DEVICE_FNS_STRUCT_SIZE;
    p.device_fns = out;
    platform_fns.create_device_fns(&platform, &p, status);
  }
  // create_stream_executor into *out.
  void CreateStreamExecutor(SP_StreamExecutor* out, TF_Status* status) {
    SE_CreateStreamExecutorParams p{};
    p.struct_size = SE_CREATE_STREAM_EXECUTOR_PARAMS_STRUCT_SIZE;
    out->struct_size = SP_STREAMEXECUTOR_STRUCT_SIZE;
    p.stream_executor = out;
    platform_fns.create_stream_executor(&platform, &p, status);
  }
  // create_device for `ordinal` into *out.
  void CreateDevice(int ordinal, SP_Device* out, TF_Status* status) {
    SE_CreateDeviceParams p{};
    p.struct_size = SE_CREATE_DEVICE_PARAMS_STRUCT_SIZE;
    p.ordinal = ordinal;
    out->struct_size = SP_DEVICE_STRUCT_SIZE;
    p.device = out;
    platform_fns.create_device(&platform, &p, status);
  }
  // TensorFlow's last step: destroy_platform, destroy_platform_fns (where set).
  void Destroy() {
    if (params.destroy_platform != nullptr) params.destroy_platform(&platform);
    if (params.destroy_platform_fns != nullptr) params.destroy_platform_fns(&platform_fns);
  }
};

// TF_InitProfiler's arguments. Not copyable: params points into it.
struct ProfilerRegistration {
  TP_Profiler profiler{};
  TP_ProfilerFns fns{};
  TF_ProfilerRegistrationParams params{};

  ProfilerRegistration() {
    params.struct_size = TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE;
    params.major_version = TP_MAJOR;
    params.minor_version = TP_MINOR;
    params.patch_version = TP_PATCH;
    profiler.struct_size = TP_PROFILER_STRUCT_SIZE;
    fns.struct_size = TP_PROFILER_FNS_STRUCT_SIZE;
    params.profiler = &profiler;
    params.profiler_fns = &fns;
  }
  ProfilerRegistration(const ProfilerRegistration&) = delete;
  ProfilerRegistration& operator=(const ProfilerRegistration&) = delete;

  // What TensorFlow calls when the profiler goes: destroy_profiler,
  // destroy_profiler_fns (where set).
  void Destroy() {
    if (params.destroy_profiler != nullptr) params.destroy_profiler(&profiler);
    if (params.destroy_profiler_fns != nullptr) params.destroy_profiler_fns(&fns);
  }
};

}  // namespace vacc_test

#endif  // TESTS_VACC_VACC_TF_REGISTRATION_H_
