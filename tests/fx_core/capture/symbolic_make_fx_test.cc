// fx::make_fx(tracing_mode="symbolic") against torch 1.13's make_fx in
// symbolic mode on the Python twins of the same code (symbolic_twins.py,
// run at test time): graph text and code byte for byte; the captured
// GraphModule run on other shapes against eager; an input breaking a guard
// refused. Its cost per op against real mode is in
// tools/bench/make_fx_benchmark.cc.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fx_core/capture/composite_replay.h"
#include "fx_core/capture/make_fx.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/error.h"
#include "fx_core/symbolic/shape_env.h"
#include "tests/fx_core/tracer/tracer_testing.h"
#include "tests/testing/python.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

using Tensors = std::vector<at::Tensor>;
using Shapes = std::vector<std::vector<int64_t>>;

// The C++ twins of symbolic_twins.py's functions.
Tensors view_computed(const Tensors& in) {
  return {in[0].view_symint({in[0].sym_size(0) * 2, -1})};
}

Tensors cat(const Tensors& in) { return {at::cat({in[0], in[1]}, 0)}; }

Tensors heads(const Tensors& in) {
  const at::Tensor& x = in[0];
  c10::SymInt b = x.sym_size(0), s = x.sym_size(1), d = x.sym_size(2);
  at::Tensor h = x.view_symint({b, s, 4, d / 4}).transpose(1, 2);
  return {h.transpose(1, 2).reshape_symint({b, s, d})};
}

// The heads three times, then composites on the same sizes again (from the
// third round, reshape's and flatten's size arithmetic is replayed: fresh
// `mul` nodes, as make_fx's).
Tensors heads_again(const Tensors& in) {
  at::Tensor x = in[0];
  c10::SymInt b;
  for (int i = 0; i < 3; ++i) {
    b = x.sym_size(0);
    c10::SymInt s = x.sym_size(1), d = x.sym_size(2);
    at::Tensor h = x.view_symint({b, s, 4, d / 4}).transpose(1, 2);
    x = at::add(h.transpose(1, 2).reshape_symint({b, s, d}), in[1]);
  }
  return {x.flatten(1), x.flatten(1), x.reshape_symint({b, -1})};
}

Tensors arange_of(const Tensors& in) {
  return {torch::arange(at::Scalar(in[0].sym_size(0)))};
}

Tensors expand_to(const Tensors& in) {
  return {in[0].expand_symint(in[1].sym_sizes())};
}

Tensors new_zeros(const Tensors& in) {
  const at::Tensor& x = in[0];
  return {x.new_zeros_symint({x.sym_size(0) * 2, x.sym_size(1) / 2})};
}

Tensors linear(const Tensors& in) { return {at::linear(in[0], in[1], in[2])}; }

Tensors view_relu(const Tensors& in) {
  return {in[0].view_symint({in[0].sym_size(0) * 2, -1}).relu()};
}

// _reshape_alias as view: a decomposition of the one call reshape's kernel
// makes, so a composite being watched sees its inner call decomposed.
std::vector<c10::IValue> reshape_alias_as_view(
    const std::vector<c10::IValue>& args) {
  std::vector<c10::SymInt> sizes;
  for (const c10::IValue& s : args[1].toListRef()) {
    sizes.push_back(s.toSymInt());
  }
  return {args[0].toTensor().view_symint(sizes)};
}

// relu as clamp_min: a decomposition, as a plugin would register it.
std::vector<c10::IValue> relu_as_clamp(const std::vector<c10::IValue>& args) {
  return {at::clamp_min(args[0].toTensor(), 0)};
}

Tensors random(const Shapes& shapes) {
  Tensors out;
  for (const auto& s : shapes) out.push_back(at::randn(s));
  return out;
}

class SymbolicMakeFxTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::have_python_torch()) {
      skip_ = "python3-torch is not installed";
      return;
    }
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/symbolic_twins";
    try {
      testing::run_python("tests/fx_core/capture/symbolic_twins.py", {dir_});
    } catch (const std::runtime_error& e) {
      failed_ = e.what();
    }
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(failed_.empty()) << failed_;
  }

  // `capture(fn, inputs, options)` (make_fx or capture_graph) in symbolic
  // mode, under no_grad, grad or inference_mode.
  template <typename Capture>
  static auto in_mode(const std::string& mode, Capture capture,
                      const TensorFunction& fn, const Tensors& inputs,
                      MakeFxOptions options) {
    options.tracing_mode = "symbolic";
    if (mode == "inference_mode") {
      c10::InferenceMode inference;
      return capture(fn, inputs, options);
    }
    at::AutoGradMode grad_mode(mode == "grad");
    return capture(fn, inputs, options);
  }

  static std::shared_ptr<GraphModule> capture(const TensorFunction& fn,
                                              const Tensors& inputs,
                                              const std::string& mode,
                                              const MakeFxOptions& options) {
    return in_mode(mode, make_fx, fn, inputs, options);
  }

  // Captures `fn` on inputs of `shapes` and compares with the twin's
  // goldens; then runs the GraphModule on `others` against eager.
  static void expect_symbolic(const std::string& name, const TensorFunction& fn,
                              const Shapes& shapes,
                              const std::vector<Shapes>& others,
                              const MakeFxOptions& options = {}) {
    for (std::string mode : {"no_grad", "grad", "inference_mode"}) {
      SCOPED_TRACE(name + "." + mode);
      std::string dir = dir_ + "/" + name + "." + mode;
      if (std::ifstream(dir + "/error.txt").good()) continue;  // torch fails
      const Tensors examples = random(shapes);
      std::shared_ptr<GraphModule> gm = capture(fn, examples, mode, options);
      EXPECT_EQ(gm->graph().str() + "\n",
                testing::read_file(dir + "/graph.txt"));
      EXPECT_EQ(gm->code(), testing::read_file(dir + "/code.py"));
      expect_same_without_replay(fn, examples, mode, options);
      for (const Shapes& other : others) {
        Tensors inputs = random(other);
        std::vector<c10::IValue> ivalues(inputs.begin(), inputs.end());
        at::NoGradGuard no_grad;
        testing::expect_same(gm->forward(ivalues),
                             c10::IValue(c10::List<at::Tensor>(fn(inputs))));
      }
    }
  }

  static CapturedGraph capture_graph_in(const std::string& mode,
                                        const TensorFunction& fn,
                                        const Tensors& inputs,
                                        const MakeFxOptions& options) {
    return in_mode(mode, capture_graph, fn, inputs, options);
  }

  static std::string sizes_text(const CapturedGraph& captured) {
    std::string out;
    for (const SymbolicSizes& s : captured.output_sizes) {
      for (const auto* exprs : {&s.sizes, &s.strides}) {
        for (const sym::Expr& e : *exprs) out += e.str() + ", ";
        out += "; ";
      }
      out += "\n";
    }
    return out;
  }

  // Composite calls replayed (capture/composite_replay.h) change nothing:
  // the capture with replay off has the same graph, guards, and output
  // sizes and strides.
  static void expect_same_without_replay(const TensorFunction& fn,
                                         const Tensors& examples,
                                         const std::string& mode,
                                         const MakeFxOptions& options) {
    CapturedGraph replayed = capture_graph_in(mode, fn, examples, options);
    capture::CompositeReplay::set_enabled(false);
    CapturedGraph plain;
    try {
      plain = capture_graph_in(mode, fn, examples, options);
    } catch (...) {
      capture::CompositeReplay::set_enabled(true);
      throw;
    }
    capture::CompositeReplay::set_enabled(true);
    EXPECT_EQ(replayed.graph->str(), plain.graph->str());
    ASSERT_NE(replayed.shape_env, nullptr);
    ASSERT_NE(plain.shape_env, nullptr);
    EXPECT_EQ(replayed.shape_env->format_guards(),
              plain.shape_env->format_guards());
    EXPECT_EQ(sizes_text(replayed), sizes_text(plain));
  }

  static std::string dir_, skip_, failed_;
};
std::string SymbolicMakeFxTest::dir_, SymbolicMakeFxTest::skip_,
    SymbolicMakeFxTest::failed_;

TEST_F(SymbolicMakeFxTest, ViewWithComputedSizes) {
  expect_symbolic("view_computed", view_computed, {{3, 4}},
                  {{{5, 6}}, {{2, 8}}});
}

TEST_F(SymbolicMakeFxTest, Cat) {
  expect_symbolic("cat", cat, {{3, 4}, {5, 4}}, {{{2, 7}, {6, 7}}});
}

TEST_F(SymbolicMakeFxTest, AttentionHeads) {
  expect_symbolic("heads", heads, {{2, 5, 8}}, {{{3, 7, 12}}, {{4, 2, 16}}});
}

TEST_F(SymbolicMakeFxTest, CompositesOnTheSameSizesAgain) {
  const uint64_t before = capture::CompositeReplay::replayed();
  expect_symbolic("heads_again", heads_again, {{2, 5, 8}, {2, 5, 8}},
                  {{{3, 7, 12}, {3, 7, 12}}, {{4, 2, 16}, {4, 2, 16}}});
  // The third round's reshape and the second flatten were replayed, with
  // and without grad (in inference mode the user-call key is excluded, so
  // composites run as LibTorch's kernels).
  EXPECT_GE(capture::CompositeReplay::replayed() - before, 2u * 2u);
}

// A decomposition of the composite's inner call: replayed or not, the
// same graph, guards and sizes, and eager's numbers on other shapes.
TEST_F(SymbolicMakeFxTest, ReplayWithTheInnerCallDecomposed) {
  MakeFxOptions options;
  options.decompositions["aten::_reshape_alias"] = reshape_alias_as_view;
  for (std::string mode : {"no_grad", "grad"}) {
    SCOPED_TRACE(mode);
    const uint64_t before = capture::CompositeReplay::replayed();
    expect_same_without_replay(heads_again, random({{2, 5, 8}, {2, 5, 8}}),
                               mode, options);
    EXPECT_GT(capture::CompositeReplay::replayed(), before);
  }
  options.tracing_mode = "symbolic";
  at::NoGradGuard no_grad;
  auto gm = make_fx(heads_again, random({{2, 5, 8}, {2, 5, 8}}), options);
  EXPECT_EQ(gm->code().find("_reshape_alias"), std::string::npos) << gm->code();
  Tensors inputs = random({{3, 7, 12}, {3, 7, 12}});
  std::vector<c10::IValue> ivalues(inputs.begin(), inputs.end());
  testing::expect_same(gm->forward(ivalues),
                       c10::IValue(c10::List<at::Tensor>(heads_again(inputs))));
}

TEST_F(SymbolicMakeFxTest, ArangeOfASize) {
  expect_symbolic("arange_of", arange_of, {{5}}, {{{9}}});
}

TEST_F(SymbolicMakeFxTest, ExpandToAnotherInput) {
  expect_symbolic("expand_to", expand_to, {{1, 4}, {3, 4}}, {{{1, 6}, {5, 6}}});
}

TEST_F(SymbolicMakeFxTest, NewZerosOfComputedSizes) {
  expect_symbolic("new_zeros", new_zeros, {{3, 4}}, {{{5, 8}}});
}

TEST_F(SymbolicMakeFxTest, LinearWithWeightsAsInputs) {
  expect_symbolic("linear", linear, {{2, 5, 4}, {3, 4}, {3}},
                  {{{3, 7, 6}, {2, 6}, {2}}});
}

TEST_F(SymbolicMakeFxTest, DecompositionsApplyInSymbolicMode) {
  MakeFxOptions options;
  options.decompositions["aten::relu"] = relu_as_clamp;
  expect_symbolic("view_relu_decomposed", view_relu, {{3, 4}},
                  {{{5, 6}}, {{2, 8}}}, options);
}

// A leaf operator stays one node with symbolic sizes (make_fx in Python
// has no leaf operators: the goldens are eager's numbers on other shapes).
TEST(SymbolicMakeFx, LeafOperatorsStayWholeInSymbolicMode) {
  MakeFxOptions options;
  options.tracing_mode = "symbolic";
  options.leaf_ops = {"aten::linear"};
  at::NoGradGuard no_grad;
  auto gm = make_fx(linear, random({{2, 5, 4}, {3, 4}, {3}}), options);
  std::string code = gm->code();
  EXPECT_NE(code.find("torch.ops.aten.linear.default"), std::string::npos)
      << code;
  EXPECT_EQ(code.find("addmm"), std::string::npos) << code;
  for (const Shapes& other :
       {Shapes{{3, 7, 6}, {2, 6}, {2}}, Shapes{{4, 9, 5}, {7, 5}, {7}}}) {
    Tensors inputs = random(other);
    std::vector<c10::IValue> ivalues(inputs.begin(), inputs.end());
    testing::expect_same(gm->forward(ivalues),
                         c10::IValue(c10::List<at::Tensor>(linear(inputs))));
  }
}

TEST(SymbolicMakeFx, GuardBreakingInputIsRefused) {
  MakeFxOptions options;
  options.tracing_mode = "symbolic";
  at::NoGradGuard no_grad;
  auto gm = make_fx(heads, {at::randn({2, 5, 8})}, options);
  ASSERT_NE(gm->shape_env(), nullptr);
  std::cout << gm->shape_env()->format_guards() << "\n";
  try {
    gm->forward({at::randn({2, 5, 10})});  // 10 is not a multiple of 4
    FAIL() << "a guard-breaking input ran";
  } catch (const FxError& e) {
    std::cout << e.what() << "\n";
    EXPECT_NE(std::string(e.what()).find("arg0_1"), std::string::npos);
  }
}

TEST(SymbolicMakeFx, UnknownTracingModeThrows) {
  MakeFxOptions options;
  options.tracing_mode = "imaginary";
  EXPECT_THROW(make_fx(cat, {at::randn({2}), at::randn({2})}, options),
               FxError);
}

}  // namespace
}  // namespace fx
