// Leaf-module rules registered by a plugin at load time decide what the
// PluginTracer records as call_module.
#include "host/loader/plugin_tracer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>

#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/tracer/extensions.h"
#include "fx_core/tracer/proxy.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_registry.h"

namespace fx::host {
namespace {

// A vendor block (Python type name test_vendor.Block): -x.
struct Block : fx::Module<Block> {
  Value forward(Value x) { return -x; }
};

struct Model : fx::Module<Model> {
  Model() { block = register_module("block", std::make_shared<Block>()); }
  Value forward(Value x) { return block(x).relu(); }
  Submodule<std::shared_ptr<Block>> block;
};

void register_block_kind() {
  ModuleKind kind;
  kind.type = "test_vendor.Block";
  kind.cpp_type = typeid(Block);
  kind.forward_schema = OpSchema::parse("input");
  kind.forward = [](torch::nn::Module& m, OpArgs& args) -> c10::IValue {
    return static_cast<Block&>(m).forward(Value(args.tensor(0))).tensor();
  };
  ModuleRegistry::global().add(std::move(kind));
}

std::vector<std::string> ops(const Graph& g) {
  std::vector<std::string> out;
  for (const Node* n : g.nodes()) {
    out.push_back(std::string(opcode_name(n->op())) + ":" + n->target());
  }
  return out;
}

TEST(PluginTracer, APluginsLeafRuleMakesAModuleALeaf) {
  register_block_kind();
  Model model;
  // Without the plugin's rule, the block is traced through.
  PluginTracer before;
  EXPECT_EQ(
      ops(symbolic_trace(model, {}, &before)->graph()),
      (std::vector<std::string>{"placeholder:x", "call_function:operator.neg",
                                "call_method:relu", "output:output"}));

  PassRegistry registry;
  auto plugin = load_plugin("tests/plugin_api/plugins/libtest_passes.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  ASSERT_TRUE(registry.add(*plugin).ok());  // registers the rule

  register_plugin_tracer_policy();
  std::unique_ptr<Tracer> tracer = make_tracer("plugins");
  std::shared_ptr<GraphModule> gm = symbolic_trace(model, {}, tracer.get());
  EXPECT_EQ(ops(gm->graph()),
            (std::vector<std::string>{"placeholder:x", "call_module:block",
                                      "call_method:relu", "output:output"}));
  at::Tensor x = at::randn({2, 3});
  EXPECT_TRUE(at::equal(gm->forward({x}).toTensor(), at::relu(-x)));
}

}  // namespace
}  // namespace fx::host
