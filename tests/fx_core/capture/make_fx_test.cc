// fx::make_fx against Python's make_fx on the Python twins of the same code
// (make_fx_twins.py, run at test time): graph text and code, under grad and
// no_grad, and the captured GraphModule run against eager.
#include "fx_core/capture/make_fx.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fx_core/capture/decompositions.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/support/error.h"
#include "sdk_examples/capture/plain_models.h"
#include "tests/fx_core/tracer/tracer_testing.h"
#include "tests/testing/python.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

using Tensors = std::vector<at::Tensor>;

// The C++ twins of make_fx_twins.py's functions.
Tensors relu_add(const Tensors& in) {
  at::Tensor c = at::add(in[0], in[1]);
  at::Tensor d = at::relu(c);
  return {at::mul(d, in[1]), c};
}

struct SmallCnnImpl : torch::nn::Module {
  SmallCnnImpl() {
    conv = register_module("conv", torch::nn::Conv2d(3, 4, 3));
    bn = register_module("bn", torch::nn::BatchNorm2d(4));
    fc = register_module("fc", torch::nn::Linear(4 * 3 * 3, 5));
  }
  at::Tensor forward(at::Tensor x) {
    x = at::relu(bn(conv(x)));
    x = at::max_pool2d(x, {2, 2}, {2, 2});
    x = at::flatten(x, 1);
    return fc(x);
  }
  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(SmallCnn);

Tensors split_unbind(const Tensors& in) {
  auto s = at::split(in[0], 2, 1);
  auto u = at::unbind(in[0], 0);
  return {s[1], u[0], at::add(s[0], s[2])};
}

Tensors in_place(const Tensors& in) {
  at::Tensor y = at::mul(in[0], in[1]);
  y.add_(in[1]);
  y.relu_();
  return {y};
}

// A parameter used twice and a buffer used directly.
struct AttributesImpl : torch::nn::Module {
  AttributesImpl() {
    linear = register_module("linear", torch::nn::Linear(4, 4));
    scale = register_buffer("scale", at::ones({4}));
  }
  Tensors forward(const Tensors& in) {
    at::Tensor w = at::add(linear->weight, linear->weight);
    at::Tensor y = at::mul(at::matmul(in[0], w), scale);
    return {y, at::mul(scale, scale)};
  }
  torch::nn::Linear linear{nullptr};
  at::Tensor scale;
};
TORCH_MODULE(Attributes);

// Numbers reach C++-only Scalar overloads (add.Scalar); make_fx records
// the overload Python's parser picks (add.Tensor with the number).
Tensors scalars(const Tensors& in) {
  at::Tensor y = at::relu(in[0]);
  y.mul_(3);
  return {in[0] + 2,
          in[0] * 0.5,
          at::sub(in[0], 1, 2),
          at::div(in[0], 2, "floor"),
          y,
          at::add(in[0], in[0], 2)};
}

class MakeFxTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::have_python_torch()) {
      skip_ = "python3-torch is not installed";
      return;
    }
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/make_fx_twins";
    try {
      testing::run_python("tests/fx_core/capture/make_fx_twins.py", {dir_});
    } catch (const std::runtime_error& e) {
      failed_ = e.what();
    }
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(failed_.empty()) << failed_;
  }

  // Captures `fn` under grad, no_grad and InferenceMode and compares each with
  // Python's make_fx of the twin CASE; `python_to_cpp` rewrites a known
  // front-end difference in Python's text first.
  static void expect_make_fx(
      const std::string& name, const TensorFunction& fn, const Tensors& inputs,
      const MakeFxOptions& options = {},
      std::pair<std::string, std::string> python_to_cpp = {}) {
    for (std::string mode : {"grad", "no_grad", "inference_mode"}) {
      SCOPED_TRACE(name + "." + mode);
      std::shared_ptr<GraphModule> gm;
      if (mode == "inference_mode") {
        c10::InferenceMode inference;
        gm = make_fx(fn, inputs, options);
      } else {
        at::AutoGradMode grad_mode(mode == "grad");
        gm = make_fx(fn, inputs, options);
      }
      std::string dir = dir_ + "/" + name + "." + mode;
      std::string graph = testing::read_file(dir + "/graph.txt");
      std::string code = testing::read_file(dir + "/code.py");
      if (!python_to_cpp.first.empty()) {
        graph = replace_all(graph, python_to_cpp.first, python_to_cpp.second);
        code = replace_all(code, python_to_cpp.first, python_to_cpp.second);
      }
      EXPECT_EQ(gm->graph().str() + "\n", graph);
      EXPECT_EQ(gm->code(), code);
      // The captured graph computes eager's numbers.
      std::vector<c10::IValue> ivalues(inputs.begin(), inputs.end());
      at::NoGradGuard no_grad;
      Tensors expected = fn(inputs);
      testing::expect_same(gm->forward(ivalues),
                           c10::IValue(c10::List<at::Tensor>(expected)));
    }
  }

  static std::string replace_all(std::string text, const std::string& from,
                                 const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
    return text;
  }

  static std::string dir_, skip_, failed_;
};
std::string MakeFxTest::dir_, MakeFxTest::skip_, MakeFxTest::failed_;

TEST_F(MakeFxTest, ReluAddChain) {
  expect_make_fx("relu_add", relu_add, {at::randn({3, 4}), at::randn({3, 4})});
}

TEST_F(MakeFxTest, LinearRecordsParametersAndDetach) {
  torch::nn::Linear linear(4, 3);
  expect_make_fx(
      "linear",
      [&](const Tensors& in) -> Tensors { return {at::relu(linear(in[0]))}; },
      {at::randn({2, 4})});
}

TEST_F(MakeFxTest, SmallCnnInEval) {
  SmallCnn cnn;
  cnn->eval();
  MakeFxOptions options;
  options.module = cnn.get();
  expect_make_fx(
      "cnn", [&](const Tensors& in) -> Tensors { return {cnn(in[0])}; },
      {at::randn({1, 3, 8, 8})}, options);
}

// Batch norm in training: num_batches_tracked += 1 (add_.Scalar in C++)
// recorded as Python's add_(1), then native_batch_norm with training=True.
TEST_F(MakeFxTest, SmallCnnInTraining) {
  SmallCnn cnn;
  cnn->train();
  MakeFxOptions options;
  options.module = cnn.get();
  expect_make_fx(
      "cnn_train", [&](const Tensors& in) -> Tensors { return {cnn(in[0])}; },
      {at::randn({2, 3, 8, 8})}, options);
}

// Meta mode: the function runs on meta tensors (shape rules for the
// operators LibTorch's C++ build has no meta kernel for); the graph is
// make_fx's on a meta module and meta inputs, and the GraphModule, which
// keeps the real parameters, runs to eager's numbers.
TEST_F(MakeFxTest, SmallCnnOnMeta) {
  SmallCnn cnn;
  cnn->eval();
  MakeFxOptions options;
  options.module = cnn.get();
  options.meta = true;
  bool saw_meta = false;
  expect_make_fx(
      "cnn_meta",
      [&](const Tensors& in) -> Tensors {
        saw_meta = saw_meta || in[0].is_meta();
        return {cnn(in[0])};
      },
      {at::randn({1, 3, 8, 8})}, options);
  EXPECT_TRUE(saw_meta);
}

// Meta mode through the shape rules for the other common operators
// LibTorch's C++ build has no meta kernel for.
TEST_F(MakeFxTest, MetaShapeRules) {
  torch::nn::GroupNorm group_norm(torch::nn::GroupNormOptions(2, 4));
  MakeFxOptions options;
  options.module = group_norm.get();
  options.meta = true;
  expect_make_fx(
      "meta_ops",
      [&](const Tensors& in) -> Tensors {
        const at::Tensor& x = in[0];
        at::Tensor positive = x > 0;
        at::Tensor doubled = x * 2;
        return {at::hardtanh(x, 0.0, 6.0),
                at::hardswish(x),
                group_norm(x),
                at::adaptive_avg_pool2d(x, {3, 3}),
                at::index_select(x, 1, in[1]),
                at::where(positive, x, doubled)};
      },
      {at::randn({2, 4, 8, 8}), at::tensor({0, 2}, at::kLong)}, options);
}

// Modules without bias: C++ passes an undefined tensor where Python passes
// None; both are recorded as None.
TEST_F(MakeFxTest, NoBias) {
  torch::nn::Conv2d conv(
      torch::nn::Conv2dOptions(3, 4, 3).stride(2).padding(1).bias(false));
  torch::nn::Linear linear(torch::nn::LinearOptions(4, 2).bias(false));
  expect_make_fx("no_bias",
                 [&](const Tensors& in) -> Tensors {
                   return {linear(conv(in[0]).mean({2, 3}))};
                 },
                 {at::randn({1, 3, 8, 8})});
}

TEST_F(MakeFxTest, SplitAndUnbind) {
  expect_make_fx("split_unbind", split_unbind, {at::randn({3, 6})});
}

TEST_F(MakeFxTest, InPlaceOps) {
  expect_make_fx("in_place", in_place, {at::randn({3, 4}), at::randn({3, 4})});
}

TEST_F(MakeFxTest, SharedParameterAndBuffer) {
  Attributes m;
  MakeFxOptions options;
  options.module = m.get();
  expect_make_fx(
      "attributes", [&](const Tensors& in) { return m->forward(in); },
      {at::randn({2, 4})}, options);
  // The graph alone: one constant per tensor, in order of first use, shared
  // with the module.
  CapturedGraph captured =
      capture_graph([&](const Tensors& in) { return m->forward(in); },
                    {at::randn({2, 4})}, options);
  ASSERT_EQ(captured.constants.size(), 2u);
  EXPECT_EQ(captured.constants[0].name, "_param_constant0");
  EXPECT_TRUE(captured.constants[0].is_parameter);
  EXPECT_TRUE(captured.constants[0].tensor.is_same(m->linear->weight));
  EXPECT_EQ(captured.constants[1].name, "_tensor_constant0");
  EXPECT_FALSE(captured.constants[1].is_parameter);
  EXPECT_TRUE(captured.constants[1].tensor.is_same(m->scale));
}

TEST_F(MakeFxTest, ScalarsAsPythonSpellsThem) {
  expect_make_fx("scalars", scalars, {at::randn({3, 4})});
}

// resnet18 in plain LibTorch against make_fx of torchvision's resnet18.
TEST_F(MakeFxTest, PlainResNet18) {
  if (!testing::have_python_torch(/*torchvision=*/true)) {
    GTEST_SKIP() << "python3-torchvision is not installed";
  }
  examples::PlainResNet18 model;
  model->eval();
  MakeFxOptions options;
  options.module = model.get();
  expect_make_fx(
      "resnet18", [&](const Tensors& in) -> Tensors { return {model(in[0])}; },
      {at::randn({1, 3, 64, 64})}, options);
}

// Views, and an in-place op on a view of a clone.
TEST_F(MakeFxTest, Views) {
  expect_make_fx("views",
                 [](const Tensors& in) -> Tensors {
                   const at::Tensor& x = in[0];
                   at::Tensor y = at::clone(x);
                   y.select(0, 0).mul_(2);
                   return {x.view({-1}),        x.transpose(0, 1),
                           x.select(0, 1),      x.narrow(1, 1, 2),
                           x.unsqueeze(0),      y,
                           x.expand({2, 3, 4}), x.reshape({4, 3})};
                 },
                 {at::randn({3, 4})});
}

// Factories called by the code get the TensorOptions Python's bindings
// pass (device, pin_memory; dtype and layout too for *_like).
TEST_F(MakeFxTest, FactoriesAsPythonSpellsThem) {
  expect_make_fx("factories",
                 [](const Tensors& in) -> Tensors {
                   return {at::zeros({2, 2}), at::ones({3}, at::kDouble),
                           at::full({2}, 1.5), at::zeros_like(in[0]),
                           at::add(at::ones_like(in[0]), in[0])};
                 },
                 {at::randn({2})});
}

// The C++ front end's multi-call spellings recorded as Python's calls:
// `2 - x` (empty_like, fill_, sub_) as rsub, `2 / x` as reciprocal * 2,
// `2 % x` as remainder.Scalar_Tensor, torch::tensor as a constant and
// lift_fresh_copy, torch::ones and torch::empty (filled by the code) without
// make_variable's detach; an
// empty_like + fill_ the user continues otherwise is recorded as called.
TEST_F(MakeFxTest, FrontEndSpellingsAsPython) {
  expect_make_fx(
      "front_end",
      [](const Tensors& in) -> Tensors {
        const at::Tensor& x = in[0];
        return {2 - x,
                2 / x,
                2 % x,
                x + torch::tensor({1.0, 2.0}),
                x * torch::tensor({{1.0, 2.0}, {3.0, 4.0}}),
                x + torch::tensor(3.0),
                torch::ones({2, 2}) * x,
                x - torch::tensor(std::vector<float>{5, 6}),
                torch::empty({2, 2}).fill_(1.5) * x,
                at::empty_like(x, at::MemoryFormat::Preserve).fill_(2).mul_(x)};
      },
      {at::randn({2, 2})});
}

// Pooling strides: torch::nn's pooling modules spell the default stride
// out, as Python's modules do; at::max_pool2d / at::avg_pool2d leave it out,
// as F.max_pool2d(x, 2) does (C++'s F::max_pool2d spells it: see README).
TEST_F(MakeFxTest, PoolingStrides) {
  torch::nn::MaxPool2d max_pool(2);
  torch::nn::AvgPool2d avg_pool(2);
  expect_make_fx("pooling",
                 [&](const Tensors& in) -> Tensors {
                   const at::Tensor& x = in[0];
                   return {at::max_pool2d(x, {2, 2}), max_pool(x),
                           at::avg_pool2d(x, {2, 2}), avg_pool(x)};
                 },
                 {at::randn({1, 2, 4, 4})});
}

// make_fx's decomposition_table: relu's calls recorded in its place.
TEST_F(MakeFxTest, DecompositionTable) {
  MakeFxOptions options;
  options.decompositions["aten::relu"] =
      [](const std::vector<c10::IValue>& args) -> std::vector<c10::IValue> {
    return {at::clamp_min(args[0].toTensor(), 0)};
  };
  expect_make_fx(
      "decomposed",
      [](const Tensors& in) -> Tensors {
        return {at::relu(at::add(in[0], in[1])), at::relu(in[1])};
      },
      {at::randn({3, 4}), at::randn({3, 4})}, options);
}

// The built-in table against torch._decomp.get_decompositions of the same
// operators.
TEST_F(MakeFxTest, CoreAtenDecompositions) {
  torch::nn::Linear linear(4, 4);
  MakeFxOptions options;
  options.decompositions = core_aten_decompositions();
  expect_make_fx(
      "core",
      [&](const Tensors& in) -> Tensors {
        at::Tensor y = linear(in[0]);
        return {at::gelu(y),
                at::gelu(y, "tanh"),
                at::silu(y),
                at::hardtanh(y, 0.0, 6.0),
                at::hardswish(y),
                at::hardsigmoid(y),
                at::leaky_relu(y, 0.1),
                at::elu(y, 1.0),
                at::softmax(y, -1),
                at::log_softmax(y, -1),
                at::mish(y),
                at::softplus(y),
                at::softplus(y, 2),
                at::relu(y)};
      },
      {at::randn({3, 4})}, options);
  EXPECT_EQ(get_decompositions({"aten::gelu", "aten::t"}).size(), 2u);
  EXPECT_THROW(get_decompositions({"aten::conv2d"}), FxError);
}

// Captures `fn` under grad, no_grad and InferenceMode, compared with the
// Python twin's text and code only (for functions eager cannot run, or whose
// numbers are random).
void expect_text(const std::string& dir, const std::string& name,
                 const TensorFunction& fn, const Tensors& inputs,
                 const MakeFxOptions& options) {
  for (std::string mode : {"grad", "no_grad", "inference_mode"}) {
    SCOPED_TRACE(name + "." + mode);
    std::shared_ptr<GraphModule> gm;
    if (mode == "inference_mode") {
      c10::InferenceMode inference;
      gm = make_fx(fn, inputs, options);
    } else {
      at::AutoGradMode grad_mode(mode == "grad");
      gm = make_fx(fn, inputs, options);
    }
    const std::string golden = dir + "/" + name + "." + mode;
    EXPECT_EQ(gm->graph().str() + "\n",
              testing::read_file(golden + "/graph.txt"));
    EXPECT_EQ(gm->code(), testing::read_file(golden + "/code.py"));
  }
}

Tensors opmath(const Tensors& in) {
  const at::Tensor& x = in[0];
  return {at::addmm(x, x, in[1]), at::silu(x),
          at::hardswish(x),       at::hardsigmoid(x),
          at::elu(x, 1.0),        at::softmax(x, -1),
          at::log_softmax(x, -1), x.t()};
}

// Half and bfloat16 through the built-in table: the pw_cast_for_opmath
// ports convert to float and back as Python's do (eager LibTorch has no CPU
// half kernels for most of these; the captured graph, computing in float,
// runs and matches eager's float computation rounded to the dtype).
TEST_F(MakeFxTest, CoreAtenDecompositionsInHalfAndBfloat16) {
  MakeFxOptions options;
  options.decompositions = core_aten_decompositions();
  for (auto [name, dtype] : {std::pair{"opmath_half", at::kHalf},
                             std::pair{"opmath_bf16", at::kBFloat16}}) {
    Tensors inputs = {at::randn({3, 3}).to(dtype), at::randn({3, 3}).to(dtype)};
    expect_text(dir_, name, opmath, inputs, options);
    at::NoGradGuard no_grad;
    auto gm = make_fx(opmath, inputs, options);
    Tensors in_float = {inputs[0].to(at::kFloat), inputs[1].to(at::kFloat)};
    Tensors expected = opmath(in_float);
    auto got = gm->forward({inputs[0], inputs[1]}).toTensorList();
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      at::Tensor value = got.get(i);
      EXPECT_EQ(value.scalar_type(), dtype) << name << " output " << i;
      EXPECT_TRUE(at::allclose(value.to(at::kFloat),
                               expected[i].to(dtype).to(at::kFloat), 1e-2,
                               1e-2))
          << name << " output " << i;
    }
  }
  // The ports Python computes through prims.convert_element_type leave
  // half and bfloat16 whole.
  // (mish too, which LibTorch's CPU build cannot run in bfloat16.)
  auto prims = [](const Tensors& in) -> Tensors {
    const at::Tensor& x = in[0];
    return {at::gelu(x), at::hardtanh(x, 0.0, 6.0), at::leaky_relu(x, 0.1),
            at::softplus(x), at::relu(x)};
  };
  at::NoGradGuard no_grad;
  auto gm = make_fx(prims, {at::randn({3, 3}).to(at::kBFloat16)}, options);
  std::string code = gm->code();
  for (const char* whole :
       {"aten.gelu.default", "aten.hardtanh.default", "aten.leaky_relu.default",
        "aten.softplus.default", "aten.relu.default"}) {
    EXPECT_NE(code.find(whole), std::string::npos) << whole << "\n" << code;
  }
}

// native_dropout on meta tensors (its shape rule) and dropout's composite
// kernel, as Python's make_fx records them on meta inputs; on real inputs
// the captured graph draws eager's random numbers from the same seed.
TEST_F(MakeFxTest, DropoutOnMeta) {
  auto dropout = [](const Tensors& in) -> Tensors {
    auto [a, mask] = at::native_dropout(in[0], 0.5, true);
    return {a, mask, at::dropout(in[0], 0.5, true)};
  };
  MakeFxOptions options;
  options.meta = true;
  Tensors inputs = {at::randn({2, 3})};
  expect_text(dir_, "dropout_meta", dropout, inputs, options);
  at::NoGradGuard no_grad;
  auto gm = make_fx(dropout, inputs, options);
  at::manual_seed(7);
  Tensors expected = dropout(inputs);
  at::manual_seed(7);
  testing::expect_same(gm->forward({inputs[0]}),
                       c10::IValue(c10::List<at::Tensor>(expected)));
}

// Leaf operators stay one node, composite ones included (Python's make_fx
// has no such option: the expected text is written out).
TEST(MakeFx, LeafOpsStayWhole) {
  torch::nn::Linear linear(4, 3);
  MakeFxOptions options;
  options.leaf_ops = {"aten::linear"};
  // at::linear itself: torch::nn::Linear's forward (F::linear) calls
  // addmm(bias, x, weight.t()) for 2-d inputs, not at::linear.
  auto fn = [&](const Tensors& in) -> Tensors {
    return {at::relu(at::linear(in[0], linear->weight, linear->bias))};
  };
  Tensors inputs = {at::randn({2, 4})};
  std::shared_ptr<GraphModule> gm;
  {
    at::NoGradGuard no_grad;
    gm = make_fx(fn, inputs, options);
  }
  EXPECT_EQ(gm->graph().str(),
            "graph():\n"
            "    %arg0_1 : [num_users=1] = placeholder[target=arg0_1]\n"
            "    %_param_constant0 : [num_users=1] = "
            "get_attr[target=_param_constant0]\n"
            "    %_param_constant1 : [num_users=1] = "
            "get_attr[target=_param_constant1]\n"
            "    %linear : [num_users=1] = call_function[target=torch.ops.aten."
            "linear.default](args = (%arg0_1, %_param_constant0, "
            "%_param_constant1), kwargs = {})\n"
            "    %relu : [num_users=1] = call_function[target=torch.ops.aten."
            "relu.default](args = (%linear,), kwargs = {})\n"
            "    return [relu]");
  at::NoGradGuard no_grad;
  testing::expect_same(gm->forward({inputs[0]}),
                       c10::IValue(c10::List<at::Tensor>(fn(inputs))));
  options.leaf_ops = {"aten::no_such_op"};
  EXPECT_THROW(make_fx(fn, inputs, options), FxError);
}

// Downstream: a captured graph survives the fx-graph JSON bundle both ways,
// in C++ (text, code, numbers) and in Python (tools/torchfx_import.py
// rebuilds it with torch.ops.aten targets and matches eager).
TEST_F(MakeFxTest, BundleRoundTripAndPythonImport) {
  SmallCnn cnn;
  cnn->eval();
  MakeFxOptions options;
  options.module = cnn.get();
  Tensors inputs = {at::randn({1, 3, 8, 8})};
  auto gm = make_fx([&](const Tensors& in) -> Tensors { return {cnn(in[0])}; },
                    inputs, options);
  std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/cnn_bundle";
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  ASSERT_TRUE(write_graph_module(*gm, dir + "/graph.fx.json").ok());
  auto loaded = read_graph_module(dir + "/graph.fx.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ((*loaded)->graph().str(), gm->graph().str());
  EXPECT_EQ((*loaded)->code(), gm->code());
  at::Tensor expected;
  {
    at::NoGradGuard no_grad;
    expected = cnn(inputs[0]);
    testing::expect_same((*loaded)->forward({inputs[0]}),
                         c10::IValue(c10::List<at::Tensor>({expected})));
  }
  ASSERT_TRUE(write_value_file(dir + "/input.pt",
                               c10::IValue(c10::List<at::Tensor>({inputs[0]})))
                  .ok());
  ASSERT_TRUE(write_value_file(dir + "/expected.pt",
                               c10::IValue(c10::List<at::Tensor>({expected})))
                  .ok());
  std::string out =
      testing::run_python("tools/torchfx_import.py", {dir, "--print"});
  EXPECT_NE(out.find(gm->code()), std::string::npos) << out;
  EXPECT_NE(out.find("torchfx_import: allclose"), std::string::npos) << out;
}

// Reading a captured tensor's value throws by default, naming the operator;
// make_fx 1.13's recording is an option; constants may be read.
TEST(MakeFx, DataDependentCallsThrowUnlessAllowed) {
  auto branchy = [](const Tensors& in) -> Tensors {
    if (in[0].sum().item<double>() > 0) return {in[0].neg()};
    return {in[0].exp()};
  };
  Tensors inputs = {at::ones({2})};
  try {
    make_fx(branchy, inputs);
    FAIL() << "no error";
  } catch (const FxError& e) {
    EXPECT_NE(std::string(e.what()).find("aten::_local_scalar_dense"),
              std::string::npos)
        << e.what();
  }
  MakeFxOptions options;
  options.allow_data_dependent = true;
  auto gm = make_fx(branchy, inputs, options);
  EXPECT_NE(
      gm->code().find("torch.ops.aten._local_scalar_dense.default(sum_1)"),
      std::string::npos)
      << gm->code();
  EXPECT_NE(gm->code().find("neg"), std::string::npos) << gm->code();
  // A constant's value is known when the graph is made.
  at::Tensor scale = at::full({1}, 3.0);
  auto constant = make_fx(
      [&](const Tensors& in) -> Tensors {
        return {at::mul(in[0], scale.item<double>())};
      },
      inputs);
  EXPECT_NE(constant->code().find("torch.ops.aten.mul.Tensor(arg0_1, 3.0)"),
            std::string::npos)
      << constant->code();
}

// Meta mode: an operator whose output shape depends on data is refused,
// naming it, as is one without a meta kernel or shape rule.
TEST(MakeFx, MetaModeRefusesDataDependentShapes) {
  MakeFxOptions options;
  options.meta = true;
  try {
    make_fx([](const Tensors& in) -> Tensors { return {in[0].nonzero()}; },
            {at::randn({4})}, options);
    FAIL() << "no error";
  } catch (const FxError& e) {
    EXPECT_NE(std::string(e.what()).find("aten::nonzero's output shape "
                                         "depends on the values"),
              std::string::npos)
        << e.what();
  }
}

// Without Python: the capture is per thread and leaves no state behind.
TEST(MakeFx, OtherThreadsAreNotRecorded) {
  at::Tensor other = at::randn({2, 2});
  auto gm = make_fx(
      [&](const Tensors& in) -> Tensors {
        std::thread worker([&] { other = at::relu(other); });
        worker.join();
        return {at::neg(in[0])};
      },
      {at::randn({2, 2})});
  EXPECT_EQ(gm->graph().str(),
            "graph():\n"
            "    %arg0_1 : [num_users=1] = placeholder[target=arg0_1]\n"
            "    %neg : [num_users=1] = call_function[target=torch.ops.aten."
            "neg.default](args = (%arg0_1,), kwargs = {})\n"
            "    return [neg]");
  // After the capture nothing is recorded or intercepted.
  at::Tensor x = at::randn({2});
  EXPECT_TRUE(at::equal(at::relu(x), at::clamp_min(x, 0)));
}

TEST(MakeFx, NestedCaptureThrowsAndRestores) {
  EXPECT_THROW(make_fx(
                   [](const Tensors& in) -> Tensors {
                     make_fx([](const Tensors& i) { return i; }, in);
                     return in;
                   },
                   {at::randn({2})}),
               FxError);
  // The thread can capture again.
  auto gm = make_fx([](const Tensors& in) -> Tensors { return {in[0].exp()}; },
                    {at::randn({2})});
  EXPECT_NE(gm->code().find("torch.ops.aten.exp.default(arg0_1)"),
            std::string::npos)
      << gm->code();
}

}  // namespace
}  // namespace fx
