// The command line: `fx run GRAPH --pipeline shape_prop --plugin-dir
// plugins -o OUT` on the reference graph files (with their example inputs),
// then dce and dot; the written graph files carry tensor_meta.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/plugins/plugin_test_util.h"
#include "tests/testing/reference.h"

namespace fx::plugins_test {
namespace {

class FxRun : public ::testing::TestWithParam<std::string> {};

TEST_P(FxRun, ShapePropDceAndDotOnAReferenceGraph) {
  std::string dir = testing::reference_dir() + "/" + GetParam();
  if (!std::filesystem::exists(dir + "/input.pt")) {
    GTEST_SKIP() << "no input.pt";
  }
  std::string out = std::string(std::getenv("TEST_TMPDIR")) + "/" + GetParam();
  std::string log;
  int status = run_command(
      "tools/fx run " + dir + "/graph.fx.json --pipeline shape_prop,dce," +
          "dot{path=" + out + ".dot} --plugin-dir plugins " +
          "--no-default-plugins --inputs " + dir + "/input.pt -o " + out +
          ".fx.json --time",
      &log);
  ASSERT_EQ(status, 0) << log;
  EXPECT_NE(log.find("shape_prop"), std::string::npos) << log;
  std::string graph = testing::read_file(out + ".fx.json");
  EXPECT_NE(graph.find("tensor_meta"), std::string::npos);
  EXPECT_EQ(testing::read_file(out + ".dot").rfind("digraph", 0), 0u);
}

INSTANTIATE_TEST_SUITE_P(ReferenceGraphs, FxRun,
                         // seed_dropout and seed_wrap have no weights: fx run
                         // then holds a bare graph file, which cannot run.
                         ::testing::Values("seed_leaf", "seed_mymodule",
                                           "seed_static_flow", "seed_topk"));

}  // namespace
}  // namespace fx::plugins_test
