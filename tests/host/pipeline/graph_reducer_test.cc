// The reducer: a graph shrinks to the nodes its failure needs; a graph that
// does not fail is refused; a failure that changes category is not taken.
#include "host/minimizer/graph_reducer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "tests/testing/reference.h"

namespace fx::host {
namespace {

GraphFile mymodule() {
  auto file = read_graph_file(testing::reference_dir() +
                              "/seed_mymodule/graph.fx.json");
  EXPECT_TRUE(file.ok()) << file.status();
  return *std::move(file);
}

std::vector<std::string> names(const Graph& graph) {
  std::vector<std::string> out;
  for (const Node* node : graph.nodes()) out.emplace_back(node->name());
  return out;
}

// Fails ("has TARGET") while a node has `target`.
FailureProbe fails_with(std::string target) {
  return [target](const GraphFile& file) -> std::string {
    for (const Node* node : file.graph->nodes()) {
      if (node->target() == target) return "has " + target;
    }
    return "";
  };
}

TEST(ReduceGraph, KeepsOnlyWhatTheFailureNeeds) {
  GraphFile file = mymodule();
  auto reduced = reduce_graph(file, fails_with("linear"));
  ASSERT_TRUE(reduced.ok()) << reduced.status();
  EXPECT_EQ(reduced->failure, "has linear");
  EXPECT_EQ(reduced->nodes_before, 6u);
  EXPECT_EQ(reduced->nodes_after, 3u);
  EXPECT_EQ(names(*reduced->file.graph),
            (std::vector<std::string>{"x", "linear", "output"}));
  reduced->file.graph->lint();
  // The input is not changed.
  EXPECT_EQ(file.graph->size(), 6u);
}

TEST(ReduceGraph, ANodeWithoutInputsIsReplacedByAPlaceholder) {
  auto reduced = reduce_graph(mymodule(), fails_with("clamp"));
  ASSERT_TRUE(reduced.ok()) << reduced.status();
  EXPECT_EQ(reduced->nodes_after, 3u);
  EXPECT_EQ(reduced->file.graph->first()->op(), Opcode::kPlaceholder);
}

TEST(ReduceGraph, AGraphThatDoesNotFailIsRefused) {
  auto reduced = reduce_graph(mymodule(), fails_with("no.such.target"));
  ASSERT_FALSE(reduced.ok());
  EXPECT_NE(reduced.status().message().find("does not fail"),
            std::string::npos);
}

TEST(ReduceGraph, AnotherFailureDoesNotCount) {
  // Fails one way while 'add' is there, another way once it is gone: the
  // reduction keeps 'add'.
  FailureProbe probe = [](const GraphFile& file) -> std::string {
    for (const Node* node : file.graph->nodes()) {
      if (node->target() == "operator.add") return "category A";
    }
    return "category B";
  };
  auto reduced = reduce_graph(mymodule(), probe);
  ASSERT_TRUE(reduced.ok()) << reduced.status();
  EXPECT_EQ(reduced->failure, "category A");
  std::vector<std::string> kept = names(*reduced->file.graph);
  EXPECT_NE(std::find(kept.begin(), kept.end(), "add"), kept.end());
  EXPECT_LE(kept.size(), 4u);
}

}  // namespace
}  // namespace fx::host
