// The torch.fx docs' examples of changing graphs, in C++, against torch.fx:
// docs_cases.py exports each model and writes what torch.fx makes of it
// (code after the transformation, its output, ShapeProp's shapes). Covered:
// the Transformer (NegSigmSwap and an identity transform), replacing one op
// (direct manipulation, a Transformer, replace_pattern), the invert
// transformation, decompose (retracing with a GraphAppendingTracer), shape
// propagation with the Interpreter, and Conv/BatchNorm fusion (the docs' fuser,
// and the same with replace_pattern matching modules by type) on a small net
// and on torchvision's resnet18. Needs python3-torch at /usr/bin/python3,
// and python3-torchvision for resnet18 (skipped otherwise).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/types.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fx_core/io/torch_save.h"
#include "fx_core/ir/graph.h"
#include "fx_core/rewrite/retracing_transformer.h"
#include "fx_core/rewrite/subgraph_rewriter.h"
#include "fx_core/rewrite/transformer.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/tracer/functions.h"
#include "fx_core/tracer/tracer.h"
#include "tests/testing/python.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

using testing::runfile;

class DocsExamples : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") !=
        0) {
      skip_reason_ = "python3-torch is not installed";
      return;
    }
    have_torchvision_ = std::system(
                            "/usr/bin/python3 -c 'import torchvision' "
                            ">/dev/null 2>&1") == 0;
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/docs_cases";
    std::string log = dir_ + ".log";
    std::string command = "PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 " +
                          runfile("tests/fx_core/rewrite/docs_cases.py") + " " +
                          runfile("tools/torchfx_export.py") + " " + dir_ +
                          (have_torchvision_ ? " --resnet18" : "") + " > " +
                          log + " 2>&1";
    if (std::system(command.c_str()) != 0) {
      failure_ = "docs_cases.py failed:\n" + testing::read_file(log);
    }
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_TRUE(failure_.empty()) << failure_;
  }

 public:
  static std::string file(const std::string& c, const std::string& name) {
    return dir_ + "/" + c + "/" + name;
  }
  static std::shared_ptr<GraphModule> load(const std::string& c) {
    auto gm = read_graph_module(file(c, "graph.fx.json"));
    EXPECT_TRUE(gm.ok()) << gm.status().message();
    return gm.ok() ? *gm : nullptr;
  }
  static std::vector<c10::IValue> inputs(const std::string& c) {
    auto v = read_value_file(file(c, "input.pt"));
    EXPECT_TRUE(v.ok()) << v.status().message();
    return v.ok() ? v->toListRef().vec() : std::vector<c10::IValue>{};
  }
  static at::Tensor tensor(const std::string& c, const std::string& name) {
    auto v = read_value_file(file(c, name));
    EXPECT_TRUE(v.ok()) << v.status().message();
    return v.ok() ? v->toTensor() : at::Tensor();
  }

 protected:
  static std::string skip_reason_;
  static std::string failure_;
  static std::string dir_;
  static bool have_torchvision_;
};
std::string DocsExamples::skip_reason_;
std::string DocsExamples::failure_;
std::string DocsExamples::dir_;
bool DocsExamples::have_torchvision_ = false;

// ------------------------------------------------------------- Transformer

// The docs' Transformer: torch.sigmoid <-> Tensor.neg.
class NegSigmSwap : public Transformer {
 public:
  using Transformer::Transformer;
  Argument call_function(const Node& n, std::string_view target,
                         Node::Args args, Node::Kwargs kwargs) override {
    if (target == "torch.sigmoid") {
      return graph().call_function("torch.neg", std::move(args),
                                   std::move(kwargs));
    }
    return Transformer::call_function(n, target, std::move(args),
                                      std::move(kwargs));
  }
  Argument call_method(const Node& n, std::string_view target, Node::Args args,
                       Node::Kwargs kwargs) override {
    if (target == "neg") {
      return graph().call_method("sigmoid", std::move(args), std::move(kwargs));
    }
    return Transformer::call_method(n, target, std::move(args),
                                    std::move(kwargs));
  }
};

TEST_F(DocsExamples, NegSigmSwapTransformerMakesTorchFxsModule) {
  auto gm = load("neg_sigm_swap");
  ASSERT_NE(gm, nullptr);
  std::shared_ptr<GraphModule> out = NegSigmSwap(*gm).transform();
  EXPECT_EQ(out->code(),
            testing::read_file(file("neg_sigm_swap", "transformed.code.py")));
  at::Tensor y = out->forward(inputs("neg_sigm_swap")).toTensor();
  EXPECT_TRUE(at::allclose(y, tensor("neg_sigm_swap", "transformed.pt")));
  // The original is unchanged.
  EXPECT_NE(gm->code(), out->code());
}

TEST_F(DocsExamples, IdentityTransformerKeepsModulesAttributesAndDefaults) {
  auto gm = load("transformer_identity");
  ASSERT_NE(gm, nullptr);
  std::shared_ptr<GraphModule> out = Transformer(*gm).transform();
  EXPECT_EQ(out->code(), testing::read_file(file("transformer_identity",
                                                 "transformed.code.py")));
  at::Tensor y = out->forward(inputs("transformer_identity")).toTensor();
  EXPECT_TRUE(
      at::allclose(y, tensor("transformer_identity", "transformed.pt")));
  // Submodules and parameters are shared with the transformed module, as
  // torch.fx's GraphModule shares them.
  EXPECT_EQ(out->get_submodule("lin"), gm->get_submodule("lin"));
  EXPECT_TRUE(out->get_attr("p").is_same(gm->get_attr("p")));
}

TEST_F(DocsExamples, TransformerKeepsMetaUnlessToldOtherwise) {
  auto gm = load("transformer_identity");
  ASSERT_NE(gm, nullptr);
  for (Node* n : gm->graph().nodes())
    n->set_meta("origin", std::string(n->name()));
  std::shared_ptr<GraphModule> out = Transformer(*gm).transform();
  for (const Node* n : out->graph().nodes()) {
    ASSERT_NE(n->meta_value("origin"), nullptr) << n->name();
    // Names are the same here, so each node carries its own origin.
    EXPECT_EQ(n->meta_value("origin")->as_string(), n->name());
  }
  Transformer::Options options;
  options.keep_meta = false;
  out = Transformer(*gm, options).transform();
  for (const Node* n : out->graph().nodes()) {
    EXPECT_EQ(n->meta_value("origin"), nullptr) << n->name();
  }
}

// ------------------------------------------------------------ replace one op

TEST_F(DocsExamples, ReplaceOneOpThreeWays) {
  const std::string c = "replace_one_op";
  // 1. Direct graph manipulation, as the docs do it: torch.fx's code.
  auto gm = load(c);
  ASSERT_NE(gm, nullptr);
  for (Node* n : gm->graph().nodes()) {
    if (n->op() == Opcode::kCallFunction && n->target() == "torch.add") {
      n->set_target("torch.mul");
    }
  }
  gm->graph().lint();
  gm->recompile();
  EXPECT_EQ(gm->code(), testing::read_file(file(c, "transformed.code.py")));
  std::vector<c10::IValue> in = inputs(c);
  at::Tensor expected = in[0].toTensor() * in[1].toTensor();
  auto first = [](const c10::IValue& v) {
    return v.toTupleRef().elements()[0].toTensor();
  };
  EXPECT_TRUE(at::allclose(first(gm->forward(in)), expected));

  // 2. A Transformer.
  struct AddToMul : Transformer {
    using Transformer::Transformer;
    Argument call_function(const Node& n, std::string_view target,
                           Node::Args args, Node::Kwargs kwargs) override {
      return Transformer::call_function(
          n, target == "torch.add" ? "torch.mul" : target, std::move(args),
          std::move(kwargs));
    }
  };
  auto gm2 = load(c);
  std::shared_ptr<GraphModule> out = AddToMul(*gm2).transform();
  EXPECT_EQ(out->graph().find_nodes(Opcode::kCallFunction, "torch.mul").size(),
            2u);
  EXPECT_TRUE(at::allclose(first(out->forward(in)), expected));

  // 3. replace_pattern.
  auto gm3 = load(c);
  Graph pattern, replacement;
  for (auto [g, target] : {std::pair{&pattern, "torch.add"},
                           std::pair{&replacement, "torch.mul"}}) {
    Node* x = g->placeholder("x");
    Node* y = g->placeholder("y");
    g->output(g->call_function(target, {x, y}));
  }
  EXPECT_EQ(replace_pattern(*gm3, pattern, replacement).size(), 2u);
  EXPECT_TRUE(at::allclose(first(gm3->forward(in)), expected));
}

// Arguments of the new graph as fx::Values of a GraphAppendingTracer
// (proxies for nodes), and back.
Value to_value(GraphAppendingTracer& tracer, const Argument& arg) {
  switch (arg.kind()) {
    case Argument::Kind::kNode:
      return Value(Proxy{arg.as_node(), &tracer});
    case Argument::Kind::kNone:
      return Value();
    case Argument::Kind::kBool:
      return Value(arg.as_bool());
    case Argument::Kind::kInt:
      return Value(arg.as_int());
    case Argument::Kind::kFloat:
      return Value(arg.as_float());
    default:
      throw std::runtime_error("to_value: unsupported argument");
  }
}

// The docs' Transformer again, written as Python writes it: the override
// calls functions of fx::Value on proxies of the new graph's nodes.
class NegSigmSwapRetraced : public RetracingTransformer {
 public:
  using RetracingTransformer::RetracingTransformer;
  Argument call_function(const Node& n, std::string_view target,
                         Node::Args args, Node::Kwargs kwargs) override {
    if (target == "torch.sigmoid") return argument(th::neg(value(args[0])));
    return Transformer::call_function(n, target, std::move(args),
                                      std::move(kwargs));
  }
  Argument call_method(const Node& n, std::string_view target, Node::Args args,
                       Node::Kwargs kwargs) override {
    if (target == "neg") return argument(value(args[0]).sigmoid());
    return Transformer::call_method(n, target, std::move(args),
                                    std::move(kwargs));
  }
};

TEST_F(DocsExamples, NegSigmSwapWithRetracingMakesTorchFxsModule) {
  auto gm = load("neg_sigm_swap");
  ASSERT_NE(gm, nullptr);
  std::shared_ptr<GraphModule> out = NegSigmSwapRetraced(*gm).transform();
  EXPECT_EQ(out->code(),
            testing::read_file(file("neg_sigm_swap", "transformed.code.py")));
}

// ---------------------------------------------------------------- decompose

// The docs' decompose: F.relu replaced by (x > 0) * x, retraced onto the new
// graph through a GraphAppendingTracer.
Value relu_decomposition(Value x) { return (x > 0) * x; }

std::shared_ptr<GraphModule> decompose(GraphModule& model) {
  auto new_graph = std::make_unique<Graph>();
  std::map<std::string, Node*> env;
  GraphAppendingTracer tracer(*new_graph);
  for (Node* node : model.graph().nodes()) {
    if (node->op() == Opcode::kCallFunction &&
        node->target() == "torch.nn.functional.relu") {
      std::vector<Value> proxy_args;
      for (const Argument& a : node->args()) {
        proxy_args.push_back(
            a.is_node() ? Value(Proxy{env.at(std::string(a.as_node()->name())),
                                      &tracer})
                        : to_value(tracer, a));
      }
      Value output_proxy = relu_decomposition(proxy_args[0]);
      env[std::string(node->name())] = output_proxy.node();
    } else {
      env[std::string(node->name())] = new_graph->node_copy(
          node,
          [&](Node* x) -> Argument { return env.at(std::string(x->name())); });
    }
  }
  return std::make_shared<GraphModule>(model, std::move(new_graph));
}

// The same decomposition as a RetracingTransformer: torch.fx's code again.
struct DecomposeRelu : RetracingTransformer {
  using RetracingTransformer::RetracingTransformer;
  Argument call_function(const Node& n, std::string_view target,
                         Node::Args args, Node::Kwargs kwargs) override {
    if (target == "torch.nn.functional.relu") {
      return argument(relu_decomposition(value(args[0])));
    }
    return Transformer::call_function(n, target, std::move(args),
                                      std::move(kwargs));
  }
};

TEST_F(DocsExamples, DecomposeAsARetracingTransformer) {
  auto gm = load("decompose");
  ASSERT_NE(gm, nullptr);
  for (Node* n : gm->graph().nodes())
    n->set_meta("from", std::string(n->name()));
  std::shared_ptr<GraphModule> out = DecomposeRelu(*gm).transform();
  EXPECT_EQ(out->code(),
            testing::read_file(file("decompose", "transformed.code.py")));
  EXPECT_TRUE(at::allclose(out->forward(inputs("decompose")).toTensor(),
                           tensor("decompose", "expected.pt")));
  // The nodes a decomposition made carry the decomposed node's meta.
  for (const Node* n : out->graph().nodes()) {
    if (n->name() == "gt" || n->name() == "mul") {
      EXPECT_EQ(n->meta_value("from")->as_string(), "relu") << n->name();
    }
  }
}

TEST_F(DocsExamples, DecomposeRetracesReluAsTorchFxDoes) {
  auto gm = load("decompose");
  ASSERT_NE(gm, nullptr);
  std::shared_ptr<GraphModule> out = decompose(*gm);
  EXPECT_EQ(out->code(),
            testing::read_file(file("decompose", "transformed.code.py")));
  std::vector<c10::IValue> in = inputs("decompose");
  EXPECT_TRUE(at::allclose(out->forward(in).toTensor(),
                           tensor("decompose", "transformed.pt")));
  EXPECT_TRUE(at::allclose(out->forward(in).toTensor(),
                           tensor("decompose", "expected.pt")));
}

// ------------------------------------------------------------------ invert

void register_tan_ops() {
  // Not among the built-in ops: the registry is open.
  OpRegistry& r = OpRegistry::global();
  r.add(Opcode::kCallFunction, "torch.tan", "input",
        [](OpArgs& a) -> c10::IValue { return at::tan(a.tensor(0)); });
  r.add(Opcode::kCallFunction, "torch.arctan", "input",
        [](OpArgs& a) -> c10::IValue { return at::arctan(a.tensor(0)); });
}

// The docs' invert: a new graph built from the old one backwards.
std::shared_ptr<GraphModule> invert(GraphModule& model) {
  const std::map<std::string, std::string> inverse = {
      {"torch.sin", "torch.arcsin"}, {"torch.arcsin", "torch.sin"},
      {"torch.cos", "torch.arccos"}, {"torch.arccos", "torch.cos"},
      {"torch.tan", "torch.arctan"}, {"torch.arctan", "torch.tan"},
      {"torch.exp", "torch.log"},    {"torch.log", "torch.exp"}};
  auto new_graph = std::make_unique<Graph>();
  std::map<std::string, Node*> env;
  for (Node* node : model.graph().reversed_nodes()) {
    if (node->op() == Opcode::kCallFunction) {
      Node* new_node = new_graph->call_function(
          inverse.at(node->target()), {env.at(std::string(node->name()))});
      env[std::string(node->args()[0].as_node()->name())] = new_node;
    } else if (node->op() == Opcode::kOutput) {
      Node* new_node = new_graph->placeholder(node->name());
      env[std::string(node->args()[0].as_node()->name())] = new_node;
    } else if (node->op() == Opcode::kPlaceholder) {
      new_graph->output(env.at(std::string(node->name())));
    } else {
      throw std::runtime_error("Not implemented");
    }
  }
  new_graph->lint();
  return std::make_shared<GraphModule>(model, std::move(new_graph));
}

TEST_F(DocsExamples, InvertBuildsTorchFxsInverseGraph) {
  register_tan_ops();
  auto gm = load("invert");
  ASSERT_NE(gm, nullptr);
  std::shared_ptr<GraphModule> inverted = invert(*gm);
  EXPECT_EQ(inverted->code(),
            testing::read_file(file("invert", "transformed.code.py")));
  at::Tensor x = inputs("invert")[0].toTensor();
  at::Tensor y = gm->forward({x}).toTensor();
  EXPECT_TRUE(at::allclose(inverted->forward({y}).toTensor(), x, 1e-5, 1e-6));
}

// ---------------------------------------------------------- shape propagation

// The docs' ShapeProp, on the Interpreter: each node's tensor shape and dtype
// go into its meta as `tensor_meta`.
class ShapeProp : public Interpreter {
 public:
  using Interpreter::Interpreter;
  c10::IValue run_node(const Node& n) override {
    c10::IValue v = Interpreter::run_node(n);
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      ArgumentList shape;
      for (int64_t d : t.sizes()) shape.push_back(Argument(d));
      // The graph is the module's own: run_node gets it const, meta is ours.
      const_cast<Node&>(n).set_meta(
          "tensor_meta",
          Argument::dict(
              {{"shape", Argument::list(shape)},
               {"dtype", Argument::dtype(std::string("torch.") +
                                         c10::toString(t.scalar_type()))}}));
    }
    return v;
  }
};

std::string dtype_name(const Argument& dtype) {
  std::string s = dtype.as_string();
  // c10 spells torch.float32 "Float".
  if (s == "torch.Float") return "torch.float32";
  return s;
}

std::string shapes_text(const Graph& g) {
  std::string out;
  for (const Node* n : g.nodes()) {
    out += std::string(n->name());
    const Argument* meta = n->meta_value("tensor_meta");
    if (meta == nullptr) {
      out += " -\n";
      continue;
    }
    out += " [";
    const ArgumentList& shape = meta->find("shape")->elements();
    for (size_t i = 0; i < shape.size(); ++i) {
      out += (i ? ", " : "") + std::to_string(shape[i].as_int());
    }
    out += "] " + dtype_name(*meta->find("dtype")) + "\n";
  }
  return out;
}

TEST_F(DocsExamples, ShapePropRecordsTorchFxsShapes) {
  auto gm = load("conv_bn_net");
  ASSERT_NE(gm, nullptr);
  ShapeProp(*gm).run(inputs("conv_bn_net"));
  EXPECT_EQ(shapes_text(gm->graph()),
            testing::read_file(file("conv_bn_net", "shapes.txt")));
  // The shapes survive a Transformer, and a rewrite carries them to the
  // replacement nodes.
  std::shared_ptr<GraphModule> copy = Transformer(*gm).transform();
  EXPECT_EQ(shapes_text(copy->graph()), shapes_text(gm->graph()));
  Graph pattern, replacement;
  pattern.output(pattern.call_method("flatten", {pattern.placeholder("x"), 1}));
  Node* x = replacement.placeholder("x");
  replacement.output(
      replacement.call_method("reshape", {x, Argument::tuple({2, -1})}));
  auto r = replace_pattern(*copy, pattern, replacement);
  ASSERT_EQ(r.size(), 1u);
  const Argument* meta = r[0].replacements[0]->meta_value("tensor_meta");
  ASSERT_NE(meta, nullptr);
  EXPECT_EQ(*meta->find("shape"), (Argument{2, 256}));
}

// ------------------------------------------------------ Conv/BatchNorm fusion

// torch.nn.utils.fusion.fuse_conv_bn_eval.
std::shared_ptr<torch::nn::Module> fuse_conv_bn_eval(
    const torch::nn::Conv2dImpl& conv, const torch::nn::BatchNorm2dImpl& bn) {
  const auto& o = conv.options;
  torch::nn::Conv2dOptions options(o.in_channels(), o.out_channels(),
                                   o.kernel_size());
  options.stride(o.stride())
      .padding(o.padding())
      .dilation(o.dilation())
      .groups(o.groups())
      .padding_mode(o.padding_mode())
      .bias(true);
  torch::nn::Conv2d fused(options);
  torch::NoGradGuard no_grad;
  at::Tensor gamma =
      bn.weight.defined() ? bn.weight : at::ones_like(bn.running_mean);
  at::Tensor beta =
      bn.bias.defined() ? bn.bias : at::zeros_like(bn.running_mean);
  at::Tensor scale = gamma * at::rsqrt(bn.running_var + bn.options.eps());
  at::Tensor bias =
      conv.bias.defined() ? conv.bias : at::zeros_like(bn.running_mean);
  fused->weight.copy_(conv.weight * scale.reshape({-1, 1, 1, 1}));
  fused->bias.copy_((bias - bn.running_mean) * scale + beta);
  fused->eval();
  return fused.ptr();
}

template <typename T>
std::shared_ptr<T> module_at(const GraphModule& gm, const Node& n) {
  if (n.op() != Opcode::kCallModule) return nullptr;
  return std::dynamic_pointer_cast<T>(gm.get_submodule(n.target()));
}

// The docs' fuser (torch.fx.experimental.optimization.fuse) for Conv2d and
// BatchNorm2d, by direct graph manipulation. Returns the number fused.
int fuse_conv_bn(GraphModule& gm) {
  int fused = 0;
  Graph& g = gm.graph();
  for (Node* node : g.nodes()) {
    auto bn = module_at<torch::nn::BatchNorm2dImpl>(gm, *node);
    if (bn == nullptr || node->args().empty() || !node->args()[0].is_node()) {
      continue;
    }
    Node* conv_node = node->args()[0].as_node();
    auto conv = module_at<torch::nn::Conv2dImpl>(gm, *conv_node);
    if (conv == nullptr || conv_node->num_users() > 1) continue;
    if (!bn->options.track_running_stats()) continue;
    gm.add_submodule(conv_node->target(), fuse_conv_bn_eval(*conv, *bn));
    node->replace_all_uses_with(conv_node);
    g.erase_node(node);
    ++fused;
  }
  gm.recompile();
  return fused;
}

// The same with replace_pattern: conv -> bn matched by module type, replaced
// by a call of the matched conv, whose module is then fused.
int fuse_conv_bn_by_pattern(GraphModule& gm) {
  Graph pattern, replacement;
  Node* c = pattern.call_module("torch.nn.Conv2d", {pattern.placeholder("x")});
  pattern.output(pattern.call_module("torch.nn.BatchNorm2d", {c}));
  replacement.output(replacement.call_module("torch.nn.Conv2d",
                                             {replacement.placeholder("x")}));
  const Node* pattern_bn = pattern.output_node()->args()[0].as_node();
  RewriteOptions options;
  options.match_modules_by_type = true;
  // The modules are fused before the graph changes: a filter sees each
  // match first.
  std::vector<std::pair<std::string, std::string>> pairs;
  MatchFilter collect = [&](const InternalMatch& m, const Graph&,
                            const Graph&) {
    pairs.emplace_back(m.node_for(c)->target(),
                       m.node_for(pattern_bn)->target());
    return true;
  };
  auto r = replace_pattern_with_filters(gm, pattern, replacement, {collect},
                                        options);
  for (const auto& [conv_path, bn_path] : pairs) {
    auto conv = std::dynamic_pointer_cast<torch::nn::Conv2dImpl>(
        gm.get_submodule(conv_path));
    auto bn = std::dynamic_pointer_cast<torch::nn::BatchNorm2dImpl>(
        gm.get_submodule(bn_path));
    gm.add_submodule(conv_path, fuse_conv_bn_eval(*conv, *bn));
  }
  gm.recompile();
  return static_cast<int>(r.size());
}

void check_fusion(const std::string& c, int expected_fusions) {
  SCOPED_TRACE(c);
  auto gm = DocsExamples::load(c);
  ASSERT_NE(gm, nullptr);
  const size_t before = gm->graph().size();
  EXPECT_EQ(fuse_conv_bn(*gm), expected_fusions);
  EXPECT_EQ(gm->graph().size(), before - expected_fusions);
  EXPECT_EQ(gm->code(),
            testing::read_file(DocsExamples::file(c, "transformed.code.py")));
  std::vector<c10::IValue> in = DocsExamples::inputs(c);
  at::Tensor y = gm->forward(in).toTensor();
  at::Tensor eager = DocsExamples::tensor(c, "expected.pt");
  at::Tensor torch_fx = DocsExamples::tensor(c, "transformed.pt");
  EXPECT_TRUE(at::allclose(y, torch_fx, 1e-4, 1e-5))
      << (y - torch_fx).abs().max().item<double>();
  EXPECT_TRUE(at::allclose(y, eager, 1e-4, 1e-4))
      << (y - eager).abs().max().item<double>();

  auto gm2 = DocsExamples::load(c);
  EXPECT_EQ(fuse_conv_bn_by_pattern(*gm2), expected_fusions);
  EXPECT_EQ(gm2->graph().size(), before - expected_fusions);
  at::Tensor y2 = gm2->forward(in).toTensor();
  EXPECT_TRUE(at::allclose(y2, y, 1e-5, 1e-6))
      << (y2 - y).abs().max().item<double>();
}

TEST_F(DocsExamples, ConvBatchNormFusionOnASmallNet) {
  check_fusion("conv_bn_net", 2);
}

TEST_F(DocsExamples, ConvBatchNormFusionOnResnet18) {
  if (!have_torchvision_)
    GTEST_SKIP() << "python3-torchvision is not installed";
  check_fusion("resnet18", 20);
}

}  // namespace
}  // namespace fx
