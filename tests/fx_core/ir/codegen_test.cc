// fx::CodeGen: Graph::python_code() against torch.fx's generated code.
//
// Every expected source below is torch.fx 1.13's
// `graph.python_code('self').src` for the same graph built with the
// torch.fx.Graph API, byte for byte; expected globals are the keys of its
// `.globals`, in order.
#include "fx_core/ir/codegen.h"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/python_repr.h"

namespace fx {
namespace {

using Names = std::vector<std::string>;

std::string code_of(const Graph& g) { return g.python_code("self").src; }

Names global_names(const Graph& g) {
  Names out;
  for (const auto& [name, obj] : g.python_code("self").globals) {
    out.push_back(name);
  }
  return out;
}

// The globals every torch.fx module starts with (_custom_builtins).
const Names kDefaultGlobals = {"inf",    "nan",       "NoneType", "torch",
                               "device", "fx_pytree", "pytree"};

Names with_defaults(const Names& extra) {
  Names out = kDefaultGlobals;
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

// ------------------------------------------------------------ statements

TEST(CodeGen, OperatorsArePrettyPrinted) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Node* last = x;
  for (const char* op :
       {"operator.add", "operator.sub", "operator.mul", "operator.truediv",
        "operator.floordiv", "operator.mod", "operator.pow", "operator.matmul",
        "operator.lshift", "operator.rshift", "operator.and_", "operator.or_",
        "operator.xor", "operator.eq", "operator.ne", "operator.lt",
        "operator.le", "operator.gt", "operator.ge"}) {
    last = g.call_function(op, {last, y});
  }
  Node* neg = g.call_function("operator.neg", {last});
  Node* pos = g.call_function("operator.pos", {neg});
  Node* inv = g.call_function("operator.invert", {pos});
  Node* item = g.call_function("operator.getitem", {inv, 0});
  Node* item2 = g.call_function(
      "operator.getitem",
      {item, Argument::tuple({Argument::slice(nullptr, nullptr, nullptr),
                              Argument::ellipsis(), nullptr})});
  g.output(item2);
  EXPECT_EQ(code_of(g),
            "\n\n\ndef forward(self, x, y):\n"
            "    add = x + y;  x = None\n"
            "    sub = add - y;  add = None\n"
            "    mul = sub * y;  sub = None\n"
            "    truediv = mul / y;  mul = None\n"
            "    floordiv = truediv // y;  truediv = None\n"
            "    mod = floordiv % y;  floordiv = None\n"
            "    pow_1 = mod ** y;  mod = None\n"
            "    matmul = pow_1 @ y;  pow_1 = None\n"
            "    lshift = matmul << y;  matmul = None\n"
            "    rshift = lshift >> y;  lshift = None\n"
            "    and_ = rshift & y;  rshift = None\n"
            "    or_ = and_ | y;  and_ = None\n"
            "    xor = or_ ^ y;  or_ = None\n"
            "    eq = xor == y;  xor = None\n"
            "    ne = eq != y;  eq = None\n"
            "    lt = ne < y;  ne = None\n"
            "    le = lt <= y;  lt = None\n"
            "    gt = le > y;  le = None\n"
            "    ge = gt >= y;  gt = y = None\n"
            "    neg = -ge;  ge = None\n"
            "    pos = +neg;  neg = None\n"
            "    invert = ~pos;  pos = None\n"
            "    getitem = invert[0];  invert = None\n"
            "    getitem_1 = getitem[(slice(None, None, None), Ellipsis, "
            "None)];  getitem = None\n"
            "    return getitem_1\n"
            "    ");
  EXPECT_EQ(global_names(g), kDefaultGlobals);
}

TEST(CodeGen, InplaceOperatorsAssignTheirFirstArgument) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Node* iadd = g.call_function("operator.iadd", {x, y});
  g.output(g.call_function("operator.setitem", {iadd, 0, y}));
  EXPECT_EQ(code_of(g),
            "\n\n\ndef forward(self, x, y):\n"
            "    x += y;  iadd = x;  x = None\n"
            "    iadd[0] = y;  setitem = iadd;  iadd = y = None\n"
            "    return setitem\n"
            "    ");
}

TEST(CodeGen, QualifiedPathsUseGetattrForNumericAtoms) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* w = g.get_attr("features.0.weight");
  Node* m = g.call_module("features.0", {x});
  Node* m2 = g.call_module("layer1.0.conv1", {m});
  Node* s = g.call_function("builtins.getattr", {m2, "shape"});
  Node* s3 = g.call_function("builtins.getattr", {m2, "0"});
  Node* s4 = g.call_function("builtins.getattr", {m2, "shape", nullptr});
  Node* view = g.call_method("view", {m2, -1}, {{"a", 1}});
  Node* size = g.call_method("size", {view});
  g.output(Argument::tuple({w, s, s3, s4, size}));
  EXPECT_EQ(
      code_of(g),
      "\n\n\ndef forward(self, x):\n"
      "    features_0_weight = getattr(self.features, \"0\").weight\n"
      "    features_0 = getattr(self.features, \"0\")(x);  x = None\n"
      "    layer1_0_conv1 = getattr(self.layer1, \"0\").conv1(features_0);"
      "  features_0 = None\n"
      "    getattr_1 = layer1_0_conv1.shape\n"
      "    getattr_2 = getattr(layer1_0_conv1, '0')\n"
      "    getattr_3 = getattr(layer1_0_conv1, 'shape', None)\n"
      "    view = layer1_0_conv1.view(-1, a = 1);  layer1_0_conv1 = None\n"
      "    size = view.size();  view = None\n"
      "    return (features_0_weight, getattr_1, getattr_2, getattr_3, "
      "size)\n"
      "    ");
  EXPECT_EQ(global_names(g), with_defaults({"getattr"}));
}

TEST(CodeGen, FormatTargetWrapsNonIdentifierAtoms) {
  EXPECT_EQ(format_target("self", "features.0.weight"),
            "getattr(self.features, \"0\").weight");
  EXPECT_EQ(format_target("self", "a.0.1"),
            "getattr(getattr(self.a, \"0\"), \"1\")");
  EXPECT_EQ(format_target("x", "relu"), "x.relu");
}

TEST(CodeGen, EachValueIsFreedAfterItsLastUse) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Node* z = g.placeholder("z");
  Node* relu = g.call_function("torch.relu", {x});
  g.output(g.call_function("torch.cat", {Argument::list({relu, y, z})},
                           {{"dim", 1}}));
  EXPECT_EQ(code_of(g),
            "\n\n\ndef forward(self, x, y, z):\n"
            "    relu = torch.relu(x);  x = None\n"
            "    cat = torch.cat([relu, y, z], dim = 1);  relu = y = z = None\n"
            "    return cat\n"
            "    ");
}

TEST(CodeGen, UnusedValuesAndKeywordOnlyCallsFreeNothing) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* relu = g.call_function("torch.relu", {x});
  g.call_function("torch.zeros", {2, 3},
                  {{"dtype", Argument::dtype("torch.float16")},
                   {"device", Argument::device("cpu")}});
  g.call_function("torch.ones", {}, {{"size", Argument::tuple({2})}});
  g.output(relu);
  EXPECT_EQ(code_of(g),
            "\n\n\ndef forward(self, x):\n"
            "    relu = torch.relu(x);  x = None\n"
            "    zeros = torch.zeros(2, 3, dtype = torch.float16, device = "
            "device(type='cpu'))\n"
            "    ones = torch.ones(size = (2,))\n"
            "    return relu\n"
            "    ");
}

TEST(CodeGen, WrappedFunctionsGetWrapLinesAndGlobals) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* len = g.call_function("builtins.len", {x});
  len->set_meta("is_wrapped", true);
  Node* s = g.call_function("math.sqrt", {len});
  s->set_meta("is_wrapped", true);
  Node* s2 = g.call_function("math.sqrt", {s});
  s2->set_meta("is_wrapped", true);
  g.output(g.call_function("operator.truediv", {x, s2}));
  EXPECT_EQ(code_of(g),
            "\ntorch.fx._symbolic_trace.wrap(\"len\")\n"
            "torch.fx._symbolic_trace.wrap(\"math_sqrt\")\n"
            "\ndef forward(self, x):\n"
            "    len_1 = len(x)\n"
            "    sqrt = math_sqrt(len_1);  len_1 = None\n"
            "    sqrt_1 = math_sqrt(sqrt);  sqrt = None\n"
            "    truediv = x / sqrt_1;  x = sqrt_1 = None\n"
            "    return truediv\n"
            "    ");
  EXPECT_EQ(global_names(g), with_defaults({"len", "math_sqrt"}));
}

TEST(CodeGen, GlobalsMapNamesToTheirObjects) {
  Graph g;
  Node* x = g.placeholder("x");
  g.output(g.call_function("math.sqrt", {x}));
  std::vector<std::pair<std::string, std::string>> globals =
      g.python_code("self").globals;
  ASSERT_EQ(globals.size(), 8u);
  EXPECT_EQ(globals[0],
            std::make_pair(std::string("inf"), std::string("math.inf")));
  EXPECT_EQ(globals[3],
            std::make_pair(std::string("torch"), std::string("torch")));
  EXPECT_EQ(globals[7],
            std::make_pair(std::string("math_sqrt"), std::string("math.sqrt")));
}

// A class defined in a function: its annotation names it after its
// __qualname__, its constructor call after its __name__ (m.Pair); torch.fx
// gives the one object one global, the annotation's.
TEST(CodeGen, ALocalClassHasOneGlobalForItsAnnotationAndItsCalls) {
  Graph g;
  Node* x = g.placeholder("x", "m_T_test_pair_locals_Pair");
  Node* y = g.placeholder("y");
  Node* pair = g.call_function("m.Pair", {y, y});
  g.output(Argument::tuple({x, pair}));
  EXPECT_EQ(code_of(g),
            "\n\n\ndef forward(self, x : m_T_test_pair_locals_Pair, y):\n"
            "    pair = m_T_test_pair_locals_Pair(y, y);  y = None\n"
            "    return (x, pair)\n    ");
  EXPECT_EQ(global_names(g), with_defaults({"m_T_test_pair_locals_Pair"}));
  EXPECT_EQ(g.python_code("self").globals.back().second, "m.Pair");
}

TEST(CodeGen, AnnotationsAndDefaultsGoIntoTheSignature) {
  Graph g;
  Node* x = g.placeholder("x", "torch.Tensor");
  Node* y = g.placeholder("y", "int", Argument(3));
  g.placeholder("z", {}, Argument("s"));
  g.placeholder("l", "typing_List[int]");
  g.placeholder("t", "typing_Tuple[int,int]");
  g.placeholder("o", "typing_Union[torch.Tensor,NoneType]");
  g.placeholder("dd", "typing_Dict[str,torch.Tensor]");
  g.get_attr("layer.weight", "torch.Tensor");
  g.get_attr("buf");
  Node* add = g.call_function("operator.add", {x, y}, {}, "torch.Tensor");
  Node* m = g.call_module("layer1.0", {add}, {{"scale", 2.0}});
  Node* view = g.call_method("view", {m, -1});
  Node* ga = g.call_function("builtins.getattr", {view, "shape"});
  Node* relu =
      g.call_function("torch.nn.functional.relu", {view}, {{"inplace", false}});
  g.output(Argument::tuple({relu, ga}), "typing_Tuple[torch.Tensor,int]");
  EXPECT_EQ(code_of(g),
            "\n\n\ndef forward(self, x : torch.Tensor, y : int = 3, z = 's', "
            "l : typing_List[int], t : typing_Tuple[int,int], o : "
            "typing_Union[torch.Tensor,NoneType], dd : "
            "typing_Dict[str,torch.Tensor]) -> "
            "typing_Tuple[torch.Tensor,int]:\n"
            "    layer_weight : torch.Tensor = self.layer.weight\n"
            "    buf = self.buf\n"
            "    add : torch.Tensor = x + y;  x = y = None\n"
            "    layer1_0 = getattr(self.layer1, \"0\")(add, scale = 2.0);  "
            "add = None\n"
            "    view = layer1_0.view(-1);  layer1_0 = None\n"
            "    getattr_1 = view.shape\n"
            "    relu = torch.nn.functional.relu(view, inplace = False);  view "
            "= None\n"
            "    return (relu, getattr_1)\n"
            "    ");
  EXPECT_EQ(global_names(g),
            with_defaults({"int", "typing_List", "typing_Tuple", "typing_Union",
                           "typing_Dict", "str", "getattr"}));
}

TEST(CodeGen, DefaultsUseRepr) {
  Graph g;
  Node* p = g.placeholder("p", {}, Argument("hello"));
  Node* q = g.placeholder("q", {}, Argument());
  Node* r = g.placeholder("r", {}, Argument::tuple({1, "a"}));
  Node* s = g.placeholder("s", {}, Argument::device("cpu"));
  g.output(Argument::tuple(
      {p, "str", Argument::dict({{"a", q}}), Argument::list({r, s}), 1.5}));
  EXPECT_EQ(code_of(g),
            "\n\n\ndef forward(self, p = 'hello', q = None, r = (1, 'a'), s = "
            "device(type='cpu')):\n"
            "    return (p, 'str', {'a': q}, [r, s], 1.5)\n"
            "    ");
}

TEST(CodeGen, ReturnValuesUseRepr) {
  Graph g;
  g.placeholder("p");
  g.output("a string");
  EXPECT_EQ(code_of(g),
            "\n\n\ndef forward(self, p):\n    return 'a string'\n    ");
  Graph h;
  h.placeholder("p");
  h.output(Argument());
  EXPECT_EQ(code_of(h), "\n\n\ndef forward(self, p):\n    return None\n    ");
  Graph k;
  k.placeholder("p");
  k.output(Argument::device("cuda:1"));
  EXPECT_EQ(code_of(k),
            "\n\n\ndef forward(self, p):\n"
            "    return device(type='cuda', index=1)\n    ");
}

TEST(CodeGen, ReturningAPlaceholderFreesNothing) {
  Graph g;
  g.output(g.placeholder("x"));
  EXPECT_EQ(code_of(g), "\n\n\ndef forward(self, x):\n    return x\n    ");
}

TEST(CodeGen, AnEmptyBodyIsPass) {
  Graph g;
  g.placeholder("x");
  EXPECT_EQ(code_of(g), "\n\n\ndef forward(self, x):\n    pass\n    ");
  Graph empty;
  EXPECT_EQ(code_of(empty), "\n\n\ndef forward(self):\n    pass\n    ");
}

TEST(CodeGen, StarredPlaceholdersAreBoundToTheirNodeNames) {
  Graph g;
  Node* args = g.placeholder("*args");
  Node* kwargs = g.placeholder("**kwargs");
  g.output(Argument::tuple({args, kwargs}));
  EXPECT_EQ(args->name(), "_args");
  EXPECT_EQ(code_of(g),
            "\n\n\ndef forward(self, *args, **kwargs):\n"
            "    _args = args\n"
            "    _kwargs = kwargs\n"
            "    return (_args, _kwargs)\n"
            "    ");
}

TEST(CodeGen, RenamedPlaceholdersAloneAreNotAnEmptyBody) {
  Graph g;
  g.placeholder("*args");
  EXPECT_EQ(code_of(g),
            "\n\n\ndef forward(self, *args):\n    _args = args\n    ");
}

TEST(CodeGen, EveryArgumentKindIsWrittenWithRepr) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Graph g;
  Node* x = g.placeholder("x");
  Node* full = g.call_function(
      "torch.full", {},
      {{"none", nullptr},
       {"t", true},
       {"f", false},
       {"i", -3},
       {"big", int64_t{1} << 40},
       {"fl", 0.5},
       {"small", 1e-05},
       {"huge", 1e16},
       {"hundred", 100.0},
       {"pinf", kInf},
       {"ninf", -kInf},
       {"nan", std::numeric_limits<double>::quiet_NaN()},
       {"s", "ab"},
       {"q", "it's"},
       {"dq", "say \"hi\""},
       {"both", "it's \"x\""},
       {"nl", "a\nb\\"},
       {"node", x},
       {"lst", Argument::list({x, 1, "a"})},
       {"tup", Argument::tuple({x, 2.0})},
       {"one", Argument::tuple({1})},
       {"empty", Argument::tuple({})},
       {"el", Argument::list({})},
       {"d", Argument::dict({{"k", x}, {"v", "w"}})},
       {"sl", Argument::slice(nullptr, 2, nullptr)},
       {"sl2", Argument::slice(x, nullptr, -1)},
       {"ell", Argument::ellipsis()},
       {"dt", Argument::dtype("torch.float32")},
       {"dev", Argument::device("cpu")},
       {"dev2", Argument::device("cuda:0")},
       {"mf", Argument::memory_format("torch.channels_last")},
       {"lay", Argument::layout("torch.strided")},
       {"nested",
        Argument::list({Argument::tuple(
            {1, Argument::list(
                    {2, Argument::dict({{"a", Argument::tuple({x})}})})})})}});
  g.output(full);
  EXPECT_EQ(
      code_of(g),
      "\n\n\ndef forward(self, x):\n"
      "    full = torch.full(none = None, t = True, f = False, i = -3, big = "
      "1099511627776, fl = 0.5, small = 1e-05, huge = 1e+16, hundred = 100.0, "
      "pinf = inf, ninf = -inf, nan = nan, s = 'ab', q = \"it's\", dq = 'say "
      "\"hi\"', both = 'it\\'s \"x\"', nl = 'a\\nb\\\\', node = x, lst = [x, "
      "1, 'a'], tup = (x, 2.0), one = (1,), empty = (), el = [], d = {'k': x, "
      "'v': 'w'}, sl = slice(None, 2, None), sl2 = slice(x, None, -1), ell = "
      "Ellipsis, dt = torch.float32, dev = device(type='cpu'), dev2 = "
      "device(type='cuda', index=0), mf = torch.channels_last, lay = "
      "torch.strided, nested = [(1, [2, {'a': (x,)}])]);  x = None\n"
      "    return full\n"
      "    ");
}

TEST(CodeGen, InlinedGraphsGenerateTheirCopiedNodes) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* relu = g.call_function("torch.relu", {x});
  g.output(g.call_function("operator.add", {relu, 1}));
  Graph h;
  Node* y = h.placeholder("y");
  Graph::ValueMap val_map = {{x, h.call_function("operator.add", {y, y})}};
  h.output(*h.graph_copy(g, val_map));
  EXPECT_EQ(code_of(h),
            "\n\n\ndef forward(self, y):\n"
            "    add = y + y;  y = None\n"
            "    relu = torch.relu(add);  add = None\n"
            "    add_1 = relu + 1;  relu = None\n"
            "    return add_1\n"
            "    ");
}

TEST(CodeGen, RootModuleNameIsUsedForAttributes) {
  Graph g;
  Node* x = g.placeholder("x");
  g.output(g.call_module("layer.0", {x}));
  EXPECT_EQ(g.python_code("root").src,
            "\n\n\ndef forward(self, x):\n"
            "    layer_0 = getattr(root.layer, \"0\")(x);  x = None\n"
            "    return layer_0\n"
            "    ");
}

// ----------------------------------------------------- extension points

// torch.fx's docs example of a custom CodeGen: the inputs come as one list
// and the outputs leave as a list.
class ListCodeGen : public CodeGen {
 public:
  std::unique_ptr<CodeGen> clone() const override {
    return std::make_unique<ListCodeGen>(*this);
  }
  std::string generate_prologue(
      std::vector<std::string> free_vars,
      std::string_view return_annotation) const override {
    std::string vars;
    for (size_t i = 0; i < free_vars.size(); ++i) {
      vars += (i ? ", " : "") + free_vars[i];
    }
    return "def forward(self, args_list: List[torch.Tensor])" +
           std::string(return_annotation) + ":\n    " + vars + " = args_list";
  }
  std::string generate_output(const Argument& output_args) const override {
    return "return list(" + repr(output_args) + ")";
  }
  std::vector<std::pair<std::string, std::string>> additional_globals()
      const override {
    return {{"List", "typing.List"}};
  }
};

class CodeGenExtension : public ::testing::Test {
 protected:
  void SetUp() override {
    Node* x = g_.placeholder("x");
    Node* y = g_.placeholder("y");
    g_.output(Argument::tuple({g_.call_function("operator.add", {x, y}), x}));
  }
  Graph g_;
};

TEST_F(CodeGenExtension, TheDefaultCodeGenWritesAPlainForward) {
  EXPECT_EQ(code_of(g_),
            "\n\n\ndef forward(self, x, y):\n"
            "    add = x + y;  y = None\n"
            "    return (add, x)\n"
            "    ");
}

TEST_F(CodeGenExtension, SetCodegenUsesTheSubclassesPrologueAndOutput) {
  g_.set_codegen(std::make_unique<ListCodeGen>());
  // torch.fx 1.13 with the same CodeGen subclass (gen_fn_def,
  // generate_output and additional_globals overridden):
  EXPECT_EQ(code_of(g_),
            "\n\n\ndef forward(self, args_list: List[torch.Tensor]):\n"
            "    x, y = args_list\n"
            "    add = x + y;  y = None\n"
            "    return list((add, x))\n"
            "    ");
}

TEST_F(CodeGenExtension, AdditionalGlobalsAreAddedLast) {
  g_.set_codegen(std::make_unique<ListCodeGen>());
  EXPECT_EQ(global_names(g_), with_defaults({"List"}));
}

TEST_F(CodeGenExtension, TheSubclassSurvivesDeepcopy) {
  g_.set_codegen(std::make_unique<ListCodeGen>());
  std::unique_ptr<Graph> copy = g_.deepcopy();
  EXPECT_NE(dynamic_cast<ListCodeGen*>(&copy->codegen()), nullptr);
  EXPECT_EQ(code_of(*copy), code_of(g_));
}

TEST_F(CodeGenExtension, SetCodegenWithNullKeepsTheCurrentOne) {
  g_.set_codegen(std::make_unique<ListCodeGen>());
  g_.set_codegen(nullptr);
  EXPECT_NE(dynamic_cast<ListCodeGen*>(&g_.codegen()), nullptr);
}

// Issue 22: a target is `.name` only when it is a plain identifier; any
// other text is an escaped literal in torch.fx's getattr form, so the code
// parses and runs nothing it names.
TEST(CodeGenInjection, AttributeAndMethodTargetsNeverRunCode) {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.get_attr("training\"), print(\"pwned");
  Node* b = g.get_attr(
      "sub.\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80"
      "0");
  Node* c = g.call_method("relu\"); print(\"x", {x});
  Node* d = g.get_attr("class");
  Node* e = g.get_attr("a\\b\nc");
  g.output(Argument::list({a, b, c, d, e}));
  EXPECT_EQ(code_of(g),
            "\n\n\ndef forward(self, x):\n"
            "    training_print_pwned = getattr(self, "
            "\"training\\\"), print(\\\"pwned\")\n"
            "    sub_0 = getattr(self.sub, "
            "\"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80"
            "0\")\n"
            "    relu_print_x = getattr(x, \"relu\\\"); print(\\\"x\")();  "
            "x = None\n"
            "    class_1 = getattr(self, \"class\")\n"
            "    a_b_c = getattr(self, \"a\\\\b\\nc\")\n"
            "    return [training_print_pwned, sub_0, relu_print_x, class_1, "
            "a_b_c]\n    ");
}

}  // namespace
}  // namespace fx
