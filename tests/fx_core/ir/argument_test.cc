// fx::Argument (torch.fx's Argument union) and its Python text forms.
//
// Every expected repr() / str() / _format_arg() string below is what
// torch.fx 1.13 (Python 3.11) prints for the same Python value.
#include "fx_core/ir/argument.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/support/error.h"

namespace fx {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// Two nodes to reference from arguments.
class ArgumentWithNodes : public ::testing::Test {
 protected:
  void SetUp() override {
    x_ = graph_.placeholder("x");
    y_ = graph_.placeholder("y");
  }
  Graph graph_;
  Node* x_ = nullptr;
  Node* y_ = nullptr;
};

// ------------------------------------------------------------------ values

TEST(Argument, DefaultIsNone) {
  Argument a;
  EXPECT_TRUE(a.is_none());
  EXPECT_EQ(a.kind(), Argument::Kind::kNone);
  EXPECT_TRUE(Argument(nullptr).is_none());
}

TEST(Argument, ScalarConstructorsPickThePythonKind) {
  EXPECT_EQ(Argument(true).kind(), Argument::Kind::kBool);
  EXPECT_EQ(Argument(3).kind(), Argument::Kind::kInt);
  EXPECT_EQ(Argument(int64_t{1} << 40).kind(), Argument::Kind::kInt);
  EXPECT_EQ(Argument(0.5).kind(), Argument::Kind::kFloat);
  EXPECT_EQ(Argument("s").kind(), Argument::Kind::kString);
  EXPECT_EQ(Argument(std::string("s")).kind(), Argument::Kind::kString);
  EXPECT_EQ(Argument(std::string_view("s")).kind(), Argument::Kind::kString);
}

TEST(Argument, AccessorsReturnThePayload) {
  EXPECT_TRUE(Argument(true).as_bool());
  EXPECT_EQ(Argument(int64_t{1} << 40).as_int(), int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(Argument(0.25).as_float(), 0.25);
  EXPECT_EQ(Argument("text").as_string(), "text");
  EXPECT_EQ(Argument::dtype("torch.float16").as_string(), "torch.float16");
}

TEST(Argument, AsFloatAcceptsAnIntAsPythonWould) {
  EXPECT_DOUBLE_EQ(Argument(3).as_float(), 3.0);
}

TEST(Argument, AccessorOfTheWrongKindThrowsNamingBothKinds) {
  try {
    Argument("s").as_int();
    FAIL() << "expected FxError";
  } catch (const FxError& e) {
    EXPECT_STREQ(e.what(), "expected an argument of type int but got str");
  }
  EXPECT_THROW(Argument(1).as_string(), FxError);
  EXPECT_THROW(Argument(1).as_node(), FxError);
  EXPECT_THROW(Argument(1).elements(), FxError);
  EXPECT_THROW(Argument(1).items(), FxError);
  EXPECT_THROW(Argument(1.0).as_bool(), FxError);
}

TEST(Argument, InitializerListMakesAList) {
  Argument a{1, "b", 2.5};
  ASSERT_TRUE(a.is_list());
  ASSERT_EQ(a.elements().size(), 3u);
  EXPECT_EQ(a.elements()[1].as_string(), "b");
}

TEST(Argument, TupleAndListAreSequencesButDiffer) {
  Argument list = Argument::list({1, 2});
  Argument tuple = Argument::tuple({1, 2});
  EXPECT_TRUE(list.is_sequence());
  EXPECT_TRUE(tuple.is_sequence());
  EXPECT_TRUE(tuple.is_tuple());
  EXPECT_NE(list, tuple);
}

TEST(Argument, SliceHoldsStartStopStep) {
  Argument s = Argument::slice(nullptr, 2, -1);
  ASSERT_TRUE(s.is_slice());
  ASSERT_EQ(s.elements().size(), 3u);
  EXPECT_TRUE(s.elements()[0].is_none());
  EXPECT_EQ(s.elements()[1].as_int(), 2);
  EXPECT_EQ(s.elements()[2].as_int(), -1);
}

TEST(Argument, TorchEnumKindsKeepTheirPythonSpelling) {
  EXPECT_TRUE(Argument::dtype("torch.float32").is_torch_enum());
  EXPECT_EQ(Argument::device("cuda:0").kind(), Argument::Kind::kDevice);
  EXPECT_EQ(Argument::memory_format("torch.channels_last").kind(),
            Argument::Kind::kMemoryFormat);
  EXPECT_EQ(Argument::layout("torch.strided").kind(), Argument::Kind::kLayout);
  EXPECT_FALSE(Argument("torch.float32").is_torch_enum());
  EXPECT_NE(Argument::dtype("torch.float32"), Argument("torch.float32"));
}

TEST(Argument, DictKeepsInsertionOrderAndFindsByKey) {
  Argument d = Argument::dict({{"b", 1}, {"a", 2}});
  ASSERT_EQ(d.items().size(), 2u);
  EXPECT_EQ(d.items()[0].first, "b");
  ASSERT_NE(d.find("a"), nullptr);
  EXPECT_EQ(d.find("a")->as_int(), 2);
  EXPECT_EQ(d.find("c"), nullptr);
}

TEST(Argument, SetItemReplacesInPlaceAndAppendsNewKeys) {
  ArgumentDict d = {{"a", 1}, {"b", 2}};
  set_item(d, "a", 10);
  set_item(d, "c", 3);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].first, "a");
  EXPECT_EQ(d[0].second.as_int(), 10);
  EXPECT_EQ(d[2].first, "c");
  EXPECT_EQ(find_item(d, "b")->as_int(), 2);
  EXPECT_EQ(find_item(d, "z"), nullptr);
}

TEST(Argument, CopyIsDeep) {
  Argument a = Argument::list({Argument::dict({{"k", "v"}}), 2});
  Argument b = a;
  b.mutable_elements()[0].mutable_items()[0].second = "changed";
  EXPECT_EQ(a.elements()[0].find("k")->as_string(), "v");
  EXPECT_NE(a, b);
}

// Copies share their payload until one is written (copy on write): a write
// through either side, at any depth and of any container kind, leaves the
// other as it was.
TEST(Argument, CopiesShareUntilWrittenThroughEitherSide) {
  auto type = std::make_shared<NamedTupleType>();
  type->name = "Pair";
  type->fields = {"x", "y"};
  Argument original = Argument::list(
      {Argument::named_tuple(type, {1, Argument::dict({{"k", "v"}})}),
       Argument::keyed_dict({{Argument(int64_t{3}), Argument("three")}})});
  const Argument pristine = Argument::list(
      {Argument::named_tuple(type, {1, Argument::dict({{"k", "v"}})}),
       Argument::keyed_dict({{Argument(int64_t{3}), Argument("three")}})});
  Argument copy = original;
  EXPECT_EQ(&copy.elements(), &original.elements());  // shared, not copied
  original.mutable_elements()[0]
      .mutable_elements()[1]
      .mutable_items()[0]
      .second = "written";
  original.mutable_elements()[1].mutable_items()[0].second = "drei";
  EXPECT_EQ(copy, pristine);
  EXPECT_NE(original, pristine);
  EXPECT_EQ(original.elements()[0].named_tuple_type(), type.get());
  ASSERT_NE(original.elements()[1].dict_keys(), nullptr);
  EXPECT_EQ(original.elements()[1].dict_keys()->at(0).as_int(), 3);
  Argument third = copy;
  third = Argument();  // releasing one sharer keeps the others' payload
  EXPECT_EQ(copy, pristine);
}

TEST(Argument, MoveLeavesTheSourceNone) {
  Argument a = Argument::list({1, 2});
  Argument b = std::move(a);
  EXPECT_TRUE(a.is_none());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b.elements().size(), 2u);
}

TEST(Argument, SelfAssignmentKeepsTheValue) {
  Argument a = Argument::tuple({"x", 1});
  Argument& alias = a;
  a = alias;
  EXPECT_EQ(a, Argument::tuple({"x", 1}));
}

TEST(Argument, EqualityIsStructural) {
  EXPECT_EQ(Argument::list({1, Argument::tuple({"a"})}),
            Argument::list({1, Argument::tuple({"a"})}));
  EXPECT_NE(Argument(1), Argument(1.0));
  EXPECT_NE(Argument(1), Argument(true));
  EXPECT_EQ(Argument::ellipsis(), Argument::ellipsis());
}

TEST(Argument, NanEqualsNanStructurally) {
  EXPECT_EQ(Argument(kNan), Argument(kNan));
}

TEST_F(ArgumentWithNodes, NodesCompareByIdentity) {
  EXPECT_EQ(Argument(x_), Argument(x_));
  EXPECT_NE(Argument(x_), Argument(y_));
  EXPECT_EQ(Argument(x_).as_node(), x_);
}

TEST(Argument, KindNamesArePythonTypeNames) {
  EXPECT_EQ(kind_name(Argument::Kind::kNone), "None");
  EXPECT_EQ(kind_name(Argument::Kind::kString), "str");
  EXPECT_EQ(kind_name(Argument::Kind::kNode), "Node");
  EXPECT_EQ(kind_name(Argument::Kind::kDtype), "torch.dtype");
  EXPECT_EQ(kind_name(Argument::Kind::kEllipsis), "ellipsis");
}

// ------------------------------------------------------------ traversal

TEST_F(ArgumentWithNodes, ForEachNodeVisitsDepthFirstInOrder) {
  // torch.fx's map_arg walks tuples, lists, dicts and slices.
  Argument a =
      Argument::tuple({y_, Argument::list({x_, Argument::dict({{"k", y_}})}),
                       Argument::slice(x_, nullptr, y_), 3});
  std::vector<Node*> seen;
  for_each_node(a, [&](Node* n) { seen.push_back(n); });
  EXPECT_EQ(seen, (std::vector<Node*>{y_, x_, y_, x_, y_}));
}

TEST_F(ArgumentWithNodes, MapArgReplacesNodesKeepingStructure) {
  Argument a = Argument::tuple(
      {x_, Argument::list({1, x_}), Argument::dict({{"k", y_}})});
  Argument mapped =
      map_arg(a, [&](Node* n) { return n == x_ ? Argument(y_) : Argument(); });
  EXPECT_EQ(mapped, Argument::tuple({y_, Argument::list({1, y_}),
                                     Argument::dict({{"k", nullptr}})}));
  // The original is untouched.
  EXPECT_EQ(a.elements()[0].as_node(), x_);
}

// ------------------------------------------------------ repr (code form)

TEST(PythonRepr, ScalarsMatchPython) {
  // torch.fx 1.13 / Python 3.11 repr() of each value.
  EXPECT_EQ(repr(Argument()), "None");
  EXPECT_EQ(repr(Argument(true)), "True");
  EXPECT_EQ(repr(Argument(false)), "False");
  EXPECT_EQ(repr(Argument(-3)), "-3");
  EXPECT_EQ(repr(Argument(int64_t{1} << 40)), "1099511627776");
}

TEST(PythonRepr, FloatsMatchPython) {
  // Python 3.11's repr(float).
  EXPECT_EQ(repr(Argument(0.5)), "0.5");
  EXPECT_EQ(repr(Argument(1e-05)), "1e-05");
  EXPECT_EQ(repr(Argument(0.0001)), "0.0001");
  EXPECT_EQ(repr(Argument(1e16)), "1e+16");
  EXPECT_EQ(repr(Argument(1e15)), "1000000000000000.0");
  EXPECT_EQ(repr(Argument(100.0)), "100.0");
  EXPECT_EQ(repr(Argument(0.1)), "0.1");
  EXPECT_EQ(repr(Argument(1.0 / 3)), "0.3333333333333333");
  EXPECT_EQ(repr(Argument(-2.5e-7)), "-2.5e-07");
  EXPECT_EQ(repr(Argument(0.0)), "0.0");
  EXPECT_EQ(repr(Argument(-0.0)), "-0.0");
}

TEST(PythonRepr, InfinityAndNanAreBareNames) {
  // torch.fx's code holds them bare (its globals define inf and nan).
  EXPECT_EQ(repr(Argument(kInf)), "inf");
  EXPECT_EQ(repr(Argument(-kInf)), "-inf");
  EXPECT_EQ(repr(Argument(kNan)), "nan");
}

TEST(PythonRepr, StringsPickQuotesAndEscapeAsPython) {
  EXPECT_EQ(repr(Argument("ab")), "'ab'");
  EXPECT_EQ(repr(Argument("it's")), "\"it's\"");
  EXPECT_EQ(repr(Argument("say \"hi\"")), "'say \"hi\"'");
  EXPECT_EQ(repr(Argument("it's \"x\"")), "'it\\'s \"x\"'");
  EXPECT_EQ(repr(Argument("a\nb\\")), "'a\\nb\\\\'");
  EXPECT_EQ(repr(Argument("tab\there")), "'tab\\there'");
  EXPECT_EQ(repr(Argument(std::string("\x01", 1))), "'\\x01'");
}

TEST_F(ArgumentWithNodes, ContainersMatchPython) {
  EXPECT_EQ(repr(Argument::list({x_, 1, "a"})), "[x, 1, 'a']");
  EXPECT_EQ(repr(Argument::tuple({x_, 2.0})), "(x, 2.0)");
  EXPECT_EQ(repr(Argument::tuple({1})), "(1,)");
  EXPECT_EQ(repr(Argument::tuple({})), "()");
  EXPECT_EQ(repr(Argument::list({})), "[]");
  EXPECT_EQ(repr(Argument::dict({{"k", x_}, {"v", "w"}})),
            "{'k': x, 'v': 'w'}");
  EXPECT_EQ(
      repr(Argument::list({Argument::tuple(
          {1, Argument::list(
                  {2, Argument::dict({{"a", Argument::tuple({x_})}})})})})),
      "[(1, [2, {'a': (x,)}])]");
}

TEST_F(ArgumentWithNodes, SliceAndEllipsisMatchPython) {
  EXPECT_EQ(repr(Argument::slice(nullptr, 2, nullptr)), "slice(None, 2, None)");
  EXPECT_EQ(repr(Argument::slice(x_, nullptr, -1)), "slice(x, None, -1)");
  EXPECT_EQ(repr(Argument::ellipsis()), "Ellipsis");
}

TEST(PythonRepr, TorchValuesMatchPython) {
  EXPECT_EQ(repr(Argument::dtype("torch.float32")), "torch.float32");
  EXPECT_EQ(repr(Argument::device("cpu")), "device(type='cpu')");
  EXPECT_EQ(repr(Argument::device("cuda:0")), "device(type='cuda', index=0)");
  EXPECT_EQ(repr(Argument::memory_format("torch.channels_last")),
            "torch.channels_last");
  EXPECT_EQ(repr(Argument::layout("torch.strided")), "torch.strided");
}

// ----------------------------------------------------------- str() form

TEST(PythonStr, TopLevelStringAndDeviceAreBare) {
  // Python's str(): what the graph text uses for outputs and defaults.
  EXPECT_EQ(str(Argument("a string")), "a string");
  EXPECT_EQ(str(Argument::device("cuda:1")), "cuda:1");
  EXPECT_EQ(str(Argument::device("cpu")), "cpu");
}

TEST_F(ArgumentWithNodes, StrOfAContainerUsesReprInside) {
  EXPECT_EQ(str(Argument::tuple({x_, "str", Argument::dict({{"a", y_}}),
                                 Argument::list({x_, y_}), 1.5})),
            "(x, 'str', {'a': y}, [x, y], 1.5)");
  EXPECT_EQ(str(Argument::tuple({1, "a"})), "(1, 'a')");
}

// ------------------------------------------ _format_arg (graph text form)

TEST_F(ArgumentWithNodes, FormatArgMarksNodesAndLeavesStringsBare) {
  // torch.fx's _format_arg.
  EXPECT_EQ(format_arg(Argument(x_)), "%x");
  EXPECT_EQ(format_arg(Argument::list({x_, 1, "a"})), "[%x, 1, a]");
  EXPECT_EQ(format_arg(Argument::tuple({x_, 2.0})), "(%x, 2.0)");
  EXPECT_EQ(format_arg(Argument::tuple({1})), "(1,)");
  EXPECT_EQ(format_arg(Argument::dict({{"k", x_}, {"v", "w"}})),
            "{k: %x, v: w}");
  EXPECT_EQ(format_arg(Argument("it's \"x\"")), "it's \"x\"");
}

TEST_F(ArgumentWithNodes, FormatArgPrintsSlicesAndTorchValuesWithStr) {
  EXPECT_EQ(format_arg(Argument::slice(x_, nullptr, -1)), "slice(x, None, -1)");
  EXPECT_EQ(format_arg(Argument::ellipsis()), "Ellipsis");
  EXPECT_EQ(format_arg(Argument::dtype("torch.float32")), "torch.float32");
  EXPECT_EQ(format_arg(Argument::device("cuda:0")), "cuda:0");
  EXPECT_EQ(format_arg(Argument(kInf)), "inf");
  EXPECT_EQ(format_arg(Argument(kNan)), "nan");
  EXPECT_EQ(
      format_arg(Argument::list({Argument::tuple(
          {1, Argument::list(
                  {2, Argument::dict({{"a", Argument::tuple({x_})}})})})})),
      "[(1, [2, {a: (%x,)}])]");
}

TEST(PythonIdentifier, FollowsStrIsIdentifier) {
  EXPECT_TRUE(is_python_identifier("conv1"));
  EXPECT_TRUE(is_python_identifier("_x"));
  EXPECT_FALSE(is_python_identifier("0"));
  EXPECT_FALSE(is_python_identifier("1a"));
  EXPECT_FALSE(is_python_identifier(""));
  EXPECT_FALSE(is_python_identifier("a-b"));
}

}  // namespace
}  // namespace fx
