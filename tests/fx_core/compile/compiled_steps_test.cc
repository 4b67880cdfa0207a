// The step compiler both plans are built on (fx::compile_steps): what each
// node resolves to, slots, last uses, releases and last reads, and that
// ExecutionPlan (through GraphModule) and InferencePlan word their errors
// alike.
#include "fx_core/compile/compiled_steps.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <memory>
#include <string>
#include <vector>

#include "fx_core/compile/inference_plan.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/op_registry.h"

namespace fx {
namespace {

using Kind = CompiledStep::Kind;

// The message compile_steps throws for `graph` against `root`.
std::string compile_error(const Graph& graph, torch::nn::Module& root) {
  try {
    compile_steps(graph, root);
  } catch (const FxError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected FxError";
  return "";
}

// The message InferencePlan::build throws for `gm`.
std::string build_error(GraphModule& gm, std::vector<c10::IValue> inputs) {
  c10::AutoGradMode no_grad(false);
  try {
    InferencePlan::build(gm, std::move(inputs));
  } catch (const FxError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected FxError";
  return "";
}

TEST(CompiledSteps, SlotsLastUsesReleasesAndLastReads) {
  torch::nn::Module root;
  at::Tensor w = root.register_parameter("w", at::rand({4}));
  Graph g;
  Node* x = g.placeholder("x");
  Node* wn = g.get_attr("w");
  Node* add = g.call_function("operator.add", {x, wn});
  Node* mul = g.call_function("operator.mul", {add, add});
  g.call_function("torch.neg", {x});  // unused
  g.output(mul);
  CompiledSteps c = compile_steps(g, root);

  ASSERT_EQ(c.steps.size(), 6u);
  EXPECT_EQ(c.num_slots, 5u);
  EXPECT_EQ(c.num_inputs, 1u);
  const Kind kinds[] = {Kind::kPlaceholder, Kind::kConstant, Kind::kCallOp,
                        Kind::kCallOp,      Kind::kCallOp,   Kind::kOutput};
  size_t max_params = 0;
  for (size_t i = 0; i < c.steps.size(); ++i) {
    EXPECT_EQ(c.steps[i].kind, kinds[i]) << i;
    // Slot i is step i's value; the output has none.
    EXPECT_EQ(c.steps[i].slot, i < 5 ? static_cast<int32_t>(i) : -1) << i;
    max_params = std::max(max_params, c.steps[i].params.size());
  }
  EXPECT_EQ(c.max_params, max_params);
  EXPECT_TRUE(c.steps[1].constant.toTensor().is_same(w));
  EXPECT_EQ(c.steps[2].op->target, "operator.add");
  EXPECT_EQ(c.steps[2].schema, &c.steps[2].op->schema);
  EXPECT_TRUE(c.steps[2].keeps_args());  // a built-in kernel

  // x is last read by neg (step 4), w by add, add by mul, mul by the output;
  // neg's own value is never read.
  EXPECT_EQ(c.last_use, (std::vector<size_t>{4, 2, 3, 5, 4}));
  EXPECT_EQ(c.steps[0].release, std::vector<int32_t>{});
  EXPECT_EQ(c.steps[2].release, std::vector<int32_t>{1});
  EXPECT_EQ(c.steps[3].release, std::vector<int32_t>{2});
  EXPECT_EQ(c.steps[4].release, (std::vector<int32_t>{0, 4}));
  EXPECT_EQ(c.steps[5].release, std::vector<int32_t>{3});
  // add(x, w): w's last read; mul(add, add): only the second read of add.
  EXPECT_EQ(c.steps[2].last_reads, 0b10u);
  EXPECT_EQ(c.steps[3].last_reads, 0b10u);
  EXPECT_EQ(c.steps[4].last_reads, 0b1u);
}

TEST(CompiledSteps, ModulesAndPlaceholderDefaults) {
  torch::nn::Module root;
  torch::nn::Linear lin = root.register_module("lin", torch::nn::Linear(4, 3));
  Graph g;
  Node* x = g.placeholder("x");
  g.placeholder("k", "", Argument(int64_t{2}));
  g.placeholder("*rest");
  Node* y = g.call_module("lin", {x});
  g.output(y);
  CompiledSteps c = compile_steps(g, root);
  ASSERT_EQ(c.steps.size(), 5u);
  EXPECT_EQ(c.num_inputs, 3u);
  EXPECT_FALSE(c.steps[0].has_default);
  EXPECT_TRUE(c.steps[1].has_default);
  EXPECT_EQ(c.steps[1].constant.toInt(), 2);
  EXPECT_EQ(c.steps[1].input_index, 1u);
  EXPECT_TRUE(c.steps[2].var_args);
  const CompiledStep& call = c.steps[3];
  EXPECT_EQ(call.kind, Kind::kCallModule);
  EXPECT_EQ(call.module, lin.get());
  EXPECT_EQ(call.module_kind->type, "torch.nn.Linear");
  EXPECT_EQ(call.schema, &call.module_kind->forward_schema);
  EXPECT_TRUE(call.keeps_args());
}

// call_step moves the parameters it is told to and copies the others.
TEST(CompiledSteps, CallStepMovesOnlyWhatItIsTold) {
  torch::nn::Module root;
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  g.output(g.call_function("operator.add", {x, y}));
  CompiledSteps c = compile_steps(g, root);
  std::vector<c10::IValue> slots = {at::ones({2}), at::ones({2})};
  std::vector<c10::IValue> buffer(c.max_params);
  c10::IValue sum = call_step(c.steps[2], 0b10, slots, buffer);
  EXPECT_TRUE(at::equal(sum.toTensor(), at::full({2}, 2.0)));
  EXPECT_TRUE(slots[0].isTensor());  // copied
  EXPECT_TRUE(slots[1].isNone());    // moved
  for (const c10::IValue& v : buffer) EXPECT_TRUE(v.isNone());
}

TEST(CompiledSteps, UnknownTargetErrorIsTheSameInBothPlans) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* f = g->call_function("vendor.mystery_op", {x});
  g->output(f);
  const std::string want =
      "cannot compile node '" + std::string(f->name()) +
      "' (call_function vendor.mystery_op): no kernel for call_function "
      "target 'vendor.mystery_op': if a plugin defines it, load that plugin "
      "(fx: --plugin PATH or --plugin-dir DIR; fx_sdk: plugins=[PATH]); in "
      "C++, register one with fx::OpRegistry::global().add()";
  EXPECT_EQ(compile_error(*g, root), want);
  GraphModule gm(root, std::move(g));
  EXPECT_EQ(gm.check_executable().message(), want);
  EXPECT_EQ(build_error(gm, {at::rand({2})}), want);
}

TEST(CompiledSteps, UnknownMethodAndModuleClassErrorsAreTheSameInBothPlans) {
  torch::nn::Module root;
  root.register_module("custom", std::make_shared<torch::nn::Module>());
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* m = g->call_module("custom", {x});
  g->output(m);
  const std::string want =
      "cannot compile node '" + std::string(m->name()) +
      "' (call_module custom): module class torch::nn::Module cannot be "
      "called: register it with fx::ModuleRegistry::global().add()";
  EXPECT_EQ(compile_error(*g, root), want);
  GraphModule gm(root, std::move(g));
  EXPECT_EQ(gm.check_executable().message(), want);
  EXPECT_EQ(build_error(gm, {at::rand({2})}), want);

  auto g2 = std::make_unique<Graph>();
  Node* x2 = g2->placeholder("x");
  Node* method = g2->call_method("no_such_method", {x2});
  g2->output(method);
  const std::string want2 =
      "cannot compile node '" + std::string(method->name()) +
      "' (call_method no_such_method): no kernel for call_method target "
      "'no_such_method': register one with fx::OpRegistry::global().add()";
  GraphModule gm2(root, std::move(g2));
  EXPECT_EQ(gm2.check_executable().message(), want2);
  EXPECT_EQ(build_error(gm2, {at::rand({2})}), want2);
}

TEST(CompiledSteps, BindingAndAttributeErrorsNameTheNode) {
  torch::nn::Module root;
  Graph g;
  Node* x = g.placeholder("x");
  Node* sum = g.call_function("torch.sum", {x}, {{"axis", Argument(1)}});
  g.output(sum);
  EXPECT_EQ(compile_error(g, root),
            "cannot compile node '" + std::string(sum->name()) +
                "' (call_function torch.sum): torch.sum() got an unexpected "
                "keyword argument 'axis'");
  Graph g2;
  Node* attr = g2.get_attr("nope");
  g2.output(attr);
  EXPECT_EQ(compile_error(g2, root),
            "cannot compile node '" + std::string(attr->name()) +
                "' (get_attr nope): the module has no parameter or buffer "
                "'nope'");
}

// A kernel that fails at run time: both plans name the node alike.
TEST(CompiledSteps, RuntimeErrorIsTheSameInBothPlans) {
  torch::nn::Module root;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  g->output(g->call_function("torch.matmul", {x, y}));
  GraphModule gm(root, std::move(g));
  std::vector<c10::IValue> in = {at::rand({2, 3}), at::rand({4, 5})};
  std::string from_forward;
  try {
    c10::AutoGradMode no_grad(false);
    gm.forward(in);
  } catch (const FxError& e) {
    from_forward = e.what();
  }
  EXPECT_EQ(from_forward.rfind("while running node 'matmul' (call_function "
                               "torch.matmul): ",
                               0),
            0u)
      << from_forward;
  EXPECT_EQ(from_forward.find("Exception raised from"), std::string::npos)
      << "no c10 backtrace: " << from_forward;
  EXPECT_EQ(build_error(gm, in), from_forward);
}

}  // namespace
}  // namespace fx
