// fx::TreeSpec and fx::PyTreeCodeGen against torch 1.13's pytree TreeSpec
// and _PyTreeCodeGen.
//
// Expected reprs are torch's `repr(spec)` and expected sources torch.fx's
// `gm.code` for symbolic_trace of the same function with the same
// concrete_args (the function and its concrete_args are in each comment).
#include "fx_core/ir/pytree_codegen.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/tree_spec.h"
#include "fx_core/support/error.h"

namespace fx {
namespace {

TreeSpec leaf() { return TreeSpec(); }

TreeSpec tuple_of(std::vector<TreeSpec> children) {
  return TreeSpec::sequence(TreeType::kTuple, std::move(children));
}

TreeSpec list_of(std::vector<TreeSpec> children) {
  return TreeSpec::sequence(TreeType::kList, std::move(children));
}

TreeSpec dict_of(ArgumentList keys, std::vector<TreeSpec> children) {
  return TreeSpec::dict(TreeType::kDict, std::move(keys), std::move(children));
}

// ------------------------------------------------------------- TreeSpec

TEST(TreeSpec, ALeafHoldsOneLeafAndPrintsAsAStar) {
  EXPECT_TRUE(leaf().is_leaf());
  EXPECT_EQ(leaf().num_leaves(), 1u);
  EXPECT_EQ(leaf().repr(), "*");
}

TEST(TreeSpec, ReprIsTorchsForEveryContainerType) {
  // pytree.tree_flatten(({1: 2, 'a': (3, P(4, 5))}, OrderedDict(b=[6]), 7))
  TreeSpec point =
      TreeSpec::named_tuple("__main__.P", {"a", "b"}, {leaf(), leaf()});
  TreeSpec spec =
      tuple_of({dict_of({Argument(int64_t{1}), Argument("a")},
                        {leaf(), tuple_of({leaf(), point})}),
                TreeSpec::dict(TreeType::kOrderedDict, {Argument("b")},
                               {list_of({leaf()})}),
                leaf()});
  EXPECT_EQ(spec.repr(),
            "TreeSpec(tuple, None, [TreeSpec(dict, [1, 'a'], [*, "
            "TreeSpec(tuple, None, [*, TreeSpec(namedtuple, <class "
            "'__main__.P'>, [*, *])])]), TreeSpec(OrderedDict, ['b'], "
            "[TreeSpec(list, None, [*])]), *])");
  EXPECT_EQ(spec.num_leaves(), 6u);
}

TEST(TreeSpec, EmptyContainersHoldNoLeaves) {
  EXPECT_EQ(list_of({}).num_leaves(), 0u);
  EXPECT_EQ(dict_of({}, {}).repr(), "TreeSpec(dict, [], [])");
}

TEST(TreeSpec, EqualityComparesTypeContextAndChildren) {
  EXPECT_EQ(dict_of({Argument("a")}, {leaf()}),
            dict_of({Argument("a")}, {leaf()}));
  EXPECT_NE(dict_of({Argument("a")}, {leaf()}),
            dict_of({Argument("b")}, {leaf()}));
  EXPECT_NE(list_of({leaf()}), tuple_of({leaf()}));
  EXPECT_NE(TreeSpec::named_tuple("m.P", {"a"}, {leaf()}),
            TreeSpec::named_tuple("m.Q", {"a"}, {leaf()}));
}

TEST(TreeSpec, AContextThatDoesNotFitTheChildrenIsRefused) {
  EXPECT_THROW(dict_of({Argument("a")}, {}), FxError);
  EXPECT_THROW(TreeSpec::named_tuple("m.P", {"a", "b"}, {leaf()}), FxError);
  EXPECT_THROW(TreeSpec::sequence(TreeType::kDict, {}), FxError);
}

TEST(TreeSpec, TypeNamesRoundTrip) {
  for (TreeType t : {TreeType::kTuple, TreeType::kList, TreeType::kNamedTuple,
                     TreeType::kDict, TreeType::kOrderedDict,
                     TreeType::kImmutableList, TreeType::kImmutableDict}) {
    EXPECT_EQ(parse_tree_type(tree_type_name(t)), t);
  }
  EXPECT_EQ(parse_tree_type("set"), std::nullopt);
}

// -------------------------------------------------------- PyTreeCodeGen

class PyTreeCodeGenTest : public ::testing::Test {
 protected:
  std::string code() const { return g_.python_code("self").src; }

  Graph g_;
};

TEST_F(PyTreeCodeGenTest, ADictInputIsFlattenedThroughTheInSpec) {
  // def f(x): return x['a'] + x['b'];  concrete_args={'x': {'a': PH, 'b': PH}}
  Node* x1 = g_.placeholder("x_1");
  Node* x2 = g_.placeholder("x_2");
  Node* add = g_.call_function("operator.add", {x1, x2});
  g_.output(Argument::list({add}));
  g_.set_codegen(std::make_unique<PyTreeCodeGen>(PyTreeInfo{
      {"x"},
      tuple_of({dict_of({Argument("a"), Argument("b")}, {leaf(), leaf()})}),
      leaf()}));
  EXPECT_EQ(code(),
            "\n\n\ndef forward(self, x):\n"
            "    x_1, x_2, = fx_pytree.tree_flatten_spec([x], "
            "self._in_spec)\n"
            "    add = x_1 + x_2;  x_1 = x_2 = None\n"
            "    return pytree.tree_unflatten([add], self._out_spec)\n    ");
}

TEST_F(PyTreeCodeGenTest, AModulesSelfIsFlattenedWithTheArguments) {
  // forward(self, x, y): return {'o': x[0] + y, 'p': [x[1], 3]};
  // concrete_args={'x': [PH, PH]}
  Node* x1 = g_.placeholder("x_1");
  Node* x2 = g_.placeholder("x_2");
  Node* y = g_.placeholder("y");
  Node* add = g_.call_function("operator.add", {x1, y});
  g_.output(Argument::list({add, x2, Argument(int64_t{3})}));
  g_.set_codegen(std::make_unique<PyTreeCodeGen>(
      PyTreeInfo{{"self", "x", "y"},
                 tuple_of({leaf(), list_of({leaf(), leaf()}), leaf()}),
                 dict_of({Argument("o"), Argument("p")},
                         {leaf(), list_of({leaf(), leaf()})})}));
  EXPECT_EQ(code(),
            "\n\n\ndef forward(self, x, y):\n"
            "    self, x_1, x_2, y, = fx_pytree.tree_flatten_spec([self, x, "
            "y], self._in_spec)\n"
            "    add = x_1 + y;  x_1 = y = None\n"
            "    return pytree.tree_unflatten([add, x_2, 3], "
            "self._out_spec)\n    ");
}

TEST_F(PyTreeCodeGenTest, WithoutPlaceholdersThereIsNoFlatteningLine) {
  // def f(x, e): return x;  concrete_args={'e': [], 'x': {}}
  g_.output(Argument::list({}));
  g_.set_codegen(std::make_unique<PyTreeCodeGen>(PyTreeInfo{
      {"x", "e"}, tuple_of({dict_of({}, {}), list_of({})}), dict_of({}, {})}));
  EXPECT_EQ(code(),
            "\n\n\ndef forward(self, x, e):\n"
            "    return pytree.tree_unflatten([], self._out_spec)\n    ");
}

TEST_F(PyTreeCodeGenTest, StarArgsAreUnpackedByTheFlatteningLine) {
  // def f(x, *args): return x[0] + args[0];  concrete_args={'x': [PH, PH]}
  Node* x1 = g_.placeholder("x_1");
  Node* x2 = g_.placeholder("x_2");
  Node* args = g_.placeholder("*args");
  Node* item = g_.call_function("operator.getitem", {args, int64_t{0}});
  Node* add = g_.call_function("operator.add", {x1, item});
  g_.output(Argument::list({add}));
  (void)x2;
  g_.set_codegen(std::make_unique<PyTreeCodeGen>(PyTreeInfo{
      {"x"}, tuple_of({list_of({leaf(), leaf()}), leaf()}), leaf()}));
  EXPECT_EQ(code(),
            "\n\n\ndef forward(self, x):\n"
            "    x_1, x_2, *args, = fx_pytree.tree_flatten_spec([x], "
            "self._in_spec)\n"
            "    _args = args\n"
            "    getitem = _args[0];  _args = None\n"
            "    add = x_1 + getitem;  x_1 = getitem = None\n"
            "    return pytree.tree_unflatten([add], self._out_spec)\n    ");
}

TEST_F(PyTreeCodeGenTest, GraphCopiesKeepTheCodeGenAndItsInfo) {
  PyTreeInfo info{{"x"}, tuple_of({list_of({leaf()})}), leaf()};
  g_.output(Argument::list({}));
  g_.set_codegen(std::make_unique<PyTreeCodeGen>(info));
  std::unique_ptr<Graph> copy = g_.deepcopy();
  const PyTreeInfo* copied = pytree_info(copy->codegen());
  ASSERT_NE(copied, nullptr);
  EXPECT_EQ(*copied, info);
  EXPECT_EQ(copy->python_code("self").src, code());
}

TEST_F(PyTreeCodeGenTest, APlainCodeGenHasNoPyTreeInfo) {
  EXPECT_EQ(pytree_info(g_.codegen()), nullptr);
}

}  // namespace
}  // namespace fx
