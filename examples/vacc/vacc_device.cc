// SPDX-License-Identifier: Apache-2.0
#include "vacc_device.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace vacc {

Device::Device(int ordinal, const Config& config)
    : ordinal_(ordinal),
      config_(config),
      heap_(config.memory_bytes),
      units_(new ComputeUnits(config.compute_units, config.spin,
                              "vacc" + std::to_string(ordinal))) {
  name_ = "VACC:" + std::to_string(ordinal);
  hardware_name_ = "vacc virtual accelerator (" + std::to_string(config.compute_units) +
                   " compute units, " + std::to_string(config.memory_bytes >> 20) + " MiB)";
  // TODO(vendor): the real bus address. A made-up one in PCI's
  // domain:bus:device.function form, unique per ordinal.
  char bus[32];
  std::snprintf(bus, sizeof bus, "0000:%02x:%02x.0", 0x7a, ordinal & 0xff);
  pci_bus_id_ = bus;
}

Device::~Device() {
  SynchronizeAll();
  units_.reset();  // joins the workers; nothing runs after this
  std::lock_guard<std::mutex> lock(mu_);
  streams_.clear();
  events_.clear();
  timers_.clear();
  for (auto& [p, size] : host_blocks_) std::free(p);
  host_blocks_.clear();
}

Stream* Device::CreateStream() {
  auto s = std::make_shared<Stream>(units_.get(), config_.spin, ordinal_);
  std::lock_guard<std::mutex> lock(mu_);
  streams_.emplace(s.get(), s);
  return s.get();
}

void Device::DestroyStream(Stream* stream) {
  std::shared_ptr<Stream> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = streams_.find(stream);
    if (it == streams_.end()) return;  // not ours, or destroyed twice
    s = std::move(it->second);
    streams_.erase(it);
  }
  s->BlockUntilDone();
}

Event* Device::CreateEvent() {
  auto e = std::make_shared<Event>();
  std::lock_guard<std::mutex> lock(mu_);
  events_.emplace(e.get(), e);
  return e.get();
}

void Device::DestroyEvent(Event* event) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.erase(event);  // a queued record still holds it until it has run
}

Timer* Device::CreateTimer() {
  auto t = std::make_shared<Timer>();
  std::lock_guard<std::mutex> lock(mu_);
  timers_.emplace(t.get(), t);
  return t.get();
}

void Device::DestroyTimer(Timer* timer) {
  std::lock_guard<std::mutex> lock(mu_);
  timers_.erase(timer);
}

Status Device::SynchronizeAll() {
  std::vector<std::shared_ptr<Stream>> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [raw, s] : streams_) streams.push_back(s);
  }
  Status first;
  for (auto& s : streams) {
    Status st = s->BlockUntilDone();
    if (first.ok() && !st.ok()) first = std::move(st);
  }
  return first;
}

void* Device::HostAllocate(uint64_t size) {
  if (size == 0) return nullptr;
  const uint64_t rounded = (size + DeviceHeap::kAlignment - 1) / DeviceHeap::kAlignment *
                           DeviceHeap::kAlignment;
  void* p = std::aligned_alloc(DeviceHeap::kAlignment, rounded);
  if (p == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  host_blocks_.emplace(p, size);
  return p;
}

void Device::HostDeallocate(void* p) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (host_blocks_.erase(p) == 0) return;  // not ours: leave it alone
  }
  std::free(p);
}

Status Device::CheckDeviceRange(const void* p, uint64_t size, const char* callback,
                                const char* argument) const {
  if (size == 0 || heap_.Contains(p, size)) return Status();
  char where[64];
  std::snprintf(where, sizeof where, "%p", p);
  std::string why = heap_.Owns(p) ? "is not inside one live allocation of " + name_
                                   : "is not memory of " + name_;
  return Status::Error(TF_INVALID_ARGUMENT, std::string(callback) + ": " + argument + " (" +
                                                where + ", " + std::to_string(size) +
                                                " bytes) " + why);
}

}  // namespace vacc
