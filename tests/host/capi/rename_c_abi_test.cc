// GraphRenameNodes and GraphResetNamespace (C ABI version 11): a batch of
// renames applied at once or refused whole with FX_INVALID_ARGUMENT naming
// the entry; a reset namespace names new nodes as a freshly built graph of
// the live nodes would, also when the pass ran in an isolated worker (its
// changes come back as bytes); a version-10 table has neither entry and the
// C++ wrapper then says which version it needs.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "host/capi/c_api.h"
#include "host/pipeline/pass_target.h"

namespace fx::host {
namespace {

std::unique_ptr<GraphModule> relu_chain() {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* r = graph->call_function("torch.relu", {x});
  Node* r1 = graph->call_function("torch.relu", {r});
  graph->output(r1);
  return std::make_unique<GraphModule>(GraphModule::AttributeMap{},
                                       std::move(graph));
}

// Erases relu_1 (its user takes relu), as a retrace dropping it would.
void drop_second_relu(Graph& g) {
  Node* r1 = nullptr;
  for (Node* n : g.nodes()) {
    if (n->name() == "relu_1") r1 = n;
  }
  r1->replace_all_uses_with(r1->args()[0].as_node());
  g.erase_node(r1);
}

std::vector<std::string> names(const Graph& g) {
  std::vector<std::string> out;
  for (Node* n : g.nodes()) out.emplace_back(n->name());
  return out;
}

class RenameCAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    gm_ = relu_chain();
    fxp::api() = api();
  }
  void TearDown() override { fxp::api() = api(); }
  Graph& graph() { return gm_->graph(); }
  FxGraph* handle() { return to_handle(&graph()); }
  FxNode* node(const char* name) {
    for (Node* n : graph().nodes()) {
      if (n->name() == name) return to_handle(n);
    }
    return nullptr;
  }

  std::unique_ptr<GraphModule> gm_;
};

TEST_F(RenameCAbi, RenamesTheBatchAtOnce) {
  FxNode* nodes[] = {node("relu"), node("relu_1")};
  const char* new_names[] = {"relu_1", "relu"};
  ASSERT_EQ(api()->GraphRenameNodes(handle(), 2, nodes, new_names), nullptr);
  EXPECT_EQ(names(graph()),
            (std::vector<std::string>{"x", "relu_1", "relu", "output"}));
  graph().lint();
}

TEST_F(RenameCAbi, ARefusedBatchNamesTheEntryAndChangesNothing) {
  FxNode* nodes[] = {node("relu"), node("relu_1")};
  const char* new_names[] = {"a", "x"};
  StatusText s =
      take_status(api()->GraphRenameNodes(handle(), 2, nodes, new_names));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message,
            "GraphRenameNodes: rename_nodes: entry 1 gives node 'relu_1' the "
            "name 'x', which node 'x' keeps");
  const char* illegal[] = {"a", "lambda"};
  s = take_status(api()->GraphRenameNodes(handle(), 2, nodes, illegal));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message,
            "GraphRenameNodes: rename_nodes: entry 1 (node 'relu_1'): "
            "'lambda' is not a legal node name (a Python identifier that is "
            "not a keyword, a builtin or a code generation global)");
  FxNode* with_null[] = {node("relu"), nullptr};
  s = take_status(api()->GraphRenameNodes(handle(), 2, with_null, new_names));
  EXPECT_EQ(s.message,
            "GraphRenameNodes: entry 1: the node and the name must not be "
            "NULL");
  EXPECT_EQ(names(graph()),
            (std::vector<std::string>{"x", "relu", "relu_1", "output"}));
}

TEST_F(RenameCAbi, TheWrapperRenamesAndResets) {
  fxp::Graph g(handle());
  drop_second_relu(graph());
  fxp::Node relu = g.find_nodes(FX_OP_CALL_FUNCTION, "torch.relu").at(0);
  g.rename_nodes({{relu, "act"}});
  g.reset_namespace();
  fxp::Node out = g.output_node();
  {
    auto at = g.inserting_before(out);
    EXPECT_EQ(g.call_function("torch.relu", {relu}).name(), "relu");
    EXPECT_EQ(g.call_function("torch.relu", {relu}).name(), "relu_1");
  }
}

TEST_F(RenameCAbi, AnOlderTableHasNeitherEntry) {
  const FxApi* v10 = api(10);
  EXPECT_EQ(v10->GraphRenameNodes, nullptr);
  EXPECT_EQ(v10->GraphResetNamespace, nullptr);
  fxp::api() = v10;
  fxp::Graph g(handle());
  try {
    g.reset_namespace();
    FAIL() << "an older host cannot reset the namespace";
  } catch (const fxp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("GraphResetNamespace"),
              std::string::npos);
  }
}

// A pass run in a worker sends its graph back as a file: the host keeps the
// fresh namespace the file gives when the pass reset it, and its own names
// reserved otherwise.
TEST_F(RenameCAbi, AResetComesBackFromAnIsolatedPassesWorker) {
  for (bool reset : {false, true}) {
    SCOPED_TRACE(reset ? "reset" : "not reset");
    std::unique_ptr<GraphModule> worker = relu_chain();
    GraphModuleTarget worker_target(*worker);
    worker_target.begin();
    drop_second_relu(worker->graph());
    if (reset) worker->graph().reset_namespace();
    std::string bytes = worker_target.encode_changes();

    std::unique_ptr<GraphModule> host = relu_chain();
    GraphModuleTarget host_target(*host);
    host_target.begin();
    ASSERT_TRUE(host_target.apply_changes(bytes).ok());
    host_target.commit();
    Graph& g = host->graph();
    Node* out = nullptr;
    for (Node* n : g.nodes()) out = n;
    Graph::InsertPoint at = g.inserting_before(out);
    Node* relu = g.find_nodes(Opcode::kCallFunction, "torch.relu").at(0);
    EXPECT_EQ(g.call_function("torch.relu", {relu})->name(),
              reset ? "relu_1" : "relu_2");
  }
}

}  // namespace
}  // namespace fx::host
