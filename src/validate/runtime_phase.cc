// SPDX-License-Identifier: Apache-2.0
// Phase 4, runtime conformance, in the manner of clap-validator: each check
// runs in its own child process (isolation.h) that registers the platform
// afresh with the registration phase's driver (registration.h), then
// exercises the SP_StreamExecutor callbacks on each device and verifies the
// results byte for byte. A check that crashes or hangs becomes a finding of
// its own rule naming the callback it was in (recorded in a page shared
// with the phase's process before each call), and the other checks still
// run. A probe child first registers once: no platform, no devices, or a
// registration that dies, and no check runs (the registration phase
// reports why). Every callback a check makes goes through the validation
// layer (interposer.h): libffi closures installed over the registered
// structs check each call (handle lifetimes, ranges, statuses, host
// callbacks, streams shared by threads) and name it in their findings;
// --trace writes every call.
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "interposer.h"
#include "isolation.h"
#include "phases.h"
#include "registration.h"
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/tf_status.h"

namespace tfp_validator {
namespace {

using tfp_shims::PluginStruct;

constexpr size_t kMaxDevices = 4;        // devices checked, at most
constexpr uint64_t kAbsurd = 1ull << 62;  // bytes no device has
constexpr size_t kTail = 16;             // bytes after a memset range that must stay

// What the check's child is calling, in a page shared with the phase's
// process: after a crash or a timeout, the finding names it.
struct Progress {
  char callback[128];
  char device[16];
};
Progress* g_progress = nullptr;

// The check child's validation layer (kept to the child's exit: the plugin
// may still hold its closures).
Interposer* g_interposer = nullptr;

// The plugin's function behind a (possibly interposed) callback pointer.
const void* PluginFunction(const void* p) {
  return g_interposer != nullptr ? g_interposer->Original(p) : p;
}

int64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

void SleepMs(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}

std::string Hex8(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", v & 0xffu);
  return buf;
}

// "" when equal, else where and how they first differ.
std::string FirstDifference(const unsigned char* got, const unsigned char* want, size_t n,
                            std::string* want_text, std::string* got_text) {
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      *want_text = Hex8(want[i]) + " at byte " + std::to_string(i) + " of " + std::to_string(n);
      *got_text = Hex8(got[i]) + " at byte " + std::to_string(i);
      return "byte " + std::to_string(i) + " of " + std::to_string(n) + " differs";
    }
  }
  return "";
}

std::vector<unsigned char> Pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed * 17 + 7) ^ (i >> 8));
  return v;
}


#define SE_FN(name) decltype(SP_StreamExecutor::name)

// One check's work in its child: the registered platform, the device being
// checked, and where findings go.
class Check {
 public:
  Check(RegisteredPlatform& rp, FindingSink& sink, RuleId rule, unsigned timeout_ms)
      : rp_(rp), se_(rp.stream_executor()), sink_(sink), rule_(rule), timeout_ms_(timeout_ms) {}

  void SetDevice(size_t i) {
    device_index_ = i;
    device_ = static_cast<const SP_Device*>(rp_.device(i).data());
  }
  const SP_Device* device() const { return device_; }
  RegisteredPlatform& rp() { return rp_; }
  unsigned timeout_ms() const { return timeout_ms_; }
  bool failed() const { return failed_; }

  // A SP_StreamExecutor callback we may call, or NULL (not set, or not the
  // plugin's: the registration phase reports those).
  template <typename F>
  F Fn(const char* name) {
    void* p = se_.Get<void*>(name);
    return rp_.InPluginCode(PluginFunction(p)) ? reinterpret_cast<F>(p) : nullptr;
  }

  // Records the callback about to be called (for a crash report).
  void Calling(const std::string& callback) {
    if (g_progress == nullptr) return;
    std::snprintf(g_progress->callback, sizeof g_progress->callback, "%s", callback.c_str());
    std::snprintf(g_progress->device, sizeof g_progress->device, "%zu", device_index_);
  }

  void Fail(const std::string& callback, const std::string& detail, const std::string& want,
            const std::string& got) {
    Report(rule_, callback, detail, want, got);
    failed_ = true;
  }
  // `rule`'s check does not apply here (see NotChecked).
  void NotApplicable(RuleId rule, const std::string& why) { sink_.Add(NotChecked(rule, why)); }
  void Report(RuleId rule, const std::string& callback, const std::string& detail,
              const std::string& want, const std::string& got) {
    sink_.Add(Finding(rule)
                  .Set("callback", "SP_StreamExecutor." + callback)
                  .Set("device", std::to_string(device_index_))
                  .Set("detail", detail)
                  .Set("want", want)
                  .Set("got", got));
  }

  // False (and a finding) when `s` is not OK after `callback`.
  bool StatusOk(OwnedStatus& s, const std::string& callback) {
    if (s.ok()) return true;
    Fail(callback, "failed: " + s.text(), "TF_OK", s.code());
    return false;
  }

  // Handles, destroyed at the end of the check (teardown).
  SP_Stream NewStream() {
    SP_Stream stream = NewHandle<SP_Stream>(Fn<SE_FN(create_stream)>("create_stream"),
                                            "create_stream", "stream", "SP_Stream");
    if (stream != nullptr) streams_.push_back(stream);
    return stream;
  }
  SP_Event NewEvent() {
    SP_Event event = NewHandle<SP_Event>(Fn<SE_FN(create_event)>("create_event"),
                                         "create_event", "event", "SP_Event");
    if (event != nullptr) events_.push_back(event);
    return event;
  }
  // create_stream / create_event: a handle, or NULL after a finding (an
  // error status, or NULL with TF_OK).
  template <typename Handle, typename Create>
  Handle NewHandle(Create create, const char* callback, const std::string& noun,
                   const std::string& type) {
    if (create == nullptr) return nullptr;
    OwnedStatus s;
    Handle handle = nullptr;
    Calling(callback);
    create(device_, &handle, s.get());
    if (!StatusOk(s, callback)) return nullptr;
    if (handle == nullptr) {
      Report(RuleId::kRtStatusNotSet, callback,
             "left the " + noun + " NULL and the status TF_OK",
             "a non-NULL " + type + ", or an error status",
             "NULL with TF_OK");
      failed_ = true;
      return nullptr;
    }
    return handle;
  }
  // Device memory of n bytes (opaque NULL: failed, reported).
  SP_DeviceMemoryBase* Alloc(uint64_t n) {
    auto allocate = Fn<SE_FN(allocate)>("allocate");
    if (allocate == nullptr) return nullptr;
    memory_.emplace_back();
    SP_DeviceMemoryBase* m = &memory_.back();
    std::memset(m, 0, sizeof *m);
    m->struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE;
    Calling("allocate");
    allocate(device_, n, 0, m);
    if (m->opaque == nullptr) {
      Fail("allocate", "returned NULL for " + std::to_string(n) + " bytes", "device memory",
           "NULL");
      return nullptr;
    }
    return m;
  }
  // Waits for the stream's work: block_host_until_done, else
  // synchronize_all_activity.
  bool Sync(SP_Stream stream) {
    OwnedStatus s;
    auto until_done = Fn<SE_FN(block_host_until_done)>("block_host_until_done");
    if (until_done != nullptr && stream != nullptr) {
      Calling("block_host_until_done");
      until_done(device_, stream, s.get());
      return StatusOk(s, "block_host_until_done");
    }
    auto all = Fn<SE_FN(synchronize_all_activity)>("synchronize_all_activity");
    if (all == nullptr) return true;
    Calling("synchronize_all_activity");
    all(device_, s.get());
    return StatusOk(s, "synchronize_all_activity");
  }
  bool Write(SP_DeviceMemoryBase* m, const std::vector<unsigned char>& bytes) {
    auto htod = Fn<SE_FN(sync_memcpy_htod)>("sync_memcpy_htod");
    if (htod == nullptr) return false;
    OwnedStatus s;
    Calling("sync_memcpy_htod");
    htod(device_, m, bytes.data(), bytes.size(), s.get());
    return StatusOk(s, "sync_memcpy_htod");
  }
  bool Read(const SP_DeviceMemoryBase* m, std::vector<unsigned char>* bytes) {
    auto dtoh = Fn<SE_FN(sync_memcpy_dtoh)>("sync_memcpy_dtoh");
    if (dtoh == nullptr) return false;
    OwnedStatus s;
    Calling("sync_memcpy_dtoh");
    dtoh(device_, bytes->data(), m, bytes->size(), s.get());
    return StatusOk(s, "sync_memcpy_dtoh");
  }
  // Compares, and reports the first difference under `callback`.
  bool Same(const std::string& callback, const std::vector<unsigned char>& got,
            const std::vector<unsigned char>& want, const std::string& what) {
    std::string w, g;
    const std::string d = FirstDifference(got.data(), want.data(), want.size(), &w, &g);
    if (d.empty()) return true;
    Fail(callback, what + ": " + d, w, g);
    return false;
  }

  // Destroys every handle made for this device.
  void Release() {
    OwnedStatus s;
    auto sync = Fn<SE_FN(synchronize_all_activity)>("synchronize_all_activity");
    if (sync != nullptr && (!streams_.empty() || !memory_.empty())) {
      Calling("synchronize_all_activity");
      sync(device_, s.get());
    }
    if (auto destroy = Fn<SE_FN(destroy_event)>("destroy_event")) {
      for (SP_Event e : events_) Calling("destroy_event"), destroy(device_, e);
    }
    if (auto destroy = Fn<SE_FN(destroy_stream)>("destroy_stream")) {
      for (SP_Stream st : streams_) Calling("destroy_stream"), destroy(device_, st);
    }
    if (auto dealloc = Fn<SE_FN(deallocate)>("deallocate")) {
      for (SP_DeviceMemoryBase& m : memory_) {
        if (m.opaque != nullptr) Calling("deallocate"), dealloc(device_, &m);
      }
    }
    events_.clear();
    streams_.clear();
    memory_.clear();
  }

 private:
  RegisteredPlatform& rp_;
  PluginStruct& se_;
  FindingSink& sink_;
  RuleId rule_;
  unsigned timeout_ms_;
  size_t device_index_ = 0;
  const SP_Device* device_ = nullptr;
  bool failed_ = false;
  std::vector<SP_Stream> streams_;
  std::vector<SP_Event> events_;
  std::vector<SP_DeviceMemoryBase> memory_;  // a deque would do; reserved below
 public:
  void Reserve() { memory_.reserve(64); }
};

// ---- the checks, each run on every device

void AllocZero(Check& c) {
  auto allocate = c.Fn<SE_FN(allocate)>("allocate");
  auto deallocate = c.Fn<SE_FN(deallocate)>("deallocate");
  if (allocate == nullptr) return;
  SP_DeviceMemoryBase m;
  std::memset(&m, 0, sizeof m);
  m.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE;
  c.Calling("allocate");
  allocate(c.device(), 0, 0, &m);
  if (m.opaque == nullptr && m.size != 0) {
    c.Fail("allocate", "for 0 bytes, returned NULL memory claiming " + std::to_string(m.size) +
                           " bytes", "size 0 (or a valid allocation)", "size " + std::to_string(m.size));
  }
  if (m.opaque != nullptr && deallocate != nullptr) {
    c.Calling("deallocate");
    deallocate(c.device(), &m);
  }
}

void AllocAbsurd(Check& c) {
  auto allocate = c.Fn<SE_FN(allocate)>("allocate");
  auto deallocate = c.Fn<SE_FN(deallocate)>("deallocate");
  if (allocate == nullptr) return;
  SP_DeviceMemoryBase m;
  std::memset(&m, 0, sizeof m);
  m.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE;
  c.Calling("allocate");
  allocate(c.device(), kAbsurd, 0, &m);
  if (m.opaque != nullptr) {
    c.Fail("allocate", "succeeded for 2^62 bytes", "opaque NULL (allocation failed)",
           "a non-NULL pointer");
    if (deallocate != nullptr) c.Calling("deallocate"), deallocate(c.device(), &m);
  }
}

void MemcpyHtod(Check& c) {
  for (size_t n : {size_t{1}, size_t{3}, size_t{4093}, size_t{65537}}) {
    const auto want = Pattern(n, static_cast<unsigned>(n));
    SP_DeviceMemoryBase* m = c.Alloc(n);
    if (m == nullptr) return;
    std::vector<unsigned char> got(n, 0);
    // The pattern, then its complement into the same memory: a byte the copy
    // skips cannot match both, whatever the allocation held before.
    std::vector<unsigned char> inverse(want);
    for (auto& b : inverse) b = static_cast<unsigned char>(~b);
    const std::vector<unsigned char>* rounds[] = {&want, &inverse};
    for (const auto* bytes : rounds) {
      if (!c.Write(m, *bytes) || !c.Read(m, &got)) return;
      if (!c.Same("sync_memcpy_htod/sync_memcpy_dtoh", got, *bytes,
                  std::to_string(n) + " bytes copied to the device and back"))
        return;
    }
    // The same on a stream.
    auto htod = c.Fn<SE_FN(memcpy_htod)>("memcpy_htod");
    auto dtoh = c.Fn<SE_FN(memcpy_dtoh)>("memcpy_dtoh");
    if (htod == nullptr || dtoh == nullptr) continue;
    SP_Stream stream = c.NewStream();
    SP_DeviceMemoryBase* m2 = c.Alloc(n);
    if (stream == nullptr || m2 == nullptr) return;
    const auto want2 = Pattern(n, static_cast<unsigned>(n) + 1);
    std::vector<unsigned char> got2(n, 0);
    OwnedStatus s;
    c.Calling("memcpy_htod");
    htod(c.device(), stream, m2, want2.data(), n, s.get());
    if (!c.StatusOk(s, "memcpy_htod")) return;
    c.Calling("memcpy_dtoh");
    dtoh(c.device(), stream, got2.data(), m2, n, s.get());
    if (!c.StatusOk(s, "memcpy_dtoh") || !c.Sync(stream)) return;
    if (!c.Same("memcpy_htod/memcpy_dtoh", got2, want2,
                std::to_string(n) + " bytes copied to the device and back on a stream"))
      return;
  }
}

void MemcpyDtod(Check& c) {
  auto sync_dtod = c.Fn<SE_FN(sync_memcpy_dtod)>("sync_memcpy_dtod");
  auto dtod = c.Fn<SE_FN(memcpy_dtod)>("memcpy_dtod");
  for (size_t n : {size_t{3}, size_t{4093}}) {
    const auto want = Pattern(n, 5);
    SP_DeviceMemoryBase* a = c.Alloc(n);
    SP_DeviceMemoryBase* b = c.Alloc(n);
    if (a == nullptr || b == nullptr || !c.Write(a, want)) return;
    std::vector<unsigned char> got(n, 0);
    OwnedStatus s;
    if (sync_dtod != nullptr) {
      if (!c.Write(b, Pattern(n, 9))) return;
      c.Calling("sync_memcpy_dtod");
      sync_dtod(c.device(), b, a, n, s.get());
      if (!c.StatusOk(s, "sync_memcpy_dtod") || !c.Read(b, &got)) return;
      if (!c.Same("sync_memcpy_dtod", got, want, std::to_string(n) + " bytes copied on the device"))
        return;
    }
    if (dtod != nullptr) {
      SP_Stream stream = c.NewStream();
      if (stream == nullptr || !c.Write(b, Pattern(n, 11))) return;
      c.Calling("memcpy_dtod");
      dtod(c.device(), stream, b, a, n, s.get());
      if (!c.StatusOk(s, "memcpy_dtod") || !c.Sync(stream) || !c.Read(b, &got)) return;
      if (!c.Same("memcpy_dtod", got, want,
                  std::to_string(n) + " bytes copied on the device on a stream"))
        return;
    }
  }
}

// mem_zero / memset / memset32 over all but the tail of a patterned block.
void SetCheck(Check& c, const char* callback, int width, uint32_t value) {
  void* fn = c.Fn<void*>(callback);
  if (fn == nullptr) return;
  const size_t n = 4096 + kTail;
  const auto before = Pattern(n, 3);
  SP_DeviceMemoryBase* m = c.Alloc(n);
  SP_Stream stream = c.NewStream();
  if (m == nullptr || stream == nullptr || !c.Write(m, before)) return;
  auto want = before;
  for (size_t i = 0; i < n - kTail; ++i) {
    want[i] = width == 4 ? static_cast<unsigned char>(value >> (8 * (i % 4)))
                         : static_cast<unsigned char>(value);
  }
  if (width == 4) {  // host byte order
    for (size_t i = 0; i + 4 <= n - kTail; i += 4) std::memcpy(&want[i], &value, 4);
  }
  OwnedStatus s;
  c.Calling(callback);
  if (width == 0) {
    reinterpret_cast<SE_FN(mem_zero)>(fn)(c.device(), stream, m, n - kTail, s.get());
  } else if (width == 1) {
    reinterpret_cast<SE_FN(memset)>(fn)(c.device(), stream, m, static_cast<uint8_t>(value),
                                        n - kTail, s.get());
  } else {
    reinterpret_cast<SE_FN(memset32)>(fn)(c.device(), stream, m, value, n - kTail, s.get());
  }
  if (!c.StatusOk(s, callback) || !c.Sync(stream)) return;
  std::vector<unsigned char> got(n, 0);
  if (!c.Read(m, &got)) return;
  char what[96];
  std::snprintf(what, sizeof what, "%zu of %zu bytes set to 0x%" PRIx32 " (%d-byte value)",
                n - kTail, n, value, width == 0 ? 1 : width);
  c.Same(callback, got, want, what);
}

void Memset(Check& c) {
  SetCheck(c, "mem_zero", 0, 0);
  if (!c.failed()) SetCheck(c, "memset", 1, 0xA5);
}
void Memset32(Check& c) { SetCheck(c, "memset32", 4, 0x11223344u); }

void StreamCheck(Check& c) {
  SP_Stream stream = c.NewStream();
  if (stream == nullptr) return;
  if (auto status = c.Fn<SE_FN(get_stream_status)>("get_stream_status")) {
    OwnedStatus s;
    c.Calling("get_stream_status");
    status(c.device(), stream, s.get());
    c.StatusOk(s, "get_stream_status");
  }
}

// Polls until complete, for at most half the timeout (5 s at most).
bool AwaitEvent(Check& c, SP_Event event) {
  auto status = c.Fn<SE_FN(get_event_status)>("get_event_status");
  if (status == nullptr) return true;
  const unsigned limit_ms = std::min(c.timeout_ms() / 2, 5000u);
  const int64_t deadline = NowNs() + int64_t{limit_ms} * 1000000;
  SE_EventStatus st = SE_EVENT_UNKNOWN;
  for (;;) {
    c.Calling("get_event_status");
    st = status(c.device(), event);
    if (st == SE_EVENT_COMPLETE) return true;
    if (st == SE_EVENT_ERROR || st == SE_EVENT_UNKNOWN) break;
    if (NowNs() > deadline) break;
    SleepMs(5);
  }
  const char* name = st == SE_EVENT_ERROR ? "SE_EVENT_ERROR"
                     : st == SE_EVENT_PENDING ? "SE_EVENT_PENDING"
                     : st == SE_EVENT_UNKNOWN ? "SE_EVENT_UNKNOWN" : "not an SE_EventStatus";
  c.Fail("get_event_status",
         std::string("the recorded event is still ") + name + " after " +
             DurationText(limit_ms) + " (and synchronize_all_activity)",
         "SE_EVENT_COMPLETE", name);
  return false;
}

void EventCheck(Check& c) {
  auto record = c.Fn<SE_FN(record_event)>("record_event");
  auto wait = c.Fn<SE_FN(wait_for_event)>("wait_for_event");
  auto block = c.Fn<SE_FN(block_host_for_event)>("block_host_for_event");
  auto htod = c.Fn<SE_FN(memcpy_htod)>("memcpy_htod");
  SP_Stream s1 = c.NewStream();
  SP_Stream s2 = c.NewStream();
  SP_Event event = c.NewEvent();
  SP_DeviceMemoryBase* m = c.Alloc(4096);
  if (s1 == nullptr || s2 == nullptr || event == nullptr || m == nullptr || record == nullptr)
    return;
  const auto bytes = Pattern(4096, 1);
  OwnedStatus s;
  if (htod != nullptr) {
    c.Calling("memcpy_htod");
    htod(c.device(), s1, m, bytes.data(), bytes.size(), s.get());
    if (!c.StatusOk(s, "memcpy_htod")) return;
  }
  c.Calling("record_event");
  record(c.device(), s1, event, s.get());
  if (!c.StatusOk(s, "record_event")) return;
  if (wait != nullptr) {
    c.Calling("wait_for_event");
    wait(c.device(), s2, event, s.get());
    if (!c.StatusOk(s, "wait_for_event")) return;
  }
  if (!c.Sync(s1)) return;
  if (!AwaitEvent(c, event)) return;
  if (block != nullptr) {
    c.Calling("block_host_for_event");
    block(c.device(), event, s.get());
    c.StatusOk(s, "block_host_for_event");
  }
}

// A host callback that holds its stream for a while: work queued behind it
// on that stream cannot run before it returns.
constexpr int kHoldMs = 50;
void HoldStream(void* arg, TF_Status* status) {
  (void)arg, (void)status;
  SleepMs(kHoldMs);
}

// Stream A: a host callback holding A for kHoldMs, then a copy to the
// device; B made to depend on A; a copy back on B. A plugin that runs each
// operation when enqueued passes (the callback has returned and the copy is
// done before B's copy is enqueued); one whose streams run asynchronously
// and ignores the dependency runs B's copy while A is still held, and reads
// the bytes the memory held before.
void StreamDep(Check& c) {
  auto dep = c.Fn<SE_FN(create_stream_dependency)>("create_stream_dependency");
  auto htod = c.Fn<SE_FN(memcpy_htod)>("memcpy_htod");
  auto dtoh = c.Fn<SE_FN(memcpy_dtoh)>("memcpy_dtoh");
  auto host_callback = c.Fn<SE_FN(host_callback)>("host_callback");
  if (dep == nullptr || htod == nullptr || dtoh == nullptr) return;
  const size_t n = 65537;
  SP_Stream a = c.NewStream();
  SP_Stream b = c.NewStream();
  SP_DeviceMemoryBase* m = c.Alloc(n);
  if (a == nullptr || b == nullptr || m == nullptr) return;
  // Buffers the plugin may still use after a failed check: static.
  static std::vector<unsigned char> want, stale, got;
  want = Pattern(n, 21);
  stale = Pattern(n, 22);
  got.assign(n, 0);
  if (!c.Write(m, stale) && c.failed()) return;  // what the memory held before
  OwnedStatus s;
  if (host_callback != nullptr) {
    c.Calling("host_callback");
    host_callback(c.device(), a, HoldStream, nullptr);  // false: TFP-RT-HOST-CALLBACK-ONCE's
  }
  c.Calling("memcpy_htod");
  htod(c.device(), a, m, want.data(), n, s.get());
  if (!c.StatusOk(s, "memcpy_htod")) return;
  c.Calling("create_stream_dependency");
  dep(c.device(), b, a, s.get());
  if (!c.StatusOk(s, "create_stream_dependency")) return;
  c.Calling("memcpy_dtoh");
  dtoh(c.device(), b, got.data(), m, n, s.get());
  if (!c.StatusOk(s, "memcpy_dtoh")) return;
  const bool synced_b = c.Sync(b);
  const bool synced_a = c.Sync(a);  // before returning, whatever B did
  if (!synced_b || !synced_a) return;
  const bool old_bytes = got == stale;
  std::string w, g;
  const std::string d = FirstDifference(got.data(), want.data(), n, &w, &g);
  if (d.empty()) return;
  c.Fail("create_stream_dependency",
         std::string("copied to the device on stream A") +
             (host_callback != nullptr ? " (behind a host callback holding A for " +
                                             std::to_string(kHoldMs) + " ms)"
                                       : "") +
             ", back on stream B made to depend on A: " + d +
             (old_bytes ? "; B's copy ran before A's: it read what the memory held before" : ""),
         w + " (what stream A copied)",
         g + (old_bytes ? " (what the memory held before A's copy)" : ""));
}

struct CallbackCount {
  volatile int runs = 0;
};
void CountRun(void* arg, TF_Status* status) {
  (void)status;
  static_cast<CallbackCount*>(arg)->runs = static_cast<CallbackCount*>(arg)->runs + 1;
}

void HostCallbackOnce(Check& c) {
  auto host_callback = c.Fn<SE_FN(host_callback)>("host_callback");
  if (host_callback == nullptr) return;
  SP_Stream stream = c.NewStream();
  if (stream == nullptr) return;
  static CallbackCount count;  // outlives the check, whatever the plugin does later
  count.runs = 0;
  c.Calling("host_callback");
  const unsigned char queued = host_callback(c.device(), stream, CountRun, &count);
  if (!queued) {
    c.Fail("host_callback", "returned false", "true (callback enqueued)", "false");
    return;
  }
  if (!c.Sync(stream)) return;
  for (int i = 0; i < 100 && count.runs == 0; ++i) SleepMs(10);  // a callback thread
  SleepMs(20);
  if (count.runs != 1) {
    c.Fail("host_callback",
           "ran the callback " + std::to_string(count.runs) +
               " times by the time the stream was synchronized",
           "1 run", std::to_string(count.runs) + " runs");
  }
}

// What the ordering callback saw. Static: it outlives the check, whatever
// the plugin does later.
constexpr size_t kOrderBytes = 16384;
constexpr int kOrderHoldMs = 10;
struct OrderProbe {
  unsigned char source[kOrderBytes];   // copied to the device first
  unsigned char before[kOrderBytes];   // filled from the device before the callback
  unsigned char after[kOrderBytes];    // filled from the device after the callback
  unsigned char saw_before[kOrderBytes];
  unsigned char saw_after_entry[kOrderBytes];
  unsigned char saw_after_exit[kOrderBytes];
  std::atomic<int> runs{0};
};
// Snapshots, on its first run, the host buffer filled by the work enqueued
// before it, and the one the work after it fills: on entry, and again after
// holding the stream for kOrderHoldMs (the later work must wait for it).
void SnapshotOrder(void* arg, TF_Status* status) {
  (void)status;
  auto* p = static_cast<OrderProbe*>(arg);
  if (p->runs.load(std::memory_order_acquire) == 0) {
    std::memcpy(p->saw_before, p->before, kOrderBytes);
    std::memcpy(p->saw_after_entry, p->after, kOrderBytes);
    SleepMs(kOrderHoldMs);
    std::memcpy(p->saw_after_exit, p->after, kOrderBytes);
  }
  p->runs.fetch_add(1, std::memory_order_acq_rel);
}

// On one stream: memcpy_htod of pattern A, memcpy_dtoh of it into host
// buffer `before`, host_callback, memcpy_dtoh of it into host buffer
// `after`. Both host buffers start as pattern B. The callback must see A in
// `before` (everything enqueued before it is done) and B in `after`
// (nothing enqueued after it has run, also while it runs). A plugin that
// runs each operation when enqueued passes; one that runs the callback at
// enqueue while the copies are still queued, or that runs it late, fails.
void HostCallbackOrder(Check& c) {
  auto host_callback = c.Fn<SE_FN(host_callback)>("host_callback");
  auto htod = c.Fn<SE_FN(memcpy_htod)>("memcpy_htod");
  auto dtoh = c.Fn<SE_FN(memcpy_dtoh)>("memcpy_dtoh");
  if (host_callback == nullptr || htod == nullptr || dtoh == nullptr) return;
  SP_Stream stream = c.NewStream();
  SP_DeviceMemoryBase* m = c.Alloc(kOrderBytes);
  if (stream == nullptr || m == nullptr) return;
  static OrderProbe probe;
  const auto a = Pattern(kOrderBytes, 31);
  const auto b = Pattern(kOrderBytes, 32);
  std::memcpy(probe.source, a.data(), kOrderBytes);
  std::memcpy(probe.before, b.data(), kOrderBytes);
  std::memcpy(probe.after, b.data(), kOrderBytes);
  probe.runs.store(0, std::memory_order_release);
  OwnedStatus s;
  c.Calling("memcpy_htod");
  htod(c.device(), stream, m, probe.source, kOrderBytes, s.get());
  if (!c.StatusOk(s, "memcpy_htod")) return;
  c.Calling("memcpy_dtoh");
  dtoh(c.device(), stream, probe.before, m, kOrderBytes, s.get());
  if (!c.StatusOk(s, "memcpy_dtoh")) return;
  c.Calling("host_callback");
  if (!host_callback(c.device(), stream, SnapshotOrder, &probe)) {
    c.Sync(stream);
    return;  // TFP-RT-HOST-CALLBACK-ONCE reports it
  }
  c.Calling("memcpy_dtoh");
  dtoh(c.device(), stream, probe.after, m, kOrderBytes, s.get());
  if (!c.StatusOk(s, "memcpy_dtoh") || !c.Sync(stream)) return;
  for (int i = 0; i < 100 && probe.runs.load(std::memory_order_acquire) == 0; ++i) SleepMs(10);
  if (probe.runs.load(std::memory_order_acquire) == 0) return;  // TFP-RT-HOST-CALLBACK-ONCE's
  std::string w, g;
  std::string d = FirstDifference(probe.saw_before, a.data(), kOrderBytes, &w, &g);
  if (!d.empty()) {
    const bool old = std::memcmp(probe.saw_before, b.data(), kOrderBytes) == 0;
    return c.Fail("host_callback",
                  "the callback ran before the work enqueued ahead of it on its stream was done: "
                  "the host buffer memcpy_dtoh filled before it " +
                      std::string(old ? "still held its old bytes" : "held other bytes") + " (" +
                      d + ")",
                  w + ": the effects of everything enqueued before the callback",
                  g + (old ? ", the buffer's old bytes" : ""));
  }
  for (const unsigned char* saw : {probe.saw_after_entry, probe.saw_after_exit}) {
    d = FirstDifference(saw, b.data(), kOrderBytes, &w, &g);
    if (d.empty()) continue;
    const bool at_entry = saw == probe.saw_after_entry;
    return c.Fail("host_callback",
                  std::string("the callback saw the effect of memcpy_dtoh enqueued after it ") +
                      (at_entry ? "when it started" : "while it ran (" + std::to_string(kOrderHoldMs) +
                                                          " ms in)") +
                      ": " + d,
                  w + ": the buffer untouched until the callback returns",
                  g + ", written by the later copy");
  }
}

void SyncCheck(Check& c) {
  SP_Stream stream = c.NewStream();
  SP_DeviceMemoryBase* m = c.Alloc(4096);
  auto htod = c.Fn<SE_FN(memcpy_htod)>("memcpy_htod");
  if (stream == nullptr || m == nullptr) return;
  const auto bytes = Pattern(4096, 2);
  OwnedStatus s;
  if (htod != nullptr) {
    c.Calling("memcpy_htod");
    htod(c.device(), stream, m, bytes.data(), bytes.size(), s.get());
    if (!c.StatusOk(s, "memcpy_htod")) return;
  }
  if (auto until_done = c.Fn<SE_FN(block_host_until_done)>("block_host_until_done")) {
    c.Calling("block_host_until_done");
    until_done(c.device(), stream, s.get());
    if (!c.StatusOk(s, "block_host_until_done")) return;
  }
  if (auto all = c.Fn<SE_FN(synchronize_all_activity)>("synchronize_all_activity")) {
    c.Calling("synchronize_all_activity");
    all(c.device(), s.get());
    c.StatusOk(s, "synchronize_all_activity");
  }
}

void AllocStats(Check& c) {
  auto stats_fn = c.Fn<SE_FN(get_allocator_stats)>("get_allocator_stats");
  if (stats_fn == nullptr) return;
  SP_DeviceMemoryBase* m = c.Alloc(4096);  // something in use
  if (m == nullptr) return;
  SP_AllocatorStats st;
  std::memset(&st, 0, sizeof st);
  st.struct_size = SP_ALLOCATORSTATS_STRUCT_SIZE;
  c.Calling("get_allocator_stats");
  if (!stats_fn(c.device(), &st)) return;  // no statistics: fine
  const struct {
    const char* name;
    int64_t v;
  } counts[] = {{"num_allocs", st.num_allocs},
                {"bytes_in_use", st.bytes_in_use},
                {"peak_bytes_in_use", st.peak_bytes_in_use},
                {"largest_alloc_size", st.largest_alloc_size},
                {"bytes_limit", st.bytes_limit}};
  for (const auto& k : counts) {
    if (k.v < 0) {
      return c.Fail("get_allocator_stats", std::string(k.name) + " is negative", ">= 0",
                    std::to_string(k.v));
    }
  }
  if (st.bytes_in_use > st.peak_bytes_in_use) {
    return c.Fail("get_allocator_stats", "bytes_in_use exceeds peak_bytes_in_use",
                  "bytes_in_use <= peak_bytes_in_use (" + std::to_string(st.peak_bytes_in_use) + ")",
                  "bytes_in_use " + std::to_string(st.bytes_in_use));
  }
  if (st.has_bytes_limit && st.bytes_in_use > st.bytes_limit) {
    c.Fail("get_allocator_stats", "bytes_in_use exceeds bytes_limit",
           "bytes_in_use <= bytes_limit (" + std::to_string(st.bytes_limit) + ")",
           "bytes_in_use " + std::to_string(st.bytes_in_use));
  }
}

void MemoryUsage(Check& c) {
  auto usage = c.Fn<SE_FN(device_memory_usage)>("device_memory_usage");
  if (usage == nullptr) return;
  int64_t free_bytes = -1, total = -1;
  c.Calling("device_memory_usage");
  if (!usage(c.device(), &free_bytes, &total)) return;
  if (total <= 0 || free_bytes < 0 || free_bytes > total) {
    c.Fail("device_memory_usage", "reported free " + std::to_string(free_bytes) + " of total " +
                                      std::to_string(total) + " bytes",
           "total > 0 and 0 <= free <= total",
           "free " + std::to_string(free_bytes) + ", total " + std::to_string(total));
  }
}

void TimerCheck(Check& c) {
  auto create = c.Fn<SE_FN(create_timer)>("create_timer");
  auto destroy = c.Fn<SE_FN(destroy_timer)>("destroy_timer");
  auto start = c.Fn<SE_FN(start_timer)>("start_timer");
  auto stop = c.Fn<SE_FN(stop_timer)>("stop_timer");
  if (!c.rp().has_timer_fns()) {
    c.NotApplicable(RuleId::kRtTimer, "the targeted release creates no timers (SP_TimerFns)");
    return;
  }
  if (create == nullptr || start == nullptr || stop == nullptr) return;
  void* ns_p = c.rp().timer_fns().Get<void*>("nanoseconds");
  if (!c.rp().InPluginCode(PluginFunction(ns_p))) return;
  auto nanoseconds = reinterpret_cast<decltype(SP_TimerFns::nanoseconds)>(ns_p);
  SP_Stream stream = c.NewStream();
  if (stream == nullptr) return;
  OwnedStatus s;
  SP_Timer timer = nullptr;
  c.Calling("create_timer");
  create(c.device(), &timer, s.get());
  if (!c.StatusOk(s, "create_timer")) return;
  if (timer == nullptr) {
    c.Report(RuleId::kRtStatusNotSet, "create_timer", "left the timer NULL and the status TF_OK",
             "a non-NULL SP_Timer, or an error status", "NULL with TF_OK");
    return;
  }
  const int64_t t0 = NowNs();
  c.Calling("start_timer");
  start(c.device(), stream, timer, s.get());
  if (c.StatusOk(s, "start_timer")) {
    SleepMs(2);
    c.Calling("stop_timer");
    stop(c.device(), stream, timer, s.get());
    if (c.StatusOk(s, "stop_timer") && c.Sync(stream)) {
      const int64_t wall = NowNs() - t0;
      c.Calling("SP_TimerFns.nanoseconds");
      const uint64_t a = nanoseconds(timer);
      const uint64_t b = nanoseconds(timer);
      const uint64_t limit = static_cast<uint64_t>(wall) + 1000000000ull;
      if (a > limit || a != b) {
        c.Fail("create_timer/start_timer/stop_timer",
               "SP_TimerFns.nanoseconds read " + std::to_string(a) + " then " + std::to_string(b) +
                   " ns for " + std::to_string(wall) + " ns of wall-clock time",
               "at most " + std::to_string(limit) + " ns, the same each time",
               std::to_string(a) + ", " + std::to_string(b));
      }
    }
  }
  if (destroy != nullptr) c.Calling("destroy_timer"), destroy(c.device(), timer);
}

// Two streams and an event: the first stream destroyed, the event recorded
// on the second and waited for, then both destroyed. Correct for any plugin;
// the validation layer finds a plugin that returned one handle for both
// creates (TFP-RT-HANDLE-ALIASED, then USE-AFTER-DESTROY, DOUBLE-DESTROY).
void HandleLifetimes(Check& c) {
  auto create = c.Fn<SE_FN(create_stream)>("create_stream");
  auto destroy = c.Fn<SE_FN(destroy_stream)>("destroy_stream");
  auto record = c.Fn<SE_FN(record_event)>("record_event");
  auto wait = c.Fn<SE_FN(block_host_for_event)>("block_host_for_event");
  auto destroy_event = c.Fn<SE_FN(destroy_event)>("destroy_event");
  if (destroy == nullptr || record == nullptr || wait == nullptr || destroy_event == nullptr) {
    return;
  }
  auto create_event = c.Fn<SE_FN(create_event)>("create_event");
  if (create == nullptr || create_event == nullptr) return;
  // Failures here are other checks' findings (stream, event): this one
  // only gives the layer a sequence to watch.
  OwnedStatus s;
  SP_Stream first = nullptr, second = nullptr;
  SP_Event event = nullptr;
  c.Calling("create_stream");
  create(c.device(), &first, s.get());
  if (!s.ok()) first = nullptr;
  OwnedStatus s2;
  c.Calling("create_stream");
  create(c.device(), &second, s2.get());
  if (!s2.ok()) second = nullptr;
  OwnedStatus s3;
  c.Calling("create_event");
  create_event(c.device(), &event, s3.get());
  if (!s3.ok()) event = nullptr;
  if (first != nullptr) c.Calling("destroy_stream"), destroy(c.device(), first);
  if (second != nullptr && event != nullptr) {
    OwnedStatus r;
    c.Calling("record_event");
    record(c.device(), second, event, r.get());
    if (r.ok()) {
      OwnedStatus w;
      c.Calling("block_host_for_event");
      wait(c.device(), event, w.get());
    }
  }
  if (event != nullptr) c.Calling("destroy_event"), destroy_event(c.device(), event);
  if (second != nullptr) c.Calling("destroy_stream"), destroy(c.device(), second);

  // Two threads, each copying on a stream of its own (TFP-RT-STREAM-CONCURRENT
  // when the plugin handed both the same one).
  auto htod = c.Fn<SE_FN(memcpy_htod)>("memcpy_htod");
  SP_Stream mine[2] = {c.NewStream(), c.NewStream()};
  SP_DeviceMemoryBase* mem[2] = {c.Alloc(256), c.Alloc(256)};
  if (htod == nullptr || mine[0] == nullptr || mine[1] == nullptr || mem[0] == nullptr ||
      mem[1] == nullptr) {
    return;
  }
  const auto bytes = Pattern(256, 4);
  auto copy = [&](int i) {
    OwnedStatus cs;
    htod(c.device(), mine[i], mem[i], bytes.data(), bytes.size(), cs.get());
  };
  c.Calling("memcpy_htod");
  std::thread other(copy, 1);
  copy(0);
  other.join();
  c.Sync(mine[0]);
  c.Sync(mine[1]);
}

// Handles of each kind, then the platform torn down in TensorFlow's order.
void Teardown(Check& c) {
  c.NewStream();
  c.NewEvent();
  c.Alloc(64);
}

struct CheckDef {
  RuleId rule;
  const char* name;
  void (*run)(Check&);
};
const CheckDef kChecks[] = {
    {RuleId::kRtAllocZero, "alloc-zero", AllocZero},
    {RuleId::kRtAllocAbsurd, "alloc-absurd", AllocAbsurd},
    {RuleId::kRtMemcpyHtod, "memcpy-htod", MemcpyHtod},
    {RuleId::kRtMemcpyDtod, "memcpy-dtod", MemcpyDtod},
    {RuleId::kRtMemset, "memset", Memset},
    {RuleId::kRtMemset32, "memset32", Memset32},
    {RuleId::kRtStream, "stream", StreamCheck},
    {RuleId::kRtEvent, "event", EventCheck},
    {RuleId::kRtStreamDep, "stream-dep", StreamDep},
    {RuleId::kRtHostCallbackOnce, "host-callback-once", HostCallbackOnce},
    {RuleId::kRtHostCallbackOrder, "host-callback-order", HostCallbackOrder},
    {RuleId::kRtSync, "sync", SyncCheck},
    {RuleId::kRtAllocStats, "alloc-stats", AllocStats},
    {RuleId::kRtMemoryUsage, "memory-usage", MemoryUsage},
    {RuleId::kRtTimer, "timer", TimerCheck},
    // Its own findings are the layer's; a crash or hang in it is a stream's.
    {RuleId::kRtStream, "handle-lifetimes", HandleLifetimes},
    {RuleId::kRtTeardown, "teardown", Teardown},
};
constexpr size_t kCheckCount = sizeof kChecks / sizeof kChecks[0];

template <typename F>
F PlatformFn(RegisteredPlatform& rp, PluginStruct& s, const char* name) {
  void* p = s.Get<void*>(name);
  return rp.InPluginCode(PluginFunction(p)) ? reinterpret_cast<F>(p) : nullptr;
}

// TensorFlow's order (stream_executor_internal's destructors).
void TearDownPlatform(RegisteredPlatform& rp) {
  auto* platform = static_cast<SP_Platform*>(rp.platform().data());
  auto set = [](const char* callback) {
    if (g_progress == nullptr) return;
    std::snprintf(g_progress->callback, sizeof g_progress->callback, "%s", callback);
  };
  if (auto f = PlatformFn<decltype(SP_PlatformFns::destroy_device)>(rp, rp.platform_fns(),
                                                                     "destroy_device")) {
    for (size_t i = 0; i < rp.device_count(); ++i) {
      set("SP_PlatformFns.destroy_device");
      f(platform, static_cast<SP_Device*>(rp.device(i).data()));
    }
  }
  if (auto f = PlatformFn<decltype(SP_PlatformFns::destroy_device_fns)>(rp, rp.platform_fns(),
                                                                         "destroy_device_fns")) {
    set("SP_PlatformFns.destroy_device_fns");
    f(platform, static_cast<SP_DeviceFns*>(rp.device_fns().data()));
  }
  if (auto f = PlatformFn<decltype(SP_PlatformFns::destroy_stream_executor)>(
          rp, rp.platform_fns(), "destroy_stream_executor")) {
    set("SP_PlatformFns.destroy_stream_executor");
    f(platform, static_cast<SP_StreamExecutor*>(rp.stream_executor().data()));
  }
  if (rp.has_timer_fns()) {
    if (auto f = PlatformFn<decltype(SP_PlatformFns::destroy_timer_fns)>(rp, rp.platform_fns(),
                                                                          "destroy_timer_fns")) {
      set("SP_PlatformFns.destroy_timer_fns");
      f(platform, static_cast<SP_TimerFns*>(rp.timer_fns().data()));
    }
  }
  if (auto f = PlatformFn<void (*)(SP_PlatformFns*)>(rp, rp.params(), "destroy_platform_fns")) {
    set("SE_PlatformRegistrationParams.destroy_platform_fns");
    f(static_cast<SP_PlatformFns*>(rp.platform_fns().data()));
  }
  if (auto f = PlatformFn<void (*)(SP_Platform*)>(rp, rp.params(), "destroy_platform")) {
    set("SE_PlatformRegistrationParams.destroy_platform");
    f(platform);
  }
}

// One check's child: register, run on each device, release the handles.
void RunCheck(const PhaseContext& context, const CheckDef& def, FindingSink& sink) {
  RegisteredPlatform rp;
  std::string why;
  if (!rp.Register(context, &why)) return;
  // The layer's findings may come from the plugin's threads (host callbacks),
  // even after the check (in process): they go to the running check's sink,
  // or nowhere once it has ended.
  static std::mutex sink_mu;
  static FindingSink* active_sink = nullptr;
  {
    std::lock_guard<std::mutex> lock(sink_mu);
    active_sink = &sink;
  }
  const std::string check_name = def.name;
  g_interposer = new Interposer(context.release, [check_name](const LayerReport& r) {
    std::lock_guard<std::mutex> lock(sink_mu);
    if (active_sink == nullptr) return;
    active_sink->Add(Finding(r.rule)
                 .Set("callback", r.callback)
                 .Set("device", r.device)
                 .Set("detail", r.detail + " (validation layer, runtime check " + check_name + ")")
                 .Set("want", r.want)
                 .Set("got", r.got));
  });
  FILE* trace = nullptr;
  if (!context.trace_path.empty()) {
    trace = std::fopen(context.trace_path.c_str(), "a");
    if (trace != nullptr) {
      std::fprintf(trace, "# runtime check %s (pid %ld)\n", def.name, static_cast<long>(getpid()));
      g_interposer->SetTrace(trace);
    }
  }
  for (size_t i = 0; i < rp.device_count(); ++i) {
    g_interposer->NameDevice(rp.device(i).data(), std::to_string(i));
  }
  g_interposer->Install(rp.platform_fns());
  g_interposer->Install(rp.device_fns());
  g_interposer->Install(rp.stream_executor());
  if (rp.has_timer_fns()) g_interposer->Install(rp.timer_fns());
  Check c(rp, sink, def.rule, context.timeout_ms);
  c.Reserve();
  for (size_t i = 0; i < rp.device_count() && i < kMaxDevices; ++i) {
    c.SetDevice(i);
    def.run(c);
    c.Release();
    if (c.failed()) break;  // one device's finding, not one per device
  }
  if (g_progress != nullptr) std::snprintf(g_progress->device, sizeof g_progress->device, "all");
  if (def.rule == RuleId::kRtTeardown) TearDownPlatform(rp);
  g_interposer->Finish(std::string("at the end of runtime check ") + def.name);
  if (trace != nullptr) std::fflush(trace);
  {
    std::lock_guard<std::mutex> lock(sink_mu);
    active_sink = nullptr;
  }
  // Kept, not deleted: run in process (--in-process) the plugin may still call
  // one of its closures after the check; in a child it ends with the child.
  static auto* kept = new std::vector<std::unique_ptr<Interposer>>();
  kept->emplace_back(g_interposer);
}

}  // namespace

unsigned RuntimeChildCount() { return static_cast<unsigned>(kCheckCount) + 1; }

void RunRuntimePhase(const PhaseContext& context, FindingSink& sink) {
  // The probe: does the platform register, with how many devices?
  IsolatedRun probe;
  std::string error;
  auto probe_body = [&](FindingSink& s) {
    RegisteredPlatform rp;
    std::string why;
    if (!rp.Register(context, &why)) return;
    s.Add(Finding(RuleId::kRtSummary).Set("value", std::to_string(rp.device_count())));
  };
  if (!RunPhase("runtime probe", probe_body, context.timeout_ms, context.in_process, &probe,
                &error) ||
      probe.end != PhaseEnd::kCompleted) {
    return;  // the registration phase reports what goes wrong there
  }
  size_t devices = 0;
  for (const Finding& f : probe.findings) {
    if (f.rule == RuleId::kRtSummary) devices = std::stoul(f.fields[0].second);
  }
  if (devices == 0) return;

  void* page = mmap(nullptr, sizeof(Progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                    -1, 0);
  g_progress = page == MAP_FAILED ? nullptr : static_cast<Progress*>(page);

  std::set<std::string> sent;  // the same finding from several checks: once
  size_t failed = 0;
  std::string failed_names;
  for (const CheckDef& def : kChecks) {
    if (g_progress != nullptr) std::memset(g_progress, 0, sizeof *g_progress);
    IsolatedRun run;
    auto body = [&](FindingSink& s) { RunCheck(context, def, s); };
    const std::string name = std::string("runtime check ") + def.name;
    if (!RunPhase(name.c_str(), body, context.timeout_ms, context.in_process, &run, &error)) {
      throw std::runtime_error("cannot start a child for " + name + ": " + error);
    }
    bool bad = false;
    for (Finding& f : run.findings) {
      const RuleRow& row = GetRule(f.rule);
      if (row.phase == Phase::kIsolation) {
        // The check died: a finding of its own rule, at the callback it was in.
        std::string got;
        std::string detail;
        for (const auto& [k, v] : f.fields) {
          if (k == "signal") detail = "crashed with " + v, got = v;
          if (k == "timeout") detail = "did not return within " + v, got = "still running";
          if (k == "detail") detail = "the process ended (" + v + ")", got = v;
        }
        const std::string callback =
            g_progress != nullptr && g_progress->callback[0] != '\0' ? g_progress->callback : "?";
        const std::string device =
            g_progress != nullptr && g_progress->device[0] != '\0' ? g_progress->device : "0";
        f = Finding(def.rule)
                .Set("callback", callback.compare(0, 3, "SP_") == 0 || callback.compare(0, 3, "SE_") == 0
                                     ? callback
                                     : "SP_StreamExecutor." + callback)
                .Set("device", device)
                .Set("detail", detail + " (runtime check " + def.name + ")")
                .Set("want", "returns")
                .Set("got", got);
      }
      // A NotChecked marker is no failure of the check.
      if (GetRule(f.rule).severity != Severity::kInfo && NotCheckedReason(f).empty()) bad = true;
      std::string key = GetRule(f.rule).id;
      bool layer = false;
      for (const auto& [k, v] : f.fields) {
        layer = layer || (k == "detail" && v.find("(validation layer, ") != std::string::npos);
      }
      // The layer's: once per rule and callback, from the first check that saw it.
      for (const auto& [k, v] : f.fields) {
        if (!layer || k == "callback") key += "\x1f" + k + "=" + v;
      }
      if (sent.insert(key).second) sink.Add(std::move(f));
    }
    if (bad) {
      ++failed;
      failed_names += (failed_names.empty() ? "" : ", ") + std::string(def.name);
    }
  }
  const size_t checked = std::min(devices, kMaxDevices);
  sink.Add(Finding(RuleId::kRtSummary)
               .Set("callback", "SP_StreamExecutor")
               .Set("detail", std::to_string(kCheckCount) + " runtime checks, each in its own process, on " +
                                  std::to_string(checked) + " of " + std::to_string(devices) +
                                  " devices")
               .Set("want", "every check passes")
               .Set("got", std::to_string(kCheckCount - failed) + " pass" +
                               (failed_names.empty() ? "" : "; failing: " + failed_names)));
}

}  // namespace tfp_validator
