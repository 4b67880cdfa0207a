// The quantize plugin through the pass manager against PyTorch's own int8
// arithmetic on the same bundles (quantize_golden.py: torch.ao observers,
// torch.quantize_per_channel / quantize_per_tensor(_dynamic)): weight-only,
// dynamic, and static (prepare, calibrate on the example input, convert).
// On resnet18 it also measures the weight-size reduction and the output
// error against float, printed as "figures:" lines.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <string>

#include "fx_core/io/torch_save.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module_file.h"
#include "tests/plugins/plugin_test_util.h"

namespace fx::plugins_test {
namespace {

namespace fs = std::filesystem;

std::string tmp(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

std::string export_model(const std::string& cls, const std::string& shape) {
  std::string dir = tmp("models/" + cls);
  if (fs::exists(dir + "/graph.fx.json")) return dir;
  std::string log;
  if (run_command("/usr/bin/python3 " + runfile("tools/torchfx_export.py") +
                      " --module " + runfile("tests/plugins/golden_models.py") +
                      ":" + cls + " --input-shape " + shape + " -o " + dir,
                  &log) != 0) {
    throw std::runtime_error("export failed:\n" + log);
  }
  return dir;
}

c10::IValue torch_quantized(const std::string& bundle,
                            const std::string& mode) {
  std::string out = tmp("golden_" + mode + ".pt");
  std::string log;
  if (run_command("/usr/bin/python3 " +
                      runfile("tests/plugins/quantize_golden.py") + " " +
                      runfile("tools/torchfx_import.py") + " " + bundle + " " +
                      mode + " " + out,
                  &log) != 0) {
    throw std::runtime_error("quantize golden failed:\n" + log);
  }
  auto v = read_value_file(out);
  if (!v.ok()) throw std::runtime_error(std::string(v.status().message()));
  return *v;
}

// Bytes of the parameters and buffers the graph references.
int64_t weight_bytes(const GraphModule& gm) {
  int64_t bytes = 0;
  for (const auto& [name, attr] : gm.referenced_attributes()) {
    if (attr.tensor.defined()) {
      bytes += attr.tensor.numel() * attr.tensor.element_size();
    } else if (attr.module) {
      for (const auto& p : attr.module->named_parameters(true)) {
        bytes += p.value().numel() * p.value().element_size();
      }
      for (const auto& b : attr.module->named_buffers(true)) {
        bytes += b.value().numel() * b.value().element_size();
      }
    }
  }
  return bytes;
}

size_t count_modules(const GraphModule& gm, const char* cpp_class) {
  size_t n = 0;
  for (const Node* node : gm.graph().nodes()) {
    if (node->op() != Opcode::kCallModule) continue;
    auto m = gm.get_submodule(node->target());
    n += m && m->name().find(cpp_class) != std::string::npos;
  }
  return n;
}

double relative_error(const at::Tensor& got, const at::Tensor& want) {
  return ((got - want).norm() / want.norm()).item<double>();
}

struct Case {
  const char* model;
  const char* mode;
  const char* pipeline;
};

class QuantizeTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!python_skip_reason().empty()) GTEST_SKIP() << python_skip_reason();
  }
};

TEST_P(QuantizeTest, MatchesPyTorchsInt8Arithmetic) {
  const Case& c = GetParam();
  std::string dir = std::string(c.model) == "Quantizable"
                        ? export_model("Quantizable", "2,3,16,16")
                        : export_torchvision(c.model);
  Bundle b = load_bundle(dir);
  c10::IValue want = torch_quantized(dir, c.mode);
  at::Tensor float_out = b.expected.toTensor();
  int64_t before = weight_bytes(*b.gm);
  host::PipelineReport report = run_pipeline(*b.gm, c.pipeline, b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(count_modules(*b.gm, "Conv2dImpl"), 0u) << b.gm->graph().str();
  EXPECT_EQ(count_modules(*b.gm, "LinearImpl"), 0u);
  at::Tensor got = forward(*b.gm, b.inputs).toTensor();
  at::Tensor torch_q = want.toTensor();
  // The same int8 arithmetic as PyTorch's, up to float rounding: exact
  // for the weights; with quantized activations, a float difference of one
  // ulp in a deep network's convolution moves an activation across a
  // rounding boundary now and then (one quantum), so on resnet18 the two
  // int8 results differ by a fraction of the quantization error itself.
  double vs_torch = ((got - torch_q).norm() / float_out.norm()).item<double>();
  double vs_float = relative_error(got, float_out);
  bool activations = std::string(c.mode) != "weights";
  bool deep = std::string(c.model) != "Quantizable";
  EXPECT_LT(vs_torch, activations && deep ? 0.5 * vs_float : 1e-4)
      << "max abs diff " << (got - torch_q).abs().max().item<double>();
  // And close to float.
  EXPECT_LT(vs_float, 0.05);
  int64_t after = weight_bytes(*b.gm);
  EXPECT_LT(after * 3, before);
  std::cout << "figures: " << c.model << " " << c.mode << ": weights " << before
            << " -> " << after << " bytes ("
            << static_cast<double>(before) / after
            << "x), output vs float: relative L2 error " << vs_float
            << ", max abs error "
            << (got - float_out).abs().max().item<double>()
            << " (float output max abs " << float_out.abs().max().item<double>()
            << "), vs PyTorch's int8 arithmetic: relative " << vs_torch << "\n";
  // The bundle written after quantization holds the int8 weights.
  std::string out = tmp(std::string(c.model) + "_" + c.mode);
  fs::create_directories(out);
  ASSERT_TRUE(write_graph_module(*b.gm, out + "/graph.fx.json").ok());
  std::cout << "figures: " << c.model << " " << c.mode << ": model.weights.pt "
            << fs::file_size(dir + "/model.weights.pt") << " -> "
            << fs::file_size(out + "/model.weights.pt") << " bytes\n";
  Bundle reread = load_bundle(out);
  EXPECT_LE(max_abs_diff(forward(*reread.gm, b.inputs), got), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(
    WeightsDynamicStatic, QuantizeTest,
    ::testing::Values(
        Case{"Quantizable", "weights", "quantize_weights"},
        Case{"Quantizable", "dynamic", "quantize_weights{dynamic=true}"},
        Case{"Quantizable", "static",
             "quantize_prepare,quantize_calibrate,quantize_convert"},
        Case{"resnet18", "weights", "quantize_weights"},
        Case{"resnet18", "dynamic", "quantize_weights{dynamic=true}"},
        Case{"resnet18", "static",
             "quantize_prepare,quantize_calibrate,quantize_convert"},
        // torchvision's random initialisation leaves mobilenet_v2's
        // activations near 1e-9: weight-only is meaningful, activation
        // quantization is not.
        Case{"mobilenet_v2", "weights", "quantize_weights"}),
    [](const ::testing::TestParamInfo<Case>& info) {
      return std::string(info.param.model) + "_" + info.param.mode;
    });

TEST(Quantize, CalibrationByTheHostRunningThePreparedModule) {
  if (!python_skip_reason().empty()) GTEST_SKIP() << python_skip_reason();
  std::string dir = export_model("Quantizable", "2,3,16,16");
  Bundle b = load_bundle(dir);
  ASSERT_TRUE(run_pipeline(*b.gm, "quantize_prepare").ok());
  size_t observers = 0;
  for (const Node* n : b.gm->graph().nodes()) {
    observers += n->target() == "fx_quant.observe";
  }
  EXPECT_EQ(observers, 4u);  // conv, conv2, fc, F.linear
  // Observers pass values through: the prepared module computes float.
  EXPECT_LE(max_abs_diff(forward(*b.gm, b.inputs), b.expected), 1e-6);
  // The host calibrates (forward), then converts: PyTorch's static result.
  host::PipelineReport report = run_pipeline(*b.gm, "quantize_convert");
  ASSERT_TRUE(report.ok()) << report.failure;
  at::Tensor got = forward(*b.gm, b.inputs).toTensor();
  at::Tensor want = torch_quantized(dir, "static").toTensor();
  EXPECT_LT(relative_error(got, want), 1e-4);
}

TEST(Quantize, ConvertWithoutCalibrationSaysSo) {
  if (!python_skip_reason().empty()) GTEST_SKIP() << python_skip_reason();
  Bundle b = load_bundle(export_model("Quantizable", "2,3,16,16"));
  host::PipelineReport report =
      run_pipeline(*b.gm, "quantize_prepare,quantize_convert");
  EXPECT_NE(report.failure.find("saw no data: calibrate first"),
            std::string::npos)
      << report.failure;
}

}  // namespace
}  // namespace fx::plugins_test
