// ListCodeGen against Python torch.fx with the docs' ListCodeGen on the same
// function (golden.py): gm.code byte for byte, and gm([a, b]) computes what
// torch.fx's module computes. Graph copies keep the code generator.
#include "sdk_examples/list_codegen/list_codegen.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "fx_core/io/torch_save.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/error.h"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// f(a, b) = relu(a) + b * 2, as torch.fx traces it.
std::unique_ptr<fx::Graph> traced_f() {
  auto g = std::make_unique<fx::Graph>();
  fx::Node* a = g->placeholder("a");
  fx::Node* b = g->placeholder("b");
  fx::Node* relu = g->call_function("torch.relu", {a});
  fx::Node* mul = g->call_function("operator.mul", {b, int64_t{2}});
  g->output(g->call_function("operator.add", {relu, mul}));
  return g;
}

TEST(ListCodeGen, GeneratesAndRunsWhatTorchFxsListCodeGenDoes) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3-torch is not installed at /usr/bin/python3";
  }
  std::string golden = std::string(std::getenv("TEST_TMPDIR")) + "/golden";
  std::string script = std::string(std::getenv("TEST_SRCDIR")) +
                       "/fx_sdk/sdk_examples/list_codegen/golden.py";
  ASSERT_EQ(std::system(("/usr/bin/python3 " + script + " " + golden).c_str()),
            0);

  std::unique_ptr<fx::Graph> graph = traced_f();
  graph->set_codegen(std::make_unique<sdk_examples::ListCodeGen>());
  fx::GraphModule gm(fx::GraphModule::AttributeMap{}, std::move(graph));
  EXPECT_EQ(gm.code(), read_file(golden + "/code.py"));

  auto inputs = fx::read_value_file(golden + "/input.pt");
  auto want = fx::read_value_file(golden + "/output.pt");
  ASSERT_TRUE(inputs.ok() && want.ok());
  // One list argument: the module's forward(args_list).
  at::Tensor got = gm.forward({*inputs}).toTensor();
  EXPECT_TRUE(at::allclose(got, want->toTensor()));

  // Inputs one by one are refused: forward takes one list.
  EXPECT_THROW(gm.forward(inputs->toListRef().vec()), fx::FxError);
  auto copy = gm.graph().deepcopy();
  EXPECT_NE(dynamic_cast<sdk_examples::ListCodeGen*>(&copy->codegen()),
            nullptr);
}

}  // namespace
