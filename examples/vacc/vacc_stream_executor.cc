// SPDX-License-Identifier: Apache-2.0
//
// SP_StreamExecutor: memory, streams, events, copies and host callbacks for
// one device (the `device` argument; its device_handle is our Device).
//
// Contracts common to every callback here:
//   - Threads: TensorFlow calls them from any of its threads, concurrently,
//     including on the same stream; everything below is thread-safe.
//   - Status: TF passes a fresh TF_Status (TF_OK). We set TF_OK on success and
//     an error naming the callback and argument on failure; an error on an
//     asynchronous call means nothing was enqueued.
//   - Asynchronous calls (those taking an SP_Stream) only enqueue: the work
//     runs later on a compute unit, in stream order. Host buffers passed to
//     them must stay valid until the stream reaches the work (TF ensures it).
//   - Handles (SP_Stream, SP_Event, SP_Timer) are ours from create_* until
//     destroy_*; TF destroys each exactly once.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/tf_status.h"
#include "vacc_callbacks.h"
#include "vacc_copy.h"
#include "vacc_device.h"
#include "vacc_struct_size.h"

namespace vacc {
namespace {

// Handle conversions: an SP_Stream is our Stream*, and so on.
Stream* ToStream(SP_Stream s) { return reinterpret_cast<Stream*>(s); }
Event* ToEvent(SP_Event e) { return reinterpret_cast<Event*>(e); }
Timer* ToTimer(SP_Timer t) { return reinterpret_cast<Timer*>(t); }

Status NullArgument(const char* callback, const char* argument) {
  return Status::Error(TF_INVALID_ARGUMENT, std::string(callback) + ": " + argument + " is NULL");
}

// Repeats a `width`-byte pattern over `size` bytes (size a multiple of width).
// Doubling copies: memcpy's speed instead of a store per element.
// TODO(vendor): the device's fill engine or a fill kernel.
void Fill(void* location, const void* pattern, unsigned width, uint64_t size) {
  char* p = static_cast<char*>(location);
  if (size == 0) return;
  std::memcpy(p, pattern, std::min<uint64_t>(width, size));
  uint64_t filled = width;
  while (filled < size) {
    const uint64_t n = std::min(filled, size - filled);
    std::memcpy(p + filled, p, n);
    filled += n;
  }
}

// ---- memory

// In: size in bytes, memory_space (0 device; vacc has one kind of memory and
// treats every space alike), mem pre-filled by TF (struct_size).
// Out: mem->opaque/size, or opaque NULL and size 0 when it does not fit
// (TF reports out-of-memory then). Size 0 gives NULL too, as TF expects.
void Allocate(const SP_Device* device, uint64_t size, int64_t /*memory_space*/,
              SP_DeviceMemoryBase* mem) {
  void* p = Device::From(device)->heap().Allocate(size);
  mem->opaque = p;
  mem->size = p != nullptr ? size : 0;
  mem->payload = 0;
}

// In: memory from allocate (opaque NULL is a no-op). Anything else is a bug
// in the caller, reported on stderr and otherwise ignored.
void Deallocate(const SP_Device* device, SP_DeviceMemoryBase* memory) {
  if (memory == nullptr || memory->opaque == nullptr) return;
  Device* d = Device::From(device);
  if (!d->heap().Deallocate(memory->opaque)) {
    std::fprintf(stderr, "vacc: deallocate: %p is not a live allocation of %s (ignored)\n",
                 memory->opaque, d->name().c_str());
  }
  memory->opaque = nullptr;
  memory->size = 0;
}

// Host memory the device can copy from fast (pinned, on a GPU). NULL on
// failure; TF frees it with host_memory_deallocate.
void* HostMemoryAllocate(const SP_Device* device, uint64_t size) {
  return Device::From(device)->HostAllocate(size);
}

void HostMemoryDeallocate(const SP_Device* device, void* mem) {
  Device::From(device)->HostDeallocate(mem);
}

// Memory both the host and the device address directly. vacc memory is host
// memory, so unified memory is device memory, counted the same way.
void* UnifiedMemoryAllocate(const SP_Device* device, uint64_t bytes) {
  return Device::From(device)->heap().Allocate(bytes);
}

void UnifiedMemoryDeallocate(const SP_Device* device, void* location) {
  if (location != nullptr) Device::From(device)->heap().Deallocate(location);
}

// In: stats pre-filled by TF (struct_size). Out: every field that fits.
// Returns true: vacc always has statistics. Exact, not estimated.
TF_Bool GetAllocatorStats(const SP_Device* device, SP_AllocatorStats* stats) {
  const size_t size = VACC_NEGOTIATE(stats, SP_AllocatorStats, SP_ALLOCATORSTATS, nullptr);
  if (size == 0) return false;
  const HeapStats h = Device::From(device)->heap().Stats();
  stats->struct_size = size;
  VACC_SET(stats, size, num_allocs, h.num_allocs);
  VACC_SET(stats, size, bytes_in_use, h.bytes_in_use);
  VACC_SET(stats, size, peak_bytes_in_use, h.peak_bytes_in_use);
  VACC_SET(stats, size, largest_alloc_size, h.largest_alloc_size);
  VACC_SET(stats, size, has_bytes_limit, 1);
  VACC_SET(stats, size, bytes_limit, h.bytes_limit);
  VACC_SET(stats, size, bytes_reserved, h.bytes_reserved);
  VACC_SET(stats, size, peak_bytes_reserved, h.peak_bytes_reserved);
  VACC_SET(stats, size, has_bytes_reservable_limit, 1);
  VACC_SET(stats, size, bytes_reservable_limit, h.bytes_limit);
  VACC_SET(stats, size, largest_free_block_bytes, h.largest_free_block_bytes);
  return true;
}

// Out: free and total bytes. TF sizes its BFC pool from this. "Free" is what
// the live blocks (rounded to the heap's alignment) leave of the capacity.
TF_Bool DeviceMemoryUsage(const SP_Device* device, int64_t* free, int64_t* total) {
  const HeapStats h = Device::From(device)->heap().Stats();
  *total = h.bytes_limit;
  *free = h.bytes_limit - h.bytes_reserved;
  return true;
}

// ---- streams

void CreateStream(const SP_Device* device, SP_Stream* stream, TF_Status* status) {
  *stream = reinterpret_cast<SP_Stream>(Device::From(device)->CreateStream());
  TF_SetStatus(status, TF_OK, "");
}

// Waits for the stream's queued work, then frees it.
void DestroyStream(const SP_Device* device, SP_Stream stream) {
  Device::From(device)->DestroyStream(ToStream(stream));
}

// Work enqueued on `dependent` after this call waits for everything enqueued
// on `other` before it.
void CreateStreamDependency(const SP_Device*, SP_Stream dependent, SP_Stream other,
                            TF_Status* status) {
  if (dependent == nullptr || other == nullptr) {
    return SetTfStatus(status, NullArgument("create_stream_dependency",
                                            dependent == nullptr ? "dependent" : "other"));
  }
  Stream* o = ToStream(other);
  ToStream(dependent)->EnqueueWait(o->shared_from_this(), o->last_enqueued());
  TF_SetStatus(status, TF_OK, "");
}

// Out: TF_OK, or the error of the first operation that failed on the stream.
void GetStreamStatus(const SP_Device*, SP_Stream stream, TF_Status* status) {
  if (stream == nullptr) return SetTfStatus(status, NullArgument("get_stream_status", "stream"));
  SetTfStatus(status, ToStream(stream)->status());
}

// ---- events

void CreateEvent(const SP_Device* device, SP_Event* event, TF_Status* status) {
  *event = reinterpret_cast<SP_Event>(Device::From(device)->CreateEvent());
  TF_SetStatus(status, TF_OK, "");
}

// A record still queued keeps the event alive until it has run.
void DestroyEvent(const SP_Device* device, SP_Event event) {
  Device::From(device)->DestroyEvent(ToEvent(event));
}

// PENDING until the stream reaches the last record; COMPLETE after, or ERROR
// if the stream had failed by then. Never recorded: COMPLETE (as CUDA).
SE_EventStatus GetEventStatus(const SP_Device*, SP_Event event) {
  return event == nullptr ? SE_EVENT_UNKNOWN : ToEvent(event)->Poll();
}

// Marks the current end of `stream`. Recording again moves the mark.
void RecordEvent(const SP_Device*, SP_Stream stream, SP_Event event, TF_Status* status) {
  if (stream == nullptr || event == nullptr) {
    return SetTfStatus(status, NullArgument("record_event", stream == nullptr ? "stream" : "event"));
  }
  ToEvent(event)->Record(ToStream(stream)->shared_from_this());
  TF_SetStatus(status, TF_OK, "");
}

// Later work on `stream` waits for the event's mark as it is now (a later
// record does not change what this wait waits for).
void WaitForEvent(const SP_Device* const, SP_Stream stream, SP_Event event,
                  TF_Status* const status) {
  if (stream == nullptr || event == nullptr) {
    return SetTfStatus(status,
                       NullArgument("wait_for_event", stream == nullptr ? "stream" : "event"));
  }
  auto [marked, number] = ToEvent(event)->Mark();
  ToStream(stream)->EnqueueWait(std::move(marked), number);
  TF_SetStatus(status, TF_OK, "");
}

// ---- timers (TF releases up to 2.x that still use SP_Timer)

void CreateTimer(const SP_Device* device, SP_Timer* timer, TF_Status* status) {
  *timer = reinterpret_cast<SP_Timer>(Device::From(device)->CreateTimer());
  TF_SetStatus(status, TF_OK, "");
}

void DestroyTimer(const SP_Device* device, SP_Timer timer) {
  Device::From(device)->DestroyTimer(ToTimer(timer));
}

void StartTimer(const SP_Device*, SP_Stream stream, SP_Timer timer, TF_Status* status) {
  if (stream == nullptr || timer == nullptr) {
    return SetTfStatus(status, NullArgument("start_timer", stream == nullptr ? "stream" : "timer"));
  }
  ToTimer(timer)->Start(ToStream(stream));
  TF_SetStatus(status, TF_OK, "");
}

void StopTimer(const SP_Device*, SP_Stream stream, SP_Timer timer, TF_Status* status) {
  if (stream == nullptr || timer == nullptr) {
    return SetTfStatus(status, NullArgument("stop_timer", stream == nullptr ? "stream" : "timer"));
  }
  ToTimer(timer)->Stop(ToStream(stream));
  TF_SetStatus(status, TF_OK, "");
}

// SP_TimerFns.nanoseconds: device time between start and stop, once the
// stream has run both; 0 before.
uint64_t Nanoseconds(SP_Timer timer) { return timer ? ToTimer(timer)->Nanoseconds() : 0; }

// ---- copies. Device pointers are checked against the heap up front, so a
// bad address is an error status now, not a crash on a worker later.

// The checks every copy makes before it runs or is enqueued: both pointers
// present, and each device side inside one live allocation of this device.
Status CheckCopy(const Device* d, const void* dst, const void* src, uint64_t size,
                 const char* callback, bool dst_on_device, bool src_on_device) {
  if (size > 0 && (dst == nullptr || src == nullptr)) {
    return NullArgument(callback, dst == nullptr ? "destination" : "source");
  }
  Status s;
  if (dst_on_device) s = d->CheckDeviceRange(dst, size, callback, "destination");
  if (s.ok() && src_on_device) s = d->CheckDeviceRange(src, size, callback, "source");
  return s;
}

// Copies up to this size run at once on an idle stream (RunNowOrEnqueue):
// they take a few microseconds, less than waking a unit to run them.
// Larger ones stay asynchronous, so that the host thread can go on.
constexpr uint64_t kRunNowCopyBytes = uint64_t{64} << 10;

// Enqueues a copy of `size` bytes after checking the device side(s).
void EnqueueCopy(const SP_Device* device, SP_Stream stream, void* dst, const void* src,
                 uint64_t size, const char* callback, bool dst_on_device, bool src_on_device,
                 TF_Status* status) {
  Device* d = Device::From(device);
  if (stream == nullptr) return SetTfStatus(status, NullArgument(callback, "stream"));
  const Status s = CheckCopy(d, dst, src, size, callback, dst_on_device, src_on_device);
  if (!s.ok()) return SetTfStatus(status, s);
  if (size > 0) {
    Stream::Work copy = [d, dst, src, size] {
      Copy(d->units(), dst, src, size);
      return Status();
    };
    if (size <= kRunNowCopyBytes) {
      ToStream(stream)->RunNowOrEnqueue(std::move(copy));
    } else {
      ToStream(stream)->Enqueue(std::move(copy));
    }
  }
  TF_SetStatus(status, TF_OK, "");
}

void MemcpyDtoH(const SP_Device* device, SP_Stream stream, void* host_dst,
                const SP_DeviceMemoryBase* device_src, uint64_t size, TF_Status* status) {
  EnqueueCopy(device, stream, host_dst, device_src ? device_src->opaque : nullptr, size,
              "memcpy_dtoh", false, true, status);
}

void MemcpyHtoD(const SP_Device* device, SP_Stream stream, SP_DeviceMemoryBase* device_dst,
                const void* host_src, uint64_t size, TF_Status* status) {
  EnqueueCopy(device, stream, device_dst ? device_dst->opaque : nullptr, host_src, size,
              "memcpy_htod", true, false, status);
}

void MemcpyDtoD(const SP_Device* device, SP_Stream stream, SP_DeviceMemoryBase* device_dst,
                const SP_DeviceMemoryBase* device_src, uint64_t size, TF_Status* status) {
  EnqueueCopy(device, stream, device_dst ? device_dst->opaque : nullptr,
              device_src ? device_src->opaque : nullptr, size, "memcpy_dtod", true, true, status);
}

// Synchronous copies run now, on the calling thread. Like a GPU's copy on a
// non-blocking stream, they do not wait for work queued on streams: TF
// orders them itself.
void SyncCopy(const SP_Device* device, void* dst, const void* src, uint64_t size,
              const char* callback, bool dst_on_device, bool src_on_device, TF_Status* status) {
  Device* d = Device::From(device);
  const Status s = CheckCopy(d, dst, src, size, callback, dst_on_device, src_on_device);
  if (!s.ok()) return SetTfStatus(status, s);
  if (size > 0) Copy(d->units(), dst, src, size);
  TF_SetStatus(status, TF_OK, "");
}

void SyncMemcpyDtoH(const SP_Device* device, void* host_dst, const SP_DeviceMemoryBase* device_src,
                    uint64_t size, TF_Status* status) {
  SyncCopy(device, host_dst, device_src ? device_src->opaque : nullptr, size, "sync_memcpy_dtoh",
           false, true, status);
}

void SyncMemcpyHtoD(const SP_Device* device, SP_DeviceMemoryBase* device_dst, const void* host_src,
                    uint64_t size, TF_Status* status) {
  SyncCopy(device, device_dst ? device_dst->opaque : nullptr, host_src, size, "sync_memcpy_htod",
           true, false, status);
}

void SyncMemcpyDtoD(const SP_Device* device, SP_DeviceMemoryBase* device_dst,
                    const SP_DeviceMemoryBase* device_src, uint64_t size, TF_Status* status) {
  SyncCopy(device, device_dst ? device_dst->opaque : nullptr,
           device_src ? device_src->opaque : nullptr, size, "sync_memcpy_dtod", true, true, status);
}

// ---- waiting

// Blocks until the event's current mark has run. Error if it ran on a failed
// stream. A never-recorded event returns at once.
void BlockHostForEvent(const SP_Device*, SP_Event event, TF_Status* status) {
  if (event == nullptr) return SetTfStatus(status, NullArgument("block_host_for_event", "event"));
  SetTfStatus(status, ToEvent(event)->BlockHost());
}

// Blocks until everything enqueued on the stream so far has run; returns the
// stream's status (its first failure, if any).
void BlockHostUntilDone(const SP_Device*, SP_Stream stream, TF_Status* status) {
  if (stream == nullptr) return SetTfStatus(status, NullArgument("block_host_until_done", "stream"));
  SetTfStatus(status, ToStream(stream)->BlockUntilDone());
}

// Blocks until every stream of the device is idle.
void SynchronizeAllActivity(const SP_Device* device, TF_Status* status) {
  SetTfStatus(status, Device::From(device)->SynchronizeAll());
}

// ---- fills (TF 2.7 and later)

void EnqueueFill(const SP_Device* device, SP_Stream stream, SP_DeviceMemoryBase* location,
                 uint32_t pattern, unsigned width, uint64_t size, const char* callback,
                 TF_Status* status) {
  Device* d = Device::From(device);
  if (stream == nullptr) return SetTfStatus(status, NullArgument(callback, "stream"));
  if (size % width != 0) {
    return SetTfStatus(status, Status::Error(TF_INVALID_ARGUMENT,
                                             std::string(callback) + ": size " +
                                                 std::to_string(size) + " is not a multiple of " +
                                                 std::to_string(width) + " bytes"));
  }
  void* p = location ? location->opaque : nullptr;
  Status s = d->CheckDeviceRange(p, size, callback, "location");
  if (!s.ok()) return SetTfStatus(status, s);
  if (size > 0) {
    ToStream(stream)->Enqueue([p, pattern, width, size] {
      Fill(p, &pattern, width, size);  // memset32 stores the 32-bit value itself
      return Status();
    });
  }
  TF_SetStatus(status, TF_OK, "");
}

[[maybe_unused]] void MemZero(const SP_Device* device, SP_Stream stream,
                              SP_DeviceMemoryBase* location, uint64_t size, TF_Status* status) {
  EnqueueFill(device, stream, location, 0, 1, size, "mem_zero", status);
}

[[maybe_unused]] void Memset(const SP_Device* device, SP_Stream stream,
                             SP_DeviceMemoryBase* location, uint8_t pattern, uint64_t size,
                             TF_Status* status) {
  EnqueueFill(device, stream, location, pattern, 1, size, "memset", status);
}

// size is in bytes and must be a multiple of 4.
[[maybe_unused]] void Memset32(const SP_Device* device, SP_Stream stream,
                               SP_DeviceMemoryBase* location, uint32_t pattern, uint64_t size,
                               TF_Status* status) {
  EnqueueFill(device, stream, location, pattern, 4, size, "memset32", status);
}

// ---- host callbacks

// Runs callback_fn(callback_arg, status) once, on a compute unit, when the
// stream reaches this point, even if the stream has failed (TF frees its
// context inside the callback, so it must run exactly once). `status` holds
// the stream's status on entry; the callback overwrites it with its own
// result, and an error there fails the stream. Returns false (nothing
// enqueued) only for a NULL stream or callback.
TF_Bool HostCallback(const SP_Device*, SP_Stream stream, SE_StatusCallbackFn callback_fn,
                     void* callback_arg) {
  if (stream == nullptr || callback_fn == nullptr) return false;
  ToStream(stream)->EnqueueAlways([callback_fn, callback_arg](const Status& so_far) {
    TF_Status* status = TF_NewStatus();
    SetTfStatus(status, so_far);
    callback_fn(callback_arg, status);
    Status result;
    if (TF_GetCode(status) != TF_OK) {
      result = Status::Error(TF_GetCode(status),
                             std::string("host callback failed: ") + TF_Message(status));
    }
    TF_DeleteStatus(status);
    return result;
  });
  return true;
}

}  // namespace

void FillStreamExecutor(SP_StreamExecutor* se, size_t size) {
  se->struct_size = size;
  VACC_SET(se, size, ext, nullptr);
  VACC_SET(se, size, allocate, Allocate);
  VACC_SET(se, size, deallocate, Deallocate);
  VACC_SET(se, size, host_memory_allocate, HostMemoryAllocate);
  VACC_SET(se, size, host_memory_deallocate, HostMemoryDeallocate);
  VACC_SET(se, size, unified_memory_allocate, UnifiedMemoryAllocate);
  VACC_SET(se, size, unified_memory_deallocate, UnifiedMemoryDeallocate);
  VACC_SET(se, size, get_allocator_stats, GetAllocatorStats);
  VACC_SET(se, size, device_memory_usage, DeviceMemoryUsage);
  VACC_SET(se, size, create_stream, CreateStream);
  VACC_SET(se, size, destroy_stream, DestroyStream);
  VACC_SET(se, size, create_stream_dependency, CreateStreamDependency);
  VACC_SET(se, size, get_stream_status, GetStreamStatus);
  VACC_SET(se, size, create_event, CreateEvent);
  VACC_SET(se, size, destroy_event, DestroyEvent);
  VACC_SET(se, size, get_event_status, GetEventStatus);
  VACC_SET(se, size, record_event, RecordEvent);
  VACC_SET(se, size, wait_for_event, WaitForEvent);
  VACC_SET(se, size, create_timer, CreateTimer);
  VACC_SET(se, size, destroy_timer, DestroyTimer);
  VACC_SET(se, size, start_timer, StartTimer);
  VACC_SET(se, size, stop_timer, StopTimer);
  VACC_SET(se, size, memcpy_dtoh, MemcpyDtoH);
  VACC_SET(se, size, memcpy_htod, MemcpyHtoD);
  VACC_SET(se, size, memcpy_dtod, MemcpyDtoD);
  VACC_SET(se, size, sync_memcpy_dtoh, SyncMemcpyDtoH);
  VACC_SET(se, size, sync_memcpy_htod, SyncMemcpyHtoD);
  VACC_SET(se, size, sync_memcpy_dtod, SyncMemcpyDtoD);
  VACC_SET(se, size, block_host_for_event, BlockHostForEvent);
  VACC_SET(se, size, block_host_until_done, BlockHostUntilDone);
  VACC_SET(se, size, synchronize_all_activity, SynchronizeAllActivity);
#if TFPLUGIN_STREAM_EXECUTOR_REVISION >= 2  // TF 2.7 inserted these before host_callback
  VACC_SET(se, size, mem_zero, MemZero);
  VACC_SET(se, size, memset, Memset);
  VACC_SET(se, size, memset32, Memset32);
#endif
  VACC_SET(se, size, host_callback, HostCallback);
}

void FillTimerFns(SP_TimerFns* timer_fns, size_t size) {
  timer_fns->struct_size = size;
  VACC_SET(timer_fns, size, ext, nullptr);
  VACC_SET(timer_fns, size, nanoseconds, Nanoseconds);
}

}  // namespace vacc
