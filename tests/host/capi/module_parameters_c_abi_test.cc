// GraphModuleParameters (C ABI version 11): a submodule's parameters as
// torch's named_parameters() lists them, recursively and in registration
// order, a shared tensor once, named from the graph's module; "" is the
// module itself; an unknown submodule is FX_NOT_FOUND naming it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "host/capi/c_api.h"

namespace fx::host {
namespace {

std::vector<std::string> names(const std::vector<fxp::ModuleParameter>& ps) {
  std::vector<std::string> out;
  for (const fxp::ModuleParameter& p : ps) out.push_back(p.name);
  return out;
}

class ModuleParametersCAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    auto graph = std::make_unique<Graph>();
    Node* x = graph->placeholder("x");
    Node* y = graph->call_module("block", {x});
    graph->output(
        graph->call_function("operator.mul", {y, graph->get_attr("scale")}));
    auto block = std::make_shared<torch::nn::SequentialImpl>(
        torch::nn::Linear(4, 3), torch::nn::ReLU(), torch::nn::Linear(3, 2));
    // The last layer's weight is also registered under a second name.
    block->register_parameter("tied",
                              block->ptr(2)->named_parameters()["weight"]);
    gm_ = std::make_unique<GraphModule>(
        GraphModule::AttributeMap{{"block", {block, {}, false}},
                                  {"scale", {nullptr, torch::ones({1}), true}}},
        std::move(graph));
    fxp::api() = api();
  }
  void TearDown() override { fxp::api() = api(); }

  std::unique_ptr<GraphModule> gm_;
};

TEST_F(ModuleParametersCAbi, ListsTheParametersAsTorchDoes) {
  fxp::Graph g(to_handle(&gm_->graph()));
  EXPECT_EQ(names(fxp::module_parameters(g, "block")),
            (std::vector<std::string>{"block.tied", "block.0.weight",
                                      "block.0.bias", "block.2.bias"}));
  EXPECT_EQ(names(fxp::module_parameters(g, "block.0")),
            (std::vector<std::string>{"block.0.weight", "block.0.bias"}));
  EXPECT_TRUE(fxp::module_parameters(g, "block.1").empty());
  // Shapes come with the names: block.0 is Linear(4, 3).
  std::vector<fxp::ModuleParameter> first =
      fxp::module_parameters(g, "block.0");
  EXPECT_EQ(first.at(0).shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(first.at(1).shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(names(fxp::module_parameters(g, "")),
            (std::vector<std::string>{"scale", "block.tied", "block.0.weight",
                                      "block.0.bias", "block.2.bias"}));
}

TEST_F(ModuleParametersCAbi, AnUnknownSubmoduleIsNotFound) {
  FxArg* out = nullptr;
  StatusText s = take_status(
      api()->GraphModuleParameters(to_handle(&gm_->graph()), "nope", &out));
  EXPECT_EQ(s.code, FX_NOT_FOUND);
  EXPECT_EQ(s.message,
            "GraphModuleParameters: the module has no submodule 'nope'");
  EXPECT_EQ(api(10)->GraphModuleParameters, nullptr);
}

}  // namespace
}  // namespace fx::host
