// Models holding child GraphModules made by torch.fx itself (fuse_by_partitions
// of resnet18, once and nested, and split_module of a transformer;
// fused_models.py at test time) load from their bundles, print, generate
// each child's code and compute eager's numbers; written back they hold the
// nodes and children Python wrote, and Python's importer rebuilds them with
// eager's numbers.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "tests/testing/python.h"

namespace fx {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The bundles, exported once per test process.
const std::string& gold_dir() {
  static const std::string dir = [] {
    std::string out = std::string(std::getenv("TEST_TMPDIR")) + "/gold";
    testing::run_python(
        "tests/fx_core/runtime/fused_models.py",
        {testing::runfile("tools"),
         testing::runfile("tests/fx_core/partition/transformer_block.py"),
         out});
    return out;
  }();
  return dir;
}

// The MODULE entries `ours` and `theirs` (by path) have the same types, and
// the GraphModules among them the same graphs, class names and (recursively)
// modules. Other modules' configs may differ in spelling (MaxPool2d's
// kernel_size 3 or (3, 3)).
void expect_same_children(const nlohmann::ordered_json& ours,
                          const nlohmann::ordered_json& theirs, bool as_arg) {
  ASSERT_EQ(ours.size(), theirs.size());
  for (auto it = theirs.begin(); it != theirs.end(); ++it) {
    ASSERT_TRUE(ours.contains(it.key())) << it.key();
    const auto& a = as_arg ? ours[it.key()]["dict"] : ours[it.key()];
    const auto& b = as_arg ? it.value()["dict"] : it.value();
    EXPECT_EQ(a["type"], b["type"]) << it.key();
    EXPECT_EQ(a["training"], b["training"]) << it.key();
    if (b["type"] != "torch.fx.graph_module.GraphModule") continue;
    const auto& ca = as_arg ? a["config"]["dict"] : a["config"];
    const auto& cb = as_arg ? b["config"]["dict"] : b["config"];
    EXPECT_EQ(ca["graph"], cb["graph"]) << it.key();
    EXPECT_EQ(ca["class_name"], cb["class_name"]) << it.key();
    expect_same_children(ca["root"]["dict"], cb["root"]["dict"], true);
  }
}

class ChildrenTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!testing::have_python_torch(/*torchvision=*/true)) {
      GTEST_SKIP() << "needs /usr/bin/python3 with torch and torchvision";
    }
    dir_ = gold_dir() + "/" + GetParam();
  }
  std::string dir_;
};

TEST_P(ChildrenTest, LoadsPrintsAndComputesEagersNumbers) {
  auto gm = read_graph_module(dir_ + "/graph.fx.json");
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  EXPECT_EQ((*gm)->graph().str() + "\n", read_text(dir_ + "/graph.txt"));
  EXPECT_EQ((*gm)->code(), read_text(dir_ + "/code.py"));
  auto inputs = read_value_file(dir_ + "/input.pt");
  auto eager = read_value_file(dir_ + "/eager.pt");
  ASSERT_TRUE(inputs.ok() && eager.ok());
  at::Tensor out = (*gm)->forward(inputs->toListRef().vec()).toTensor();
  EXPECT_TRUE(at::allclose(out, eager->toTensor(), 1e-4, 1e-5))
      << (out - eager->toTensor()).abs().max();
}

TEST_P(ChildrenTest, EachChildGeneratesTorchFxsCode) {
  auto gm = read_graph_module(dir_ + "/graph.fx.json");
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  auto children = nlohmann::json::parse(read_text(dir_ + "/children.json"));
  int count = 0;
  for (const auto& [path, code] : children.items()) {
    auto* child = dynamic_cast<GraphModule*>((*gm)->get_submodule(path).get());
    ASSERT_NE(child, nullptr) << path;
    EXPECT_EQ(child->code(), code.get<std::string>()) << path;
    ++count;
  }
  EXPECT_GE(count, 2);
}

TEST_P(ChildrenTest, WritesPythonsChildrenAndPythonReadsThemBack) {
  auto gm = read_graph_module(dir_ + "/graph.fx.json");
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  std::string out =
      std::string(std::getenv("TEST_TMPDIR")) + "/cpp_" + GetParam();
  std::filesystem::create_directories(out);
  ASSERT_TRUE(write_graph_module(**gm, out + "/graph.fx.json").ok());
  auto ours = nlohmann::ordered_json::parse(read_text(out + "/graph.fx.json"));
  auto theirs =
      nlohmann::ordered_json::parse(read_text(dir_ + "/graph.fx.json"));
  EXPECT_EQ(ours["nodes"], theirs["nodes"]);
  expect_same_children(ours["modules"], theirs["modules"], /*as_arg=*/false);
  // torchfx_import.py exits 0 when allclose to the expected output.
  EXPECT_NO_THROW(testing::run_python(
      "tools/torchfx_import.py",
      {out, "--inputs", dir_ + "/input.pt", "--expected", dir_ + "/eager.pt"}));
  auto again = read_graph_module(out + "/graph.fx.json");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ((*again)->code(), (*gm)->code());
}

INSTANTIATE_TEST_SUITE_P(TorchFx, ChildrenTest,
                         ::testing::Values("resnet18_fused", "resnet18_nested",
                                           "transformer_split"));

}  // namespace
}  // namespace fx
