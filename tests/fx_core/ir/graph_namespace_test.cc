// fx::Namespace: torch.fx's _Namespace naming rules.
//
// Every expected name below is what torch.fx 1.13's
// `torch.fx.graph._Namespace().create_name(candidate, obj)` returns for the
// same sequence of calls (Python 3.11's keywords and builtins).
#include "fx_core/ir/graph_namespace.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fx {
namespace {

// Creates each candidate in turn (obj None) and returns the names.
std::vector<std::string> create_all(Namespace& ns,
                                    const std::vector<std::string>& cands) {
  std::vector<std::string> out;
  for (const std::string& c : cands) out.emplace_back(ns.create_name(c));
  return out;
}

using Names = std::vector<std::string>;

TEST(Namespace, AFreeCandidateIsUsedAsIs) {
  Namespace ns;
  EXPECT_EQ(ns.create_name("add"), "add");
  EXPECT_TRUE(ns.is_used("add"));
  EXPECT_FALSE(ns.is_used("add_1"));
}

TEST(Namespace, RepeatedCandidatesCountUp) {
  Namespace ns;
  EXPECT_EQ(create_all(ns, {"add", "add", "add"}),
            (Names{"add", "add_1", "add_2"}));
}

TEST(Namespace, ATrailingNumberIsTheCounter) {
  // torch.fx 1.13: add, add_1, add_2, add_3, add_7, add_8.
  Namespace ns;
  EXPECT_EQ(create_all(ns, {"add", "add", "add", "add_1", "add_7", "add_07"}),
            (Names{"add", "add_1", "add_2", "add_3", "add_7", "add_8"}));
}

TEST(Namespace, SuffixedAndPlainCandidatesShareTheCounter) {
  // torch.fx 1.13: x_1 x x_2 x_3 x_5 x_4 x_6.
  Namespace ns;
  EXPECT_EQ(create_all(ns, {"x_1", "x", "x", "x_1", "x_5", "x", "x"}),
            (Names{"x_1", "x", "x_2", "x_3", "x_5", "x_4", "x_6"}));
}

TEST(Namespace, ZeroSuffixIsKeptThenCountedFrom) {
  Namespace ns;
  EXPECT_EQ(create_all(ns, {"x_0", "x_0"}), (Names{"x_0", "x_1"}));
}

TEST(Namespace, IllegalCharacterRunsBecomeOneUnderscore) {
  Namespace ns;
  EXPECT_EQ(create_all(ns, {"my name!", "foo-bar..baz", "a.b.c", "a__b"}),
            (Names{"my_name_", "foo_bar_baz", "a_b_c", "a__b"}));
}

TEST(Namespace, NonAsciiCharactersAreSanitised) {
  // Python's regex sees "ünï" as three characters: _n_.
  Namespace ns;
  EXPECT_EQ(ns.create_name("\xc3\xbcn\xc3\xaf"), "_n_");
}

TEST(Namespace, ALeadingDigitGetsAnUnderscore) {
  Namespace ns;
  EXPECT_EQ(ns.create_name("9lives"), "_9lives");
}

TEST(Namespace, CaseIsKept) {
  // Snake-casing is the graph's job (_target_to_str), not the namespace's.
  Namespace ns;
  EXPECT_EQ(ns.create_name("camelCase"), "camelCase");
}

TEST(Namespace, KeywordsAreSkipped) {
  Namespace ns;
  EXPECT_EQ(create_all(ns, {"for", "None", "class", "lambda"}),
            (Names{"for_1", "None_1", "class_1", "lambda_1"}));
}

TEST(Namespace, BuiltinsAreSkipped) {
  Namespace ns;
  EXPECT_EQ(create_all(ns, {"sum", "input", "getattr", "len"}),
            (Names{"sum_1", "input_1", "getattr_1", "len_1"}));
}

TEST(Namespace, CodegenGlobalsAreSkipped) {
  Namespace ns;
  EXPECT_EQ(create_all(ns, {"torch", "inf", "device", "NoneType", "nan"}),
            (Names{"torch_1", "inf_1", "device_1", "NoneType_1", "nan_1"}));
}

TEST(Namespace, ABuiltinMayUseItsOwnName) {
  // create_name('len', builtins.len) -> len; ('len', None) -> len_1;
  // ('other', builtins.len) -> len (the object's name is remembered).
  Namespace ns;
  EXPECT_EQ(ns.create_name("len", "builtins.len"), "len");
  EXPECT_EQ(ns.create_name("len"), "len_1");
  EXPECT_EQ(ns.create_name("other", "builtins.len"), "len");
}

TEST(Namespace, ACodegenGlobalMayUseItsOwnName) {
  Namespace ns;
  EXPECT_EQ(ns.create_name("torch", "torch"), "torch");
  EXPECT_EQ(ns.create_name("torch"), "torch_1");
  EXPECT_EQ(ns.create_name("inf", "math.inf"), "inf");
}

TEST(Namespace, TheSameObjectAlwaysGetsTheSameName) {
  // ('math.sqrt', math.sqrt) -> math_sqrt; ('math.sqrt', None) ->
  // math_sqrt_1; ('x', math.sqrt) -> math_sqrt.
  Namespace ns;
  EXPECT_EQ(ns.create_name("math.sqrt", "math.sqrt"), "math_sqrt");
  EXPECT_EQ(ns.create_name("math.sqrt"), "math_sqrt_1");
  EXPECT_EQ(ns.create_name("x", "math.sqrt"), "math_sqrt");
}

TEST(Namespace, ManyRepeatsStayUnique) {
  Namespace ns;
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) names.emplace_back(ns.create_name("n"));
  EXPECT_EQ(names.front(), "n");
  EXPECT_EQ(names[1], "n_1");
  EXPECT_EQ(names.back(), "n_199");
  EXPECT_EQ(ns.create_name("n_50"), "n_200");
}

TEST(Namespace, NamesAreNulTerminated) {
  Namespace ns;
  std::string_view name = ns.create_name("add");
  EXPECT_EQ(name.data()[name.size()], '\0');
}

TEST(Namespace, AChildSeesItsParentsNamesWithoutChangingIt) {
  Namespace parent;
  EXPECT_EQ(parent.create_name("add"), "add");
  Namespace child(&parent);
  EXPECT_TRUE(child.is_used("add"));
  EXPECT_EQ(child.create_name("add"), "add_1");
  EXPECT_FALSE(parent.is_used("add_1"));
  EXPECT_EQ(parent.create_name("add"), "add_1");
}

// Graph::snapshot's copy: the same names used and counters, the names'
// storage shared (the original's views stay valid after it is gone), and
// names created afterwards on either side that side's only.
TEST(Namespace, ACopyContinuesAsTheOriginalAndOutlivesIt) {
  auto original = std::make_unique<Namespace>();
  std::string_view add = original->create_name("add");
  EXPECT_EQ(original->create_name("add"), "add_1");
  EXPECT_EQ(original->create_name("math.sqrt", "math.sqrt"), "math_sqrt");
  Namespace copy;
  std::string_view own = copy.create_name("mine");
  copy.copy_from(*original);
  EXPECT_TRUE(copy.is_used("add_1"));
  EXPECT_FALSE(copy.is_used("mine"));
  EXPECT_EQ(copy.claim("add"), add);  // the very view, not a copy
  EXPECT_EQ(copy.claim("add").data(), add.data());
  EXPECT_EQ(original->create_name("relu"), "relu");
  EXPECT_FALSE(copy.is_used("relu"));
  original.reset();
  EXPECT_EQ(add, "add");
  EXPECT_EQ(own, "mine");
  EXPECT_EQ(copy.create_name("add"), "add_2");
  EXPECT_EQ(copy.create_name("relu"), "relu");
  EXPECT_EQ(copy.create_name("x", "math.sqrt"), "math_sqrt");
  EXPECT_EQ(copy.create_name("math.sqrt"), "math_sqrt_1");
}

TEST(Namespace, ClassifiesKeywordsBuiltinsAndCodegenGlobals) {
  EXPECT_TRUE(Namespace::is_keyword("yield"));
  EXPECT_FALSE(Namespace::is_keyword("print"));
  EXPECT_TRUE(Namespace::is_builtin("print"));
  EXPECT_TRUE(Namespace::is_builtin("ExceptionGroup"));  // new in 3.11
  EXPECT_FALSE(Namespace::is_builtin("torch"));
  EXPECT_EQ(Namespace::custom_builtin_object("inf"), "math.inf");
  EXPECT_EQ(Namespace::custom_builtin_object("fx_pytree"), "torch.fx._pytree");
  EXPECT_EQ(Namespace::custom_builtin_object("relu"), "");
}

}  // namespace
}  // namespace fx
