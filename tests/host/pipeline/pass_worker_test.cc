// The worker process: bytes come back whole (larger than a pipe's buffer);
// a crash, an exit, a timeout and the memory limit end the worker and are
// described; nothing the work does reaches the host's memory.
#include "host/pipeline/pass_worker.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

namespace fx::host {
namespace {

int host_value = 1;

TEST(PassWorker, ReturnsTheWorksBytesWhole) {
  std::string big(3 << 20, 'x');
  big[12345] = '\0';
  WorkerOutcome outcome = run_in_worker([&] { return big; }, {});
  ASSERT_TRUE(outcome.ok) << outcome.failure;
  EXPECT_EQ(outcome.result, big);
  EXPECT_EQ(run_in_worker([] { return std::string(); }, {}).result, "");
}

TEST(PassWorker, TheWorkCannotChangeTheHostsMemory) {
  WorkerOutcome outcome = run_in_worker(
      [] {
        host_value = 2;
        return std::to_string(host_value);
      },
      {});
  ASSERT_TRUE(outcome.ok) << outcome.failure;
  EXPECT_EQ(outcome.result, "2");
  EXPECT_EQ(host_value, 1);
}

TEST(PassWorker, AFatalSignalEndsTheWorkerOnly) {
  WorkerOutcome outcome = run_in_worker(
      []() -> std::string {
        std::raise(SIGSEGV);
        return "not reached";
      },
      {});
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.signal, SIGSEGV);
  EXPECT_EQ(outcome.failure, "the worker process was killed by SIGSEGV");
  outcome = run_in_worker([]() -> std::string { std::abort(); }, {});
  EXPECT_EQ(outcome.failure, "the worker process was killed by SIGABRT");
}

TEST(PassWorker, AnExitBeforeTheResultIsAFailure) {
  WorkerOutcome outcome =
      run_in_worker([]() -> std::string { std::exit(7); }, {});
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.exit_status, 7);
  EXPECT_EQ(outcome.failure,
            "the worker process exited with status 7 before finishing");
  outcome = run_in_worker([]() -> std::string { throw 1; }, {});
  EXPECT_EQ(outcome.failure, "the worker process's work threw an exception");
}

TEST(PassWorker, AWorkerPastItsTimeoutIsKilled) {
  auto start = std::chrono::steady_clock::now();
  WorkerOutcome outcome = run_in_worker(
      []() -> std::string {
        for (volatile int spin = 0;; spin = spin + 1) {
        }
      },
      WorkerLimits{0.5, 0});
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_FALSE(outcome.ok);
  EXPECT_TRUE(outcome.timed_out);
  EXPECT_EQ(outcome.signal, SIGKILL);
  EXPECT_EQ(outcome.failure,
            "the worker process did not finish within 0.5 s and was killed");
  EXPECT_GE(seconds, 0.5);
  EXPECT_LT(seconds, 5.0);
}

// Allocations past the limit fail in the worker (here: caught, reported).
TEST(PassWorker, TheMemoryLimitBoundsTheWorkersGrowth) {
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "ASan's allocator reports a failed allocation and exits";
#endif
  WorkerOutcome outcome = run_in_worker(
      [] {
        std::vector<std::vector<char>> blocks;
        try {
          for (int i = 0; i < 64; ++i) blocks.emplace_back(16 << 20, 'x');
        } catch (const std::bad_alloc&) {
          return std::to_string(blocks.size());
        }
        return std::string("no limit");
      },
      WorkerLimits{0, 128});
  ASSERT_TRUE(outcome.ok) << outcome.failure;
  // 128 MiB hold at most 8 blocks of 16 MiB, and at least a few.
  int blocks = std::atoi(outcome.result.c_str());
  EXPECT_GE(blocks, 4) << outcome.result;
  EXPECT_LE(blocks, 8) << outcome.result;

  outcome = run_in_worker([]() -> std::string { throw std::bad_alloc(); },
                          WorkerLimits{0, 64});
  EXPECT_EQ(outcome.exit_status, kWorkThrewStatus);
}

TEST(PassWorker, SignalsHaveTheirNames) {
  EXPECT_EQ(signal_name(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(SIGUSR1), "signal 10");
}

}  // namespace
}  // namespace fx::host
