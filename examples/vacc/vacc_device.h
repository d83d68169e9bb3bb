// SPDX-License-Identifier: Apache-2.0
//
// One vacc device: its memory (DeviceHeap), its compute units, and the
// streams, events and timers TensorFlow created on it. SP_Device's
// device_handle points here; every SP_StreamExecutor callback starts from it.
#ifndef VACC_DEVICE_H_
#define VACC_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "vacc_compute_units.h"
#include "vacc_config.h"
#include "vacc_heap.h"
#include "vacc_stream.h"

namespace vacc {

class Device {
 public:
  Device(int ordinal, const Config& config);
  // Waits for every stream, then stops the compute units and releases the
  // memory (whatever TensorFlow did not free is freed here).
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  static Device* From(const SP_Device* d) { return static_cast<Device*>(d->device_handle); }

  int ordinal() const { return ordinal_; }
  const Config& config() const { return config_; }
  DeviceHeap& heap() { return heap_; }
  ComputeUnits& units() { return *units_; }
  const std::string& hardware_name() const { return hardware_name_; }
  const std::string& pci_bus_id() const { return pci_bus_id_; }
  // "VACC:<ordinal>", for messages.
  const std::string& name() const { return name_; }

  // Handles TensorFlow holds. The device keeps each alive until destroyed.
  Stream* CreateStream();
  void DestroyStream(Stream* stream);  // waits for its queued work first
  Event* CreateEvent();
  void DestroyEvent(Event* event);
  Timer* CreateTimer();
  void DestroyTimer(Timer* timer);

  // Waits until every stream has run everything enqueued so far; returns the
  // first failed stream's status, if any.
  Status SynchronizeAll();

  // Pinned host memory (plain host memory here), counted separately.
  void* HostAllocate(uint64_t size);
  void HostDeallocate(void* p);

  // Checks that [p, p + size) is memory of this device; the error names the
  // callback and argument at fault.
  Status CheckDeviceRange(const void* p, uint64_t size, const char* callback,
                          const char* argument) const;

 private:
  const int ordinal_;
  const Config config_;
  DeviceHeap heap_;
  std::unique_ptr<ComputeUnits> units_;
  std::string name_, hardware_name_, pci_bus_id_;

  std::mutex mu_;
  std::unordered_map<Stream*, std::shared_ptr<Stream>> streams_;  // guarded by mu_
  std::unordered_map<Event*, std::shared_ptr<Event>> events_;     // guarded by mu_
  std::unordered_map<Timer*, std::shared_ptr<Timer>> timers_;     // guarded by mu_
  std::unordered_map<void*, uint64_t> host_blocks_;               // guarded by mu_
};

}  // namespace vacc

#endif  // VACC_DEVICE_H_
