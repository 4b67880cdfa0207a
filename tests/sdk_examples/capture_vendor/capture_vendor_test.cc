// The capture_vendor plugin's extensions of fx::make_fx, loaded as a host
// loads plugins: its decomposition records what Python's make_fx records
// with the same decomposition_table (goldens from capture_vendor_twins.py at
// test time), its leaf operator stays one node, and a capture may opt out of
// both. Captured graphs compute eager's numbers.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fx_core/capture/capture_extensions.h"
#include "fx_core/capture/make_fx.h"
#include "fx_core/runtime/graph_module.h"
#include "sdk_examples/capture_vendor/vendor_block.h"
#include "tests/fx_core/tracer/tracer_testing.h"
#include "tests/testing/python.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

using Tensors = std::vector<at::Tensor>;

class CaptureVendor : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    capture_vendor::load_capture_vendor(
        "sdk_examples/capture_vendor/libcapture_vendor.so");
  }
  void SetUp() override { at::manual_seed(0); }

  // The targets of the graph's call_function nodes, in order.
  static std::vector<std::string> targets(const GraphModule& gm) {
    std::vector<std::string> out;
    for (const Node* n : gm.graph().nodes()) {
      if (n->op() == Opcode::kCallFunction) out.push_back(n->target());
    }
    return out;
  }
  static int count(const std::vector<std::string>& v, const std::string& s) {
    return static_cast<int>(std::count(v.begin(), v.end(), s));
  }
};

TEST_F(CaptureVendor, LoadingRegistersBothExtensions) {
  EXPECT_EQ(capture::registered_origin("aten::silu"), "capture_vendor");
  EXPECT_EQ(capture::registered_origin("aten::silu.default"), "capture_vendor");
  EXPECT_EQ(capture::registered_origin("aten::layer_norm"), "capture_vendor");
  EXPECT_EQ(capture::registered_origin("aten::relu"), "");
}

// The decomposition against Python's make_fx with the same
// decomposition_table, under grad, no_grad and InferenceMode.
TEST_F(CaptureVendor, DecompositionRecordsWhatPythonRecords) {
  if (!testing::have_python_torch()) GTEST_SKIP() << "no python3-torch";
  const std::string dir =
      std::string(std::getenv("TEST_TMPDIR")) + "/capture_vendor_twins";
  testing::run_python(
      "tests/sdk_examples/capture_vendor/capture_vendor_twins.py", {dir});
  torch::nn::Linear linear(4, 8);
  TensorFunction fn = [&](const Tensors& in) -> Tensors {
    at::Tensor y = at::linear(in[0], linear->weight, linear->bias);
    at::Tensor a = at::silu(y);
    at::Tensor s = at::silu(in[0]);
    return {a, at::add(s, in[0])};
  };
  Tensors inputs = {at::randn({2, 4})};
  for (std::string mode : {"grad", "no_grad", "inference_mode"}) {
    SCOPED_TRACE(mode);
    std::shared_ptr<GraphModule> gm;
    if (mode == "inference_mode") {
      c10::InferenceMode inference;
      gm = make_fx(fn, inputs);
    } else {
      at::AutoGradMode grad_mode(mode == "grad");
      gm = make_fx(fn, inputs);
    }
    const std::string golden = dir + "/linear_silu." + mode;
    EXPECT_EQ(gm->graph().str() + "\n",
              testing::read_file(golden + "/graph.txt"));
    EXPECT_EQ(gm->code(), testing::read_file(golden + "/code.py"));
    at::NoGradGuard no_grad;
    testing::expect_same(gm->forward({inputs[0]}),
                         c10::IValue(c10::List<at::Tensor>(fn(inputs))));
  }
}

// The leaf operator is one node under grad, no_grad and InferenceMode:
// no native_layer_norm, no getitem, no detach of its results.
TEST_F(CaptureVendor, LeafOperatorStaysOneNode) {
  auto block = std::make_shared<capture_vendor::VendorBlock>();
  TensorFunction fn = capture_vendor::vendor_block_function(block);
  Tensors inputs = {at::randn({3, 4})};
  MakeFxOptions options;
  options.module = block.get();
  for (std::string mode : {"grad", "no_grad", "inference_mode"}) {
    SCOPED_TRACE(mode);
    std::shared_ptr<GraphModule> gm;
    if (mode == "inference_mode") {
      c10::InferenceMode inference;
      gm = make_fx(fn, inputs, options);
    } else {
      at::AutoGradMode grad_mode(mode == "grad");
      gm = make_fx(fn, inputs, options);
    }
    std::vector<std::string> t = targets(*gm);
    EXPECT_EQ(count(t, "torch.ops.aten.layer_norm.default"), 1);
    EXPECT_EQ(count(t, "torch.ops.aten.native_layer_norm.default"), 0);
    EXPECT_EQ(count(t, "operator.getitem"), 0);
    EXPECT_EQ(count(t, "torch.ops.aten.silu.default"), 0);
    EXPECT_EQ(count(t, "torch.ops.aten.sigmoid.default"), 1);
    EXPECT_NE(gm->graph().str().find(
                  "%layer_norm : [num_users=2] = call_function[target=torch."
                  "ops.aten.layer_norm.default](args = (%addmm, [8], "
                  "%_param_constant2, %_param_constant3), kwargs = {})"),
              std::string::npos)
        << gm->graph().str();
    at::NoGradGuard no_grad;
    testing::expect_same(gm->forward({inputs[0]}),
                         c10::IValue(c10::List<at::Tensor>(fn(inputs))));
  }
}

// MakeFxOptions::registered_extensions = false: make_fx's own recording
// (silu whole, layer_norm decomposed by its composite kernel).
TEST_F(CaptureVendor, ACaptureMayLeaveTheRegisteredExtensionsOut) {
  auto block = std::make_shared<capture_vendor::VendorBlock>();
  MakeFxOptions options;
  options.module = block.get();
  options.registered_extensions = false;
  at::NoGradGuard no_grad;
  auto gm = make_fx(capture_vendor::vendor_block_function(block),
                    {at::randn({3, 4})}, options);
  std::vector<std::string> t = targets(*gm);
  EXPECT_EQ(count(t, "torch.ops.aten.silu.default"), 1);
  EXPECT_EQ(count(t, "torch.ops.aten.native_layer_norm.default"), 1);
  EXPECT_EQ(count(t, "torch.ops.aten.layer_norm.default"), 0);
  // A capture's own table takes precedence over the plugin's.
  options.registered_extensions = true;
  options.decompositions["aten::silu"] =
      [](const std::vector<c10::IValue>& args) -> std::vector<c10::IValue> {
    return {at::mul(args[0].toTensor(), at::sigmoid(args[0].toTensor()))};
  };
  options.leaf_ops = {"aten::linear"};
  gm = make_fx(capture_vendor::vendor_block_function(block),
               {at::randn({3, 4})}, options);
  t = targets(*gm);
  EXPECT_EQ(count(t, "torch.ops.aten.linear.default"), 2);
  EXPECT_EQ(count(t, "torch.ops.aten.layer_norm.default"), 1);
}

}  // namespace
}  // namespace fx
