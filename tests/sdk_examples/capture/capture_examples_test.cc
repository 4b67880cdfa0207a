// sdk_examples/capture's plain-LibTorch models against Python's make_fx of
// their twins (torchvision's resnet18 and mobilenet_v2, capture_twins.py's
// SmallTransformer), made at test time with the same weights: graph text and
// code under grad, no_grad and InferenceMode equal make_fx's, and the
// captured GraphModule computes the eager C++ model's numbers (bitwise) and
// Python's eager output (to float rounding).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "fx_core/capture/make_fx.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "sdk_examples/capture/examples.h"
#include "tests/fx_core/tracer/tracer_testing.h"
#include "tests/testing/python.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

using Tensors = std::vector<at::Tensor>;

class CaptureExample : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const bool torchvision = GetParam() != "small_transformer";
    if (!testing::have_python_torch(torchvision)) {
      GTEST_SKIP() << "python3-torch / python3-torchvision are not installed";
    }
    out_ = std::string(std::getenv("TEST_TMPDIR")) + "/twins";
    testing::run_python("sdk_examples/capture/capture_twins.py",
                        {out_, GetParam(), "--meta"});
    dir_ = out_ + "/" + GetParam();
    example_ = examples::make_capture_example(GetParam());
    testing::load_weights(*example_.module, dir_ + "/model.weights.pt");
    auto inputs = read_value_file(dir_ + "/input.pt");
    ASSERT_TRUE(inputs.ok()) << inputs.status().message();
    example_.inputs.clear();
    for (const auto& v : inputs->toListRef()) {
      example_.inputs.push_back(v.toTensor());
    }
  }

  void expect_python_text(const GraphModule& gm, const std::string& mode) {
    EXPECT_EQ(gm.graph().str() + "\n",
              testing::read_file(dir_ + "/" + mode + "/graph.txt"));
    EXPECT_EQ(gm.code(), testing::read_file(dir_ + "/" + mode + "/code.py"));
  }

  std::string out_, dir_;
  examples::CaptureExample example_;
};

TEST_P(CaptureExample, GraphAndCodeEqualMakeFxAndRunsEagerNumbers) {
  for (std::string mode : {"grad", "no_grad", "inference_mode"}) {
    SCOPED_TRACE(mode);
    std::shared_ptr<GraphModule> gm;
    if (mode == "inference_mode") {
      c10::InferenceMode inference;
      gm = examples::capture_example(example_);
    } else {
      at::AutoGradMode grad(mode == "grad");
      gm = examples::capture_example(example_);
    }
    expect_python_text(*gm, mode);
    at::NoGradGuard no_grad;
    std::vector<c10::IValue> args(example_.inputs.begin(),
                                  example_.inputs.end());
    c10::IValue captured = gm->forward(args);
    c10::IValue eager(c10::List<at::Tensor>(example_.fn(example_.inputs)));
    testing::expect_same(captured, eager, 0, 0);
    auto python = read_value_file(dir_ + "/expected.pt");
    ASSERT_TRUE(python.ok()) << python.status().message();
    testing::expect_same(captured, *python, 1e-4, 1e-5);
  }
}

// Meta mode: shapes only (LibTorch's C++ build lacks meta kernels for
// several of these operators; meta_rules.cc has shape rules for them); the
// graph is make_fx's of the Python model moved to the meta device, and the
// GraphModule, which keeps the real weights, runs to eager's numbers.
TEST_P(CaptureExample, MetaModeEqualsMakeFxOnMeta) {
  MakeFxOptions options;
  options.meta = true;
  auto gm = examples::capture_example(example_, options);
  expect_python_text(*gm, "meta");
  at::NoGradGuard no_grad;
  std::vector<c10::IValue> args(example_.inputs.begin(), example_.inputs.end());
  testing::expect_same(
      gm->forward(args),
      c10::IValue(c10::List<at::Tensor>(example_.fn(example_.inputs))), 0, 0);
}

INSTANTIATE_TEST_SUITE_P(Examples, CaptureExample,
                         ::testing::Values("resnet18", "mobilenet_v2",
                                           "small_transformer"),
                         [](const auto& info) { return info.param; });

TEST(CaptureExamples, UnknownNameListsTheExamples) {
  try {
    examples::make_capture_example("no_such_model");
    FAIL() << "no error";
  } catch (const FxError& e) {
    EXPECT_NE(std::string(e.what()).find("resnet18 mobilenet_v2"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace fx
