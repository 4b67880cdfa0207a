// The net minimizer (host/minimizer/minimizer.h) on resnet18, exported
// from torchvision with Python torch.fx at test time, against a backend with
// a planted fault: tests/plugin_api/plugins/planted_fault_plugin.c turns the
// named nodes into sigmoids (planted_fault) or refuses them
// (planted_failure). The minimizer must name exactly the planted nodes.
#include "host/minimizer/minimizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fx_core/runtime/graph_module.h"
#include "host/loader/plugin_loader.h"
#include "host/minimizer/pipeline_backend.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pipeline.h"
#include "tests/plugins/plugin_test_util.h"

namespace fx::host {
namespace {

using Names = std::vector<std::string>;

class MinimizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string skip = plugins_test::python_skip_reason();
    if (!skip.empty()) GTEST_SKIP() << skip;
    auto plugin =
        load_plugin("tests/plugin_api/plugins/libplanted_fault_plugin.so");
    ASSERT_TRUE(plugin.ok()) << plugin.status();
    ASSERT_TRUE(registry_.add(*plugin).ok());
    bundle_ =
        plugins_test::load_bundle(plugins_test::export_torchvision("resnet18"));
    for (const at::Tensor& t : bundle_.inputs) inputs_.emplace_back(t);
  }

  // Minimizes resnet18 against the pipeline `text`.
  MinimizerResult minimize_with(const std::string& text,
                                const MinimizerOptions& options) {
    auto spec = parse_pipeline_text(text);
    EXPECT_TRUE(spec.ok()) << spec.status();
    auto pm = PassManager::create(registry_, *std::move(spec));
    EXPECT_TRUE(pm.ok()) << pm.status();
    if (!pm.ok()) return {};
    auto result =
        minimize(*bundle_.gm, inputs_, pipeline_backend(*pm), options);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *std::move(result) : MinimizerResult{};
  }

  PassRegistry registry_;
  plugins_test::Bundle bundle_;
  std::vector<c10::IValue> inputs_;
};

MinimizerOptions mode(MinimizeMode m, bool find_all = false) {
  MinimizerOptions options;
  options.mode = m;
  options.find_all = find_all;
  return options;
}

TEST_F(MinimizerTest, BisectFindsThePlantedNode) {
  MinimizerResult r = minimize_with("planted_fault{nodes=layer3_0_relu_1}",
                                    mode(MinimizeMode::kBisect));
  EXPECT_EQ(r.culprits, Names{"layer3_0_relu_1"});
  // A binary search: far fewer checks than nodes.
  EXPECT_LE(r.steps.size(), 20u);
  EXPECT_EQ(r.steps.front().outcome, MinimizerStep::Outcome::kMismatch);
  EXPECT_GT(r.steps.front().nodes.size(), 60u);  // the whole graph first
}

TEST_F(MinimizerTest, SequentialFindsThePlantedNode) {
  MinimizerResult r = minimize_with("planted_fault{nodes=layer2_1_relu}",
                                    mode(MinimizeMode::kSequential));
  EXPECT_EQ(r.culprits, Names{"layer2_1_relu"});
  // Every node before it was checked alone and matched.
  ASSERT_FALSE(r.steps.empty());
  for (size_t i = 0; i + 1 < r.steps.size(); ++i) {
    EXPECT_EQ(r.steps[i].nodes.size(), 1u);
    EXPECT_EQ(r.steps[i].outcome, MinimizerStep::Outcome::kMatch)
        << describe(r.steps[i]);
  }
  EXPECT_EQ(r.steps.back().outcome, MinimizerStep::Outcome::kMismatch);
}

TEST_F(MinimizerTest, FindAllNamesEveryPlantedNode) {
  const std::string pipeline = "planted_fault{nodes=layer1_0_relu,add_6}";
  for (MinimizeMode m : {MinimizeMode::kBisect, MinimizeMode::kSequential}) {
    MinimizerResult r = minimize_with(pipeline, mode(m, /*find_all=*/true));
    EXPECT_EQ(r.culprits, (Names{"layer1_0_relu", "add_6"}));
    r = minimize_with(pipeline, mode(m));
    EXPECT_EQ(r.culprits, Names{"layer1_0_relu"});
  }
}

TEST_F(MinimizerTest, ABackendThatFailsIsACulprit) {
  MinimizerResult r = minimize_with("planted_failure{nodes=layer4_0_conv2}",
                                    mode(MinimizeMode::kBisect));
  EXPECT_EQ(r.culprits, Names{"layer4_0_conv2"});
  EXPECT_EQ(r.steps.back().outcome, MinimizerStep::Outcome::kBackendError);
  EXPECT_NE(r.steps.back().detail.find("refuses the node"), std::string::npos)
      << r.steps.back().detail;
}

TEST_F(MinimizerTest, ACorrectBackendHasNoCulprit) {
  MinimizerResult r = minimize_with("planted_fault{nodes=no_such_node}",
                                    mode(MinimizeMode::kBisect));
  EXPECT_TRUE(r.culprits.empty());
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].outcome, MinimizerStep::Outcome::kMatch);
  EXPECT_EQ(r.steps[0].max_abs_diff, 0.0);
}

TEST_F(MinimizerTest, ToleranceDecides) {
  // A backend adding 1e-3 to every output: a mismatch at atol 1e-4, not at
  // atol 1e-2.
  BackendRun off_by =
      [](GraphModule& sub,
         const std::vector<c10::IValue>& in) -> absl::StatusOr<c10::IValue> {
    c10::IValue out = sub.forward(in);
    if (out.isTensor()) return c10::IValue(out.toTensor() + 1e-3);
    return out;
  };
  MinimizerOptions strict = mode(MinimizeMode::kBisect);
  auto r = minimize(*bundle_.gm, inputs_, off_by, strict);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->culprits.size(), 1u);
  MinimizerOptions loose = strict;
  loose.atol = 1e-2;
  r = minimize(*bundle_.gm, inputs_, off_by, loose);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->culprits.empty());
}

TEST_F(MinimizerTest, WrongInputCountIsAnError) {
  BackendRun host = [](GraphModule& sub, const std::vector<c10::IValue>& in)
      -> absl::StatusOr<c10::IValue> { return sub.forward(in); };
  auto r = minimize(*bundle_.gm, {}, host);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("1 placeholders but 0 inputs"),
            std::string::npos)
      << r.status();
}

TEST(MinimizeMode, ParsesItsWords) {
  EXPECT_EQ(*parse_minimize_mode("bisect"), MinimizeMode::kBisect);
  EXPECT_EQ(*parse_minimize_mode("sequential"), MinimizeMode::kSequential);
  auto bad = parse_minimize_mode("binary");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "expected \"bisect\" or \"sequential\", got \"binary\"");
}

}  // namespace
}  // namespace fx::host
