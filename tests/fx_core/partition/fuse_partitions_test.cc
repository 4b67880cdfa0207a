// fuse_by_partitions against torch.fx's fuse_by_partitions: for each case of
// partition_cases.py whose partitions equal torch.fx's, the fused graph and
// every child graph print as torch.fx's do, and where torch.fx finds a cycle
// the fusion is refused with the graph unchanged. Plus the checks of the
// header on small graphs built here.
#include "fx_core/partition/fuse_partitions.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "fx_core/ir/graph.h"
#include "fx_core/partition/capability_partitioner.h"
#include "fx_core/support/error.h"
#include "tests/fx_core/partition/partition_cases.h"
#include "tests/testing/python.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

std::vector<std::vector<Node*>> node_lists(const std::vector<Partition>& ps) {
  std::vector<std::vector<Node*>> out;
  for (const Partition& p : ps) out.push_back(p.nodes);
  return out;
}

TEST(FusePartitions, PrintsAsTorchFxFusedGraphs) {
  if (!testing::have_python_torch(/*torchvision=*/true)) {
    GTEST_SKIP() << "python3-torch and torchvision are not installed";
  }
  int fused = 0, refused = 0;
  for (const std::string& name : testing::partition_case_names()) {
    SCOPED_TRACE(name);
    testing::PartitionCase c = testing::load_partition_case(name);
    Graph& g = *c.file.graph;
    std::vector<Partition> parts = propose_partitions(g, c.support, c.options);
    if (c.ambiguous || testing::partition_names(parts) != c.expected) continue;
    if (std::filesystem::exists(c.dir + "/fuse_error.txt")) {
      std::string before = g.str();
      EXPECT_THROW(fuse_by_partitions(g, node_lists(parts)), FxError);
      EXPECT_EQ(g.str(), before);
      ++refused;
      continue;
    }
    std::vector<FusedSubgraph> children =
        fuse_by_partitions(g, node_lists(parts));
    EXPECT_EQ(g.str() + "\n", testing::read_file(c.dir + "/fused.txt"));
    ASSERT_EQ(children.size(), parts.size());
    for (size_t k = 0; k < children.size(); ++k) {
      EXPECT_EQ(children[k].name, "fused_" + std::to_string(k));
      EXPECT_EQ(
          children[k].graph->str() + "\n",
          testing::read_file(c.dir + "/fused_" + std::to_string(k) + ".txt"))
          << children[k].name;
    }
    EXPECT_NO_THROW(g.lint());
    ++fused;
  }
  EXPECT_GE(fused, 20);
  EXPECT_GE(refused, 3);
}

class FuseSmall : public ::testing::Test {
 protected:
  void SetUp() override {
    x_ = g_.placeholder("x");
    a_ = g_.call_function("torch.relu", {x_});
    b_ = g_.call_function("torch.sigmoid", {a_});
    c_ = g_.call_function("operator.add", {b_, a_});
    g_.output(c_);
  }
  void expect_refused(const std::vector<std::vector<Node*>>& parts,
                      const std::string& message) {
    std::string before = g_.str();
    try {
      fuse_by_partitions(g_, parts);
      FAIL() << "expected an error";
    } catch (const FxError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(g_.str(), before);
  }
  Graph g_;
  Node *x_, *a_, *b_, *c_;
};

TEST_F(FuseSmall, RefusesCyclesAndBadPartitions) {
  expect_refused({{a_, c_}},
                 "partition 0 cannot be fused: the graph would "
                 "have a cycle");
  expect_refused({{x_, a_}}, "node 'x' is placeholder");
  expect_refused({{a_}, {a_, b_}}, "node 'relu' is already in partition 0");
  expect_refused(std::vector<std::vector<Node*>>(1), "partition 0 is empty");
  Graph other;
  Node* y = other.placeholder("y");
  expect_refused({{y}}, "a node not in the graph");
}

TEST_F(FuseSmall, MultipleOutputsAreReadWithGetitem) {
  std::vector<FusedSubgraph> children = fuse_by_partitions(g_, {{a_, b_}});
  EXPECT_EQ(g_.str(),
            "graph():\n"
            "    %x : [num_users=1] = placeholder[target=x]\n"
            "    %fused_0 : [num_users=2] = call_module[target=fused_0](args = "
            "(%x,), kwargs = {})\n"
            "    %getitem : [num_users=1] = call_function[target=operator."
            "getitem](args = (%fused_0, 0), kwargs = {})\n"
            "    %getitem_1 : [num_users=1] = call_function[target=operator."
            "getitem](args = (%fused_0, 1), kwargs = {})\n"
            "    %add : [num_users=1] = call_function[target=operator.add]"
            "(args = (%getitem_1, %getitem), kwargs = {})\n"
            "    return add");
  ASSERT_EQ(children.size(), 1u);
  EXPECT_EQ(children[0].graph->str(),
            "graph():\n"
            "    %x : [num_users=1] = placeholder[target=x]\n"
            "    %relu : [num_users=2] = call_function[target=torch.relu]"
            "(args = (%x,), kwargs = {})\n"
            "    %sigmoid : [num_users=1] = call_function[target=torch."
            "sigmoid](args = (%relu,), kwargs = {})\n"
            "    return (relu, sigmoid)");
}

}  // namespace
}  // namespace fx
