// fx::Graph::rename_nodes and reset_namespace: a batch of renames applied at
// once or not at all, and a namespace that afterwards names new nodes as a
// graph freshly built from the live nodes would (what a torch.fx retrace
// gives: torch.fx 1.13 names a fresh graph's `add` after its live `add` and
// `add_1` as `add_2`, and a second `relu` after a live `relu` as `relu_1`,
// whatever the old graph's erased nodes were called).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "tests/testing/graph_helpers.h"

namespace fx {
namespace {

using testing::error_of;
using testing::graph_order;
using testing::Names;

struct Chain {
  Graph g;
  Node* x = g.placeholder("x");
  Node* add = g.call_function("operator.add", {x, 1});
  Node* relu = g.call_function("torch.relu", {add});
  Node* out = g.output(relu);
};

TEST(GraphRename, RenamesEveryNodeOfTheBatch) {
  Chain c;
  c.g.rename_nodes({c.add, c.relu}, {"plus", "activation"});
  EXPECT_EQ(graph_order(c.g), (Names{"x", "plus", "activation", "output"}));
  EXPECT_NE(c.g.python_code().src.find("activation = torch.relu(plus)"),
            std::string::npos);
  c.g.lint();
}

TEST(GraphRename, NodesOfTheBatchMaySwapNames) {
  Chain c;
  c.g.rename_nodes({c.add, c.relu}, {"relu", "add"});
  EXPECT_EQ(graph_order(c.g), (Names{"x", "relu", "add", "output"}));
  c.g.lint();
}

TEST(GraphRename, AnErasedNodesNameMayBeTaken) {
  Chain c;
  Node* extra = c.g.call_function("operator.mul", {c.x, 2});
  c.g.erase_node(extra);
  c.g.rename_nodes({c.add}, {"mul"});
  EXPECT_EQ(c.add->name(), "mul");
}

TEST(GraphRename, ANameALiveNodeKeepsIsRefusedAndNothingChanges) {
  Chain c;
  EXPECT_EQ(error_of([&] {
              c.g.rename_nodes({c.relu, c.add}, {"y", "x"});
            }),
            "rename_nodes: entry 1 gives node 'add' the name 'x', which node "
            "'x' keeps");
  EXPECT_EQ(graph_order(c.g), (Names{"x", "add", "relu", "output"}));
}

TEST(GraphRename, TwoNodesGivenOneNameAreRefused) {
  Chain c;
  EXPECT_EQ(
      error_of([&] {
        c.g.rename_nodes({c.add, c.relu}, {"same", "same"});
      }),
      "rename_nodes: entry 1 gives node 'relu' the name 'same', which node "
      "'add' is given too");
}

TEST(GraphRename, IllegalNamesAreRefused) {
  Chain c;
  for (std::string_view bad :
       {"", "1x", "a b", "x.y", "class", "sum", "torch", "inf", "é"}) {
    SCOPED_TRACE(std::string(bad));
    EXPECT_NE(error_of([&] {
                c.g.rename_nodes({c.add}, {bad});
              }).find("is not a legal node name"),
              std::string::npos);
  }
  EXPECT_EQ(c.add->name(), "add");
}

TEST(GraphRename, ANodeTwiceOrFromElsewhereIsRefused) {
  Chain c;
  Chain other;
  EXPECT_EQ(error_of([&] {
              c.g.rename_nodes({c.add, c.add}, {"a", "b"});
            }),
            "rename_nodes: entry 1 renames node 'add' again (entry 0)");
  EXPECT_EQ(error_of([&] { c.g.rename_nodes({other.add}, {"a"}); }),
            "rename_nodes: entry 0 is not a live node of this graph");
  Node* gone = c.g.call_function("operator.mul", {c.x, 2});
  c.g.erase_node(gone);
  EXPECT_EQ(error_of([&] { c.g.rename_nodes({gone}, {"a"}); }),
            "rename_nodes: entry 0 is not a live node of this graph");
  EXPECT_EQ(error_of([&] { c.g.rename_nodes({c.add}, {}); }),
            "rename_nodes: 1 nodes but 0 names");
}

TEST(GraphRename, RenamedNodesNamesStayUsedUntilTheNamespaceIsReset) {
  Chain c;
  c.g.rename_nodes({c.relu}, {"r"});
  {
    Graph::InsertPoint at = c.g.inserting_before(c.out);
    EXPECT_EQ(c.g.call_function("torch.relu", {c.relu})->name(), "relu_1");
  }
}

TEST(GraphResetNamespace, NewNodesAreNamedAsInAFreshGraphOfTheLiveNodes) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("operator.add", {x, 1});
  Node* b = g.call_function("operator.add", {a, 1});
  Node* c = g.call_function("operator.add", {b, 1});
  Node* r = g.call_function("torch.relu", {c});
  Node* r1 = g.call_function("torch.relu", {r});
  g.output(r1);
  r1->replace_all_uses_with(r);
  g.erase_node(r1);
  c->replace_all_uses_with(b);
  g.erase_node(c);
  g.rename_nodes({b}, {"add_1"});  // as it was
  g.reset_namespace();
  // The same nodes built afresh.
  Graph fresh;
  Node* fx = fresh.placeholder("x");
  Node* fa = fresh.call_function("operator.add", {fx, 1});
  Node* fb = fresh.call_function("operator.add", {fa, 1});
  fresh.call_function("torch.relu", {fb});
  // Without the reset: relu_2, add_3, add_4.
  std::vector<std::string> names_g, names_fresh;
  for (Graph* each : {&g, &fresh}) {
    std::vector<std::string>& out = each == &g ? names_g : names_fresh;
    Node* any = *each->nodes().begin();
    out.emplace_back(each->call_function("torch.relu", {any})->name());
    out.emplace_back(each->call_function("operator.add", {any, 2})->name());
    out.emplace_back(each->call_function("operator.add", {any, 3})->name());
  }
  EXPECT_EQ(names_g, names_fresh);
  EXPECT_EQ(names_g, (std::vector<std::string>{"relu_1", "add_2", "add_3"}));
}

TEST(GraphResetNamespace, ANameGivenUpByARenameIsFreeAfterwards) {
  Chain c;
  c.g.rename_nodes({c.relu}, {"r"});
  c.g.reset_namespace();
  Graph::InsertPoint at = c.g.inserting_before(c.out);
  EXPECT_EQ(c.g.call_function("torch.relu", {c.relu})->name(), "relu");
  EXPECT_EQ(c.relu->name(), "r");
}

}  // namespace
}  // namespace fx
