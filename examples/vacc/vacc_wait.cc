// SPDX-License-Identifier: Apache-2.0
#include "vacc_wait.h"

#include <algorithm>
#include <thread>

#include "vacc_spin_lock.h"

namespace vacc {
namespace {

// Pure pause-spinning this long before yielding between checks: a hand-over
// between two running threads takes well under a microsecond.
constexpr std::chrono::nanoseconds kPauseOnly{2000};

}  // namespace

bool SpinUntil(std::chrono::nanoseconds budget, const std::function<bool()>& done) {
  if (done()) return true;
  if (budget.count() <= 0) return false;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + budget;
  const auto yield_after = start + std::min(budget, kPauseOnly);
  bool yielding = false;
  for (;;) {
    // Reading the clock costs more than a pause: check it every 32 rounds.
    for (int i = 0; i < 32; ++i) {
      if (yielding) {
        std::this_thread::yield();
      } else {
        CpuRelax();
      }
      if (done()) return true;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    yielding = now >= yield_after;
  }
}

}  // namespace vacc
