// NamedTuple arguments and dicts whose keys are not all str (argument.h):
// values, their text forms and generated code.
//
// The expected graph text and code are torch.fx 1.13's for the same graph
// built with the torch.fx.Graph API (`[#users=N]` spelled `[num_users=N]`):
//   class Pair(NamedTuple):          # with _custom_fx_repr_fn printing
//       x: object; y: object         # f"Pair(x={_format_arg(self.x)}, ...)"
//   Plain = collections.namedtuple("Plain", ["a"])
//   g = torch.fx.Graph(); inp = g.placeholder("inp")
//   fn_ = g.call_function(fn, (Pair(inp, 1.2),), {"p2": Plain(inp)})
//   fn_1 = g.call_function(fn, ([Pair(3, inp)],), {"p2": Plain((inp,))})
//   g.output({0: fn_, "a": fn_1, 1.5: [Plain(inp)], True: Pair(inp, inp)})
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/ir/argument.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/support/error.h"

namespace fx {
namespace {

std::shared_ptr<const NamedTupleType> pair_type() {
  auto type = std::make_shared<NamedTupleType>();
  type->name = "__main__.Pair";
  type->fields = {"x", "y"};
  type->fields_repr = true;
  return type;
}

std::shared_ptr<const NamedTupleType> plain_type() {
  auto type = std::make_shared<NamedTupleType>();
  type->name = "__main__.Plain#7f00";
  type->fields = {"a"};
  return type;
}

TEST(NamedTupleArgument, IsATupleCarryingItsClass) {
  Argument p = Argument::named_tuple(pair_type(), {1, 2.5});
  EXPECT_TRUE(p.is_tuple());
  EXPECT_TRUE(p.is_sequence());
  ASSERT_NE(p.named_tuple_type(), nullptr);
  EXPECT_EQ(p.named_tuple_type()->name, "__main__.Pair");
  EXPECT_EQ(p.elements().size(), 2u);
  EXPECT_EQ(Argument::tuple({1, 2.5}).named_tuple_type(), nullptr);
  EXPECT_EQ(plain_type()->qualified_name(), "__main__.Plain");
  EXPECT_EQ(plain_type()->short_name(), "Plain");
}

TEST(NamedTupleArgument, ComparesByClassAndItemsAndCopies) {
  Argument p = Argument::named_tuple(pair_type(), {1, 2});
  Argument copy = p;
  EXPECT_EQ(copy, p);
  EXPECT_NE(p, Argument::tuple({1, 2}));
  EXPECT_NE(p, Argument::named_tuple(pair_type(), {1, 3}));
  Argument moved = std::move(copy);
  EXPECT_EQ(moved, p);
  copy = moved;
  EXPECT_EQ(copy.named_tuple_type()->fields, pair_type()->fields);
}

TEST(NamedTupleArgument, ItemsMustMatchTheFields) {
  EXPECT_THROW(Argument::named_tuple(pair_type(), {1}), FxError);
  EXPECT_THROW(Argument::named_tuple(nullptr, {}), FxError);
}

TEST(NamedTupleArgument, MapArgKeepsTheClass) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Argument p = Argument::named_tuple(pair_type(), {x, 1});
  Argument mapped = map_arg(p, [&](Node*) { return Argument(y); });
  ASSERT_NE(mapped.named_tuple_type(), nullptr);
  EXPECT_EQ(mapped.elements()[0].as_node(), y);
  int seen = 0;
  for_each_node(p, [&](Node* n) { seen += n == x; });
  EXPECT_EQ(seen, 1);
}

TEST(KeyedDictArgument, KeepsKeysThatAreNotStr) {
  Argument d = Argument::keyed_dict({{0, "a"}, {"k", 1}, {1.5, 2}, {true, 3}});
  EXPECT_TRUE(d.is_dict());
  ASSERT_NE(d.dict_keys(), nullptr);
  EXPECT_EQ((*d.dict_keys())[0], Argument(0));
  EXPECT_EQ(d.items()[1].first, "k");
  EXPECT_EQ(repr(d), "{0: 'a', 'k': 1, 1.5: 2, True: 3}");
  EXPECT_EQ(format_arg(d), "{0: a, k: 1, 1.5: 2, True: 3}");
  EXPECT_EQ(Argument(d), d);
  EXPECT_NE(d, Argument::keyed_dict({{1, "a"}, {"k", 1}, {1.5, 2}, {true, 3}}));
}

TEST(KeyedDictArgument, StrKeysOnlyMakeAPlainDict) {
  Argument d = Argument::keyed_dict({{"a", 1}});
  EXPECT_EQ(d.dict_keys(), nullptr);
  EXPECT_EQ(d, Argument::dict({{"a", 1}}));
  EXPECT_THROW(Argument::keyed_dict({{nullptr, 1}}), FxError);
  EXPECT_THROW(Argument::keyed_dict({{Argument::tuple({}), 1}}), FxError);
}

TEST(NamedTupleArgument, TextFormsAreTorchFxs) {
  Graph g;
  Node* x = g.placeholder("x");
  Argument pair = Argument::named_tuple(pair_type(), {x, 1.2});
  Argument plain = Argument::named_tuple(plain_type(), {x});
  // repr(): the class's __repr__ (what code and the output line show).
  EXPECT_EQ(repr(pair), "Pair(x=x, y=1.2)");
  EXPECT_EQ(repr(plain), "Plain(a=x)");
  EXPECT_EQ(str(plain), "Plain(a=x)");
  // _format_arg: _custom_fx_repr_fn's form, else the tuple's.
  EXPECT_EQ(format_arg(pair), "Pair(x=%x, y=1.2)");
  EXPECT_EQ(format_arg(plain), "(%x,)");
}

// The graph of the file comment.
class NamedTupleGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    Node* inp = g_.placeholder("inp");
    Node* fn = g_.call_function(
        "__main__.fn", {Argument::named_tuple(pair_type(), {inp, 1.2})},
        {{"p2", Argument::named_tuple(plain_type(), {inp})}});
    Node* fn_1 = g_.call_function(
        "__main__.fn",
        {Argument::list({Argument::named_tuple(pair_type(), {3, inp})})},
        {{"p2",
          Argument::named_tuple(plain_type(), {Argument::tuple({inp})})}});
    g_.output(Argument::keyed_dict(
        {{0, fn},
         {"a", fn_1},
         {1.5, Argument::list({Argument::named_tuple(plain_type(), {inp})})},
         {true, Argument::named_tuple(pair_type(), {inp, inp})}}));
  }
  Graph g_;
};

TEST_F(NamedTupleGraph, PrintsAsTorchFx) {
  EXPECT_EQ(g_.str(),
            "graph():\n"
            "    %inp : [num_users=3] = placeholder[target=inp]\n"
            "    %fn : [num_users=1] = call_function[target=__main__.fn](args "
            "= (Pair(x=%inp, y=1.2),), kwargs = {p2: (%inp,)})\n"
            "    %fn_1 : [num_users=1] = call_function[target=__main__.fn]("
            "args = ([Pair(x=3, y=%inp)],), kwargs = {p2: ((%inp,),)})\n"
            "    return {0: fn, 'a': fn_1, 1.5: [Plain(a=inp)], True: "
            "Pair(x=inp, y=inp)}");
}

TEST_F(NamedTupleGraph, GeneratesTorchFxsCode) {
  PythonCode code = g_.python_code("self");
  EXPECT_EQ(code.src,
            "\n\n\n"
            "def forward(self, inp):\n"
            "    fn = __main___fn(__main___Pair(inp, 1.2), p2 = "
            "__main___Plain(inp,))\n"
            "    fn_1 = __main___fn([Pair(x=3, y=inp)], p2 = "
            "__main___Plain((inp,),))\n"
            "    return {0: fn, 'a': fn_1, 1.5: [Plain(a=inp)], True: "
            "Pair(x=inp, y=inp)}\n"
            "    ");
  // Each class is one global, named from its qualified name; the global
  // stands for the class the argument names (the in-process suffix too).
  std::vector<std::pair<std::string, std::string>> extra(code.globals.end() - 3,
                                                         code.globals.end());
  EXPECT_EQ(extra[0], std::make_pair(std::string("__main___fn"),
                                     std::string("__main__.fn")));
  EXPECT_EQ(extra[1], std::make_pair(std::string("__main___Pair"),
                                     std::string("__main__.Pair")));
  EXPECT_EQ(extra[2], std::make_pair(std::string("__main___Plain"),
                                     std::string("__main__.Plain#7f00")));
}

}  // namespace
}  // namespace fx
