// Issue 34, item 5: plugins that crash, abort, exit or hang while they load
// (tests/plugin_api/plugins/load_crash_plugin.c), and plugin files cut
// short, given to the fx binary run as a child process, so that a crash is
// seen as the signal it is: a static constructor or fx_plugin_get_info that
// segfaults, aborts, exits or hangs. Isolated (fx run --isolate, fx reduce
// --isolate, a pipeline config's "isolate": true, fx plugins --isolate,
// always fx plugin-check) each is an error naming the plugin and
// what ended the worker that loaded it, exit status 1, never a signal; a
// truncated library is an error naming what is missing, isolated or not.
// Issue 39, item 4: every file that is no plugin of this machine (text,
// another machine's library, a program, a library without the entry point
// or needing a symbol nothing defines) is refused by fx plugins and fx run,
// isolated or not, naming the file and the real cause.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/filesystem.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/reference.h"

extern char** environ;

namespace fx {
namespace {

namespace fs = boost::filesystem;

const std::string kFx = "tools/fx";
const std::string kPlugins = "tests/plugin_api/plugins/";
const std::string kFxPasses = "plugins/libfx_passes.so";

// A file in this test's own directory under TEST_TMPDIR.
std::string temp_path(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp ? tmp : "/tmp") + "/plugin_load_safety";
  fs::create_directories(dir);
  return dir + "/" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// How a child fx ended.
struct Ended {
  int status = -1;  // its exit status, when it exited
  int signal = 0;   // the signal that killed it, or 0
  bool timed_out = false;
  std::string out, err;
  std::string describe() const {
    return "status " + std::to_string(status) + ", signal " +
           std::to_string(signal) + (timed_out ? ", timed out" : "") +
           "\nstdout:\n" + out + "\nstderr:\n" + err;
  }
};

// Runs `fx ARGS...`; kills it after `timeout` (then timed_out).
Ended fx(const std::vector<std::string>& args,
         std::chrono::seconds timeout = std::chrono::seconds(60)) {
  std::string out = temp_path("fx.out"), err = temp_path("fx.err");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv{const_cast<char*>(kFx.c_str())};
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  Ended ended;
  int spawned =
      posix_spawn(&pid, kFx.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    ended.err = "cannot run " + kFx;
    return ended;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int wstatus = 0;
  while (waitpid(pid, &wstatus, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ended.timed_out = true;
      kill(pid, SIGKILL);
      waitpid(pid, &wstatus, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(wstatus)) ended.status = WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) ended.signal = WTERMSIG(wstatus);
  ended.out = slurp(out);
  ended.err = slurp(err);
  return ended;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string mymodule() { return testing::reference_dir() + "/seed_mymodule"; }

// A plugin that misbehaves while loading, and what ends its worker.
struct LoadCrash {
  std::string plugin;  // tests/plugin_api/plugins/libload_<how>_plugin.so
  std::string ending;  // how pass_worker.h describes the worker's end
};

// --pass-timeout 5 ends the one that hangs (the others end on their own; on a
// loaded 2-core machine a worker can take over a second to load one).
const std::vector<LoadCrash>& load_crashes() {
  static const auto* crashes = new std::vector<LoadCrash>{
      {kPlugins + "libload_ctor_segv_plugin.so", "was killed by SIGSEGV"},
      {kPlugins + "libload_ctor_abort_plugin.so", "was killed by SIGABRT"},
      {kPlugins + "libload_ctor_exit_plugin.so", "exited with status 7"},
      {kPlugins + "libload_ctor_hang_plugin.so", "did not finish within 5 s"},
      {kPlugins + "libload_info_segv_plugin.so", "was killed by SIGSEGV"},
      {kPlugins + "libload_info_abort_plugin.so", "was killed by SIGABRT"},
      {kPlugins + "libload_info_exit_plugin.so", "exited with status 7"},
      {kPlugins + "libload_info_hang_plugin.so", "did not finish within 5 s"},
  };
  return *crashes;
}

std::string load_error(const LoadCrash& crash) {
  return "cannot load plugin '" + crash.plugin +
         "': loading it in a worker process failed: the worker process " +
         crash.ending;
}

TEST(PluginLoadSafety, FxRunIsolatedNamesAPluginThatCrashesWhileLoading) {
  std::string output = temp_path("run.fx.json");
  for (const LoadCrash& crash : load_crashes()) {
    SCOPED_TRACE(crash.plugin);
    fs::remove(output);
    Ended r = fx({"run", mymodule() + "/graph.fx.json", "--pipeline", "dce",
                  "-o", output, "--isolate", "--pass-timeout", "5",
                  "--no-default-plugins", "--plugin", crash.plugin});
    EXPECT_EQ(r.signal, 0) << r.describe();
    EXPECT_EQ(r.status, 1) << r.describe();
    EXPECT_TRUE(has(r.err, "fx run: " + load_error(crash))) << r.describe();
    EXPECT_FALSE(fs::exists(output));
  }
}

TEST(PluginLoadSafety, FxReduceIsolatedNamesAPluginThatCrashesWhileLoading) {
  std::string output = temp_path("reduce.fx.json");
  for (const LoadCrash& crash : load_crashes()) {
    SCOPED_TRACE(crash.plugin);
    fs::remove(output);
    Ended r = fx({"reduce", mymodule() + "/graph.fx.json", "--pipeline", "dce",
                  "-o", output, "--isolate", "--pass-timeout", "5",
                  "--no-default-plugins", "--plugin", crash.plugin});
    EXPECT_EQ(r.signal, 0) << r.describe();
    EXPECT_EQ(r.status, 1) << r.describe();
    EXPECT_TRUE(has(r.err, "fx reduce: " + load_error(crash))) << r.describe();
    EXPECT_FALSE(fs::exists(output));
  }
}

// The isolation a pipeline config asks for ("isolate": true, no --isolate
// flag) covers loading its plugins too: fx run --config and fx minimize
// --config.
TEST(PluginLoadSafety, AConfigThatIsolatesNamesAPluginThatCrashesWhileLoading) {
  std::string output = temp_path("config_run.fx.json");
  for (const LoadCrash& crash : load_crashes()) {
    SCOPED_TRACE(crash.plugin);
    // The config's plugin paths are relative to the config's directory.
    LoadCrash absolute{fs::absolute(crash.plugin).string(), crash.ending};
    std::string config = temp_path("isolate.json");
    write(config, "{\"pipeline\": \"dce\", \"plugins\": [\"" + absolute.plugin +
                      "\"], \"isolate\": true, \"pass_timeout\": 5}\n");
    fs::remove(output);
    Ended run = fx({"run", mymodule() + "/graph.fx.json", "--config", config,
                    "-o", output, "--no-default-plugins"});
    EXPECT_EQ(run.signal, 0) << run.describe();
    EXPECT_EQ(run.status, 1) << run.describe();
    EXPECT_TRUE(has(run.err, "fx run: " + load_error(absolute)))
        << run.describe();
    EXPECT_FALSE(fs::exists(output));
    Ended minimize = fx({"minimize", mymodule() + "/graph.fx.json", "--inputs",
                         mymodule() + "/input.pt", "--config", config,
                         "--no-default-plugins"});
    EXPECT_EQ(minimize.signal, 0) << minimize.describe();
    EXPECT_EQ(minimize.status, 1) << minimize.describe();
    EXPECT_TRUE(has(minimize.err, load_error(absolute))) << minimize.describe();
  }
}

TEST(PluginLoadSafety, FxPluginCheckFailsItsLoadCheckInsteadOfCrashing) {
  for (const LoadCrash& crash : load_crashes()) {
    SCOPED_TRACE(crash.plugin);
    Ended r = fx({"plugin-check", crash.plugin, "--graphs", mymodule(),
                  "--pass-timeout", "5"});
    EXPECT_EQ(r.signal, 0) << r.describe();
    EXPECT_EQ(r.status, 1) << r.describe();
    EXPECT_TRUE(has(r.out, "plugin file '" + crash.plugin + "' on 1 graph"))
        << r.describe();
    EXPECT_TRUE(
        has(r.out, "(plugin)  loads          FAIL  " + load_error(crash)))
        << r.describe();
    EXPECT_TRUE(has(r.err, "fx plugin-check: some checks failed"))
        << r.describe();
  }
}

TEST(PluginLoadSafety, FxPluginsIsolatedNamesAPluginThatCrashesWhileLoading) {
  const LoadCrash& crash = load_crashes().front();
  Ended r = fx({"plugins", "--isolate", "--no-default-plugins", "--plugin",
                crash.plugin});
  EXPECT_EQ(r.signal, 0) << r.describe();
  EXPECT_EQ(r.status, 1) << r.describe();
  EXPECT_TRUE(has(r.err, "fx plugins: " + load_error(crash))) << r.describe();
}

// Found in a directory, each is skipped with a warning, and the pipeline
// runs with the plugins that loaded.
TEST(PluginLoadSafety, FxRunIsolatedSkipsADirectorysPluginsThatCrash) {
  std::string dir = temp_path("crashing_plugins");
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const LoadCrash& crash : load_crashes()) {
    fs::copy_file(crash.plugin,
                  dir + "/" + fs::path(crash.plugin).filename().string());
  }
  std::string output = temp_path("dir_run.fx.json");
  fs::remove(output);
  Ended r =
      fx({"run", mymodule() + "/graph.fx.json", "--pipeline", "dce", "-o",
          output, "--isolate", "--pass-timeout", "5", "--no-default-plugins",
          "--plugin", kFxPasses, "--plugin-dir", dir});
  EXPECT_EQ(r.signal, 0) << r.describe();
  EXPECT_EQ(r.status, 0) << r.describe();
  for (const LoadCrash& crash : load_crashes()) {
    LoadCrash copy{dir + "/" + fs::path(crash.plugin).filename().string(),
                   crash.ending};
    EXPECT_TRUE(has(r.err, "fx run: warning: skipped plugin " + copy.plugin +
                               ": " + load_error(copy)))
        << r.describe();
  }
  EXPECT_TRUE(fs::exists(output));
}

// The SIGBUS: a copy of a real plugin cut in half.
TEST(PluginLoadSafety, ATruncatedLibraryIsAnErrorNamingIt) {
  std::string library = slurp(kFxPasses);
  ASSERT_GT(library.size(), 4096u);
  std::string truncated = temp_path("libtruncated.so");
  write(truncated, library.substr(0, library.size() / 2));
  for (bool isolate : {false, true}) {
    SCOPED_TRACE(isolate ? "isolated" : "in process");
    std::vector<std::string> args{"plugins", "--no-default-plugins", "--plugin",
                                  truncated};
    if (isolate) args.push_back("--isolate");
    Ended r = fx(args);
    EXPECT_EQ(r.signal, 0) << r.describe();
    EXPECT_EQ(r.status, 1) << r.describe();
    EXPECT_TRUE(has(r.err, "fx plugins: cannot load plugin '" + truncated +
                               "': the file is truncated or corrupt: "))
        << r.describe();
  }
  Ended check = fx({"plugin-check", truncated, "--graphs", mymodule()});
  EXPECT_EQ(check.signal, 0) << check.describe();
  EXPECT_EQ(check.status, 1) << check.describe();
  EXPECT_TRUE(has(check.err, "the file is truncated or corrupt"))
      << check.describe();
}

// A file that is no plugin of this machine, and the start of the error
// that refuses it (after "fx COMMAND: ").
struct NotAPlugin {
  std::string path;
  std::string error;
};

// A copy of a real plugin with e_machine (bytes 18..19, little-endian)
// patched to RISC-V's, which neither x86-64 nor AArch64 is.
std::string foreign_copy() {
  std::string library = slurp(kFxPasses);
  library[18] = static_cast<char>(243);  // EM_RISCV
  library[19] = 0;
  std::string path = temp_path("libriscv.so");
  write(path, library);
  return path;
}

std::vector<NotAPlugin> not_plugins() {
  std::string text = temp_path("libnotes.so");
  write(text, "plugins: see README\n");
  std::string foreign = foreign_copy();
  std::string no_entry = kPlugins + "libnot_a_plugin.so";
  std::string undefined = kPlugins + "libundefined_symbol_plugin.so";
  return {
      {text, "cannot load plugin '" + text +
                 "': not a shared library (the file does not start with an "
                 "ELF header)"},
      {foreign, "cannot load plugin '" + foreign +
                    "': it is built for RISC-V (machine 243); this machine "
                    "is "},
      {kFx, "cannot load plugin '" + kFx +
                "': it is a position-independent executable (a program), "
                "not a shared library (link it with -shared"},
      {no_entry, "'" + no_entry +
                     "' is not an fx plugin: it does not export "
                     "fx_plugin_get_info"},
      {undefined, "cannot load plugin '" + undefined + "': " + undefined +
                      ": undefined symbol: fx_test_defined_nowhere"},
  };
}

// fx plugins (in process and isolated) and fx run name the file and the
// cause, exit 1, and never repeat Boost.DLL's "Bad file descriptor".
TEST(PluginLoadSafety, FilesThatAreNoPluginAreRefusedNamingTheCause) {
  std::string output = temp_path("not_plugins/out.fx.json");
  for (const NotAPlugin& file : not_plugins()) {
    const std::vector<std::string> plugin{"--no-default-plugins", "--plugin",
                                          file.path};
    std::vector<std::string> listed{"plugins"}, isolated{"plugins"},
        run{"run", mymodule() + "/graph.fx.json", "--pipeline", "dce", "-o",
            output};
    for (auto* args : {&listed, &isolated, &run}) {
      args->insert(args->end(), plugin.begin(), plugin.end());
    }
    isolated.push_back("--isolate");
    for (const auto* args : {&listed, &isolated, &run}) {
      SCOPED_TRACE(file.path + ", fx " + (*args)[0] +
                   (args == &isolated ? " --isolate" : ""));
      Ended r = fx(*args);
      EXPECT_EQ(r.signal, 0) << r.describe();
      EXPECT_EQ(r.status, 1) << r.describe();
      EXPECT_TRUE(has(r.err, "fx " + (*args)[0] + ": " + file.error))
          << r.describe();
      EXPECT_FALSE(has(r.err, "Bad file descriptor")) << r.describe();
    }
    EXPECT_FALSE(fs::exists(output));
  }
}

}  // namespace
}  // namespace fx
