// replace_pattern through the C ABI: patterns and replacements written with
// the proxy API in a plugin, run by the pass manager on the graphs torch.fx
// traced; the code after each rewrite must equal torch.fx's for the same
// rewrite (tests/fx_core/rewrite/rewrite_cases.py, run here with Python
// torch.fx).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "fx_core/format/graph_json.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/node.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_manager.h"

namespace fx::host {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class RewriteThroughCAbi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") !=
        0) {
      skip_ = "python3-torch is not installed";
      return;
    }
    const char* tmp = std::getenv("TEST_TMPDIR");
    cases_ = std::string(tmp ? tmp : "/tmp") + "/rewrite_cases";
    std::string command =
        "PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "
        "tests/fx_core/rewrite/rewrite_cases.py tools/torchfx_export.py " +
        cases_;
    if (std::system(command.c_str()) != 0) skip_ = "rewrite_cases.py failed";
  }

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    auto plugin = load_plugin("tests/plugin_api/plugins/librewrite_passes.so");
    ASSERT_TRUE(plugin.ok()) << plugin.status();
    ASSERT_TRUE(registry_.add(*plugin).ok());
  }

  // Runs `pass` on the case's original graph; returns gm.code.
  std::string rewrite(const std::string& name, const std::string& pass) {
    auto file = read_graph_file(cases_ + "/" + name + "/original.fx.json");
    EXPECT_TRUE(file.ok()) << file.status();
    if (!file.ok()) return "";
    auto pm = PassManager::create(registry_, *parse_pipeline_text(pass));
    EXPECT_TRUE(pm.ok()) << pm.status();
    GraphFileTarget target(*file);
    PipelineReport report = pm->run(target);
    EXPECT_TRUE(report.ok()) << report.failure;
    return file->graph->python_code("self").src;
  }

  std::string torch_fx_code(const std::string& name) {
    return read(cases_ + "/" + name + "/code.py");
  }

  static std::string skip_;
  static std::string cases_;
  PassRegistry registry_;
};

std::string RewriteThroughCAbi::skip_;
std::string RewriteThroughCAbi::cases_;

TEST_F(RewriteThroughCAbi, DocsBasicUsageEqualsTorchFx) {
  EXPECT_EQ(rewrite("docs_basic_usage", "cat_sum_to_stack"),
            torch_fx_code("docs_basic_usage"));
}

TEST_F(RewriteThroughCAbi, OverlappingMatchesEqualTorchFx) {
  EXPECT_EQ(rewrite("overlapping_matches", "sigmoid_pairs_to_exp"),
            torch_fx_code("overlapping_matches"));
}

TEST_F(RewriteThroughCAbi, OneLinerPatternEqualsTorchFx) {
  EXPECT_EQ(rewrite("oneliner_pattern", "neg_to_relu"),
            torch_fx_code("oneliner_pattern"));
}

TEST_F(RewriteThroughCAbi, LiteralsAsWildcards) {
  GraphFile file;
  file.graph = std::make_unique<Graph>();
  Node* x = file.graph->placeholder("x");
  Node* a = file.graph->call_function("operator.add", {x, 3});
  Node* b = file.graph->call_function("operator.add", {a, 5});
  file.graph->output(b);
  auto pm = PassManager::create(registry_,
                                *parse_pipeline_text("add_literal_to_double"));
  ASSERT_TRUE(pm.ok());
  GraphFileTarget target(file);
  ASSERT_TRUE(pm->run(target).ok());
  EXPECT_EQ(
      file.graph->find_nodes(Opcode::kCallFunction, "operator.add").size(), 0u);
  EXPECT_EQ(
      file.graph->find_nodes(Opcode::kCallFunction, "operator.mul").size(), 2u);
}

}  // namespace
}  // namespace fx::host
