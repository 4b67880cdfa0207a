#include "host/pipeline/pass_worker.h"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <utility>

#include "fx_core/runtime/parallel.h"
#include "fx_core/support/strings.h"

namespace fx::host {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

// The address space this process has now, in bytes (0 when unknown).
uint64_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The child's side: never returns.
[[noreturn]] void be_worker(int fd, const std::function<std::string()>& work,
                            const WorkerLimits& limits) {
  for (int sig : kFatalSignals) signal(sig, SIG_DFL);
  if (limits.memory_limit_mib > 0) {
    rlim_t limit = address_space_bytes() + (limits.memory_limit_mib << 20);
    struct rlimit rl {
      limit, limit
    };
    setrlimit(RLIMIT_AS, &rl);
  }
  set_num_threads(1);
  std::string result;
  try {
    result = work();
  } catch (...) {
    _exit(kWorkThrewStatus);
  }
  uint64_t size = result.size();
  bool written =
      write_all(fd, reinterpret_cast<const char*>(&size), sizeof size) &&
      write_all(fd, result.data(), result.size());
  _exit(written ? 0 : 1);
}

// Reads `fd` until end of file or the deadline; false when it passed.
bool read_until(int fd, const WorkerLimits& limits, std::string* bytes) {
  Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(limits.timeout_seconds));
  char buffer[1 << 16];
  for (;;) {
    int wait_ms = -1;
    if (limits.timeout_seconds > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - Clock::now());
      if (left.count() <= 0) return false;
      wait_ms = static_cast<int>(left.count());
    }
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return false;
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    bytes->append(buffer, static_cast<size_t>(n));
  }
}

// The work's bytes, when `bytes` holds them whole behind their length.
bool unframe(std::string& bytes, std::string* result) {
  uint64_t size = 0;
  if (bytes.size() < sizeof size) return false;
  std::memcpy(&size, bytes.data(), sizeof size);
  if (bytes.size() - sizeof size != size) return false;
  bytes.erase(0, sizeof size);
  *result = std::move(bytes);
  return true;
}

std::string format_seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", s);
  return text;
}

// `outcome.failure` from how the child ended.
void describe(const WorkerLimits& limits, WorkerOutcome& outcome) {
  std::string memory =
      limits.memory_limit_mib > 0
          ? cat(" (its memory limit: ", limits.memory_limit_mib,
                " MiB beyond the host's; peak resident ",
                static_cast<uint64_t>(outcome.peak_resident_mib), " MiB)")
          : std::string();
  if (outcome.timed_out) {
    outcome.failure =
        cat("the worker process did not finish within ",
            format_seconds(limits.timeout_seconds), " s and was killed");
  } else if (outcome.signal != 0) {
    outcome.failure = cat("the worker process was killed by ",
                          signal_name(outcome.signal), memory);
  } else if (outcome.exit_status == kWorkThrewStatus) {
    outcome.failure = "the worker process's work threw an exception";
  } else if (outcome.exit_status != 0) {
    outcome.failure = cat("the worker process exited with status ",
                          outcome.exit_status, " before finishing", memory);
  } else {
    // Only the work ends the child early with status 0: the code it ran
    // (a plugin) called exit(0), _exit(0) or quick_exit(0).
    outcome.failure =
        "the worker process exited with status 0 before finishing (the code "
        "it ran ended the process)";
  }
}

}  // namespace

const char* known_signal_name(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGILL:
      return "SIGILL";
    case SIGFPE:
      return "SIGFPE";
    case SIGABRT:
      return "SIGABRT";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGXCPU:
      return "SIGXCPU";
  }
  return nullptr;
}

std::string signal_name(int signal) {
  const char* name = known_signal_name(signal);
  return name != nullptr ? name : cat("signal ", signal);
}

WorkerOutcome run_in_worker(const std::function<std::string()>& work,
                            const WorkerLimits& limits) {
  WorkerOutcome outcome;
  int fds[2];
  if (pipe(fds) != 0) {
    outcome.failure = cat("cannot make a pipe: ", std::strerror(errno));
    return outcome;
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    outcome.failure = cat("cannot fork a worker: ", std::strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return outcome;
  }
  if (pid == 0) {
    close(fds[0]);
    be_worker(fds[1], work, limits);
  }
  close(fds[1]);
  std::string bytes;
  outcome.timed_out = !read_until(fds[0], limits, &bytes);
  if (outcome.timed_out) kill(pid, SIGKILL);
  close(fds[0]);
  int status = 0;
  struct rusage usage {};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  outcome.peak_resident_mib = usage.ru_maxrss / 1024.0;
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  if (WIFEXITED(status)) outcome.exit_status = WEXITSTATUS(status);
  outcome.ok = !outcome.timed_out && WIFEXITED(status) &&
               outcome.exit_status == 0 && unframe(bytes, &outcome.result);
  if (!outcome.ok) describe(limits, outcome);
  return outcome;
}

}  // namespace fx::host
