// The C++ twins of the torch.fx docs' examples (sdk_examples/tracing) trace
// to exactly torch.fx's graph text and code for their Python twins
// (../shared/reference/NAME), and the traced GraphModules compute what the
// eager modules and torch.fx's modules compute on the same weights.
#include "sdk_examples/tracing/seed_examples.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/tracer/tracer.h"
#include "sdk_examples/tracing/examples.h"
#include "tests/fx_core/tracer/tracer_testing.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

namespace fs = std::filesystem;

class SeedExample : public ::testing::TestWithParam<std::string> {
 protected:
  std::string ref(const std::string& file) const {
    return testing::reference_dir() + "/" + GetParam() + "/" + file;
  }
};

TEST_P(SeedExample, TracedGraphTextEqualsTorchFx) {
  ASSERT_FALSE(testing::reference_dir().empty());
  auto gm = examples::trace_example(GetParam());
  EXPECT_EQ(gm->graph().str() + "\n", testing::read_file(ref("graph.txt")));
}

TEST_P(SeedExample, TracedCodeEqualsTorchFx) {
  auto gm = examples::trace_example(GetParam());
  EXPECT_EQ(gm->code(), testing::read_file(ref("code.py")));
}

TEST_P(SeedExample, TracedModuleComputesTorchFxOutputOnItsWeights) {
  if (!fs::exists(ref("expected.pt"))) {
    GTEST_SKIP() << "no expected.pt for " << GetParam();
  }
  auto module = examples::make_example(GetParam());
  if (fs::exists(ref("model.weights.pt"))) {
    testing::load_weights(*module, ref("model.weights.pt"));
  }
  // The references were made with dropout modules in eval mode.
  if (GetParam() == "seed_dropout") module->eval();
  auto gm = symbolic_trace(*module);
  auto inputs = read_value_file(ref("input.pt"));
  auto expected = read_value_file(ref("expected.pt"));
  ASSERT_TRUE(inputs.ok()) << inputs.status().message();
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  std::vector<c10::IValue> args = inputs->toListRef().vec();
  c10::IValue out = gm->forward(args);
  testing::expect_same(out, *expected);
  std::vector<Value> values(args.begin(), args.end());
  c10::IValue eager = module->call_forward(values).to_ivalue();
  testing::expect_same(eager, *expected);
}

INSTANTIATE_TEST_SUITE_P(Reference, SeedExample,
                         ::testing::Values("seed_mymodule", "seed_topk",
                                           "seed_static_flow", "seed_leaf",
                                           "seed_dropout",
                                           "seed_dropout_functional",
                                           "seed_wrap"),
                         [](const auto& info) { return info.param; });

// The docs' dropout gotcha: F.dropout(x, training=self.training) is traced
// with the value `training` had (True), so the GraphModule keeps dropping
// in eval mode; a Dropout module is a leaf and follows eval().
TEST(DropoutGotcha, FunctionalDropoutTracedInTrainingKeepsDroppingAfterEval) {
  examples::DropoutFunctionalModule m;
  m.train();
  auto gm = symbolic_trace(m);
  gm->eval();
  at::manual_seed(0);
  at::Tensor x = at::ones({1000});
  at::Tensor y = gm->forward({x}).toTensor();
  EXPECT_GT((y == 0).sum().item<int64_t>(), 0);
  m.eval();
  EXPECT_TRUE(at::equal(m.forward(x).tensor(), x));
}

TEST(DropoutGotcha, DropoutModuleFollowsEval) {
  examples::DropoutModule m;
  m.train();
  auto gm = symbolic_trace(m);
  at::Tensor x = at::ones({1000});
  EXPECT_GT((gm->forward({x}).toTensor() == 0).sum().item<int64_t>(), 0);
  m.eval();  // the GraphModule shares the dropout module
  EXPECT_TRUE(at::equal(gm->forward({x}).toTensor(), x));
}

TEST(StaticControlFlow, EachSettingTracesItsOwnGraph) {
  examples::StaticFlowModule without(/*do_activation=*/false);
  auto gm = symbolic_trace(without);
  EXPECT_EQ(gm->graph().find_nodes(Opcode::kCallFunction, "torch.relu").size(),
            0u);
  examples::StaticFlowModule with(/*do_activation=*/true);
  EXPECT_EQ(symbolic_trace(with)
                ->graph()
                .find_nodes(Opcode::kCallFunction, "torch.relu")
                .size(),
            1u);
}

TEST(Demo, TraceSeedMyModuleMatchesEager) {
  examples::TracedMyModule t = examples::trace_seed_mymodule();
  at::Tensor x = at::rand({3, 4});
  EXPECT_TRUE(at::equal(t.graph_module->forward({x}).toTensor(),
                        t.module->call_forward({Value(x)}).tensor()));
}

}  // namespace
}  // namespace fx
