// fx_inference.pointwise: its reference kernel equals the ATen ops written
// out by hand (bitwise), the InferencePlan's one-pass kernel equals them
// within 1e-6 relative (every op, tails shorter than a vector, broadcast and
// strided operands, a tensor split across threads); results are written in
// place of dead operands but never over a value still read through an
// alias; the fallbacks (double, other shape, grad mode) and bad programs.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fx_core/compile/inference_plan.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/error.h"

namespace fx {
namespace {

// forward(x, y, z) = fx_inference.pointwise([x, y, z][:num_inputs],
// program, scalars).
std::unique_ptr<GraphModule> pointwise_graph(
    torch::nn::Module& root, size_t num_inputs,
    const std::vector<std::string>& program,
    const std::vector<double>& scalars) {
  auto g = std::make_unique<Graph>();
  ArgumentList inputs;
  for (size_t i = 0; i < num_inputs; ++i) {
    inputs.push_back(g->placeholder(std::string(1, "xyz"[i])));
  }
  ArgumentList text(program.begin(), program.end());
  ArgumentList numbers(scalars.begin(), scalars.end());
  Node* n = g->call_function(
      "fx_inference.pointwise",
      {Argument::list(inputs), Argument::list(text), Argument::list(numbers)});
  g->output(n);
  return std::make_unique<GraphModule>(root, std::move(g));
}

// |got - want| <= 1e-6 |want| + atol everywhere, same sizes and dtype.
void expect_near(const at::Tensor& got, const at::Tensor& want,
                 const std::string& what, double atol = 1e-7) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  ASSERT_EQ(got.scalar_type(), want.scalar_type()) << what;
  at::Tensor err = (got - want).abs();
  at::Tensor bound = want.abs() * 1e-6 + atol;
  EXPECT_TRUE(err.le(bound).all().item<bool>())
      << what << ": max |got - want| = " << err.max().item<double>();
}

// The planned run (second run: iterators reused) and the reference kernel
// against `want`; the plan bound the node to the fused kernel.
void expect_plan(GraphModule& gm, const std::vector<c10::IValue>& in,
                 const at::Tensor& want, const std::string& what,
                 double atol = 1e-7) {
  c10::AutoGradMode no_grad(false);
  EXPECT_TRUE(at::equal(gm.forward(in).toTensor(), want))
      << what << ": reference kernel";
  auto plan = InferencePlan::build(gm, in);
  plan->run(in);
  expect_near(plan->run(in).toTensor(), want, what, atol);
  EXPECT_EQ(plan->stats().pointwise_steps, 1u) << what;
  EXPECT_EQ(plan->stats().replans, 0u) << what;
}

struct OpCase {
  std::vector<std::string> program;
  std::vector<double> scalars;
  std::function<at::Tensor(const at::Tensor&, const at::Tensor&)> eager;
  // gelu: eager float32 runs oneDNN's erf for contiguous tensors and ATen's
  // vectorized erf otherwise; in the negative tail (1 + erf(x) cancels)
  // the two differ by up to 2e-3 relative, 2.4e-7 absolute, and so does the
  // fused kernel (ATen's vectorized formula).
  double atol = 1e-7;
};

TEST(PointwisePlan, EveryOpMatchesEager) {
  torch::nn::Module root;
  const std::vector<OpCase> cases = {
      {{"add i0 i1"}, {}, [](auto x, auto y) { return x + y; }},
      {{"add s0 i0"}, {0.3}, [](auto x, auto) { return x + 0.3; }},
      {{"sub i0 i1"}, {}, [](auto x, auto y) { return x - y; }},
      {{"sub s0 i0"}, {2.5}, [](auto x, auto) { return at::rsub(x, 2.5); }},
      {{"sub i0 s0"}, {1.5}, [](auto x, auto) { return x - 1.5; }},
      {{"mul i0 i1"}, {}, [](auto x, auto y) { return x * y; }},
      {{"mul i0 s0"}, {0.1}, [](auto x, auto) { return x * 0.1; }},
      {{"div i0 i1"}, {}, [](auto x, auto y) { return x / y; }},
      {{"div i0 s0"}, {3.0}, [](auto x, auto) { return x / 3.0; }},
      {{"neg i0"}, {}, [](auto x, auto) { return at::neg(x); }},
      {{"relu i0"}, {}, [](auto x, auto) { return at::relu(x); }},
      {{"sigmoid i0"}, {}, [](auto x, auto) { return at::sigmoid(x); }},
      {{"tanh i0"}, {}, [](auto x, auto) { return at::tanh(x); }},
      {{"silu i0"}, {}, [](auto x, auto) { return at::silu(x); }},
      {{"hardswish i0"}, {}, [](auto x, auto) { return at::hardswish(x); }},
      {{"hardsigmoid i0"}, {}, [](auto x, auto) { return at::hardsigmoid(x); }},
      {{"gelu i0"}, {}, [](auto x, auto) { return at::gelu(x); }, 1e-6},
      {{"clamp i0 s0 s1"},
       {-0.5, 0.7},
       [](auto x, auto) { return at::clamp(x, -0.5, 0.7); }},
      {{"clamp_min i0 s0"},
       {0.2},
       [](auto x, auto) { return at::clamp_min(x, 0.2); }},
      {{"clamp_max i0 s0"},
       {-0.1},
       [](auto x, auto) { return at::clamp_max(x, -0.1); }},
      // A DAG: x * sigmoid(y) + hardswish(x * sigmoid(y)) / 6.
      {{"sigmoid i1", "mul i0 t0", "hardswish t1", "div t2 s0", "add t1 t3"},
       {6.0},
       [](auto x, auto y) {
         at::Tensor a = x * at::sigmoid(y);
         return a + at::hardswish(a) / 6.0;
       }},
  };
  // 3 x 37: rows shorter than a vector's multiple (tails), values around
  // every kink (hardswish's -3 and 3, clamps).
  at::Tensor x = at::randn({3, 37}) * 4, y = at::randn({3, 37}) + 2;
  for (const OpCase& c : cases) {
    const bool binary = c.program.back().find(" i1") != std::string::npos ||
                        c.program[0].find(" i1") != std::string::npos;
    auto gm = pointwise_graph(root, binary ? 2 : 1, c.program, c.scalars);
    std::vector<c10::IValue> in{x};
    if (binary) in.push_back(y);
    expect_plan(*gm, in, c.eager(x, y), c.program.back(), c.atol);
  }
}

TEST(PointwisePlan, BroadcastStridedAndParallel) {
  torch::nn::Module root;
  auto gm =
      pointwise_graph(root, 2, {"sigmoid i1", "mul i0 t0", "relu t1"}, {});
  auto eager = [](const at::Tensor& x, const at::Tensor& s) {
    return at::relu(x * at::sigmoid(s));
  };
  // The squeeze-excitation scale on channels_last activations.
  at::Tensor x =
      at::randn({1, 24, 7, 9}).contiguous(at::MemoryFormat::ChannelsLast);
  at::Tensor s = at::randn({1, 24, 1, 1});
  expect_plan(*gm, {x, s}, eager(x, s), "squeeze-excitation, channels_last");
  // A transposed (strided) input.
  at::Tensor xt = at::randn({40, 33}).t(), yt = at::randn({33, 40});
  expect_plan(*gm, {xt, yt}, eager(xt, yt), "transposed input");
  // Large enough for TensorIterator to split it across two threads.
  const int threads = at::get_num_threads();
  at::set_num_threads(2);
  at::Tensor big = at::randn({1, 64, 56, 56}), bs = at::randn({1, 64, 1, 1});
  expect_plan(*gm, {big, bs}, eager(big, bs), "two threads");
  at::set_num_threads(threads);
}

// How the kernel walks its operands (pointwise_loop.cc): rows read in place
// with any step between them (a channels_last slice of a wider tensor),
// several short rows a block, values broadcast along a row (NCHW
// per-channel) or across rows (per-channel on channels_last), and
// instructions over row-invariant operands computed once a call.
TEST(PointwisePlan, RowsBroadcastsAndHoistedInstructions) {
  torch::nn::Module root;
  const auto cl = at::MemoryFormat::ChannelsLast;
  const std::vector<std::string> bn_relu = {"mul i0 i1", "add t0 i2",
                                            "relu t1"};
  auto bn = [](const at::Tensor& x, const at::Tensor& s, const at::Tensor& b) {
    return at::relu(x * s + b);
  };
  auto gm = pointwise_graph(root, 3, bn_relu, {});
  struct Case {
    const char* what;
    at::Tensor x;
  };
  for (const Case& c : std::vector<Case>{
           // Rows of 29 channels (tails), 40 apart: 17 rows a block.
           {"29 of 40 channels, channels_last",
            at::randn({2, 40, 9, 11}).contiguous(cl).slice(1, 0, 29)},
           // Rows of 96 of 128 channels: 5 rows a block, no tail.
           {"96 of 128 channels, channels_last",
            at::randn({1, 128, 20, 20}).contiguous(cl).slice(1, 32, 128)},
           // NCHW: a row per channel, the scale broadcast along it; long
           // rows (1200, several blocks each) and short ones (49).
           {"NCHW, rows of 1200", at::randn({1, 6, 30, 40})},
           {"NCHW, rows of 49", at::randn({2, 6, 7, 7})},
       }) {
    const int64_t channels = c.x.size(1);
    at::Tensor scale = at::rand({channels, 1, 1}) + 0.5;
    at::Tensor shift = at::randn({channels, 1, 1});
    expect_plan(*gm, {c.x, scale, shift}, bn(c.x, scale, shift), c.what);
  }
  // sigmoid(y * 1.5) depends on the gate alone: once a call, then
  // x * it + 0.25 over every row.
  auto se = pointwise_graph(
      root, 2, {"mul i1 s0", "sigmoid t0", "mul i0 t1", "add t2 s1"},
      {1.5, 0.25});
  auto se_eager = [](const at::Tensor& x, const at::Tensor& y) {
    return x * at::sigmoid(y * 1.5) + 0.25;
  };
  at::Tensor x = at::randn({1, 24, 7, 9}).contiguous(cl);
  at::Tensor y = at::randn({1, 24, 1, 1});
  expect_plan(*se, {x, y}, se_eager(x, y), "hoisted gate, channels_last");
  // Rows of 1000 (hoisted) and of 140000 (too long to keep: per block).
  for (int64_t n : {1000, 140000}) {
    at::Tensor xs = at::randn({3, n}), ys = at::randn({n});
    expect_plan(*se, {xs, ys}, se_eager(xs, ys),
                "gate rows of " + std::to_string(n));
  }
}

// The affine programs a BatchNorm leaves (x * a + b, an optional
// activation) run in one pass (pointwise_loop.cc): the sum's operands in
// either order, no activation, a ReLU fused, other activations (clamp's
// scalar bounds, hardswish) a second pass; scalar operands, long and short
// rows, a transposed input and output.
TEST(PointwisePlan, AffineProgramsInOnePass) {
  torch::nn::Module root;
  const auto cl = at::MemoryFormat::ChannelsLast;
  at::Tensor x = at::randn({2, 48, 9, 11}).contiguous(cl).slice(1, 0, 37);
  at::Tensor a = at::rand({37, 1, 1}) + 0.5, b = at::randn({37, 1, 1});
  using Eager = std::function<at::Tensor(const at::Tensor&)>;
  struct Case {
    std::vector<std::string> program;
    std::vector<double> scalars;
    Eager activation;  // of x * a + b
    bool shift_first;  // b + x * a
  };
  const Eager none = [](const at::Tensor& t) { return t; };
  for (const Case& c : std::vector<Case>{
           {{"mul i0 i1", "add t0 i2"}, {}, none, false},
           {{"mul i0 i1", "add i2 t0", "relu t1"},
            {},
            [](const at::Tensor& t) { return at::relu(t); },
            true},
           {{"mul i0 i1", "add t0 i2", "clamp t1 s0 s1"},
            {0.0, 6.0},
            [](const at::Tensor& t) { return at::clamp(t, 0.0, 6.0); },
            false},
           {{"mul i0 i1", "add i2 t0", "hardswish t1"},
            {},
            [](const at::Tensor& t) { return at::hardswish(t); },
            true},
       }) {
    auto gm = pointwise_graph(root, 3, c.program, c.scalars);
    auto eager = [&](const at::Tensor& x, const at::Tensor& a,
                     const at::Tensor& b) {
      return c.activation(c.shift_first ? b + x * a : x * a + b);
    };
    const std::string what = c.program.back();
    expect_plan(*gm, {x, a, b}, eager(x, a, b), what + ", channels_last slice");
    at::Tensor n = at::randn({1, 37, 30, 40});
    expect_plan(*gm, {n, a, b}, eager(n, a, b), what + ", NCHW");
    at::Tensor t = at::randn({40, 37}).t(), tb = at::randn({37, 1});
    expect_plan(*gm, {t, tb, tb}, eager(t, tb, tb), what + ", transposed");
  }
  auto scalars = pointwise_graph(root, 1, {"mul i0 s0", "add t0 s1", "relu t1"},
                                 {1.5, -0.25});
  at::Tensor y = at::randn({3, 5000});
  expect_plan(*scalars, {y}, at::relu(y * 1.5 - 0.25), "scalar operands");
}

// x -> silu -> * y -> relu -> + 1: every step after the first writes over
// its dead operand's buffer (one buffer), and the result is the caller's.
TEST(PointwisePlan, DeadOperandsAreOverwrittenInPlace) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* a = g->call_function(
      "fx_inference.pointwise",
      {Argument::list({x}), Argument{"silu i0"}, Argument::list({})});
  Node* b = g->call_function(
      "fx_inference.pointwise",
      {Argument::list({a, y}), Argument{"mul i0 i1"}, Argument::list({})});
  Node* c = g->call_function("torch.relu", {b});
  Node* d = g->call_function("operator.add", {c, 1.0});
  g->output(d);
  GraphModule gm(root, std::move(g));
  at::Tensor xv = at::randn({4, 50}), yv = at::randn({4, 50});
  c10::AutoGradMode no_grad(false);
  auto plan = InferencePlan::build(gm, {xv, yv});
  at::Tensor first = plan->run({xv, yv}).toTensor();
  at::Tensor kept = first.clone();
  at::Tensor want = at::relu(at::silu(xv) * yv) + 1.0;
  expect_near(plan->run({xv, yv}).toTensor(), want, "chain");
  EXPECT_TRUE(at::equal(first, kept));  // not overwritten by the second run
  InferencePlan::Stats s = plan->stats();
  EXPECT_EQ(s.pointwise_steps, 2u);
  EXPECT_EQ(s.in_place_steps, 2u);  // b over a, c over b; d is fresh
  EXPECT_EQ(s.buffers, 1u);
}

// A view of the operand read by the same step: not in place (the view would
// read elements already overwritten).
TEST(PointwisePlan, NoInPlaceOverAnAliasStillRead) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* a = g->call_function(
      "fx_inference.pointwise",
      {Argument::list({x}), Argument{"tanh i0"}, Argument::list({})});
  Node* t = g->call_method("t", {a});
  Node* b = g->call_function("operator.add", {a, t});
  Node* c = g->call_function("operator.mul", {b, 2.0});
  g->output(c);
  GraphModule gm(root, std::move(g));
  at::Tensor xv = at::randn({16, 16});
  c10::AutoGradMode no_grad(false);
  auto plan = InferencePlan::build(gm, {xv});
  plan->run({xv});
  at::Tensor ta = at::tanh(xv);
  expect_near(plan->run({xv}).toTensor(), (ta + ta.t()) * 2.0, "a + a.t()");
  EXPECT_EQ(plan->stats().in_place_steps, 0u);  // c is the output: fresh
}

TEST(PointwisePlan, FallbacksMatchTheReference) {
  torch::nn::Module root;
  auto gm =
      pointwise_graph(root, 2, {"gelu i0", "mul t0 i1", "add t1 s0"}, {0.5});
  c10::AutoGradMode no_grad(false);
  at::Tensor x = at::randn({2, 3, 8}), y = at::randn({3, 8});
  auto plan = InferencePlan::build(*gm, {x, y});
  // Double: the reference kernel, bitwise.
  at::Tensor xd = x.to(at::kDouble), yd = y.to(at::kDouble);
  at::Tensor got = plan->run({xd, yd}).toTensor();
  EXPECT_TRUE(at::equal(got, at::gelu(xd) * yd + 0.5));
  EXPECT_EQ(plan->stats().pointwise_steps, 0u);
  EXPECT_EQ(plan->stats().replans, 1u);
  // Another shape: re-planned, fused again.
  at::Tensor x2 = at::randn({5, 7}), y2 = at::randn({7});
  expect_near(plan->run({x2, y2}).toTensor(), at::gelu(x2) * y2 + 0.5,
              "other shape");
  EXPECT_EQ(plan->stats().pointwise_steps, 1u);
  // Grad mode: GraphModule::forward.
  c10::AutoGradMode grad(true);
  EXPECT_TRUE(
      at::equal(plan->run({x2, y2}).toTensor(), at::gelu(x2) * y2 + 0.5));
  EXPECT_EQ(plan->stats().forward_calls, 1u);
}

TEST(PointwisePlan, BadProgramsNameTheInstruction) {
  torch::nn::Module root;
  struct Bad {
    std::vector<std::string> program;
    const char* says;
  };
  for (const Bad& bad : std::vector<Bad>{
           {{"frobnicate i0"}, "instruction 0 'frobnicate i0': unknown op"},
           {{"relu i0", "mul t0 t1"},
            "instruction 1 'mul t0 t1': operand 't1'"},
           {{"add i0"}, "'add' takes 2"},
           {{"clamp i0 i0 s0"}, "clamp bounds are scalars"},
           {{"div s0 i0"}, "a scalar divided by a tensor"},
           {{"mul i0 s3"}, "operand 's3' out of range"}}) {
    auto gm = pointwise_graph(root, 1, bad.program, {1.0});
    c10::AutoGradMode no_grad(false);
    try {
      gm->forward({at::randn({4})});
      ADD_FAILURE() << bad.program.back() << ": no error";
    } catch (const FxError& e) {
      EXPECT_NE(std::string(e.what()).find(bad.says), std::string::npos)
          << e.what();
    }
    // The plan leaves it to the reference kernel, which reports the same.
    EXPECT_THROW(InferencePlan::build(*gm, {at::randn({4})}), FxError);
  }
}

}  // namespace
}  // namespace fx
