// decompose through the pass manager: every rule in its call_function,
// call_method and call_module forms, on models traced by torch.fx (golden
// numbers: torch's eager output), the reference graphs, resnet18 and
// mobilenet_v3_small; the decomposed module computes the same values.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "tests/plugins/plugin_test_util.h"
#include "tests/testing/reference.h"

namespace fx::plugins_test {
namespace {

std::string export_model(const std::string& cls, const std::string& shape) {
  std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/models/" + cls;
  if (std::filesystem::exists(dir + "/graph.fx.json")) return dir;
  std::string log;
  if (run_command("/usr/bin/python3 " + runfile("tools/torchfx_export.py") +
                      " --module " + runfile("tests/plugins/golden_models.py") +
                      ":" + cls + " --input-shape " + shape + " -o " + dir,
                  &log) != 0) {
    throw std::runtime_error("export failed:\n" + log);
  }
  return dir;
}

// The targets (module types for call_module) the rules rewrite.
const std::set<std::string>& decomposed_targets() {
  static const std::set<std::string> kTargets = {
      "torch.relu",
      "torch.nn.functional.relu",
      "relu",
      "torch.nn.functional.gelu",
      "torch._C._nn.gelu",
      "torch.nn.functional.silu",
      "torch.nn.functional.hardswish",
      "torch.nn.functional.hardsigmoid",
      "torch.nn.functional.linear",
      "torch._C._nn.linear",
      "torch.nn.functional.batch_norm",
      "torch.nn.functional.layer_norm",
      "torch.softmax",
      "torch.nn.functional.softmax",
      "softmax",
      "torch.addmm",
      "torch.nn.ReLU",
      "torch.nn.GELU",
      "torch.nn.SiLU",
      "torch.nn.Hardswish",
      "torch.nn.Hardsigmoid",
      "torch.nn.Linear",
      "torch.nn.BatchNorm1d",
      "torch.nn.BatchNorm2d",
      "torch.nn.LayerNorm",
      "torch.nn.Softmax"};
  return kTargets;
}

// Nodes still calling an op some rule covers.
std::vector<std::string> left_over(const GraphModule& gm) {
  std::vector<std::string> out;
  for (const Node* n : gm.graph().nodes()) {
    std::string t = n->target();
    if (n->op() == Opcode::kCallModule) {
      auto m = gm.get_submodule(t);
      t = m ? m->name() : t;
      // C++ class names: torch::nn::ReLUImpl, ...
      for (const char* kind :
           {"ReLU", "GELU", "SiLU", "Hardswish", "Hardsigmoid", "Linear",
            "BatchNorm1d", "BatchNorm2d", "LayerNorm", "Softmax"}) {
        if (t.find(std::string(kind) + "Impl") != std::string::npos) {
          out.emplace_back(n->name());
        }
      }
      continue;
    }
    if ((n->op() == Opcode::kCallFunction || n->op() == Opcode::kCallMethod) &&
        decomposed_targets().count(t)) {
      out.emplace_back(n->name());
    }
  }
  return out;
}

void expect_close(const c10::IValue& got, const c10::IValue& want, double rtol,
                  double atol) {
  std::vector<at::Tensor> g = tensors_of(got), w = tensors_of(want);
  ASSERT_EQ(g.size(), w.size());
  ASSERT_FALSE(g.empty());
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_TRUE(at::allclose(g[i], w[i], rtol, atol))
        << "output " << i << ": max abs diff "
        << (g[i] - w[i]).abs().max().item<double>();
  }
}

class DecomposeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!python_skip_reason().empty()) GTEST_SKIP() << python_skip_reason();
  }
};

TEST_F(DecomposeTest, FunctionalAndMethodFormsComputeTorchsValues) {
  Bundle b = load_bundle(export_model("Functional", "2,8"));
  size_t before = b.gm->graph().size();
  host::PipelineReport report = run_pipeline(*b.gm, "decompose{rules=all}");
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_GT(b.gm->graph().size(), before);
  EXPECT_EQ(left_over(*b.gm), std::vector<std::string>{})
      << b.gm->graph().str();
  expect_close(forward(*b.gm, b.inputs), b.expected, 1e-4, 1e-5);
}

TEST_F(DecomposeTest, ModuleFormsReadParametersAndConfigs) {
  Bundle b = load_bundle(export_model("Modules", "2,8"));
  host::PipelineReport report = run_pipeline(*b.gm, "decompose");
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(left_over(*b.gm), std::vector<std::string>{})
      << b.gm->graph().str();
  expect_close(forward(*b.gm, b.inputs), b.expected, 1e-4, 1e-5);
}

TEST_F(DecomposeTest, TheDocsReluRuleAlone) {
  Bundle b = load_bundle(export_model("Functional", "2,8"));
  host::PipelineReport report = run_pipeline(*b.gm, "decompose{rules=relu}");
  ASSERT_TRUE(report.ok()) << report.failure;
  size_t gt = 0, relu = 0;
  for (const Node* n : b.gm->graph().nodes()) {
    gt += n->target() == "operator.gt";
    relu += n->target() == "torch.relu" || n->target() == "relu" ||
            n->target() == "torch.nn.functional.relu";
  }
  EXPECT_EQ(gt, 3u);
  EXPECT_EQ(relu, 0u);
  expect_close(forward(*b.gm, b.inputs), b.expected, 1e-4, 1e-5);
}

TEST_F(DecomposeTest, UnknownRulesAreNamed) {
  Bundle b = load_reference("seed_mymodule");
  host::PipelineReport report =
      run_pipeline(*b.gm, "decompose{rules=relu,tanh}");
  EXPECT_NE(report.failure.find("decompose: unknown rule 'tanh'"),
            std::string::npos)
      << report.failure;
}

class DecomposeModelTest : public DecomposeTest,
                           public ::testing::WithParamInterface<std::string> {};

TEST_P(DecomposeModelTest, ComputesTheSameValues) {
  const std::string& name = GetParam();
  Bundle b = name.rfind("seed_", 0) == 0
                 ? load_reference(name)
                 : load_bundle(export_torchvision(name));
  if (b.inputs.empty() || b.expected.isNone()) GTEST_SKIP() << "no input.pt";
  // shape_prop first: the functional batch_norm rule reads the input rank.
  host::PipelineReport report =
      run_pipeline(*b.gm, "shape_prop,decompose{rules=all}", b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(left_over(*b.gm), std::vector<std::string>{});
  expect_close(forward(*b.gm, b.inputs), b.expected, 1e-3, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(ReferenceAndTorchvision, DecomposeModelTest,
                         ::testing::Values("seed_leaf", "seed_mymodule",
                                           "seed_static_flow", "seed_topk",
                                           "seed_wrap", "resnet18",
                                           "mobilenet_v2",
                                           "mobilenet_v3_small"));

}  // namespace
}  // namespace fx::plugins_test
