// SPDX-License-Identifier: Apache-2.0
//
// Who packs which B panel when the units of one GEMM share a packed B
// (vacc_gemm.cc): the first unit to need a panel claims it and packs it
// (with the micro-kernel, as it computes its tile); a unit that needs a
// panel another has claimed waits the few microseconds until it is done
// (or sleeps, if the packer was preempted).
// Each panel is packed once per call instead of once per unit.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_PANEL_CLAIMS_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_PANEL_CLAIMS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "vacc_wait.h"

namespace vacc {
namespace gemm {

class PanelClaims {
 public:
  explicit PanelClaims(int64_t count) : states_(new std::atomic<uint8_t>[count]) {
    for (int64_t i = 0; i < count; ++i) states_[i].store(kFree, std::memory_order_relaxed);
  }

  enum class State { kClaimed, kPacked, kBusy };
  // kClaimed: the caller has just claimed panel i and must pack it, then
  // call Packed(i). kPacked: it is packed. kBusy: another unit is packing
  // it (inside one tile: do other panels first, then Wait).
  State TryClaim(int64_t i) {
    uint8_t s = states_[i].load(std::memory_order_acquire);
    if (s == kFree && states_[i].compare_exchange_strong(s, kPacking, std::memory_order_acquire)) {
      return State::kClaimed;
    }
    return s == kPacked ? State::kPacked : State::kBusy;
  }
  // Until panel i is packed (claimed by another unit): spins for `spin`,
  // then sleeps until Packed, so a preempted packer is not kept from a core
  // by our spinning (vacc_wait.h).
  void Wait(int64_t i, std::chrono::nanoseconds spin) {
    packed_.Wait(spin, [&] { return states_[i].load(std::memory_order_acquire) == kPacked; });
  }
  void Packed(int64_t i) {
    states_[i].store(kPacked, std::memory_order_release);
    packed_.Notify();
  }

 private:
  static constexpr uint8_t kFree = 0, kPacking = 1, kPacked = 2;
  std::unique_ptr<std::atomic<uint8_t>[]> states_;
  WaitPoint packed_;
};

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_PANEL_CLAIMS_H_
