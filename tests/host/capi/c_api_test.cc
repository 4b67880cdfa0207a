// The C ABI over fx_core, driven through the header-only C++ wrapper the way a
// plugin drives it: every call crosses the FxApi table.
#include "host/capi/c_api.h"

#include <ATen/DLConvertor.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>

#include "fx/plugin_api.hpp"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"

namespace fx {
namespace {

class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    fxp::api() = host::api();
    x_ = graph_.placeholder("x");
    relu_ = graph_.call_function("torch.relu", {x_});
    graph_.output(relu_);
  }
  fxp::Graph wrapped() { return fxp::Graph(host::to_handle(&graph_)); }

  Graph graph_;
  Node* x_ = nullptr;
  Node* relu_ = nullptr;
};

TEST_F(CApi, TableVersionIsTheHeaderVersion) {
  EXPECT_EQ(host::api()->version, static_cast<uint32_t>(FX_API_VERSION));
}

// NodeOperatorEffects (version 7) reads LibTorch's own declarations: the
// tag nondeterministic_seeded and the schema's written arguments, for every
// spelling of an ATen operator; nothing for Python-level functions.
TEST_F(CApi, OperatorEffectsComeFromTheSchemasAndTags) {
  struct Case {
    Opcode op;
    const char* target;
    uint32_t effects;
  };
  const Case cases[] = {
      {Opcode::kCallFunction, "torch.ops.aten.randn.default",
       FX_EFFECT_NONDETERMINISTIC},
      {Opcode::kCallFunction, "torch.ops.aten.rand_like",
       FX_EFFECT_NONDETERMINISTIC},
      {Opcode::kCallFunction, "torch.randn", FX_EFFECT_NONDETERMINISTIC},
      {Opcode::kCallFunction, "torch.nn.functional.dropout",
       FX_EFFECT_NONDETERMINISTIC},
      {Opcode::kCallFunction, "torch.ops.aten.native_dropout.default",
       FX_EFFECT_NONDETERMINISTIC},
      {Opcode::kCallMethod, "bernoulli", FX_EFFECT_NONDETERMINISTIC},
      {Opcode::kCallFunction, "torch.ops.aten.uniform_.default",
       FX_EFFECT_NONDETERMINISTIC | FX_EFFECT_MUTATES},
      {Opcode::kCallFunction, "torch.ops.aten.add_.Tensor", FX_EFFECT_MUTATES},
      {Opcode::kCallMethod, "relu_", FX_EFFECT_MUTATES},
      // add.out writes only its keyword-only `out`: not a mutation of add's.
      {Opcode::kCallFunction, "torch.add", 0},
      {Opcode::kCallFunction, "torch.ops.aten.add.Tensor", 0},
      {Opcode::kCallFunction, "torch.ops.aten.empty.memory_format", 0},
      {Opcode::kCallFunction, "operator.add", 0},
      {Opcode::kCallFunction, "torch.nn.functional.relu", 0},
  };
  for (const Case& c : cases) {
    Node* n = graph_.create_node(c.op, c.target, {x_}, {});
    EXPECT_EQ(host::api()->NodeOperatorEffects(host::to_handle(n)), c.effects)
        << c.target;
    EXPECT_EQ(fxp::Node(host::to_handle(n)).operator_effects(), c.effects);
    graph_.erase_node(n);
  }
  EXPECT_EQ(host::api()->NodeOperatorEffects(host::to_handle(x_)), 0u);
  EXPECT_EQ(host::api()->NodeOperatorEffects(nullptr), 0u);
  // Version-6 plugins have no such entry, and the wrapper says so.
  EXPECT_EQ(host::api(6)->NodeOperatorEffects, nullptr);
  fxp::api() = host::api(6);
  EXPECT_THROW(fxp::Node(host::to_handle(relu_)).operator_effects(),
               fxp::Error);
}

TEST_F(CApi, IteratesNodesInOrderWithNamesAndTargets) {
  std::vector<std::string> seen;
  for (fxp::Node n : wrapped()) {
    seen.push_back(std::string(n.name()) + ":" + std::string(n.target()));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"x:x", "relu:torch.relu",
                                            "output:output"}));
}

TEST_F(CApi, ReadsArgsUsersAndInputs) {
  fxp::Graph g = wrapped();
  fxp::Node relu = g.find_nodes(FX_OP_CALL_FUNCTION, "torch.relu").at(0);
  EXPECT_EQ(relu.num_args(), 1u);
  EXPECT_EQ(relu.arg(0).node().name(), "x");
  EXPECT_EQ(relu.users().at(0).name(), "output");
  EXPECT_EQ(relu.all_input_nodes().at(0).name(), "x");
  EXPECT_EQ(relu.op(), FX_OP_CALL_FUNCTION);
}

TEST_F(CApi, ProxyOperatorsRecordTheDocsDecomposition) {
  fxp::Graph g = wrapped();
  fxp::Node relu = g.find_nodes(FX_OP_CALL_FUNCTION, "torch.relu").at(0);
  {
    auto guard = g.inserting_before(relu);
    fxp::Value x = relu.arg(0).node();
    fxp::Value y = (x > 0) * x;
    relu.replace_all_uses_with(y.node());
  }
  g.erase_node(relu);
  EXPECT_EQ(
      graph_.str(),
      "graph():\n"
      "    %x : [num_users=2] = placeholder[target=x]\n"
      "    %gt : [num_users=1] = call_function[target=operator.gt](args "
      "= (%x, 0), kwargs = {})\n"
      "    %mul : [num_users=1] = call_function[target=operator.mul](args "
      "= (%gt, %x), kwargs = {})\n"
      "    return mul");
  EXPECT_NO_THROW(g.lint());
}

TEST_F(CApi, ErasingANodeWithUsersFailsWithTorchFxMessage) {
  fxp::Graph g = wrapped();
  try {
    g.erase_node(fxp::Node(host::to_handle(x_)));
    FAIL() << "expected an error";
  } catch (const fxp::Error& e) {
    EXPECT_EQ(e.code(), FX_FAILED_PRECONDITION);
    EXPECT_STREQ(e.what(),
                 "GraphEraseNode: Tried to erase Node x but it still had 1 "
                 "users in the graph: {relu: None}!");
  }
  EXPECT_EQ(graph_.size(), 3u);
}

// The status of `s` as "CODE message" (and released), or "OK".
std::string status_text(FxStatus* s) {
  if (s == nullptr) return "OK";
  std::string text = std::to_string(host::api()->GetStatusCode(s)) + " " +
                     host::api()->GetStatusMessage(s);
  host::api()->ReleaseStatus(s);
  return text;
}

// An erased node stays readable but every change through it is refused.
TEST_F(CApi, AnErasedNodeCanOnlyBeRead) {
  const FxApi* api = host::api();
  FxNode* output = host::to_handle(graph_.output_node());
  FxNode* relu = host::to_handle(relu_);
  ASSERT_EQ(status_text(api->NodeReplaceAllUsesWith(relu, host::to_handle(x_),
                                                    nullptr)),
            "OK");
  ASSERT_EQ(status_text(api->GraphEraseNode(host::to_handle(&graph_), relu)),
            "OK");
  const std::string erased =
      std::to_string(FX_FAILED_PRECONDITION) +
      " %s: node 'relu' was erased; an erased node can only be read";
  auto expect = [&](const char* entry, FxStatus* s) {
    std::string want = erased;
    want.replace(want.find("%s"), 2, entry);
    EXPECT_EQ(status_text(s), want);
  };
  expect("GraphEraseNode", api->GraphEraseNode(host::to_handle(&graph_), relu));
  expect("NodeSetTarget", api->NodeSetTarget(relu, "torch.sigmoid"));
  expect("NodeSetType", api->NodeSetType(relu, "torch.Tensor"));
  EXPECT_EQ(status_text(api->NodeAppend(output, relu)),
            std::to_string(FX_FAILED_PRECONDITION) +
                " NodeAppend: x 'relu' was erased; an erased node can only "
                "be read");
  EXPECT_EQ(status_text(api->NodeReplaceAllUsesWith(host::to_handle(x_), relu,
                                                    nullptr)),
            std::to_string(FX_FAILED_PRECONDITION) +
                " NodeReplaceAllUsesWith: replacement 'relu' was erased; an "
                "erased node can only be read");
  EXPECT_STREQ(api->NodeName(relu), "relu");
  EXPECT_EQ(api->NodeIsErased(relu), 1);
  EXPECT_STREQ(graph_.output_node()->args()[0].as_node()->name().data(), "x");
}

// A released graph is kept until the host frees it between passes, and
// every use of it or of its nodes until then is refused.
TEST_F(CApi, AReleasedGraphAndItsNodesAreRefused) {
  const FxApi* api = host::api();
  FxGraph* g = nullptr;
  ASSERT_EQ(status_text(api->CreateGraph(&g)), "OK");
  FxNode* x = nullptr;
  ASSERT_EQ(status_text(api->GraphCreateNode(g, FX_OP_PLACEHOLDER, "x", nullptr,
                                             0, nullptr, nullptr, 0, nullptr,
                                             nullptr, &x)),
            "OK");
  api->ReleaseGraph(g);
  api->ReleaseGraph(g);  // twice: still one release
  const std::string released =
      std::to_string(FX_FAILED_PRECONDITION) +
      " %s: the graph was released (ReleaseGraph); it and its nodes can no "
      "longer be used";
  auto expect = [&](const char* entry, FxStatus* s) {
    std::string want = released;
    want.replace(want.find("%s"), 2, entry);
    EXPECT_EQ(status_text(s), want);
  };
  expect("NodeSetTarget", api->NodeSetTarget(x, "y"));
  expect("GraphLint", api->GraphLint(g));
  FxNode* out = nullptr;
  expect("GraphCreateNode",
         api->GraphCreateNode(g, FX_OP_PLACEHOLDER, "y", nullptr, 0, nullptr,
                              nullptr, 0, nullptr, nullptr, &out));
  // The host's own graphs cannot be released by a plugin.
  api->ReleaseGraph(host::to_handle(&graph_));
  EXPECT_EQ(status_text(api->GraphLint(host::to_handle(&graph_))), "OK");
  host::free_released_graphs();
}

// Handles are checked, not followed: once its graph is freed, a handle is
// stale for good, even when a new graph or node takes its address; a node
// handle passed as a graph's and a made-up pointer are refused by name.
TEST_F(CApi, HandlesOfFreedObjectsAreStaleForGood) {
  const FxApi* api = host::api();
  FxGraph* g = nullptr;
  ASSERT_EQ(status_text(api->CreateGraph(&g)), "OK");
  FxNode* x = nullptr;
  ASSERT_EQ(status_text(api->GraphCreateNode(g, FX_OP_PLACEHOLDER, "x", nullptr,
                                             0, nullptr, nullptr, 0, nullptr,
                                             nullptr, &x)),
            "OK");
  EXPECT_EQ(api->GraphFirstNode(g), x);  // one handle per live object
  const Node* address = host::from_handle(x);
  api->ReleaseGraph(g);
  host::free_released_graphs();

  // New objects, likely at the freed addresses: other handles.
  std::vector<std::unique_ptr<Graph>> graphs;
  std::vector<FxNode*> fresh;
  for (int i = 0; i < 64; ++i) {
    graphs.push_back(std::make_unique<Graph>());
    Node* n = graphs.back()->placeholder("y");
    fresh.push_back(host::to_handle(n));
    EXPECT_NE(fresh.back(), x);
    if (n == address) {
      EXPECT_EQ(api->NodeName(fresh.back()), std::string("y"));
    }
  }
  const std::string stale =
      " the node handle is stale: its node no longer exists (its graph was "
      "rolled back after a failed pass, replaced, or released); ask the host "
      "for a fresh one";
  EXPECT_EQ(status_text(api->NodeSetTarget(x, "z")),
            std::to_string(FX_FAILED_PRECONDITION) + " NodeSetTarget:" + stale);
  EXPECT_EQ(api->NodeName(x), nullptr);
  EXPECT_EQ(api->NodeNext(x), nullptr);
  EXPECT_EQ(api->GraphNumNodes(g), 0u);
  EXPECT_EQ(status_text(api->GraphLint(g)),
            std::to_string(FX_FAILED_PRECONDITION) +
                " GraphLint: the graph handle is stale: its graph no longer "
                "exists (its graph was rolled back after a failed pass, "
                "replaced, or released); ask the host for a fresh one");
  api->ReleaseGraph(g);  // a stale handle: nothing happens

  FxNode* relu = host::to_handle(relu_);
  EXPECT_EQ(status_text(api->GraphLint(reinterpret_cast<FxGraph*>(relu))),
            std::to_string(FX_INVALID_ARGUMENT) +
                " GraphLint: the graph handle is a handle of another kind (a "
                "node)");
  EXPECT_EQ(api->GraphNumNodes(reinterpret_cast<FxGraph*>(relu)), 0u);
  int on_stack = 0;
  EXPECT_EQ(status_text(
                api->NodeSetTarget(reinterpret_cast<FxNode*>(&on_stack), "z")),
            std::to_string(FX_INVALID_ARGUMENT) +
                " NodeSetTarget: the node handle was not made by this host");
  EXPECT_EQ(api->NodeName(reinterpret_cast<FxNode*>(&on_stack)), nullptr);
}

// Arguments are checked handles too. A borrowed one names its owner and
// where in it (a node's args[i], an item of a list, a match's value) and is
// read from there again each time: it sees what the owner holds now, and is
// refused once the owner is gone (a released argument, a freed node, a
// match after its callback) or no longer has that index. Asking twice for
// the same value gives the same handle.
TEST_F(CApi, BorrowedAndReleasedArgumentsAreChecked) {
  const FxApi* api = host::api();
  const std::string stale_arg =
      std::to_string(FX_FAILED_PRECONDITION) +
      " ArgGetNode: the argument handle is stale: its argument no longer "
      "exists (it was released, or what it was borrowed from (a node, "
      "argument or match) is gone or no longer holds it); ask the host for a "
      "fresh one";
  FxNode* relu = host::to_handle(relu_);
  const FxArg* input = api->NodeArg(relu, 0);
  EXPECT_EQ(api->NodeArg(relu, 0), input);
  EXPECT_EQ(api->NodeArg(relu, 1), nullptr);
  FxNode* read = nullptr;
  ASSERT_EQ(status_text(api->ArgGetNode(input, &read)), "OK");
  EXPECT_EQ(read, host::to_handle(x_));
  // The node's args change: the handle reads the new args[0] ...
  relu_->set_args({relu_});
  ASSERT_EQ(status_text(api->ArgGetNode(input, &read)), "OK");
  EXPECT_EQ(read, relu);
  // ... and once there is no args[0], it is stale.
  relu_->set_args({});
  EXPECT_EQ(status_text(api->ArgGetNode(input, &read)), stale_arg);
  EXPECT_EQ(api->ArgKind(input), FX_ARG_NONE);

  // An item of an owned list turns stale when the list is released; a
  // released argument is refused, and releasing it again does nothing.
  FxArg* one = nullptr;
  ASSERT_EQ(status_text(api->CreateInt(1, &one)), "OK");
  FxArg* list = nullptr;
  const FxArg* items[] = {one, one};
  ASSERT_EQ(status_text(api->CreateList(items, 2, &list)), "OK");
  const FxArg* second = api->ArgItem(list, 1);
  int64_t value = 0;
  ASSERT_EQ(status_text(api->ArgGetInt(second, &value)), "OK");
  EXPECT_EQ(value, 1);
  api->ReleaseArg(list);
  api->ReleaseArg(list);
  EXPECT_EQ(api->ArgSize(list), 0u);
  EXPECT_EQ(api->ArgItem(list, 0), nullptr);
  FxStatus* s = api->ArgGetInt(second, &value);
  EXPECT_EQ(api->GetStatusCode(s), FX_FAILED_PRECONDITION);
  api->ReleaseStatus(s);
  api->ReleaseArg(one);
  s = api->ArgGetInt(one, &value);
  EXPECT_EQ(api->GetStatusCode(s), FX_FAILED_PRECONDITION);
  api->ReleaseStatus(s);

  // A node handle is not an argument; a made-up pointer is no handle.
  EXPECT_EQ(
      status_text(api->ArgGetNode(reinterpret_cast<const FxArg*>(relu), &read)),
      std::to_string(FX_INVALID_ARGUMENT) +
          " ArgGetNode: the argument handle is a handle of another "
          "kind (a node)");
  Argument on_stack(3);
  EXPECT_EQ(status_text(api->ArgGetInt(
                reinterpret_cast<const FxArg*>(&on_stack), &value)),
            std::to_string(FX_INVALID_ARGUMENT) +
                " ArgGetInt: the argument handle was not made by this host");
}

// Values borrowed from a node's meta or kwargs follow the key's slot; a
// node freed takes every argument borrowed from it (and from those) along.
TEST_F(CApi, ArgumentsBorrowedFromAFreedNodeAreStale) {
  const FxApi* api = host::api();
  auto graph = std::make_unique<Graph>();
  Node* y = graph->placeholder("y");
  y->set_meta("shape",
              Argument::tuple({Argument(int64_t{2}), Argument(int64_t{3})}));
  FxNode* handle = host::to_handle(y);
  const FxArg* shape = api->NodeGetMeta(handle, "shape");
  const FxArg* rows = api->ArgItem(shape, 0);
  int64_t value = 0;
  ASSERT_EQ(status_text(api->ArgGetInt(api->ArgItem(shape, 1), &value)), "OK");
  EXPECT_EQ(value, 3);
  EXPECT_EQ(api->NodeGetMeta(handle, "missing"), nullptr);
  graph.reset();
  FxStatus* s = api->ArgGetInt(rows, &value);
  EXPECT_EQ(api->GetStatusCode(s), FX_FAILED_PRECONDITION);
  api->ReleaseStatus(s);
  EXPECT_EQ(api->ArgSize(shape), 0u);
}

// A match is lent for its callback: kept longer, it and the values
// borrowed from it are refused.
TEST_F(CApi, AMatchKeptAfterItsCallbackIsStale) {
  const FxApi* api = host::api();
  Graph pattern;
  Node* p = pattern.placeholder("p");
  pattern.output(pattern.call_function("torch.relu", {p}));
  struct Kept {
    const FxMatch* match = nullptr;
    const FxArg* value = nullptr;
    size_t size_inside = 0;
  } kept;
  FxMatchFn keep = [](const FxMatch* m, void* data) -> FxStatus* {
    auto* k = static_cast<Kept*>(data);
    k->match = m;
    k->size_inside = host::api()->MatchSize(m);
    k->value = host::api()->MatchValue(m, 0);
    return nullptr;
  };
  ASSERT_EQ(
      status_text(api->GraphMatchPattern(
          host::to_handle(&graph_), host::to_handle(&pattern), 0, keep, &kept)),
      "OK");
  ASSERT_NE(kept.match, nullptr);
  EXPECT_GT(kept.size_inside, 0u);
  EXPECT_EQ(api->MatchSize(kept.match), 0u);
  EXPECT_EQ(api->MatchAnchor(kept.match), nullptr);
  FxNode* read = nullptr;
  FxStatus* s = api->ArgGetNode(kept.value, &read);
  EXPECT_EQ(api->GetStatusCode(s), FX_FAILED_PRECONDITION);
  api->ReleaseStatus(s);
}

// A value (and its items) is lent for its callback: kept longer, it is
// refused, whatever the value was.
TEST_F(CApi, AValueKeptAfterItsCallbackIsStale) {
  const FxApi* api = host::api();
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  graph->output(graph->call_function("torch.chunk", {x, int64_t{2}}));
  GraphModule gm(GraphModule::AttributeMap{}, std::move(graph));
  struct Kept {
    const FxValue* value = nullptr;
    const FxValue* item = nullptr;
    int64_t rows_inside = 0;
  } kept;
  FxNodeValueFn keep = [](FxNode*, const FxValue* v, void* data) -> FxStatus* {
    const FxApi* api = host::api();
    auto* k = static_cast<Kept*>(data);
    if (api->ValueKind(v) != FX_VALUE_SEQUENCE) return nullptr;
    k->value = v;
    k->item = api->ValueItem(v, 0);
    FxTensorMeta meta{};
    FxStatus* s = api->ValueTensorMeta(k->item, &meta);
    if (s == nullptr) k->rows_inside = meta.shape[0];
    return s;
  };
  at::Tensor input = torch::ones({4, 2});
  DLManagedTensor* dl = at::toDLPack(input);
  const DLTensor* inputs[] = {&dl->dl_tensor};
  FxStatus* s =
      api->GraphRun(host::to_handle(&gm.graph()), inputs, 1, 0, keep, &kept);
  dl->deleter(dl);
  ASSERT_EQ(status_text(s), "OK");
  ASSERT_NE(kept.value, nullptr);
  EXPECT_EQ(kept.rows_inside, 2);
  EXPECT_EQ(api->ValueKind(kept.value), FX_VALUE_OTHER);
  EXPECT_EQ(api->ValueSize(kept.value), 0u);
  EXPECT_EQ(api->ValueItem(kept.value, 0), nullptr);
  FxTensorMeta meta{};
  EXPECT_EQ(status_text(api->ValueTensorMeta(kept.item, &meta)),
            std::to_string(FX_FAILED_PRECONDITION) +
                " ValueTensorMeta: the value handle is stale: its value no "
                "longer exists (it is lent for the duration of its "
                "callback); ask the host for a fresh one");
}

TEST_F(CApi, NullHandlesAreRefusedNotDereferenced) {
  FxNode* out = nullptr;
  FxStatus* s = host::api()->GraphCreateNode(nullptr, FX_OP_CALL_FUNCTION, "f",
                                             nullptr, 0, nullptr, nullptr, 0,
                                             nullptr, nullptr, &out);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(host::api()->GetStatusCode(s), FX_INVALID_ARGUMENT);
  EXPECT_STREQ(host::api()->GetStatusMessage(s),
               "GraphCreateNode: graph must not be NULL");
  host::api()->ReleaseStatus(s);
  EXPECT_EQ(host::api()->NodeName(nullptr), nullptr);
  EXPECT_EQ(host::api()->GraphNumNodes(nullptr), 0u);
}

TEST_F(CApi, WrongArgumentKindIsAnError) {
  fxp::Arg s("text");
  EXPECT_EQ(s.view().as_string(), "text");
  try {
    (void)s.view().as_int();
    FAIL() << "expected an error";
  } catch (const fxp::Error& e) {
    EXPECT_EQ(e.code(), FX_FAILED_PRECONDITION);
    EXPECT_STREQ(e.what(),
                 "ArgGetInt: expected an argument of type int but got str");
  }
}

TEST_F(CApi, ArgumentsRoundTripEveryKind) {
  fxp::Arg t = fxp::Arg::tuple(
      {fxp::Arg(1), fxp::Arg(2.5), fxp::Arg(true), fxp::Arg(), fxp::Arg("s"),
       fxp::Arg::list({fxp::Arg(3)}), fxp::Arg::dict({{"k", fxp::Arg(4)}}),
       fxp::Arg::slice(fxp::Arg(), fxp::Arg(2), fxp::Arg()),
       fxp::Arg::ellipsis(), fxp::Arg::dtype("torch.float16"),
       fxp::Arg::device("cpu")});
  fxp::ArgView v = t.view();
  ASSERT_EQ(v.kind(), FX_ARG_TUPLE);
  ASSERT_EQ(v.size(), 11u);
  EXPECT_EQ(v[0].as_int(), 1);
  EXPECT_DOUBLE_EQ(v[1].as_float(), 2.5);
  EXPECT_TRUE(v[2].as_bool());
  EXPECT_TRUE(v[3].is_none());
  EXPECT_EQ(v[4].as_string(), "s");
  EXPECT_EQ(v[5][0].as_int(), 3);
  EXPECT_EQ(v[6].key(0), "k");
  EXPECT_EQ(v[6][0].as_int(), 4);
  EXPECT_EQ(v[7].kind(), FX_ARG_SLICE);
  EXPECT_EQ(v[7][1].as_int(), 2);
  EXPECT_EQ(v[8].kind(), FX_ARG_ELLIPSIS);
  EXPECT_EQ(v[9].as_string(), "torch.float16");
  EXPECT_EQ(v[10].kind(), FX_ARG_DEVICE);
  fxp::Arg copy = t;
  EXPECT_TRUE(copy.view() == t.view());
}

TEST_F(CApi, SetsMetaAndKwargs) {
  fxp::Graph g = wrapped();
  fxp::Node relu = g.find_nodes(FX_OP_CALL_FUNCTION, "torch.relu").at(0);
  relu.set_meta("tag", fxp::Arg("hot"));
  relu.update_kwarg("inplace", fxp::Arg(false));
  EXPECT_EQ(relu.meta("tag").as_string(), "hot");
  EXPECT_FALSE(relu.kwarg("inplace").as_bool());
  EXPECT_FALSE(relu.kwarg("missing"));
  EXPECT_EQ(relu_->kwargs().size(), 1u);
}

TEST_F(CApi, InsertGuardRestoresThePreviousPoint) {
  fxp::Graph g = wrapped();
  {
    auto guard = g.inserting_after(fxp::Node(host::to_handle(x_)));
    g.call_function("torch.neg", {fxp::Arg(fxp::Node(host::to_handle(x_)))});
  }
  fxp::Node last = g.call_function("torch.sin", {fxp::Arg(1)});
  std::vector<std::string> names;
  for (fxp::Node n : g) names.emplace_back(n.name());
  EXPECT_EQ(names,
            (std::vector<std::string>{"x", "neg", "relu", "output", "sin"}));
  EXPECT_EQ(last.name(), "sin");
}

TEST_F(CApi, AttributesNeedAnOwningModule) {
  fxp::Graph g = wrapped();
  EXPECT_FALSE(g.has_attr("weight"));
  try {
    (void)g.get_attr_tensor("weight");
    FAIL() << "expected an error";
  } catch (const fxp::Error& e) {
    EXPECT_EQ(e.code(), FX_FAILED_PRECONDITION);
  }
}

TEST_F(CApi, OptionsAreTypedAndNamed) {
  FxOptions options;
  host::OptionValue rules;
  rules.type = FX_OPTION_STRING_LIST;
  rules.list = {"relu", "gelu"};
  options.values.emplace_back("rules", rules);
  auto lent = std::make_unique<host::LentOptions>(options);
  fxp::Options o(lent->handle());
  EXPECT_EQ(o.get_list("rules"), (std::vector<std::string>{"relu", "gelu"}));
  try {
    (void)o.get_int("rules");
    FAIL() << "expected an error";
  } catch (const fxp::Error& e) {
    EXPECT_EQ(e.code(), FX_INVALID_ARGUMENT);
  }
  try {
    (void)o.get_int("missing");
    FAIL() << "expected an error";
  } catch (const fxp::Error& e) {
    EXPECT_EQ(e.code(), FX_NOT_FOUND);
    EXPECT_STREQ(e.what(),
                 "OptionsGetInt: no option 'missing' in this pass's schema");
  }
  // Options are lent for their pass: kept longer, they are refused, even
  // when the same options are lent again; the address is no handle.
  lent.reset();
  host::LentOptions again(options);
  try {
    (void)o.get_list("rules");
    FAIL() << "expected an error";
  } catch (const fxp::Error& e) {
    EXPECT_EQ(e.code(), FX_FAILED_PRECONDITION);
    EXPECT_NE(std::string(e.what()).find("the options handle is stale"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(fxp::Options(again.handle()).get_list("rules").size(), 2u);
  FxStatus* s = fxp::api()->OptionsGetListSize(
      reinterpret_cast<const FxOptions*>(&options), "rules", nullptr);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(fxp::api()->GetStatusCode(s), FX_INVALID_ARGUMENT);
  fxp::api()->ReleaseStatus(s);
}

}  // namespace
}  // namespace fx
