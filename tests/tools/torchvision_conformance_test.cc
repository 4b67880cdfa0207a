// Conformance with torch.fx on torchvision's classification models: for every
// model torch.fx can trace, the bundle tools/torchfx_export.py writes
// prints exactly as torch.fx prints it (graph.txt; torch 1.13's `#users` is
// the only allowed difference, normalised by the exporter), generates
// exactly gm.code (code.py), round-trips JSON -> SDK -> JSON byte for byte,
// and runs in C++ to the eager model's output (expected.pt) within
// rtol 1e-4, atol 1e-5.
//
// Needs Debian's python3-torch and python3-torchvision at /usr/bin/python3
// (tools/setup.sh installs them); without them every case is skipped with a
// message. Models torch.fx cannot trace are skipped with torch.fx's error.
//
// FX_TORCHVISION_MODELS=NAME,NAME... runs only the models named
// (tools/test.sh's bounded run under ASan).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "fx_core/runtime/graph_module_file.h"
#include "tests/testing/conformance.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

// torchvision 0.14's classification models (torchvision.models.list_models).
const char* const kModels[] = {
    "alexnet",
    "convnext_base",
    "convnext_large",
    "convnext_small",
    "convnext_tiny",
    "densenet121",
    "densenet161",
    "densenet169",
    "densenet201",
    "efficientnet_b0",
    "efficientnet_b1",
    "efficientnet_b2",
    "efficientnet_b3",
    "efficientnet_b4",
    "efficientnet_b5",
    "efficientnet_b6",
    "efficientnet_b7",
    "efficientnet_v2_l",
    "efficientnet_v2_m",
    "efficientnet_v2_s",
    "googlenet",
    "inception_v3",
    "maxvit_t",
    "mnasnet0_5",
    "mnasnet0_75",
    "mnasnet1_0",
    "mnasnet1_3",
    "mobilenet_v2",
    "mobilenet_v3_large",
    "mobilenet_v3_small",
    "regnet_x_16gf",
    "regnet_x_1_6gf",
    "regnet_x_32gf",
    "regnet_x_3_2gf",
    "regnet_x_400mf",
    "regnet_x_800mf",
    "regnet_x_8gf",
    "regnet_y_128gf",
    "regnet_y_16gf",
    "regnet_y_1_6gf",
    "regnet_y_32gf",
    "regnet_y_3_2gf",
    "regnet_y_400mf",
    "regnet_y_800mf",
    "regnet_y_8gf",
    "resnet101",
    "resnet152",
    "resnet18",
    "resnet34",
    "resnet50",
    "resnext101_32x8d",
    "resnext101_64x4d",
    "resnext50_32x4d",
    "shufflenet_v2_x0_5",
    "shufflenet_v2_x1_0",
    "shufflenet_v2_x1_5",
    "shufflenet_v2_x2_0",
    "squeezenet1_0",
    "squeezenet1_1",
    "swin_b",
    "swin_s",
    "swin_t",
    "swin_v2_b",
    "swin_v2_s",
    "swin_v2_t",
    "vgg11",
    "vgg11_bn",
    "vgg13",
    "vgg13_bn",
    "vgg16",
    "vgg16_bn",
    "vgg19",
    "vgg19_bn",
    "vit_b_16",
    "vit_b_32",
    "vit_h_14",
    "vit_l_16",
    "vit_l_32",
    "wide_resnet101_2",
    "wide_resnet50_2",
};

struct TorchvisionModelList {
  static std::vector<std::string> names() {
    return testing::selected_models(
        std::vector<std::string>(std::begin(kModels), std::end(kModels)),
        "FX_TORCHVISION_MODELS");
  }
  static const char* dir() { return "torchvision"; }
};

class TorchvisionModel
    : public testing::ExportedModelTest<TorchvisionModelList> {};

TEST_P(TorchvisionModel, MatchesTorchFx) {
  testing::expect_text_and_code_as_torch_fx(model_dir());

  auto gm = read_graph_module(path("graph.fx.json"));
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  auto inputs = read_value_file(path("input.pt"));
  auto expected = read_value_file(path("expected.pt"));
  ASSERT_TRUE(inputs.ok()) << inputs.status().message();
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  auto start = std::chrono::steady_clock::now();
  at::Tensor out = (*gm)->forward(inputs->toListRef().vec()).toTensor();
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  at::Tensor want = expected->toTensor();
  double diff = (out - want).abs().max().item<double>();
  std::cout << "[ result ] " << GetParam() << ": " << (*gm)->graph().size()
            << " nodes, max |diff| " << diff << ", forward " << ms << " ms\n";
  EXPECT_TRUE(at::allclose(out, want, 1e-4, 1e-5)) << "max |diff| " << diff;
}

INSTANTIATE_TEST_SUITE_P(Torchvision, TorchvisionModel,
                         ::testing::ValuesIn(TorchvisionModelList::names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fx
