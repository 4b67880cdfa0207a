// Run-time values of NamedTuple arguments and dicts whose keys are not all
// str (fx_core/ir/argument.h, runtime/value.h): a NamedTuple is a named
// tuple of its class (what torch.fx's code passes: `Pair(x, 1.2)`), a dict
// keeps its int, float and bool keys; the same from constants, the compiled
// plan (GraphModule::forward) and the Interpreter.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/io/python_tuples.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/runtime/value.h"

namespace fx {
namespace {

std::shared_ptr<const NamedTupleType> pair_type() {
  auto type = std::make_shared<NamedTupleType>();
  type->name = "__main__.Pair#1f";
  type->fields = {"x", "y"};
  return type;
}

TEST(ArgumentValues, ANamedTupleConstantIsANamedTupleOfItsClass) {
  c10::IValue v = constant_value(Argument::named_tuple(pair_type(), {1, 2.5}));
  EXPECT_EQ(python_tuple_name(v), "__main__.Pair#1f");
  EXPECT_EQ(named_tuple_field(v, "y")->toDouble(), 2.5);
  EXPECT_EQ(python_tuple_name(constant_value(Argument::tuple({1}))), "");
}

TEST(ArgumentValues, AKeyedDictConstantKeepsItsKeys) {
  c10::IValue v = constant_value(
      Argument::keyed_dict({{5, "five"}, {1.5, nullptr}, {true, 1}}));
  c10::impl::GenericDict dict = v.toGenericDict();
  ASSERT_EQ(dict.size(), 3u);
  EXPECT_EQ(dict.at(int64_t{5}).toStringRef(), "five");
  EXPECT_TRUE(dict.at(1.5).isNone());
  EXPECT_EQ(dict.at(true).toInt(), 1);
  // And back: constant_argument spells it with the same keys.
  EXPECT_EQ(constant_argument(v),
            Argument::keyed_dict({{5, "five"}, {1.5, nullptr}, {true, 1}}));
  c10::IValue ints = constant_value(Argument::keyed_dict({{0, 1}, {1, 2}}));
  EXPECT_TRUE(ints.toGenericDict().keyType()->kind() == c10::TypeKind::IntType);
}

// x -> {0: Pair(x, relu(x)), 7: (x,)}: a NamedTuple and an int-keyed dict
// built from nodes.
std::unique_ptr<Graph> named_tuple_graph() {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* relu = g->call_function("torch.relu", {x});
  g->output(
      Argument::keyed_dict({{0, Argument::named_tuple(pair_type(), {x, relu})},
                            {7, Argument::tuple({x})}}));
  return g;
}

void expect_named_tuple_output(const c10::IValue& out, const at::Tensor& x) {
  c10::impl::GenericDict dict = out.toGenericDict();
  ASSERT_EQ(dict.size(), 2u);
  c10::IValue pair = dict.at(int64_t{0});
  EXPECT_EQ(python_tuple_name(pair), "__main__.Pair#1f");
  EXPECT_TRUE(at::equal(named_tuple_field(pair, "y")->toTensor(), x.relu()));
  EXPECT_EQ(python_tuple_name(dict.at(int64_t{7})), "");
}

TEST(ArgumentValues, TheCompiledPlanBuildsThem) {
  torch::nn::Module root;
  GraphModule gm(root, named_tuple_graph());
  at::Tensor x = torch::randn({3});
  expect_named_tuple_output(gm.forward({x}), x);
}

TEST(ArgumentValues, TheInterpreterBuildsThem) {
  torch::nn::Module root;
  GraphModule gm(root, named_tuple_graph());
  at::Tensor x = torch::randn({3});
  expect_named_tuple_output(Interpreter(gm).run({x}), x);
}

}  // namespace
}  // namespace fx
