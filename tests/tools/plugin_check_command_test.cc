// `fx plugin-check`: the table of a plugin's passes and checks, and the exit
// status: 0 for a sound plugin, 1 for a failed check (a crash in any check
// included: the table is still whole) or a library that does not load, 2
// for a usage error; --pass selects passes, --before (or shape_prop, for a
// pass requiring tensor_meta) runs first.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/reference.h"
#include "tests/tools/fx_run.h"

namespace fx {
namespace {

using testing::Result;
using testing::run;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(FxPluginCheck, ASoundPluginPrintsItsTableAndExitsZero) {
  Result r = run({"plugin-check", "plugins/libfx_shape_prop.so", "--graphs",
                  testing::reference_dir()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "shape_prop  runs           ok")) << r.out;
  EXPECT_TRUE(has(r.out, "shape_prop  numbers        ok")) << r.out;
  EXPECT_TRUE(has(r.out, "shape_prop  deterministic  ok")) << r.out;
  EXPECT_TRUE(has(r.out, "shape_prop  rollback       ok")) << r.out;
  // shape_prop declares itself idempotent (FxPassInfo, API version 6).
  EXPECT_TRUE(has(r.out, "shape_prop  idempotent     ok")) << r.out;
  EXPECT_FALSE(has(r.out, "FAIL")) << r.out;
}

TEST(FxPluginCheck, AFailedCheckIsItsRowAndExitStatusOne) {
  Result r =
      run({"plugin-check", "tests/plugin_api/plugins/libunsound_plugin.so",
           "--graphs", testing::reference_dir()});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "changes_numbers   numbers        FAIL  ")) << r.out;
  EXPECT_TRUE(has(r.out, "nondeterministic  deterministic  FAIL  ")) << r.out;
  EXPECT_TRUE(has(r.out, "breaks_lint       lint           FAIL  ")) << r.out;
  EXPECT_TRUE(has(r.out, "hides_change      contract       FAIL  ")) << r.out;
  EXPECT_TRUE(has(r.err, "some checks failed")) << r.err;
}

TEST(FxPluginCheck, OneBundleDirectoryIsAGraphSet) {
  Result r = run({"plugin-check", "plugins/libfx_passes.so", "--graphs",
                  testing::reference_dir() + "/seed_mymodule"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "on 1 graph under")) << r.out;
}

TEST(FxPluginCheck, UsageAndLoadErrorsAreNamed) {
  unsetenv("FX_REFERENCE_DIR");
  Result none = run({"plugin-check", "plugins/libfx_passes.so"});
  EXPECT_EQ(none.status, 2);
  EXPECT_TRUE(has(none.err, "give --graphs DIR")) << none.err;
  Result rtol = run({"plugin-check", "plugins/libfx_passes.so", "--graphs",
                     testing::reference_dir(), "--rtol", "-1"});
  EXPECT_EQ(rtol.status, 2);
  EXPECT_TRUE(has(rtol.err, "--rtol expects a number > 0, got '-1'"))
      << rtol.err;
  Result memory = run({"plugin-check", "plugins/libfx_passes.so", "--graphs",
                       testing::reference_dir(), "--pass-memory-limit", "1.5"});
  EXPECT_EQ(memory.status, 2);
  EXPECT_TRUE(has(memory.err, "--pass-memory-limit expects MiB")) << memory.err;
  Result models = run({"plugin-check", "plugins/libfx_passes.so",
                       "--torchvision", "resnet18,../x"});
  EXPECT_EQ(models.status, 2);
  EXPECT_TRUE(has(models.err, "--torchvision expects model names"))
      << models.err;
  Result missing = run(
      {"plugin-check", "plugins/libfx_passes.so", "--graphs", "no/such/dir"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_TRUE(has(missing.err, "no/such/dir")) << missing.err;
  Result not_plugin =
      run({"plugin-check", "tests/plugin_api/plugins/libnot_a_plugin.so",
           "--graphs", testing::reference_dir()});
  EXPECT_EQ(not_plugin.status, 1);
  EXPECT_TRUE(has(not_plugin.err, "libnot_a_plugin.so")) << not_plugin.err;
}

// A graph that does not load is bad input, not a graph the passes decline:
// every such bundle is named with why, nothing is checked, exit status 1
// (a set of graphs none of which loaded used to pass with skipped rows).
TEST(FxPluginCheck, GraphsThatDoNotLoadAreNamedAndNothingIsChecked) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "unloadable_set";
  fs::remove_all(dir);
  for (const char* name : {"a_good", "b_bad", "c_bad"}) {
    fs::create_directories(dir / name);
    for (const auto& f :
         fs::directory_iterator(testing::reference_dir() + "/seed_mymodule")) {
      fs::copy_file(f.path(), dir / name / f.path().filename());
    }
  }
  std::ofstream(dir / "b_bad" / "graph.fx.json", std::ios::trunc) << "{";
  std::ofstream(dir / "c_bad" / "graph.fx.json", std::ios::trunc)
      << R"({"format": "fx-graph", "version": 1, "nodes": [)"
      << R"({"name": "x", "op": "nonsense", "target": "x"}]})";
  Result r = run({"plugin-check", "plugins/libfx_passes.so", "--graphs",
                  dir.string(), "--pass", "dce"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "2 of 3 graphs do not load:")) << r.err;
  EXPECT_TRUE(
      has(r.err, (dir / "b_bad").string() + ": the graph does not load: "))
      << r.err;
  EXPECT_TRUE(
      has(r.err, (dir / "c_bad").string() + ": the graph does not load: "))
      << r.err;
  EXPECT_TRUE(has(r.err, "nonsense")) << r.err;
  EXPECT_FALSE(has(r.err, "a_good")) << r.err;
  EXPECT_FALSE(has(r.out, "dce ")) << r.out;
}

// The bundles' files are what plugin-check reads: a pass run before the
// checks (or checked) that writes onto one of them through the host is
// refused and the bundle stays as it was (issue 34 item 2). A hidden
// directory (a crashed writer's temporary) is no bundle of the set.
TEST(FxPluginCheck, APassWritesNoFileOfTheBundlesAndHiddenDirsAreNoBundles) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "published_set";
  fs::remove_all(dir);
  for (const char* name : {"model", ".model.export.abc123"}) {
    fs::create_directories(dir / name);
    for (const auto& f :
         fs::directory_iterator(testing::reference_dir() + "/seed_mymodule")) {
      fs::copy_file(f.path(), dir / name / f.path().filename());
    }
  }
  const fs::path graph = dir / "model" / "graph.fx.json";
  const std::string before = testing::read_file(graph.string());
  Result r =
      run({"plugin-check", "plugins/libfx_passes.so", "--graphs", dir.string(),
           "--pass", "dce", "--before", "dot{path=" + graph.string() + "}"});
  EXPECT_TRUE(has(r.out, "on 1 graph under")) << r.out;
  EXPECT_TRUE(has(r.out + r.err, "would overwrite")) << r.out << r.err;
  EXPECT_FALSE(has(r.out, "dce  runs           ok")) << r.out;
  EXPECT_EQ(testing::read_file(graph.string()), before);
}

const std::string kCrashPlugin = "tests/plugin_api/plugins/libcrash_plugin.so";
const std::string kTestPasses = "tests/plugin_api/plugins/libtest_passes.so";

std::string seed(const std::string& name) {
  return testing::reference_dir() + "/" + name;
}

// The table's line of `pass` and `check`, or empty.
std::string line_of(const std::string& table, const std::string& pass,
                    const std::string& check) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string p, c;
    words >> p >> c;
    if (p == pass && c == check) return line;
  }
  return "";
}

// Issue 39 item 5: a pass that crashes only on its second run in a process,
// or only on its own output, no longer takes fx down after `runs`: the
// check that crashed is FAIL naming the signal, the table has every row.
TEST(FxPluginCheck, ACrashInAnyCheckIsThatChecksFailAndTheTableIsWhole) {
  Result r =
      run({"plugin-check", kCrashPlugin, "--graphs", seed("seed_mymodule"),
           "--pass", "second_run_segfault", "--pass", "segfault_on_own_mark"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  const std::string killed =
      "FAIL  seed_mymodule: the worker process was killed by SIGSEGV";
  EXPECT_TRUE(
      has(line_of(r.out, "second_run_segfault", "deterministic"), killed))
      << r.out;
  EXPECT_TRUE(has(line_of(r.out, "segfault_on_own_mark", "idempotent"), killed))
      << r.out;
  for (const char* pass : {"second_run_segfault", "segfault_on_own_mark"}) {
    for (const char* check : {"runs", "lint", "numbers", "deterministic",
                              "idempotent", "rollback", "contract"}) {
      EXPECT_FALSE(line_of(r.out, pass, check).empty())
          << pass << " " << check << "\n"
          << r.out;
    }
    EXPECT_TRUE(has(line_of(r.out, pass, "rollback"), " ok")) << r.out;
  }
  EXPECT_TRUE(line_of(r.out, "segfault", "runs").empty())
      << "only the passes asked for\n"
      << r.out;
  EXPECT_TRUE(has(r.err, "some checks failed")) << r.err;
}

// read_meta requires tensor_meta: shape_prop runs first where the bundle
// has input.pt; where it has none the row is skipped, saying so.
TEST(FxPluginCheck, APassRequiringTensorMetaGetsShapePropFirst) {
  Result r = run({"plugin-check", kTestPasses, "--pass", "read_meta",
                  "--graphs", seed("seed_mymodule")});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "read_meta  runs           ok")) << r.out;
  EXPECT_TRUE(has(r.out, "read_meta  numbers        ok")) << r.out;
  Result none = run({"plugin-check", kTestPasses, "--pass", "read_meta",
                     "--graphs", seed("seed_dropout_functional")});
  EXPECT_EQ(none.status, 0) << none.out << none.err;
  EXPECT_TRUE(has(line_of(none.out, "read_meta", "runs"),
                  "skip  seed_dropout_functional: it requires 'tensor_meta', "
                  "which this graph lacks, and the bundle has no input.pt"))
      << none.out;
}

// A first-party pass that reads tensor_meta (fuse_conv runs after
// shape_prop) checked after --before's pipeline; errors in --pass and
// --before are named.
TEST(FxPluginCheck, BeforeRunsAPipelineFirstAndNamesAreChecked) {
  Result r =
      run({"plugin-check", "plugins/libfx_inference.so", "--pass", "fuse_conv",
           "--before", "shape_prop", "--graphs", seed("seed_mymodule")});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "each first through 'shape_prop'")) << r.out;
  EXPECT_TRUE(has(r.out, "fuse_conv  runs           ok")) << r.out;
  Result syntax = run({"plugin-check", "plugins/libfx_inference.so", "--graphs",
                       seed("seed_mymodule"), "--before", "shape_prop{"});
  EXPECT_EQ(syntax.status, 2) << syntax.err;
  EXPECT_TRUE(has(syntax.err, "fx plugin-check: --before: ")) << syntax.err;
  Result unknown =
      run({"plugin-check", "plugins/libfx_inference.so", "--graphs",
           seed("seed_mymodule"), "--before", "no_such_pass"});
  EXPECT_EQ(unknown.status, 1) << unknown.err;
  EXPECT_TRUE(has(unknown.err, "('no_such_pass')")) << unknown.err;
  Result pass = run({"plugin-check", "plugins/libfx_inference.so", "--graphs",
                     seed("seed_mymodule"), "--pass", "fuse_nothing"});
  EXPECT_EQ(pass.status, 1) << pass.err;
  EXPECT_TRUE(has(pass.err,
                  "has no pass 'fuse_nothing' (its passes: "
                  "fold_bn, fuse_conv, "))
      << pass.err;
}

TEST(FxPluginCheck, TheReferenceDirectoryComesFromTheEnvironment) {
  setenv("FX_REFERENCE_DIR", testing::reference_dir().c_str(), 1);
  Result r = run({"plugin-check", "plugins/libfx_shape_prop.so"});
  unsetenv("FX_REFERENCE_DIR");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "under " + testing::reference_dir())) << r.out;
}

}  // namespace
}  // namespace fx
