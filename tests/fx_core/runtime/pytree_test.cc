// Pytree inputs and outputs at run time (fx_core/runtime/pytree.h) against
// what torch 1.13's generated code does for a _PyTreeCodeGen graph:
// fx_pytree.tree_flatten_spec of the arguments, pytree.tree_unflatten of the
// output's leaves. Each expected behaviour and message is torch's
// (fx_pytree / _pytree / Python's own for the call).
#include "fx_core/runtime/pytree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/io/python_tuples.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/runtime_codegen.h"
#include "fx_core/support/error.h"

namespace fx {
namespace {

using ::testing::HasSubstr;

TreeSpec leaf() { return TreeSpec(); }

c10::IValue dict_of(std::vector<std::pair<std::string, int64_t>> items) {
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  for (auto& [k, v] : items) dict.insert(k, v);
  return dict;
}

std::vector<int64_t> ints(const std::vector<c10::IValue>& values) {
  std::vector<int64_t> out;
  for (const c10::IValue& v : values) out.push_back(v.toInt());
  return out;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const FxError& e) {
    return e.what();
  }
  return "";
}

const TreeSpec kDictAB = TreeSpec::dict(
    TreeType::kDict, {Argument("a"), Argument("b")}, {leaf(), leaf()});

TEST(TreeFlattenSpec, ADictIsReadByTheSpecsKeysInTheSpecsOrder) {
  // fx_pytree.tree_flatten_spec({'c': 3, 'b': 2, 'a': 1}, spec) == [1, 2]
  c10::IValue d = dict_of({{"c", 3}, {"b", 2}, {"a", 1}});
  EXPECT_EQ(ints(tree_flatten_spec(d, kDictAB)), (std::vector<int64_t>{1, 2}));
}

TEST(TreeFlattenSpec, AMissingKeyIsAKeyError) {
  EXPECT_EQ(error_of([] {
              tree_flatten_spec(dict_of({{"a", 1}}), kDictAB);
            }),
            "KeyError: 'b'");
}

TEST(TreeFlattenSpec, SequencesAreReadByPositionExtraItemsIgnored) {
  TreeSpec spec = TreeSpec::sequence(TreeType::kTuple, {leaf(), leaf()});
  c10::IValue list = c10::List<int64_t>({1, 2, 3});
  EXPECT_EQ(ints(tree_flatten_spec(list, spec)), (std::vector<int64_t>{1, 2}));
  EXPECT_THAT(
      error_of([&] { tree_flatten_spec(c10::List<int64_t>({1}), spec); }),
      HasSubstr("IndexError: list index out of range"));
}

TEST(TreeFlattenSpec, AnOrderedDictHasNoFlattenSpec) {
  TreeSpec spec =
      TreeSpec::dict(TreeType::kOrderedDict, {Argument("a")}, {leaf()});
  EXPECT_THAT(error_of([&] {
                tree_flatten_spec(dict_of({{"a", 1}}), spec);
              }),
              HasSubstr("OrderedDict does not have a flatten_fn_spec"));
}

TEST(TreeUnflatten, RebuildsDictsListsAndNamedTuples) {
  // pytree.tree_unflatten([1, 2, 3], TreeSpec(dict, ['s', 'l'],
  //   [TreeSpec(namedtuple, <class 'm.P'>, [*, *]), TreeSpec(list, None,
  //   [*])]))
  TreeSpec spec = TreeSpec::dict(
      TreeType::kDict, {Argument("s"), Argument("l")},
      {TreeSpec::named_tuple("m.P", {"x", "y"}, {leaf(), leaf()}),
       TreeSpec::sequence(TreeType::kList, {leaf()})});
  c10::IValue out = tree_unflatten({1, 2, 3}, spec);
  ASSERT_TRUE(out.isGenericDict());
  c10::impl::GenericDict dict = out.toGenericDict();
  c10::IValue point = dict.at("s");
  EXPECT_EQ(python_tuple_name(point), "m.P");
  EXPECT_EQ(named_tuple_field(point, "y")->toInt(), 2);
  EXPECT_EQ(dict.at("l").toIntVector(), (std::vector<int64_t>{3}));
}

TEST(TreeUnflatten, TheLeafCountMustBeTheSpecs) {
  EXPECT_EQ(error_of([] { tree_unflatten({1}, kDictAB); }),
            "tree_unflatten(values, spec): `values` has length 1 but the spec "
            "refers to a pytree that holds 2 items (TreeSpec(dict, ['a', "
            "'b'], [*, *])).");
}

// forward(self, x, y) of a module traced with concrete_args={'x': [PH, PH]}.
PyTreeInfo module_info() {
  return PyTreeInfo{
      {"self", "x", "y"},
      TreeSpec::sequence(
          TreeType::kTuple,
          {leaf(), TreeSpec::sequence(TreeType::kList, {leaf(), leaf()}),
           leaf()}),
      TreeSpec::sequence(TreeType::kTuple, {leaf(), leaf()})};
}

TEST(PyTreeInputs, SelfIsNotAnArgumentAndItsLeafIsDropped) {
  std::vector<c10::IValue> flat = flatten_pytree_inputs(
      module_info(), {c10::List<int64_t>({1, 2}), int64_t{3}});
  EXPECT_EQ(ints(flat), (std::vector<int64_t>{1, 2, 3}));
}

TEST(PyTreeInputs, TheArgumentCountIsCheckedAsPythonChecksIt) {
  EXPECT_EQ(error_of([] {
              flatten_pytree_inputs(module_info(),
                                    {int64_t{1}, int64_t{2}, int64_t{3}});
            }),
            "forward() takes 3 positional arguments but 4 were given");
  EXPECT_EQ(error_of([] { flatten_pytree_inputs(module_info(), {}); }),
            "forward() missing 2 required positional arguments: 'x', 'y'");
}

TEST(PyTreeOutputs, TheOutputListIsUnflattenedThroughTheOutSpec) {
  c10::IValue out =
      unflatten_pytree_output(module_info(), c10::List<int64_t>({4, 5}));
  ASSERT_TRUE(out.isTuple());
  EXPECT_EQ(out.toTupleRef().elements()[1].toInt(), 5);
  PyTreeInfo no_out_spec = module_info();
  no_out_spec.out_spec.reset();
  EXPECT_THAT(error_of([&] {
                unflatten_pytree_output(no_out_spec, c10::IValue(int64_t{1}));
              }),
              HasSubstr("got item of type NoneType"));
}

TEST(PyTreeCodeGenHooks, ProcessInputsAndOutputsUseTheGraphsSpecs) {
  Graph g;
  g.set_codegen(std::make_unique<PyTreeCodeGen>(module_info()));
  std::vector<c10::IValue> flat =
      process_inputs(g.codegen(), {c10::List<int64_t>({1, 2}), int64_t{3}});
  EXPECT_EQ(flat.size(), 3u);
  EXPECT_TRUE(
      process_outputs(g.codegen(), c10::List<int64_t>({4, 5})).isTuple());
}

}  // namespace
}  // namespace fx
