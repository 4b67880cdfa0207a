// Conformance with torch.fx beyond torchvision's classification set: the
// models users write (tests/tools/sample_models.py: a GPT-style decoder, a
// statistics-heavy 1d conv net, a net of PReLU / Upsample / reflection
// padding / einsum) and every model of torchvision's video, segmentation and
// quantizable (quantize=False) families. For each model torch.fx can trace,
// the bundle tools/torchfx_export.py writes prints exactly as torch.fx
// prints it (graph.txt), generates exactly gm.code (code.py, annotations
// included: typing_Dict[str,torch.Tensor],
// torchvision_models_googlenet_GoogLeNetOutputs), round-trips JSON -> SDK ->
// JSON byte for byte, and runs in C++ to eager's outputs, whatever their
// structure (dicts, tuples), within rtol 1e-4, atol 1e-5.
//
// Needs Debian's python3-torch and python3-torchvision at /usr/bin/python3;
// without them every case is skipped with a message. Models torch.fx cannot
// trace are skipped with torch.fx's error.
//
// FX_OTHER_MODELS=NAME,NAME... runs only the models named (tools/test.sh's
// bounded run under ASan).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "fx_core/runtime/graph_module_file.h"
#include "tests/testing/conformance.h"
#include "tests/testing/reference.h"
#include "tools/opinfo_runner.h"

namespace fx {
namespace {

const char* const kModels[] = {
    "sample.GptDecoder",
    "sample.StatsConvNet",
    "sample.MixedNet",
    // torchvision 0.14's video models (torchvision.models.list_models).
    "video.mc3_18",
    "video.mvit_v1_b",
    "video.mvit_v2_s",
    "video.r2plus1d_18",
    "video.r3d_18",
    "video.s3d",
    // Segmentation.
    "segmentation.deeplabv3_mobilenet_v3_large",
    "segmentation.deeplabv3_resnet101",
    "segmentation.deeplabv3_resnet50",
    "segmentation.fcn_resnet101",
    "segmentation.fcn_resnet50",
    "segmentation.lraspp_mobilenet_v3_large",
    // Quantizable classification models, unquantized.
    "quantization.googlenet",
    "quantization.inception_v3",
    "quantization.mobilenet_v2",
    "quantization.mobilenet_v3_large",
    "quantization.resnet18",
    "quantization.resnet50",
    "quantization.resnext101_32x8d",
    "quantization.resnext101_64x4d",
    "quantization.shufflenet_v2_x0_5",
    "quantization.shufflenet_v2_x1_0",
    "quantization.shufflenet_v2_x1_5",
    "quantization.shufflenet_v2_x2_0",
};

struct ModelList {
  static std::vector<std::string> names() {
    return testing::selected_models(
        std::vector<std::string>(std::begin(kModels), std::end(kModels)),
        "FX_OTHER_MODELS");
  }
  static const char* dir() { return "models"; }
};

class Model : public testing::ExportedModelTest<ModelList> {};

TEST_P(Model, MatchesTorchFxAndEager) {
  testing::expect_text_and_code_as_torch_fx(model_dir());

  auto gm = read_graph_module(path("graph.fx.json"));
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  auto inputs = read_value_file(path("input.pt"));
  auto expected = read_value_file(path("expected.pt"));
  ASSERT_TRUE(inputs.ok()) << inputs.status().message();
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  auto start = std::chrono::steady_clock::now();
  at::NoGradGuard no_grad;  // as the exporter's torch.no_grad()
  c10::IValue out = (*gm)->forward(inputs->toListRef().vec());
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  std::cout << "[ result ] " << GetParam() << ": " << (*gm)->graph().size()
            << " nodes, forward " << ms << " ms\n";
  EXPECT_EQ(opinfo::compare_results(out, *expected, true), "");
}

INSTANTIATE_TEST_SUITE_P(Models, Model, ::testing::ValuesIn(ModelList::names()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '.') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace fx
