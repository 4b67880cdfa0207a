// C ABI version 16's GraphSubmoduleGraph through the pass manager: a pass
// changes the graph of an existing child GraphModule (a split's component)
// and those changes are the pass's, in process and from an isolated
// worker alike: committed with it, rolled back with it when it fails or
// leaves the child's graph invalid (the failure names the child, with
// verification off too), and attributes set through the child's graph are
// the owner's, rolled back too; a module replacing a lent child is refused.
// The entry's own refusals are checked without a pass.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>

#include "fx/plugin_api.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "host/capi/c_api.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_target.h"

namespace fx::host {
namespace {

// x -> part (a GraphModule: relu(x) * w) -> output, and a Linear `lin`.
std::unique_ptr<GraphModule> split_module() {
  auto part_graph = std::make_unique<Graph>();
  Node* x = part_graph->placeholder("x");
  Node* relu = part_graph->call_function("torch.relu", {x});
  part_graph->output(part_graph->call_function(
      "operator.mul", {relu, part_graph->get_attr("w")}));
  auto part = std::make_shared<GraphModule>(
      GraphModule::AttributeMap{{"w", {nullptr, torch::full({3}, 1.5), true}}},
      std::move(part_graph));
  auto graph = std::make_unique<Graph>();
  Node* in = graph->placeholder("x");
  graph->output(graph->call_module("lin", {graph->call_module("part", {in})}));
  return std::make_unique<GraphModule>(
      GraphModule::AttributeMap{
          {"part", {part, {}, false}},
          {"lin", {torch::nn::Linear(3, 3).ptr(), {}, false}}},
      std::move(graph));
}

GraphModule& part_of(GraphModule& gm) {
  return dynamic_cast<GraphModule&>(*gm.get_submodule("part"));
}

class LentChildGraphsTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    auto plugin = load_plugin("tests/plugin_api/plugins/libtest_passes.so");
    ASSERT_TRUE(plugin.ok()) << plugin.status();
    ASSERT_TRUE(registry_.add(*plugin).ok());
    gm_ = split_module();
  }

  // The pipeline `text`, each pass isolated when the test's parameter says.
  PipelineReport run(const std::string& text, bool verify_each = true) {
    auto spec = parse_pipeline_text(text);
    EXPECT_TRUE(spec.ok()) << spec.status();
    spec->isolate = GetParam() ? Isolation::kAll : Isolation::kNone;
    spec->verify_each = verify_each;
    auto pm = PassManager::create(registry_, *std::move(spec));
    EXPECT_TRUE(pm.ok()) << pm.status();
    GraphModuleTarget target(*gm_);
    return pm->run(target);
  }

  std::string part_json() { return to_graph_json(part_of(*gm_).graph()); }
  torch::Tensor w() { return part_of(*gm_).get_attr("w"); }

  PassRegistry registry_;
  std::unique_ptr<GraphModule> gm_;
};

TEST_P(LentChildGraphsTest, APassChangesAChildGraphAndItsAttributes) {
  PipelineReport report = run("edit_child_graph{child=part,scale=w}");
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_TRUE(report.passes.at(0).changed);
  for (const Node* n : part_of(*gm_).graph().nodes()) {
    const Argument* seen = n->meta_value("seen");
    ASSERT_NE(seen, nullptr) << n->name();
    EXPECT_TRUE(seen->as_bool()) << n->name();
  }
  EXPECT_TRUE(torch::equal(w(), torch::full({3}, 3.0)));
  // The child recompiled: it runs with the new weight.
  torch::Tensor out = part_of(*gm_).forward({torch::ones({3})}).toTensor();
  EXPECT_TRUE(torch::equal(out, torch::full({3}, 3.0)));
}

TEST_P(LentChildGraphsTest, AFailedPassLeavesTheChildAsItWas) {
  const std::string before = part_json();
  PipelineReport report = run("edit_child_graph{child=part,scale=w,fail=true}");
  EXPECT_NE(report.failure.find("edit_child_graph gives up"), std::string::npos)
      << report.failure;
  EXPECT_EQ(part_json(), before);
  EXPECT_TRUE(torch::equal(w(), torch::full({3}, 1.5)));
}

TEST_P(LentChildGraphsTest, AnInvalidChildGraphIsNamedAndRolledBack) {
  const std::string before = part_json();
  PipelineReport report = run("edit_child_graph{child=part,break=true}");
  EXPECT_NE(report.failure.find("child GraphModule 'part'"), std::string::npos)
      << report.failure;
  EXPECT_EQ(part_json(), before);
}

TEST_P(LentChildGraphsTest, AnInvalidChildGraphIsRefusedUnverifiedToo) {
  const std::string before = part_json();
  PipelineReport report =
      run("edit_child_graph{child=part,break=true}", /*verify_each=*/false);
  EXPECT_NE(report.failure.find("child GraphModule 'part'"), std::string::npos)
      << report.failure;
  EXPECT_EQ(part_json(), before);
}

TEST_P(LentChildGraphsTest, ALentChildCannotBeReplaced) {
  const std::string before = part_json();
  PipelineReport report = run("edit_child_graph{child=part,replace=true}");
  EXPECT_NE(report.failure.find("cannot replace 'part': the graph of 'part' "
                                "is lent to this pass"),
            std::string::npos)
      << report.failure;
  EXPECT_EQ(part_json(), before);
  EXPECT_NE(dynamic_cast<GraphModule*>(gm_->get_submodule("part").get()),
            nullptr);
}

TEST_P(LentChildGraphsTest, OnlyAGraphModuleLendsAGraph) {
  PipelineReport report = run("edit_child_graph{child=lin}");
  EXPECT_NE(report.failure.find(
                "the submodule 'lin' is a torch.nn.Linear, not a GraphModule"),
            std::string::npos)
      << report.failure;
  report = run("edit_child_graph{child=nothing}");
  EXPECT_NE(report.failure.find("the module has no submodule 'nothing'"),
            std::string::npos)
      << report.failure;
}

INSTANTIATE_TEST_SUITE_P(InProcessAndIsolated, LentChildGraphsTest,
                         ::testing::Values(false, true), [](const auto& info) {
                           return info.param ? "Isolated" : "InProcess";
                         });

TEST(GraphSubmoduleGraph, NeedsAPassRunningOnTheGraph) {
  std::unique_ptr<GraphModule> gm = split_module();
  FxGraph* out = nullptr;
  FxStatus* s =
      api()->GraphSubmoduleGraph(to_handle(&gm->graph()), "part", &out);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(api()->GetStatusCode(s), FX_FAILED_PRECONDITION);
  EXPECT_NE(std::string(api()->GetStatusMessage(s)).find("no pass runs"),
            std::string::npos);
  api()->ReleaseStatus(s);
  EXPECT_EQ(out, nullptr);
}

}  // namespace
}  // namespace fx::host
