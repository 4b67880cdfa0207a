// fx::Graph: naming, erasing, lint, insertion points, copies, dead code
// elimination, find_nodes and the graph's text forms.
//
// Every expected name, order, text and message is torch.fx 1.13's output for
// the same graph built with the torch.fx.Graph API (its `[#users=N]` is
// spelled `[num_users=N]` here, the only allowed difference). Messages marked
// "newer torch.fx" come from releases after 1.13, which checks less.
#include "fx_core/ir/graph.h"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "fx_core/ir/codegen.h"
#include "fx_core/support/error.h"
#include "tests/testing/graph_helpers.h"

namespace fx {
namespace {

using testing::error_of;
using testing::graph_order;
using testing::Names;
using testing::names_of;

// ------------------------------------------------------------------ names

TEST(GraphNames, RepeatedTargetsCountUp) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("operator.add", {x, 1});
  Node* b = g.call_function("operator.add", {a, 1});
  Node* c = g.call_method("__add__", {x, x});
  EXPECT_EQ(a->name(), "add");
  EXPECT_EQ(b->name(), "add_1");
  EXPECT_EQ(c->name(), "add_2");  // magic method names lose their dunders
}

TEST(GraphNames, CallFunctionIsNamedAfterTheFunctionName) {
  Graph g;
  Node* x = g.placeholder("x");
  EXPECT_EQ(g.call_function("torch.nn.functional.relu", {x})->name(), "relu");
  EXPECT_EQ(g.call_function("torch.relu", {x})->name(), "relu_1");
  EXPECT_EQ(g.call_function("math.sqrt", {x})->name(), "sqrt");
}

TEST(GraphNames, StringTargetsAreSnakeCasedAndSanitised) {
  // torch.fx 1.13: layer1_0_conv, pascal_case, all_caps, foo_bar_baz,
  // linear_weight, conv2d_layer.
  Graph g;
  Node* x = g.placeholder("x");
  EXPECT_EQ(g.call_module("layer1.0.conv", {x})->name(), "layer1_0_conv");
  EXPECT_EQ(g.call_method("pascalCase", {x})->name(), "pascal_case");
  EXPECT_EQ(g.get_attr("ALL_CAPS")->name(), "all_caps");
  EXPECT_EQ(g.call_module("foo-bar.baz", {x})->name(), "foo_bar_baz");
  EXPECT_EQ(g.get_attr("linear.weight")->name(), "linear_weight");
  EXPECT_EQ(g.call_module("conv2dLayer", {x})->name(), "conv2d_layer");
}

TEST(GraphNames, BuiltinNamesAreAvoided) {
  // builtins.sum, then torch.sum: sum_1, sum_2; placeholder input: input_1;
  // getattr: getattr_1; len: len_1.
  Graph g;
  Node* x = g.placeholder("x");
  EXPECT_EQ(g.call_function("builtins.sum", {x})->name(), "sum_1");
  EXPECT_EQ(g.call_function("torch.sum", {x})->name(), "sum_2");
  EXPECT_EQ(g.placeholder("input")->name(), "input_1");
  EXPECT_EQ(g.call_function("builtins.getattr", {x, "shape"})->name(),
            "getattr_1");
  EXPECT_EQ(g.call_function("builtins.len", {x})->name(), "len_1");
}

TEST(GraphNames, KeywordsAndCodegenGlobalsAreAvoided) {
  Graph g;
  Node* f = g.placeholder("for");
  EXPECT_EQ(f->name(), "for_1");
  EXPECT_EQ(f->target(), "for");
  EXPECT_EQ(g.placeholder("class")->name(), "class_1");
  EXPECT_EQ(g.placeholder("torch")->name(), "torch_1");
  EXPECT_EQ(g.placeholder("device")->name(), "device_1");
}

TEST(GraphNames, ALeadingDigitGetsAnUnderscore) {
  Graph g;
  EXPECT_EQ(g.placeholder("9lives")->name(), "_9lives");
}

TEST(GraphNames, ExplicitNamesAreSanitisedAndMadeUnique) {
  // create_node(..., name='my name!') -> my_name_; with add, add_1, add_2
  // taken, name='add_1' -> add_3 and name='add_01' -> add_4.
  Graph g;
  Node* x = g.placeholder("x");
  g.call_function("operator.add", {x, 1});
  g.call_function("operator.add", {x, 1});
  g.call_method("__add__", {x, x});
  EXPECT_EQ(g.create_node(Opcode::kCallFunction, "operator.mul", {x, x}, {},
                          "my name!")
                ->name(),
            "my_name_");
  EXPECT_EQ(
      g.create_node(Opcode::kCallFunction, "operator.mul", {x, x}, {}, "add_1")
          ->name(),
      "add_3");
  EXPECT_EQ(
      g.create_node(Opcode::kCallFunction, "operator.mul", {x, x}, {}, "add_01")
          ->name(),
      "add_4");
}

TEST(GraphNames, NamesAreNeverReusedAfterErase) {
  // torch.fx 1.13: ['x', 'add_3'].
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("operator.add", {x, 1});
  Node* b = g.call_function("operator.add", {a, 1});
  g.erase_node(b);
  Node* c = g.call_function("operator.add", {a, 1});
  EXPECT_EQ(c->name(), "add_2");
  g.erase_node(c);
  g.erase_node(a);
  Node* d = g.call_function("operator.add", {x, 1});
  EXPECT_EQ(d->name(), "add_3");
  EXPECT_EQ(graph_order(g), (Names{"x", "add_3"}));
}

TEST(GraphNames, OutputIsNamedOutput) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* out = g.output(x);
  EXPECT_EQ(out->name(), "output");
  EXPECT_EQ(out->target(), "output");
  EXPECT_EQ(g.output_node(), out);
}

// ----------------------------------------------------------------- erase

TEST(GraphErase, ANodeWithUsersIsRefused) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("operator.add", {x, 1});
  g.call_function("operator.mul", {a, a});
  g.call_function("torch.relu", {a});
  EXPECT_EQ(error_of([&] { g.erase_node(a); }),
            "Tried to erase Node add but it still had 2 users in the graph: "
            "{mul: None, relu: None}!");
  EXPECT_EQ(error_of([&] { g.erase_node(x); }),
            "Tried to erase Node x but it still had 1 users in the graph: "
            "{add: None}!");
  EXPECT_FALSE(a->erased());
  EXPECT_EQ(g.size(), 4u);
}

TEST(GraphErase, ANodeOfAnotherGraphIsRefused) {
  Graph g;
  g.placeholder("x");
  Graph h;
  Node* y = h.placeholder("y");
  // Newer torch.fx's message (1.13 does not check).
  EXPECT_EQ(error_of([&] { g.erase_node(y); }),
            "Attempting to remove y from wrong graph!");
  EXPECT_FALSE(y->erased());
  EXPECT_EQ(h.size(), 1u);
  EXPECT_EQ(g.size(), 1u);
}

TEST(GraphErase, UsersAreCheckedBeforeTheGraph) {
  // Newer torch.fx reports the users first.
  Graph g;
  Graph h;
  Node* y = h.placeholder("y");
  h.call_function("torch.relu", {y});
  EXPECT_EQ(error_of([&] { g.erase_node(y); }),
            "Tried to erase Node y but it still had 1 users in the graph: "
            "{relu: None}!");
}

TEST(GraphErase, ErasingTwiceDoesNothing) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("torch.relu", {x});
  g.erase_node(a);
  EXPECT_NO_THROW(g.erase_node(a));
  EXPECT_EQ(g.size(), 1u);
}

TEST(GraphErase, ErasingUpdatesTheInputsUsersAndTheSize) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("torch.relu", {x});
  Node* b = g.call_function("torch.neg", {x});
  g.erase_node(a);
  EXPECT_EQ(names_of(x->users()), (Names{"neg"}));
  EXPECT_EQ(g.size(), 2u);
  EXPECT_EQ(graph_order(g), (Names{"x", "neg"}));
  EXPECT_EQ(x->next(), b);
}

TEST(GraphErase, IterationSurvivesErasingTheCurrentNode) {
  Graph g;
  Node* x = g.placeholder("x");
  g.call_function("torch.relu", {x});
  g.call_function("torch.neg", {x});
  g.call_function("torch.tanh", {x});
  Names visited;
  for (Node* n : g.nodes()) {
    visited.emplace_back(n->name());
    if (n->op() == Opcode::kCallFunction) g.erase_node(n);
  }
  EXPECT_EQ(visited, (Names{"x", "relu", "neg", "tanh"}));
  EXPECT_EQ(graph_order(g), (Names{"x"}));
}

TEST(GraphErase, PurgeFreesErasedNodesAndKeepsLiveOnes) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("torch.relu", {x});
  g.erase_node(a);
  g.purge_erased_nodes();
  EXPECT_EQ(graph_order(g), (Names{"x"}));
  EXPECT_EQ(x->num_users(), 0u);
}

// ------------------------------------------------------------------- lint

TEST(GraphLint, AWellFormedGraphPasses) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("operator.add", {x, 1}, {{"alpha", x}});
  g.output(Argument::tuple({a, x}));
  EXPECT_NO_THROW(g.lint());
}

TEST(GraphLint, UseBeforeDefinitionIsReportedWithTheGraph) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("operator.add", {x, 1});
  Node* b = g.call_function("torch.relu", {a});
  g.output(b);
  a->prepend(b);
  EXPECT_EQ(error_of([&] { g.lint(); }),
            "Argument 'add' of Node 'relu' was used before it has been "
            "defined! Please check that Nodes in the graph are topologically "
            "ordered\n"
            "graph():\n"
            "    %x : [num_users=1] = placeholder[target=x]\n"
            "    %relu : [num_users=1] = call_function[target=torch.relu]"
            "(args = (%add,), kwargs = {})\n"
            "    %add : [num_users=1] = call_function[target=operator.add]"
            "(args = (%x, 1), kwargs = {})\n"
            "    return relu");
}

TEST(GraphLint, UseBeforeDefinitionInKwargsIsReported) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("torch.relu", {x});
  Node* b = g.call_function("torch.add", {x}, {{"other", a}});
  a->prepend(b);
  std::string message = error_of([&] { g.lint(); });
  EXPECT_EQ(message.substr(0, message.find('!') + 1),
            "Argument 'relu' of Node 'add' was used before it has been "
            "defined!");
}

// An owning module with `layer` (a module holding `weight`) only.
class FakeOwner : public GraphOwner {
 public:
  AttrKind resolve_attr(std::string_view name) const override {
    if (name == "layer") return AttrKind::kModule;
    if (name == "layer.weight") return AttrKind::kParameter;
    return AttrKind::kMissing;
  }
  bool has_function(std::string_view target) const override {
    return target == "torch.relu";
  }
};

TEST(GraphLint, WithAnOwnerGetAttrOfAMissingAttributeIsReported) {
  FakeOwner owner;
  Graph g;
  g.set_owning_module(&owner);
  g.placeholder("x");
  g.get_attr("nothing.here");
  EXPECT_EQ(error_of([&] { g.lint(); }),
            "Node nothing_here target nothing.here references nonexistent "
            "attribute nothing of ");
}

TEST(GraphLint, WithAnOwnerANestedMissingAttributeNamesItsParent) {
  FakeOwner owner;
  Graph g;
  g.set_owning_module(&owner);
  g.get_attr("layer.nothing");
  EXPECT_EQ(error_of([&] { g.lint(); }),
            "Node layer_nothing target layer.nothing references nonexistent "
            "attribute nothing of layer");
}

TEST(GraphLint, WithAnOwnerCallModuleOfAParameterIsReported) {
  FakeOwner owner;
  Graph g;
  g.set_owning_module(&owner);
  Node* x = g.placeholder("x");
  g.get_attr("layer.weight");
  g.call_module("layer.weight", {x});
  EXPECT_EQ(error_of([&] { g.lint(); }),
            "Node layer_weight_1 target layer.weight weight of layer does not "
            "reference an nn.Module");
}

TEST(GraphLint, WithAnOwnerKnownTargetsPass) {
  FakeOwner owner;
  Graph g;
  g.set_owning_module(&owner);
  Node* x = g.placeholder("x");
  Node* l = g.call_module("layer", {x});
  Node* w = g.get_attr("layer.weight");
  g.output(g.call_function("torch.relu", {l, w}));
  EXPECT_NO_THROW(g.lint());
}

TEST(GraphLint, WithAnOwnerAnUnknownFunctionIsReported) {
  FakeOwner owner;
  Graph g;
  g.set_owning_module(&owner);
  Node* x = g.placeholder("x");
  g.call_function("torch.unknown_op", {x});
  // torch.fx only checks that the target is callable; the SDK checks that it
  // can run it.
  std::string message = error_of([&] { g.lint(); });
  EXPECT_NE(message.find("unknown_op"), std::string::npos) << message;
}

// ------------------------------------------------------- insertion points

// x, relu(x), output(relu): the insertion points of graph2.py in torch.fx
// 1.13.
class GraphInsert : public ::testing::Test {
 protected:
  void SetUp() override {
    x_ = g_.placeholder("x");
    relu_ = g_.call_function("torch.relu", {x_});
    g_.output(relu_);
  }
  Graph g_;
  Node *x_, *relu_;
};

TEST_F(GraphInsert, NewNodesGoToTheEndByDefault) {
  g_.call_function("torch.exp", {x_});
  EXPECT_EQ(graph_order(g_), (Names{"x", "relu", "output", "exp"}));
}

TEST_F(GraphInsert, InsertingBeforeKeepsCreationOrder) {
  {
    auto guard = g_.inserting_before(relu_);
    Node* a = g_.call_function("operator.add", {x_, 1});
    g_.call_function("operator.add", {a, 2});
  }
  EXPECT_EQ(graph_order(g_), (Names{"x", "add", "add_1", "relu", "output"}));
}

TEST_F(GraphInsert, InsertingAfterPutsEachNodeRightAfterTheAnchor) {
  {
    auto guard = g_.inserting_after(x_);
    g_.call_function("operator.neg", {x_});
    g_.call_function("operator.neg", {x_});
  }
  EXPECT_EQ(graph_order(g_), (Names{"x", "neg_1", "neg", "relu", "output"}));
}

TEST_F(GraphInsert, TheGuardRestoresThePreviousPointWhenItEnds) {
  {
    auto guard = g_.inserting_before(relu_);
    g_.call_function("torch.sigmoid", {x_});
  }
  g_.call_function("torch.exp", {x_});
  EXPECT_EQ(graph_order(g_), (Names{"x", "sigmoid", "relu", "output", "exp"}));
}

TEST_F(GraphInsert, NestedGuardsRestoreTheEnclosingPoint) {
  {
    auto outer = g_.inserting_after(x_);
    {
      auto inner = g_.inserting_before(relu_);
      g_.call_function("torch.sigmoid", {x_});
    }
    g_.call_function("torch.tanh", {x_});
  }
  g_.call_function("torch.exp", {x_});
  // torch.fx 1.13 (the same nesting of `with` blocks):
  EXPECT_EQ(graph_order(g_),
            (Names{"x", "tanh", "sigmoid", "relu", "output", "exp"}));
}

TEST_F(GraphInsert, InsertingBeforeNullGoesToTheStart) {
  {
    auto guard = g_.inserting_before(nullptr);
    g_.placeholder("p1");
    g_.placeholder("p2");
  }
  // torch.fx 1.13: each lands right after the root, so p2 comes first.
  EXPECT_EQ(graph_order(g_), (Names{"p2", "p1", "x", "relu", "output"}));
}

TEST_F(GraphInsert, InsertingAfterNullGoesToTheEnd) {
  {
    auto guard = g_.inserting_before(relu_);
    auto end = g_.inserting_after(nullptr);
    g_.call_function("torch.abs", {x_});
  }
  EXPECT_EQ(graph_order(g_), (Names{"x", "relu", "output", "abs_1"}));
}

TEST_F(GraphInsert, AnAnchorOfAnotherGraphIsRefused) {
  Graph h;
  Node* y = h.placeholder("y");
  // torch.fx's assertion messages.
  EXPECT_EQ(error_of([&] { auto guard = g_.inserting_before(y); }),
            "Node to insert before is not in graph.");
  EXPECT_EQ(error_of([&] { auto guard = g_.inserting_after(y); }),
            "Node to insert after is not in graph.");
}

TEST_F(GraphInsert, SetInsertPointIsThePermanentForm) {
  g_.set_insert_point(x_, /*after=*/true);
  EXPECT_EQ(g_.insert_point(), std::make_pair(x_, true));
  g_.call_function("torch.neg", {x_});
  g_.set_insert_point(nullptr, /*after=*/false);
  EXPECT_EQ(g_.insert_point(),
            std::make_pair(static_cast<Node*>(nullptr), false));
  g_.call_function("torch.exp", {x_});
  EXPECT_EQ(graph_order(g_), (Names{"x", "neg", "relu", "output", "exp"}));
}

// ---------------------------------------------------------------- copies

TEST(GraphCopy, InlinesAGraphThroughTheValueMap) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* relu = g.call_function("torch.relu", {x});
  Node* add = g.call_function("operator.add", {relu, 1});
  g.output(add);

  Graph h;
  Node* y = h.placeholder("y");
  Node* add0 = h.call_function("operator.add", {y, y});
  Graph::ValueMap val_map = {{x, add0}};
  const Node* old_output = nullptr;
  std::optional<Argument> out = h.graph_copy(g, val_map, &old_output);
  ASSERT_TRUE(out.has_value());
  h.output(*out);

  EXPECT_EQ(old_output, g.output_node());
  // torch.fx 1.13: {'x': 'add', 'relu': 'relu', 'add': 'add_1'}.
  EXPECT_EQ(val_map.size(), 3u);
  EXPECT_EQ(val_map.at(x)->name(), "add");
  EXPECT_EQ(val_map.at(relu)->name(), "relu");
  EXPECT_EQ(val_map.at(add)->name(), "add_1");
  EXPECT_EQ(h.str(),
            "graph():\n"
            "    %y : [num_users=1] = placeholder[target=y]\n"
            "    %add : [num_users=1] = call_function[target=operator.add]"
            "(args = (%y, %y), kwargs = {})\n"
            "    %relu : [num_users=1] = call_function[target=torch.relu]"
            "(args = (%add,), kwargs = {})\n"
            "    %add_1 : [num_users=1] = call_function[target=operator.add]"
            "(args = (%relu, 1), kwargs = {})\n"
            "    return add_1");
  EXPECT_NO_THROW(h.lint());
}

TEST(GraphCopy, WithoutAnOutputReturnsNothing) {
  Graph g;
  Node* x = g.placeholder("x");
  g.call_function("torch.relu", {x});
  Graph h;
  Graph::ValueMap val_map;
  EXPECT_FALSE(h.graph_copy(g, val_map).has_value());
  EXPECT_EQ(graph_order(h), (Names{"x", "relu"}));
}

TEST(GraphCopy, NodeCopyMapsArgumentsAndCopiesMeta) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("torch.relu", {x});
  a->set_meta("k", 1);
  Graph h;
  Node* y = h.placeholder("x");
  Node* c = h.node_copy(a, [&](Node*) { return Argument(y); });
  Node* c2 = h.node_copy(a, [&](Node*) { return Argument(c); });
  // torch.fx 1.13:
  EXPECT_EQ(h.str(),
            "graph():\n"
            "    %x : [num_users=1] = placeholder[target=x]\n"
            "    %relu : [num_users=1] = call_function[target=torch.relu]"
            "(args = (%x,), kwargs = {})\n"
            "    %relu_1 : [num_users=0] = call_function[target=torch.relu]"
            "(args = (%relu,), kwargs = {})");
  ASSERT_NE(c2->meta_value("k"), nullptr);
  EXPECT_EQ(c2->meta_value("k")->as_int(), 1);
  c->set_meta("k", 2);
  EXPECT_EQ(a->meta_value("k")->as_int(), 1);
}

TEST(GraphCopy, NodeCopyWithoutATransformNeedsSameGraphArguments) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("torch.relu", {x});
  Node* copy = g.node_copy(a);
  EXPECT_EQ(copy->name(), "relu_1");
  EXPECT_EQ(copy->args()[0].as_node(), x);
  Graph h;
  EXPECT_THROW(h.node_copy(a), FxError);
  EXPECT_EQ(h.size(), 0u);
}

TEST(GraphCopy, DeepcopyIsIndependent) {
  Graph g;
  Node* x = g.placeholder("x", "torch.Tensor");
  Node* relu = g.call_function("torch.relu", {x});
  relu->set_meta("k", 1);
  g.output(relu, "torch.Tensor");

  std::unique_ptr<Graph> copy = g.deepcopy();
  const std::string text =
      "graph():\n"
      "    %x : torch.Tensor [num_users=1] = placeholder[target=x]\n"
      "    %relu : [num_users=1] = call_function[target=torch.relu]"
      "(args = (%x,), kwargs = {})\n"
      "    return relu";
  EXPECT_EQ(copy->str(), text);
  Node* relu2 = copy->nodes().to_vector()[1];
  EXPECT_NE(relu2, relu);
  EXPECT_EQ(relu2->graph(), copy.get());
  EXPECT_EQ(relu2->meta_value("k")->as_int(), 1);
  EXPECT_EQ(copy->output_node()->type(), "torch.Tensor");

  relu2->set_target("torch.neg");
  copy->erase_node(copy->output_node());
  // torch.fx 1.13: the original is unchanged, the copy is:
  EXPECT_EQ(g.str(), text);
  EXPECT_EQ(copy->str(),
            "graph():\n"
            "    %x : torch.Tensor [num_users=1] = placeholder[target=x]\n"
            "    %relu : [num_users=0] = call_function[target=torch.neg]"
            "(args = (%x,), kwargs = {})");
}

TEST(GraphCopy, DeepcopyKeepsTheNamespace) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("torch.relu", {x});
  Node* b = g.call_function("torch.relu", {a});
  g.erase_node(b);
  g.output(a);
  std::unique_ptr<Graph> copy = g.deepcopy();
  // The copy's names come from copying; a new relu continues from there.
  Node* first = copy->nodes().to_vector()[0];
  EXPECT_EQ(copy->call_function("torch.relu", {first})->name(), "relu_1");
}

// The pass manager's rollback copy: what deepcopy() copies, each node under
// its own name (explicit, counted up, after an erase), and a namespace that
// names the next nodes exactly as the original's does.
TEST(GraphCopy, SnapshotIsTheGraphAndItsNamespace) {
  Graph g;
  Node* x = g.placeholder("x", "torch.Tensor");
  Node* a = g.call_function("torch.relu", {x});
  Node* b = g.call_function("torch.relu", {a});
  Node* named = g.create_node(Opcode::kCallFunction, "torch.add", {a, b},
                              {{"alpha", Argument::list({x, 2})}}, "add_7",
                              "torch.Tensor");
  named->set_meta("tensor_meta", Argument::dict({{"shape", {1, 2}}}));
  g.erase_node(g.call_function("torch.relu", {named}));
  g.output(Argument::tuple({named, b}), "Tuple[torch.Tensor, torch.Tensor]");

  std::unique_ptr<Graph> copy = g.snapshot();
  EXPECT_EQ(copy->str(), g.str());
  EXPECT_EQ(copy->python_code("self").src, g.python_code("self").src);
  std::vector<Node*> ours = g.nodes().to_vector();
  std::vector<Node*> theirs = copy->nodes().to_vector();
  ASSERT_EQ(ours.size(), theirs.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(theirs[i]->graph(), copy.get());
    EXPECT_EQ(names_of(theirs[i]->users()), names_of(ours[i]->users()));
    EXPECT_EQ(theirs[i]->meta(), ours[i]->meta());
  }
  for (const char* target : {"torch.relu", "torch.add", "add_7", "x"}) {
    EXPECT_EQ(copy->call_function(target, {theirs[0]})->name(),
              g.call_function(target, {ours[0]})->name())
        << target;
  }
}

// The snapshot shares each node's meta and type with the original until
// either writes: a write on one side is never seen on the other, and the
// snapshot outlives the original.
TEST(GraphCopy, SnapshotMetaAndTypeAreCopiedOnWrite) {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x", "torch.Tensor");
  Node* y = g->call_function("torch.relu", {x});
  y->set_type("torch.Tensor", "'torch.Tensor'");
  y->set_meta("stack", Argument("a"));
  g->output(y);
  std::unique_ptr<Graph> copy = g->snapshot();
  Node* cy = copy->nodes().to_vector()[1];

  y->set_meta("stack", Argument("changed"));
  y->set_meta("extra", Argument(1));
  x->set_type("int");
  EXPECT_EQ(cy->meta(), (ArgumentDict{{"stack", Argument("a")}}));
  EXPECT_EQ(copy->nodes().to_vector()[0]->type(), "torch.Tensor");

  cy->mutable_meta().emplace_back("only_in_copy", Argument(true));
  cy->set_type("float");
  EXPECT_EQ(y->meta(), (ArgumentDict{{"stack", Argument("changed")},
                                     {"extra", Argument(1)}}));
  EXPECT_EQ(y->type(), "torch.Tensor");
  EXPECT_EQ(y->type_text(), "'torch.Tensor'");

  const std::string code = copy->python_code("self").src;
  g.reset();
  EXPECT_EQ(cy->name(), "relu");
  EXPECT_EQ(cy->type(), "float");
  EXPECT_EQ(copy->python_code("self").src, code);
  EXPECT_EQ(copy->call_function("torch.relu", {cy})->name(), "relu_1");
}

TEST(GraphCopy, DeepcopyFillsTheMemo) {
  Graph g;
  Node* x = g.placeholder("x");
  g.output(x);
  Graph::ValueMap memo;
  std::unique_ptr<Graph> copy = g.deepcopy(&memo);
  ASSERT_TRUE(memo.contains(x));
  EXPECT_EQ(memo.at(x)->graph(), copy.get());
}

// ------------------------------------------------------- dead code

TEST(GraphDeadCode, RemovesUnusedPureNodesKeepingImpureOnes) {
  Graph g;
  Node* x = g.placeholder("x");
  g.placeholder("unused");
  Node* a = g.call_function("operator.add", {x, 1});
  g.call_function("torch.relu", {a});
  g.call_function("torch._assert", {true, "msg"});
  Node* d = g.call_function("operator.mul", {x, 2});
  g.output(d);
  EXPECT_TRUE(g.eliminate_dead_code());
  // torch.fx 1.13: True, ['x', 'unused', '_assert', 'mul', 'output'] and:
  EXPECT_EQ(g.str(),
            "graph():\n"
            "    %x : [num_users=1] = placeholder[target=x]\n"
            "    %unused : [num_users=0] = placeholder[target=unused]\n"
            "    %_assert : [num_users=0] = call_function[target=torch._assert]"
            "(args = (True, msg), kwargs = {})\n"
            "    %mul : [num_users=1] = call_function[target=operator.mul]"
            "(args = (%x, 2), kwargs = {})\n"
            "    return mul");
}

TEST(GraphDeadCode, ReportsNoChangeWhenNothingIsDead) {
  Graph g;
  Node* x = g.placeholder("x");
  g.output(g.call_function("torch.relu", {x}));
  EXPECT_FALSE(g.eliminate_dead_code());
  EXPECT_EQ(g.size(), 3u);
}

TEST(GraphDeadCode, LintsFirst) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("torch.relu", {x});
  Node* b = g.call_function("torch.neg", {a});
  g.output(b);
  a->prepend(b);
  EXPECT_THROW(g.eliminate_dead_code(), FxError);
  EXPECT_EQ(g.size(), 4u);
}

// ------------------------------------------------------------ find_nodes

TEST(GraphFindNodes, FindsByOpcodeAndTargetInGraphOrder) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("operator.add", {x, 1});
  g.call_method("add", {x, 1});
  Node* b = g.call_function("operator.add", {a, 2});
  {
    auto guard = g.inserting_before(a);
    g.call_function("operator.add", {x, 3});
  }
  // [n.name for n in g.nodes if n.op == ... and n.target == ...] in
  // torch.fx 1.13: ['add_3', 'add', 'add_2'] and ['add_1'].
  EXPECT_EQ(names_of(g.find_nodes(Opcode::kCallFunction, "operator.add")),
            (Names{"add_3", "add", "add_2"}));
  EXPECT_EQ(names_of(g.find_nodes(Opcode::kCallMethod, "add")),
            (Names{"add_1"}));
  EXPECT_EQ(g.find_nodes(Opcode::kCallFunction, "operator.add").back(), b);
  EXPECT_TRUE(g.find_nodes(Opcode::kCallFunction, "torch.relu").empty());
  EXPECT_EQ(names_of(g.find_nodes(Opcode::kPlaceholder, "x")), (Names{"x"}));
}

TEST(GraphFindNodes, ForgetsErasedNodes) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("torch.relu", {x});
  g.call_function("torch.relu", {x});
  g.erase_node(a);
  EXPECT_EQ(names_of(g.find_nodes(Opcode::kCallFunction, "torch.relu")),
            (Names{"relu_1"}));
}

TEST(GraphFindNodes, FollowsSetTarget) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("torch.relu", {x});
  a->set_target("torch.neg");
  EXPECT_TRUE(g.find_nodes(Opcode::kCallFunction, "torch.relu").empty());
  EXPECT_EQ(names_of(g.find_nodes(Opcode::kCallFunction, "torch.neg")),
            (Names{"relu"}));
}

TEST(GraphFindNodes, FollowsMoves) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("torch.relu", {x});
  Node* b = g.call_function("torch.relu", {x});
  a->prepend(b);
  EXPECT_EQ(names_of(g.find_nodes(Opcode::kCallFunction, "torch.relu")),
            (Names{"relu_1", "relu"}));
}

// The index is built by the first find_nodes; edits after it keep it right.
TEST(GraphFindNodes, IndexBuiltByAFirstSearchFollowsLaterEdits) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("torch.relu", {x});
  Node* b = g.call_function("torch.relu", {x});
  EXPECT_EQ(names_of(g.find_nodes(Opcode::kCallFunction, "torch.relu")),
            (Names{"relu", "relu_1"}));
  Node* c = g.call_function("torch.relu", {x});
  g.erase_node(a);
  b->set_target("torch.neg");
  EXPECT_EQ(names_of(g.find_nodes(Opcode::kCallFunction, "torch.relu")),
            (Names{"relu_2"}));
  EXPECT_EQ(names_of(g.find_nodes(Opcode::kCallFunction, "torch.neg")),
            (Names{"relu_1"}));
  g.erase_node(c);
  EXPECT_TRUE(g.find_nodes(Opcode::kCallFunction, "torch.relu").empty());
  std::unique_ptr<Graph> copy = g.deepcopy();
  EXPECT_EQ(names_of(copy->find_nodes(Opcode::kCallFunction, "torch.neg")),
            (Names{"relu_1"}));
}

// ------------------------------------------------------------ iteration

TEST(GraphNodes, IterateForwardAndBackward) {
  Graph g;
  Node* x = g.placeholder("x");
  g.output(g.call_function("torch.relu", {x}));
  EXPECT_EQ(graph_order(g), (Names{"x", "relu", "output"}));
  EXPECT_EQ(names_of(g.reversed_nodes().to_vector()),
            (Names{"output", "relu", "x"}));
  EXPECT_EQ(g.size(), 3u);
}

TEST(GraphNodes, AnEmptyGraphHasNoNodes) {
  Graph g;
  EXPECT_EQ(g.size(), 0u);
  EXPECT_EQ(g.first(), nullptr);
  EXPECT_EQ(g.last(), nullptr);
  EXPECT_EQ(g.output_node(), nullptr);
  EXPECT_TRUE(g.nodes().to_vector().empty());
  EXPECT_EQ(g.str(), "graph():");
}

// ------------------------------------------------------------------ text

TEST(GraphText, PrintsEveryOpcode) {
  // The docs' MyModule as torch.fx 1.13 prints it.
  Graph g;
  Node* x = g.placeholder("x");
  Node* param = g.get_attr("param");
  Node* add = g.call_function("operator.add", {x, param});
  Node* linear = g.call_module("linear", {add});
  Node* clamp = g.call_method("clamp", {linear}, {{"min", 0.0}, {"max", 1.0}});
  g.output(clamp);
  EXPECT_EQ(g.str(),
            "graph():\n"
            "    %x : [num_users=1] = placeholder[target=x]\n"
            "    %param : [num_users=1] = get_attr[target=param]\n"
            "    %add : [num_users=1] = call_function[target=operator.add]"
            "(args = (%x, %param), kwargs = {})\n"
            "    %linear : [num_users=1] = call_module[target=linear]"
            "(args = (%add,), kwargs = {})\n"
            "    %clamp : [num_users=1] = call_method[target=clamp]"
            "(args = (%linear,), kwargs = {min: 0.0, max: 1.0})\n"
            "    return clamp");
}

TEST(GraphText, PrintsEveryArgumentKind) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Graph g;
  Node* x = g.placeholder("x");
  Node* full = g.call_function(
      "torch.full", {},
      {{"none", nullptr},
       {"t", true},
       {"f", false},
       {"i", -3},
       {"big", int64_t{1} << 40},
       {"fl", 0.5},
       {"small", 1e-05},
       {"huge", 1e16},
       {"hundred", 100.0},
       {"pinf", kInf},
       {"ninf", -kInf},
       {"nan", std::numeric_limits<double>::quiet_NaN()},
       {"s", "ab"},
       {"q", "it's"},
       {"dq", "say \"hi\""},
       {"both", "it's \"x\""},
       {"nl", "a\nb\\"},
       {"node", x},
       {"lst", Argument::list({x, 1, "a"})},
       {"tup", Argument::tuple({x, 2.0})},
       {"one", Argument::tuple({1})},
       {"empty", Argument::tuple({})},
       {"el", Argument::list({})},
       {"d", Argument::dict({{"k", x}, {"v", "w"}})},
       {"sl", Argument::slice(nullptr, 2, nullptr)},
       {"sl2", Argument::slice(x, nullptr, -1)},
       {"ell", Argument::ellipsis()},
       {"dt", Argument::dtype("torch.float32")},
       {"dev", Argument::device("cpu")},
       {"dev2", Argument::device("cuda:0")},
       {"mf", Argument::memory_format("torch.channels_last")},
       {"lay", Argument::layout("torch.strided")},
       {"nested",
        Argument::list({Argument::tuple(
            {1, Argument::list(
                    {2, Argument::dict({{"a", Argument::tuple({x})}})})})})}});
  g.output(full);
  // torch.fx 1.13 (kinds.py):
  EXPECT_EQ(
      g.str(),
      "graph():\n"
      "    %x : [num_users=1] = placeholder[target=x]\n"
      "    %full : [num_users=1] = call_function[target=torch.full](args = (), "
      "kwargs = {none: None, t: True, f: False, i: -3, big: 1099511627776, fl: "
      "0.5, small: 1e-05, huge: 1e+16, hundred: 100.0, pinf: inf, ninf: -inf, "
      "nan: nan, s: ab, q: it's, dq: say \"hi\", both: it's \"x\", nl: a\n"
      "b\\, node: %x, lst: [%x, 1, a], tup: (%x, 2.0), one: (1,), empty: (), "
      "el: [], d: {k: %x, v: w}, sl: slice(None, 2, None), sl2: slice(x, None, "
      "-1), ell: Ellipsis, dt: torch.float32, dev: cpu, dev2: cuda:0, mf: "
      "torch.channels_last, lay: torch.strided, nested: [(1, [2, {a: "
      "(%x,)}])]})\n"
      "    return full");
}

TEST(GraphText, OutputAndDefaultsUsePythonStr) {
  Graph g;
  Node* p = g.placeholder("p", {}, Argument("hello"));
  Node* q = g.placeholder("q", {}, Argument());
  Node* r = g.placeholder("r", {}, Argument::tuple({1, "a"}));
  Node* s = g.placeholder("s", {}, Argument::device("cpu"));
  g.output(Argument::tuple(
      {p, "str", Argument::dict({{"a", q}}), Argument::list({r, s}), 1.5}));
  // torch.fx 1.13:
  EXPECT_EQ(g.str(),
            "graph():\n"
            "    %p : [num_users=1] = placeholder[target=p](default=hello)\n"
            "    %q : [num_users=1] = placeholder[target=q](default=None)\n"
            "    %r : [num_users=1] = placeholder[target=r](default=(1, 'a'))\n"
            "    %s : [num_users=1] = placeholder[target=s](default=cpu)\n"
            "    return (p, 'str', {'a': q}, [r, s], 1.5)");
}

TEST(GraphText, ReturnOfAStringOrDeviceIsBare) {
  Graph g;
  g.placeholder("p");
  g.output("a string");
  EXPECT_EQ(g.str(),
            "graph():\n"
            "    %p : [num_users=0] = placeholder[target=p]\n"
            "    return a string");
  Graph h;
  h.output(Argument::device("cuda:1"));
  EXPECT_EQ(h.str(), "graph():\n    return cuda:1");
}

TEST(GraphText, TypeAnnotationsUseTypingReprs) {
  // The code-form annotations torch.fx 1.13 generates, printed in the graph
  // text as torch.fx prints the typing objects.
  Graph g;
  Node* x = g.placeholder("x", "torch.Tensor");
  g.placeholder("l", "typing_List[int]");
  g.placeholder("t", "typing_Tuple[int,int]");
  g.placeholder("o", "typing_Union[torch.Tensor,NoneType]");
  g.placeholder("d", "typing_Dict[str,torch.Tensor]");
  g.output(x, "torch.Tensor");
  EXPECT_EQ(g.str(),
            "graph():\n"
            "    %x : torch.Tensor [num_users=1] = placeholder[target=x]\n"
            "    %l : typing.List[int] [num_users=0] = placeholder[target=l]\n"
            "    %t : typing.Tuple[int, int] [num_users=0] = "
            "placeholder[target=t]\n"
            "    %o : typing.Optional[torch.Tensor] [num_users=0] = "
            "placeholder[target=o]\n"
            "    %d : typing.Dict[str, torch.Tensor] [num_users=0] = "
            "placeholder[target=d]\n"
            "    return x");
}

TEST(GraphText, NestedAndOptionalUnionsUseTypingReprs) {
  Graph g;
  g.placeholder("a", "typing_Union[int,str,NoneType]");
  g.placeholder("b", "typing_Union[typing_List[int],NoneType]");
  g.placeholder("c", "typing_Union[NoneType,int]");
  g.placeholder("e", "typing_List[typing_Tuple[int,float]]");
  // torch.fx 1.13 (Union[int, str, None], Optional[List[int]],
  // Union[None, int], List[Tuple[int, float]]):
  EXPECT_EQ(g.str(),
            "graph():\n"
            "    %a : typing.Union[int, str, NoneType] [num_users=0] = "
            "placeholder[target=a]\n"
            "    %b : typing.Optional[typing.List[int]] [num_users=0] = "
            "placeholder[target=b]\n"
            "    %c : typing.Optional[int] [num_users=0] = "
            "placeholder[target=c]\n"
            "    %e : typing.List[typing.Tuple[int, float]] [num_users=0] = "
            "placeholder[target=e]");
}

TEST(GraphText, TabularMatchesPrintTabular) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* param = g.get_attr("param");
  Node* add = g.call_function("operator.add", {x, param});
  Node* linear = g.call_module("linear", {add});
  Node* clamp = g.call_method("clamp", {linear}, {{"min", 0.0}, {"max", 1.0}});
  Node* item = g.call_function("operator.getitem", {clamp, "k"});
  g.output(Argument::tuple({item, "a"}));
  // torch.fx 1.13's print_tabular() (tabulate 0.8.9):
  EXPECT_EQ(g.tabular(),
            "opcode         name     target                       args        "
            "       kwargs\n"
            "-------------  -------  ---------------------------  ------------"
            "-----  ------------------------\n"
            "placeholder    x        x                            ()          "
            "       {}\n"
            "get_attr       param    param                        ()          "
            "       {}\n"
            "call_function  add      <built-in function add>      (x, param)  "
            "       {}\n"
            "call_module    linear   linear                       (add,)      "
            "       {}\n"
            "call_method    clamp    clamp                        (linear,)   "
            "       {'min': 0.0, 'max': 1.0}\n"
            "call_function  getitem  <built-in function getitem>  (clamp, 'k')"
            "       {}\n"
            "output         output   output                       ((getitem, "
            "'a'),)  {}\n");
}

}  // namespace
}  // namespace fx
