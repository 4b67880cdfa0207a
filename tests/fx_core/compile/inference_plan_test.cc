// fx::InferencePlan gives exactly GraphModule::forward's results (bitwise:
// same dtype, sizes, strides and bytes) on every reference graph, on graphs
// using every directly bound kernel, on a 1k-op chain and on torchvision
// models; re-plans on other input layouts; never overwrites a result the
// caller holds.
#include "fx_core/compile/inference_plan.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "fx_core/io/torch_save.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/op_registry.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

namespace fs = std::filesystem;

// Bitwise equality of two runtime values; on a difference, *why says where.
bool bitwise_equal(const c10::IValue& a, const c10::IValue& b, std::string* why,
                   const std::string& where = "output") {
  if (a.isTensor() != b.isTensor()) {
    *why = where + ": tensor against non-tensor";
    return false;
  }
  if (a.isTensor()) {
    const at::Tensor& x = a.toTensor();
    const at::Tensor& y = b.toTensor();
    if (x.defined() != y.defined()) {
      *why = where + ": defined differs";
      return false;
    }
    if (!x.defined()) return true;
    if (x.scalar_type() != y.scalar_type() || x.sizes() != y.sizes() ||
        x.strides() != y.strides() || x.device() != y.device()) {
      *why = where + ": dtype, sizes, strides or device differ";
      return false;
    }
    at::Tensor cx = x.contiguous(), cy = y.contiguous();
    if (std::memcmp(cx.data_ptr(), cy.data_ptr(), cx.nbytes()) != 0) {
      *why = where + ": bytes differ";
      return false;
    }
    return true;
  }
  if (a.isList() || a.isTuple()) {
    if (a.isTuple() != b.isTuple() || a.isList() != b.isList()) {
      *why = where + ": container kinds differ";
      return false;
    }
    std::vector<c10::IValue> xs =
        a.isTuple() ? a.toTupleRef().elements().vec() : a.toListRef().vec();
    std::vector<c10::IValue> ys =
        b.isTuple() ? b.toTupleRef().elements().vec() : b.toListRef().vec();
    if (xs.size() != ys.size()) {
      *why = where + ": lengths differ";
      return false;
    }
    for (size_t i = 0; i < xs.size(); ++i) {
      if (!bitwise_equal(xs[i], ys[i], why,
                         where + "[" + std::to_string(i) + "]")) {
        return false;
      }
    }
    return true;
  }
  if (a.isGenericDict()) {
    if (!b.isGenericDict() ||
        a.toGenericDict().size() != b.toGenericDict().size()) {
      *why = where + ": dicts differ";
      return false;
    }
    auto bd = b.toGenericDict();
    for (const auto& kv : a.toGenericDict()) {
      auto it = bd.find(kv.key());
      if (it == bd.end() ||
          !bitwise_equal(kv.value(), it->value(), why, where + "[key]")) {
        if (it == bd.end()) *why = where + ": key missing";
        return false;
      }
    }
    return true;
  }
  if (a.tagKind() != b.tagKind()) {
    *why = where + ": " + a.tagKind() + " against " + b.tagKind();
    return false;
  }
  if (a.isDouble()) return a.toDouble() == b.toDouble();
  if (a.isInt()) return a.toInt() == b.toInt();
  if (a.isBool()) return a.toBool() == b.toBool();
  if (a.isString()) return a.toStringRef() == b.toStringRef();
  return true;
}

// Clones every tensor in a value (results the plan returned, kept to check
// they are not overwritten later).
c10::IValue deep_clone(const c10::IValue& v) {
  if (v.isTensor()) {
    return v.toTensor().defined() ? c10::IValue(v.toTensor().clone()) : v;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> items;
    for (const auto& e : v.toTupleRef().elements()) {
      items.push_back(deep_clone(e));
    }
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (v.isList()) {
    c10::impl::GenericList list(c10::AnyType::get());
    for (const auto& e : v.toListRef()) list.push_back(deep_clone(e));
    return list;
  }
  return v;
}

// Runs `gm` through GraphModule::forward and an InferencePlan (three runs:
// the planning run, then twice planned) and checks every result bitwise.
void expect_plan_matches(GraphModule& gm, const std::vector<c10::IValue>& in,
                         const std::string& name,
                         InferencePlan::Stats* stats_out = nullptr) {
  c10::AutoGradMode no_grad(false);
  c10::IValue want = gm.forward(in);
  std::unique_ptr<InferencePlan> plan = InferencePlan::build(gm, in);
  std::string why;
  c10::IValue first = plan->run(in);
  c10::IValue kept = deep_clone(first);
  EXPECT_TRUE(bitwise_equal(first, want, &why)) << name << ": " << why;
  c10::IValue second = plan->run(in);
  EXPECT_TRUE(bitwise_equal(second, want, &why))
      << name << " (second run): " << why;
  // The first run's result is the caller's: not overwritten by the second.
  EXPECT_TRUE(bitwise_equal(first, kept, &why))
      << name << " (first result after the second run): " << why;
  InferencePlan::Stats stats = plan->stats();
  EXPECT_EQ(stats.replans, 0u) << name;
  EXPECT_EQ(stats.direct_fallbacks, 0u) << name;
  if (stats_out) *stats_out = stats;
  std::cout << "[ plan ] " << name << ": " << stats.steps << " nodes, "
            << stats.direct_steps << " direct, " << stats.fallback_steps
            << " through the registries, " << stats.buffers << " buffers ("
            << stats.buffer_bytes << " bytes), " << stats.fresh_outputs
            << " fresh outputs\n";
}

TEST(InferencePlan, ReferenceGraphsMatchForwardBitwise) {
  std::string dir = testing::reference_dir();
  ASSERT_FALSE(dir.empty());
  int checked = 0;
  for (const std::string& name : testing::reference_cases()) {
    std::string base = dir + "/" + name + "/";
    if (!fs::exists(base + "graph.fx.json") || !fs::exists(base + "input.pt")) {
      continue;
    }
    auto gm = read_graph_module(base + "graph.fx.json");
    ASSERT_TRUE(gm.ok()) << name << ": " << gm.status().message();
    auto inputs = read_value_file(base + "input.pt");
    ASSERT_TRUE(inputs.ok()) << name << ": " << inputs.status().message();
    expect_plan_matches(**gm, inputs->toListRef().vec(), name);
    ++checked;
  }
  // seed_dropout_functional has no inputs (training-mode dropout is random).
  EXPECT_GE(checked, 6);
}

// A root holding `w` (16) and `b` (4x16).
std::shared_ptr<torch::nn::Module> make_root() {
  auto root = std::make_shared<torch::nn::Module>();
  root->register_parameter("w", at::rand({16}));
  root->register_parameter("b", at::rand({4, 16}));
  return root;
}

// relu / add / mul over 4x16, `ops` nodes in all.
std::unique_ptr<GraphModule> make_chain(torch::nn::Module& root, int ops) {
  auto g = std::make_unique<Graph>();
  Node* v = g->placeholder("x");
  Node* w = g->get_attr("w");
  for (int i = 0; i < ops; ++i) {
    switch (i % 3) {
      case 0:
        v = g->call_function("torch.relu", {v});
        break;
      case 1:
        v = g->call_function("operator.add", {v, w});
        break;
      default:
        v = g->call_function("operator.mul", {v, w});
        break;
    }
  }
  g->output(v);
  return std::make_unique<GraphModule>(root, std::move(g));
}

TEST(InferencePlan, ThousandOpChainIsBoundDirectlyWithTwoBuffers) {
  auto root = make_root();
  auto gm = make_chain(*root, 1000);
  InferencePlan::Stats stats;
  expect_plan_matches(*gm, {at::randn({4, 16})}, "chain", &stats);
  EXPECT_EQ(stats.direct_steps, 1000u);
  EXPECT_EQ(stats.fallback_steps, 0u);
  EXPECT_EQ(stats.fresh_outputs, 1u);  // the last op: the caller's result
  EXPECT_EQ(stats.buffers, 1u);        // each op over its dead operand
}

// FX_PLAN_PROFILE=1: when the plan goes, stderr has one line for each call
// step (its node, target, engine and result) and the run count; the planning
// run is not counted. Unset, nothing is printed.
TEST(InferencePlan, ProfileListsEveryCallStepOnce) {
  auto root = make_root();
  auto gm = make_chain(*root, 9);
  c10::AutoGradMode no_grad(false);
  auto print_of = [&](const char* value) {
    if (value) {
      setenv("FX_PLAN_PROFILE", value, 1);
    } else {
      unsetenv("FX_PLAN_PROFILE");
    }
    ::testing::internal::CaptureStderr();
    {
      auto plan = InferencePlan::build(*gm, {at::randn({4, 16})});
      for (int i = 0; i < 5; ++i) plan->run({at::randn({4, 16})});
    }
    unsetenv("FX_PLAN_PROFILE");
    return ::testing::internal::GetCapturedStderr();
  };
  const std::string text = print_of("1");
  EXPECT_NE(text.find("fx plan profile: 5 runs on 4x16 torch.float32"),
            std::string::npos)
      << text;
  size_t lines = 0;
  for (const Node* n : gm->graph().nodes()) {
    if (n->op() != Opcode::kCallFunction) continue;
    const std::string line_end = " " + std::string(n->name()) + " (" +
                                 n->target() + ") -> 4x16 torch.float32\n";
    const size_t at = text.find(line_end);
    EXPECT_NE(at, std::string::npos) << n->name() << "\n" << text;
    EXPECT_EQ(text.find(line_end, at + 1), std::string::npos) << n->name();
    // The chain's ops all run on direct kernels.
    const size_t start = text.rfind('\n', at) + 1;
    EXPECT_NE(text.substr(start, at - start).find("  direct "),
              std::string::npos)
        << n->name();
    ++lines;
  }
  EXPECT_EQ(lines, 9u);
  EXPECT_NE(text.find("by engine (medians): direct 100.0%"), std::string::npos)
      << text;
  EXPECT_EQ(print_of(nullptr), "");
  EXPECT_EQ(print_of("0"), "");
}

// Every direct kernel, with numbers, kwargs, broadcasting, method and
// function spellings, intermediate values in the output (fresh each run),
// views of buffers and in-place ops on them (aliasing).
TEST(InferencePlan, EveryDirectKernelMatchesForwardBitwise) {
  auto root = make_root();
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* w = g->get_attr("w");
  Node* b = g->get_attr("b");
  Node* a1 = g->call_function("operator.add", {x, 0.1});
  Node* a2 = g->call_function("torch.add", {a1, w}, {{"alpha", 2.5}});
  Node* a3 = g->call_method("add", {a2, b}, {{"alpha", int64_t{3}}});
  Node* s1 = g->call_function("operator.sub", {a3, w});
  Node* s2 = g->call_method("sub", {s1, 0.3}, {{"alpha", 1.7}});
  Node* s3 = g->call_function("torch.sub", {s2, x});
  Node* m1 = g->call_function("operator.mul", {s3, 1.3});
  Node* m2 = g->call_method("mul", {m1, b});
  Node* m3 = g->call_function("torch.mul", {m2, int64_t{3}});
  Node* d1 = g->call_function("operator.truediv", {m3, 7.0});
  Node* d2 = g->call_function("torch.div", {d1, b});
  Node* d3 = g->call_method("div", {d2, w});
  Node* r1 = g->call_function("torch.relu", {d3});
  Node* r2 =
      g->call_function("torch.nn.functional.relu", {s2}, {{"inplace", false}});
  Node* r3 = g->call_method("relu", {m1});
  Node* c1 =
      g->call_function("torch.clamp", {r1}, {{"min", -0.5}, {"max", 0.5}});
  Node* c2 = g->call_method("clamp", {d2}, {{"min", 0.0}});
  Node* c3 = g->call_method("clamp", {d1}, {{"max", int64_t{1}}});
  Node* t1 = g->call_function("torch.sigmoid", {c2});
  Node* t2 = g->call_method("tanh", {c3});
  Node* t3 = g->call_function("torch.tanh", {t1});
  Node* n1 = g->call_function("operator.neg", {t2});
  Node* n2 = g->call_method("neg", {t3});
  Node* sum = g->call_function("operator.add", {n1, n2});
  sum = g->call_function("operator.add", {sum, r2});
  sum = g->call_function("operator.add", {sum, r3});
  sum = g->call_function("operator.add", {sum, c1});
  // A view of a buffer, used after the buffer's own value dies.
  Node* view = g->call_method("view", {sum, int64_t{4}, int64_t{16}});
  Node* after = g->call_function("operator.mul", {sum, 2.0});
  Node* more = g->call_function("operator.mul", {after, after});
  Node* viewed = g->call_function("operator.add", {view, 1.0});
  // An in-place op on a buffer (through the registry).
  Node* inplace = g->call_method("add_", {more, 1.0});
  Node* last = g->call_function("operator.mul", {inplace, viewed});
  g->output(Argument::tuple({last, a2, view}));
  GraphModule gm(*root, std::move(g));
  InferencePlan::Stats stats;
  expect_plan_matches(gm, {at::randn({4, 16})}, "every kernel", &stats);
  EXPECT_GE(stats.direct_steps, 30u);
}

TEST(InferencePlan, IntegerAndDoubleTensors) {
  auto root = std::make_shared<torch::nn::Module>();
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* a = g->call_function("operator.add", {x, y});
  Node* m = g->call_function("operator.mul", {a, int64_t{3}});
  Node* r = g->call_function("torch.relu", {m});
  Node* s = g->call_method("sub", {r, x}, {{"alpha", int64_t{2}}});
  g->output(s);
  GraphModule gm(*root, std::move(g));
  expect_plan_matches(gm,
                      {at::randint(-9, 9, {3, 5}, at::kLong),
                       at::randint(-9, 9, {5}, at::kLong)},
                      "int64");
  expect_plan_matches(
      gm, {at::randn({3, 5}, at::kDouble), at::randn({5}, at::kDouble)},
      "double");
  // Mixed dtypes promote: left to the registry's kernels.
  InferencePlan::Stats stats;
  expect_plan_matches(gm, {at::randn({3, 5}), at::randn({5}, at::kDouble)},
                      "mixed", &stats);
}

TEST(InferencePlan, ReplansOnOtherInputLayouts) {
  auto root = make_root();
  auto gm = make_chain(*root, 30);
  c10::AutoGradMode no_grad(false);
  auto plan = InferencePlan::build(*gm, {at::randn({4, 16})});
  std::string why;
  for (at::Tensor in :
       {at::randn({4, 16}), at::randn({7, 16}), at::randn({16, 4}).t(),
        at::randn({4, 16}, at::kDouble), at::randn({4, 16})}) {
    c10::IValue want = gm->forward({in});
    EXPECT_TRUE(bitwise_equal(plan->run({in}), want, &why)) << why;
  }
  // 7x16, transposed, double, back to 4x16 contiguous.
  EXPECT_EQ(plan->stats().replans, 4u);
  EXPECT_EQ(plan->stats().direct_steps, 30u);
}

// A registry kernel whose result layout changes from call to call: the
// direct nodes after it leave the plan for that run (the next one re-plans),
// and the values stay right.
TEST(InferencePlan, VaryingLayoutsInsideARunLeaveThePlan) {
  static int calls = 0;
  OpRegistry::global().add(Opcode::kCallFunction, "test.alternating_layout",
                           "input", [](OpArgs& a) -> c10::IValue {
                             at::Tensor x = a.tensor(0);
                             return calls++ % 2 == 0 ? x.clone()
                                                     : x.t().contiguous().t();
                           });
  auto root = make_root();
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* alt = g->call_function("test.alternating_layout", {x});
  Node* r = g->call_function("torch.relu", {alt});
  Node* m = g->call_function("operator.mul", {r, 2.0});
  Node* o = g->call_function("operator.add", {m, 1.0});
  g->output(o);
  GraphModule gm(*root, std::move(g));
  c10::AutoGradMode no_grad(false);
  at::Tensor in = at::randn({4, 6});
  at::Tensor want = at::add(at::mul(at::relu(in), 2.0), 1.0);
  auto plan = InferencePlan::build(gm, {in});
  EXPECT_EQ(plan->stats().direct_steps, 3u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(at::equal(plan->run({in}).toTensor(), want)) << "run " << i;
  }
  EXPECT_GT(plan->stats().direct_fallbacks, 0u);
  EXPECT_GT(plan->stats().replans, 0u);
}

TEST(InferencePlan, GradModeRunsGraphModuleForward) {
  auto root = make_root();
  auto gm = make_chain(*root, 9);
  std::unique_ptr<InferencePlan> plan;
  at::Tensor in = at::randn({4, 16});
  {
    c10::AutoGradMode no_grad(false);
    plan = InferencePlan::build(*gm, {in});
  }
  c10::AutoGradMode grad(true);
  at::Tensor out = plan->run({in}).toTensor();
  EXPECT_TRUE(out.requires_grad());  // w requires grad: autograd recorded
  EXPECT_EQ(plan->stats().forward_calls, 1u);
  std::string why;
  EXPECT_TRUE(
      bitwise_equal(out.detach(), gm->forward({in}).toTensor().detach(), &why))
      << why;
}

TEST(InferencePlan, WrongInputCountIsAnError) {
  auto root = make_root();
  auto gm = make_chain(*root, 3);
  c10::AutoGradMode no_grad(false);
  auto plan = InferencePlan::build(*gm, {at::randn({4, 16})});
  EXPECT_ANY_THROW(plan->run({}));
}

// torchvision models exported by Python torch.fx at test time.
class TorchvisionPlan : public ::testing::TestWithParam<std::string> {};

TEST_P(TorchvisionPlan, MatchesForwardBitwise) {
  if (std::system("/usr/bin/python3 -c 'import torch, torchvision' "
                  ">/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3-torch / python3-torchvision are not installed";
  }
  std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/" + GetParam();
  std::string script = std::string(std::getenv("TEST_SRCDIR")) +
                       "/fx_sdk/tools/torchfx_export.py";
  std::string command = "/usr/bin/python3 " + script + " --torchvision " +
                        GetParam() + " -o " + dir + " > " + dir + ".log 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0)
      << testing::read_file(dir + ".log");
  auto gm = read_graph_module(dir + "/graph.fx.json");
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  auto inputs = read_value_file(dir + "/input.pt");
  ASSERT_TRUE(inputs.ok()) << inputs.status().message();
  InferencePlan::Stats stats;
  expect_plan_matches(**gm, inputs->toListRef().vec(), GetParam(), &stats);
  EXPECT_GT(stats.direct_steps, 0u);
}

INSTANTIATE_TEST_SUITE_P(Torchvision, TorchvisionPlan,
                         ::testing::Values("resnet18", "mobilenet_v3_small",
                                           "efficientnet_b0"));

}  // namespace
}  // namespace fx
