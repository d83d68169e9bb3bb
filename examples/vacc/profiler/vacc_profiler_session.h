// SPDX-License-Identifier: Apache-2.0
//
// Kernel events while a profiling session is active, and the XSpace they
// become. TP_ProfilerFns (vacc_profiler.cc) drives it; kernels feed it
// (kernels/vacc_kernel.cc, KernelContext::Enqueue).
//
// Cost when no session is active: ProfilingActive(), one relaxed atomic load
// per kernel launch; nothing else runs. While active, each launch interns
// its (node, op) name once per session (a mutex and a map lookup) and its
// work is timed on the compute unit that runs it, then appended under a
// mutex: fine for a profile, never on the unprofiled path.
//
// Threads: Start/Stop/Serialize come from TensorFlow's profiler thread, one
// session at a time; InternOp from TensorFlow's op threads; Record from
// compute units. Work launched in one session and finishing in the next is
// dropped (its session number no longer matches).
#ifndef VACC_PROFILER_VACC_PROFILER_SESSION_H_
#define VACC_PROFILER_VACC_PROFILER_SESSION_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace vacc {
namespace profiler {

using Clock = std::chrono::steady_clock;

namespace internal {
extern std::atomic<bool> g_active;
}  // namespace internal

// True while a session records (relaxed: a launch racing with start/stop
// may or may not be recorded, as with any profiler).
inline bool ProfilingActive() { return internal::g_active.load(std::memory_order_relaxed); }

// Begins a session: drops the previous one's events. False (and *error) if
// one is already active.
bool StartSession(std::string* error);
// Ends it; events stay until the next StartSession. False if none was active.
bool StopSession(std::string* error);

// What a launch records: the session it was launched in and its op.
struct OpTag {
  uint64_t session = 0;
  int64_t op_id = 0;  // the event metadata id of (node, op type) in this session
};
// Interns (node name, op type) for the current session.
OpTag InternOp(const std::string& node, const std::string& op_type);

// One kernel's work, timed on the compute unit that ran it. `stream`
// identifies the queue (one timeline line per stream).
void Record(const OpTag& tag, int device_ordinal, const void* stream, Clock::time_point start,
            Clock::time_point end);

// Events recorded in the current or last session.
size_t RecordedEventCount();

// The XPlane name of device `ordinal`: "/device:CUSTOM:<type>:<ordinal>".
std::string PlaneName(const std::string& device_type, int ordinal);

// The last session as a serialized XSpace: one plane per device in
// [0, device_count) (and any other ordinal that recorded events), one line
// per stream, one event per kernel launch whose metadata is the node name
// (display name: the op type, stat "tf_op" = "node:OpType").
std::string SerializeSession(const std::string& device_type, int device_count);

}  // namespace profiler
}  // namespace vacc

#endif  // VACC_PROFILER_VACC_PROFILER_SESSION_H_
