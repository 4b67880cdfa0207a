// `fx plugins` and `fx run`: plugins listed with their passes and options,
// pipelines run on graph files, failures that leave no output file.
#include <gtest/gtest.h>

#include <boost/filesystem.hpp>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fx/plugin_api.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "host/loader/sha256.h"
#include "tests/testing/reference.h"
#include "tests/tools/fx_run.h"

namespace fx {
namespace {

const std::string kPlugins = "tests/plugin_api/plugins/";

using testing::Result;
using testing::run;

std::string temp_path(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp ? tmp : "/tmp") + "/pipeline_command";
  boost::filesystem::create_directories(dir);
  return dir + "/" + name;
}

std::string mymodule() {
  return testing::reference_dir() + "/seed_mymodule/graph.fx.json";
}

bool exists(const std::string& path) { return boost::filesystem::exists(path); }

TEST(FxPlugins, ListsPluginsPassesAndOptions) {
  std::string path = kPlugins + "libc_plugin.so";
  Result r = run({"plugins", "--no-default-plugins", "--plugin", path});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(
      r.out,
      "plugin c_plugin 1.0 (API " + std::to_string(FX_API_VERSION) +
          ", runs on API >= " + std::to_string(FX_API_VERSION) +
          ")\n"
          "  file:   " +
          path +
          "\n"
          "  sha256: " +
          *host::sha256_file(path) +
          "\n"
          "  pass c_add_to_mul: operator.add -> operator.mul, written in C\n"
          "    option tag (string, default ''): written to meta['tag'] of "
          "the output\n"
          "named pipelines (fx pipelines lists their passes): O1, O2, "
          "inference\n");
}

// Issue 37 item 5: the named pipelines, listed and run by name.
TEST(FxPipelines, ListsEachNameItsPassesAndEngine) {
  Result r = run({"pipelines"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("O1: cleanups that never change a number"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  passes: dce,cse\n  engine: graph_module\nO2: "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\ninference: the InferencePlan's fast path"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  passes: shape_prop,fold_bn,fuse_conv,fuse_linear,"
                       "fuse_matmul,fuse_window_attention,fuse_pointwise\n"
                       "  engine: inference_plan\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run({"pipelines", "x.fx.json"}).status, 2);
}

TEST(FxRun, ANamedPipelineRunsItsPassesAndSaysWhichRan) {
  std::string out = temp_path("named/out.fx.json");
  Result r = run({"run", mymodule(), "--pipeline", "O1", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "fx run: named pipeline O1: ran dce, cse\n");
  EXPECT_TRUE(exists(out));
  // Among other passes, and refused with options.
  r = run({"run", mymodule(), "--pipeline", "cse,O1", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "fx run: named pipeline O1: ran cse, dce, cse\n");
  r = run({"run", mymodule(), "--pipeline", "O1{x=1}", "-o", out});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "fx run: pipeline 'O1{x=1}', column 1: the named pipeline 'O1' "
            "takes no options (it stands for dce,cse)\n");
}

TEST(FxRun, ANamedPipelineWithoutItsPluginNamesThem) {
  std::string out = temp_path("named/missing.fx.json");
  Result r =
      run({"run", mymodule(), "--no-default-plugins", "--plugin",
           kPlugins + "libc_plugin.so", "--pipeline", "inference", "-o", out});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "fx run: the named pipeline 'inference' needs pass 'shape_prop' "
            "of plugin fx_shape_prop (libfx_shape_prop.so), which is not "
            "loaded: unknown pass 'shape_prop' (known passes: "
            "c_add_to_mul)\n");
  r = run({"run", mymodule(), "--pipeline", "O3", "-o", out});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("fx run: unknown pass 'O3' (known passes: ", 0), 0)
      << r.err;
  EXPECT_NE(r.err.find("; 'O3' is no named pipeline either (named "
                       "pipelines: O1, O2, inference)\n"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(exists(out));
}

TEST(FxPlugins, ShowsConstraintsAndPropertiesOfPasses) {
  Result r = run({"plugins", "--no-default-plugins", "--plugin",
                  kPlugins + "libtest_passes.so"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  pass read_meta: counts nodes with tensor_meta\n"
                       "    requires: tensor_meta\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  pass third: declares run_after second\n"
                       "    run after: second\n"),
            std::string::npos);
}

// API version 6's declarations: a tolerance, idempotence.
TEST(FxPlugins, ShowsDeclaredToleranceAndIdempotence) {
  Result r = run({"plugins", "--no-default-plugins", "--plugin",
                  kPlugins + "libdeclaring_plugin.so"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  pass scale_output: output * 1.001, within its "
                       "tolerance\n"
                       "    invalidates: tensor_meta\n"
                       "    tolerance: rtol 0.01, atol 1e-05\n"
                       "  pass scale_too_far: "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  pass stamp_once: marks the output once "
                       "(idempotent)\n"
                       "    idempotent: yes\n"
                       "  pass stamp_again: "),
            std::string::npos)
      << r.out;
  // Declared by none of c_plugin's passes.
  Result plain = run({"plugins", "--no-default-plugins", "--plugin",
                      kPlugins + "libc_plugin.so"});
  EXPECT_EQ(plain.out.find("tolerance"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("idempotent"), std::string::npos) << plain.out;
}

// What each plugin registered when it loaded, under its name and before its
// passes: custom ops and leaf-module rules (test_passes), make_fx's
// decompositions and leaf operators (capture_vendor, which has no passes),
// backends (accelerator).
TEST(FxPlugins, ShowsTheExtensionsEachPluginRegisters) {
  std::string capture = "sdk_examples/capture_vendor/libcapture_vendor.so";
  std::string accelerator = "sdk_examples/accelerator/libaccelerator.so";
  Result r = run({"plugins", "--no-default-plugins", "--plugin",
                  kPlugins + "libtest_passes.so", "--plugin", capture,
                  "--plugin", accelerator});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  custom op test_vendor.scaled_add(input, other, "
                       "alpha=1.0)\n"
                       "  leaf-module rules: 1\n"
                       "  pass decompose_relu: "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  sha256: " + *host::sha256_file(capture) +
                       "\n"
                       "  make_fx decomposition: aten::silu\n"
                       "  make_fx leaf operator: aten::layer_norm\n"
                       "plugin accelerator 0.2 "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  sha256: " + *host::sha256_file(accelerator) +
                       "\n"
                       "  backend: accelerator\n"
                       "  pass accelerator_mark: "),
            std::string::npos)
      << r.out;
  // Listed again by a second fx plugins in this process, where the host
  // registers nothing twice.
  Result again = run({"plugins", "--no-default-plugins", "--plugin", capture});
  EXPECT_NE(again.out.find("  make_fx leaf operator: aten::layer_norm\n"),
            std::string::npos)
      << again.out;
}

TEST(FxPlugins, ABadPluginIsAnError) {
  Result r = run(
      {"plugins", "--no-default-plugins", "--plugin", kPlugins + "missing.so"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "fx plugins: cannot load plugin: cannot read '" + kPlugins +
                       "missing.so': No such file or directory\n");
}

// Plugin 'acme' provides a pass 'dce', as the first-party fx_passes does:
// both load, the bare name is refused, the qualified names run.
TEST(FxRun, PassNamesThatClashAreQualifiedByPlugin) {
  std::string acme = kPlugins + "libacme_plugin.so";
  Result listed = run({"plugins", "--plugin", acme});
  ASSERT_EQ(listed.status, 0) << listed.err;
  EXPECT_NE(listed.out.find("  pass acme.dce: acme's dce"), std::string::npos)
      << listed.out;
  EXPECT_NE(listed.out.find("  pass fx_passes.dce: "), std::string::npos);
  EXPECT_NE(listed.out.find("  pass cse: "), std::string::npos);

  std::string out = temp_path("clash/out.fx.json");
  Result bare = run(
      {"run", mymodule(), "--plugin", acme, "--pipeline", "dce", "-o", out});
  EXPECT_EQ(bare.status, 2);
  EXPECT_NE(bare.err.find("fx run: pass 'dce' is provided by plugins 'acme' (" +
                          acme + ") and 'fx_passes' ("),
            std::string::npos)
      << bare.err;
  EXPECT_NE(bare.err.find("/libfx_passes.so); name one of acme.dce, "
                          "fx_passes.dce\n"),
            std::string::npos)
      << bare.err;
  EXPECT_FALSE(exists(out));

  Result r = run({"run", mymodule(), "--plugin", acme, "--pipeline",
                  "acme.dce,fx_passes.dce,cse", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  auto file = read_graph_file(out);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(
      file->graph->find_nodes(Opcode::kCallFunction, "operator.sub").size(),
      1u);
  EXPECT_EQ(
      file->graph->find_nodes(Opcode::kCallFunction, "operator.add").size(),
      0u);
}

// A plugin directory holding a library that is no plugin, and a file that
// is no library at all: both are skipped with a warning, the others load.
TEST(FxRun, BrokenLibrariesInAPluginDirectoryAreReportedAndSkipped) {
  namespace fs = boost::filesystem;
  std::string dir = temp_path("mixed_plugins");
  fs::create_directories(dir);
  for (const char* lib : {"libc_plugin.so", "libnot_a_plugin.so"}) {
    fs::copy_file(kPlugins + lib, dir + "/" + lib,
                  fs::copy_option::overwrite_if_exists);
  }
  std::ofstream(dir + "/libtruncated.so") << "\x7f"
                                             "ELF, cut short";
  std::string out = temp_path("mixed_plugins_out/out.fx.json");
  Result r = run({"run", mymodule(), "--no-default-plugins", "--plugin-dir",
                  dir, "--pipeline", "c_add_to_mul", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(exists(out));
  EXPECT_NE(r.err.find("fx run: warning: skipped plugin " + dir +
                       "/libnot_a_plugin.so: "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("fx run: warning: skipped plugin " + dir +
                       "/libtruncated.so: "),
            std::string::npos)
      << r.err;

  // The same through $FX_PLUGIN_PATH, and for fx plugins.
  setenv("FX_PLUGIN_PATH", dir.c_str(), 1);
  Result listed = run({"plugins"});
  unsetenv("FX_PLUGIN_PATH");
  ASSERT_EQ(listed.status, 0) << listed.err;
  EXPECT_NE(listed.out.find("plugin c_plugin 1.0"), std::string::npos);
  EXPECT_NE(listed.out.find("plugin fx_passes 1.0"), std::string::npos);
  EXPECT_NE(listed.err.find("fx plugins: warning: skipped plugin " + dir +
                            "/libtruncated.so: "),
            std::string::npos)
      << listed.err;

  // A pass no loaded plugin provides: the skipped libraries may have, so
  // the error names them.
  Result missing = run({"run", mymodule(), "--no-default-plugins",
                        "--plugin-dir", dir, "--pipeline", "vendor_pass", "-o",
                        temp_path("mixed_plugins_out/missing.fx.json")});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("fx run: unknown pass 'vendor_pass' (known "
                             "passes: c_add_to_mul); 2 plugins were skipped "
                             "as broken and may provide it: " +
                             dir + "/libnot_a_plugin.so: "),
            std::string::npos)
      << missing.err;
  EXPECT_FALSE(exists(temp_path("mixed_plugins_out/missing.fx.json")));

  // A broken file named with --plugin is still an error.
  Result named =
      run({"run", mymodule(), "--no-default-plugins", "--plugin",
           dir + "/libtruncated.so", "--pipeline", "c_add_to_mul", "-o", out});
  EXPECT_EQ(named.status, 1);
}

// A pass that kills the process: fx run names it (and its plugin) on stderr
// before the process dies of the signal, and writes no output.
TEST(FxRunDeathTest, APassThatCrashesTheProcessIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::string crash = kPlugins + "libcrash_plugin.so";
  std::string out = temp_path("crash/out.fx.json");
  EXPECT_EXIT(run({"run", mymodule(), "--no-default-plugins", "--no-isolate",
                   "--plugin", crash, "--pipeline", "segfault", "-o", out}),
              ::testing::KilledBySignal(SIGSEGV),
              "fx run: fatal signal SIGSEGV in pass 'segfault' of plugin "
              "'crash' \\(" +
                  crash +
                  "\\); the process ends here and no output is written");
  EXPECT_EXIT(run({"run", mymodule(), "--no-default-plugins", "--no-isolate",
                   "--plugin", crash, "--pipeline", "abort", "-o", out}),
              ::testing::KilledBySignal(SIGABRT),
              "fx run: fatal signal SIGABRT in pass 'abort' of plugin 'crash'");
  EXPECT_FALSE(exists(out));
}

// Issue 39: a pass that kills the process in process still leaves its
// reproducer (written before it ran); passes that return leave none.
TEST(FxRunDeathTest, AnInProcessCrashLeavesAReproducer) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  namespace fs = boost::filesystem;
  std::string repro = temp_path("crash_repro");
  fs::remove_all(repro);
  std::string crash = kPlugins + "libcrash_plugin.so";
  std::string out = temp_path("crash_repro_out/out.fx.json");
  EXPECT_EXIT(run({"run", mymodule(), "--no-default-plugins", "--no-isolate",
                   "--plugin", crash, "--pipeline", "segfault", "-o", out,
                   "--reproducer-dir", repro}),
              ::testing::KilledBySignal(SIGSEGV), "pass 'segfault'");
  std::vector<fs::path> dirs(fs::directory_iterator(repro), {});
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_EQ(dirs[0].filename().string().rfind("segfault-", 0), 0u);
  for (const char* name : {"graph.fx.json", "pipeline.json", "README.txt"}) {
    EXPECT_TRUE(fs::exists(dirs[0] / name)) << name;
  }
  EXPECT_EQ(testing::read_file((dirs[0] / "README.txt").string())
                .rfind("the process ended during pass 'segfault' of plugin "
                       "'crash'",
                       0),
            0u);
  // The reproducer runs the crash again (isolated here, so this survives).
  Result again =
      run({"run", (dirs[0] / "graph.fx.json").string(), "--config",
           (dirs[0] / "pipeline.json").string(), "--no-default-plugins",
           "--isolate", "-o", temp_path("crash_repro_out/again.fx.json")});
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("killed by SIGSEGV"), std::string::npos)
      << again.err;
  // A pipeline whose passes return leaves no reproducer behind.
  std::string clean = temp_path("clean_repro");
  fs::remove_all(clean);
  Result ok = run({"run", mymodule(), "--pipeline", "dce", "-o", out,
                   "--reproducer-dir", clean});
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_TRUE(!fs::exists(clean) || fs::is_empty(clean));
}

TEST(FxRun, RunsAPipelineAndWritesTheBundle) {
  std::string out = temp_path("run/out.fx.json");
  Result r = run({"run", mymodule(), "--no-default-plugins", "--plugin",
                  kPlugins + "libc_plugin.so", "--pipeline",
                  "c_add_to_mul{tag=cli}", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  // Not pinned: run isolated by default, and said so.
  EXPECT_EQ(r.err, "fx run: isolated (not pinned): c_add_to_mul\n");
  auto file = read_graph_file(out);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(
      file->graph->find_nodes(Opcode::kCallFunction, "operator.add").size(),
      0u);
  EXPECT_EQ(
      file->graph->find_nodes(Opcode::kCallFunction, "operator.mul").size(),
      1u);
  EXPECT_EQ(file->graph->output_node()->meta_value("tag")->as_string(), "cli");
  EXPECT_EQ(file->weights, "out.weights.pt");
  EXPECT_TRUE(exists(temp_path("run/out.weights.pt")));
}

// Issue 22, data loss: every output names its own weights file.
TEST(FxRunOutputs, EachOutputNamesItsOwnWeights) {
  namespace fs = boost::filesystem;
  std::string dir = temp_path("own_weights");
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string ref = testing::reference_dir() + "/seed_mymodule/";
  for (const char* name : {"graph.fx.json", "model.weights.pt", "input.pt"}) {
    fs::copy_file(ref + name, dir + "/" + name);
  }
  std::string weights_before = testing::read_file(dir + "/model.weights.pt");
  for (const char* out : {"a.fx.json", "b.json", "c"}) {
    Result r = run({"run", dir + "/graph.fx.json", "--pipeline", "dce", "-o",
                    dir + "/" + out});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(read_graph_file(dir + "/a.fx.json")->weights, "a.weights.pt");
  EXPECT_EQ(read_graph_file(dir + "/b.json")->weights, "b.weights.pt");
  EXPECT_EQ(read_graph_file(dir + "/c")->weights, "c.weights.pt");
  EXPECT_EQ(testing::read_file(dir + "/model.weights.pt"), weights_before);
  for (const char* out : {"graph.fx.json", "a.fx.json", "b.json", "c"}) {
    Result r = run({"exec", dir + "/" + out, "--inputs", dir + "/input.pt",
                    "--outputs", dir + "/" + out + ".out.pt"});
    EXPECT_EQ(r.status, 0) << out << ": " << r.err;
  }
}

TEST(FxRunOutputs, AnInputIsNeverOverwritten) {
  namespace fs = boost::filesystem;
  std::string dir = temp_path("inputs_kept");
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string ref = testing::reference_dir() + "/seed_mymodule/";
  for (const char* name : {"graph.fx.json", "model.weights.pt"}) {
    fs::copy_file(ref + name, dir + "/" + name);
  }
  std::string in = dir + "/graph.fx.json";
  Result r = run({"run", in, "--pipeline", "dce", "-o", in});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "fx run: -o " + in + " would overwrite " + in +
                       " (the graph), which this command reads; write the "
                       "output elsewhere\n");
  r = run({"run", in, "--pipeline", "dce", "-o", dir + "/model.weights.pt"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "fx run: -o " + dir + "/model.weights.pt would overwrite " +
                       dir + "/model.weights.pt (the weights of " + in +
                       "), which this command reads; write the output "
                       "elsewhere\n");
  // in.json names out.weights.pt; -o out.json would write its weights there.
  std::string text = testing::read_file(in);
  text.replace(text.find("\"model.weights.pt\""), 18, "\"out.weights.pt\"");
  std::ofstream(dir + "/in.json") << text;
  fs::copy_file(dir + "/model.weights.pt", dir + "/out.weights.pt");
  r = run(
      {"run", dir + "/in.json", "--pipeline", "dce", "-o", dir + "/out.json"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "fx run: -o's weights file " + dir +
                       "/out.weights.pt would overwrite " + dir +
                       "/out.weights.pt (the weights of " + dir +
                       "/in.json), which this command reads; write the output "
                       "elsewhere\n");
  EXPECT_FALSE(exists(dir + "/out.json"));
  EXPECT_EQ(testing::read_file(dir + "/model.weights.pt"),
            testing::read_file(ref + "model.weights.pt"));
}

// Issue 34 item 2: one output rule for every command. Each command is
// pointed at the bundle's graph and at its weights, spelled as a hard link,
// a symlink and a `..` path; each refuses naming the file, writes nothing,
// and the bundle stays byte-identical.
TEST(FxOutputRule, NoCommandOverwritesAFileItReads) {
  namespace fs = boost::filesystem;
  std::string dir = temp_path("output_rule");
  fs::remove_all(dir);
  fs::create_directories(dir + "/sub");
  std::string ref = testing::reference_dir() + "/seed_mymodule/";
  for (const char* name : {"graph.fx.json", "model.weights.pt", "input.pt"}) {
    fs::copy_file(ref + name, dir + "/" + name);
  }
  const std::string graph = dir + "/graph.fx.json";
  const std::string weights = dir + "/model.weights.pt";
  fs::create_hard_link(weights, dir + "/weights_link.pt");
  fs::create_symlink(graph, dir + "/graph_symlink.json");
  const std::vector<std::string> targets = {graph,
                                            weights,
                                            dir + "/weights_link.pt",
                                            dir + "/graph_symlink.json",
                                            dir + "/sub/../model.weights.pt",
                                            dir + "/./graph.fx.json"};
  const std::string before_graph = testing::read_file(graph);
  const std::string before_weights = testing::read_file(weights);
  for (const std::string& target : targets) {
    std::vector<std::vector<std::string>> commands = {
        {"run", graph, "--pipeline", "dce", "-o", target},
        {"exec", graph, "--inputs", dir + "/input.pt", "--outputs", target},
        {"dot", graph, "-o", target},
        {"reduce", graph, "--pipeline", "dce", "-o", target}};
    for (const auto& command : commands) {
      Result r = run(command);
      EXPECT_EQ(r.status, 2) << command[0] << " -o " << target << ": " << r.err;
      EXPECT_NE(r.err.find("which this command reads"), std::string::npos)
          << command[0] << " -o " << target << ": " << r.err;
    }
  }
  EXPECT_EQ(testing::read_file(graph), before_graph);
  EXPECT_EQ(testing::read_file(weights), before_weights);
  // The weights a run would write beside OUT: sub/../model.weights.pt is
  // the input's weights when OUT is sub/../model.fx.json.
  Result r = run(
      {"run", graph, "--pipeline", "dce", "-o", dir + "/sub/../model.fx.json"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("-o's weights file"), std::string::npos) << r.err;
  r = run({"reduce", graph, "--pipeline", "dce", "-o",
           dir + "/sub/../model.fx.json"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("-o's weights file"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(dir + "/model.fx.json"));
  EXPECT_EQ(testing::read_file(weights), before_weights);
}

// A file a pass writes (dot's path, splitter's report: the C ABI's
// WriteOutputFile, version 13) obeys the same rule: never the command's
// graph or its weights, in process or in an isolated pass worker.
TEST(FxOutputRule, APassWritesNoFileTheCommandReads) {
  namespace fs = boost::filesystem;
  std::string dir = temp_path("pass_output_rule");
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string ref = testing::reference_dir() + "/seed_mymodule/";
  for (const char* name : {"graph.fx.json", "model.weights.pt", "input.pt"}) {
    fs::copy_file(ref + name, dir + "/" + name);
  }
  const std::string graph = dir + "/graph.fx.json";
  const std::string weights = dir + "/model.weights.pt";
  const std::string out = dir + "/out.fx.json";
  const std::string before_graph = testing::read_file(graph);
  const std::string before_weights = testing::read_file(weights);
  struct Case {
    std::string target, input, what;
  };
  const std::vector<Case> cases = {
      {graph, graph, "the graph"},
      {dir + "/./graph.fx.json", graph, "the graph"},
      {weights, weights, "the weights of " + graph}};
  for (const Case& c : cases) {
    const std::string refusal = "the pass's output file " + c.target +
                                " would overwrite " + c.input + " (" + c.what +
                                "), which this command reads";
    for (const std::string& pass :
         {"dot{path=" + c.target + "}",
          "shape_prop,splitter{supported=torch.nn.modules.linear.Linear,"
          "report=" +
              c.target + "}"}) {
      for (const char* isolation : {"--isolate", "--no-isolate"}) {
        Result r = run({"run", graph, "--inputs", dir + "/input.pt",
                        "--pipeline", pass, isolation, "-o", out});
        EXPECT_EQ(r.status, 1) << pass << " " << isolation << ": " << r.err;
        EXPECT_NE(r.err.find(refusal), std::string::npos)
            << pass << " " << isolation << ": " << r.err;
        EXPECT_FALSE(exists(out)) << pass;
      }
    }
    Result r =
        run({"exec", graph, "--inputs", dir + "/input.pt", "--outputs",
             dir + "/out.pt", "--pipeline", "dot{path=" + c.target + "}"});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find(refusal), std::string::npos) << r.err;
    EXPECT_FALSE(exists(dir + "/out.pt"));
  }
  EXPECT_EQ(testing::read_file(graph), before_graph);
  EXPECT_EQ(testing::read_file(weights), before_weights);
  // Other files are written as before.
  Result r = run({"run", graph, "--inputs", dir + "/input.pt", "--pipeline",
                  "shape_prop,dot{path=" + dir +
                      "/g.dot},splitter{supported="
                      "torch.nn.modules.linear.Linear,report=" +
                      dir + "/split.txt}",
                  "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(testing::read_file(dir + "/g.dot").rfind("digraph", 0), 0u);
  EXPECT_NE(testing::read_file(dir + "/split.txt").find("Got 1 acc subgraphs"),
            std::string::npos)
      << testing::read_file(dir + "/split.txt");
  EXPECT_TRUE(exists(out));
  EXPECT_EQ(testing::read_file(graph), before_graph);
}

TEST(FxRunOutputs, ATargetThatIsNoRegularFileIsRefused) {
  Result r = run({"run", mymodule(), "--pipeline", "dce", "-o", "/dev/full"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "fx run: /dev/full: not a regular file; refusing to replace it\n");
  EXPECT_FALSE(exists("/dev/full.weights.pt"));
  std::string dir = temp_path("a_directory.json");
  boost::filesystem::create_directories(dir);
  r = run({"run", mymodule(), "--pipeline", "dce", "-o", dir});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "fx run: " + dir +
                       ": not a regular file; refusing to replace it\n");
}

TEST(FxRun, AStoppedPipelineWritesNothingAndSaysWhy) {
  std::string out = temp_path("failed/out.fx.json");
  std::string repro = temp_path("failed/repro");
  Result r = run({"run", mymodule(), "--no-default-plugins", "--plugin",
                  kPlugins + "libtest_passes.so", "--pipeline",
                  "decompose_relu,edit_then_fail", "-o", out,
                  "--reproducer-dir", repro});
  EXPECT_EQ(r.status, 1);
  EXPECT_FALSE(exists(out));
  EXPECT_EQ(r.err.rfind("fx run: isolated (not pinned): decompose_relu, "
                        "edit_then_fail\n"
                        "fx run: pass 'edit_then_fail' of plugin "
                        "'test_passes' (" +
                            kPlugins +
                            "libtest_passes.so) failed and was rolled back: "
                            "FAILED_PRECONDITION: edit_then_fail gives up\n"
                            "fx run: reproducer written to " +
                            repro + "/",
                        0),
            0u)
      << r.err;
  EXPECT_NE(
      r.err.find("fx run: the pipeline stopped; " + out + " was not written\n"),
      std::string::npos);
}

// Skipping writes the result but, as LLVM's and MLIR's tools do after a
// failed pass, exits non-zero: kSkippedPassesStatus, naming what failed.
TEST(FxRun, SkippingAFailedPassWritesTheResultAndExitsNonZero) {
  std::string out = temp_path("skipped/out.fx.json");
  Result r = run({"run", mymodule(), "--no-default-plugins", "--plugin",
                  kPlugins + "libtest_passes.so", "--pipeline",
                  "edit_then_fail,fake_shape_prop", "--on-failure", "skip",
                  "-o", out, "--time"});
  EXPECT_EQ(r.status, 3) << r.err;  // kSkippedPassesStatus
  EXPECT_TRUE(exists(out));
  EXPECT_NE(r.err.find("fx run: pass 'edit_then_fail' of plugin"),
            std::string::npos)
      << r.err;
  EXPECT_NE(
      r.err.find("fx run: 1 pass failed and skipped (rolled back): "
                 "'edit_then_fail'; " +
                 out + " was written without its changes (exit status 3)\n"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("edit_then_fail   rolled back"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fake_shape_prop  ran"), std::string::npos);
}

TEST(FxRun, PrintAfterWritesTheGraphText) {
  Result r = run({"run", mymodule(), "--no-default-plugins", "--plugin",
                  kPlugins + "libc_plugin.so", "--pipeline", "c_add_to_mul",
                  "--print-after", "c_add_to_mul", "-o",
                  temp_path("print/out.fx.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("// -----// graph after c_add_to_mul //----- //\n"
                        "graph():\n",
                        0),
            0u)
      << r.out;
}

TEST(FxRun, ConfigErrorsAreReportedBeforeAnythingRuns) {
  std::string out = temp_path("config/out.fx.json");
  Result unknown =
      run({"run", mymodule(), "--no-default-plugins", "--plugin",
           kPlugins + "libc_plugin.so", "--pipeline", "dce", "-o", out});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_EQ(unknown.err,
            "fx run: unknown pass 'dce' (known passes: c_add_to_mul); 'dce' "
            "is no named pipeline either (named pipelines: O1, O2, "
            "inference)\n");
  Result no_output = run({"run", mymodule(), "--pipeline", "dce"});
  EXPECT_EQ(no_output.status, 2);
  EXPECT_EQ(no_output.err, "fx run: -o OUT.fx.json is required\n");
  Result both = run(
      {"run", mymodule(), "--pipeline", "a", "--config", "c.json", "-o", out});
  EXPECT_EQ(both.err,
            "fx run: give exactly one of --pipeline TEXT and --config "
            "CONF.json\n");
  EXPECT_FALSE(exists(out));
}

// --on-failure and --ordering are read by the pipeline's own parsers, with
// their message.
TEST(FxRun, PolicyFlagsAreReadLikeTheConfigKeys) {
  std::string out = temp_path("flags/out.fx.json");
  Result policy = run({"run", mymodule(), "--pipeline", "dce", "-o", out,
                       "--on-failure", "retry"});
  EXPECT_EQ(policy.status, 2);
  EXPECT_EQ(policy.err,
            "fx run: --on-failure: expected \"stop\" or \"skip\", got "
            "\"retry\"\n");
  Result ordering = run({"run", mymodule(), "--pipeline", "dce", "-o", out,
                         "--ordering", "random"});
  EXPECT_EQ(ordering.status, 2);
  EXPECT_EQ(ordering.err,
            "fx run: --ordering: expected \"explicit\" or \"auto\", got "
            "\"random\"\n");
  EXPECT_FALSE(exists(out));
}

TEST(FxRun, APinnedHashMismatchIsRefused) {
  std::string config = temp_path("pinned.json");
  std::string plugin =
      boost::filesystem::absolute(kPlugins + "libc_plugin.so").string();
  std::ofstream(config) << R"({"plugins": [{"path": ")" << plugin
                        << R"(", "sha256": ")" << std::string(64, 'f')
                        << R"("}], "pipeline": "c_add_to_mul"})";
  Result r = run({"run", mymodule(), "--no-default-plugins", "--config", config,
                  "-o", temp_path("pinned/out.fx.json")});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "fx run: plugin '" + plugin +
                       "' is refused: its sha256 is " +
                       *host::sha256_file(plugin) +
                       " but the configuration pins " + std::string(64, 'f') +
                       ". The file changed since it was pinned; if the new "
                       "file is trusted, update the pin\n");
}

std::string reference(const std::string& name, const std::string& file) {
  return testing::reference_dir() + "/" + name + "/" + file;
}

bool has_tensor_meta(const std::string& path) {
  auto file = read_graph_file(path);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return false;
  for (const Node* n : file->graph->nodes()) {
    if (n->op() != Opcode::kOutput && !n->meta_value("tensor_meta")) {
      return false;
    }
  }
  return true;
}

// seed_dropout has no parameters, so no weights: `fx exec` runs it, and so
// do `fx run --inputs` and shape_prop.
TEST(FxRun, AGraphWithoutParametersTakesInputsAndRunsShapeProp) {
  std::string out = temp_path("weightless/out.fx.json");
  Result r = run({"run", reference("seed_dropout", "graph.fx.json"), "--inputs",
                  reference("seed_dropout", "input.pt"), "--pipeline",
                  "shape_prop", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has_tensor_meta(out));
  Result shapes = run({"run", reference("seed_dropout", "graph.fx.json"),
                       "--pipeline", "shape_prop{shapes=2x3}", "-o", out});
  ASSERT_EQ(shapes.status, 0) << shapes.err;
  EXPECT_TRUE(has_tensor_meta(out));
}

// fx run's output is an input of fx run again, --inputs included, with or
// without weights.
TEST(FxRun, ItsOwnOutputFeedsBackIntoIt) {
  for (const char* name : {"seed_dropout", "seed_mymodule"}) {
    std::string first = temp_path(std::string("again/") + name + "/1.fx.json");
    std::string second = temp_path(std::string("again/") + name + "/2.fx.json");
    std::string inputs = reference(name, "input.pt");
    Result r = run({"run", reference(name, "graph.fx.json"), "--inputs", inputs,
                    "--pipeline", "shape_prop", "-o", first});
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    Result again = run({"run", first, "--inputs", inputs, "--pipeline",
                        "shape_prop", "-o", second});
    ASSERT_EQ(again.status, 0) << name << ": " << again.err;
    Result exec = run({"exec", second, "--inputs", inputs, "--outputs",
                       temp_path(std::string("again/") + name + "/out.pt")});
    EXPECT_EQ(exec.status, 0) << name << ": " << exec.err;
  }
}

// A graph calling a plugin's custom op runs with that plugin loaded; without
// it the error says to load it (issue 39: it gave C++ registry advice only).
TEST(FxExec, ACustomOpNeedsItsPluginAndSaysSo) {
  std::string graph = temp_path("custom_op/graph.fx.json");
  boost::filesystem::create_directories(temp_path("custom_op"));
  // (Custom ops stay registered in a process once a plugin loaded them:
  // the missing one is an op no plugin here defines.)
  std::string unknown = temp_path("custom_op/unknown.fx.json");
  for (const char* target :
       {"test_vendor.scaled_add", "vendor.never_defined"}) {
    Graph g;
    Node* x = g.placeholder("x");
    g.output(g.call_function(target, {x, x}));
    std::ofstream(target[0] == 't' ? graph : unknown) << to_graph_json(g);
  }
  std::string inputs = reference("seed_dropout", "input.pt");
  std::string out = temp_path("custom_op/out.pt");
  Result missing = run({"exec", unknown, "--inputs", inputs, "--outputs", out,
                        "--no-default-plugins"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("no kernel for call_function target "
                             "'vendor.never_defined': if a plugin defines "
                             "it, load that plugin (fx: --plugin PATH"),
            std::string::npos)
      << missing.err;
  Result loaded =
      run({"exec", graph, "--inputs", inputs, "--outputs", out,
           "--no-default-plugins", "--plugin", kPlugins + "libtest_passes.so"});
  EXPECT_EQ(loaded.status, 0) << loaded.err;
}

// A graph that does not load as a module is still transformed as a graph;
// only --inputs, which needs one that runs, refuses it with the reason.
TEST(FxRun, AGraphThatDoesNotRunIsTransformedButRefusesInputs) {
  std::string graph = temp_path("unknown_op.fx.json");
  Graph g;
  Node* x = g.placeholder("x");
  g.output(g.call_function("vendor.unknown_op", {x}));
  std::ofstream(graph) << to_graph_json(g);
  std::string out = temp_path("unknown_op/out.fx.json");
  Result r = run({"run", graph, "--no-default-plugins", "--plugin",
                  kPlugins + "libc_plugin.so", "--pipeline", "c_add_to_mul",
                  "-o", out});
  EXPECT_EQ(r.status, 0) << r.err;
  Result inputs =
      run({"run", graph, "--inputs", reference("seed_dropout", "input.pt"),
           "--pipeline", "shape_prop", "-o", out});
  EXPECT_EQ(inputs.status, 1);
  EXPECT_NE(inputs.err.find("vendor.unknown_op"), std::string::npos)
      << inputs.err;
  EXPECT_NE(inputs.err.find("(--inputs needs a graph that runs)"),
            std::string::npos)
      << inputs.err;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A reproducer holds the example inputs and copies of the plugins, names no
// path outside itself, and still reproduces the failure once moved.
TEST(FxRun, AReproducerIsRelocatableAndHoldsTheInputs) {
  namespace fs = boost::filesystem;
  std::string dir = temp_path("relocate");
  fs::remove_all(dir);
  Result r = run(
      {"run", mymodule(), "--inputs", reference("seed_mymodule", "input.pt"),
       "--no-default-plugins", "--plugin", kPlugins + "libtest_passes.so",
       "--pipeline", "decompose_relu,edit_then_fail", "-o",
       dir + "/out.fx.json", "--reproducer-dir", dir + "/repro"});
  ASSERT_EQ(r.status, 1);
  std::vector<fs::path> written;
  for (fs::directory_iterator it(dir + "/repro"), end; it != end; ++it) {
    written.push_back(it->path());
  }
  ASSERT_EQ(written.size(), 1u);
  std::string moved = dir + "/elsewhere";
  fs::rename(written[0], moved);

  std::string config = read_text(moved + "/pipeline.json");
  EXPECT_EQ(config.find(dir), std::string::npos) << config;
  EXPECT_NE(config.find("\"plugins/libtest_passes.so\""), std::string::npos)
      << config;
  EXPECT_TRUE(exists(moved + "/inputs.pt"));
  EXPECT_TRUE(exists(moved + "/model.weights.pt"));
  std::string readme = read_text(moved + "/README.txt");
  EXPECT_NE(readme.find("fx run graph.fx.json --config pipeline.json --inputs "
                        "inputs.pt --no-default-plugins -o out.fx.json"),
            std::string::npos)
      << readme;

  Result again =
      run({"run", moved + "/graph.fx.json", "--config",
           moved + "/pipeline.json", "--inputs", moved + "/inputs.pt",
           "--no-default-plugins", "-o", moved + "/out.fx.json"});
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("edit_then_fail gives up"), std::string::npos)
      << again.err;
}

// --isolate: a pass that crashes, aborts or edits and then crashes ends its
// worker, not fx run; the output is the input, byte for byte (a bare graph
// file, or a bundle's graph and weights); stderr names the pass and the
// signal; a reproducer is written.
TEST(FxRunIsolated, ACrashingPassLeavesTheGraphByteIdentical) {
  namespace fs = boost::filesystem;
  std::string dir = temp_path("isolated");
  fs::remove_all(dir);
  fs::create_directories(dir);
  // A bare graph file as fx writes it, and a bundle as fx writes it.
  auto file = read_graph_file(mymodule());
  ASSERT_TRUE(file.ok()) << file.status();
  std::string bare = dir + "/bare.fx.json";
  std::ofstream(bare) << to_graph_json(*file->graph, file->modules);
  std::string bundle = dir + "/bundle.fx.json";
  ASSERT_EQ(run({"run", mymodule(), "--pipeline", "dce", "-o", bundle}).status,
            0);
  std::string crash = kPlugins + "libcrash_plugin.so";
  for (std::string pass : {"segfault", "abort", "edit_then_segfault"}) {
    std::string out = dir + "/" + pass + ".fx.json";
    Result r = run({"run", bare, "--isolate", "--no-default-plugins",
                    "--plugin", crash, "--pipeline", pass, "--on-failure",
                    "skip", "-o", out, "--reproducer-dir", dir + "/repro"});
    EXPECT_EQ(r.status, 3) << r.err;
    EXPECT_EQ(read_text(out), read_text(bare)) << pass;
    std::string signal = pass == "abort" ? "SIGABRT" : "SIGSEGV";
    EXPECT_NE(
        r.err.find("fx run: pass '" + pass + "' of plugin 'crash' (" + crash +
                   ") failed and was rolled back: the worker process "
                   "was killed by " +
                   signal),
        std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("fx run: reproducer written to " + dir + "/repro/" +
                         pass + "-"),
              std::string::npos)
        << r.err;

    out = dir + "/bundle-" + pass + ".fx.json";
    r = run({"run", bundle, "--isolate", "--no-default-plugins", "--plugin",
             crash, "--pipeline", pass, "--on-failure", "skip", "-o", out});
    EXPECT_EQ(r.status, 3) << r.err;
    std::string expected = read_text(bundle);
    std::string own = "\"weights\": \"bundle-" + pass + ".weights.pt\"";
    std::string json = read_text(out);
    ASSERT_NE(json.find(own), std::string::npos) << json;
    json.replace(json.find(own), own.size(),
                 "\"weights\": \"bundle.weights.pt\"");
    EXPECT_EQ(json, expected) << pass;
    EXPECT_EQ(read_text(dir + "/bundle-" + pass + ".weights.pt"),
              read_text(dir + "/bundle.weights.pt"));
  }
}

// A pass that hangs is killed at --pass-timeout; one that eats memory fails
// at --pass-memory-limit; both imply --isolate; fx run stops and says why.
TEST(FxRunIsolated, TimeoutAndMemoryLimitEndTheWorker) {
  std::string crash = kPlugins + "libcrash_plugin.so";
  std::string out = temp_path("isolated-limits/out.fx.json");
  Result r =
      run({"run", mymodule(), "--pass-timeout", "0.5", "--no-default-plugins",
           "--plugin", crash, "--pipeline", "hang", "-o", out});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("pass 'hang' of plugin 'crash'"), std::string::npos);
  EXPECT_NE(r.err.find("the worker process did not finish within 0.5 s and "
                       "was killed"),
            std::string::npos)
      << r.err;
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "ASan's allocator reports a failed allocation and exits";
#endif
  r = run({"run", mymodule(), "--pass-memory-limit", "128",
           "--no-default-plugins", "--plugin", crash, "--pipeline", "hog", "-o",
           out});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("pass 'hog' of plugin 'crash'"), std::string::npos);
  EXPECT_NE(r.err.find("the worker process was killed by SIGABRT (its memory "
                       "limit: 128 MiB beyond the host's"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(exists(out));
}

TEST(FxRunIsolated, TheConfigKeyIsolatesAndTheFlagsAreChecked) {
  std::string dir = temp_path("isolated-config");
  boost::filesystem::create_directories(dir);
  std::string config = dir + "/pipeline.json";
  std::ofstream(config) << R"({"pipeline": "segfault,dce", "isolate": true,
                               "on_failure": "skip"})";
  Result r = run({"run", mymodule(), "--config", config, "--plugin",
                  kPlugins + "libcrash_plugin.so", "-o", dir + "/out.fx.json"});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("killed by SIGSEGV"), std::string::npos) << r.err;

  r = run({"run", mymodule(), "--pipeline", "dce", "--pass-timeout", "soon",
           "-o", dir + "/out.fx.json"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "fx run: --pass-timeout expects seconds (a number > 0), got "
            "'soon'\n");
  r = run({"run", mymodule(), "--pipeline", "dce", "--pass-memory-limit", "-1",
           "-o", dir + "/out.fx.json"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "fx run: --pass-memory-limit expects MiB (an integer from 1 to "
            "1048576), got '-1'\n");
}

// The fx command's default, "isolate": "auto": a plugin neither first-party
// nor pinned runs in a worker, so its crash is contained (fx goes on, names
// the pass, exits as for any isolated failure) and stderr names the passes
// run isolated; first-party passes (dce) run in process.
TEST(FxRunAutoIsolation, AnUnpinnedPluginRunsIsolatedByDefault) {
  std::string dir = temp_path("auto-isolation");
  std::string crash = kPlugins + "libcrash_plugin.so";
  Result r = run({"run", mymodule(), "--plugin", crash, "--pipeline",
                  "dce,segfault", "-o", dir + "/out.fx.json"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("fx run: isolated (not pinned): segfault\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("pass 'segfault' of plugin 'crash'"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("killed by SIGSEGV"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(dir + "/out.fx.json"));
  // Skipped, the rest is written (exit status 3), as with --isolate.
  r = run({"run", mymodule(), "--plugin", crash, "--pipeline", "segfault,dce",
           "--on-failure", "skip", "-o", dir + "/out.fx.json"});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(exists(dir + "/out.fx.json"));
  // First-party passes alone: nothing is isolated, nothing said.
  r = run({"run", mymodule(), "--pipeline", "dce", "-o", dir + "/dce.fx.json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("isolated"), std::string::npos) << r.err;
  // The same under fx reduce: the crash is a failure to reduce, not the end.
  r = run({"reduce", mymodule(), "--plugin", crash, "--pipeline", "segfault",
           "-o", dir + "/reduced.fx.json"});
  EXPECT_NE(r.err.find("fx reduce: isolated (not pinned): segfault\n"),
            std::string::npos)
      << r.err;
}

// Run in process (proved by the crash ending the process): the crash plugin
// pinned by sha256 in the config under the default; --no-isolate; a config's
// "isolate": false. A config's "isolate" loses to a flag.
TEST(FxRunAutoIsolationDeathTest, PinnedOrNotIsolatedPluginsRunInProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  namespace fs = boost::filesystem;
  std::string dir = temp_path("auto-isolation-pinned");
  fs::create_directories(dir);
  std::string crash = fs::absolute(kPlugins + "libcrash_plugin.so").string();
  std::string out = dir + "/out.fx.json";
  std::string pinned = dir + "/pinned.json";
  std::ofstream(pinned) << R"({"plugins": [{"path": ")" << crash
                        << R"(", "sha256": ")" << *host::sha256_file(crash)
                        << R"("}], "pipeline": "dce,segfault"})";
  EXPECT_EXIT(run({"run", mymodule(), "--config", pinned, "-o", out}),
              ::testing::KilledBySignal(SIGSEGV),
              "fx run: fatal signal SIGSEGV in pass 'segfault' of plugin "
              "'crash'");
  EXPECT_EXIT(run({"run", mymodule(), "--no-isolate", "--plugin", crash,
                   "--pipeline", "segfault", "-o", out}),
              ::testing::KilledBySignal(SIGSEGV), "pass 'segfault'");
  std::string in_process = dir + "/in_process.json";
  std::ofstream(in_process)
      << R"({"plugins": [")" << crash
      << R"("], "pipeline": "segfault", "isolate": false})";
  EXPECT_EXIT(run({"run", mymodule(), "--config", in_process, "-o", out}),
              ::testing::KilledBySignal(SIGSEGV), "pass 'segfault'");
  // --isolate wins over the config's false; pinned, still isolated.
  Result r =
      run({"run", mymodule(), "--config", in_process, "--isolate", "-o", out});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("killed by SIGSEGV"), std::string::npos) << r.err;
  r = run({"run", mymodule(), "--config", pinned, "--isolate", "-o", out});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("killed by SIGSEGV"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("isolated (not pinned)"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(out));
}

// The flags that contradict each other.
TEST(FxRunAutoIsolation, FlagsAreChecked) {
  std::string out = temp_path("auto-isolation-flags/out.fx.json");
  Result r = run({"run", mymodule(), "--pipeline", "dce", "--isolate",
                  "--no-isolate", "-o", out});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "fx run: --no-isolate contradicts --isolate, which runs the "
            "passes in worker processes\n");
  r = run({"run", mymodule(), "--pipeline", "dce", "--pass-timeout", "5",
           "--no-isolate", "-o", out});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--no-isolate contradicts --pass-timeout"),
            std::string::npos)
      << r.err;
}

TEST(FxDot, DrawsTheGraphWithTensorMetaAndGraphvizRendersIt) {
  std::string out = temp_path("dot/mymodule.dot");
  Result r = run(
      {"dot", mymodule(), "--pipeline", "shape_prop{shapes=3x4}", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(out);
  std::stringstream dot;
  dot << in.rdbuf();
  EXPECT_EQ(dot.str().rfind("digraph \"GraphModule\" {\n", 0), 0u) << dot.str();
  EXPECT_NE(dot.str().find("\"linear\" [label=\"{linear|call_module|linear|"
                           "[3x5] torch.float32}\""),
            std::string::npos)
      << dot.str();
  EXPECT_NE(dot.str().find("\"linear\" -> \"clamp\";"), std::string::npos);
  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "Graphviz (dot) is not installed";
  }
  std::string svg = temp_path("dot/mymodule.svg");
  EXPECT_EQ(std::system(("dot -Tsvg " + out + " -o " + svg).c_str()), 0);
  EXPECT_TRUE(exists(svg));
}

TEST(FxDot, WritesToStdoutWithoutOutputFile) {
  Result r = run({"dot", mymodule()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"clamp\" -> \"output\";"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fx
