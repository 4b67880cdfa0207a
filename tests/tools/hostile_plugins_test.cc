// fx run's hostile-plugin suite (issue 39): each way a plugin can misbehave,
// written once in C and once in C++ (twin plugins with the same passes), run
// in process (--no-isolate) and isolated (--isolate, which is also the
// default for an unpinned plugin). Each case checks that fx survives, or
// stops naming the plugin; that the input and the output are exactly what
// they should be; that the exit status tells the truth; and, where a pass
// failed, that its reproducer replays the failure.
#include <gtest/gtest.h>

#include <boost/filesystem.hpp>
#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "tests/testing/reference.h"
#include "tests/tools/fx_run.h"

namespace fx {
namespace {

namespace fs = boost::filesystem;
using testing::Result;
using testing::run;

// A test plugin: the name it declares and its library's absolute path.
struct Plugin {
  std::string name;
  std::string path;
};

Plugin plugin(const std::string& name, const std::string& library) {
  return {name, fs::absolute("tests/plugin_api/plugins/" + library).string()};
}

// Each misbehaviour's C plugin and its C++ twin.
std::vector<Plugin> kept_handles_twins() {
  return {plugin("kept_handles", "libkept_handles_plugin.so"),
          plugin("kept_handles_cc", "libkept_handles_cc_plugin.so")};
}
std::vector<Plugin> broken_graph_twins() {
  return {plugin("broken_graph", "libbroken_graph_plugin.so"),
          plugin("test_passes", "libtest_passes.so")};
}
std::vector<Plugin> process_state_twins() {
  return {plugin("process_state", "libprocess_state_plugin.so"),
          plugin("process_state_cc", "libprocess_state_cc_plugin.so")};
}

const std::vector<std::string> kModes = {"--no-isolate", "--isolate"};

// A fresh directory under the test's temporary directory.
std::string fresh_dir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp ? tmp : "/tmp") + "/hostile/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string mymodule() {
  return fs::absolute(testing::reference_dir() + "/seed_mymodule/graph.fx.json")
      .string();
}

// How fx run names the failure of `pass` of `p`, up to its reason.
std::string rolled_back(const std::string& pass, const Plugin& p) {
  return "fx run: pass '" + pass + "' of plugin '" + p.name + "' (" + p.path +
         ") failed and was rolled back: ";
}

// The reproducer directories (PASS-TIME-PID) written for `pass` in `dir`.
std::vector<fs::path> reproducers_of(const std::string& pass,
                                     const std::string& dir) {
  std::vector<fs::path> found;
  if (!fs::exists(dir)) return found;
  for (const auto& p : fs::directory_iterator(dir)) {
    if (p.path().filename().string().rfind(pass + "-", 0) == 0) {
      found.push_back(p.path());
    }
  }
  return found;
}

// Why fx run said `pass` of `p` failed, in its stderr `err` (the rest of
// the line after rolled_back()); "" when it did not say.
std::string failure_reason(const std::string& err, const std::string& pass,
                           const Plugin& p) {
  std::string head = rolled_back(pass, p);
  size_t at = err.find(head);
  if (at == std::string::npos) return "";
  at += head.size();
  return err.substr(at, err.find('\n', at) - at);
}

// Runs the one reproducer of `pass` in `dir` (in `mode`): it must fail
// again for the reason the run that wrote it gave (in its stderr `err`).
void expect_replays(const std::string& pass, const Plugin& p,
                    const std::string& dir, const std::string& mode,
                    const std::string& err) {
  std::string reason = failure_reason(err, pass, p);
  ASSERT_FALSE(reason.empty()) << pass << " " << mode << ": " << err;
  std::vector<fs::path> found = reproducers_of(pass, dir);
  ASSERT_EQ(found.size(), 1u) << pass << " in " << dir;
  Result again =
      run({"run", (found[0] / "graph.fx.json").string(), "--config",
           (found[0] / "pipeline.json").string(), "--no-default-plugins", mode,
           "-o", (found[0] / "again.fx.json").string()});
  EXPECT_EQ(again.status, 1) << again.err;
  EXPECT_NE(again.err.find("pass '" + pass + "' of plugin '" + p.name + "'"),
            std::string::npos)
      << again.err;
  EXPECT_NE(again.err.find("failed and was rolled back: " + reason),
            std::string::npos)
      << pass << " " << mode << ": " << again.err;
}

// A plugin that keeps what it was lent (handles, a borrowed argument, a
// weight view) from a pass that fails, then uses them in the passes after
// it. In process the host refuses every stale handle (the plugin records
// what it was told); isolated, each pass has its own worker, so nothing kept
// reaches a later pass. Either way the write through the kept view is
// rolled back, both failures are named, the exit status says passes were
// skipped, and each failure's reproducer holds the original weight and
// replays that failure.
TEST(HostilePlugins, KeptHandlesAndViewsDoNoHarm) {
  torch::Tensor original = torch::arange(4, torch::kFloat);
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* w = graph->get_attr("weight");
  graph->output(graph->call_function("operator.mul", {x, w}));
  GraphModule module({{"weight", {nullptr, original.clone(), true}}},
                     std::move(graph));
  std::string dir = fresh_dir("kept_handles");
  std::string in = dir + "/in.fx.json";
  ASSERT_TRUE(write_graph_module(module, in).ok());
  for (const Plugin& p : kept_handles_twins()) {
    for (const std::string& mode : kModes) {
      std::string tag = p.name + mode;
      std::string out = dir + "/out" + tag + ".fx.json";
      std::string repro = dir + "/repro" + tag;
      Result r =
          run({"run", in, "--no-default-plugins", mode, "--plugin", p.path,
               "--pipeline",
               "keep_then_fail,use_kept_handles,write_kept_view_then_fail",
               "--on-failure", "skip", "-o", out, "--reproducer-dir", repro});
      EXPECT_EQ(r.status, 3) << tag << ": " << r.err;
      for (std::string pass : {"keep_then_fail", "write_kept_view_then_fail"}) {
        EXPECT_NE(r.err.find(rolled_back(pass, p) + "INTERNAL: " + pass +
                             " gives up"),
                  std::string::npos)
            << tag << ": " << r.err;
      }
      EXPECT_NE(r.err.find("fx run: 2 passes failed and skipped (rolled "
                           "back): 'keep_then_fail', "
                           "'write_kept_view_then_fail'; " +
                           out + " was written without their changes"),
                std::string::npos)
          << tag << ": " << r.err;

      auto gm = read_graph_module(out);
      ASSERT_TRUE(gm.ok()) << gm.status();
      EXPECT_TRUE(torch::equal((*gm)->get_attr("weight"), original)) << tag;
      const Argument* seen = (*gm)->graph().output_node()->meta_value("seen");
      ASSERT_NE(seen, nullptr) << tag;
      EXPECT_EQ(seen->as_string(),
                mode == "--isolate"
                    ? "nothing kept released=FAILED_PRECONDITION"
                    : "name=NULL status=FAILED_PRECONDITION "
                      "arg=FAILED_PRECONDITION released=FAILED_PRECONDITION")
          << tag;

      // Each reproducer holds the graph its pass received (the original
      // weight: the first failure was rolled back) and replays the failure.
      for (std::string pass : {"keep_then_fail", "write_kept_view_then_fail"}) {
        std::vector<fs::path> found = reproducers_of(pass, repro);
        ASSERT_EQ(found.size(), 1u) << tag << " " << pass;
        EXPECT_NE(
            r.err.find("fx run: reproducer written to " + found[0].string()),
            std::string::npos)
            << tag << ": " << r.err;
        auto received =
            read_graph_module((found[0] / "graph.fx.json").string());
        ASSERT_TRUE(received.ok()) << received.status();
        EXPECT_TRUE(torch::equal((*received)->get_attr("weight"), original))
            << tag << " " << pass;
        expect_replays(pass, p, repro, mode, r.err);
      }
    }
  }
}

// A pass that leaves a graph that is no program (a second output node in
// mid-graph, a placeholder turned into a call; torch.fx's lint accepts both)
// is refused by the outline check after the pass, in process as isolated:
// named, rolled back, nothing written, exit status 1; its reproducer
// replays the refusal.
TEST(HostilePlugins, ABrokenGraphIsRefusedAndNothingIsWritten) {
  for (const Plugin& p : broken_graph_twins()) {
    for (const std::string& mode : kModes) {
      for (std::string pass : {"second_output", "retarget_placeholder"}) {
        std::string tag = p.name + mode + pass;
        std::string dir = fresh_dir("broken_graph/" + tag);
        std::string out = dir + "/out.fx.json";
        Result r = run({"run", mymodule(), "--no-default-plugins", mode,
                        "--plugin", p.path, "--pipeline", pass, "-o", out,
                        "--reproducer-dir", dir + "/repro"});
        EXPECT_EQ(r.status, 1) << tag << ": " << r.err;
        EXPECT_NE(r.err.find(rolled_back(pass, p)), std::string::npos)
            << tag << ": " << r.err;
        EXPECT_NE(
            r.err.find("the pipeline stopped; " + out + " was not written"),
            std::string::npos)
            << tag << ": " << r.err;
        EXPECT_FALSE(fs::exists(out)) << tag;
        expect_replays(pass, p, dir + "/repro", mode, r.err);
      }
    }
  }
}

// In process, a pass that ends the process with exit(0) or quick_exit(0)
// does not make fx report success: it is named and fx exits 70; a thread a
// plugin left to crash is named with the pass it crashed in. Nothing is
// written.
TEST(HostilePluginsDeathTest, EndingTheProcessInProcessIsNamedAndFails) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::string out = fresh_dir("process_state") + "/out.fx.json";
  for (const Plugin& p : process_state_twins()) {
    for (std::string pass : {"exit_0", "quick_exit"}) {
      EXPECT_EXIT(
          run({"run", mymodule(), "--no-default-plugins", "--no-isolate",
               "--plugin", p.path, "--pipeline", pass, "-o", out}),
          ::testing::ExitedWithCode(70),
          "fx run: the process was ended \\(exit or quick_exit\\) "
          "during pass '" +
              pass + "' of plugin '" + p.name + "'")
          << p.name << " " << pass;
    }
    EXPECT_EXIT(run({"run", mymodule(), "--no-default-plugins", "--no-isolate",
                     "--plugin", p.path, "--pipeline", "thread_crash,sleep",
                     "-o", out}),
                ::testing::KilledBySignal(SIGSEGV),
                "fx run: fatal signal SIGSEGV in another thread \\(one a "
                "plugin left running\\?\\) during pass 'sleep' of plugin '" +
                    p.name + "'")
        << p.name;
    EXPECT_FALSE(fs::exists(out)) << p.name;
  }
}

// Isolated, exit(0), quick_exit(0) and _exit(0) end the pass's worker, not
// fx: named as a failure, rolled back, nothing written, status 1, and the
// reproducer replays it. _exit runs no hook, so in process nothing could
// tell it from success: an unpinned plugin runs isolated by default, which
// catches it. A thread left to crash dies with its worker, after the pass's
// result came back: the pipeline's output is complete and fx survives.
TEST(HostilePlugins, EndingTheProcessIsolatedEndsTheWorkerOnly) {
  for (const Plugin& p : process_state_twins()) {
    for (std::string pass : {"exit_0", "quick_exit", "_exit"}) {
      std::string tag = p.name + pass;
      std::string dir = fresh_dir("process_state_isolated/" + tag);
      std::string out = dir + "/out.fx.json";
      // --isolate, and the default for an unpinned plugin ("").
      for (const std::string& mode :
           {std::string("--isolate"), std::string()}) {
        std::string repro = dir + "/repro" + mode;
        std::vector<std::string> args = {"run", mymodule(),
                                         "--no-default-plugins"};
        if (!mode.empty()) args.push_back(mode);
        args.insert(args.end(), {"--plugin", p.path, "--pipeline", pass, "-o",
                                 out, "--reproducer-dir", repro});
        Result r = run(args);
        EXPECT_EQ(r.status, 1) << tag << " " << mode << ": " << r.err;
        EXPECT_NE(r.err.find(rolled_back(pass, p) +
                             "the worker process exited with status 0 before "
                             "finishing (the code it ran ended the process)"),
                  std::string::npos)
            << tag << " " << mode << ": " << r.err;
        EXPECT_FALSE(fs::exists(out)) << tag << " " << mode;
        expect_replays(pass, p, repro, "--isolate", r.err);
      }
    }
    std::string out = fresh_dir("thread_isolated/" + p.name) + "/out.fx.json";
    Result r =
        run({"run", mymodule(), "--no-default-plugins", "--isolate", "--plugin",
             p.path, "--pipeline", "thread_crash,sleep", "-o", out});
    EXPECT_EQ(r.status, 0) << p.name << ": " << r.err;
    EXPECT_TRUE(fs::exists(out)) << p.name;
  }
}

// A pass that calls chdir() moves neither fx's output nor, in process, fx's
// working directory: the relative output path lands where it was meant to,
// and the working directory is restored after the pass.
TEST(HostilePlugins, ChangingTheWorkingDirectoryMovesNothing) {
  fs::path here = fs::current_path();
  for (const Plugin& p : process_state_twins()) {
    for (const std::string& mode : kModes) {
      std::string dir = fresh_dir("chdir/" + p.name + mode);
      fs::current_path(dir);
      Result r =
          run({"run", mymodule(), "--no-default-plugins", mode, "--plugin",
               p.path, "--pipeline", "chdir", "-o", "out.fx.json"});
      std::string now = fs::current_path().string();
      fs::current_path(here);
      ASSERT_EQ(r.status, 0) << p.name << mode << ": " << r.err;
      EXPECT_EQ(now, fs::path(dir).string()) << p.name << mode;
      EXPECT_TRUE(fs::exists(dir + "/out.fx.json")) << p.name << mode;
      EXPECT_FALSE(fs::exists("/out.fx.json"));
    }
  }
}

}  // namespace
}  // namespace fx
