// Loading a plugin in a worker process first (issue 34): a plugin that
// loads, one whose load fails with an error, and ones whose static
// constructor or fx_plugin_get_info crashes, aborts, exits or hangs, none of
// which this process survives in process.
#include "host/pipeline/plugin_load_worker.h"

#include <gtest/gtest.h>

#include <string>

namespace fx::host {
namespace {

const std::string kDir = "tests/plugin_api/plugins/";

TEST(PluginLoadWorker, APluginThatLoadsThereIsOk) {
  WorkerLoad load =
      load_plugin_in_worker(kDir + "libtest_passes.so", {}, WorkerLimits{});
  EXPECT_TRUE(load.status.ok()) << load.status;
  EXPECT_FALSE(load.worker_failed);
}

TEST(PluginLoadWorker, ALoadErrorThereIsReturnedAsIs) {
  WorkerLoad load =
      load_plugin_in_worker(kDir + "libnot_a_plugin.so", {}, WorkerLimits{});
  EXPECT_FALSE(load.worker_failed);
  EXPECT_EQ(load.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      std::string(load.status.message())
          .rfind("'" + kDir + "libnot_a_plugin.so' is not an fx plugin", 0),
      0u)
      << load.status;
  // A pin is checked there too.
  WorkerLoad pinned = load_plugin_in_worker(kDir + "libtest_passes.so",
                                            std::string(64, '0'), {});
  EXPECT_EQ(pinned.status.code(), absl::StatusCode::kPermissionDenied);
}

TEST(PluginLoadWorker, ACrashExitOrHangWhileLoadingNamesThePlugin) {
  // Only the hang is given the short limit: on a loaded 2-core machine a
  // worker can take more than a second just to start and load a plugin
  // linked against LibTorch, and the other cases must end on their own.
  struct Case {
    std::string how;
    std::string ending;
    double timeout_seconds = 120;
  };
  for (const Case& c :
       {Case{"ctor_segv", "was killed by SIGSEGV"},
        Case{"ctor_abort", "was killed by SIGABRT"},
        Case{"ctor_exit", "exited with status 7 before finishing"},
        Case{"ctor_hang", "did not finish within 1 s and was killed", 1},
        Case{"info_segv", "was killed by SIGSEGV"},
        Case{"info_abort", "was killed by SIGABRT"},
        Case{"info_exit", "exited with status 7 before finishing"},
        Case{"info_hang", "did not finish within 1 s and was killed", 1}}) {
    std::string path = kDir + "libload_" + c.how + "_plugin.so";
    WorkerLoad load =
        load_plugin_in_worker(path, {}, WorkerLimits{c.timeout_seconds, 0});
    EXPECT_TRUE(load.worker_failed) << path;
    EXPECT_EQ(std::string(load.status.message()),
              "cannot load plugin '" + path +
                  "': loading it in a worker process failed: the worker "
                  "process " +
                  c.ending + "; it was not loaded");
  }
}

}  // namespace
}  // namespace fx::host
