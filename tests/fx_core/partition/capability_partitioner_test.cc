// propose_partitions against torch.fx's CapabilityBasedPartitioner: the same
// graphs and support rules (partition_cases.py: resnet18 traced and captured
// at the ATen level, a transformer-like model, random DAGs), partitions equal
// as lists of node names, in torch.fx's order. Plus the rules of the header
// on small graphs built here.
#include "fx_core/partition/capability_partitioner.h"

#include <gtest/gtest.h>

#include "fx_core/ir/graph.h"
#include "fx_core/partition/target_support.h"
#include "fx_core/support/error.h"
#include "tests/fx_core/partition/partition_cases.h"
#include "tests/testing/python.h"

namespace fx {
namespace {

SupportedTargets functions(std::vector<std::string> names) {
  SupportedTargets t;
  t.functions = std::move(names);
  return t;
}

using Names = std::vector<std::vector<std::string>>;

TEST(CapabilityPartitioner, EqualsTorchFxOnModelsAndRandomGraphs) {
  if (!testing::have_python_torch(/*torchvision=*/true)) {
    GTEST_SKIP() << "python3-torch and torchvision are not installed";
  }
  int compared = 0, ambiguous = 0, nonempty = 0;
  for (const std::string& name : testing::partition_case_names()) {
    SCOPED_TRACE(name);
    testing::PartitionCase c = testing::load_partition_case(name);
    std::vector<Partition> got =
        propose_partitions(*c.file.graph, c.support, c.options);
    if (c.ambiguous) {
      ++ambiguous;
      continue;
    }
    EXPECT_EQ(testing::partition_names(got), c.expected);
    ++compared;
    nonempty += !got.empty();
  }
  EXPECT_GE(compared, 30) << ambiguous << " ambiguous cases";
  EXPECT_GE(nonempty, 30);
}

// x -> a -> b -> c -> output, with `b` unsupported.
class SmallGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    x_ = g_.placeholder("x");
    a_ = g_.call_function("torch.relu", {x_});
    b_ = g_.call_function("torch.sigmoid", {a_});
    c_ = g_.call_function("torch.relu", {b_});
    d_ = g_.call_function("operator.add", {c_, a_});
    g_.output(d_);
  }
  Names partitions(const OperatorSupport& s, PartitionOptions o = {}) {
    return testing::partition_names(propose_partitions(g_, s, o));
  }
  Graph g_;
  Node *x_, *a_, *b_, *c_, *d_;
};

TEST_F(SmallGraph, UnsupportedNodeBetweenKeepsPartitionsApart) {
  OperatorSupport s =
      target_support(functions({"torch.relu", "_operator.add"}));
  PartitionOptions single;
  single.allows_single_node_partition = true;
  // a cannot join {c, d}: d depends on a through b.
  EXPECT_EQ(partitions(s, single), (Names{{"relu_1", "add"}, {"relu"}}));
  EXPECT_EQ(partitions(s), (Names{{"relu_1", "add"}}));
  PartitionOptions at_least_three = single;
  at_least_three.min_partition_size = 3;
  EXPECT_EQ(partitions(s, at_least_three), Names{});
}

TEST_F(SmallGraph, EverythingSupportedIsOnePartition) {
  OperatorSupport s =
      any_of({target_support(functions({"torch.relu", "operator.add"})),
              target_support(functions({"torch.sigmoid"}))});
  EXPECT_EQ(partitions(s), (Names{{"relu", "sigmoid", "relu_1", "add"}}));
}

TEST_F(SmallGraph, PlaceholdersAndOutputNeverJoin) {
  OperatorSupport everything([](const Node&) { return true; });
  EXPECT_EQ(partitions(everything),
            (Names{{"relu", "sigmoid", "relu_1", "add"}}));
}

TEST_F(SmallGraph, RuleErrorsPassThrough) {
  OperatorSupport failing([](const Node& n) -> bool {
    throw FxError(std::string("no answer for ") + std::string(n.name()));
  });
  EXPECT_THROW(propose_partitions(g_, failing), FxError);
}

TEST(CapabilityPartitionerGetitem, GetitemsFollowTheirProducer) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* chunk = g.call_function("torch.chunk", {x, 2});
  Node* first = g.call_function("operator.getitem", {chunk, 0});
  Node* second = g.call_function("operator.getitem", {chunk, 1});
  Node* add = g.call_function("operator.add", {first, second});
  Node* relu = g.call_function("torch.relu", {add});
  g.output(relu);
  // chunk is unsupported: its getitems leave the partition they were in.
  OperatorSupport s = target_support(
      functions({"operator.getitem", "operator.add", "torch.relu"}));
  EXPECT_EQ(testing::partition_names(propose_partitions(g, s)),
            (Names{{"add", "relu"}}));
}

}  // namespace
}  // namespace fx
