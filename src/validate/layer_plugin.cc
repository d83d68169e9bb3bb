// SPDX-License-Identifier: Apache-2.0
// libtfplugin_layer.so: the validation layer (interposer.h) as a plugin
// TensorFlow (or the SDK host) loads in place of the real one. It loads the
// plugin named by TFPLUGIN_LAYER_PLUGIN, forwards the entry points to it,
// and after SE_InitPlugin interposes every callback: SE_PlatformRegistrationParams'
// and SP_PlatformFns' at once, SP_DeviceFns, SP_StreamExecutor and
// SP_TimerFns as the platform callbacks that fill them return. Violations go
// to stderr (and TFPLUGIN_LAYER_JSON, one JSON object per line); with
// TFPLUGIN_LAYER_ABORT=1 the first one aborts the process. The TF C API it
// uses (TF_GetCode, TF_SetStatus) comes from the process, as a plugin's does.
// docs/validation-layer.md lists the environment variables.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "callback_table.h"
#include "interposer.h"
#include "plugin_struct.h"
#include "rules.h"
#include "tensorflow/c/tf_status.h"

namespace tfp_validator {
namespace {

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? v : nullptr;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

class Layer {
 public:
  Layer() {
    const tfp_shims::ReleaseLayouts* newest = nullptr;
    for (const tfp_shims::ReleaseLayouts& r : tfp_shims::kReleaseLayouts) newest = &r;
    release_ = Env("TFPLUGIN_LAYER_TF_RELEASE") ? Env("TFPLUGIN_LAYER_TF_RELEASE") : newest->release;
    abort_ = Env("TFPLUGIN_LAYER_ABORT") != nullptr && std::strcmp(Env("TFPLUGIN_LAYER_ABORT"), "0") != 0;
    if (const char* path = Env("TFPLUGIN_LAYER_JSON")) json_ = std::fopen(path, "a");
    interposer_ = new Interposer(release_, [this](const LayerReport& r) { Report(r); });
    if (const char* path = Env("TFPLUGIN_LAYER_TRACE")) {
      if (FILE* trace = std::fopen(path, "a")) interposer_->SetTrace(trace);
    }
    interposer_->SetAfterCall([this](const CallbackSignature& sig, void** args) {
      AfterCall(sig, args);
    });
    const char* plugin = Env("TFPLUGIN_LAYER_PLUGIN");
    if (plugin == nullptr) {
      error_ = "TFPLUGIN_LAYER_PLUGIN is not set: name the plugin the layer should load";
    } else if ((real_ = dlopen(plugin, RTLD_NOW | RTLD_LOCAL)) == nullptr) {
      const char* e = dlerror();
      error_ = std::string("cannot load ") + plugin + ": " + (e != nullptr ? e : "?");
    }
    if (!error_.empty()) std::fprintf(stderr, "tfplugin-layer: %s\n", error_.c_str());
  }

  ~Layer() {
    if (Env("TFPLUGIN_LAYER_QUIET") == nullptr) {
      std::fprintf(stderr, "tfplugin-layer: %llu calls checked, %zu violations\n",
                   static_cast<unsigned long long>(interposer_->calls()), interposer_->reports());
    }
    if (json_ != nullptr) std::fclose(json_);
    // The interposer stays: the plugin may outlive us until exit.
  }

  // The real plugin's entry point, or NULL (with a status when one is given).
  void* Entry(const char* name) {
    if (real_ == nullptr) return nullptr;
    return dlsym(real_, name);
  }
  const std::string& error() const { return error_; }

  // Struct `name` at `base`, as the targeted release lays it out.
  void Install(const char* name, void* base) {
    if (base != nullptr) interposer_->Install(tfp_shims::FindLayout(release_, name), base);
  }
  // A pointer field of struct `name` at `base`.
  void* Field(const char* name, const void* base, const char* field) {
    const tfp_shims::FieldLayout* f = tfp_shims::FindField(tfp_shims::FindLayout(release_, name), field);
    void* p = nullptr;
    if (base != nullptr && f != nullptr && f->size == sizeof p) {
      std::memcpy(&p, static_cast<const unsigned char*>(base) + f->offset, sizeof p);
    }
    return p;
  }

 private:
  // The platform callbacks that fill other callback tables: interpose those
  // before TF reads them.
  void AfterCall(const CallbackSignature& sig, void** args) {
    if (std::strcmp(sig.struct_name, "SP_PlatformFns") != 0 || sig.param_count < 2) return;
    void* arg = *static_cast<void**>(args[1]);
    if (std::strcmp(sig.field, "create_stream_executor") == 0) {
      Install("SP_StreamExecutor", Field("SE_CreateStreamExecutorParams", arg, "stream_executor"));
    } else if (std::strcmp(sig.field, "create_device_fns") == 0) {
      Install("SP_DeviceFns", Field("SE_CreateDeviceFnsParams", arg, "device_fns"));
    } else if (std::strcmp(sig.field, "create_timer_fns") == 0) {
      Install("SP_TimerFns", arg);
    }
  }

  void Report(const LayerReport& r) {
    std::lock_guard<std::mutex> lock(mu_);
    const char* id = GetRule(r.rule).id;
    std::fprintf(stderr,
                 "tfplugin-layer: error[%s] %s (device %s): %s\n  expected: %s\n  actual:   %s\n",
                 id, r.callback.c_str(), r.device.c_str(), r.detail.c_str(), r.want.c_str(),
                 r.got.c_str());
    if (json_ != nullptr) {
      std::fprintf(json_,
                   "{\"rule_id\": %s, \"callback\": %s, \"device\": %s, \"message\": %s, "
                   "\"expected\": %s, \"actual\": %s}\n",
                   JsonString(id).c_str(), JsonString(r.callback).c_str(),
                   JsonString(r.device).c_str(), JsonString(r.detail).c_str(),
                   JsonString(r.want).c_str(), JsonString(r.got).c_str());
      std::fflush(json_);
    }
    if (abort_) {
      std::fprintf(stderr, "tfplugin-layer: TFPLUGIN_LAYER_ABORT is set: aborting\n");
      std::abort();
    }
  }

  std::mutex mu_;
  std::string release_;
  std::string error_;
  bool abort_ = false;
  FILE* json_ = nullptr;
  void* real_ = nullptr;
  Interposer* interposer_ = nullptr;
};

Layer& TheLayer() {
  static Layer layer;
  return layer;
}

// Calls the real plugin's entry point `name` (void(void* params, TF_Status*)),
// or sets `status` to why there is none; false then.
bool Forward(const char* name, void* params, TF_Status* status) {
  void* entry = TheLayer().Entry(name);
  if (entry == nullptr) {
    const std::string why = !TheLayer().error().empty()
                                ? TheLayer().error()
                                : std::string("the plugin does not export ") + name;
    if (status != nullptr) TF_SetStatus(status, TF_FAILED_PRECONDITION, ("tfplugin layer: " + why).c_str());
    return false;
  }
  reinterpret_cast<void (*)(void*, TF_Status*)>(entry)(params, status);
  return true;
}

}  // namespace
}  // namespace tfp_validator

using tfp_validator::TheLayer;

extern "C" {

__attribute__((visibility("default"))) void SE_InitPlugin(void* params, TF_Status* status) {
  if (!tfp_validator::Forward("SE_InitPlugin", params, status) || TF_GetCode(status) != TF_OK)
    return;
  // TF copies these after SE_InitPlugin returns: closures in place now.
  TheLayer().Install("SE_PlatformRegistrationParams", params);
  TheLayer().Install("SP_PlatformFns",
                     TheLayer().Field("SE_PlatformRegistrationParams", params, "platform_fns"));
}

__attribute__((visibility("default"))) void TF_InitKernel(void) {
  if (void* entry = TheLayer().Entry("TF_InitKernel")) reinterpret_cast<void (*)(void)>(entry)();
}

// Graph and profiler entry points: only in the variants built with them
// (libtfplugin_layer_graph.so, _profiler, _full). TensorFlow calls each one a
// plugin exports and fails the whole load when it registers nothing, so the
// layer must export exactly what the real plugin does. Forwarded as is
// (their callbacks are not interposed yet).
#ifdef TFPLUGIN_LAYER_GRAPH
__attribute__((visibility("default"))) void TF_InitGraph(void* params, TF_Status* status) {
  tfp_validator::Forward("TF_InitGraph", params, status);
}
#endif  // TFPLUGIN_LAYER_GRAPH

#ifdef TFPLUGIN_LAYER_PROFILER
__attribute__((visibility("default"))) void TF_InitProfiler(void* params, TF_Status* status) {
  tfp_validator::Forward("TF_InitProfiler", params, status);
}
#endif  // TFPLUGIN_LAYER_PROFILER

}  // extern "C"
