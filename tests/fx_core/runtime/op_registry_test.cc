// OpRegistry: Python signatures parse and bind with Python's rules and
// messages, the registry is open to code outside fx_core, and the built-in
// kernels compute what Python and torch 1.13 compute: operator.* on numbers
// and sequences as Python does, on tensors as LibTorch does (with Python's
// type promotion), indexing, attributes, sizes, views and the seed topk path.
// Literal expected values are torch 1.13's / Python's results, as the
// comments say; "same as LibTorch" cases compute the reference with ATen.
#include "fx_core/runtime/op_registry.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"

namespace fx {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using Kwargs = std::vector<std::pair<std::string, c10::IValue>>;

// Runs a call_function target on runtime values, as a graph runs it: its
// hand-written entry or the ATen operator it names (resolve()).
c10::IValue call(std::string_view target, std::vector<c10::IValue> args,
                 const Kwargs& kwargs = {}) {
  const OpDef* def =
      OpRegistry::global().resolve(Opcode::kCallFunction, target);
  if (def == nullptr) throw FxError("no target " + std::string(target));
  return call_op(*def, std::move(args), kwargs);
}

c10::IValue call_method(std::string_view name, std::vector<c10::IValue> args,
                        const Kwargs& kwargs = {}) {
  const OpDef* def = OpRegistry::global().resolve(Opcode::kCallMethod, name);
  if (def == nullptr) throw FxError("no method " + std::string(name));
  return call_op(*def, std::move(args), kwargs);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const FxError& e) {
    return e.what();
  } catch (const c10::Error& e) {
    return e.what_without_backtrace();
  }
  return "(no error)";
}

// bind_call's error for a call with `num_args` positionals and `kwargs`.
std::string bind_error(std::string_view signature, size_t num_args,
                       std::vector<std::string_view> kwargs = {}) {
  OpSchema schema = OpSchema::parse(signature);
  std::vector<ParamSource> sources;
  std::string error;
  if (bind_call(schema, num_args, kwargs, &sources, &error)) return "(bound)";
  return error;
}

std::vector<int64_t> ints(const c10::IValue& v) {
  std::vector<int64_t> out;
  for (const c10::IValue& item : sequence_elements(v)) {
    out.push_back(item.toInt());
  }
  return out;
}

c10::IValue slice(c10::IValue start, c10::IValue stop, c10::IValue step = {}) {
  return make_slice(std::move(start), std::move(stop), std::move(step));
}

c10::IValue int_tuple(std::vector<int64_t> items) {
  return make_tuple(std::vector<c10::IValue>(items.begin(), items.end()));
}

// ============================================================ OpSchema

TEST(OpSchema, ParseReadsParameterKindsInOrder) {
  OpSchema s = OpSchema::parse("input, dim=None, keepdim=False, *, dtype=None");
  ASSERT_EQ(s.params().size(), 4u);
  EXPECT_EQ(s.params()[0].name, "input");
  EXPECT_EQ(s.params()[0].kind, OpParam::Kind::kPositional);
  EXPECT_FALSE(s.params()[0].has_default);
  EXPECT_EQ(s.params()[2].kind, OpParam::Kind::kPositional);
  EXPECT_TRUE(s.params()[2].has_default);
  EXPECT_EQ(s.params()[3].name, "dtype");
  EXPECT_EQ(s.params()[3].kind, OpParam::Kind::kKeywordOnly);
  EXPECT_EQ(s.index_of("keepdim"), 2);
  EXPECT_EQ(s.index_of("axis"), -1);
  EXPECT_EQ(s.text(), "input, dim=None, keepdim=False, *, dtype=None");
}

TEST(OpSchema, ParametersAfterStarArgsAreKeywordOnly) {
  OpSchema s = OpSchema::parse("self, *size, out, flag=True");
  ASSERT_EQ(s.params().size(), 4u);
  EXPECT_EQ(s.params()[1].name, "size");
  EXPECT_EQ(s.params()[1].kind, OpParam::Kind::kVarPositional);
  EXPECT_EQ(s.params()[2].kind, OpParam::Kind::kKeywordOnly);
  EXPECT_FALSE(s.params()[2].has_default);
  EXPECT_EQ(s.params()[3].kind, OpParam::Kind::kKeywordOnly);
}

TEST(OpSchema, ParseReadsDefaultsOfEveryLiteralKind) {
  OpSchema s = OpSchema::parse(
      "a=None, b=True, c=False, d=3, e=-2, f=1.5, g=1e-05, h='fro', "
      "i=\"mean\", j=(1, 2), k=[3, 4], l=(), m=(7,), n=torch.float32, "
      "o=torch.contiguous_format, p=torch.strided, q=-inf, r=((1, 2), 'x')");
  auto d = [&](std::string_view name) -> const c10::IValue& {
    const OpParam& p = s.params()[s.index_of(name)];
    EXPECT_TRUE(p.has_default) << name;
    return p.default_value;
  };
  EXPECT_TRUE(d("a").isNone());
  EXPECT_TRUE(d("b").isBool() && d("b").toBool());
  EXPECT_TRUE(d("c").isBool() && !d("c").toBool());
  EXPECT_TRUE(d("d").isInt());
  EXPECT_EQ(d("d").toInt(), 3);
  EXPECT_EQ(d("e").toInt(), -2);
  EXPECT_TRUE(d("f").isDouble());
  EXPECT_EQ(d("f").toDouble(), 1.5);
  EXPECT_EQ(d("g").toDouble(), 1e-05);
  EXPECT_EQ(d("h").toStringRef(), "fro");
  EXPECT_EQ(d("i").toStringRef(), "mean");
  EXPECT_TRUE(d("j").isTuple());
  EXPECT_EQ(ints(d("j")), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(d("k").isList());
  EXPECT_EQ(ints(d("k")), (std::vector<int64_t>{3, 4}));
  EXPECT_TRUE(d("l").isTuple());
  EXPECT_TRUE(d("l").toTupleRef().elements().empty());
  EXPECT_EQ(ints(d("m")), (std::vector<int64_t>{7}));
  // torch names are Ints holding the c10 enum, as TorchScript does.
  EXPECT_EQ(d("n").toInt(), static_cast<int64_t>(c10::ScalarType::Float));
  EXPECT_EQ(d("o").toInt(),
            static_cast<int64_t>(c10::MemoryFormat::Contiguous));
  EXPECT_EQ(d("p").toInt(), static_cast<int64_t>(c10::Layout::Strided));
  EXPECT_EQ(d("q").toDouble(), -std::numeric_limits<double>::infinity());
  const auto& r = d("r").toTupleRef().elements();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(ints(r[0]), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(r[1].toStringRef(), "x");
}

TEST(OpSchema, ARequiredKeywordOnlyParameterMayFollowDefaults) {
  // def f(a=1, *, b): is valid Python.
  OpSchema s = OpSchema::parse("a=1, *, b");
  EXPECT_EQ(s.params()[1].kind, OpParam::Kind::kKeywordOnly);
  EXPECT_FALSE(s.params()[1].has_default);
}

TEST(OpSchema, ParseRefusesANonDefaultPositionalAfterADefaultOne) {
  std::string msg = error_of([] { OpSchema::parse("a=1, b"); });
  EXPECT_THAT(msg, HasSubstr("signature 'a=1, b'"));
  EXPECT_THAT(msg, HasSubstr("'b'"));
}

TEST(OpSchema, ParseRefusesRepeatedNames) {
  EXPECT_THAT(error_of([] { OpSchema::parse("a, b, a"); }),
              HasSubstr("repeated name 'a'"));
}

TEST(OpSchema, ParseRefusesASecondStar) {
  EXPECT_THAT(error_of([] { OpSchema::parse("a, *, *rest"); }),
              HasSubstr("more than one *"));
}

TEST(OpSchema, ParseRefusesAnUnreadableDefault) {
  EXPECT_THAT(error_of([] { OpSchema::parse("a=foo"); }),
              HasSubstr("cannot read default value 'foo'"));
  EXPECT_THAT(error_of([] { OpSchema::parse("a=torch.nonsense"); }),
              HasSubstr("'torch.nonsense'"));
}

// ============================================================ bind_call

TEST(BindCall, PositionalsThenKeywordsThenDefaults) {
  OpSchema schema =
      OpSchema::parse("input, dim=None, keepdim=False, *, dtype=None");
  std::vector<ParamSource> sources;
  std::string error;
  ASSERT_TRUE(bind_call(schema, 2, {"dtype"}, &sources, &error)) << error;
  ASSERT_EQ(sources.size(), 4u);
  EXPECT_EQ(sources[0].kind, ParamSource::Kind::kArg);
  EXPECT_EQ(sources[0].index, 0u);
  EXPECT_EQ(sources[1].kind, ParamSource::Kind::kArg);
  EXPECT_EQ(sources[1].index, 1u);
  EXPECT_EQ(sources[2].kind, ParamSource::Kind::kDefault);
  EXPECT_EQ(sources[3].kind, ParamSource::Kind::kKwarg);
  EXPECT_EQ(sources[3].index, 0u);
}

TEST(BindCall, APositionalParameterMayBeGivenByKeyword) {
  OpSchema schema = OpSchema::parse("input, dim=None, keepdim=False");
  std::vector<ParamSource> sources;
  std::string error;
  ASSERT_TRUE(bind_call(schema, 0, {"keepdim", "input"}, &sources, &error))
      << error;
  EXPECT_EQ(sources[0].kind, ParamSource::Kind::kKwarg);
  EXPECT_EQ(sources[0].index, 1u);
  EXPECT_EQ(sources[1].kind, ParamSource::Kind::kDefault);
  EXPECT_EQ(sources[2].kind, ParamSource::Kind::kKwarg);
  EXPECT_EQ(sources[2].index, 0u);
}

// Python 3's messages: `def f(a, b)` called f(1, 2, 3) and so on.
TEST(BindCall, TooManyPositionalsIsPythonsMessage) {
  EXPECT_EQ(bind_error("a, b", 3),
            "takes 2 positional arguments but 3 were given");
}

TEST(BindCall, TooManyPositionalsWithDefaultsGivesTheRange) {
  // def f(a, b=1): f(1, 2, 3)
  EXPECT_EQ(bind_error("a, b=1", 3),
            "takes from 1 to 2 positional arguments but 3 were given");
}

TEST(BindCall, TooManyPositionalsUsesTheSingularForOne) {
  EXPECT_EQ(bind_error("a", 2), "takes 1 positional argument but 2 were given");
  EXPECT_EQ(bind_error("", 1), "takes 0 positional arguments but 1 was given");
}

TEST(BindCall, KeywordOnlyParametersCannotBeGivenByPosition) {
  // def g(a, *, k=1): g(1, 2)
  EXPECT_EQ(bind_error("a, *, k=1", 2),
            "takes 1 positional argument but 2 were given");
  // g(1, 2, k=3)
  EXPECT_EQ(bind_error("a, *, k=1", 2, {"k"}),
            "takes 1 positional argument but 2 positional arguments (and 1 "
            "keyword-only argument) were given");
}

TEST(BindCall, UnexpectedKeywordIsPythonsMessage) {
  EXPECT_EQ(bind_error("x, y=1", 1, {"foo"}),
            "got an unexpected keyword argument 'foo'");
}

TEST(BindCall, StarArgsCannotBeGivenByKeyword) {
  // def f(self, *size): f(t, size=3)
  EXPECT_EQ(bind_error("self, *size", 1, {"size"}),
            "got an unexpected keyword argument 'size'");
}

TEST(BindCall, KeywordErrorsComeBeforeTooManyPositionals) {
  // def h(a): h(1, 2, foo=3) and h(1, 2, a=3), as CPython reports them.
  EXPECT_EQ(bind_error("a", 2, {"foo"}),
            "got an unexpected keyword argument 'foo'");
  EXPECT_EQ(bind_error("a", 2, {"a"}), "got multiple values for argument 'a'");
}

TEST(BindCall, MultipleValuesIsPythonsMessage) {
  EXPECT_EQ(bind_error("x, y", 1, {"x"}),
            "got multiple values for argument 'x'");
}

TEST(BindCall, MissingArgumentIsNamed) {
  EXPECT_EQ(bind_error("x, y", 0, {"y"}), "missing a required argument: 'x'");
  EXPECT_EQ(bind_error("x, *, k", 1), "missing a required argument: 'k'");
}

TEST(BindCall, StarArgsCollectsTheRemainingPositionals) {
  OpSchema schema = OpSchema::parse("self, *size, out=None");
  std::vector<ParamSource> sources;
  std::string error;
  ASSERT_TRUE(bind_call(schema, 3, {"out"}, &sources, &error)) << error;
  EXPECT_EQ(sources[1].kind, ParamSource::Kind::kVarArgs);
  EXPECT_EQ(sources[1].index, 1u);
  EXPECT_EQ(sources[1].count, 2u);
  EXPECT_EQ(sources[2].kind, ParamSource::Kind::kKwarg);
}

TEST(BindValues, StarArgsBecomeATupleAndDefaultsAreFilledIn) {
  OpSchema schema = OpSchema::parse("self, *size, scale=1.5, *, name='n'");
  std::vector<c10::IValue> values;
  std::string error;
  ASSERT_TRUE(bind_values(schema, {at::ones({1}), int64_t{2}, int64_t{-1}},
                          {{"name", std::string("m")}}, &values, &error))
      << error;
  ASSERT_EQ(values.size(), 4u);
  EXPECT_TRUE(values[0].isTensor());
  EXPECT_TRUE(values[1].isTuple());
  EXPECT_EQ(ints(values[1]), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(values[2].toDouble(), 1.5);
  EXPECT_EQ(values[3].toStringRef(), "m");
}

TEST(OpSchema, StarStarKwargsCollectsKeywordsAndMustComeLast) {
  OpSchema schema = OpSchema::parse("x, *args, **kwargs");
  ASSERT_EQ(schema.params().size(), 3u);
  EXPECT_EQ(schema.params()[2].kind, OpParam::Kind::kVarKeyword);
  EXPECT_EQ(schema.params()[2].name, "kwargs");
  EXPECT_THROW(OpSchema::parse("**kwargs, y"), FxError);
}

TEST(BindCall, StarStarKwargsTakesKeywordsNoParameterNames) {
  OpSchema schema = OpSchema::parse("x, **kwargs");
  std::vector<ParamSource> sources;
  std::string error;
  ASSERT_TRUE(bind_call(schema, 1, {"x2", "dim"}, &sources, &error)) << error;
  EXPECT_EQ(sources[1].kind, ParamSource::Kind::kVarKwargs);
  // A named parameter still takes its own keyword.
  ASSERT_TRUE(bind_call(schema, 0, {"x", "dim"}, &sources, &error)) << error;
  EXPECT_EQ(sources[0].kind, ParamSource::Kind::kKwarg);
}

TEST(BindValues, StarStarKwargsBecomeADictInCallOrder) {
  OpSchema schema = OpSchema::parse("*args, **kwargs");
  std::vector<c10::IValue> values;
  std::string error;
  ASSERT_TRUE(bind_values(schema, {int64_t{1}},
                          {{"b", int64_t{2}}, {"a", int64_t{3}}}, &values,
                          &error))
      << error;
  c10::impl::GenericDict dict = values[1].toGenericDict();
  ASSERT_EQ(dict.size(), 2u);
  EXPECT_EQ(dict.begin()->key().toStringRef(), "b");
  EXPECT_EQ(dict.at("a").toInt(), 3);
}

TEST(BindNodeArguments, StarStarKwargsBecomeADictArgument) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* n = g.call_function("torch.std", {x}, {{"dim", Argument(int64_t{1})}});
  OpSchema schema = OpSchema::parse("*args, **kwargs");
  std::vector<std::optional<Argument>> bound;
  std::string error;
  ASSERT_TRUE(
      bind_node_arguments(schema, n->args(), n->kwargs(), &bound, &error))
      << error;
  ASSERT_TRUE(bound[1].has_value());
  ASSERT_TRUE(bound[1]->is_dict());
  EXPECT_EQ(bound[1]->items().size(), 1u);
}

TEST(BindValues, NoExtraPositionalsMakeAnEmptyTuple) {
  OpSchema schema = OpSchema::parse("*tensors");
  std::vector<c10::IValue> values;
  std::string error;
  ASSERT_TRUE(bind_values(schema, {}, {}, &values, &error)) << error;
  EXPECT_TRUE(values[0].isTuple());
  EXPECT_TRUE(values[0].toTupleRef().elements().empty());
}

TEST(CallOp, BindingErrorNamesTheTarget) {
  EXPECT_EQ(error_of([] {
              call("torch.sum", {at::ones({2})}, {{"axis", int64_t{0}}});
            }),
            "torch.sum() got an unexpected keyword argument 'axis'");
}

TEST(OpArgs, WrongTypeNamesTheParameterAndBothTypes) {
  EXPECT_EQ(error_of([] { call("torch.relu", {int64_t{3}}); }),
            "argument 'input' must be Tensor, not int");
}

// A graph may hold a dtype or a memory format as its enumerator's int, as
// TorchScript does; an int naming none is refused by name (Python refuses
// an int there at all: torch.sum(x, dtype=100) is a TypeError). Before,
// it was cast unchecked: x.to(100) terminated the process, torch.zeros(3,
// dtype=-1) was a segfault, and 263 ran as torch.float64 (263 mod 256 is
// 7), found by tests/fuzz/python_conversions.py (seed 1612: x.to(7,
// 2**63 - 1)).
const std::vector<int64_t> kIntsNamingNoDtype = {
    100,
    -1,
    263,
    23,
    std::numeric_limits<int64_t>::max(),
    std::numeric_limits<int64_t>::min()};

TEST(OpArgs, AnIntNamingNoDtypeIsRefusedByName) {
  for (int64_t bad : kIntsNamingNoDtype) {
    EXPECT_EQ(error_of([&] {
                call("torch.sum", {at::ones({2})}, {{"dtype", bad}});
              }),
              "argument 'dtype' must be a torch.dtype, not the int " +
                  std::to_string(bad) + ", which names none");
  }
  // torch.float64's own int still names it.
  EXPECT_EQ(call("torch.sum", {at::ones({2})}, {{"dtype", int64_t{7}}})
                .toTensor()
                .scalar_type(),
            at::kDouble);
}

TEST(OpArgs, AnIntNamingNoMemoryFormatIsRefusedByName) {
  for (int64_t bad : {int64_t{4}, int64_t{-1}, int64_t{258}}) {
    EXPECT_EQ(
        error_of([&] {
          call_method("contiguous", {at::ones({2})}, {{"memory_format", bad}});
        }),
        "argument 'memory_format' must be a torch.memory_format, not "
        "the int " +
            std::to_string(bad) + ", which names none");
  }
  at::Tensor nhwc = call_method("contiguous", {at::ones({1, 2, 3, 4})},
                                {{"memory_format", int64_t{2}}})
                        .toTensor();
  EXPECT_TRUE(nhwc.is_contiguous(at::MemoryFormat::ChannelsLast));
}

TEST(TensorTo, AnIntNamingNoDtypeOrASecondDtypeIsRefused) {
  at::Tensor x = at::ones({2, 3});
  for (int64_t bad : kIntsNamingNoDtype) {
    EXPECT_EQ(error_of([&] {
                call_method("to", {x, bad});
              }),
              "to() received an invalid combination of arguments: the int " +
                  std::to_string(bad) + " names no dtype");
  }
  EXPECT_EQ(
      error_of([&] {
        call_method("to", {x, int64_t{7}, std::numeric_limits<int64_t>::max()});
      }),
      "to() received an invalid combination of arguments: a second "
      "dtype (9223372036854775807); Python's overloads take one");
  EXPECT_EQ(call_method("to", {x, int64_t{7}}).toTensor().scalar_type(),
            at::kDouble);
}

// An ATen operator's ScalarType, Layout and MemoryFormat parameters accept
// only ints that name one: no overload takes another, so the call is
// refused with Python's message before LibTorch casts it.
TEST(AtenBinding, AnIntNamingNoEnumeratorMatchesNoOverload) {
  for (int64_t bad : kIntsNamingNoDtype) {
    EXPECT_THAT(error_of([&] {
                  call("torch.zeros", {int64_t{3}}, {{"dtype", bad}});
                }),
                HasSubstr("zeros() received an invalid combination of "
                          "arguments - got (int, dtype=int)"));
  }
  EXPECT_THAT(error_of([] {
                call("torch.zeros", {int64_t{3}}, {{"layout", int64_t{99}}});
              }),
              HasSubstr("zeros() received an invalid combination"));
  EXPECT_THAT(
      error_of([] {
        call("torch.empty", {int64_t{3}}, {{"memory_format", int64_t{-7}}});
      }),
      HasSubstr("empty() received an invalid combination"));
  EXPECT_EQ(call("torch.zeros", {int64_t{3}}, {{"dtype", int64_t{7}}})
                .toTensor()
                .scalar_type(),
            at::kDouble);
}

// ========================================================== OpRegistry

TEST(OpRegistry, AddThenFindReturnsTheEntry) {
  OpRegistry registry;
  registry.add(
      Opcode::kCallFunction, "vendor.double", "x, *, times=2",
      [](OpArgs& a) -> c10::IValue { return a.to_int(0) * a.to_int(1); },
      "({x} * {times})");
  const OpDef* def = registry.find(Opcode::kCallFunction, "vendor.double");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->target, "vendor.double");
  EXPECT_EQ(def->op, Opcode::kCallFunction);
  EXPECT_EQ(def->cpp, "({x} * {times})");
  EXPECT_EQ(def->schema.params().size(), 2u);
  EXPECT_EQ(call_op(*def, {int64_t{21}}, {}).toInt(), 42);
  EXPECT_EQ(call_op(*def, {int64_t{5}}, {{"times", int64_t{3}}}).toInt(), 15);
}

TEST(OpRegistry, FunctionsAndMethodsAreSeparateNamespaces) {
  OpRegistry registry;
  registry.add(Opcode::kCallMethod, "twice", "self",
               [](OpArgs& a) -> c10::IValue { return a.to_int(0) * 2; });
  EXPECT_NE(registry.find(Opcode::kCallMethod, "twice"), nullptr);
  EXPECT_EQ(registry.find(Opcode::kCallFunction, "twice"), nullptr);
  EXPECT_EQ(registry.find(Opcode::kCallMethod, "thrice"), nullptr);
}

TEST(OpRegistry, AddRefusesOtherOpcodesAndMissingKernels) {
  OpRegistry registry;
  auto kernel = [](OpArgs&) -> c10::IValue { return {}; };
  EXPECT_THAT(error_of([&] {
                registry.add(Opcode::kCallModule, "m", "input", kernel);
              }),
              HasSubstr("only call_function and call_method"));
  EXPECT_THAT(error_of([&] {
                registry.add(Opcode::kCallFunction, "f", "x", OpKernel());
              }),
              HasSubstr("has no kernel"));
  EXPECT_THAT(error_of([&] {
                registry.add(Opcode::kCallFunction, "f", "x=1, y", kernel);
              }),
              HasSubstr("signature 'x=1, y'"));
  EXPECT_EQ(registry.find(Opcode::kCallFunction, "f"), nullptr);
}

TEST(OpRegistry, ReplacingAnEntryKeepsTheOldOneValid) {
  OpRegistry registry;
  const OpDef& first =
      registry.add(Opcode::kCallFunction, "vendor.v", "x",
                   [](OpArgs&) -> c10::IValue { return int64_t{1}; });
  registry.add(Opcode::kCallFunction, "vendor.v", "x",
               [](OpArgs&) -> c10::IValue { return int64_t{2}; });
  const OpDef* now = registry.find(Opcode::kCallFunction, "vendor.v");
  ASSERT_NE(now, &first);
  EXPECT_EQ(call_op(*now, {int64_t{0}}, {}).toInt(), 2);
  EXPECT_EQ(call_op(first, {int64_t{0}}, {}).toInt(), 1);
}

TEST(OpRegistry, TargetsAreSorted) {
  OpRegistry registry;
  auto kernel = [](OpArgs&) -> c10::IValue { return {}; };
  registry.add(Opcode::kCallFunction, "b.f", "x", kernel);
  registry.add(Opcode::kCallFunction, "a.f", "x", kernel);
  registry.add(Opcode::kCallMethod, "m", "self", kernel);
  EXPECT_EQ(registry.targets(Opcode::kCallFunction),
            (std::vector<std::string>{"a.f", "b.f"}));
  EXPECT_EQ(registry.targets(Opcode::kCallMethod),
            (std::vector<std::string>{"m"}));
}

TEST(OpRegistry, GlobalHoldsTheBuiltins) {
  OpRegistry& r = OpRegistry::global();
  for (const char* f :
       {"torch.relu", "torch.topk", "operator.add", "operator.getitem",
        "builtins.getattr", "torch.nn.functional.linear"}) {
    EXPECT_NE(r.find(Opcode::kCallFunction, f), nullptr) << f;
  }
  for (const char* m : {"view", "size", "relu", "clamp"}) {
    EXPECT_NE(r.find(Opcode::kCallMethod, m), nullptr) << m;
  }
}

TEST(OpRegistry, CodeOutsideFxCoreAddsATargetThatAGraphModuleRuns) {
  OpRegistry::global().add(Opcode::kCallFunction, "vendor_test.scale_add",
                           "x, y, *, alpha=1.0", [](OpArgs& a) -> c10::IValue {
                             return a.tensor(0) + a.to_double(2) * a.tensor(1);
                           });
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* s = g->call_function("vendor_test.scale_add", {x, y},
                             {{"alpha", Argument(0.5)}});
  g->output(s);
  torch::nn::Module root;
  GraphModule gm(root, std::move(g));
  ASSERT_TRUE(gm.check_executable().ok()) << gm.check_executable().message();
  at::Tensor a = torch::rand({3}), b = torch::rand({3});
  EXPECT_TRUE(at::allclose(gm(a, b).toTensor(), a + 0.5 * b));
}

TEST(OpRegistry, AnExceptionFromAnAddedKernelNamesTheNodeInForward) {
  OpRegistry::global().add(Opcode::kCallFunction, "vendor_test.fails", "x",
                           [](OpArgs&) -> c10::IValue {
                             throw std::runtime_error("vendor kernel failed");
                           });
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  g->output(g->call_function("vendor_test.fails", {x}));
  torch::nn::Module root;
  GraphModule gm(root, std::move(g));
  std::string msg = error_of([&] { gm(at::ones({1})); });
  EXPECT_THAT(msg, HasSubstr("while running node 'fails'"));
  EXPECT_THAT(msg, HasSubstr("vendor kernel failed"));
}

// ================================================= operator.* on numbers

TEST(PythonOperators, FloorDivOfIntsRoundsTowardNegativeInfinity) {
  c10::IValue q = call("operator.floordiv", {int64_t{7}, int64_t{-2}});
  ASSERT_TRUE(q.isInt());
  EXPECT_EQ(q.toInt(), -4);  // Python: 7 // -2 == -4
  EXPECT_EQ(call("operator.floordiv", {int64_t{-7}, int64_t{2}}).toInt(), -4);
  EXPECT_EQ(call("operator.floordiv", {int64_t{7}, int64_t{2}}).toInt(), 3);
}

TEST(PythonOperators, ModOfIntsTakesTheSignOfTheDivisor) {
  EXPECT_EQ(call("operator.mod", {int64_t{-7}, int64_t{3}}).toInt(), 2);
  EXPECT_EQ(call("operator.mod", {int64_t{7}, int64_t{-3}}).toInt(), -2);
}

TEST(PythonOperators, TrueDivOfIntsIsAFloat) {
  c10::IValue a = call("operator.truediv", {int64_t{7}, int64_t{2}});
  ASSERT_TRUE(a.isDouble());
  EXPECT_EQ(a.toDouble(), 3.5);
  c10::IValue b = call("operator.truediv", {int64_t{4}, int64_t{2}});
  ASSERT_TRUE(b.isDouble());  // Python: 4 / 2 == 2.0
  EXPECT_EQ(b.toDouble(), 2.0);
}

TEST(PythonOperators, IntPowerWithANegativeExponentIsAFloat) {
  c10::IValue a = call("operator.pow", {int64_t{2}, int64_t{-1}});
  ASSERT_TRUE(a.isDouble());
  EXPECT_EQ(a.toDouble(), 0.5);
  c10::IValue b = call("operator.pow", {int64_t{2}, int64_t{10}});
  ASSERT_TRUE(b.isInt());
  EXPECT_EQ(b.toInt(), 1024);
}

TEST(PythonOperators, FloatFloorDivAndModFollowPython) {
  // Python: 1 // 0.1 == 9.0 and 1 % 0.1 == 0.09999999999999995 (not
  // floor(1 / 0.1) == 10.0).
  c10::IValue q = call("operator.floordiv", {int64_t{1}, 0.1});
  ASSERT_TRUE(q.isDouble());
  EXPECT_EQ(q.toDouble(), 9.0);
  EXPECT_EQ(call("operator.mod", {int64_t{1}, 0.1}).toDouble(),
            0.09999999999999995);
  EXPECT_EQ(call("operator.floordiv", {-7.5, int64_t{2}}).toDouble(), -4.0);
  EXPECT_EQ(call("operator.mod", {7.5, int64_t{-2}}).toDouble(), -0.5);
}

TEST(PythonOperators, DivisionByZeroRaisesPythonsMessages) {
  EXPECT_THAT(error_of([] {
                call("operator.truediv", {int64_t{1}, int64_t{0}});
              }),
              HasSubstr("division by zero"));
  EXPECT_THAT(error_of([] {
                call("operator.floordiv", {int64_t{1}, int64_t{0}});
              }),
              HasSubstr("integer division or modulo by zero"));
  EXPECT_THAT(error_of([] {
                call("operator.floordiv", {1.0, int64_t{0}});
              }),
              HasSubstr("float floor division by zero"));
  EXPECT_THAT(error_of([] {
                call("operator.mod", {1.0, int64_t{0}});
              }),
              HasSubstr("float modulo"));
  EXPECT_THAT(error_of([] {
                call("operator.pow", {int64_t{0}, int64_t{-1}});
              }),
              HasSubstr("0.0 cannot be raised to a negative power"));
}

TEST(PythonOperators, ComparisonsGiveBool) {
  c10::IValue lt = call("operator.lt", {int64_t{1}, int64_t{2}});
  ASSERT_TRUE(lt.isBool());
  EXPECT_TRUE(lt.toBool());
  c10::IValue eq = call("operator.eq", {int64_t{1}, 1.0});
  ASSERT_TRUE(eq.isBool());
  EXPECT_TRUE(eq.toBool());  // Python: 1 == 1.0
  EXPECT_FALSE(call("operator.ge", {int64_t{2}, 2.5}).toBool());
  EXPECT_TRUE(call("operator.ne", {int64_t{2}, int64_t{3}}).toBool());
}

TEST(PythonOperators, BoolArithmeticIsInt) {
  c10::IValue two = call("operator.add", {true, true});
  ASSERT_TRUE(two.isInt());  // Python: True + True == 2
  EXPECT_EQ(two.toInt(), 2);
}

TEST(PythonOperators, AddConcatenatesTuplesAndLists) {
  c10::IValue t = call("operator.add", {int_tuple({1, 2}), int_tuple({3})});
  ASSERT_TRUE(t.isTuple());
  EXPECT_EQ(ints(t), (std::vector<int64_t>{1, 2, 3}));
  c10::IValue l = call("operator.add", {make_list({int64_t{1}, int64_t{2}}),
                                        make_list({int64_t{3}})});
  ASSERT_TRUE(l.isList());
  EXPECT_EQ(ints(l), (std::vector<int64_t>{1, 2, 3}));
}

TEST(PythonOperators, AddingATupleAndAListIsAnError) {
  EXPECT_THAT(error_of([] {
                call("operator.add", {int_tuple({1}), make_list({int64_t{3}})});
              }),
              // Python 3.11: (1,) + [3]
              HasSubstr("TypeError: can only concatenate tuple (not \"list\") "
                        "to tuple"));
}

TEST(PythonOperators, MulRepeatsASequenceFromEitherSide) {
  c10::IValue l = call("operator.mul", {make_list({int64_t{1}}), int64_t{3}});
  ASSERT_TRUE(l.isList());
  EXPECT_EQ(ints(l), (std::vector<int64_t>{1, 1, 1}));  // [1] * 3
  EXPECT_EQ(ints(call("operator.mul", {int64_t{3}, make_list({int64_t{1}})})),
            (std::vector<int64_t>{1, 1, 1}));
  c10::IValue t = call("operator.mul", {int_tuple({1, 2}), int64_t{2}});
  ASSERT_TRUE(t.isTuple());
  EXPECT_EQ(ints(t), (std::vector<int64_t>{1, 2, 1, 2}));
}

TEST(PythonOperators, ARepeatTooLargeForMemoryFailsAtOnceWithItsSize) {
  // Python 3.11: [1, 2] * 2**62 raises MemoryError before allocating; the
  // fuzzers' [[x]] * (2**31 - 1) grew for three minutes before this check.
  const int64_t n = int64_t{1} << 62;
  for (const char* op : {"operator.mul", "operator.imul"}) {
    EXPECT_THAT(error_of([&] {
                  call(op, {make_list({int64_t{1}, int64_t{2}}), n});
                }),
                AllOf(HasSubstr("MemoryError"),
                      HasSubstr("length 2 repeated 4611686018427387904 times")))
        << op;
  }
  EXPECT_THAT(error_of([&] {
                call("operator.mul", {n, int_tuple({1})});
              }),
              HasSubstr("length 1 repeated"));
  // [1] * -3 == [] and [] * 2**62 == [] (nothing to allocate).
  EXPECT_TRUE(ints(call("operator.mul", {make_list({int64_t{1}}), int64_t{-3}}))
                  .empty());
  EXPECT_TRUE(ints(call("operator.mul", {int_tuple({}), n})).empty());
}

// ================================================= operator.* on tensors

TEST(TensorOperators, IntTensorPlusFloatPromotesToTheDefaultFloat) {
  at::Tensor t = at::tensor({1, 2, -3}, at::kLong);
  at::Tensor r = call("operator.add", {t, 2.5}).toTensor();
  // torch 1.13: torch.tensor([1, 2, -3]) + 2.5 == tensor([3.5, 4.5, -0.5]).
  EXPECT_EQ(r.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(r, at::tensor({3.5f, 4.5f, -0.5f})));
  EXPECT_TRUE(at::equal(r, at::add(t, 2.5)));
}

TEST(TensorOperators, NumberMinusTensorIsRsub) {
  at::Tensor t = at::tensor({1, 2, -3}, at::kLong);
  at::Tensor r = call("operator.sub", {int64_t{2}, t}).toTensor();
  EXPECT_EQ(r.scalar_type(), at::kLong);
  EXPECT_TRUE(at::equal(r, at::rsub(t, 2)));
  at::Tensor f = call("operator.sub", {2.5, t}).toTensor();
  // torch 1.13: 2.5 - torch.tensor([1, 2, -3]) == tensor([1.5, 0.5, 5.5]).
  EXPECT_EQ(f.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(f, at::tensor({1.5f, 0.5f, 5.5f})));
}

TEST(TensorOperators, TrueDivOfIntTensorsIsFloat) {
  at::Tensor t = at::tensor({1, 2, -3}, at::kLong);
  at::Tensor r = call("operator.truediv", {t, at::tensor({2, 2, 2}, at::kLong)})
                     .toTensor();
  EXPECT_EQ(r.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(r, at::tensor({0.5f, 1.0f, -1.5f})));
}

TEST(TensorOperators, FloorDivAndModOfTensorsRoundDown) {
  at::Tensor t = at::tensor({1, 2, -3}, at::kLong);
  // torch 1.13: t // 2 == tensor([0, 1, -2]), t % 2 == tensor([1, 0, 1]).
  at::Tensor q = call("operator.floordiv", {t, int64_t{2}}).toTensor();
  EXPECT_EQ(q.scalar_type(), at::kLong);
  EXPECT_TRUE(at::equal(q, at::tensor({0, 1, -2}, at::kLong)));
  EXPECT_TRUE(at::equal(call("operator.mod", {t, int64_t{2}}).toTensor(),
                        at::tensor({1, 0, 1}, at::kLong)));
}

TEST(TensorOperators, NumberDividedByTensorIsReciprocalTimesNumber) {
  // Tensor.__rtruediv__ in torch 1.13 is `self.reciprocal() * other`, which
  // differs from a true division in the last bit for some inputs.
  at::Tensor x = torch::randn({1000});
  at::Tensor r = call("operator.truediv", {3.0, x}).toTensor();
  EXPECT_TRUE(at::equal(r, at::reciprocal(x) * 3.0));
  at::Tensor i = at::tensor({3, 7, -6}, at::kLong);
  at::Tensor ri = call("operator.truediv", {int64_t{7}, i}).toTensor();
  EXPECT_EQ(ri.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(ri, at::reciprocal(i) * 7));
}

TEST(TensorOperators, NumberPowerTensorPromotesLikeTorch) {
  at::Tensor t = at::tensor({1, 2, 3}, at::kLong);
  // torch 1.13: 2 ** t == tensor([2, 4, 8]); 2.5 ** t is float32.
  at::Tensor a = call("operator.pow", {int64_t{2}, t}).toTensor();
  EXPECT_EQ(a.scalar_type(), at::kLong);
  EXPECT_TRUE(at::equal(a, at::tensor({2, 4, 8}, at::kLong)));
  at::Tensor b = call("operator.pow", {2.5, t}).toTensor();
  EXPECT_EQ(b.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::allclose(b, at::tensor({2.5f, 6.25f, 15.625f})));
}

TEST(TensorOperators, ComparingAnIntTensorWithAFloatPromotes) {
  at::Tensor t = at::tensor({1, 2, -3}, at::kLong);
  // torch 1.13: t == 2.5 is all False; torch.lt(t, 2.5) all True;
  // t.gt(1.5) == tensor([False, True, False]).
  at::Tensor none = at::zeros({3}, at::kBool);
  at::Tensor all = at::ones({3}, at::kBool);
  at::Tensor middle = at::tensor({0, 1, 0}).to(at::kBool);
  EXPECT_TRUE(at::equal(call("operator.eq", {t, 2.5}).toTensor(), none));
  EXPECT_TRUE(at::equal(call("torch.eq", {t, 2.5}).toTensor(), none));
  EXPECT_TRUE(at::equal(call("torch.lt", {t, 2.5}).toTensor(), all));
  EXPECT_TRUE(at::equal(call_method("gt", {t, 1.5}).toTensor(), middle));
  EXPECT_TRUE(at::equal(call_method("ge", {t, 1.5}).toTensor(), middle));
}

TEST(TensorOperators, InPlaceMulOfAnIntTensorByAFloatIsRefused) {
  // torch 1.13: torch.tensor([1, 2]).mul_(0.5) raises "result type Float
  // can't be cast to the desired output type Long".
  at::Tensor t = at::tensor({1, 2}, at::kLong);
  EXPECT_THAT(error_of([&] {
                call_method("mul_", {t, 0.5});
              }),
              HasSubstr("can't be cast to the desired output type Long"));
  EXPECT_TRUE(at::equal(t, at::tensor({1, 2}, at::kLong)));
  at::Tensor f = at::tensor({1.0f, 2.0f});
  call_method("add_", {f, int64_t{1}});
  EXPECT_TRUE(at::equal(f, at::tensor({2.0f, 3.0f})));
}

// F.elu(x, inplace=True) and its siblings write into x and return it, as
// Python's in-place variants do; without inplace x is left alone.
TEST(Functional, InplaceActivationsWriteIntoTheirInput) {
  for (const char* name : {"elu", "celu", "selu", "leaky_relu", "hardtanh",
                           "relu6", "_threshold"}) {
    std::string target = std::string("torch.nn.functional.") + name;
    at::Tensor x = at::randn({3, 4});
    at::Tensor original = x.clone();
    Kwargs inplace = {{"inplace", true}};
    std::vector<c10::IValue> args = {x};
    if (std::string(name) == "_threshold") args = {x, 0.1, 20.0};
    at::Tensor out = call(target, args).toTensor();
    EXPECT_TRUE(at::equal(x, original)) << name;
    at::Tensor same = call(target, args, inplace).toTensor();
    EXPECT_TRUE(same.is_same(x)) << name;
    EXPECT_TRUE(at::equal(x, out)) << name;
  }
}

// ======================================================= getitem: tensors

// x = torch.arange(24).view(2, 3, 4); each case's shape and flattened values
// are torch 1.13's.
struct TensorIndexCase {
  const char* python;
  std::function<c10::IValue()> index;
  std::vector<int64_t> shape;
  std::vector<int64_t> values;
};

TEST(Getitem, TensorIndexingMatchesTorch) {
  std::vector<TensorIndexCase> cases = {
      {"x[1]",
       [] { return c10::IValue(int64_t{1}); },
       {3, 4},
       {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
      {"x[-1]",
       [] { return c10::IValue(int64_t{-1}); },
       {3, 4},
       {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
      {"x[0:1]",
       [] { return slice(int64_t{0}, int64_t{1}); },
       {1, 3, 4},
       {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
      {"x[:, 1:]",
       [] {
         return make_tuple({slice({}, {}), slice(int64_t{1}, {})});
       },
       {2, 2, 4},
       {4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23}},
      {"x[..., ::2]",
       [] {
         return make_tuple({make_ellipsis(), slice({}, {}, int64_t{2})});
       },
       {2, 3, 2},
       {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}},
      {"x[None]",
       [] { return c10::IValue(); },
       {1, 2, 3, 4},
       {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
        12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
      {"x[..., 1]",
       [] {
         return make_tuple({make_ellipsis(), int64_t{1}});
       },
       {2, 3},
       {1, 5, 9, 13, 17, 21}},
      {"x[1, None, -2:, 1]",
       [] {
         return make_tuple(
             {int64_t{1}, c10::IValue(), slice(int64_t{-2}, {}), int64_t{1}});
       },
       {1, 2},
       {17, 21}},
      {"x[:, [0, 2]]",
       [] {
         return make_tuple(
             {slice({}, {}), make_list({int64_t{0}, int64_t{2}})});
       },
       {2, 2, 4},
       {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23}},
      {"x[0, 1, 2]",
       [] {
         return int_tuple({0, 1, 2});
       },
       {},
       {6}},
      {"x[[True, False]]",
       [] {
         return make_list({true, false});
       },
       {1, 3, 4},
       {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
      {"x[[slice(0, 1), 2]] (a list holding a slice is a tuple)",
       [] {
         return make_list({slice(int64_t{0}, int64_t{1}), int64_t{2}});
       },
       {1, 4},
       {8, 9, 10, 11}},
  };
  at::Tensor x = at::arange(24).view({2, 3, 4});
  for (const TensorIndexCase& c : cases) {
    at::Tensor r = call("operator.getitem", {x, c.index()}).toTensor();
    EXPECT_EQ(r.sizes().vec(), c.shape) << c.python;
    at::Tensor flat = r.flatten().contiguous();
    EXPECT_EQ(std::vector<int64_t>(flat.data_ptr<int64_t>(),
                                   flat.data_ptr<int64_t>() + flat.numel()),
              c.values)
        << c.python;
  }
}

TEST(Getitem, NegativeTensorSliceStepIsRefusedAsTorchDoes) {
  // torch 1.13: x[::-1] raises "step must be greater than zero".
  at::Tensor x = at::arange(4);
  EXPECT_THAT(error_of([&] {
                call("operator.getitem", {x, slice({}, {}, int64_t{-1})});
              }),
              HasSubstr("step must be greater than zero"));
}

TEST(Getitem, TensorSliceConstantsFromAGraphIndexAsPython) {
  // x[:, 1:, ...] with the index written in the graph as constants.
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* item = g->call_function(
      "operator.getitem",
      {x, Argument::tuple({Argument::slice(nullptr, nullptr, nullptr),
                           Argument::slice(1, nullptr, nullptr),
                           Argument::ellipsis()})});
  g->output(item);
  torch::nn::Module root;
  GraphModule gm(root, std::move(g));
  at::Tensor in = at::arange(24).view({2, 3, 4});
  using at::indexing::Slice;
  EXPECT_TRUE(at::equal(gm(in).toTensor(), in.index({Slice(), Slice(1)})));
}

TEST(Setitem, TensorSetitemWritesInPlace) {
  // torch 1.13: x = torch.zeros(2, 3); x[0, 1:] = 5.0 gives
  // [[0, 5, 5], [0, 0, 0]].
  at::Tensor x = at::zeros({2, 3});
  c10::IValue r =
      call("operator.setitem",
           {x, make_tuple({int64_t{0}, slice(int64_t{1}, {})}), 5.0});
  EXPECT_TRUE(r.isNone());
  EXPECT_TRUE(at::equal(
      x, at::tensor({0.0f, 5.0f, 5.0f, 0.0f, 0.0f, 0.0f}).view({2, 3})));
}

// ================================================ getitem: tuples, lists

TEST(Getitem, TupleNegativeIndicesCountFromTheEnd) {
  c10::IValue t = int_tuple({1, 2, 3, 4, 5});
  EXPECT_EQ(call("operator.getitem", {t, int64_t{-1}}).toInt(), 5);
  EXPECT_EQ(call("operator.getitem", {t, int64_t{-5}}).toInt(), 1);
  EXPECT_EQ(call("operator.getitem", {t, int64_t{0}}).toInt(), 1);
}

TEST(Getitem, TupleSlicesFollowPython) {
  c10::IValue t = int_tuple({1, 2, 3, 4, 5});
  auto sl = [&](c10::IValue start, c10::IValue stop, c10::IValue step) {
    c10::IValue r = call("operator.getitem", {t, slice(start, stop, step)});
    EXPECT_TRUE(r.isTuple());
    return ints(r);
  };
  using V = std::vector<int64_t>;
  c10::IValue none;
  // Python 3: t[1:3], t[::-1], t[-2:], t[:-10], t[10:], t[::2], t[4:0:-2],
  // t[-100:100].
  EXPECT_EQ(sl(int64_t{1}, int64_t{3}, none), (V{2, 3}));
  EXPECT_EQ(sl(none, none, int64_t{-1}), (V{5, 4, 3, 2, 1}));
  EXPECT_EQ(sl(int64_t{-2}, none, none), (V{4, 5}));
  EXPECT_EQ(sl(none, int64_t{-10}, none), (V{}));
  EXPECT_EQ(sl(int64_t{10}, none, none), (V{}));
  EXPECT_EQ(sl(none, none, int64_t{2}), (V{1, 3, 5}));
  EXPECT_EQ(sl(int64_t{4}, int64_t{0}, int64_t{-2}), (V{5, 3}));
  EXPECT_EQ(sl(int64_t{-100}, int64_t{100}, none), (V{1, 2, 3, 4, 5}));
}

TEST(Getitem, ListIndicesAndSlicesFollowPython) {
  c10::IValue l = make_list({int64_t{1}, int64_t{2}, int64_t{3}});
  EXPECT_EQ(call("operator.getitem", {l, int64_t{-2}}).toInt(), 2);
  c10::IValue tail = call("operator.getitem", {l, slice(int64_t{1}, {})});
  ASSERT_TRUE(tail.isList());
  EXPECT_EQ(ints(tail), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ints(call("operator.getitem", {l, slice({}, {}, int64_t{-1})})),
            (std::vector<int64_t>{3, 2, 1}));
}

TEST(Getitem, IndexOutOfRangeIsPythonsMessage) {
  EXPECT_THAT(error_of([] {
                call("operator.getitem", {int_tuple({1, 2, 3}), int64_t{3}});
              }),
              HasSubstr("tuple index out of range"));
  EXPECT_THAT(
      error_of([] {
        call("operator.getitem",
             {make_list({int64_t{1}, int64_t{2}, int64_t{3}}), int64_t{-4}});
      }),
      HasSubstr("list index out of range"));
}

// ============================================ attributes, sizes and views

std::vector<int64_t> int_values(const c10::IValue& sequence) {
  std::vector<int64_t> out;
  for (const c10::IValue& v : sequence_elements(sequence)) {
    out.push_back(v.toInt());
  }
  return out;
}

TEST(Attributes, GetattrShapeIsATorchSize) {
  c10::IValue shape =
      call("builtins.getattr", {at::ones({2, 3}), std::string("shape")});
  ASSERT_TRUE(is_torch_size(shape));
  EXPECT_EQ(int_values(shape), (std::vector<int64_t>{2, 3}));
}

// torch 1.13: s[1:], s + (1,) and 2 * s are torch.Size; (1,) + s is a
// tuple; s == (2, 3) but s != [2, 3].
TEST(Attributes, TorchSizeArithmeticKeepsPythonsTypes) {
  c10::IValue s = make_torch_size(std::vector<int64_t>{2, 3});
  c10::IValue one = make_tuple({int64_t{1}});
  c10::IValue tail =
      call("operator.getitem", {s, make_slice(int64_t{1}, {}, {})});
  EXPECT_TRUE(is_torch_size(tail));
  EXPECT_EQ(int_values(tail), (std::vector<int64_t>{3}));
  EXPECT_TRUE(is_torch_size(call("operator.add", {s, one})));
  EXPECT_TRUE(is_torch_size(call("operator.mul", {int64_t{2}, s})));
  c10::IValue front = call("operator.add", {one, s});
  EXPECT_TRUE(front.isTuple() && !is_torch_size(front));
  EXPECT_TRUE(
      call("operator.eq", {s, make_tuple({int64_t{2}, int64_t{3}})}).toBool());
  EXPECT_FALSE(
      call("operator.eq", {s, make_list({int64_t{2}, int64_t{3}})}).toBool());
  // ... and a torch.Size is an int[] argument.
  at::Tensor viewed = call_method("view", {at::ones({6}), s}).toTensor();
  EXPECT_EQ(viewed.sizes().vec(), (std::vector<int64_t>{2, 3}));
}

// torch.max(x, 1) is torch.return_types.max: fields by name, indexable;
// torch.ops.aten.max.dim returns a plain tuple (make_fx's spelling).
TEST(Attributes, ReturnTypesHaveTheirFieldsAndOpsAtenHasPlainTuples) {
  at::Tensor x = at::tensor({1.0, 5.0, 2.0, 0.0}).view({2, 2});
  c10::IValue m = call("torch.max", {x, int64_t{1}});
  EXPECT_EQ(python_tuple_name(m), "torch.return_types.max");
  c10::IValue values = call("builtins.getattr", {m, std::string("values")});
  c10::IValue indices = call("operator.getitem", {m, int64_t{1}});
  EXPECT_TRUE(at::equal(values.toTensor(), at::tensor({5.0, 2.0})));
  EXPECT_TRUE(at::equal(indices.toTensor(), at::tensor({1, 0})));
  EXPECT_EQ(error_of([&] {
              call("builtins.getattr", {m, std::string("nope")});
            }),
            "'torch.return_types.max' object has no attribute 'nope'");
  c10::IValue plain = call("torch.ops.aten.max.dim", {x, int64_t{1}});
  EXPECT_TRUE(plain.isTuple());
  EXPECT_EQ(python_tuple_name(plain), "");
  EXPECT_EQ(python_tuple_name(call_method("sort", {x})),
            "torch.return_types.sort");
}

TEST(Attributes, GetattrOfAMissingAttributeIsPythonsError) {
  EXPECT_EQ(error_of([] {
              call("builtins.getattr", {at::ones({2}), std::string("nope")});
            }),
            "'Tensor' object has no attribute 'nope'");
}

TEST(Attributes, GetattrWithADefaultReturnsItForAMissingAttribute) {
  // Python: getattr(torch.ones(2), 'nope', None) is None; with 7 it is 7.
  EXPECT_TRUE(call("builtins.getattr",
                   {at::ones({2}), std::string("nope"), c10::IValue()})
                  .isNone());
  EXPECT_EQ(
      call("builtins.getattr", {at::ones({2}), std::string("nope"), int64_t{7}})
          .toInt(),
      7);
  EXPECT_EQ(call("builtins.getattr",
                 {at::ones({2, 5}), std::string("ndim"), int64_t{7}})
                .toInt(),
            2);
}

TEST(Attributes, SizeIsATorchSizeAndSizeOfADimIsAnInt) {
  at::Tensor x = at::ones({2, 3});
  c10::IValue size = call_method("size", {x});
  ASSERT_TRUE(is_torch_size(size));
  EXPECT_EQ(int_values(size), (std::vector<int64_t>{2, 3}));
  c10::IValue last = call_method("size", {x, int64_t{-1}});
  ASSERT_TRUE(last.isInt());
  EXPECT_EQ(last.toInt(), 3);
}

TEST(Views, ViewAcceptsSizesAsSeparateArgumentsOrOneSequence) {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* a = g->call_method("view", {x, Argument(2), Argument(-1)});
  Node* b = g->call_method("view", {x, Argument::tuple({2, -1})});
  Node* c = g->call_method("view", {x, Argument::list({3, -1})});
  g->output(Argument::tuple({a, b, c}));
  torch::nn::Module root;
  GraphModule gm(root, std::move(g));
  auto out = gm(at::arange(12)).toTupleRef().elements();
  // torch 1.13: view(2, -1) and view((2, -1)) are (2, 6); view([3, -1]) is
  // (3, 4).
  EXPECT_EQ(out[0].toTensor().sizes().vec(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(out[1].toTensor().sizes().vec(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(out[2].toTensor().sizes().vec(), (std::vector<int64_t>{3, 4}));
}

TEST(Views, ViewWithTheSizeOfAnotherTensorRunsInAGraph) {
  // y.view(x.size()): the size list flows from one node into view's *size.
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* size = g->call_method("size", {x});
  Node* v = g->call_method("view", {y, size});
  g->output(v);
  torch::nn::Module root;
  GraphModule gm(root, std::move(g));
  at::Tensor out = gm(at::ones({3, 4}), at::arange(12)).toTensor();
  EXPECT_TRUE(at::equal(out, at::arange(12).view({3, 4})));
}

// ====================================================== the seed topk path

TEST(Topk, TorchTopkReturnsTheValuesAndIndicesTuple) {
  at::Tensor x = torch::randn({4, 6});
  c10::IValue r = call("torch.topk", {x, int64_t{3}});
  ASSERT_TRUE(r.isTuple());
  auto items = r.toTupleRef().elements();
  ASSERT_EQ(items.size(), 2u);
  auto [values, indices] = at::topk(x, 3);
  EXPECT_TRUE(at::equal(items[0].toTensor(), values));
  EXPECT_TRUE(at::equal(items[1].toTensor(), indices));
}

TEST(Topk, GetitemZeroOfTopkInAGraphIsTheValues) {
  // topk = torch.topk(sum_1, 3); getitem = topk[0]
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* s = g->call_function("torch.sum", {x}, {{"dim", Argument(-1)}});
  Node* topk = g->call_function("torch.topk", {s, Argument(3)});
  Node* values = g->call_function("operator.getitem", {topk, Argument(0)});
  Node* indices = g->call_function("operator.getitem", {topk, Argument(-1)});
  g->output(Argument::tuple({values, indices}));
  torch::nn::Module root;
  GraphModule gm(root, std::move(g));
  at::Tensor in = torch::randn({6, 5});
  auto out = gm(in).toTupleRef().elements();
  auto [want_values, want_indices] = at::topk(in.sum(-1), 3);
  EXPECT_TRUE(at::equal(out[0].toTensor(), want_values));
  EXPECT_TRUE(at::equal(out[1].toTensor(), want_indices));
}

TEST(Topk, KeywordArgumentsBindByName) {
  at::Tensor x = torch::randn({5, 4});
  c10::IValue r = call("torch.topk", {x, int64_t{2}},
                       {{"dim", int64_t{0}}, {"largest", false}});
  auto [values, indices] = at::topk(x, 2, 0, false);
  EXPECT_TRUE(at::equal(r.toTupleRef().elements()[0].toTensor(), values));
  EXPECT_TRUE(at::equal(r.toTupleRef().elements()[1].toTensor(), indices));
}

}  // namespace
}  // namespace fx

namespace fx {
namespace {

// Targets no entry was added for resolve to the ATen operator they name.
TEST(OpRegistryResolve, AnAtenTargetResolvesToItsOperator) {
  OpRegistry& r = OpRegistry::global();
  EXPECT_EQ(r.find(Opcode::kCallFunction, "torch.logsumexp"), nullptr);
  const OpDef* def = r.resolve(Opcode::kCallFunction, "torch.logsumexp");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->schema.text(), "*args, **kwargs");
  at::Tensor x = at::rand({3, 4});
  c10::IValue got = call_op(*def, {x, int64_t{1}}, {{"keepdim", true}});
  EXPECT_TRUE(at::equal(got.toTensor(), at::logsumexp(x, {1}, true)));
  // Resolved once: the same entry each time.
  EXPECT_EQ(r.resolve(Opcode::kCallFunction, "torch.logsumexp"), def);
}

TEST(OpRegistryResolve, AnAddedEntryWinsOverTheAtenOperator) {
  OpRegistry& r = OpRegistry::global();
  const OpDef* relu = r.find(Opcode::kCallFunction, "torch.relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(r.resolve(Opcode::kCallFunction, "torch.relu"), relu);
}

TEST(OpRegistryResolve, MethodsResolveWithSelfFirst) {
  const OpDef* def = OpRegistry::global().resolve(Opcode::kCallMethod, "std");
  ASSERT_NE(def, nullptr);
  at::Tensor x = at::rand({3, 4});
  c10::IValue got = call_op(*def, {x}, {{"dim", int64_t{0}}});
  EXPECT_TRUE(at::allclose(got.toTensor(), x.std(0)));
}

TEST(OpRegistryResolve, ATargetNamingNoOperatorHasTheOneNoKernelMessage) {
  OpRegistry& r = OpRegistry::global();
  EXPECT_EQ(r.resolve(Opcode::kCallFunction, "torch.no_such_op"), nullptr);
  EXPECT_EQ(r.resolve(Opcode::kCallFunction, "mymodule.fn"), nullptr);
  try {
    r.get(Opcode::kCallFunction, "mymodule.fn");
    FAIL() << "no error";
  } catch (const FxError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no kernel for call_function target "
                                    "'mymodule.fn'"));
  }
}

}  // namespace
}  // namespace fx

namespace fx {
namespace {

// F.fold has no OpInfo in torch 1.13: torch/nn/functional.py's fold is
// torch._C._nn.col2im with each size given as a pair; the same call to ATen.
TEST(PythonWrappers, FoldIsCol2imWithPairs) {
  const OpDef* fold = OpRegistry::global().find(Opcode::kCallFunction,
                                                "torch.nn.functional.fold");
  ASSERT_NE(fold, nullptr);
  at::Tensor cols = at::rand({1, 3 * 2 * 2, 12});
  c10::IValue got = call_op(*fold, {cols, make_tuple({4, 5}), int64_t{2}},
                            {{"stride", int64_t{1}}});
  at::Tensor want = at::col2im(cols, {4, 5}, {2, 2}, {1, 1}, {0, 0}, {1, 1});
  EXPECT_TRUE(at::equal(got.toTensor(), want));
}

}  // namespace
}  // namespace fx

namespace fx {
namespace {

// Targets whose hand-written kernels were deleted because ATen's schemas
// bind them as Python does, where the OpInfo suite has no case: factories
// (requires_grad=, full's dtype from its value), quantization, Tensor-only
// methods, in-place methods with a number, the torch.* spellings of F.*'s
// C builtins. Values are torch 1.13's.
TEST(OpRegistryResolve, DeletedHandWrittenTargetsRunThroughAten) {
  EXPECT_EQ(OpRegistry::global().find(Opcode::kCallFunction, "torch.zeros"),
            nullptr);
  at::Tensor z =
      call("torch.zeros", {int64_t{2}, int64_t{3}}, {{"requires_grad", true}})
          .toTensor();
  EXPECT_EQ(z.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(z.requires_grad());
  // torch.full((2,), 7).dtype is torch.int64.
  at::Tensor f =
      call("torch.full", {make_tuple({int64_t{2}}), int64_t{7}}).toTensor();
  EXPECT_EQ(f.scalar_type(), at::kLong);
  EXPECT_EQ(call("torch.arange", {int64_t{5}}).toTensor().scalar_type(),
            at::kLong);

  at::Tensor x = at::tensor({0.5f, -1.0f, 2.25f});
  at::Tensor q = call("torch.quantize_per_tensor",
                      {x, 0.25, int64_t{10}, static_cast<int64_t>(at::kQUInt8)})
                     .toTensor();
  EXPECT_TRUE(at::equal(call_method("int_repr", {q}).toTensor(),
                        at::tensor({12, 6, 19}, at::kByte)));
  EXPECT_TRUE(at::equal(call("torch.dequantize", {q}).toTensor(), x));

  EXPECT_EQ(call_method("dim", {x}).toInt(), 1);
  EXPECT_EQ(call_method("numel", {x}).toInt(), 3);
  EXPECT_EQ(call("torch.numel", {x}).toInt(), 3);
  EXPECT_EQ(call_method("item", {at::tensor({2.5})}).toDouble(), 2.5);
  EXPECT_EQ(call_method("item", {at::tensor({int64_t{4}})}).toInt(), 4);
  EXPECT_EQ(call_method("type_as", {x, at::ones({1}, at::kLong)})
                .toTensor()
                .scalar_type(),
            at::kLong);
  at::Tensor y = x.clone();
  EXPECT_TRUE(call_method("add_", {y, 1.5}).toTensor().is_same(y));
  EXPECT_TRUE(at::equal(y, x + 1.5));

  at::Tensor img = at::rand({1, 2, 4, 4});
  EXPECT_TRUE(at::equal(call("torch.max_pool2d", {img, int64_t{2}}).toTensor(),
                        at::max_pool2d(img, {2, 2})));
  EXPECT_TRUE(at::equal(
      call("torch.layer_norm", {img, make_tuple({int64_t{4}})}).toTensor(),
      at::layer_norm(img, {4})));
  EXPECT_TRUE(at::equal(
      call("torch._C._nn.one_hot", {at::tensor({int64_t{0}, int64_t{2}})})
          .toTensor(),
      at::tensor({1, 0, 0, 0, 0, 1}, at::kLong).view({2, 3})));
  // torch.max(x, 0): (values, indices).
  c10::IValue m = call("torch.max", {x, int64_t{0}});
  ASSERT_TRUE(m.isTuple());
  EXPECT_EQ(m.toTupleRef().elements()[1].toTensor().item<int64_t>(), 2);
}

// A probability out of range is named as Python prints it (torch 1.13's and
// torchvision's messages for these calls).
TEST(Kernels, ProbabilityErrorsPrintTheFloatAsPython) {
  at::Tensor x = at::ones({2});
  EXPECT_EQ(error_of([&] {
              call("torch.nn.functional.dropout", {x, 1.5});
            }),
            "dropout probability has to be between 0 and 1, but got 1.5");
  EXPECT_EQ(error_of([&] {
              call("torchvision.ops.stochastic_depth.stochastic_depth",
                   {x, -0.25, std::string("row")});
            }),
            "drop probability has to be between 0 and 1, but got -0.25");
}

}  // namespace
}  // namespace fx
