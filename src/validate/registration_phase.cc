// SPDX-License-Identifier: Apache-2.0
// Phase 3, registration: loads the plugin and registers its platform the way
// the targeted TensorFlow release does (stream_executor's
// InitStreamExecutorPlugin, then device creation), in this phase's child
// process. The structs the plugin fills are PluginStructs (src/shims, the
// library the host uses too), read through the release's generated layout,
// so TensorFlow's checks, the required fields, struct sizes and revisions
// all come from abi/facts. Then stricter checks: struct_size against the
// known revisions, reserved names, callbacks pointing outside the plugin,
// create callbacks without destroy, the devices. Last, which releases'
// checks the plugin passes.
//
// The follow-up (RunRegistrationZeroSizes) repeats the registration in a
// fresh process with struct_size pre-filled as 0, to tell a plugin that sets
// struct_size from one that passes TensorFlow's value back.
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "elf_file.h"
#include "phases.h"
#include "plugin_struct.h"
#include "registration.h"
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/tf_status.h"
#include "tfplugin_shims.h"

namespace tfp_validator {
namespace {

using tfp_shims::FieldLayout;
using tfp_shims::FindField;
using tfp_shims::FindLayout;
using tfp_shims::FindRequired;
using tfp_shims::PluginStruct;
using tfp_shims::StructLayout;
using tfp_shims::StructProblem;

using SEInitPluginFn = void (*)(SE_PlatformRegistrationParams*, TF_Status*);
// Callback types from the newest headers: signatures are the same in every
// release, only offsets moved (the PluginStructs read them at the right one).
using GetDeviceCountFn = decltype(SP_PlatformFns::get_device_count);
using CreateDeviceFn = decltype(SP_PlatformFns::create_device);
using CreateDeviceFnsFn = decltype(SP_PlatformFns::create_device_fns);
using CreateSEFn = decltype(SP_PlatformFns::create_stream_executor);
using CreateTimerFnsFn = decltype(SP_PlatformFns::create_timer_fns);

constexpr const char kEntry[] = "SE_InitPlugin";
// Devices created and checked, at most (TensorFlow creates them all).
constexpr int kMaxDevicesChecked = 64;

// Platform names TensorFlow registers itself (its registry ignores case):
// registering one again fails, and TensorFlow aborts.
const struct {
  const char* name;
  const char* why;
} kReservedPlatforms[] = {
    {"HOST",
     "TensorFlow registers its own platform \"Host\" (the registry ignores case): "
     "registering it again fails and TensorFlow aborts"},
    {"CUDA",
     "TensorFlow's CUDA platform (GPU builds) has this name: registering it again fails "
     "and TensorFlow aborts"},
    {"ROCM",
     "TensorFlow's ROCm platform (ROCm builds) has this name: registering it again fails "
     "and TensorFlow aborts"},
    {"INTERPRETER",
     "XLA's \"Interpreter\" platform has this name (the registry ignores case): "
     "registering it again fails and TensorFlow aborts"},
    {"TPU",
     "TensorFlow's TPU platform (TPU builds) has this name: registering it again fails "
     "and TensorFlow aborts"},
};
// Device types TensorFlow has itself (GPU: TFP-REG-GPU-TYPE).
const struct {
  const char* type;
  bool prefix;
  const char* why;
} kReservedTypes[] = {
    {"CPU", false,
     "TensorFlow's CPU device type: the plugin's device factory (priority 220) "
     "would replace TensorFlow's CPU devices"},
    {"TPU", false,
     "TensorFlow's TPU device type: the plugin's device factory would replace "
     "TensorFlow's TPU devices"},
    {"TPU_SYSTEM", false, "TensorFlow's TPU_SYSTEM device type"},
    {"DEFAULT", false, "DEVICE_DEFAULT: kernels registered for it apply to every device type"},
    {"XLA_", true,
     "XLA_* device types (XLA_CPU, XLA_GPU, XLA_*_JIT) are TensorFlow's XLA "
     "devices and compilation targets"},
};

std::string Hex(uintptr_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, v);
  return buf;
}


// Reads a C string the plugin handed over without trusting the pointer: a
// byte the kernel cannot read makes write() fail (EFAULT) instead of
// crashing. At most 256 bytes.
bool ReadPluginString(const char* p, std::string* out) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return false;
  bool ok = false;
  out->clear();
  for (size_t i = 0; i < 256; ++i) {
    char c;
    if (write(fds[1], p + i, 1) != 1 || read(fds[0], &c, 1) != 1) break;
    if (c == '\0') {
      ok = true;
      break;
    }
    *out += c;
  }
  close(fds[0]);
  close(fds[1]);
  return ok;
}

// Is the entry point exported as a function? Read from the file, so a
// plugin without it (kernels only) is never loaded, and a variable of that
// name (TFP-SYM-ENTRY-NOT-FUNCTION) never called.
bool ExportsEntryFunction(const std::string& path) {
  const SymbolTables t = ReadSymbols(path);
  if (!t.ok) return false;
  for (const ElfSymbol& s : t.dynamic) {
    if (s.defined && s.name == kEntry && (s.type == STT_FUNC || s.type == STT_GNU_IFUNC) &&
        s.bind != STB_LOCAL && (s.visibility == STV_DEFAULT || s.visibility == STV_PROTECTED)) {
      return true;
    }
  }
  return false;
}

// The loaded plugin: its handle, entry point and executable segments.
class LoadedPlugin {
 public:
  bool Load(const std::string& path, std::string* error) {
    // dlopen searches the library path for a name without '/': not this file.
    const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
    handle_ = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);  // as TensorFlow loads plugins
    if (handle_ == nullptr) {
      const char* e = dlerror();
      *error = std::string("dlopen: ") + (e != nullptr ? e : "unknown error");
      return false;
    }
    init_ = reinterpret_cast<SEInitPluginFn>(dlsym(handle_, kEntry));
    if (init_ == nullptr || dlinfo(handle_, RTLD_DI_LINKMAP, &map_) != 0 || map_ == nullptr) {
      const char* e = dlerror();
      *error = std::string("dlsym(SE_InitPlugin): ") + (e != nullptr ? e : "not found");
      return false;
    }
    dl_iterate_phdr(CollectCode, this);
    return true;
  }
  SEInitPluginFn init() const { return init_; }

  bool InCode(const void* p) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    for (const auto& [lo, hi] : code_) {
      if (a >= lo && a < hi) return true;
    }
    return false;
  }

  // Where a pointer outside the plugin's code points instead.
  std::string Describe(const void* p) const {
    Dl_info info{};
    struct link_map* map = nullptr;
    const std::string at = Hex(reinterpret_cast<uintptr_t>(p));
    if (dladdr1(p, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0 ||
        info.dli_fname == nullptr) {
      return at + ", in no loaded object (uninitialized memory or a stray cast)";
    }
    if (map == map_) {
      return at + ", in the plugin's data, not its code (offset " +
             Hex(reinterpret_cast<uintptr_t>(p) - map_->l_addr) + ")";
    }
    const std::string object = info.dli_fname[0] != '\0' ? info.dli_fname : "the main program";
    if (info.dli_sname != nullptr && info.dli_saddr == p) {
      return std::string(info.dli_sname) + " in " + object + " (another object's function)";
    }
    return at + " in " + object + " (another object)";
  }

 private:
  static int CollectCode(struct dl_phdr_info* info, size_t, void* data) {
    auto* self = static_cast<LoadedPlugin*>(data);
    if (info->dlpi_addr != self->map_->l_addr || info->dlpi_name == nullptr ||
        std::string(info->dlpi_name) != self->map_->l_name) {
      return 0;
    }
    for (int i = 0; i < info->dlpi_phnum; ++i) {
      const ElfW(Phdr)& ph = info->dlpi_phdr[i];
      if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
        const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
        self->code_.emplace_back(lo, lo + ph.p_memsz);
      }
    }
    return 1;
  }

  void* handle_ = nullptr;  // never closed: the child exits
  SEInitPluginFn init_ = nullptr;
  struct link_map* map_ = nullptr;
  std::vector<std::pair<uintptr_t, uintptr_t>> code_;
};

// Bit i: Release(i).
using ReleaseMask = uint64_t;

std::string RevisionText(const char* name, ReleaseMask mask) {
  std::string revs;
  for (int i = 0; i < ReleaseCount(); ++i) {
    if (!(mask >> i & 1)) continue;
    const StructLayout* l = FindLayout(Release(i), name);
    const std::string rev = l != nullptr && l->revision != nullptr ? l->revision : "?";
    if (revs.find(rev) == std::string::npos) revs += (revs.empty() ? "" : ", ") + rev;
  }
  return revs + " headers (TensorFlow " + ReleaseRanges(mask) + ")";
}

std::string JoinFirst(const std::vector<std::string>& items, size_t n) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < n; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > n) out += ", ...";
  return out;
}

// One registration, as the targeted release performs it.
class Registration {
 public:
  Registration(const PhaseContext& c, FindingSink& sink, bool zero_sizes,
               const std::vector<Finding>* first)
      : c_(c),
        sink_(sink),
        zero_(zero_sizes),
        params_(c.release, "SE_PlatformRegistrationParams"),
        platform_(c.release, "SP_Platform"),
        platform_fns_(c.release, "SP_PlatformFns"),
        device_fns_(c.release, "SP_DeviceFns"),
        se_(c.release, "SP_StreamExecutor"),
        timer_fns_(c.release, "SP_TimerFns") {
    if (first != nullptr) {
      for (const Finding& f : *first) {
        if (f.rule == RuleId::kRegReleases) first_registered_ = true;
        if (f.rule == RuleId::kRegStructSizeZero) {
          for (const auto& [k, v] : f.fields) {
            if (k == "struct") first_zero_.insert(v);
          }
        }
      }
    }
  }

  void Run() {
    if (zero_ && !first_registered_) return;     // nothing to compare with
    if (!ExportsEntryFunction(c_.path)) return;  // not a device plugin: nothing to register
    std::string error;
    if (!plugin_.Load(c_.path, &error)) {
      if (!zero_) Report(Finding(RuleId::kRegLoadFailed).Set("reason", error));
      return;
    }
    if (!params_.known() || !platform_.known() || !platform_fns_.known()) {
      return;  // a release without the StreamExecutor C API
    }
    tfp_shims_set_release(c_.release.c_str());  // TF_Version as the release reports it

    // 1. SE_InitPlugin and TF's checks on what it filled.
    tfp_shims::PrepareSEInit(&params_, &platform_, &platform_fns_, /*prefill_sizes=*/true);
    if (zero_) {  // the plugin's structs, not TF's params
      platform_.Set<size_t>("struct_size", 0);
      platform_fns_.Set<size_t>("struct_size", 0);
    }
    OwnedStatus s;
    plugin_.init()(static_cast<SE_PlatformRegistrationParams*>(params_.data()), s.get());
    if (!s.ok()) {
      if (!zero_)
        Report(Finding(RuleId::kRegInitError).Set("code", s.code()).Set("detail", s.message()));
      return;
    }
    observed_ = {&params_, &platform_, &platform_fns_};
    Filled(params_, nullptr);
    Filled(platform_, nullptr);
    if (!zero_) CheckNames();
    Filled(platform_fns_, nullptr);
    if (!zero_) DestroyPairs(platform_fns_);

    // 2. Device fns, stream executor, timer fns where the release has them.
    if (!Callable(platform_fns_, "create_device_fns")) return Stop();
    {
      PluginStruct p(c_.release, "SE_CreateDeviceFnsParams");
      p.PrefillStructSize();
      p.Set<void*>("device_fns", device_fns_.data());
      if (!zero_) device_fns_.PrefillStructSize();
      platform_fns_.Get<CreateDeviceFnsFn>("create_device_fns")(
          Platform(), static_cast<SE_CreateDeviceFnsParams*>(p.data()), s.get());
      if (!CallbackOk(s, "SP_PlatformFns.create_device_fns")) return;
      observed_.push_back(&device_fns_);
      Filled(device_fns_, nullptr);
    }
    if (!Callable(platform_fns_, "create_stream_executor")) return Stop();
    {
      PluginStruct p(c_.release, "SE_CreateStreamExecutorParams");
      p.PrefillStructSize();
      p.Set<void*>("stream_executor", se_.data());
      if (!zero_) se_.PrefillStructSize();
      platform_fns_.Get<CreateSEFn>("create_stream_executor")(
          Platform(), static_cast<SE_CreateStreamExecutorParams*>(p.data()), s.get());
      if (!CallbackOk(s, "SP_PlatformFns.create_stream_executor")) return;
      observed_.push_back(&se_);
      Filled(se_, &platform_);
      if (!zero_) DestroyPairs(se_);
    }
    if (tfp_shims::Requires(platform_fns_.layout(), "create_timer_fns") && timer_fns_.known()) {
      if (!Callable(platform_fns_, "create_timer_fns")) return Stop();
      if (!zero_) timer_fns_.PrefillStructSize();
      platform_fns_.Get<CreateTimerFnsFn>("create_timer_fns")(
          Platform(), static_cast<SP_TimerFns*>(timer_fns_.data()), s.get());
      if (!CallbackOk(s, "SP_PlatformFns.create_timer_fns")) return;
      observed_.push_back(&timer_fns_);
      Filled(timer_fns_, nullptr);
    }

    // 3. Devices: as many as get_device_count says.
    auto get_count = platform_fns_.Get<GetDeviceCountFn>("get_device_count");
    if (get_count == nullptr) {
      if (!zero_) Report(Finding(RuleId::kRegNoDeviceCount).Set("release", c_.release));
      fatal_ = "SP_PlatformFns.get_device_count is NULL";
      return Stop();
    }
    if (!plugin_.InCode(reinterpret_cast<void*>(get_count))) return Stop();  // reported by Filled
    int count = -1;
    get_count(Platform(), &count, s.get());
    if (!CallbackOk(s, "SP_PlatformFns.get_device_count")) return;
    if (count < 0 || count > tfp_shims::kMaxDevices) {
      if (!zero_) {
        Report(Finding(RuleId::kRegDeviceCountInvalid)
                   .Set("value", std::to_string(count))
                   .Set("want", std::to_string(tfp_shims::kMaxDevices)));
      }
      fatal_ = "get_device_count reported " + std::to_string(count) + " devices";
      return Stop();
    }
    if (count == 0 && !zero_) Report(Finding(RuleId::kRegNoDevices));
    bool ordinal_reported = false;
    for (int i = 0; i < count && i < kMaxDevicesChecked; ++i) {
      if (!Callable(platform_fns_, "create_device")) return Stop();
      auto device = std::make_unique<PluginStruct>(c_.release, "SP_Device");
      if (!zero_) device->PrefillStructSize();
      PluginStruct p(c_.release, "SE_CreateDeviceParams");
      p.PrefillStructSize();
      p.Set<int32_t>("ordinal", i);
      p.Set<void*>("device", device->data());
      platform_fns_.Get<CreateDeviceFn>("create_device")(
          Platform(), static_cast<SE_CreateDeviceParams*>(p.data()), s.get());
      if (!CallbackOk(s, "SP_PlatformFns.create_device (ordinal " + std::to_string(i) + ")"))
        return;
      Filled(*device, nullptr);
      const int32_t ordinal = device->Get<int32_t>("ordinal");
      if (!zero_ && ordinal != i && !ordinal_reported) {
        Report(Finding(RuleId::kRegDeviceOrdinal)
                   .Set("got", std::to_string(ordinal))
                   .Set("want", std::to_string(i)));
        ordinal_reported = true;
      }
      if (devices_.empty()) observed_.push_back(device.get());
      devices_.push_back(std::move(device));
    }
    complete_ = fatal_.empty();
    Stop();
  }

  // For RegisteredPlatform (later phases).
  bool complete() const { return complete_; }
  const std::string& fatal() const { return fatal_; }
  bool InCode(const void* p) const { return plugin_.InCode(p); }
  bool has_timer_fns() const {
    return std::find(observed_.begin(), observed_.end(), &timer_fns_) != observed_.end();
  }
  PluginStruct& params() { return params_; }
  PluginStruct& platform() { return platform_; }
  PluginStruct& platform_fns() { return platform_fns_; }
  PluginStruct& device_fns() { return device_fns_; }
  PluginStruct& se() { return se_; }
  PluginStruct& timer_fns() { return timer_fns_; }
  std::vector<std::unique_ptr<PluginStruct>>& devices() { return devices_; }

 private:
  const SP_Platform* Platform() { return static_cast<const SP_Platform*>(platform_.data()); }

  void Report(Finding f) {
    // Once per rule and field values: one device's problem, not 64.
    std::string key = std::to_string(RuleIndex(f.rule));
    for (const auto& [k, v] : f.fields) key += "\x1f" + k + "=" + v;
    if (reported_.insert(key).second) sink_.Add(std::move(f));
  }

  // A callback we may call: set, and in the plugin's own code (a foreign
  // pointer was reported when its struct was filled).
  bool Callable(const PluginStruct& s, const char* field) {
    void* fn = s.Get<void*>(field);
    if (fn == nullptr) {
      if (fatal_.empty()) fatal_ = std::string(s.name()) + "." + field + " is NULL";
      return false;
    }
    if (!plugin_.InCode(fn)) {
      if (fatal_.empty())
        fatal_ = std::string(s.name()) + "." + field + " points outside the plugin";
      return false;
    }
    return true;
  }

  bool CallbackOk(OwnedStatus& s, const std::string& callback) {
    if (s.ok()) return true;
    if (!zero_) {
      Report(Finding(RuleId::kRegCallbackFailed)
                 .Set("callback", callback)
                 .Set("code", s.code())
                 .Set("detail", s.message()));
    }
    fatal_ = callback + " failed";
    return false;
  }

  // After the plugin filled `s`: in the zero-size run, did it set
  // struct_size? Otherwise TF's checks, then the stricter ones.
  void Filled(const PluginStruct& s, const PluginStruct* condition_source) {
    const StructLayout* l = s.layout();
    if (zero_) {
      if (&s != &params_ && l->size_checked && s.StructSize() == 0 &&
          !first_zero_.count(s.name())) {
        Report(Finding(RuleId::kRegStructSizeNotSet)
                   .Set("struct", s.name())
                   .Set("macro", l->size_macro ? l->size_macro : "?")
                   .Set("want", std::to_string(l->struct_size)));
      }
      return;
    }
    for (const StructProblem& p : s.TensorFlowProblems(condition_source)) {
      if (p.kind == StructProblem::kStructSizeZero) {
        Report(Finding(RuleId::kRegStructSizeZero)
                   .Set("struct", s.name())
                   .Set("macro", l->size_macro ? l->size_macro : "?")
                   .Set("want", std::to_string(l->struct_size))
                   .Set("release", c_.release));
      } else {
        Report(Finding(RuleId::kRegRequiredNull)
                   .Set("field", std::string(s.name()) + "." + p.field)
                   .Set("struct", s.name())
                   .Set("release", c_.release)
                   .Set("detail", RequiredIn(s.name(), p.field, p.condition)));
      }
    }
    StructSize(s);
    ForeignPointers(s);
  }

  // "required in TensorFlow 2.7-2.21"
  static std::string RequiredIn(const char* name, const char* field, const char* condition) {
    ReleaseMask mask = 0;
    for (int i = 0; i < ReleaseCount(); ++i) {
      if (FindRequired(FindLayout(Release(i), name), field) != nullptr) mask |= ReleaseMask{1} << i;
    }
    std::string out = "required in TensorFlow " + ReleaseRanges(mask);
    if (condition != nullptr) out += std::string(" while ") + condition + " is set";
    return out;
  }

  void CheckNames() {
    for (const char* field : {"name", "type"}) {
      const char* p = platform_.Get<const char*>(field);
      if (p == nullptr) continue;  // TFP-REG-REQUIRED-NULL
      const std::string subject = std::string("SP_Platform.") + field;
      std::string value;
      if (!ReadPluginString(p, &value)) {
        Report(Finding(RuleId::kRegBadName)
                   .Set("field", subject)
                   .Set("value", "(an unreadable or unterminated string at " +
                                     Hex(reinterpret_cast<uintptr_t>(p)) + ")")
                   .Set("pattern", tfp_shims::NamePattern(c_.release))
                   .Set("release", c_.release));
        continue;
      }
      names_[field] = value;
      if (!tfp_shims::MatchesNamePattern(c_.release, value)) {
        Report(Finding(RuleId::kRegBadName)
                   .Set("field", subject)
                   .Set("value", "\"" + value + "\"")
                   .Set("pattern", tfp_shims::NamePattern(c_.release))
                   .Set("release", c_.release));
      }
      std::string upper = value;
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      const char* why = nullptr;
      if (std::string(field) == "name") {
        for (const auto& r : kReservedPlatforms) {
          if (upper == r.name) why = r.why;
        }
      } else if (value == "GPU") {
        Report(Finding(RuleId::kRegGpuType));
      } else {
        for (const auto& r : kReservedTypes) {
          if (r.prefix ? value.compare(0, std::strlen(r.type), r.type) == 0 : value == r.type)
            why = r.why;
        }
      }
      if (why != nullptr) {
        Report(Finding(RuleId::kRegReservedName)
                   .Set("field", subject)
                   .Set("value", value)
                   .Set("detail", why));
      }
    }
  }

  // struct_size against every known release's value for the struct.
  void StructSize(const PluginStruct& s) {
    const StructLayout* target = s.layout();
    const size_t value = s.StructSize();
    if (target->size_macro == nullptr || value == 0 || value == target->struct_size) return;
    ReleaseMask same = 0;
    int newest = -1;
    for (int i = 0; i < ReleaseCount(); ++i) {
      const StructLayout* l = FindLayout(Release(i), s.name());
      if (l != nullptr && l->struct_size == value) {
        same |= ReleaseMask{1} << i;
        newest = i;
      }
    }
    Finding f(RuleId::kRegStructSizeUnknown);
    f.Set("struct", s.name())
        .Set("got", std::to_string(value))
        .Set("want", std::to_string(target->struct_size))
        .Set("macro", target->size_macro)
        .Set("release", c_.release);
    if (newest < 0) {
      std::string detail =
          "no known release's " + std::string(target->size_macro) + " has this value";
      for (int i = ReleaseCount() - 1; i >= 0; --i) {
        const StructLayout* l = FindLayout(Release(i), s.name());
        if (l != nullptr && l->size == value) {
          detail = std::string("sizeof(") + s.name() + ") in TensorFlow " + Release(i) + ", not " +
                   target->size_macro + " (sizeof counts the padding after the last field)";
          break;
        }
      }
      f.Set("detail", detail);
      return Report(std::move(f));
    }
    const StructLayout* plugin = FindLayout(Release(newest), s.name());
    const std::string revision = RevisionText(s.name(), same);
    const char* plugin_rev = plugin->revision != nullptr ? plugin->revision : "those";
    // Fields the target reads within the part both layouts cover that the
    // plugin's layout has elsewhere, or not at all.
    const size_t common = std::min<size_t>(value, target->struct_size);
    std::vector<std::string> misread;
    for (uint32_t i = 0; i < target->num_fields; ++i) {
      const FieldLayout& t = target->fields[i];
      if (t.offset + t.size > common) continue;
      const FieldLayout* p = FindField(plugin, t.name);
      if (p != nullptr && p->offset == t.offset && p->size == t.size) continue;
      const FieldLayout* there = nullptr;
      for (uint32_t j = 0; j < plugin->num_fields && there == nullptr; ++j) {
        if (plugin->fields[j].offset == t.offset) there = &plugin->fields[j];
      }
      misread.push_back(
          there != nullptr
              ? std::string(t.name) + " where " + plugin_rev + " headers put " + there->name
              : std::string(t.name) + ", which " + plugin_rev + " headers have elsewhere");
    }
    f.Set("revision", revision);
    if (!misread.empty()) {
      f.rule = RuleId::kRegStructSizeMismatch;
      f.Set("detail", JoinFirst(misread, 3));
      return Report(std::move(f));
    }
    // Compatible: fields were only appended between the two.
    std::vector<std::string> extra;
    const StructLayout* longer = value < target->struct_size ? target : plugin;
    for (uint32_t i = 0; i < longer->num_fields; ++i) {
      if (longer->fields[i].offset + longer->fields[i].size > common)
        extra.push_back(longer->fields[i].name);
    }
    f.rule =
        value < target->struct_size ? RuleId::kRegStructSizeOlder : RuleId::kRegStructSizeNewer;
    f.Set("detail", extra.empty() ? std::string("the fields added since") : JoinFirst(extra, 4));
    Report(std::move(f));
  }

  void ForeignPointers(const PluginStruct& s) {
    const StructLayout* l = s.layout();
    for (uint32_t i = 0; i < l->num_fields; ++i) {
      const FieldLayout& f = l->fields[i];
      if (!f.is_function) continue;
      void* p = s.Get<void*>(f.name);
      if (p == nullptr || plugin_.InCode(p)) continue;
      Report(Finding(RuleId::kRegForeignPointer)
                 .Set("field", std::string(s.name()) + "." + f.name)
                 .Set("detail", plugin_.Describe(p)));
    }
  }

  // create_X set, destroy_X NULL, and not something TF requires anyway.
  void DestroyPairs(const PluginStruct& s) {
    const StructLayout* l = s.layout();
    for (uint32_t i = 0; i < l->num_fields; ++i) {
      const std::string create = l->fields[i].name;
      if (!l->fields[i].is_function || create.compare(0, 7, "create_") != 0) continue;
      const std::string destroy = "destroy_" + create.substr(7);
      if (s.Get<void*>(create.c_str()) == nullptr || !s.Has(destroy.c_str())) continue;
      if (s.Get<void*>(destroy.c_str()) != nullptr || tfp_shims::Requires(l, destroy.c_str()))
        continue;
      Report(Finding(RuleId::kRegDestroyMissing)
                 .Set("field", std::string(s.name()) + "." + destroy)
                 .Set("callback", std::string(s.name()) + "." + create));
    }
  }

  // The registration is over (or stopped): which releases' checks pass.
  void Stop() {
    if (zero_ || !fatal_.empty()) return;  // every release fails alike: the error says why
    ReleaseMask accepted = 0;
    std::vector<std::pair<ReleaseMask, std::string>> rejected;  // runs of one reason
    for (int i = 0; i < ReleaseCount(); ++i) {
      const std::string reason = RejectedBy(Release(i));
      if (reason.empty()) {
        accepted |= ReleaseMask{1} << i;
      } else if (!rejected.empty() && rejected.back().second == reason) {
        rejected.back().first |= ReleaseMask{1} << i;
      } else {
        rejected.emplace_back(ReleaseMask{1} << i, reason);
      }
    }
    std::string detail;
    for (const auto& [mask, reason] : rejected) {
      detail += (detail.empty() ? "" : "; ") + std::string("fail in ") + ReleaseRanges(mask) +
                ": " + reason;
    }
    if (detail.empty()) detail = "every known release's checks pass";
    Report(Finding(RuleId::kRegReleases)
               .Set("accepted",
                    accepted != 0 ? "TensorFlow " + ReleaseRanges(accepted) : "no known release")
               .Set("detail", detail));
  }

  // The first check `release` applies that the filled structs fail, or "".
  std::string RejectedBy(const std::string& release) {
    const PluginStruct platform(release, platform_);
    for (const PluginStruct* s : observed_) {
      const PluginStruct view(release, *s);
      if (!view.known()) continue;
      const auto problems = view.TensorFlowProblems(s == &se_ ? &platform : nullptr);
      if (problems.empty()) continue;
      const StructProblem& p = problems.front();
      if (p.kind == StructProblem::kStructSizeZero)
        return std::string(s->name()) + ".struct_size is 0";
      return std::string(s->name()) + "." + p.field + " is NULL";
    }
    for (const auto& [field, value] : names_) {
      if (!tfp_shims::MatchesNamePattern(release, value)) {
        return "SP_Platform." + field + " does not match " + tfp_shims::NamePattern(release);
      }
    }
    return "";
  }

  const PhaseContext& c_;
  FindingSink& sink_;
  const bool zero_;
  bool first_registered_ = false;
  std::set<std::string> first_zero_;  // structs the first run found with struct_size 0
  LoadedPlugin plugin_;
  PluginStruct params_, platform_, platform_fns_, device_fns_, se_, timer_fns_;
  std::vector<std::unique_ptr<PluginStruct>> devices_;
  std::vector<const PluginStruct*> observed_;  // filled by the plugin, in order
  std::map<std::string, std::string> names_;   // "name"/"type" -> readable value
  std::string fatal_;                          // why no release can accept it
  bool complete_ = false;                      // every device created
  std::set<std::string> reported_;
};

}  // namespace

struct RegisteredPlatform::Impl {
  VectorSink dropped;  // the registration phase reports these
  std::unique_ptr<Registration> registration;
};

RegisteredPlatform::RegisteredPlatform() : impl_(new Impl) {}
RegisteredPlatform::~RegisteredPlatform() = default;

bool RegisteredPlatform::Register(const PhaseContext& context, std::string* why) {
  impl_->registration.reset(new Registration(context, impl_->dropped, false, nullptr));
  impl_->registration->Run();
  if (impl_->registration->complete()) return true;
  *why = impl_->registration->fatal();
  return false;
}
PluginStruct& RegisteredPlatform::params() { return impl_->registration->params(); }
PluginStruct& RegisteredPlatform::platform() { return impl_->registration->platform(); }
PluginStruct& RegisteredPlatform::platform_fns() { return impl_->registration->platform_fns(); }
PluginStruct& RegisteredPlatform::device_fns() { return impl_->registration->device_fns(); }
PluginStruct& RegisteredPlatform::stream_executor() { return impl_->registration->se(); }
PluginStruct& RegisteredPlatform::timer_fns() { return impl_->registration->timer_fns(); }
bool RegisteredPlatform::has_timer_fns() const { return impl_->registration->has_timer_fns(); }
size_t RegisteredPlatform::device_count() const {
  return impl_->registration->devices().size();
}
PluginStruct& RegisteredPlatform::device(size_t i) { return *impl_->registration->devices()[i]; }

bool RegisteredPlatform::InPluginCode(const void* fn) const {
  return fn != nullptr && impl_->registration->InCode(fn);
}

void RunRegistrationPhase(const PhaseContext& context, FindingSink& sink) {
  Registration(context, sink, /*zero_sizes=*/false, nullptr).Run();
}

void RunRegistrationZeroSizes(const PhaseContext& context, const std::vector<Finding>& first,
                              FindingSink& sink) {
  Registration(context, sink, /*zero_sizes=*/true, &first).Run();
}

}  // namespace tfp_validator
