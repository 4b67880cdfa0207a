// The SDK's C++ ports of torchvision's resnet18 and mobilenet_v2
// (sdk_examples/tracing) trace to exactly the graph torch.fx traces from
// torchvision's models (node names, ops, targets, args: the graph text and
// code are compared whole), and the traced GraphModules compute, on
// torchvision's weights, what torchvision's eager model computes and what the
// eager C++ port computes.
//
// Needs Debian's python3-torch and python3-torchvision at /usr/bin/python3;
// without them the cases are skipped with a message.
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

class TorchvisionPort : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!testing::have_python_torch(/*torchvision=*/true)) {
      GTEST_SKIP() << "python3-torch / python3-torchvision are not installed";
    }
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/" + GetParam();
    std::string cmd = "/usr/bin/python3 " +
                      testing::runfile("tools/torchfx_export.py") +
                      " --torchvision " + GetParam() + " --reference -o " +
                      dir_ + " > " + dir_ + ".log 2>&1";
    std::filesystem::create_directories(dir_);
    ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::read_file(dir_ + ".log");
  }
  std::string path(const std::string& file) const { return dir_ + "/" + file; }
  std::string dir_;
};

TEST_P(TorchvisionPort, TracesTorchFxGraphAndComputesTorchvisionOutput) {
  std::shared_ptr<TraceableModule> port = examples::make_example(GetParam());
  testing::load_weights(*port, path("model.weights.pt"));
  port->eval();
  auto gm = symbolic_trace(*port);
  EXPECT_EQ(gm->graph().str() + "\n", testing::read_file(path("graph.txt")));
  EXPECT_EQ(gm->code(), testing::read_file(path("code.py")));

  auto inputs = read_value_file(path("input.pt"));
  auto expected = read_value_file(path("expected.pt"));
  ASSERT_TRUE(inputs.ok()) << inputs.status().message();
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  std::vector<c10::IValue> args = inputs->toListRef().vec();
  at::NoGradGuard no_grad;
  c10::IValue traced = gm->forward(args);
  testing::expect_same(traced, *expected, 1e-4, 1e-5);
  c10::IValue eager = port->call_forward({Value(args[0])}).to_ivalue();
  testing::expect_same(traced, eager, 0, 0);
}

INSTANTIATE_TEST_SUITE_P(Torchvision, TorchvisionPort,
                         ::testing::Values("resnet18", "mobilenet_v2"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fx
