// SPDX-License-Identifier: Apache-2.0
//
// Whether a thread of this process sleeps, from /proc: how the tests see
// that a waiter stopped spinning (a spinning or yielding thread stays
// runnable, 'R'; one blocked in the kernel shows 'S').
#ifndef TESTS_VACC_VACC_THREAD_STATE_H_
#define TESTS_VACC_VACC_THREAD_STATE_H_

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace vacc {

inline pid_t CurrentTid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// The state letter of thread `tid` (R running or runnable, S sleeping, ...),
// or '?' if it cannot be read.
inline char ThreadState(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::stringstream text;
  text << in.rdbuf();
  const std::string stat = text.str();
  // "tid (name) S ...": the name may hold spaces and parentheses.
  const size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? '?' : stat[close + 2];
}

// True once thread `tid` is seen sleeping, polling for up to 10 s (a bound
// against a hang, not a timing: a waiter that sleeps does so within its spin
// budget of microseconds; one that spins forever is never seen asleep).
inline bool SeenAsleep(pid_t tid) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ThreadState(tid) == 'S') return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// How many times thread `tid` has gone to sleep (voluntary_ctxt_switches in
// /proc), or -1 if it cannot be read: a sleeping thread that is woken for
// nothing and sleeps again adds one.
inline long VoluntarySwitches(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/status");
  const std::string key = "voluntary_ctxt_switches:";
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, key.size(), key) == 0) return std::stol(line.substr(key.size()));
  }
  return -1;
}

}  // namespace vacc

#endif  // TESTS_VACC_VACC_THREAD_STATE_H_
