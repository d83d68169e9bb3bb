// SPDX-License-Identifier: Apache-2.0
#include "interposer.h"

#include <ffi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cinttypes>
#include <cstring>

#include "owned_status.h"
#include "tensorflow/c/tf_status.h"

namespace tfp_validator {

struct Interposer::Interposed {
  Interposer* owner = nullptr;
  const CallbackSignature* sig = nullptr;
  std::string name;  // "SP_StreamExecutor.memcpy_htod"
  void* original = nullptr;
  void* code = nullptr;  // what the plugin struct now holds
  ffi_closure* closure = nullptr;
  ffi_cif cif;
  ffi_type* arg_types[kMaxCallbackParams];
};

// What host_callback is given instead of TF's callback and argument.
struct Interposer::PendingCallback {
  Interposer* owner = nullptr;
  void (*fn)(void*, TF_Status*) = nullptr;
  void* arg = nullptr;
  const void* device = nullptr;
  const void* stream = nullptr;
  std::string call;              // the host_callback call that enqueued it
  std::atomic<int> runs{0};
  std::atomic<bool> expected{true};  // false: host_callback returned false
  std::atomic<bool> settled{false};  // reported, or no longer checked
};

namespace {

ffi_type* FfiType(FfiKind k) {
  switch (k) {
    case FfiKind::kVoid: return &ffi_type_void;
    case FfiKind::kPointer: return &ffi_type_pointer;
    case FfiKind::kUInt8: return &ffi_type_uint8;
    case FfiKind::kUInt32: return &ffi_type_uint32;
    case FfiKind::kUInt64: return &ffi_type_uint64;
    case FfiKind::kSInt32: return &ffi_type_sint32;
    case FfiKind::kSInt64: return &ffi_type_sint64;
    case FfiKind::kDouble: return &ffi_type_double;
    case FfiKind::kFloat: return &ffi_type_float;
  }
  return &ffi_type_void;
}

void Dispatch(ffi_cif*, void* ret, void** args, void* user) {
  auto* e = static_cast<Interposer::Interposed*>(user);
  e->owner->Call(*e, ret, args);
}

// Host callbacks come back through here, with our wrapper as the argument.
void HostCallbackTrampoline(void* pending, TF_Status* status) {
  auto* p = static_cast<Interposer::PendingCallback*>(pending);
  p->owner->RunHostCallback(*p, status);
}

std::string Pointer(const void* p) {
  if (p == nullptr) return "NULL";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

void* PtrArg(void** args, int i) { return *static_cast<void**>(args[i]); }

uint64_t IntArg(FfiKind k, void** args, int i) {
  switch (k) {
    case FfiKind::kUInt8: return *static_cast<uint8_t*>(args[i]);
    case FfiKind::kUInt32: return *static_cast<uint32_t*>(args[i]);
    case FfiKind::kUInt64: return *static_cast<uint64_t*>(args[i]);
    case FfiKind::kSInt32: return static_cast<uint64_t>(*static_cast<int32_t*>(args[i]));
    case FfiKind::kSInt64: return static_cast<uint64_t>(*static_cast<int64_t*>(args[i]));
    default: return 0;
  }
}

int FindRole(const CallbackSignature& sig, Role role) {
  for (int i = 0; i < sig.param_count; ++i) {
    if (sig.roles[i] == role) return i;
  }
  return -1;
}

long ThreadId() { return static_cast<long>(syscall(SYS_gettid)); }

bool Named(const CallbackSignature& sig, const char* field) {
  return std::strcmp(sig.field, field) == 0;
}

}  // namespace

Interposer::Interposer(std::string release, Reporter reporter)
    : release_(std::move(release)), reporter_(std::move(reporter)) {
  const tfp_shims::StructLayout* mem = tfp_shims::FindLayout(release_, "SP_DeviceMemoryBase");
  const tfp_shims::FieldLayout* opaque = tfp_shims::FindField(mem, "opaque");
  const tfp_shims::FieldLayout* size = tfp_shims::FindField(mem, "size");
  if (opaque != nullptr && size != nullptr) {
    mem_opaque_offset_ = opaque->offset;
    mem_size_offset_ = size->offset;
    mem_known_ = true;
  }
  const tfp_shims::FieldLayout* ordinal =
      tfp_shims::FindField(tfp_shims::FindLayout(release_, "SP_Device"), "ordinal");
  if (ordinal != nullptr && ordinal->size == sizeof(int32_t)) {
    device_ordinal_offset_ = static_cast<int32_t>(ordinal->offset);
  }
}

namespace {

// Closures and wrappers of destroyed Interposers: a plugin may still call a
// closure or run a wrapped host callback, so they stay allocated until exit,
// and reachable from here (not leaked: LeakSanitizer would rightly say so).
struct Retained {
  std::mutex mu;
  std::vector<std::unique_ptr<Interposer::Interposed>> closures;
  std::vector<std::unique_ptr<Interposer::PendingCallback>> pending;
};

Retained& RetainedUntilExit() {
  static Retained* retained = new Retained;  // never destroyed: closures may run at exit
  return *retained;
}

}  // namespace

Interposer::~Interposer() {
  Retained& r = RetainedUntilExit();
  std::lock_guard<std::mutex> lock(mu_);
  std::lock_guard<std::mutex> keep(r.mu);
  for (auto& e : closures_) r.closures.push_back(std::move(e));
  for (auto& p : pending_) r.pending.push_back(std::move(p));
}

void Interposer::NameDevice(const void* device, std::string name) {
  std::lock_guard<std::mutex> lock(mu_);
  device_names_[device] = std::move(name);
}

std::string Interposer::DeviceName(const void* device) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = device_names_.find(device);
    if (it != device_names_.end()) return it->second;
  }
  if (device == nullptr || device_ordinal_offset_ < 0) return "?";
  int32_t ordinal = 0;
  std::memcpy(&ordinal, static_cast<const unsigned char*>(device) + device_ordinal_offset_,
              sizeof ordinal);
  return std::to_string(ordinal);
}

size_t Interposer::Install(tfp_shims::PluginStruct& s) { return Install(s.layout(), s.data()); }

size_t Interposer::Install(const tfp_shims::StructLayout* layout, void* base) {
  if (layout == nullptr || base == nullptr) return 0;
  size_t n = 0;
  for (uint32_t i = 0; i < layout->num_fields; ++i) {
    const tfp_shims::FieldLayout& f = layout->fields[i];
    if (!f.is_function || f.size != sizeof(void*)) continue;
    const CallbackSignature* sig = FindCallbackSignature(layout->name, f.name);
    if (sig == nullptr) continue;
    auto* slot = static_cast<unsigned char*>(base) + f.offset;
    void* fn = nullptr;
    std::memcpy(&fn, slot, sizeof fn);
    if (fn == nullptr) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (by_code_.count(fn) != 0) continue;  // already ours
    }
    auto e = std::make_unique<Interposed>();
    e->owner = this;
    e->sig = sig;
    e->name = std::string(sig->struct_name) + "." + sig->field;
    e->original = fn;
    for (int p = 0; p < sig->param_count; ++p) e->arg_types[p] = FfiType(sig->params[p]);
    if (ffi_prep_cif(&e->cif, FFI_DEFAULT_ABI, static_cast<unsigned>(sig->param_count),
                     FfiType(sig->ret), e->arg_types) != FFI_OK) {
      continue;
    }
    e->closure = static_cast<ffi_closure*>(ffi_closure_alloc(sizeof(ffi_closure), &e->code));
    if (e->closure == nullptr) continue;
    if (ffi_prep_closure_loc(e->closure, &e->cif, Dispatch, e.get(), e->code) != FFI_OK) {
      ffi_closure_free(e->closure);
      continue;
    }
    std::memcpy(slot, &e->code, sizeof e->code);
    std::lock_guard<std::mutex> lock(mu_);
    by_code_[e->code] = e.get();
    closures_.push_back(std::move(e));
    ++n;
  }
  return n;
}

void* Interposer::Original(const void* fn) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_code_.find(fn);
  return it != by_code_.end() ? it->second->original : const_cast<void*>(fn);
}

size_t Interposer::reports() const {
  std::lock_guard<std::mutex> lock(mu_);
  return report_count_;
}

bool Interposer::ReadMemory(const void* mem, uintptr_t* opaque, uint64_t* size) const {
  if (mem == nullptr || !mem_known_) return false;
  void* p = nullptr;
  std::memcpy(&p, static_cast<const unsigned char*>(mem) + mem_opaque_offset_, sizeof p);
  std::memcpy(size, static_cast<const unsigned char*>(mem) + mem_size_offset_, sizeof *size);
  *opaque = reinterpret_cast<uintptr_t>(p);
  return true;
}

std::string Interposer::CallText(const Interposed& e, uint64_t seq, void** args, const void* ret,
                                 const char* status) const {
  const CallbackSignature& sig = *e.sig;
  std::string s = "#" + std::to_string(seq) + " " + e.name + "(";
  for (int i = 0; i < sig.param_count; ++i) {
    if (i > 0) s += ", ";
    s += sig.names[i];
    s += "=";
    const Role role = sig.roles[i];
    if (role == Role::kDevice) {
      s += DeviceName(PtrArg(args, i));
    } else if (role == Role::kDeviceMemory || role == Role::kDeviceMemoryConst) {
      uintptr_t opaque = 0;
      uint64_t size = 0;
      if (ReadMemory(PtrArg(args, i), &opaque, &size)) {
        s += "{" + Pointer(reinterpret_cast<void*>(opaque)) + ", " + std::to_string(size) + "}";
      } else {
        s += Pointer(PtrArg(args, i));
      }
    } else if (sig.params[i] == FfiKind::kPointer) {
      s += role == Role::kStatus ? "status" : Pointer(PtrArg(args, i));
    } else if (sig.params[i] == FfiKind::kDouble) {
      s += std::to_string(*static_cast<double*>(args[i]));
    } else if (sig.params[i] == FfiKind::kSInt32 || sig.params[i] == FfiKind::kSInt64) {
      s += std::to_string(static_cast<int64_t>(IntArg(sig.params[i], args, i)));
    } else {
      s += std::to_string(IntArg(sig.params[i], args, i));
    }
  }
  s += ")";
  if (ret != nullptr && sig.ret != FfiKind::kVoid) {
    s += " -> ";
    if (sig.ret == FfiKind::kPointer) {
      s += Pointer(*static_cast<void* const*>(ret));
    } else if (sig.ret == FfiKind::kDouble) {
      s += std::to_string(*static_cast<const double*>(ret));
    } else if (sig.ret == FfiKind::kUInt64 || sig.ret == FfiKind::kSInt64) {
      s += std::to_string(*static_cast<const uint64_t*>(ret));
    } else {  // widened to ffi_arg by libffi
      s += std::to_string(static_cast<int64_t>(*static_cast<const ffi_sarg*>(ret)));
    }
  }
  if (status != nullptr) s += std::string(ret != nullptr && sig.ret != FfiKind::kVoid ? ", " : " -> ") + status;
  // Outputs a create filled.
  if (ret != nullptr) {
    for (int i = 0; i < sig.param_count; ++i) {
      const Role role = sig.roles[i];
      if (role == Role::kStreamOut || role == Role::kEventOut || role == Role::kTimerOut) {
        void* out = PtrArg(args, i);
        s += std::string(", *") + sig.names[i] + "=" +
             (out != nullptr ? Pointer(*static_cast<void**>(out)) : "?");
      }
    }
  }
  return s;
}

void Interposer::Report(RuleId rule, const std::string& callback, const void* device,
                        std::string detail, std::string want, std::string got) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!reported_.insert(rule).second && !report_all_) return;
    ++report_count_;
  }
  reporter_(LayerReport{rule, callback, DeviceName(device), std::move(detail), std::move(want),
                        std::move(got)});
}

void Interposer::RunHostCallback(PendingCallback& p, void* status) {
  const int run = p.runs.fetch_add(1) + 1;
  if (trace_ != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    std::fprintf(trace_, "[%ld] host callback of %s: run %d\n", ThreadId(), p.call.c_str(), run);
    std::fflush(trace_);
  }
  if (run == 1) {
    p.fn(p.arg, static_cast<TF_Status*>(status));
    return;
  }
  // TF's callback frees what its argument points to on its one run.
  Report(RuleId::kRtHostCallbackOnce, "SP_StreamExecutor.host_callback", p.device,
         "the callback enqueued by " + p.call + " ran " + std::to_string(run) +
             " times (run " + std::to_string(run) + " not forwarded)",
         "exactly one run", std::to_string(run) + " runs");
}

void Interposer::CheckHostCallbacks(const void* device, const void* stream,
                                    const std::string& when) {
  std::vector<PendingCallback*> never;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Only the unsettled are scanned: a long run's syncs stay cheap.
    size_t keep = 0;
    for (PendingCallback* p : unsettled_) {
      if ((device != nullptr && p->device != device) || (stream != nullptr && p->stream != stream)) {
        unsettled_[keep++] = p;
        continue;
      }
      p->settled = true;  // checked once: later runs are still counted
      if (p->expected.load() && p->runs.load() == 0) never.push_back(p);
    }
    unsettled_.resize(keep);
  }
  for (PendingCallback* p : never) {
    Report(RuleId::kRtHostCallbackOnce, "SP_StreamExecutor.host_callback", p->device,
           "the callback enqueued by " + p->call + " had not run when " + when,
           "the callback run once, before the stream's synchronization returns", "never run");
  }
}

void Interposer::ReportLeaks(const std::vector<HandleRecord>& live, const std::string& when) {
  for (const HandleRecord& r : live) {
    Report(RuleId::kRtLeak, r.created_by.substr(r.created_by.find(' ') + 1,
                                                 r.created_by.find('(') - r.created_by.find(' ') - 1),
           r.device,
           std::string(HandleKindName(r.kind)) + " " + Pointer(reinterpret_cast<void*>(r.handle)) +
               " created by " + r.created_by + " is still live " + when,
           "every handle destroyed once", "never destroyed");
  }
}

void Interposer::Finish(const std::string& when) {
  CheckHostCallbacks(nullptr, nullptr, when);
  ReportLeaks(handles_.TakeLive(nullptr), when);
}

void Interposer::Call(Interposed& e, void* ret, void** args) {
  const CallbackSignature& sig = *e.sig;
  const uint64_t seq = calls_.fetch_add(1, std::memory_order_relaxed) + 1;
  const int device_i = FindRole(sig, Role::kDevice);
  const void* device = device_i >= 0 ? PtrArg(args, device_i) : nullptr;
  const int status_i = FindRole(sig, Role::kStatus);
  const int size_i = FindRole(sig, Role::kSize);
  auto before = [&] { return CallText(e, seq, args, nullptr, nullptr); };

  void* call_args[kMaxCallbackParams];
  for (int i = 0; i < sig.param_count; ++i) call_args[i] = args[i];
  bool forward = true;

  // Handles passed by value: used, or (a destroy's own) ended.
  for (int i = 0; i < sig.param_count; ++i) {
    const Role role = sig.roles[i];
    HandleKind kind = RoleHandleKind(role);
    uintptr_t handle = 0;
    if (role == Role::kStream || role == Role::kEvent || role == Role::kTimer) {
      handle = reinterpret_cast<uintptr_t>(PtrArg(args, i));
    } else if (role == Role::kHostPointer && sig.effect == Effect::kDestroys) {
      kind = sig.kind;
      handle = reinterpret_cast<uintptr_t>(PtrArg(args, i));
    } else if (role == Role::kDeviceMemory && sig.effect == Effect::kDestroys) {
      uint64_t size = 0;
      if (!ReadMemory(PtrArg(args, i), &handle, &size)) continue;
    } else {
      continue;
    }
    if (handle == 0) continue;
    HandleRecord r;
    if (sig.effect == Effect::kDestroys && kind == sig.kind) {
      if (handles_.Destroy(kind, handle, before(), &r) == HandleState::kDestroyed) {
        forward = false;  // freeing twice would corrupt the plugin's heap
        Report(RuleId::kRtDoubleDestroy, e.name, device,
               before() + " destroys " + HandleKindName(kind) + " " +
                   Pointer(reinterpret_cast<void*>(handle)) + " a second time (created by " +
                   r.created_by + ", destroyed by " + r.destroyed_by + "); not forwarded",
               "one destroy per create", "destroyed twice");
      }
      continue;
    }
    if (handles_.Use(kind, handle, &r) == HandleState::kDestroyed) {
      Report(RuleId::kRtUseAfterDestroy, e.name, device,
             before() + " uses " + HandleKindName(kind) + " " +
                 Pointer(reinterpret_cast<void*>(handle)) + " (" + sig.names[i] +
                 ") after it was destroyed by " + r.destroyed_by + " (created by " + r.created_by +
                 ")",
             "a live " + std::string(HandleKindName(kind)), "destroyed");
    }
  }

  // Copies and fills: each device range inside a live allocation.
  if (size_i >= 0 && sig.effect == Effect::kNone) {
    const uint64_t n = IntArg(sig.params[size_i], args, size_i);
    for (int i = 0; i < sig.param_count && n > 0; ++i) {
      if (sig.roles[i] != Role::kDeviceMemory && sig.roles[i] != Role::kDeviceMemoryConst) continue;
      uintptr_t opaque = 0;
      uint64_t size = 0;
      if (!ReadMemory(PtrArg(args, i), &opaque, &size)) continue;
      HandleRecord r;
      const HandleState st = handles_.Range(opaque, n, &r);
      if (st == HandleState::kLive) continue;
      const std::string range = "[" + Pointer(reinterpret_cast<void*>(opaque)) + ", +" +
                                std::to_string(n) + ")";
      if (st == HandleState::kDestroyed) {
        Report(RuleId::kRtUseAfterDestroy, e.name, device,
               before() + ": " + sig.names[i] + " " + range + " is in device memory deallocated by " +
                   r.destroyed_by + " (allocated by " + r.created_by + ")",
               "live device memory", "deallocated");
      } else if (r.size != 0 || r.handle != 0) {
        const uint64_t past = opaque - r.handle + n - r.size;
        Report(RuleId::kRtMemoryRange, e.name, device,
               before() + ": " + sig.names[i] + " " + range + " ends " + std::to_string(past) +
                   " bytes past the end of the allocation of " + std::to_string(r.size) +
                   " bytes at " + Pointer(reinterpret_cast<void*>(r.handle)) + " (" +
                   r.created_by + ")",
               "a range inside one allocation",
               std::to_string(past) + " bytes past its end");
      } else {
        Report(RuleId::kRtMemoryRange, e.name, device,
               before() + ": " + sig.names[i] + " " + range +
                   " is in no allocation the plugin's allocate returned",
               "a range inside one allocation", "outside every allocation");
      }
    }
  }

  // Enqueuing on a stream: one thread at a time.
  const void* stream = nullptr;
  if (int si = FindRole(sig, Role::kStream); si >= 0) stream = PtrArg(args, si);
  const bool occupy = sig.async && stream != nullptr;
  if (occupy) {
    bool other = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& threads = on_stream_[stream];
      for (const std::thread::id& t : threads) other = other || t != std::this_thread::get_id();
      threads.push_back(std::this_thread::get_id());
    }
    if (other) {
      Report(RuleId::kRtStreamConcurrent, e.name, device,
             before() + " on thread " + std::to_string(ThreadId()) +
                 " while another thread is inside an enqueuing callback on stream " +
                 Pointer(stream),
             "one thread at a time enqueuing on a stream", "two threads at once");
    }
  }

  // host_callback: TF's callback behind our wrapper, to count its runs.
  void* wrapper_fn = nullptr;
  void* wrapper_arg = nullptr;
  PendingCallback* pending = nullptr;
  const int fn_i = FindRole(sig, Role::kHostCallbackFn);
  const int arg_i = FindRole(sig, Role::kHostCallbackArg);
  if (fn_i >= 0 && arg_i >= 0 && PtrArg(args, fn_i) != nullptr) {
    auto p = std::make_unique<PendingCallback>();
    p->owner = this;
    p->fn = reinterpret_cast<void (*)(void*, TF_Status*)>(PtrArg(args, fn_i));
    p->arg = PtrArg(args, arg_i);
    p->device = device;
    p->stream = stream;
    p->call = before();
    pending = p.get();
    wrapper_fn = reinterpret_cast<void*>(&HostCallbackTrampoline);
    wrapper_arg = pending;
    call_args[fn_i] = &wrapper_fn;
    call_args[arg_i] = &wrapper_arg;
    std::lock_guard<std::mutex> lock(mu_);
    unsettled_.push_back(p.get());
    pending_.push_back(std::move(p));
  }

  if (forward) {
    ffi_call(&e.cif, FFI_FN(e.original), ret, call_args);
  } else if (sig.ret != FfiKind::kVoid) {
    std::memset(ret, 0, sizeof(ffi_arg));
  }

  if (occupy) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& threads = on_stream_[stream];
    for (size_t i = threads.size(); i-- > 0;) {
      if (threads[i] == std::this_thread::get_id()) {
        threads.erase(threads.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }
  if (pending != nullptr && sig.ret == FfiKind::kUInt8 &&
      static_cast<uint8_t>(*static_cast<ffi_arg*>(ret)) == 0) {
    pending->expected = false;  // refused: TF does not wait for it
  }

  int code = TF_OK;
  const bool has_status = status_i >= 0 && PtrArg(args, status_i) != nullptr;
  if (has_status) code = TF_GetCode(static_cast<TF_Status*>(PtrArg(args, status_i)));
  // Rendered only when a finding, a handle record or the trace needs it.
  std::string after;
  auto after_text = [&]() -> const std::string& {
    if (after.empty()) {
      const std::string code_name = has_status ? StatusCodeName(code) : "";
      after = CallText(e, seq, args, ret, has_status ? code_name.c_str() : nullptr);
    }
    return after;
  };

  // Creates: a new life, or a finding.
  if (sig.effect == Effect::kCreates && forward) {
    uintptr_t handle = 0;
    uint64_t size = 0;
    bool out_param = false;
    for (int i = 0; i < sig.param_count; ++i) {
      const Role role = sig.roles[i];
      if ((role == Role::kStreamOut || role == Role::kEventOut || role == Role::kTimerOut) &&
          PtrArg(args, i) != nullptr) {
        handle = reinterpret_cast<uintptr_t>(*static_cast<void**>(PtrArg(args, i)));
        out_param = true;
      } else if (role == Role::kDeviceMemory) {
        ReadMemory(PtrArg(args, i), &handle, &size);
      }
    }
    if (sig.ret == FfiKind::kPointer) {
      handle = reinterpret_cast<uintptr_t>(*static_cast<void**>(ret));
      if (size_i >= 0) size = IntArg(sig.params[size_i], args, size_i);
    }
    if (handle != 0) {
      HandleRecord r{sig.kind, handle, size, device, after_text(), ""};
      HandleRecord earlier;
      if (handles_.Create(r, &earlier)) {
        Report(RuleId::kRtHandleAliased, e.name, device,
               after_text() + " returned " + HandleKindName(sig.kind) + " " +
                   Pointer(reinterpret_cast<void*>(handle)) + ", still live from " +
                   earlier.created_by,
               "a handle no live one has", "the same handle twice");
      }
    } else if (out_param && status_i >= 0 && code == TF_OK) {
      Report(RuleId::kRtStatusNotSet, e.name, device,
             after_text() + " left the " + HandleKindName(sig.kind) + " NULL and the status TF_OK",
             "a non-NULL handle, or an error status", "NULL with TF_OK");
    }
  }

  // Synchronization: what it waited for is done, host callbacks included.
  if (Named(sig, "block_host_until_done") && stream != nullptr && code == TF_OK) {
    CheckHostCallbacks(device, stream, after_text() + " returned");
  } else if (Named(sig, "synchronize_all_activity") && code == TF_OK) {
    CheckHostCallbacks(device, nullptr, after_text() + " returned");
  } else if (Named(sig, "destroy_stream") && stream != nullptr && forward) {
    CheckHostCallbacks(device, stream, after_text() + " returned");
  } else if (Named(sig, "destroy_device")) {
    // Its handles die with it: any still live leaked.
    const int di = FindRole(sig, Role::kDevice);
    ReportLeaks(handles_.TakeLive(di >= 0 ? PtrArg(args, di) : nullptr),
                "when " + after_text() + " destroyed its device");
  }

  if (forward && after_call_) after_call_(sig, args);

  if (trace_ != nullptr) {
    const std::string& line = after_text();  // before the lock: it names devices
    std::lock_guard<std::mutex> lock(mu_);
    std::fprintf(trace_, "[%ld] %s%s\n", ThreadId(), line.c_str(),
                 forward ? "" : " (not forwarded)");
    std::fflush(trace_);
  }
}

}  // namespace tfp_validator
