// SPDX-License-Identifier: Apache-2.0
#include "isolation.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace tfp_validator {
namespace {

// Records: 'F' u32 rule, u32 n, n x (u32 len, name, u32 len, value) | 'E' | 'X' u32 len, text.
constexpr char kFindingTag = 'F';
constexpr char kEndTag = 'E';
constexpr char kErrorTag = 'X';
constexpr uint32_t kMaxString = 1u << 20;
constexpr uint32_t kMaxFields = 256;

void PutU32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
void PutString(std::string& out, const std::string& s) {
  PutU32(out, static_cast<uint32_t>(std::min<size_t>(s.size(), kMaxString)));
  out.append(s, 0, std::min<size_t>(s.size(), kMaxString));
}

struct Reader {
  const std::string& s;
  size_t at = 0;
  bool U32(uint32_t* v) {
    if (s.size() - at < 4) return false;
    std::memcpy(v, s.data() + at, 4);
    at += 4;
    return true;
  }
  bool String(std::string* v) {
    uint32_t n;
    if (!U32(&n) || n > kMaxString || s.size() - at < n) return false;
    v->assign(s, at, n);
    at += n;
    return true;
  }
};

bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

class PipeSink : public FindingSink {
 public:
  explicit PipeSink(int fd) : fd_(fd) {}
  void Add(Finding finding) override {
    if (!WriteAll(fd_, EncodeFinding(finding))) _exit(4);  // the parent is gone
  }
 private:
  int fd_;
};

int64_t NowMs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

// TFP_VALIDATE_TEST_FAULT=<phase>:<fault>, if it names this phase.
std::string TestFault(const char* phase_name) {
  const char* env = std::getenv("TFP_VALIDATE_TEST_FAULT");
  if (env == nullptr) return "";
  const char* colon = std::strchr(env, ':');
  if (colon == nullptr || std::string(env, colon) != phase_name) return "";
  return colon + 1;
}

void Segfault() {
  // A real SIGSEGV without undefined behaviour, so sanitizer builds (UBSan
  // halts on a null store) see the same crash as release builds.
  raise(SIGSEGV);
}

[[noreturn]] void RunChild(int fd, const char* phase_name,
                           const std::function<void(FindingSink&)>& body) {
  // Own process group (killed as a whole at the timeout); dies with the
  // parent; no core files; default signal dispositions; our stdout stays
  // the validator's report (plugin chatter goes to stderr).
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGPIPE, SIGTERM}) {
    signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  dup2(STDERR_FILENO, STDOUT_FILENO);

  const std::string fault = TestFault(phase_name);
  if (fault == "segv") Segfault();
  if (fault == "abort") std::abort();
  if (fault == "hang") {
    for (;;) pause();
  }
  if (fault == "exit") _exit(3);
  if (fault == "garbage") {
    WriteAll(fd, "not a report");
    _exit(0);
  }
  PipeSink sink(fd);
  try {
    body(sink);
  } catch (const std::exception& e) {
    WriteAll(fd, EncodeError(std::string("internal error: ") + e.what()));
    _exit(5);
  } catch (...) {
    WriteAll(fd, EncodeError("internal error: unknown exception"));
    _exit(5);
  }
  if (fault == "late-segv") Segfault();
  WriteAll(fd, EncodeEnd());
  _exit(0);
}

void KillGroup(pid_t pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
}

}  // namespace

std::string EncodeFinding(const Finding& finding) {
  std::string out(1, kFindingTag);
  PutU32(out, static_cast<uint32_t>(RuleIndex(finding.rule)));
  PutU32(out, static_cast<uint32_t>(std::min<size_t>(finding.fields.size(), kMaxFields)));
  for (size_t i = 0; i < finding.fields.size() && i < kMaxFields; ++i) {
    PutString(out, finding.fields[i].first);
    PutString(out, finding.fields[i].second);
  }
  return out;
}

std::string EncodeEnd() { return std::string(1, kEndTag); }

std::string EncodeError(const std::string& message) {
  std::string out(1, kErrorTag);
  PutString(out, message);
  return out;
}

Decoded DecodeReport(const std::string& bytes) {
  Decoded d;
  Reader r{bytes};
  while (r.at < bytes.size()) {
    const char tag = bytes[r.at++];
    if (tag == kEndTag) {
      d.complete = true;
      if (r.at != bytes.size()) d.malformed = true;  // nothing may follow
      break;
    }
    if (tag == kErrorTag) {
      if (!r.String(&d.error)) d.malformed = true;
      if (d.malformed) break;
      continue;
    }
    uint32_t rule, n;
    if (tag != kFindingTag || !r.U32(&rule) || rule >= static_cast<uint32_t>(kRuleCount) ||
        !r.U32(&n) || n > kMaxFields) {
      d.malformed = true;
      break;
    }
    Finding f(static_cast<RuleId>(rule));
    bool ok = true;
    for (uint32_t i = 0; i < n && ok; ++i) {
      std::string name, value;
      ok = r.String(&name) && r.String(&value);
      if (ok) f.Set(std::move(name), std::move(value));
    }
    if (!ok) {  // cut off mid-record: a crash while writing, or garbage
      d.malformed = true;
      break;
    }
    d.findings.push_back(std::move(f));
  }
  if (d.malformed) d.complete = false;
  return d;
}

std::string SignalName(int sig) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  const char* abbrev = sigabbrev_np(sig);
  const char* descr = sigdescr_np(sig);
  if (abbrev != nullptr) {
    std::string out = std::string("SIG") + abbrev;
    if (descr != nullptr) out += std::string(" (") + descr + ")";
    return out;
  }
#endif
  const char* text = strsignal(sig);
  return "signal " + std::to_string(sig) + (text != nullptr ? std::string(" (") + text + ")" : "");
}

std::string DurationText(unsigned ms) {
  char buf[32];
  if (ms % 1000 == 0) {
    std::snprintf(buf, sizeof buf, "%u s", ms / 1000);
  } else {
    std::snprintf(buf, sizeof buf, "%g s", ms / 1000.0);
  }
  return buf;
}

bool RunIsolated(const char* phase_name, const std::function<void(FindingSink&)>& body,
                 unsigned timeout_ms, IsolatedRun* out, std::string* error) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    RunChild(fds[1], phase_name, body);
  }
  setpgid(pid, pid);  // as the child does: whichever runs first
  close(fds[1]);

  const int64_t deadline = NowMs() + timeout_ms;
  std::string bytes;
  bool timed_out = false;
  char buf[65536];
  for (;;) {
    const int64_t left = deadline - NowMs();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    if (r == 0) continue;
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // EOF: the child is done (or closed the pipe)
    bytes.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);

  // Wait for the child without reaping it (WNOWAIT): until it is reaped, its
  // pid and process group cannot be reused, so killing the group (whatever
  // the phase left running) is safe.
  bool ours = true;  // false: reaped elsewhere (SIGCHLD ignored), pid may be reused
  while (!timed_out) {
    siginfo_t info;
    std::memset(&info, 0, sizeof info);
    int r = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (r == 0 && info.si_pid == pid) break;
    if (r < 0 && errno != EINTR) {
      ours = false;
      break;
    }
    if (NowMs() >= deadline) {
      timed_out = true;
      break;
    }
    struct timespec pause_ts = {0, 2 * 1000 * 1000};
    nanosleep(&pause_ts, nullptr);
  }
  int status = 0;
  bool reaped = false;
  if (ours) {
    KillGroup(pid);
    pid_t r;
    while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    reaped = r == pid;
  }
  // Killed by us at the timeout is a timeout, not a crash.
  if (timed_out) reaped = false;

  Decoded d = DecodeReport(bytes);
  out->findings = std::move(d.findings);
  const std::string phase = phase_name;
  if (timed_out) {
    out->end = PhaseEnd::kTimedOut;
    out->findings.push_back(
        Finding(RuleId::kIsolationTimeout).Set("phase", phase).Set("timeout", DurationText(timeout_ms)));
  } else if (reaped && WIFSIGNALED(status)) {
    out->end = PhaseEnd::kCrashed;
    out->findings.push_back(
        Finding(RuleId::kIsolationCrash).Set("phase", phase).Set("signal", SignalName(WTERMSIG(status))));
  } else if (!d.complete || (reaped && WEXITSTATUS(status) != 0)) {
    out->end = PhaseEnd::kExited;
    std::string detail;
    if (!reaped) {
      detail = "its exit status is unknown";
    } else if (WEXITSTATUS(status) != 0) {
      detail = "exited with status " + std::to_string(WEXITSTATUS(status));
    } else {
      detail = "exited with status 0";
    }
    if (!d.error.empty()) {
      detail += "; " + d.error;
    } else if (d.malformed) {
      detail += "; its report is malformed";
    } else if (!d.complete) {
      detail += " before its report was complete";
    }
    out->findings.push_back(Finding(RuleId::kIsolationExit).Set("phase", phase).Set("detail", detail));
  } else {
    out->end = PhaseEnd::kCompleted;
  }
  return true;
}

bool RunPhase(const char* phase_name, const std::function<void(FindingSink&)>& body,
              unsigned timeout_ms, bool in_process, IsolatedRun* out, std::string* error) {
  if (!in_process) return RunIsolated(phase_name, body, timeout_ms, out, error);
  VectorSink sink;
  std::string failure;
  try {
    body(sink);
  } catch (const std::exception& e) {
    failure = std::string("internal error: ") + e.what();
  } catch (...) {
    failure = "internal error: unknown exception";
  }
  out->findings = std::move(sink.findings);
  out->end = PhaseEnd::kCompleted;
  if (!failure.empty()) {
    out->end = PhaseEnd::kExited;
    out->findings.push_back(Finding(RuleId::kIsolationExit)
                                .Set("phase", phase_name)
                                .Set("detail", "ran in process; " + failure));
  }
  return true;
}

}  // namespace tfp_validator
