// A worker process for one piece of work that may crash, abort, hang or eat
// memory: the work runs in a child made with fork(), which sees the host's
// memory as it was (copy-on-write) and hands back bytes through a pipe.
// Whatever the work does, the host survives it: a fatal signal, an exit,
// a timeout or an exhausted memory limit ends the child and is described in
// the outcome.
//
// The child: restores the default disposition of the fatal signals (so a
// host's crash handler does not speak for it), limits its address space
// when asked, runs on one intra-op thread (thread pools do not survive
// fork), runs the work, writes its bytes (length-prefixed, so a child that
// dies while writing is told from one that finished) and leaves with
// _exit(0): no atexit handlers, no static destructors, no buffered output of
// the host written twice (the host's stdout and stderr are flushed before
// the fork). The work must not throw; one that does ends the child with
// status kWorkThrewStatus.
//
// The host: reads the bytes as they come, kills the child with SIGKILL at
// the deadline, and reaps it. Not for use by several threads at once.
#ifndef HOST_PIPELINE_PASS_WORKER_H_
#define HOST_PIPELINE_PASS_WORKER_H_

#include <cstdint>
#include <functional>
#include <string>

namespace fx::host {

struct WorkerLimits {
  // Seconds the work may take, 0 for no limit.
  double timeout_seconds = 0;
  // How far the child's address space (RLIMIT_AS) may grow beyond what it
  // inherited from the host, in MiB; 0 for no limit. Allocations past it
  // fail (malloc returns NULL, operator new throws std::bad_alloc).
  uint64_t memory_limit_mib = 0;
};

struct WorkerOutcome {
  bool ok = false;      // the work finished and its bytes arrived whole
  std::string result;   // the work's bytes, when ok
  int signal = 0;       // the signal that ended the child, or 0
  int exit_status = 0;  // its exit status when it exited without result
  bool timed_out = false;
  double peak_resident_mib = 0;  // the child's peak resident set
  // When not ok, what happened, e.g. "the worker process was killed by
  // SIGSEGV", "the worker process did not finish within 2 s (killed)".
  std::string failure;
};

// The exit status of a child whose work threw.
inline constexpr int kWorkThrewStatus = 125;

// Runs `work` in a child process under `limits` and returns its bytes or
// what ended it. A fork or pipe failure is reported as a failure too.
WorkerOutcome run_in_worker(const std::function<std::string()>& work,
                            const WorkerLimits& limits);

// "SIGSEGV", "SIGKILL", ..., or nullptr for a signal without a name here.
// Async-signal-safe: fatal-signal handlers call it.
const char* known_signal_name(int signal);
// known_signal_name, or "signal N".
std::string signal_name(int signal);

}  // namespace fx::host

#endif  // HOST_PIPELINE_PASS_WORKER_H_
