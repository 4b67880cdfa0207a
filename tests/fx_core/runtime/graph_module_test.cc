// GraphModule: built from a root module or a bundle, it copies what the graph
// references, runs the graph through its compiled plan, computes what torch.fx
// computed (the reference bundles' expected.pt), copies independently, and
// reports what cannot run with the node's name.
#include "fx_core/runtime/graph_module.h"

#include <ATen/ATen.h>
#include <c10/util/intrusive_ptr.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/support/error.h"
#include "tests/testing/module_listing.h"
#include "tests/testing/my_module.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

std::string ref(const std::string& name, const std::string& file) {
  return testing::reference_dir() + "/" + name + "/" + file;
}

std::vector<c10::IValue> inputs_of(const std::string& name) {
  absl::StatusOr<c10::IValue> v = read_value_file(ref(name, "input.pt"));
  EXPECT_TRUE(v.ok()) << v.status().message();
  return v->toListRef().vec();
}

using testing::attribute_listing;
using testing::MyModule;

using testing::my_module_graph;

class ReferenceBundle : public ::testing::TestWithParam<std::string> {};

// Every reference bundle runs and equals torch.fx's eager output.
TEST_P(ReferenceBundle, ComputesWhatTorchFxComputed) {
  const std::string name = GetParam();
  auto gm = read_graph_module(ref(name, "graph.fx.json"));
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  if (name == "seed_dropout_functional") {
    // Dropout in training mode is random (torch.fx saved no output): every
    // element is 0 or x / (1 - p), and some of each.
    at::Tensor x = torch::rand({64, 64}) + 1;
    at::Tensor y = (*gm)->forward({x}).toTensor();
    EXPECT_TRUE(
        at::logical_or(y == 0, at::isclose(y, x * 2)).all().item<bool>());
    EXPECT_TRUE((y == 0).any().item<bool>());
    EXPECT_TRUE((y != 0).any().item<bool>());
    return;
  }
  c10::IValue out = (*gm)->forward(inputs_of(name));
  absl::StatusOr<c10::IValue> expected =
      read_value_file(ref(name, "expected.pt"));
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  if (expected->isTuple()) {
    auto want = expected->toTupleRef().elements();
    ASSERT_TRUE(out.isTuple());
    auto got = out.toTupleRef().elements();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(
          at::allclose(got[i].toTensor(), want[i].toTensor(), 1e-5, 1e-6))
          << "element " << i;
    }
  } else {
    ASSERT_TRUE(out.isTensor());
    EXPECT_TRUE(at::allclose(out.toTensor(), expected->toTensor(), 1e-5, 1e-6));
  }
}

INSTANTIATE_TEST_SUITE_P(SharedReference, ReferenceBundle,
                         ::testing::ValuesIn(testing::reference_cases()),
                         [](const auto& info) { return info.param; });

TEST(GraphModule, CopiesOnlyWhatTheGraphReferencesAndSharesIt) {
  MyModule root;
  root.register_module("unused", torch::nn::Linear(2, 2));
  GraphModule gm(root, my_module_graph());
  EXPECT_EQ(gm.get_submodule("linear").get(), root.linear.ptr().get());
  EXPECT_TRUE(gm.get_attr("param").is_same(root.param));
  EXPECT_EQ(gm.get_submodule("unused"), nullptr);
  EXPECT_EQ(gm.named_parameters(true).size(), 3u);  // param, weight, bias
}

TEST(GraphModule, ForwardEqualsEagerMyModule) {
  MyModule root;
  GraphModule gm(root, my_module_graph());
  at::Tensor x = torch::rand({3, 4});
  at::Tensor eager = root.linear->forward(x + root.param).clamp(0.0, 1.0);
  EXPECT_TRUE(at::allclose(gm(x).toTensor(), eager));
}

TEST(GraphModule, CodeIsTorchFxCodeOfTheGraph) {
  MyModule root;
  GraphModule gm(root, my_module_graph());
  EXPECT_EQ(gm.code(), testing::read_file(ref("seed_mymodule", "code.py")));
}

TEST(GraphModule, NestedQualifiedPathsBecomeContainers) {
  // root.layer1[0].conv1, as torchvision's ResNet names it.
  torch::nn::Module root;
  auto layer1 = std::make_shared<torch::nn::Module>();
  auto block = std::make_shared<torch::nn::Module>();
  auto conv = torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 4, 3).bias(false));
  block->register_module("conv1", conv);
  layer1->register_module("0", block);
  root.register_module("layer1", layer1);
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* c = g->call_module("layer1.0.conv1", {x});
  g->output(c);
  GraphModule gm(root, std::move(g));
  EXPECT_EQ(gm.get_submodule("layer1.0.conv1").get(), conv.ptr().get());
  at::Tensor in = torch::rand({1, 3, 8, 8});
  EXPECT_TRUE(at::allclose(gm(in).toTensor(), conv->forward(in)));
  EXPECT_NE(gm.code().find("getattr(self.layer1, \"0\").conv1(x)"),
            std::string::npos)
      << gm.code();
}

TEST(GraphModule, GetAttrOfASubmoduleParameterBeforeTheModuleCallWorks) {
  // seed_topk's order: self.linear.weight is read before self.linear runs.
  MyModule root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* w = g->get_attr("linear.weight");
  Node* l = g->call_module("linear", {x});
  Node* out = g->call_function("torch.matmul", {l, w});
  g->output(out);
  GraphModule gm(root, std::move(g));
  EXPECT_EQ(gm.get_submodule("linear").get(), root.linear.ptr().get());
  at::Tensor in = torch::rand({2, 4});
  EXPECT_TRUE(at::allclose(
      gm(in).toTensor(), root.linear->forward(in).matmul(root.linear->weight)));
}

TEST(GraphModule, MissingAttributeOfTheRootIsNamed) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* p = g->get_attr("nope");
  g->output(p);
  try {
    GraphModule gm(root, std::move(g));
    FAIL() << "expected FxError";
  } catch (const FxError& e) {
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos)
        << e.what();
  }
}

// A GraphModule over layer1.0.conv1 (call_module), linear.weight (get_attr
// of a module's parameter: `linear` is a container holding it, as in
// torch.fx), a root parameter and buffer, and a Linear called once; and the
// uses of a graph that reads only the convolution and the buffer.
struct KeepUsedCase {
  std::shared_ptr<torch::nn::Module> conv = torch::nn::Conv2d(3, 4, 3).ptr();
  std::shared_ptr<torch::nn::Module> linear = torch::nn::Linear(4, 4).ptr();
  std::shared_ptr<torch::nn::Module> unused = torch::nn::Linear(2, 2).ptr();
  GraphModule gm{
      {{"unused", {unused, {}, false}},
       {"linear", {linear, {}, false}},
       {"layer1.0.conv1", {conv, {}, false}},
       {"scale", {nullptr, torch::ones({4}), true}},
       {"mask", {nullptr, torch::ones({4}), false, BufferKind::kPlain}}},
      all_used()};
  static std::unique_ptr<Graph> all_used() {
    auto g = std::make_unique<Graph>();
    Node* x = g->placeholder("x");
    g->call_module("unused", {x});
    g->get_attr("linear.weight");
    g->get_attr("scale");
    Node* c = g->call_module("layer1.0.conv1", {x});
    g->output(g->call_function("operator.mul", {c, g->get_attr("mask")}));
    return g;
  }
  static std::vector<GraphModule::AttributeUse> conv_and_mask() {
    return {{Opcode::kGetAttr, "mask", "mask"},
            {Opcode::kCallModule, "layer1.0.conv1", "conv"}};
  }
};

TEST(GraphModule, KeepUsedAttributesInstallsTheUsesInOrderUnderNewContainers) {
  KeepUsedCase c;
  std::shared_ptr<torch::nn::Module> old_layer1 = c.gm.get_submodule("layer1");
  c.gm.keep_used_attributes(KeepUsedCase::conv_and_mask());
  // torch.fx's GraphModule(gm, graph): mask first (its order of use), a new
  // layer1 and layer1.0 holding only the convolution, the rest gone.
  EXPECT_EQ(attribute_listing(c.gm),
            "module layer1\nmodule layer1.0\nmodule layer1.0.conv1\n"
            "parameter layer1.0.conv1.weight\nparameter layer1.0.conv1.bias\n"
            "buffer mask\n");
  EXPECT_EQ(c.gm.get_submodule("layer1.0.conv1"), c.conv);
  EXPECT_NE(c.gm.get_submodule("layer1"), old_layer1);
  EXPECT_EQ(old_layer1->named_children().size(), 1u);  // left unchanged
  EXPECT_EQ(c.gm.buffer_kind("mask"), BufferKind::kPlain);
}

TEST(GraphModule, RestoreAttributesPutsBackEveryAttributeInOrder) {
  KeepUsedCase c;
  const std::string before = attribute_listing(c.gm);
  auto held = c.gm.keep_used_attributes(KeepUsedCase::conv_and_mask());
  c.gm.restore_attributes(*held);
  EXPECT_EQ(attribute_listing(c.gm), before);
  EXPECT_EQ(c.gm.get_submodule("unused"), c.unused);
  EXPECT_EQ(c.gm.buffer_kind("mask"), BufferKind::kPlain);
  // The registries still work after the round trip.
  c.gm.set_attr("extra", torch::zeros({1}), /*is_parameter=*/false);
  EXPECT_TRUE(c.gm.get_attr("extra").defined());
}

TEST(GraphModule, KeepUsedAttributesOfAMissingTargetChangesNothing) {
  KeepUsedCase c;
  const std::string before = attribute_listing(c.gm);
  auto uses = KeepUsedCase::conv_and_mask();
  uses.push_back({Opcode::kGetAttr, "nope", "read_nope"});
  try {
    c.gm.keep_used_attributes(uses);
    FAIL() << "expected FxError";
  } catch (const FxError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'read_nope' (get_attr) refers "
                                         "to 'nope'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(attribute_listing(c.gm), before);
}

TEST(GraphModule, DeepcopyIsIndependent) {
  MyModule root;
  GraphModule gm(root, my_module_graph());
  std::shared_ptr<GraphModule> copy = gm.deepcopy();
  at::Tensor x = torch::rand({3, 4});
  at::Tensor before = gm(x).toTensor();
  EXPECT_TRUE(at::allclose(copy->forward({x}).toTensor(), before));
  // Changing the copy's weights and graph leaves the original alone.
  {
    torch::NoGradGuard no_grad;
    copy->get_attr("linear.weight").fill_(0);
  }
  Node* clamp = copy->graph().find_nodes(Opcode::kCallMethod, "clamp")[0];
  clamp->set_target("relu");
  clamp->set_kwargs({});
  copy->recompile();
  EXPECT_TRUE(at::allclose(gm(x).toTensor(), before));
  EXPECT_EQ(gm.graph().find_nodes(Opcode::kCallMethod, "relu").size(), 0u);
  EXPECT_NE(copy->code().find("relu"), std::string::npos);
}

TEST(GraphModule, RecompileAfterEditRunsTheNewGraph) {
  MyModule root;
  GraphModule gm(root, my_module_graph());
  Node* add = gm.graph().find_nodes(Opcode::kCallFunction, "operator.add")[0];
  add->set_target("operator.sub");
  gm.recompile();
  at::Tensor x = torch::rand({3, 4});
  at::Tensor eager = root.linear->forward(x - root.param).clamp(0.0, 1.0);
  EXPECT_TRUE(at::allclose(gm(x).toTensor(), eager));
  EXPECT_NE(gm.code().find("add = x - param"), std::string::npos) << gm.code();
}

TEST(GraphModule, UnknownTargetStillPrintsButForwardNamesTheNode) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* f = g->call_function("vendor.mystery_op", {x});
  g->output(f);
  GraphModule gm(root, std::move(g));
  EXPECT_NE(gm.code().find("vendor_mystery_op"), std::string::npos);
  EXPECT_FALSE(gm.check_executable().ok());
  try {
    gm(torch::rand({2}));
    FAIL() << "expected FxError";
  } catch (const FxError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("mystery_op"), std::string::npos) << msg;
    EXPECT_NE(msg.find("OpRegistry::global().add()"), std::string::npos) << msg;
  }
}

TEST(GraphModule, RuntimeErrorNamesTheNode) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* mm = g->call_function("torch.matmul", {x, y});
  g->output(mm);
  GraphModule gm(root, std::move(g));
  try {
    gm(torch::rand({2, 3}), torch::rand({4, 5}));
    FAIL() << "expected FxError";
  } catch (const FxError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'matmul'"), std::string::npos)
        << e.what();
  }
}

TEST(GraphModule, WrongKeywordIsRefusedAtCompileWithPythonsMessage) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* s = g->call_function("torch.sum", {x}, {{"axis", Argument(1)}});
  g->output(s);
  GraphModule gm(root, std::move(g));
  absl::Status status = gm.check_executable();
  EXPECT_NE(status.message().find("got an unexpected keyword argument 'axis'"),
            std::string::npos)
      << status.message();
}

TEST(GraphModule, PlaceholderDefaultsAndVarArgs) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* k = g->placeholder("k", "", Argument(int64_t{2}));
  Node* m = g->call_function("operator.mul", {x, k});
  g->output(m);
  GraphModule gm(root, std::move(g));
  at::Tensor in = torch::ones({2});
  EXPECT_TRUE(at::equal(gm(in).toTensor(), in * 2));
  EXPECT_TRUE(at::equal(gm(in, int64_t{3}).toTensor(), in * 3));
}

// Values are released after their last use: an op checks whether the tensor
// made earlier is still alive once its last user has run.
c10::weak_intrusive_ptr<c10::TensorImpl>* tracked = nullptr;

TEST(GraphModule, ReleasesEachValueAfterItsLastUse) {
  OpRegistry& r = OpRegistry::global();
  r.add(Opcode::kCallFunction, "test.make_tracked", "x",
        [](OpArgs& a) -> c10::IValue {
          at::Tensor t = a.tensor(0) * 2;
          delete tracked;
          tracked =
              new c10::weak_intrusive_ptr<c10::TensorImpl>(t.getIntrusivePtr());
          return t;
        });
  r.add(Opcode::kCallFunction, "test.tracked_alive", "x",
        [](OpArgs&) -> c10::IValue { return !tracked->expired(); });
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* made = g->call_function("test.make_tracked", {x});
  Node* neg = g->call_function("torch.neg", {made});
  Node* alive = g->call_function("test.tracked_alive", {neg});
  g->output(Argument::tuple({neg, alive}));
  torch::nn::Module root;
  GraphModule gm(root, std::move(g));
  c10::IValue out = gm(torch::ones({4}));
  EXPECT_FALSE(out.toTupleRef().elements()[1].toBool());
  delete tracked;
  tracked = nullptr;
}

// The plan hands a value over to its last reader instead of copying it; a
// value read twice by one call, read again later, or read inside a list
// must still reach every reader.
TEST(GraphModule, ValueReadSeveralTimesReachesEveryRead) {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* a = g->call_function("operator.mul", {x, 2.0});
  Node* b = g->call_function("operator.add", {a, a});
  Node* c = g->call_function("operator.mul", {b, a});
  Node* d = g->call_function("torch.cat", {Argument::list({c, c})});
  Node* e = g->call_function("operator.add", {d, d});
  g->output(Argument::tuple({e, x}));
  torch::nn::Module root;
  GraphModule gm(root, std::move(g));
  at::Tensor in = torch::arange(3, at::kFloat);
  c10::IValue out = gm(in);
  at::Tensor c_eager = (in * 2 + in * 2) * (in * 2);
  at::Tensor want = at::cat({c_eager, c_eager}) * 2;
  EXPECT_TRUE(at::equal(out.toTupleRef().elements()[0].toTensor(), want));
  EXPECT_TRUE(at::equal(out.toTupleRef().elements()[1].toTensor(), in));
  EXPECT_TRUE(at::equal(gm(in).toTupleRef().elements()[0].toTensor(), want));
}

// Built-in kernels borrow values the graph still needs (OpDef::keeps_args);
// a kernel added by a user may move from its arguments, so it gets copies.
TEST(GraphModule, AUserKernelThatMovesFromItsArgumentsGetsCopies) {
  OpRegistry::global().add(
      Opcode::kCallFunction, "test.steal", "x",
      [](OpArgs& a) -> c10::IValue { return std::move(a[0]); });
  EXPECT_FALSE(OpRegistry::global()
                   .find(Opcode::kCallFunction, "test.steal")
                   ->keeps_args);
  EXPECT_TRUE(OpRegistry::global()
                  .find(Opcode::kCallFunction, "operator.add")
                  ->keeps_args);
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* stolen = g->call_function("test.steal", {x});
  Node* later = g->call_function("operator.add", {x, 1});
  g->output(Argument::tuple({stolen, later, x}));
  torch::nn::Module root;
  GraphModule gm(root, std::move(g));
  at::Tensor in = torch::arange(3, at::kFloat);
  c10::IValue out = gm(in);
  const auto& items = out.toTupleRef().elements();
  EXPECT_TRUE(at::equal(items[0].toTensor(), in));
  EXPECT_TRUE(at::equal(items[1].toTensor(), in + 1));
  EXPECT_TRUE(at::equal(items[2].toTensor(), in));
}

TEST(GraphModuleFile, UnknownModuleTypeIsNamedWithTheFix) {
  std::string json = R"({"format": "fx-graph", "version": 1, "nodes": [
    {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
    {"name": "m", "op": "call_module", "target": "m", "args": [{"node": "x"}], "kwargs": {}},
    {"name": "output", "op": "output", "target": "output", "args": [{"node": "m"}], "kwargs": {}}],
    "modules": {"m": {"type": "vendor.FancyNorm", "config": {}, "training": false}}})";
  auto file = parse_graph_json(json, "<test>");
  ASSERT_TRUE(file.ok()) << file.status().message();
  auto gm = load_graph_module(std::move(*file));
  ASSERT_FALSE(gm.ok());
  std::string msg(gm.status().message());
  EXPECT_NE(msg.find("module 'm'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("vendor.FancyNorm"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ModuleRegistry"), std::string::npos) << msg;
}

TEST(GraphModuleFile, BadConfigNamesTheModuleAndArgument) {
  std::string json = R"({"format": "fx-graph", "version": 1, "nodes": [
    {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
    {"name": "output", "op": "output", "target": "output", "args": [{"node": "x"}], "kwargs": {}}],
    "modules": {"fc": {"type": "torch.nn.Linear", "config": {"in_features": 2, "out_feature": 3}, "training": false}}})";
  auto file = parse_graph_json(json, "<test>");
  ASSERT_TRUE(file.ok()) << file.status().message();
  auto gm = load_graph_module(std::move(*file));
  ASSERT_FALSE(gm.ok());
  std::string msg(gm.status().message());
  EXPECT_NE(msg.find("module 'fc'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'out_feature'"), std::string::npos) << msg;
}

TEST(GraphModuleFile, WriteThenReadComputesTheSame) {
  auto gm = read_graph_module(ref("seed_mymodule", "graph.fx.json"));
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  // graph.fx.json names model.weights.pt, as the reference does.
  std::string dir = std::getenv("TEST_TMPDIR");
  ASSERT_TRUE(write_graph_module(**gm, dir + "/graph.fx.json").ok());
  auto again = read_graph_module(dir + "/graph.fx.json");
  ASSERT_TRUE(again.ok()) << again.status().message();
  std::vector<c10::IValue> in = inputs_of("seed_mymodule");
  EXPECT_TRUE(at::equal((*gm)->forward(in).toTensor(),
                        (*again)->forward(in).toTensor()));
  EXPECT_EQ(testing::read_file(dir + "/graph.fx.json"),
            testing::read_file(ref("seed_mymodule", "graph.fx.json")));
}

}  // namespace
}  // namespace fx

namespace fx {
namespace {

// Targets no kernel was written for run through ATen's schemas: torch.fx's
// trace of `torch.logsumexp(x, 1) + x.std(dim=0, keepdim=True).sum()` and
// torch.ops.aten spellings, against the same ATen calls.
TEST(GraphModule, RunsAtenOperatorsNoKernelWasWrittenFor) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* lse = g->call_function("torch.logsumexp", {x, Argument(int64_t{1})});
  Node* std = g->call_method(
      "std", {x}, {{"dim", Argument(int64_t{0})}, {"keepdim", Argument(true)}});
  Node* sum = g->call_method("sum", {std});
  Node* add = g->call_function("torch.ops.aten.add.Tensor", {lse, sum});
  g->output(add);
  GraphModule gm(root, std::move(g));
  at::Tensor in = at::rand({3, 4});
  at::Tensor want = at::logsumexp(in, {1}) + in.std({0}, true, true).sum();
  EXPECT_TRUE(at::allclose(gm(in).toTensor(), want));
  // lint knows the targets it can run.
  EXPECT_NO_THROW(gm.graph().lint());
}

}  // namespace
}  // namespace fx

namespace fx {
namespace {

// A call no overload of the ATen operator can accept fails when the graph
// compiles, naming the node and every overload, not when it runs.
TEST(GraphModule, AnAtenCallNoOverloadAcceptsFailsAtCompileNamingTheNode) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* bad =
      g->call_function("torch.logsumexp", {x}, {{"foo", Argument(int64_t{1})}});
  g->output(bad);
  GraphModule gm(root, std::move(g));
  absl::Status s = gm.check_executable();
  ASSERT_FALSE(s.ok());
  std::string what(s.message());
  EXPECT_NE(what.find("cannot compile node 'logsumexp'"), std::string::npos)
      << what;
  EXPECT_NE(what.find("logsumexp() received an invalid combination of "
                      "arguments - got (Node, foo=int), but expected one of:"),
            std::string::npos)
      << what;
}

// Constants decide the overload at compile time; Node arguments at run time
// among the overloads left (torch.add with a tensor, then a number).
TEST(GraphModule, NodeArgumentsPickTheOverloadWhenTheGraphRuns) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* add = g->call_function("torch.ops.aten.add", {x, y},
                               {{"alpha", Argument(int64_t{2})}});
  g->output(add);
  GraphModule gm(root, std::move(g));
  at::Tensor in = at::rand({3});
  EXPECT_TRUE(at::allclose(gm.forward({in, at::ones({3})}).toTensor(), in + 2));
  EXPECT_TRUE(
      at::allclose(gm.forward({in, c10::IValue(1.5)}).toTensor(), in + 3));
}

}  // namespace
}  // namespace fx
