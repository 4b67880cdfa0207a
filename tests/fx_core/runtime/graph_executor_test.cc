// GraphExecutor: a GraphModule runs its graph through the executor the
// process installed (graph_executor.h). This test links the runtime without
// the compiler layer (no //fx_core/compile:execution_plan), so it sees what a
// program missing it sees, and installs executors of its own as a vendor
// might.
#include "fx_core/runtime/graph_executor.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/error.h"
#include "tests/testing/my_module.h"

namespace fx {
namespace {

using testing::my_module_graph;
using testing::MyModule;

// Returns its first input doubled, and counts the graphs it compiled.
class DoublingExecutor : public GraphExecutor {
 public:
  c10::IValue run(std::vector<c10::IValue> inputs) const override {
    return inputs.at(0).toTensor() * 2;
  }
};

int compiled_graphs = 0;

std::unique_ptr<GraphExecutor> compile_doubling(const Graph& graph,
                                                torch::nn::Module& root,
                                                const ForeignTargets*) {
  EXPECT_EQ(graph.find_nodes(Opcode::kCallModule, "linear").size(), 1u);
  EXPECT_EQ(root.named_children().size(), 1u);  // linear
  ++compiled_graphs;
  return std::make_unique<DoublingExecutor>();
}

std::unique_ptr<GraphExecutor> compile_refusing(const Graph&,
                                                torch::nn::Module&,
                                                const ForeignTargets*) {
  throw FxError("refusing: this executor runs no graph");
}

// Without an executor a GraphModule is still built, printed and saved; it
// cannot run, and says which dependency is missing.
TEST(GraphExecutor, NoneInstalledNamesTheMissingDependency) {
  MyModule root;
  GraphModule gm(root, my_module_graph());
  EXPECT_NE(gm.code().find("def forward(self, x):"), std::string::npos);
  absl::Status status = gm.check_executable();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("//fx_core/compile:execution_plan"),
            std::string::npos)
      << status.message();
  try {
    gm.forward({at::ones({2, 4})});
    FAIL() << "forward ran with no executor";
  } catch (const FxError& e) {
    EXPECT_NE(std::string(e.what()).find("no graph executor"),
              std::string::npos)
        << e.what();
  }
}

// An installed executor compiles every GraphModule from then on, once per
// recompile(), when the module is first run or checked (a module recompiled
// and never run compiles nothing); its errors are the module's
// check_executable() / forward() errors.
TEST(GraphExecutor, InstalledExecutorRunsAndItsErrorsAreReported) {
  set_graph_executor_factory(&compile_doubling);
  MyModule root;
  GraphModule gm(root, my_module_graph());
  const int before = compiled_graphs;
  gm.recompile();
  EXPECT_EQ(compiled_graphs, before);
  EXPECT_TRUE(gm.check_executable().ok());
  EXPECT_EQ(compiled_graphs, before + 1);
  at::Tensor x = at::arange(3.0);
  EXPECT_TRUE(at::equal(gm.forward({x}).toTensor(), x * 2));
  EXPECT_TRUE(at::equal(gm.forward({x}).toTensor(), x * 2));
  EXPECT_EQ(compiled_graphs, before + 1);

  set_graph_executor_factory(&compile_refusing);
  gm.recompile();
  absl::Status status = gm.check_executable();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("refusing"), std::string::npos);
  EXPECT_THROW(gm.forward({x}), FxError);
  set_graph_executor_factory(nullptr);
}

}  // namespace
}  // namespace fx
