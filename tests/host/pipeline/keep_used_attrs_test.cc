// C ABI version 17's GraphKeepUsedAttrs through the pass manager: the
// module keeps what its graph uses, in the order torch.fx's
// GraphModule(module, graph) installs it (the same listing as a GraphModule
// built from the original attributes and the pass's graph), buffer kinds
// and objects kept; a failed pass, or a target the module lacks, puts back
// every attribute in its old order; on a lent child graph it applies to the
// child. In process and from an isolated worker alike. The entry's own
// refusal outside a pass is checked without one.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>

#include "fx/plugin_api.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "host/capi/c_api.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_target.h"
#include "tests/testing/module_listing.h"

namespace fx::host {
namespace {

using ::fx::testing::attribute_listing;

// The attributes the module is built from: every one the graph below uses.
GraphModule::AttributeMap attributes() {
  auto part_graph = std::make_unique<Graph>();
  Node* x = part_graph->placeholder("x");
  part_graph->get_attr("extra");  // dead: erase=extra drops it
  part_graph->output(part_graph->call_function("operator.mul",
                                               {x, part_graph->get_attr("w")}));
  auto part = std::make_shared<GraphModule>(
      GraphModule::AttributeMap{{"w", {nullptr, torch::full({3}, 1.5), true}},
                                {"extra", {nullptr, torch::ones({3}), true}}},
      std::move(part_graph));
  GraphModule::Attribute mask{nullptr, torch::ones({3}), false,
                              BufferKind::kNonPersistent};
  auto spare_graph = std::make_unique<Graph>();
  spare_graph->output(spare_graph->placeholder("x"));
  auto spare = std::make_shared<GraphModule>(GraphModule::AttributeMap{},
                                             std::move(spare_graph));
  return {{"unused", {torch::nn::Linear(3, 3).ptr(), {}, false}},
          {"spare", {spare, {}, false}},
          {"lin", {torch::nn::Linear(3, 3).ptr(), {}, false}},
          {"block.0", {torch::nn::Linear(3, 3).ptr(), {}, false}},
          {"block.1", {torch::nn::ReLU().ptr(), {}, false}},
          {"scale", {nullptr, torch::full({3}, 2.0), true}},
          {"mask", {nullptr, mask.tensor, false, BufferKind::kNonPersistent}},
          {"part", {part, {}, false}}};
}

// x -> unused.weight (dead), spare (dead) -> lin -> block.1 (dead) ->
// block.0 -> + scale -> * mask -> part -> output.
std::unique_ptr<Graph> graph() {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  g->get_attr("unused.weight");
  g->call_module("spare", {x});  // dead: erase=spare drops it
  Node* lin = g->call_module("lin", {x});
  g->call_module("block.1", {lin});
  Node* b = g->call_module("block.0", {lin});
  Node* scaled = g->call_function("operator.add", {b, g->get_attr("scale")});
  Node* masked =
      g->call_function("operator.mul", {scaled, g->get_attr("mask")});
  g->output(g->call_module("part", {masked}));
  return g;
}

class KeepUsedAttrsTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    auto plugin = load_plugin("tests/plugin_api/plugins/libtest_passes.so");
    ASSERT_TRUE(plugin.ok()) << plugin.status();
    ASSERT_TRUE(registry_.add(*plugin).ok());
    gm_ = std::make_unique<GraphModule>(attributes_, graph());
  }

  // The pipeline `text`, each pass isolated when the test's parameter says.
  PipelineReport run(const std::string& text) {
    auto spec = parse_pipeline_text(text);
    EXPECT_TRUE(spec.ok()) << spec.status();
    spec->isolate = GetParam() ? Isolation::kAll : Isolation::kNone;
    auto pm = PassManager::create(registry_, *std::move(spec));
    EXPECT_TRUE(pm.ok()) << pm.status();
    GraphModuleTarget target(*gm_);
    return pm->run(target);
  }

  GraphModule& part() {
    return dynamic_cast<GraphModule&>(*gm_->get_submodule("part"));
  }

  PassRegistry registry_;
  GraphModule::AttributeMap attributes_ = attributes();
  std::unique_ptr<GraphModule> gm_;
};

TEST_P(KeepUsedAttrsTest, TheModuleKeepsWhatItsGraphUsesInTorchsOrder) {
  std::shared_ptr<torch::nn::Module> lin = gm_->get_submodule("lin");
  PipelineReport report =
      run("keep_used_attrs{erase=unused_weight,spare,block_1}");
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_TRUE(report.passes.at(0).changed);
  // As torch.fx's GraphModule(root, graph) builds it from the same
  // attributes: unused and block.1 gone, block a new container.
  GraphModule expected(attributes_, gm_->graph().snapshot());
  EXPECT_EQ(attribute_listing(*gm_), attribute_listing(expected));
  EXPECT_EQ(attribute_listing(*gm_),
            "module lin\nmodule block\nmodule block.0\nmodule part\n"
            "parameter scale\nparameter lin.weight\nparameter lin.bias\n"
            "parameter block.0.weight\nparameter block.0.bias\n"
            "parameter part.extra\nparameter part.w\nbuffer mask\n");
  EXPECT_EQ(gm_->get_submodule("lin"), lin);  // the same object
  EXPECT_EQ(gm_->buffer_kind("mask"), BufferKind::kNonPersistent);
  EXPECT_TRUE(gm_->forward({torch::ones({3})}).isTensor());
}

TEST_P(KeepUsedAttrsTest, AFailedPassPutsEveryAttributeBackInOrder) {
  const std::string before = attribute_listing(*gm_);
  std::shared_ptr<torch::nn::Module> unused = gm_->get_submodule("unused");
  PipelineReport report =
      run("keep_used_attrs{erase=unused_weight,spare,block_1,fail=true}");
  EXPECT_NE(report.failure.find("keep_used_attrs gives up"), std::string::npos)
      << report.failure;
  EXPECT_EQ(attribute_listing(*gm_), before);
  EXPECT_EQ(gm_->get_submodule("unused"), unused);
  EXPECT_EQ(gm_->buffer_kind("mask"), BufferKind::kNonPersistent);
}

TEST_P(KeepUsedAttrsTest, ATensorSetThenTakenOutKeepsItsNewValues) {
  // unused.weight gets sevens (in place: the Linear outside sees them),
  // then the module lets `unused` go.
  std::shared_ptr<torch::nn::Module> unused = gm_->get_submodule("unused");
  PipelineReport report =
      run("keep_used_attrs{set=unused.weight,erase=unused_weight,spare}");
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(gm_->get_submodule("unused"), nullptr);
  EXPECT_TRUE(torch::equal(unused->named_parameters()["weight"],
                           torch::full({3, 3}, 7.0)));
}

TEST_P(KeepUsedAttrsTest, AChildGraphModuleAddedBeforeTheKeepSharesTheRoots) {
  std::shared_ptr<torch::nn::Module> lin = gm_->get_submodule("lin");
  PipelineReport report =
      run("keep_used_attrs{add=added,erase=unused_weight,spare,block_1}");
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_NE(attribute_listing(*gm_).find("module added\nmodule added.lin\n"),
            std::string::npos)
      << attribute_listing(*gm_);
  EXPECT_EQ(gm_->get_submodule("added.lin"), lin);  // shared, not a copy
  EXPECT_EQ(gm_->get_submodule("lin"), lin);
}

TEST_P(KeepUsedAttrsTest, ALentChildCannotBeTakenOut) {
  const std::string before = attribute_listing(*gm_);
  PipelineReport report = run("keep_used_attrs{lend=spare,erase=spare}");
  EXPECT_NE(report.failure.find("'spare' as a submodule, whose graph is "
                                "lent to this pass"),
            std::string::npos)
      << report.failure;
  EXPECT_EQ(attribute_listing(*gm_), before);
}

TEST_P(KeepUsedAttrsTest, KeepingWhatItHoldsChangesNothing) {
  ASSERT_TRUE(run("keep_used_attrs{erase=unused_weight,spare,block_1}").ok());
  const std::string before = attribute_listing(*gm_);
  std::shared_ptr<torch::nn::Module> block = gm_->get_submodule("block");
  PipelineReport report = run("keep_used_attrs");
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_FALSE(report.passes.at(0).changed);
  EXPECT_EQ(attribute_listing(*gm_), before);
  EXPECT_EQ(gm_->get_submodule("block"), block);  // its own container
}

TEST_P(KeepUsedAttrsTest, ATargetTheModuleLacksIsNamedAndNothingChanges) {
  const std::string before = attribute_listing(*gm_);
  PipelineReport report =
      run("keep_used_attrs{erase=unused_weight,missing=nope}");
  EXPECT_NE(report.failure.find("(get_attr) refers to 'nope', where the "
                                "module has no attribute"),
            std::string::npos)
      << report.failure;
  EXPECT_EQ(attribute_listing(*gm_), before);
}

TEST_P(KeepUsedAttrsTest, OnALentChildGraphItAppliesToTheChild) {
  PipelineReport report =
      run("keep_used_attrs{child=part,erase=extra,fail=true}");
  EXPECT_NE(report.failure.find("keep_used_attrs gives up"), std::string::npos)
      << report.failure;
  EXPECT_EQ(attribute_listing(part()), "parameter extra\nparameter w\n");
  std::string root = attribute_listing(*gm_);
  report = run("keep_used_attrs{child=part,erase=extra}");
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(attribute_listing(part()), "parameter w\n");
  root.erase(root.find("parameter part.extra\n"), 21);
  EXPECT_EQ(attribute_listing(*gm_), root);
}

INSTANTIATE_TEST_SUITE_P(InProcessAndIsolated, KeepUsedAttrsTest,
                         ::testing::Values(false, true), [](const auto& info) {
                           return info.param ? "Isolated" : "InProcess";
                         });

TEST(GraphKeepUsedAttrs, NeedsAPassRunningOnTheGraph) {
  GraphModule gm(attributes(), graph());
  const std::string before = attribute_listing(gm);
  FxStatus* s = api()->GraphKeepUsedAttrs(to_handle(&gm.graph()));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(api()->GetStatusCode(s), FX_FAILED_PRECONDITION);
  EXPECT_NE(
      std::string(api()->GetStatusMessage(s)).find("neither a pass's graph"),
      std::string::npos);
  api()->ReleaseStatus(s);
  EXPECT_EQ(attribute_listing(gm), before);
}

}  // namespace
}  // namespace fx::host
