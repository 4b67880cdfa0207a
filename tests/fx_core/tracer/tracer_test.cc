// fx::symbolic_trace against torch.fx on Python twins (twins.py): operators,
// indexing, methods, torch / functional calls with torch.fx's argument forms,
// parameters, buffers and tensor constants, containers, concrete_args, wrap,
// a custom Tracer and unpacking. Each case's graph text and code must equal
// torch.fx's; where the module runs, the GraphModule must compute what the
// eager module computes.
#include "fx_core/tracer/tracer.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/moduledict.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/modules/pooling.h>

#include <map>
#include <sstream>

#include "fx_core/ir/codegen.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/tracer/functions.h"
#include "sdk_examples/tracing/seed_examples.h"
#include "tests/fx_core/tracer/tracer_testing.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

using namespace fx::literals;  // NOLINT

struct Operators : fx::Module<Operators> {
  Operators() : fx::Module<Operators>("x, y") {}
  Value forward(Value x, Value y) {
    Value a = x + y;
    Value b = a - 1;
    Value c = 2 * b;
    Value d = c / y;
    Value e = fx::pow(d, 2);
    Value f = fx::matmul(e, y);
    Value g = -f;
    Value h = 1 - g;
    Value i = fx::floordiv(h, 3);
    Value j = h % 2;
    Value k = x > y;
    Value l = x <= 0.5;
    Value m = x == y;
    Value n = 1.5 / x;
    return fx::tuple({i, j, k, l, m, n});
  }
};

struct Indexing : fx::Module<Indexing> {
  Value forward(Value x) {
    return fx::list({x[0], x[fx::slice(1, 3)], x[{fx::slice(), 1}],
                     x[{fx::ellipsis(), 0}], x[nullptr],
                     x[{fx::slice(), fx::slice(nullptr, nullptr, 2)}]});
  }
};

struct Methods : fx::Module<Methods> {
  Value forward(Value x) {
    Value a = x.relu();
    Value b = a.clamp("min"_kw = 0.0, "max"_kw = 1.0);
    Value c = b.view(-1, 4);
    Value d = c.flatten(1);
    Value n = d.size(0);
    Value s = d.shape();
    Value e = d.reshape(s[0], -1);
    Value f = e.sum("dim"_kw = 0, "keepdim"_kw = true);
    Value g = f.softmax(-1);
    Value h = g.unsqueeze(0).transpose(0, 1);
    Value i = h.permute(1, 0, 2);
    Value j = i.to(at::kFloat);
    Value k = j * n;  // one traced operation per statement: C++ leaves the
                      // order of an expression's operands unspecified
    return k + x.dim();
  }
};

struct Functions : fx::Module<Functions> {
  Functions() : fx::Module<Functions>("x, y") {}
  Value forward(Value x, Value y) {
    Value a = th::relu(x);
    Value b = th::sum(a, "dim"_kw = -1);
    auto [values, indices] = th::topk(x, 2).unpack<2>();
    Value c = th::cat({x, y}, 1);
    Value d = th::flatten(c, 1);
    Value e = th::stack({x, y});
    Value f = F::relu(x);
    Value g = F::softmax(y, -1);
    Value h = F::dropout(g, 0.1, false);
    return fx::tuple({b, values, indices, d, e, f + h});
  }
};

struct Functional : fx::Module<Functional> {
  Functional() { w = register_parameter("w", at::rand({4, 4})); }
  Value forward(Value x) {
    Value a = F::linear(x, w);
    Value b = F::relu6(a);
    Value c = F::silu(b);
    Value d = F::hardswish(c);
    Value e = F::hardsigmoid(d);
    Value f = F::log_softmax(e, 1);
    Value g = F::layer_norm(f, fx::tuple({4}));
    Value h = F::gelu(g);
    Value i = F::max_pool2d(h.view(1, 1, 2, 8), 2);
    Value j = F::avg_pool2d(i, 1);
    Value k = F::conv2d(j, at::ones({1, 1, 1, 1}));
    return F::leaky_relu(k, 0.1);
  }
  at::Tensor w;
};

struct Constants : fx::Module<Constants> {
  Constants() {
    weight = register_parameter("weight", at::rand({4}));
    buf = register_buffer("buf", at::zeros({4}));
  }
  Value forward(Value x) {
    Value a = x + weight;
    Value b = a * weight;
    Value c = b + buf;
    Value d = c - buf;
    return d + at::ones({4});
  }
  at::Tensor weight, buf;
};

struct Block : fx::Module<Block> {
  Block() { linear = register_module("linear", torch::nn::Linear(4, 4)); }
  Value forward(Value x) {
    Value r = linear(x).relu();
    return r + x;
  }
  Submodule<torch::nn::Linear> linear;
};

struct Containers : fx::Module<Containers> {
  Containers() {
    seq = register_module(
        "seq", torch::nn::Sequential(torch::nn::Linear(4, 4), torch::nn::ReLU(),
                                     std::make_shared<Block>()));
    blocks = register_module("blocks",
                             torch::nn::ModuleList(std::make_shared<Block>(),
                                                   torch::nn::Linear(4, 4)));
    heads = register_module(
        "heads",
        torch::nn::ModuleDict(
            std::vector<
                std::pair<std::string, std::shared_ptr<torch::nn::Module>>>{
                {"a", torch::nn::Linear(4, 2).ptr()},
                {"b", std::make_shared<Block>()}}));
  }
  Value forward(Value x) {
    x = seq(x);
    for (const auto& b : *blocks) x = fx::call(b, x);
    Value hb = fx::call((*heads)["b"], x);
    return fx::call((*heads)["a"], hb);
  }
  Submodule<torch::nn::Sequential> seq;
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::ModuleDict heads{nullptr};
};

namespace nn = torch::nn;

struct Leaves : fx::Module<Leaves> {
  Leaves() : fx::Module<Leaves>("x, idx") {
    emb = register_module("emb", nn::Embedding(10, 8));
    conv1 = register_module("conv1",
                            nn::Conv1d(nn::Conv1dOptions(4, 8, 3).padding(1)));
    bn = register_module("bn", nn::BatchNorm1d(8));
    ln = register_module("ln", nn::LayerNorm(nn::LayerNormOptions({8})));
    gn = register_module("gn", nn::GroupNorm(2, 8));
    act = register_module("act", nn::GELU());
    silu = register_module("silu", nn::SiLU());
    drop = register_module("drop", nn::Dropout(0.1));
    pool = register_module("pool", nn::MaxPool1d(2));
    flat = register_module("flat", nn::Flatten());
    conv2 = register_module("conv2", nn::Conv2d(1, 2, 3));
    avg = register_module("avg", nn::AdaptiveAvgPool2d(1));
  }
  Value forward(Value x, Value idx) {
    Value e = emb(idx);
    Value h = conv1(x);
    h = bn(h);
    h = ln(h.transpose(1, 2)).transpose(1, 2);
    h = gn(h);
    h = silu(act(h));
    Value dropped = drop(h);
    h = dropped + e.transpose(1, 2);
    h = pool(h);
    h = flat(h);
    Value img = avg(conv2(h.view(h.size(0), 1, 4, -1)));
    return flat(img);
  }
  Submodule<nn::Embedding> emb;
  Submodule<nn::Conv1d> conv1;
  Submodule<nn::BatchNorm1d> bn;
  Submodule<nn::LayerNorm> ln;
  Submodule<nn::GroupNorm> gn;
  Submodule<nn::GELU> act;
  Submodule<nn::SiLU> silu;
  Submodule<nn::Dropout> drop;
  Submodule<nn::MaxPool1d> pool;
  Submodule<nn::Flatten> flat;
  Submodule<nn::Conv2d> conv2;
  Submodule<nn::AdaptiveAvgPool2d> avg;
};

struct Concrete : fx::Module<Concrete> {
  Concrete() : fx::Module<Concrete>("x, flag=None, n=3") {}
  Value forward(Value x, Value flag, int64_t n) {
    if (flag.is_none()) return x + n;
    return x;
  }
};

struct ConcreteBool : fx::Module<ConcreteBool> {
  ConcreteBool() : fx::Module<ConcreteBool>("x, flag") {}
  Value forward(Value x, bool flag) {
    if (flag) return x;
    return x * 2;
  }
};

struct ConcretePH : fx::Module<ConcretePH> {
  ConcretePH() : fx::Module<ConcretePH>("x, y") {}
  Value forward(Value x, Value y) { return x + y; }
};

const auto my_custom_function =
    fx::wrap("mylib.my_custom_function",
             [](at::Tensor x, at::Tensor y) { return x * x + y * y; });

struct Wrapped : fx::Module<Wrapped> {
  Wrapped() : fx::Module<Wrapped>("x, y") {}
  Value forward(Value x, Value y) { return my_custom_function(x, y) + 1; }
};

const auto scale_add =
    fx::autowrappable("mylib.scale_add", [](Value x, Value y) -> Value {
      Value doubled = x * 2;
      return doubled + y;
    });

struct UsesScaleAdd : fx::Module<UsesScaleAdd> {
  UsesScaleAdd() : fx::Module<UsesScaleAdd>("x, y") {}
  Value forward(Value x, Value y) { return scale_add(x, y).relu(); }
};

struct SpecialLeafTracer : Tracer {
  bool is_leaf_module(const torch::nn::Module& m,
                      std::string_view qualified_name) const override {
    return dynamic_cast<const examples::MySpecialSubmodule*>(&m) != nullptr ||
           Tracer::is_leaf_module(m, qualified_name);
  }
};

struct ParamOrder : fx::Module<ParamOrder> {
  ParamOrder() {
    weight = register_parameter("weight", at::rand({4}));
    buf = register_buffer("buf", at::ones({4}));
  }
  Value forward(Value x) {
    Value w = attr(weight);  // get_attr here, as `w = self.weight`
    Value b = attr(buf);     // a buffer stays a tensor until used
    Value y = x.relu();
    Value yw = y * w;
    return yw + b;
  }
  at::Tensor weight, buf;
};

struct Unpack : fx::Module<Unpack> {
  Value forward(Value x) {
    Value t = th::topk(x, 2);
    auto [values, indices] = t.unpack<2>();
    Value m = values * 2;
    return fx::tuple({m, indices});
  }
};

// torch.fx's goldens, made once per run by twins.py.
class TorchFxTwins : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::have_python_torch()) {
      skip_ = "python3-torch is not installed";
      return;
    }
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/twins";
    std::string cmd = "/usr/bin/python3 " +
                      testing::runfile("tests/fx_core/tracer/twins.py") + " " +
                      dir_ + " > " + dir_ + ".log 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      failed_ = testing::read_file(dir_ + ".log");
    }
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(failed_.empty()) << failed_;
  }
  static void expect_torch_fx(const std::string& name, const Graph& graph) {
    EXPECT_EQ(graph.str() + "\n",
              testing::read_file(dir_ + "/" + name + "/graph.txt"))
        << name;
    EXPECT_EQ(graph.python_code("self").src,
              testing::read_file(dir_ + "/" + name + "/code.py"))
        << name;
  }
  static std::string dir_, skip_, failed_;
};
std::string TorchFxTwins::dir_, TorchFxTwins::skip_, TorchFxTwins::failed_;

// Runs the eager module and the GraphModule on the same inputs.
void expect_runs_like_eager(TraceableModule& m, GraphModule& gm,
                            std::vector<at::Tensor> inputs) {
  std::vector<Value> values(inputs.begin(), inputs.end());
  std::vector<c10::IValue> ivalues(inputs.begin(), inputs.end());
  testing::expect_same(gm.forward(ivalues), m.call_forward(values).to_ivalue());
}

TEST_F(TorchFxTwins, Operators) {
  Operators m;
  auto gm = symbolic_trace(m);
  expect_torch_fx("operators", gm->graph());
  expect_runs_like_eager(m, *gm, {at::rand({4, 4}), at::rand({4, 4}) + 0.5});
}

TEST_F(TorchFxTwins, Indexing) {
  Indexing m;
  auto gm = symbolic_trace(m);
  expect_torch_fx("indexing", gm->graph());
  expect_runs_like_eager(m, *gm, {at::rand({4, 4, 3})});
}

TEST_F(TorchFxTwins, Methods) {
  Methods m;
  auto gm = symbolic_trace(m);
  expect_torch_fx("methods", gm->graph());
  expect_runs_like_eager(m, *gm, {at::rand({2, 8})});
}

TEST_F(TorchFxTwins, TorchAndFunctionalCalls) {
  Functions m;
  auto gm = symbolic_trace(m);
  expect_torch_fx("functions", gm->graph());
  expect_runs_like_eager(m, *gm, {at::rand({3, 4}), at::rand({3, 4})});
}

TEST_F(TorchFxTwins, FunctionalCallsWithTorchFxTargetsAndForms) {
  Functional m;
  auto gm = symbolic_trace(m);
  expect_torch_fx("functional", gm->graph());
  expect_runs_like_eager(m, *gm, {at::rand({4, 4})});
}

TEST_F(TorchFxTwins, ParametersBuffersAndTensorConstants) {
  Constants m;
  auto gm = symbolic_trace(m);
  expect_torch_fx("constants", gm->graph());
  EXPECT_TRUE(at::equal(gm->get_attr("_tensor_constant0"), at::ones({4})));
  expect_runs_like_eager(m, *gm, {at::rand({4})});
}

TEST_F(TorchFxTwins, StandardModulesAreLeaves) {
  Leaves m;
  m.eval();
  auto gm = symbolic_trace(m);
  expect_torch_fx("leaves", gm->graph());
  expect_runs_like_eager(m, *gm,
                         {at::rand({2, 4, 8}), at::randint(10, {2, 8})});
}

TEST_F(TorchFxTwins, SequentialModuleListAndModuleDict) {
  Containers m;
  auto gm = symbolic_trace(m);
  expect_torch_fx("containers", gm->graph());
  expect_runs_like_eager(m, *gm, {at::rand({2, 4})});
}

TEST_F(TorchFxTwins, ConcreteArgsWithNoneAndInt) {
  Concrete m;
  auto gm = symbolic_trace(m, {{"flag", nullptr}, {"n", 3}});
  expect_torch_fx("concrete", gm->graph());
  at::Tensor x = at::rand({3});
  EXPECT_TRUE(at::equal(gm->forward({x, c10::IValue(), 3}).toTensor(), x + 3));
  // The specialised value is asserted at run time, as in torch.fx.
  EXPECT_ANY_THROW(gm->forward({x, c10::IValue(), 4}));
}

TEST_F(TorchFxTwins, ConcreteArgsWithBool) {
  ConcreteBool m;
  auto gm = symbolic_trace(m, {{"flag", true}});
  expect_torch_fx("concrete_bool", gm->graph());
  at::Tensor x = at::rand({3});
  EXPECT_TRUE(at::equal(gm->forward({x, true}).toTensor(), x));
}

TEST_F(TorchFxTwins, ConcreteArgsPlaceholder) {
  ConcretePH m;
  auto gm = symbolic_trace(m, {{"y", PH}});
  expect_torch_fx("concrete_ph", gm->graph());
}

struct ReluModule : fx::Module<ReluModule> {
  Value forward(Value x) { return F::relu(x) + 1; }
};

// The docs' decomposition example: a transform written with Values over the
// nodes of a new graph (GraphAppendingTracer).
Value relu_decomposition(const Value& x) {
  Value positive = x > 0;
  return positive * x;
}

TEST_F(TorchFxTwins, DecompositionWithGraphAppendingTracer) {
  ReluModule m;
  std::unique_ptr<Graph> graph = Tracer().trace(m);
  auto new_graph = std::make_unique<Graph>();
  GraphAppendingTracer tracer(*new_graph);
  std::map<const Node*, Node*> env;
  for (Node* node : graph->nodes()) {
    if (node->op() == Opcode::kCallFunction &&
        node->target() == "torch.nn.functional.relu") {
      Value x = Proxy{env.at(node->args()[0].as_node()), &tracer};
      env[node] = relu_decomposition(x).node();
    } else {
      env[node] = new_graph->node_copy(
          node, [&](Node* n) { return Argument(env.at(n)); });
    }
  }
  expect_torch_fx("decomposition", *new_graph);
  GraphModule gm(m, std::move(new_graph));
  at::Tensor x = at::randn({5});
  EXPECT_TRUE(at::equal(gm.forward({x}).toTensor(), at::relu(x) + 1));
}

TEST_F(TorchFxTwins, FreeFunctionWithConcreteArgs) {
  auto gm = symbolic_trace_function("f", "x, flag",
                                    [](Value x, bool flag) -> Value {
                                      if (flag) return x;
                                      return x * 2;
                                    },
                                    {{"flag", false}});
  expect_torch_fx("function", gm->graph());
  EXPECT_EQ(gm->class_name(), "f");
  at::Tensor x = at::rand({3});
  EXPECT_TRUE(at::equal(gm->forward({x, false}).toTensor(), x * 2));
}

TEST_F(TorchFxTwins, WrappedFunctionIsOneCall) {
  Wrapped m;
  auto gm = symbolic_trace(m);
  expect_torch_fx("wrapped", gm->graph());
  expect_runs_like_eager(m, *gm, {at::rand({3}), at::rand({3})});
}

TEST_F(TorchFxTwins, AutowrapFunctionsOfTheTracer) {
  UsesScaleAdd m;
  auto traced = symbolic_trace(m);
  expect_torch_fx("autowrap_traced_through", traced->graph());
  Tracer tracer;
  tracer.autowrap_functions = {"mylib.scale_add"};
  auto recorded = symbolic_trace(m, {}, &tracer);
  expect_torch_fx("autowrap_recorded", recorded->graph());
  at::Tensor x = at::rand({3}), y = at::rand({3});
  at::Tensor want = (x * 2 + y).relu();
  EXPECT_TRUE(at::allclose(traced->forward({x, y}).toTensor(), want));
  EXPECT_TRUE(at::allclose(recorded->forward({x, y}).toTensor(), want));
  EXPECT_TRUE(at::allclose(m.forward(x, y).tensor(), want));
}

TEST_F(TorchFxTwins, CustomTracerLeafModule) {
  examples::LeafModule m;
  SpecialLeafTracer tracer;
  std::unique_ptr<Graph> g = tracer.trace(m);
  expect_torch_fx("leaf_tracer", *g);
}

TEST_F(TorchFxTwins, ParameterReadBeforeUse) {
  ParamOrder m;
  auto gm = symbolic_trace(m);
  expect_torch_fx("param_order", gm->graph());
  expect_runs_like_eager(m, *gm, {at::randn({4})});
}

TEST_F(TorchFxTwins, UnpackingRecordsGetitems) {
  Unpack m;
  auto gm = symbolic_trace(m);
  expect_torch_fx("unpack", gm->graph());
  expect_runs_like_eager(m, *gm, {at::rand({3, 5})});
}

// ------------------------------------------------ behaviour without goldens

// Python's `x ** 2` is Tensor.pow(Scalar), which squares exactly; the
// tensor-tensor kernel differs in the last bit on 75 of these 4096 values.
TEST(Tracer, PowerOfNumberTakesTheScalarOverload) {
  at::Tensor x = at::linspace(0, 1, 4096);
  Value v = x;
  EXPECT_TRUE(at::equal(fx::pow(v, 2).tensor(), x.pow(2)));
  EXPECT_TRUE(at::equal(fx::pow(v, 0.5).tensor(), x.pow(0.5)));
}

TEST(Tracer, EagerValuesAreRealTensors) {
  at::Tensor x = at::rand({3, 4});
  Value v = x;
  EXPECT_TRUE(v.is_tensor());
  EXPECT_TRUE(at::equal((v + 1).tensor(), x + 1));
  EXPECT_TRUE(at::equal(v.relu().tensor(), x.relu()));
  EXPECT_TRUE(at::equal(v.clamp("min"_kw = 0.2).tensor(), x.clamp(0.2)));
  EXPECT_TRUE(at::equal(th::sum(v, "dim"_kw = -1).tensor(), x.sum(-1)));
  EXPECT_TRUE(at::equal(v.clamp(0.2, 0.5).tensor(), x.clamp(0.2, 0.5)));
  EXPECT_TRUE(at::equal(v.view(-1, 2).tensor(), x.view({-1, 2})));
  EXPECT_TRUE(at::equal(v.permute(1, 0).tensor(), x.permute({1, 0})));
  EXPECT_TRUE(at::equal(v.transpose(0, 1).tensor(), x.transpose(0, 1)));
  EXPECT_TRUE(at::equal(v.unsqueeze(0).tensor(), x.unsqueeze(0)));
  EXPECT_TRUE(at::equal(th::flatten(v, 0).tensor(), x.flatten(0)));
  EXPECT_TRUE(at::equal(fx::matmul(v, v.t()).tensor(), x.matmul(x.t())));
  EXPECT_TRUE(at::equal((2 - v).tensor(), 2 - x));
  EXPECT_TRUE(at::equal(fx::pow(v, 2).tensor(), x.pow(2)));
  // Targets bound to ATen's schemas (no hand-written kernel) run too.
  EXPECT_TRUE(at::equal(th::narrow(v, 1, 0, 2).tensor(), x.narrow(1, 0, 2)));
  EXPECT_EQ(v.size(0).to_int(), 3);
  EXPECT_EQ(v.shape()[1].to_int(), 4);
  EXPECT_TRUE(at::equal(v[{fx::slice(), 1}].tensor(), x.select(1, 1)));
  int64_t rows = 0;
  for (Value row : v) {
    EXPECT_EQ(row.tensor().dim(), 1);
    ++rows;
  }
  EXPECT_EQ(rows, 3);
  EXPECT_TRUE(static_cast<bool>(v.sum() > 0));
}

TEST(Tracer, ValuesPrintAsTorchFxProxies) {
  struct Root : fx::Module<Root> {
    Value forward(Value x) {
      std::ostringstream out;
      out << x << " " << fx::tuple({x, 1});
      text = out.str();
      return x;
    }
    std::string text;
  };
  Root root;
  symbolic_trace(root);
  EXPECT_EQ(root.text, "Proxy(x) (Proxy(x), 1)");
}

TEST(Tracer, SequentialsRunModulesWithoutRegistryEntriesEagerly) {
  // Softplus has no op registry module kind: eagerly it runs through its
  // own forward; traced it is a leaf call_module.
  struct Root : fx::Module<Root> {
    Root() {
      seq = register_module("seq",
                            torch::nn::Sequential(torch::nn::Softplus(),
                                                  std::make_shared<Block>()));
      fxseq = register_module("fxseq", fx::sequential(torch::nn::Softplus()));
    }
    Value forward(Value x) {
      Value h = seq(x);
      return fxseq(h);
    }
    Submodule<torch::nn::Sequential> seq;
    Submodule<fx::Sequential> fxseq;
  };
  Root root;
  at::Tensor x = at::randn({2, 4});
  at::Tensor h =
      root.seq->ptr(1)->as<Block>()->forward(at::softplus(x)).tensor();
  EXPECT_TRUE(at::allclose(root.forward(x).tensor(), at::softplus(h)));
  std::unique_ptr<Graph> g = Tracer().trace(root);
  EXPECT_EQ(g->find_nodes(Opcode::kCallModule, "seq.0").size(), 1u);
  EXPECT_EQ(g->find_nodes(Opcode::kCallModule, "fxseq.0").size(), 1u);
}

TEST(Tracer, ParameterNodeIsReusedBufferNodeIsNot) {
  Constants m;
  auto gm = symbolic_trace(m);
  EXPECT_EQ(gm->graph().find_nodes(Opcode::kGetAttr, "weight").size(), 1u);
  EXPECT_EQ(gm->graph().find_nodes(Opcode::kGetAttr, "buf").size(), 2u);
}

TEST(Tracer, RegisteredLeafModuleTypeIsCalledNotTraced) {
  struct VendorBlock : fx::Module<VendorBlock> {
    Value forward(Value x) { return x.relu(); }
  };
  struct Root : fx::Module<Root> {
    Root() {
      block = register_module("block", std::make_shared<VendorBlock>());
    }
    Value forward(Value x) { return block(x); }
    Submodule<std::shared_ptr<VendorBlock>> block;
  };
  Root root;
  EXPECT_EQ(
      Tracer().trace(root)->find_nodes(Opcode::kCallMethod, "relu").size(), 1u);
  register_leaf_module<VendorBlock>();
  std::unique_ptr<Graph> g = Tracer().trace(root);
  EXPECT_EQ(g->find_nodes(Opcode::kCallModule, "block").size(), 1u);
}

TEST(Tracer, AutowrapFunctionsAreRecordedAsCalls) {
  struct Root : fx::Module<Root> {
    Value forward(Value x) { return math::floor(x.size(0)); }
  };
  Root root;
  Tracer tracer;
  std::unique_ptr<Graph> g = tracer.trace(root);
  auto calls = g->find_nodes(Opcode::kCallFunction, "math.floor");
  ASSERT_EQ(calls.size(), 1u);
  const Argument* wrapped = calls[0]->meta_value("is_wrapped");
  ASSERT_NE(wrapped, nullptr);
  EXPECT_TRUE(wrapped->as_bool());
}

TEST(Tracer, CreateNodeHookSeesEveryNode) {
  struct CountingTracer : Tracer {
    Node* create_node(Opcode op, std::string_view target, Node::Args args,
                      Node::Kwargs kwargs, std::optional<std::string_view> name,
                      std::string_view type) override {
      ++count;
      return Tracer::create_node(op, target, std::move(args), std::move(kwargs),
                                 name, type);
    }
    int count = 0;
  };
  examples::MyModule m;
  CountingTracer tracer;
  std::unique_ptr<Graph> g = tracer.trace(m);
  EXPECT_EQ(tracer.count, static_cast<int>(g->size()));
}

}  // namespace
}  // namespace fx
