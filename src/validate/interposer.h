// SPDX-License-Identifier: Apache-2.0
// The validation layer: after a plugin filled its SE structs, every non-NULL
// callback is replaced by a libffi closure (ffi_closure_alloc /
// ffi_prep_closure_loc) built from the signature table (callback_table.h).
// The closure checks the call, forwards it with ffi_call, and checks what
// the plugin did: handle lifetimes (handle_tracker.h), copy and fill ranges,
// statuses of creates, host callbacks run exactly once, one stream entered
// by two threads at once. The first violation of each rule is reported
// (LayerReport) naming the call and its arguments; every call can be traced,
// one line each (docs/validation-layer.md has the format).
//
// Closures and host-callback wrappers are never freed: a plugin may still
// hold or run them until the process exits.
#ifndef TFPLUGIN_VALIDATE_INTERPOSER_H_
#define TFPLUGIN_VALIDATE_INTERPOSER_H_

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "callback_table.h"
#include "handle_tracker.h"
#include "plugin_struct.h"
#include "validate_rule_ids.h"

namespace tfp_validator {

struct LayerReport {
  RuleId rule;
  std::string callback;  // "SP_StreamExecutor.memcpy_htod"
  std::string device;    // the device's name (NameDevice), or "?"
  std::string detail;    // what happened, with the call and its arguments
  std::string want;
  std::string got;
};

class Interposer {
 public:
  using Reporter = std::function<void(const LayerReport&)>;

  // `release`: whose SP_DeviceMemoryBase layout the plugin's memory
  // arguments have ("2.21").
  Interposer(std::string release, Reporter reporter);
  // Hands the closures and wrappers to a process-wide list (see above).
  ~Interposer();
  Interposer(const Interposer&) = delete;
  Interposer& operator=(const Interposer&) = delete;

  // Every call, one line each, to `trace` (NULL: none); flushed per line.
  void SetTrace(FILE* trace) { trace_ = trace; }
  // Report every violation, not only the first of each rule.
  void ReportAll(bool all) { report_all_ = all; }
  // What findings call `device` (an SP_Device * TF passes): "0". Without a
  // name, a device is called by the ordinal its SP_Device holds.
  void NameDevice(const void* device, std::string name);
  // Called after each forwarded call returns (the loadable layer installs
  // closures over the structs create_stream_executor and the like filled).
  using AfterCall = std::function<void(const CallbackSignature&, void** args)>;
  void SetAfterCall(AfterCall after) { after_call_ = std::move(after); }

  // Replaces each non-NULL callback field of `s` (read and written at its
  // release's offsets) that the signature table knows; returns how many.
  size_t Install(tfp_shims::PluginStruct& s);
  // The same for a struct at `base` laid out as `layout`.
  size_t Install(const tfp_shims::StructLayout* layout, void* base);
  // The plugin function behind `fn` if it is one of our closures, else `fn`.
  void* Original(const void* fn) const;

  // The end of a run: handles still live are leaks, host callbacks enqueued
  // but never run are reported. `when`: "at the end of the check".
  void Finish(const std::string& when);
  uint64_t calls() const { return calls_.load(std::memory_order_relaxed); }
  size_t reports() const;

  struct Interposed;  // one closure (interposer.cc)
  struct PendingCallback;  // one host callback wrapper
  // Called by the closures and the host callback trampoline.
  void Call(Interposed& e, void* ret, void** args);
  void RunHostCallback(PendingCallback& p, void* status);

 private:
  std::string CallText(const Interposed& e, uint64_t seq, void** args, const void* ret,
                       const char* status) const;
  std::string DeviceName(const void* device) const;
  void Report(RuleId rule, const std::string& callback, const void* device, std::string detail,
              std::string want, std::string got);
  void CheckHostCallbacks(const void* device, const void* stream, const std::string& when);
  void ReportLeaks(const std::vector<HandleRecord>& live, const std::string& when);
  bool ReadMemory(const void* mem, uintptr_t* opaque, uint64_t* size) const;

  std::string release_;
  Reporter reporter_;
  FILE* trace_ = nullptr;
  bool report_all_ = false;
  uint32_t mem_opaque_offset_ = 0, mem_size_offset_ = 0;
  bool mem_known_ = false;
  int32_t device_ordinal_offset_ = -1;
  AfterCall after_call_;

  mutable std::mutex mu_;  // all below
  std::map<const void*, std::string> device_names_;
  std::map<const void*, Interposed*> by_code_;
  std::deque<std::unique_ptr<Interposed>> closures_;
  // Every wrapper, kept to exit (a plugin may run one late, or twice), and
  // those no synchronization has checked yet.
  std::deque<std::unique_ptr<PendingCallback>> pending_;
  std::vector<PendingCallback*> unsettled_;
  std::set<RuleId> reported_;
  size_t report_count_ = 0;
  // Threads inside an enqueuing callback, per stream.
  // (a vector: push and pop allocate nothing once it has grown)
  std::map<const void*, std::vector<std::thread::id>> on_stream_;

  HandleTracker handles_;
  std::atomic<uint64_t> calls_{0};
};

}  // namespace tfp_validator

#endif  // TFPLUGIN_VALIDATE_INTERPOSER_H_
