// Interpreter: runs a GraphModule node by node as torch.fx's Interpreter does.
// It computes what GraphModule::forward computes, its overridable methods
// change or observe execution (the torch.fx docs' NegSigmSwapInterpreter and
// ShapeProp), an initial environment skips the nodes it fills, values are
// dropped after their last use exactly when torch.fx drops them, and errors
// name the node. Expected values that are not computed here are torch 1.13's
// (torch.fx.Interpreter run on the same graph), as the comments say.
#include "fx_core/runtime/interpreter.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/runtime_codegen.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "tests/testing/my_module.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

using ::testing::HasSubstr;

std::string ref(const std::string& name, const std::string& file) {
  return testing::reference_dir() + "/" + name + "/" + file;
}

using testing::MyModule;

// torch.fx.symbolic_trace of
//   h = self.linear(x + self.param).clamp(min=0.0, max=1.0)
//   s = torch.sum(h, dim=-1)
//   t = torch.topk(s, 2)
//   return t[0].view(1, -1), h.size()
// node for node: get_attr, call_module, call_method with kwargs, a tuple
// through operator.getitem and a tuple output.
std::unique_ptr<Graph> traced_my_module_graph() {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* param = g->get_attr("param");
  Node* add = g->call_function("operator.add", {x, param});
  Node* linear = g->call_module("linear", {add});
  Node* clamp = g->call_method(
      "clamp", {linear}, {{"min", Argument(0.0)}, {"max", Argument(1.0)}});
  Node* sum = g->call_function("torch.sum", {clamp}, {{"dim", Argument(-1)}});
  Node* topk = g->call_function("torch.topk", {sum, Argument(2)});
  Node* values = g->call_function("operator.getitem", {topk, Argument(0)});
  Node* view = g->call_method("view", {values, Argument(1), Argument(-1)});
  Node* size = g->call_method("size", {clamp});
  g->output(Argument::tuple({view, size}));
  return g;
}

// x, y -> (relu((x + y) * x), neg(x + y)).
std::unique_ptr<Graph> add_mul_graph() {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* add = g->call_function("operator.add", {x, y});
  Node* mul = g->call_function("operator.mul", {add, x});
  Node* relu = g->call_function("torch.relu", {mul});
  Node* neg = g->call_function("torch.neg", {add});
  g->output(Argument::tuple({relu, neg}));
  return g;
}

std::vector<std::string> names_in(const Interpreter::Env& env) {
  std::vector<std::string> names;
  for (const auto& entry : env) names.emplace_back(entry.first->name());
  std::sort(names.begin(), names.end());
  return names;
}

Node* node_named(const Graph& g, std::string_view name) {
  for (Node* n : g.nodes()) {
    if (n->name() == name) return n;
  }
  return nullptr;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const FxError& e) {
    return e.what();
  }
  return "(no FxError)";
}

// ---------------------------------------------------------------- run()

std::vector<int64_t> int_values(const c10::IValue& sequence) {
  std::vector<int64_t> out;
  for (const c10::IValue& v : sequence_elements(sequence)) {
    out.push_back(v.toInt());
  }
  return out;
}

TEST(Interpreter, RunEqualsForwardWithAttributesModulesMethodKwargsAndTuples) {
  MyModule root;
  GraphModule gm(root, traced_my_module_graph());
  at::Tensor x = torch::rand({3, 4});
  c10::IValue want = gm.forward({x});
  c10::IValue got = Interpreter(gm).run({x});
  ASSERT_TRUE(got.isTuple());
  const auto& g = got.toTupleRef().elements();
  const auto& w = want.toTupleRef().elements();
  ASSERT_EQ(g.size(), 2u);
  EXPECT_TRUE(at::equal(g[0].toTensor(), w[0].toTensor()));
  EXPECT_TRUE(is_torch_size(g[1]));  // x.size(): Python's torch.Size
  EXPECT_EQ(int_values(g[1]), int_values(w[1]));
}

TEST(Interpreter, RunEqualsEagerLibTorchOnTheTracedModule) {
  MyModule root;
  GraphModule gm(root, traced_my_module_graph());
  at::Tensor x = torch::rand({3, 4});
  at::Tensor h = root.linear->forward(x + root.param).clamp(0.0, 1.0);
  at::Tensor values = std::get<0>(at::topk(h.sum(-1), 2)).view({1, -1});
  c10::IValue got = Interpreter(gm).run({x});
  EXPECT_TRUE(at::allclose(got.toTupleRef().elements()[0].toTensor(), values));
  EXPECT_EQ(int_values(got.toTupleRef().elements()[1]),
            (std::vector<int64_t>{3, 5}));
}

// The reference bundles whose output is deterministic (dropout in training
// mode is not; torch.fx saved no output for it).
std::vector<std::string> deterministic_cases() {
  std::vector<std::string> out;
  for (const std::string& name : testing::reference_cases()) {
    if (name.find("dropout") == std::string::npos) out.push_back(name);
  }
  return out;
}

TEST(Interpreter, RunningAgainStartsFromAFreshEnvironment) {
  torch::nn::Module root;
  GraphModule gm(root, add_mul_graph());
  Interpreter interp(gm, /*garbage_collect_values=*/false);
  at::Tensor x = torch::rand({3}), y = torch::rand({3});
  interp.run({x, y});
  c10::IValue second = interp.run({y, x});
  const auto& items = second.toTupleRef().elements();
  EXPECT_TRUE(at::equal(items[0].toTensor(), at::relu((y + x) * y)));
  EXPECT_TRUE(at::equal(items[1].toTensor(), at::neg(y + x)));
  EXPECT_TRUE(
      at::equal(interp.env().at(node_named(gm.graph(), "x")).toTensor(), y));
}

// F.normalize traced through records torch.div(x, y, out=None): torch's
// signature has `out`, the SDK's hand-written torch.div does not; both the
// Interpreter and the compiled plan bind it to ATen's div (torch.fx computes
// x / y).
TEST(Interpreter, AKeywordTheHandWrittenSignatureLacksBindsToAten) {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* y = graph->placeholder("y");
  graph->output(Argument(graph->call_function(
      "torch.div", {Argument(x), Argument(y)}, {{"out", Argument()}})));
  torch::nn::Module root;
  GraphModule gm(root, std::move(graph));
  at::Tensor a = torch::rand({3}), b = torch::rand({3}) + 1;
  Interpreter interp(gm);
  EXPECT_TRUE(at::allclose(interp.run({a, b}).toTensor(), a / b));
  EXPECT_TRUE(at::allclose(gm.forward({a, b}).toTensor(), a / b));
}

class InterpreterOnReferenceBundle
    : public ::testing::TestWithParam<std::string> {};

// The Interpreter computes what GraphModule::forward computes and what
// torch.fx saved (expected.pt).
TEST_P(InterpreterOnReferenceBundle, ComputesWhatForwardAndTorchFxComputed) {
  const std::string name = GetParam();
  auto gm = read_graph_module(ref(name, "graph.fx.json"));
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  absl::StatusOr<c10::IValue> input = read_value_file(ref(name, "input.pt"));
  ASSERT_TRUE(input.ok()) << input.status().message();
  absl::StatusOr<c10::IValue> expected =
      read_value_file(ref(name, "expected.pt"));
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  std::vector<c10::IValue> inputs = input->toListRef().vec();
  c10::IValue got = Interpreter(**gm).run(inputs);
  c10::IValue forward = (*gm)->forward(inputs);
  std::vector<c10::IValue> got_items =
      is_sequence(got) ? sequence_elements(got) : std::vector<c10::IValue>{got};
  std::vector<c10::IValue> want_items =
      is_sequence(*expected) ? sequence_elements(*expected)
                             : std::vector<c10::IValue>{*expected};
  std::vector<c10::IValue> forward_items =
      is_sequence(forward) ? sequence_elements(forward)
                           : std::vector<c10::IValue>{forward};
  ASSERT_EQ(got_items.size(), want_items.size());
  ASSERT_EQ(got_items.size(), forward_items.size());
  for (size_t i = 0; i < got_items.size(); ++i) {
    EXPECT_TRUE(at::equal(got_items[i].toTensor(), forward_items[i].toTensor()))
        << "element " << i;
    EXPECT_TRUE(at::allclose(got_items[i].toTensor(), want_items[i].toTensor(),
                             1e-5, 1e-6))
        << "element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(SharedReference, InterpreterOnReferenceBundle,
                         ::testing::ValuesIn(deterministic_cases()),
                         [](const auto& info) { return info.param; });

// ----------------------------------------------------------- overriding

// The torch.fx docs' NegSigmSwapInterpreter: torch.sigmoid runs as torch.neg
// and the method neg as sigmoid.
class NegSigmSwapInterpreter : public Interpreter {
 public:
  using Interpreter::Interpreter;
  c10::IValue call_function(const Node& n, Args args,
                            const Kwargs& kwargs) override {
    if (n.target() == "torch.sigmoid") return at::neg(args[0].toTensor());
    return Interpreter::call_function(n, std::move(args), kwargs);
  }
  c10::IValue call_method(const Node& n, Args args,
                          const Kwargs& kwargs) override {
    if (n.target() == "neg") return at::sigmoid(args[0].toTensor());
    return Interpreter::call_method(n, std::move(args), kwargs);
  }
};

// symbolic_trace(lambda x: torch.sigmoid(x).neg()).
std::unique_ptr<Graph> sigmoid_neg_graph() {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* sigmoid = g->call_function("torch.sigmoid", {x});
  Node* neg = g->call_method("neg", {sigmoid});
  g->output(neg);
  return g;
}

TEST(Interpreter, NegSigmSwapComputesNegThenSigmoid) {
  torch::nn::Module root;
  GraphModule gm(root, sigmoid_neg_graph());
  at::Tensor input = torch::randn({3, 4});
  at::Tensor result = NegSigmSwapInterpreter(gm).run({input}).toTensor();
  EXPECT_TRUE(at::allclose(result, at::neg(input).sigmoid()));
}

TEST(Interpreter, WithoutOverridesTheSameGraphComputesSigmoidThenNeg) {
  torch::nn::Module root;
  GraphModule gm(root, sigmoid_neg_graph());
  at::Tensor input = torch::randn({3, 4});
  at::Tensor result = Interpreter(gm).run({input}).toTensor();
  EXPECT_TRUE(at::equal(result, at::sigmoid(input).neg()));
  EXPECT_FALSE(at::allclose(result, at::neg(input).sigmoid()));
}

// Shape propagation through run_node, as torch.fx.passes.shape_prop.ShapeProp
// does: every node's result is recorded (tensor shapes; a tuple's tensors).
class ShapeProp : public Interpreter {
 public:
  using Interpreter::Interpreter;
  c10::IValue run_node(const Node& n) override {
    c10::IValue result = Interpreter::run_node(n);
    std::vector<std::vector<int64_t>> shapes;
    if (result.isTensor()) {
      shapes.push_back(result.toTensor().sizes().vec());
    } else if (result.isTuple()) {
      for (const c10::IValue& v : result.toTupleRef().elements()) {
        if (v.isTensor()) shapes.push_back(v.toTensor().sizes().vec());
      }
    }
    if (!shapes.empty()) this->shapes[std::string(n.name())] = shapes;
    return result;
  }
  std::map<std::string, std::vector<std::vector<int64_t>>> shapes;
};

TEST(Interpreter, ShapePropRecordsTheShapeOfEveryTensorNode) {
  MyModule root;
  GraphModule gm(root, traced_my_module_graph());
  ShapeProp prop(gm);
  prop.run({torch::rand({3, 4})});
  // torch 1.13's ShapeProp(gm).propagate(torch.rand(3, 4)) on the traced
  // module: tensor_meta shapes per node (size() has none; the output node
  // holds the view's).
  using Shapes = std::vector<std::vector<int64_t>>;
  std::map<std::string, Shapes> want = {
      {"x", {{3, 4}}},      {"param", {{3, 4}}}, {"add", {{3, 4}}},
      {"linear", {{3, 5}}}, {"clamp", {{3, 5}}}, {"sum_1", {{3}}},
      {"topk", {{2}, {2}}}, {"getitem", {{2}}},  {"view", {{1, 2}}},
      {"output", {{1, 2}}},
  };
  EXPECT_EQ(prop.shapes, want);
}

// ------------------------------------------------------ initial_env

// Counts the call_function nodes it runs.
class CountingInterpreter : public Interpreter {
 public:
  using Interpreter::Interpreter;
  c10::IValue call_function(const Node& n, Args args,
                            const Kwargs& kwargs) override {
    ran.emplace_back(n.name());
    return Interpreter::call_function(n, std::move(args), kwargs);
  }
  std::vector<std::string> ran;
};

TEST(Interpreter, InitialEnvNodesAreNotRunAndTheirValuesAreUsed) {
  torch::nn::Module root;
  GraphModule gm(root, add_mul_graph());
  Node* add = node_named(gm.graph(), "add");
  at::Tensor x = torch::rand({4}), y = torch::rand({4});
  at::Tensor given = torch::full({4}, -2.0);
  CountingInterpreter interp(gm);
  Interpreter::Env env;
  env[add] = given;
  c10::IValue out = interp.run({x, y}, std::move(env));
  EXPECT_EQ(interp.ran, (std::vector<std::string>{"mul", "relu", "neg"}));
  const auto& items = out.toTupleRef().elements();
  EXPECT_TRUE(at::equal(items[0].toTensor(), at::relu(given * x)));
  EXPECT_TRUE(at::equal(items[1].toTensor(), at::neg(given)));
}

TEST(Interpreter, WithoutInitialEnvEveryCallFunctionNodeRuns) {
  torch::nn::Module root;
  GraphModule gm(root, add_mul_graph());
  CountingInterpreter interp(gm);
  interp.run({torch::rand({4}), torch::rand({4})});
  EXPECT_EQ(interp.ran,
            (std::vector<std::string>{"add", "mul", "relu", "neg"}));
}

TEST(Interpreter, APrefilledPlaceholderConsumesNoInput) {
  // a, b -> a - b. torch 1.13: Interpreter(gm).run(torch.tensor(1.),
  // initial_env={a: torch.tensor(10.)}) is tensor(9.): b takes the first
  // positional input.
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* a = g->placeholder("a");
  Node* b = g->placeholder("b");
  g->output(g->call_function("operator.sub", {a, b}));
  GraphModule gm(root, std::move(g));
  Interpreter::Env env;
  env[node_named(gm.graph(), "a")] = at::scalar_tensor(10.0);
  c10::IValue out = Interpreter(gm).run({at::scalar_tensor(1.0)}, env);
  EXPECT_EQ(out.toTensor().item<double>(), 9.0);
}

// ------------------------------------------------ garbage collection

// Records, as each node starts, which nodes hold a value in env().
class EnvRecorder : public Interpreter {
 public:
  using Interpreter::Interpreter;
  c10::IValue run_node(const Node& n) override {
    log.emplace_back(std::string(n.name()), names_in(env()));
    return Interpreter::run_node(n);
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> log;
};

using EnvLog = std::vector<std::pair<std::string, std::vector<std::string>>>;

TEST(Interpreter, GarbageCollectionDropsEachValueAfterItsLastUse) {
  torch::nn::Module root;
  GraphModule gm(root, add_mul_graph());
  EnvRecorder rec(gm, /*garbage_collect_values=*/true);
  rec.run({torch::ones({2}), torch::ones({2})});
  // torch 1.13: sorted(env) as each node starts, garbage_collect_values=True.
  EnvLog want = {{"x", {}},
                 {"y", {"x"}},
                 {"add", {"x", "y"}},
                 {"mul", {"add", "x"}},
                 {"relu", {"add", "mul"}},
                 {"neg", {"add", "relu"}},
                 {"output", {"neg", "relu"}}};
  EXPECT_EQ(rec.log, want);
  // torch 1.13: after run() only the output node's value is left.
  EXPECT_EQ(names_in(rec.env()), (std::vector<std::string>{"output"}));
}

TEST(Interpreter, WithoutGarbageCollectionEnvKeepsEveryValue) {
  torch::nn::Module root;
  GraphModule gm(root, add_mul_graph());
  EnvRecorder rec(gm, /*garbage_collect_values=*/false);
  rec.run({torch::ones({2}), torch::ones({2})});
  // torch 1.13, garbage_collect_values=False.
  EnvLog want = {{"x", {}},
                 {"y", {"x"}},
                 {"add", {"x", "y"}},
                 {"mul", {"add", "x", "y"}},
                 {"relu", {"add", "mul", "x", "y"}},
                 {"neg", {"add", "mul", "relu", "x", "y"}},
                 {"output", {"add", "mul", "neg", "relu", "x", "y"}}};
  EXPECT_EQ(rec.log, want);
  EXPECT_EQ(names_in(rec.env()),
            (std::vector<std::string>{"add", "mul", "neg", "output", "relu",
                                      "x", "y"}));
  // The intermediate values are there to inspect.
  Node* add = node_named(gm.graph(), "add");
  EXPECT_TRUE(at::equal(rec.env().at(add).toTensor(), torch::full({2}, 2.0)));
}

// ----------------------------------------------------------- placeholders

TEST(Interpreter, PlaceholderDefaultFillsAMissingInput) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* k = g->placeholder("k", "", Argument(int64_t{2}));
  g->output(g->call_function("operator.mul", {x, k}));
  GraphModule gm(root, std::move(g));
  at::Tensor in = torch::ones({2});
  EXPECT_TRUE(at::equal(Interpreter(gm).run({in}).toTensor(), in * 2));
  EXPECT_TRUE(
      at::equal(Interpreter(gm).run({in, int64_t{5}}).toTensor(), in * 5));
}

TEST(Interpreter, MissingRequiredInputIsTorchFxsErrorNamingTheNode) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  g->output(g->call_function("operator.add", {x, y}));
  GraphModule gm(root, std::move(g));
  std::string msg = error_of([&] { Interpreter(gm).run({torch::ones({2})}); });
  EXPECT_THAT(msg, HasSubstr("while running node 'y'"));
  // torch.fx's placeholder() message.
  EXPECT_THAT(msg, HasSubstr("Expected positional argument for parameter y, "
                             "but one was not passed in!"));
}

TEST(Interpreter, VarArgsPlaceholderTakesTheRemainingInputs) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* rest = g->placeholder("*args");
  Node* n = g->call_function("builtins.len", {rest});
  g->output(Argument::tuple({x, n}));
  GraphModule gm(root, std::move(g));
  c10::IValue out =
      Interpreter(gm).run({int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}});
  EXPECT_EQ(out.toTupleRef().elements()[0].toInt(), 1);
  EXPECT_EQ(out.toTupleRef().elements()[1].toInt(), 3);
}

// --------------------------------------------------------------- errors

TEST(Interpreter, KernelErrorNamesTheNode) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  g->output(g->call_function("torch.matmul", {x, y}));
  GraphModule gm(root, std::move(g));
  std::string msg = error_of([&] {
    Interpreter(gm).run({torch::rand({2, 3}), torch::rand({4, 5})});
  });
  EXPECT_THAT(msg, HasSubstr("while running node 'matmul'"));
  EXPECT_THAT(msg, HasSubstr("torch.matmul"));
}

TEST(Interpreter, UnknownTargetErrorNamesTheNodeAndHowToRegister) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  g->output(g->call_function("vendor.mystery_op", {x}));
  GraphModule gm(root, std::move(g));
  std::string msg = error_of([&] { Interpreter(gm).run({torch::rand({2})}); });
  EXPECT_THAT(msg, HasSubstr("while running node 'mystery_op'"));
  EXPECT_THAT(msg, HasSubstr("OpRegistry::global().add()"));
}

TEST(Interpreter, BindingErrorNamesTheNodeWithPythonsMessage) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  g->output(g->call_function("torch.sum", {x}, {{"axis", Argument(1)}}));
  GraphModule gm(root, std::move(g));
  std::string msg = error_of([&] {
    Interpreter(gm).run({torch::rand({2, 2})});
  });
  EXPECT_THAT(msg, HasSubstr("while running node 'sum_1'"));
  EXPECT_THAT(msg, HasSubstr("got an unexpected keyword argument 'axis'"));
}

TEST(Interpreter, AnyExceptionFromAKernelNamesTheNode) {
  OpRegistry::global().add(Opcode::kCallFunction, "test.interp_throws", "x",
                           [](OpArgs&) -> c10::IValue {
                             throw std::runtime_error("vendor kernel failed");
                           });
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  g->output(g->call_function("test.interp_throws", {x}));
  GraphModule gm(root, std::move(g));
  std::string msg = error_of([&] { Interpreter(gm).run({torch::rand({2})}); });
  EXPECT_THAT(msg, HasSubstr("while running node 'interp_throws'"));
  EXPECT_THAT(msg, HasSubstr("vendor kernel failed"));
}

// ----------------------------------------------------- CodeGen hooks

// A CodeGen whose process_inputs doubles a number input and whose
// process_outputs wraps the result in a one-element tuple.
class WrappingCodeGen : public RuntimeCodeGen {
 public:
  std::unique_ptr<CodeGen> clone() const override {
    return std::make_unique<WrappingCodeGen>();
  }
  std::vector<c10::IValue> process_inputs(
      std::vector<c10::IValue> inputs) const override {
    for (c10::IValue& v : inputs) {
      if (v.isInt()) v = v.toInt() * 2;
    }
    return inputs;
  }
  c10::IValue process_outputs(c10::IValue outputs) const override {
    return make_tuple({std::move(outputs)});
  }
};

TEST(Interpreter, RunAppliesTheGraphsInputAndOutputProcessingAsForwardDoes) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* k = g->placeholder("k");
  g->output(g->call_function("operator.add", {k, Argument(1)}));
  g->set_codegen(std::make_unique<WrappingCodeGen>());
  GraphModule gm(root, std::move(g));
  c10::IValue forward = gm.forward({int64_t{3}});
  c10::IValue interp = Interpreter(gm).run({int64_t{3}});
  ASSERT_TRUE(forward.isTuple());
  ASSERT_TRUE(interp.isTuple());
  EXPECT_EQ(forward.toTupleRef().elements()[0].toInt(), 7);
  EXPECT_EQ(interp.toTupleRef().elements()[0].toInt(), 7);
}

TEST(Interpreter, FetchAttrOfAMissingPathNamesIt) {
  MyModule root;
  GraphModule gm(root, traced_my_module_graph());
  Interpreter interp(gm);
  EXPECT_TRUE(interp.fetch_attr("linear.weight")
                  .toTensor()
                  .is_same(root.linear->weight));
  EXPECT_THAT(error_of([&] { interp.fetch_attr("linear.nope"); }),
              HasSubstr("linear.nope"));
}

}  // namespace
}  // namespace fx
