// SPDX-License-Identifier: Apache-2.0
// tfp_host: loading a plugin as TensorFlow does (host.h), listing what it
// registered, device memory, and finding plugins as TF's scan does.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "host_internal.h"
#include "op_def.h"
#include "shim_internal.h"
#include "tfplugin_shims.h"

namespace {

using tfp_shims::HostPlatform;

constexpr const char* kEntryNames[TFP_ENTRY_COUNT] = {
    "SE_InitPlugin", "TF_InitKernel", "TF_InitGraph", "TF_InitProfiler", "TFNPD_InitPlugin", "GetPjrtApi"};

// Registration is process-wide in TensorFlow (global registries) and here:
// one plugin initialises at a time.
std::mutex g_load_mu;
std::atomic<int> g_next_id{1};

using tfp_shims::Fail;

// dlopen's message, with what the emulated release says about a missing symbol.
std::string LoadError(const std::string& path, const std::string& release) {
  const char* e = dlerror();
  std::string msg = "cannot load plugin " + path + ": " + (e ? e : "unknown dlopen error");
  size_t at = msg.find("undefined symbol: ");
  if (at != std::string::npos) {
    std::string sym = msg.substr(at + 18);
    sym = sym.substr(0, sym.find_first_of(" ,\n"));
    msg += " (" + sym + " is not part of TensorFlow's plugin C API in any release the shims know, up to " +
           release + "; TensorFlow loads plugins with RTLD_NOW and would reject this one too)";
  }
  return msg;
}

tfp_shims::HostPlatform::Device* DeviceOf(tfp_host* h, int ordinal, TF_Status* status) {
  if (h == nullptr || h->platform == nullptr) {
    Fail(status, TF_FAILED_PRECONDITION, "the plugin registered no device (no SE_InitPlugin)");
    return nullptr;
  }
  auto* d = h->platform->device(ordinal);
  if (d == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT,
         "no device " + std::to_string(ordinal) + " (the plugin has " + std::to_string(h->platform->device_count()) + ")");
  }
  return d;
}

void CollectRegistrations(tfp_host* h) {
  for (const auto& def : tfp_shims::RegisteredKernels()) {
    if (def.owner != h->id) continue;
    h->kernels.push_back(tfp_host::Kernel{def, {}, {}, {}, {}, {}});
  }
  for (auto& k : h->kernels) {  // pointers into k.def: taken once the vector is final
    for (auto& c : k.def.type_constraints) {
      k.constraint_attrs.push_back(c.first.c_str());
      k.constraint_types.push_back(c.second);
    }
    for (auto& a : k.def.host_memory_args) k.host_memory_args.push_back(a.c_str());
    const tfp_shims::OpDef* op = tfp_shims::LookupOp(k.def.op);
    if (op != nullptr) k.signature = op->Signature();
    k.description = k.def.Describe() + (op == nullptr ? "  [unknown op: TensorFlow cannot use this kernel]" : "");
  }
  h->ops = tfp_shims::PluginOpNamesOf(h->id);
}

}  // namespace

extern "C" {

tfp_host* tfp_host_open(const char* path, const tfp_host_options* options, TF_Status* status) {
  if (path == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "tfp_host_open: NULL path");
    return nullptr;
  }
  if (options != nullptr && options->struct_size < TFP_HOST_OPTIONS_STRUCT_SIZE) {
    Fail(status, TF_INVALID_ARGUMENT,
         "tfp_host_options.struct_size is " + std::to_string(options->struct_size) + ", expected " +
             std::to_string(TFP_HOST_OPTIONS_STRUCT_SIZE) + " (TFP_HOST_OPTIONS_STRUCT_SIZE)");
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(g_load_mu);
  // NULL means the newest release, whatever an earlier host emulated.
  const char* release = options != nullptr && options->tf_release != nullptr ? options->tf_release
                                                                             : TFPLUGIN_TF_RELEASE;
  if (tfp_shims_set_release(release) != 0) {
    Fail(status, TF_INVALID_ARGUMENT, std::string("unknown TensorFlow release '") + release + "'");
    return nullptr;
  }
  auto h = std::make_unique<tfp_host>();
  h->id = g_next_id.fetch_add(1);
  h->path = path;
  h->release = tfp_shims_release();

  struct stat st;
  if (stat(path, &st) != 0) {
    Fail(status, TF_NOT_FOUND, "cannot load plugin " + h->path + ": " + std::strerror(errno));
    return nullptr;
  }
  dlerror();
  h->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h->handle == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, LoadError(h->path, h->release));
    return nullptr;
  }
  for (unsigned i = 0; i < TFP_ENTRY_COUNT; ++i) {
    if (dlsym(h->handle, kEntryNames[i]) != nullptr) h->entry_points |= 1u << i;
  }
  if ((h->entry_points & (TFP_ENTRY_SE_INIT_PLUGIN | TFP_ENTRY_TF_INIT_KERNEL)) == 0) {
    Fail(status, TF_NOT_FOUND,
         "plugin " + h->path + " exports neither SE_InitPlugin nor TF_InitKernel (missing extern \"C\"? "
         "hidden visibility?)");
    dlclose(h->handle);
    return nullptr;
  }
  if (h->entry_points & TFP_ENTRY_SE_INIT_PLUGIN) {
    auto init = reinterpret_cast<tfp_shims::SEInitPluginFn>(dlsym(h->handle, "SE_InitPlugin"));
    h->platform = std::make_unique<HostPlatform>(h->release);
    tfp_shims::SetRegistrant(h->id);  // a plugin may register ops from here too
    bool ok = h->platform->Init(init, status);
    tfp_shims::SetRegistrant(0);
    if (!ok) {
      std::string msg = h->path + ": " + TF_Message(status);
      TF_Code code = TF_GetCode(status);
      h->platform.reset();  // tears down what was created
      dlclose(h->handle);
      Fail(status, code, msg);
      return nullptr;
    }
  }
  if ((h->entry_points & TFP_ENTRY_TF_INIT_KERNEL) && !(options != nullptr && options->skip_kernels)) {
    auto init = reinterpret_cast<void (*)(void)>(dlsym(h->handle, "TF_InitKernel"));
    tfp_shims::SetRegistrant(h->id);
    init();
    tfp_shims::SetRegistrant(0);
  }
  CollectRegistrations(h.get());
  TF_SetStatus(status, TF_OK, "");
  return h.release();
}

void tfp_host_close(tfp_host* host) {
  if (host == nullptr) return;
  std::lock_guard<std::mutex> lock(g_load_mu);
  tfp_shims::RemoveKernelsOf(host->id);
  tfp_shims::RemovePluginOpsOf(host->id);
  host->platform.reset();
  if (host->handle != nullptr) dlclose(host->handle);
  delete host;
}

const char* tfp_host_path(const tfp_host* host) { return host ? host->path.c_str() : nullptr; }
const char* tfp_host_release(const tfp_host* host) { return host ? host->release.c_str() : nullptr; }
unsigned tfp_host_entry_points(const tfp_host* host) { return host ? host->entry_points : 0; }

const char* tfp_host_entry_point_name(unsigned bit) {
  for (unsigned i = 0; i < TFP_ENTRY_COUNT; ++i) {
    if (bit == 1u << i) return kEntryNames[i];
  }
  return nullptr;
}

const char* tfp_host_platform_name(const tfp_host* host) {
  return host && host->platform ? host->platform->name().c_str() : nullptr;
}
const char* tfp_host_platform_type(const tfp_host* host) {
  return host && host->platform ? host->platform->type().c_str() : nullptr;
}
int tfp_host_device_count(const tfp_host* host) {
  return host && host->platform ? host->platform->device_count() : 0;
}

void tfp_host_device_info(tfp_host* host, int ordinal, tfp_device_info* info, TF_Status* status) {
  auto* d = DeviceOf(host, ordinal, status);
  if (d == nullptr) return;
  if (info == nullptr || info->struct_size < TFP_DEVICE_INFO_STRUCT_SIZE) {
    Fail(status, TF_INVALID_ARGUMENT, "tfp_device_info.struct_size must be TFP_DEVICE_INFO_STRUCT_SIZE");
    return;
  }
  SP_Device* sp = host->platform->sp(d);
  info->ordinal = ordinal;
  info->name = d->name.c_str();
  info->hardware_name = sp->hardware_name;
  info->device_vendor = sp->device_vendor;
  info->pci_bus_id = sp->pci_bus_id;
  info->numa_node = host->platform->NumaNode(d);
  info->memory_bandwidth = host->platform->MemoryBandwidth(d);
  info->gflops = host->platform->Gflops(d);
  int64_t free = -1, total = -1;
  if (!host->platform->MemoryUsage(d, &free, &total)) free = total = -1;
  info->memory_free = free;
  info->memory_total = total;
  TF_SetStatus(status, TF_OK, "");
}

void* tfp_host_allocate(tfp_host* host, int ordinal, uint64_t size, TF_Status* status) {
  auto* d = DeviceOf(host, ordinal, status);
  return d ? host->platform->Allocate(d, size, status) : nullptr;
}

void tfp_host_deallocate(tfp_host* host, int ordinal, void* ptr, uint64_t size) {
  TF_Status* s = TF_NewStatus();
  if (auto* d = DeviceOf(host, ordinal, s)) host->platform->Deallocate(d, ptr, size);
  TF_DeleteStatus(s);
}

void tfp_host_memcpy_htod(tfp_host* host, int ordinal, void* dst, const void* src, uint64_t size, TF_Status* status) {
  if (auto* d = DeviceOf(host, ordinal, status)) host->platform->MemcpyHtoD(d, dst, src, size, status);
}

void tfp_host_memcpy_dtoh(tfp_host* host, int ordinal, void* dst, const void* src, uint64_t size, TF_Status* status) {
  if (auto* d = DeviceOf(host, ordinal, status)) host->platform->MemcpyDtoH(d, dst, src, size, status);
}

void tfp_host_synchronize(tfp_host* host, int ordinal, TF_Status* status) {
  if (auto* d = DeviceOf(host, ordinal, status)) host->platform->SynchronizeAll(d, status);
}

int tfp_host_kernel_count(const tfp_host* host) { return host ? static_cast<int>(host->kernels.size()) : 0; }

int tfp_host_kernel_info(const tfp_host* host, int i, tfp_kernel_info* info) {
  if (host == nullptr || info == nullptr || i < 0 || static_cast<size_t>(i) >= host->kernels.size() ||
      info->struct_size < TFP_KERNEL_INFO_STRUCT_SIZE) {
    return -1;
  }
  const auto& k = host->kernels[static_cast<size_t>(i)];
  info->name = k.def.name.c_str();
  info->op = k.def.op.c_str();
  info->device_type = k.def.device_type.c_str();
  info->label = k.def.label.c_str();
  info->priority = k.def.priority;
  info->is_async = k.def.compute_async != nullptr;
  info->num_type_constraints = static_cast<int>(k.constraint_attrs.size());
  info->constraint_attrs = k.constraint_attrs.data();
  info->constraint_types = k.constraint_types.data();
  info->num_host_memory_args = static_cast<int>(k.host_memory_args.size());
  info->host_memory_args = k.host_memory_args.data();
  info->op_signature = k.signature.empty() ? nullptr : k.signature.c_str();
  info->description = k.description.c_str();
  return 0;
}

int tfp_host_op_count(const tfp_host* host) { return host ? static_cast<int>(host->ops.size()) : 0; }

const char* tfp_host_op_name(const tfp_host* host, int i) {
  if (host == nullptr || i < 0 || static_cast<size_t>(i) >= host->ops.size()) return nullptr;
  return host->ops[static_cast<size_t>(i)].c_str();
}

const char* tfp_host_op_signature(tfp_host* host, const char* op_name) {
  if (host == nullptr || op_name == nullptr) return nullptr;
  const tfp_shims::OpDef* op = tfp_shims::LookupOp(op_name);
  if (op == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(host->signatures_mu);
  auto& s = host->signatures[op_name];  // std::map: node addresses are stable
  if (s.empty()) s = op->Signature();
  return s.c_str();
}

// ---- Discovery ------------------------------------------------------------

// TensorFlow's rule on Linux: "*.so", or "*.so.<digit>..." (a versioned name).
static bool IsSharedObjectName(const std::string& f) {
  if (f.size() > 3 && f.compare(f.size() - 3, 3, ".so") == 0) return true;
  size_t at = f.rfind(".so.");
  return at != std::string::npos && at + 4 < f.size() && std::isdigit(static_cast<unsigned char>(f[at + 4]));
}

int tfp_host_discover(const char* location, char*** paths, TF_Status* status) {
  if (paths != nullptr) *paths = nullptr;
  if (location == nullptr || paths == nullptr) {
    Fail(status, TF_INVALID_ARGUMENT, "tfp_host_discover: NULL argument");
    return -1;
  }
  struct stat st;
  if (stat(location, &st) != 0) {
    Fail(status, TF_NOT_FOUND,
         std::string("the file or folder to load pluggable device libraries from does not exist: ") + location);
    return -1;
  }
  std::vector<std::string> found;
  if (S_ISDIR(st.st_mode)) {
    DIR* dir = opendir(location);
    if (dir == nullptr) {
      Fail(status, TF_PERMISSION_DENIED, std::string("cannot read directory ") + location + ": " + std::strerror(errno));
      return -1;
    }
    // Every entry with a shared-object name, as TF (it does not look inside;
    // a directory named x.so would fail to load there too).
    while (dirent* e = readdir(dir)) {
      if (IsSharedObjectName(e->d_name)) found.push_back(std::string(location) + "/" + e->d_name);
    }
    closedir(dir);
    std::sort(found.begin(), found.end());  // TF uses listdir order; sorted is reproducible
  } else {
    found.push_back(location);
  }
  char** out = static_cast<char**>(std::calloc(found.size() + 1, sizeof(char*)));
  for (size_t i = 0; i < found.size(); ++i) out[i] = strdup(found[i].c_str());
  *paths = out;
  TF_SetStatus(status, TF_OK, "");
  return static_cast<int>(found.size());
}

int tfp_host_discover_env(char*** paths, TF_Status* status) {
  const char* env = std::getenv("TF_PLUGGABLE_DEVICE_LIBRARY_PATH");
  if (env == nullptr || *env == '\0') {
    if (paths != nullptr) *paths = static_cast<char**>(std::calloc(1, sizeof(char*)));
    TF_SetStatus(status, TF_OK, "");
    return 0;
  }
  return tfp_host_discover(env, paths, status);
}

void tfp_host_free_paths(char** paths) {
  if (paths == nullptr) return;
  for (char** p = paths; *p != nullptr; ++p) std::free(*p);
  std::free(paths);
}

}  // extern "C"
