// Captured graphs (sdk_examples/capture's resnet18, mobilenet_v2 and small
// transformer) through everything downstream: the fx-graph JSON bundle both
// ways, `fx exec`, a pass pipeline (dce, cse, shape_prop) through `fx run`,
// the InferencePlan, and tools/torchfx_import.py back to Python torch.fx
// (torch.ops.aten targets) when python3-torch is installed. Each result is
// compared with the eager C++ model's output.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "fx_core/capture/make_fx.h"
#include "fx_core/compile/inference_plan.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "sdk_examples/capture/examples.h"
#include "tests/fx_core/tracer/tracer_testing.h"
#include "tests/testing/python.h"
#include "tools/fx_commands.h"

namespace fx {
namespace {

class CapturedDownstream : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/" + GetParam();
    std::filesystem::create_directories(dir_);
    example_ = examples::make_capture_example(GetParam());
    gm_ = examples::capture_example(example_);
    at::NoGradGuard no_grad;
    expected_ =
        c10::IValue(c10::List<at::Tensor>(example_.fn(example_.inputs)));
    inputs_.assign(example_.inputs.begin(), example_.inputs.end());
    ASSERT_TRUE(write_graph_module(*gm_, path("graph.fx.json")).ok());
    ASSERT_TRUE(
        write_value_file(path("input.pt"),
                         c10::IValue(c10::List<at::Tensor>(example_.inputs)))
            .ok());
    ASSERT_TRUE(write_value_file(path("expected.pt"), expected_).ok());
  }

  std::string path(const std::string& file) const { return dir_ + "/" + file; }

  // `fx ARGS...`; fails the test with its stderr when it fails.
  static void fx_command(const std::vector<std::string>& args) {
    std::ostringstream out, err;
    ASSERT_EQ(tools::run_fx_command(args, out, err), 0) << err.str();
  }

  std::string dir_;
  examples::CaptureExample example_;
  std::shared_ptr<GraphModule> gm_;
  std::vector<c10::IValue> inputs_;
  c10::IValue expected_;
};

TEST_P(CapturedDownstream, JsonBundleRoundTrips) {
  auto loaded = read_graph_module(path("graph.fx.json"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ((*loaded)->graph().str(), gm_->graph().str());
  EXPECT_EQ((*loaded)->code(), gm_->code());
  at::NoGradGuard no_grad;
  testing::expect_same((*loaded)->forward(inputs_), expected_, 0, 0);
}

TEST_P(CapturedDownstream, FxExecRunsTheBundle) {
  fx_command({"exec", path("graph.fx.json"), "--inputs", path("input.pt"),
              "--outputs", path("exec_out.pt")});
  auto out = read_value_file(path("exec_out.pt"));
  ASSERT_TRUE(out.ok()) << out.status().message();
  testing::expect_same(*out, expected_, 0, 0);
}

// dce drops what the capture records unused (batch norm's statistics, the
// `empty` nodes, detach), shape_prop annotates every node, and the result
// still computes the model's output.
TEST_P(CapturedDownstream, PassPipelineWithShapeProp) {
  fx_command({"run", path("graph.fx.json"), "--inputs", path("input.pt"),
              "--pipeline", "dce,cse,shape_prop", "-o",
              path("passed.fx.json")});
  auto file = read_graph_file(path("passed.fx.json"));
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_LT(file->graph->size(), gm_->graph().size());
  for (const Node* n : file->graph->nodes()) {
    if (n->op() == Opcode::kOutput) continue;
    EXPECT_NE(n->meta_value("tensor_meta"), nullptr) << n->name();
  }
  fx_command({"exec", path("passed.fx.json"), "--inputs", path("input.pt"),
              "--outputs", path("passed_out.pt")});
  auto out = read_value_file(path("passed_out.pt"));
  ASSERT_TRUE(out.ok()) << out.status().message();
  testing::expect_same(*out, expected_, 0, 0);
}

TEST_P(CapturedDownstream, InferencePlanRunsEagerNumbers) {
  at::NoGradGuard no_grad;
  auto plan = InferencePlan::build(*gm_, inputs_);
  testing::expect_same(plan->run(inputs_), expected_, 0, 0);
  testing::expect_same(plan->run(inputs_), expected_, 0, 0);
}

TEST_P(CapturedDownstream, TorchFxImportRebuildsItInPython) {
  if (!testing::have_python_torch()) {
    GTEST_SKIP() << "python3-torch is not installed";
  }
  std::string out =
      testing::run_python("tools/torchfx_import.py", {dir_, "--print"});
  EXPECT_NE(out.find(gm_->code()), std::string::npos) << out;
  EXPECT_NE(out.find("torchfx_import: allclose"), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Examples, CapturedDownstream,
                         ::testing::Values("resnet18", "mobilenet_v2",
                                           "small_transformer"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fx
