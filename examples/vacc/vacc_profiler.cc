// SPDX-License-Identifier: Apache-2.0
//
// TF_InitProfiler: vacc's pluggable profiler. With it, tf.profiler (and
// TensorBoard's profile tools) see every VACC kernel launch: one XPlane per
// device, one line per stream, one event per kernel (node name, op type,
// start and duration on the compute unit that ran it). Without it TensorFlow
// records nothing for kernels on a PluggableDevice.
//
// What TensorFlow does with these callbacks (pluggable profiler C API,
// releases 2.7 and later):
//   - TF_InitProfiler runs once when the plugin is loaded, after
//     SE_InitPlugin. TF owns `params` and the TP_Profiler / TP_ProfilerFns it
//     points to, pre-fills their struct_size, and requires device_type and
//     every callback below (it refuses the plugin otherwise).
//   - Per profiling session (tf.profiler.experimental.start ... stop, one at
//     a time): start, then stop, then collect_data_xspace twice: first with
//     buffer == NULL to learn the size, then with a buffer of that size.
//     All on TF's profiler thread; status arrives TF_OK.
//   - destroy_profiler / destroy_profiler_fns at teardown: vacc allocated
//     nothing in them, so they only clear what it set.
// TODO(vendor): time kernels with the device's own timestamps (and add
// memcpy and other device activity) instead of host clocks around the work.
#include <cstring>
#include <mutex>
#include <string>

#include "tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h"
#include "tensorflow/c/tf_status.h"
#include "profiler/vacc_profiler_session.h"
#include "vacc_config.h"
#include "vacc_struct_size.h"

#if TFPLUGIN_PROFILER_REVISION >= 1  // the profiler C API exists from TF 2.7

namespace vacc {
namespace {

constexpr char kProfiledDeviceType[] = "VACC";  // TODO(vendor): your platform's type

// The last session's XSpace, serialized once when it stops, so the size
// query and the copy that follows see the same bytes.
std::mutex g_collected_mu;
std::string g_collected;  // guarded by g_collected_mu
int g_device_count = 1;   // set by TF_InitProfiler

void SetError(TF_Status* status, TF_Code code, const std::string& message) {
  TF_SetStatus(status, code, message.c_str());
}

void Start(const TP_Profiler*, TF_Status* status) {
  std::string error;
  if (!profiler::StartSession(&error)) return SetError(status, TF_FAILED_PRECONDITION, error);
  std::lock_guard<std::mutex> lock(g_collected_mu);
  g_collected.clear();
  TF_SetStatus(status, TF_OK, "");
}

void Stop(const TP_Profiler* profiler, TF_Status* status) {
  std::string error;
  if (!profiler::StopSession(&error)) return SetError(status, TF_FAILED_PRECONDITION, error);
  const char* type = profiler->device_type != nullptr ? profiler->device_type : kProfiledDeviceType;
  std::string space = profiler::SerializeSession(type, g_device_count);
  std::lock_guard<std::mutex> lock(g_collected_mu);
  g_collected = std::move(space);
  TF_SetStatus(status, TF_OK, "");
}

// In: *size_in_bytes is the buffer's size (ignored when buffer is NULL).
// Out: *size_in_bytes = the XSpace's size; the XSpace in buffer if given.
void CollectDataXSpace(const TP_Profiler*, uint8_t* buffer, size_t* size_in_bytes,
                       TF_Status* status) {
  if (size_in_bytes == nullptr) {
    return SetError(status, TF_INVALID_ARGUMENT, "collect_data_xspace: size_in_bytes is NULL");
  }
  std::lock_guard<std::mutex> lock(g_collected_mu);
  const size_t capacity = *size_in_bytes;
  *size_in_bytes = g_collected.size();
  if (buffer == nullptr) return TF_SetStatus(status, TF_OK, "");
  if (capacity < g_collected.size()) {
    return SetError(status, TF_INVALID_ARGUMENT,
                    "collect_data_xspace: buffer of " + std::to_string(capacity) +
                        " bytes, the XSpace needs " + std::to_string(g_collected.size()));
  }
  if (!g_collected.empty()) std::memcpy(buffer, g_collected.data(), g_collected.size());
  TF_SetStatus(status, TF_OK, "");
}

void DestroyProfiler(TP_Profiler* profiler) { profiler->device_type = nullptr; }

void DestroyProfilerFns(TP_ProfilerFns* fns) {
  fns->start = nullptr;
  fns->stop = nullptr;
  fns->collect_data_xspace = nullptr;
}

}  // namespace
}  // namespace vacc

extern "C" __attribute__((visibility("default"))) void TF_InitProfiler(
    TF_ProfilerRegistrationParams* params, TF_Status* status) {
  using namespace vacc;
  Config config;
  std::string error;
  if (!Config::FromEnvironment(&config, &error)) {
    return SetError(status, TF_INVALID_ARGUMENT, "TF_InitProfiler: " + error);
  }
  g_device_count = config.device_count;

  const size_t params_size = VACC_NEGOTIATE(params, TF_ProfilerRegistrationParams,
                                            TF_PROFILER_REGISTRATION_PARAMS, status);
  if (params_size == 0) return;
  // The version fields are TensorFlow's to fill (a TF_ struct); 0: not said.
  if (params->major_version != 0 && params->major_version != TP_MAJOR) {
    return SetError(status, TF_FAILED_PRECONDITION,
                    "TF_InitProfiler: TensorFlow's pluggable profiler API is version " +
                        std::to_string(params->major_version) + ".x, this plugin was built for " +
                        std::to_string(TP_MAJOR) + ".x");
  }
  if (params->profiler == nullptr || params->profiler_fns == nullptr) {
    return SetError(status, TF_INVALID_ARGUMENT,
                    "TF_InitProfiler: params->profiler and params->profiler_fns must be set by "
                    "the caller");
  }
  TP_Profiler* profiler = params->profiler;
  const size_t psize = VACC_NEGOTIATE(profiler, TP_Profiler, TP_PROFILER, status);
  if (psize == 0) return;
  TP_ProfilerFns* fns = params->profiler_fns;
  const size_t fsize = VACC_NEGOTIATE(fns, TP_ProfilerFns, TP_PROFILER_FNS, status);
  if (fsize == 0) return;

  profiler->struct_size = psize;
  VACC_SET(profiler, psize, ext, nullptr);
  VACC_SET(profiler, psize, device_type, kProfiledDeviceType);
  fns->struct_size = fsize;
  VACC_SET(fns, fsize, ext, nullptr);
  VACC_SET(fns, fsize, start, Start);
  VACC_SET(fns, fsize, stop, Stop);
  VACC_SET(fns, fsize, collect_data_xspace, CollectDataXSpace);
  VACC_SET(params, params_size, destroy_profiler, DestroyProfiler);
  VACC_SET(params, params_size, destroy_profiler_fns, DestroyProfilerFns);
  TF_SetStatus(status, TF_OK, "");
}

#endif  // TFPLUGIN_PROFILER_REVISION >= 1
