// `fx plugin-check`: the table of a plugin's passes and checks, and the exit
// status: 0 for a sound plugin, 1 for a failed check or a library that does
// not load, 2 for a usage error.
#include <gtest/gtest.h>

#include <cstdlib>
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

TEST(FxPluginCheck, TheReferenceDirectoryComesFromTheEnvironment) {
  setenv("FX_REFERENCE_DIR", testing::reference_dir().c_str(), 1);
  Result r = run({"plugin-check", "plugins/libfx_shape_prop.so"});
  unsetenv("FX_REFERENCE_DIR");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "under " + testing::reference_dir())) << r.out;
}

}  // namespace
}  // namespace fx
