// fx-graph JSON files (docs/fx-graph-json.md): reading, writing,
// round trips, and errors that name the node and field at fault.
//
// Where a graph read from a file is printed or turned into code, the expected
// text is torch.fx 1.13's output for the same graph built with the
// torch.fx.Graph API (`[#users=N]` spelled `[num_users=N]`).
#include "fx_core/format/graph_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"

namespace fx {
namespace {

using ::testing::HasSubstr;

// A file around the given node objects.
std::string file_with(const std::string& nodes) {
  return R"({"format": "fx-graph", "version": 1, "nodes": [)" + nodes + "]}";
}

constexpr char kX[] =
    R"({"name": "x", "op": "placeholder", "target": "x", "args": [],
        "kwargs": {}})";

std::string output_of(const std::string& value) {
  return R"({"name": "output", "op": "output", "target": "output", "args": [)" +
         value + R"(], "kwargs": {}})";
}

// The error message of parsing `text` ("" when it parses).
std::string parse_error(const std::string& text) {
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "g.json");
  if (file.ok()) return "";
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(file.status().message());
}

// The docs' MyModule, as torch.fx's exporter writes it.
constexpr char kMyModule[] = R"({
 "format": "fx-graph",
 "version": 1,
 "nodes": [
  {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
  {"name": "param", "op": "get_attr", "target": "param", "args": [],
   "kwargs": {}},
  {"name": "add", "op": "call_function", "target": "operator.add",
   "args": [{"node": "x"}, {"node": "param"}], "kwargs": {}},
  {"name": "linear", "op": "call_module", "target": "linear",
   "args": [{"node": "add"}], "kwargs": {}},
  {"name": "clamp", "op": "call_method", "target": "clamp",
   "args": [{"node": "linear"}], "kwargs": {"min": 0.0, "max": 1.0}},
  {"name": "output", "op": "output", "target": "output",
   "args": [{"node": "clamp"}], "kwargs": {}}
 ],
 "modules": {"linear": {"type": "torch.nn.Linear",
   "config": {"in_features": 4, "out_features": 5, "bias": true},
   "training": true}},
 "weights": "model.weights.pt"
})";

// ---------------------------------------------------------------- reading

TEST(GraphFileRead, BuildsTheGraphTorchFxPrints) {
  absl::StatusOr<GraphFile> file = parse_graph_json(kMyModule, "mymodule");
  ASSERT_TRUE(file.ok()) << file.status().message();
  // torch.fx 1.13, print(gm.graph) for the docs' MyModule:
  EXPECT_EQ(file->graph->str(),
            "graph():\n"
            "    %x : [num_users=1] = placeholder[target=x]\n"
            "    %param : [num_users=1] = get_attr[target=param]\n"
            "    %add : [num_users=1] = call_function[target=operator.add]"
            "(args = (%x, %param), kwargs = {})\n"
            "    %linear : [num_users=1] = call_module[target=linear]"
            "(args = (%add,), kwargs = {})\n"
            "    %clamp : [num_users=1] = call_method[target=clamp]"
            "(args = (%linear,), kwargs = {min: 0.0, max: 1.0})\n"
            "    return clamp");
  EXPECT_EQ(file->graph->python_code("self").src,
            "\n\n\ndef forward(self, x):\n"
            "    param = self.param\n"
            "    add = x + param;  x = param = None\n"
            "    linear = self.linear(add);  add = None\n"
            "    clamp = linear.clamp(min = 0.0, max = 1.0);  linear = None\n"
            "    return clamp\n"
            "    ");
}

TEST(GraphFileRead, ReadsModulesAndWeights) {
  absl::StatusOr<GraphFile> file = parse_graph_json(kMyModule, "mymodule");
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->modules.size(), 1u);
  EXPECT_EQ(file->modules[0].first, "linear");
  const ModuleSpec& linear = file->modules[0].second;
  EXPECT_EQ(linear.type, "torch.nn.Linear");
  EXPECT_TRUE(linear.training);
  ASSERT_EQ(linear.config.size(), 3u);
  EXPECT_EQ(linear.config[1].first, "out_features");
  EXPECT_EQ(linear.config[1].second.as_int(), 5);
  EXPECT_EQ(file->weights, "model.weights.pt");
}

TEST(GraphFileRead, ReadsEveryArgumentKind) {
  std::string text = file_with(std::string(kX) + "," + R"(
    {"name": "full", "op": "call_function", "target": "torch.full",
     "args": [], "kwargs": {
       "none": null, "t": true, "i": -3, "fl": 1e-05, "whole": 3.0,
       "pinf": {"float": "inf"}, "ninf": {"float": "-inf"},
       "nan": {"float": "nan"}, "s": "ab", "node": {"node": "x"},
       "lst": [{"node": "x"}, 1], "tup": {"tuple": [1]},
       "d": {"dict": {"k": {"node": "x"}}},
       "sl": {"slice": [null, 2, null]}, "ell": {"ellipsis": null},
       "dt": {"dtype": "torch.float32"}, "dev": {"device": "cuda:0"},
       "mf": {"memory_format": "torch.channels_last"},
       "lay": {"layout": "torch.strided"},
       "qs": {"qscheme": "torch.per_channel_affine"}}},
  )" + output_of(R"({"node": "full"})"));
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "kinds");
  ASSERT_TRUE(file.ok()) << file.status().message();
  // torch.fx 1.13 prints the same call as:
  EXPECT_EQ(file->graph->nodes().to_vector()[1]->format_node(),
            "%full : [num_users=1] = call_function[target=torch.full](args = "
            "(), kwargs = {none: None, t: True, i: -3, fl: 1e-05, whole: 3.0, "
            "pinf: inf, ninf: -inf, nan: nan, s: ab, node: %x, lst: [%x, 1], "
            "tup: (1,), d: {k: %x}, sl: slice(None, 2, None), ell: Ellipsis, "
            "dt: torch.float32, dev: cuda:0, mf: torch.channels_last, lay: "
            "torch.strided, qs: torch.per_channel_affine})");
  Node* x = file->graph->first();
  EXPECT_EQ(x->num_users(), 1u);
}

TEST(GraphFileRead, KeepsTypeAndMeta) {
  std::string text = file_with(
      R"({"name": "x", "op": "placeholder", "target": "x", "args": [3],
          "kwargs": {}, "type": "int",
          "meta": {"tensor_meta": {"dict": {"shape": [2, 3],
                   "dtype": {"dtype": "torch.float32"}}}}},)" +
      output_of(R"({"node": "x"})"));
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "meta");
  ASSERT_TRUE(file.ok()) << file.status().message();
  Node* x = file->graph->first();
  EXPECT_EQ(x->type(), "int");
  const Argument* meta = x->meta_value("tensor_meta");
  ASSERT_NE(meta, nullptr);
  EXPECT_EQ(meta->find("shape")->elements()[1].as_int(), 3);
  EXPECT_EQ(x->format_node(),
            "%x : int [num_users=1] = placeholder[target=x](default=3)");
}

// Gradual typing's annotation: torch.fx 1.13's code spells it with globals
// (`x : torch.fx.tensor_type.TensorType[_1,_2,_3,...]`), its graph prints
// repr(type), which the code form cannot give back: the file keeps both.
TEST(GraphFileRead, KeepsHowTheGraphPrintsAType) {
  std::string text = file_with(
      R"({"name": "x", "op": "placeholder", "target": "x", "args": [],
          "kwargs": {}, "type":
          "torch.fx.tensor_type.TensorType[_1,_2,_3,torch.fx.tensor_type._DynType]",
          "type_text": "TensorType[(1, 2, 3, Dyn)]"},)" +
      output_of(R"({"node": "x"})"));
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "gradual");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->graph->first()->format_node(),
            "%x : TensorType[(1, 2, 3, Dyn)] [num_users=1] = "
            "placeholder[target=x]");
  std::string written = to_graph_json(*file);
  EXPECT_THAT(written,
              HasSubstr(R"("type_text": "TensorType[(1, 2, 3, Dyn)]")"));
  absl::StatusOr<GraphFile> again = parse_graph_json(written, "again");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(to_graph_json(*again), written);
  EXPECT_EQ(again->graph->str(), file->graph->str());
  EXPECT_THAT(parse_error(file_with(
                  R"({"name": "x", "op": "placeholder", "target": "x",
                      "args": [], "kwargs": {}, "type_text": "int"},)" +
                  output_of(R"({"node": "x"})"))),
              HasSubstr("node 'x': field 'type_text' must be a string beside "
                        "a 'type'"));
}

// torch.fx lets meta hold any node of the graph, one defined later too.
TEST(GraphFileRead, MetaMayNameANodeDefinedLater) {
  std::string text = file_with(
      std::string(kX) + "," +
      R"({"name": "relu", "op": "call_function", "target": "torch.relu",
          "args": [{"node": "x"}], "kwargs": {},
          "meta": {"partner": {"node": "neg"}}},
         {"name": "neg", "op": "call_function", "target": "torch.neg",
          "args": [{"node": "relu"}], "kwargs": {}},)" +
      output_of(R"({"node": "neg"})"));
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "later");
  ASSERT_TRUE(file.ok()) << file.status().message();
  Node* relu = file->graph->first()->next();
  ASSERT_NE(relu->meta_value("partner"), nullptr);
  EXPECT_EQ(relu->meta_value("partner")->as_node(), relu->next());
  std::string written = to_graph_json(*file);
  absl::StatusOr<GraphFile> again = parse_graph_json(written, "again");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(to_graph_json(*again), written);
  EXPECT_THAT(parse_error(file_with(std::string(kX) + "," +
                                    R"({"name": "relu", "op": "call_function",
                      "target": "torch.relu", "args": [{"node": "x"}],
                      "kwargs": {}, "meta": {"partner": {"node": "nope"}}},)" +
                                    output_of(R"({"node": "relu"})"))),
              HasSubstr("reference to node 'nope', which is not a node of "
                        "this graph"));
}

// make_fx's symbolic mode: a size node and its SymInt meta, a tensor_meta
// whose shape mixes ints and symbolic ints.
constexpr char kSymbolic[] = R"json({
 "format": "fx-graph",
 "version": 1,
 "nodes": [
  {"name": "x_1", "op": "placeholder", "target": "x_1", "args": [],
   "kwargs": {}, "meta": {"tensor_meta": {"dict": {"shape":
   [{"symint": "t0.size(0)"}, 6], "dtype": {"dtype": "torch.float32"},
   "stride": [6, 1]}}}},
  {"name": "sym_size", "op": "call_function",
   "target": "torch.ops.aten.sym_size", "args": [{"node": "x_1"}, 0],
   "kwargs": {}, "meta": {"val": {"symint": "t0.size(0)"}}},
  {"name": "mul", "op": "call_function", "target": "operator.mul",
   "args": [{"node": "sym_size"}, 2], "kwargs": {},
   "meta": {"val": {"symint": "2*t0.size(0)"}}},
  {"name": "view", "op": "call_function",
   "target": "torch.ops.aten.view.default",
   "args": [{"node": "x_1"}, [{"node": "mul"}, -1]], "kwargs": {}},
  {"name": "output", "op": "output", "target": "output",
   "args": [{"node": "view"}], "kwargs": {}}
 ]
})json";

TEST(GraphFileRead, KeepsSymbolicIntsInMeta) {
  absl::StatusOr<GraphFile> file = parse_graph_json(kSymbolic, "symbolic");
  ASSERT_TRUE(file.ok()) << file.status().message();
  const Node* x = file->graph->first();
  const Argument* shape = x->meta_value("tensor_meta")->find("shape");
  ASSERT_TRUE(shape->elements()[0].is_symint());
  EXPECT_EQ(shape->elements()[0].as_string(), "t0.size(0)");
  EXPECT_EQ(shape->elements()[1].as_int(), 6);
  const Node* mul = x->next()->next();
  EXPECT_EQ(mul->meta_value("val")->as_string(), "2*t0.size(0)");
  EXPECT_EQ(file->graph->python_code("self").src,
            "\n\n\ndef forward(self, x_1):\n"
            "    sym_size = torch.ops.aten.sym_size(x_1, 0)\n"
            "    mul = sym_size * 2;  sym_size = None\n"
            "    view = torch.ops.aten.view.default(x_1, [mul, -1]);  x_1 = "
            "mul = None\n"
            "    return view\n    ");
  std::string written = to_graph_json(*file);
  EXPECT_THAT(written, HasSubstr(R"json("symint": "2*t0.size(0)")json"));
  absl::StatusOr<GraphFile> again = parse_graph_json(written, "again");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(to_graph_json(*again), written);
}

// printed_guards: torch's own text of each guard (the expression it
// evaluated and its value), kept for format_guards() and written back.
TEST(GraphFileRead, KeepsTheGuardsPrintedTexts) {
  std::string text(kSymbolic);
  text.insert(text.rfind('}'),
              R"json(, "shape_env": {"hints": {"t0.size(0)": 4},
              "guards": ["Ne(t0.size(0), 2)", "t0.size(0) > 2"],
              "printed_guards": ["Not(Eq(t0.size(0)/2, 1))",
                                 "t0.size(0)/2 > 1"]})json");
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "symbolic");
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_NE(file->shape_env, nullptr);
  EXPECT_EQ(file->shape_env->format_guards(),
            " - Not(Eq(t0.size(0)/2, 1))\n - t0.size(0)/2 > 1");
  EXPECT_EQ(file->shape_env->guards()[0].str(), "Ne(t0.size(0), 2)");
  std::string written = to_graph_json(*file);
  EXPECT_THAT(written, HasSubstr(R"json("printed_guards": [
   "Not(Eq(t0.size(0)/2, 1))",
   "t0.size(0)/2 > 1"
  ])json"));
  absl::StatusOr<GraphFile> again = parse_graph_json(written, "again");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(to_graph_json(*again), written);
}

TEST(GraphFileRead, KeepsTheShapeEnvironment) {
  std::string text(kSymbolic);
  text.insert(text.rfind('}'),
              R"json(, "shape_env": {"hints": {"t0.size(0)": 4},
              "guards": ["Eq(Mod(t0.size(0), 2), 0)", "t0.size(0) > 2"]})json");
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "symbolic");
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_NE(file->shape_env, nullptr);
  EXPECT_EQ(file->shape_env->hint("t0.size(0)"), 4);
  EXPECT_EQ(file->shape_env->format_guards(),
            " - Eq(Mod(t0.size(0), 2), 0)\n - t0.size(0) > 2");
  std::string written = to_graph_json(*file);
  EXPECT_THAT(written, HasSubstr(R"json("shape_env": {
  "hints": {
   "t0.size(0)": 4
  },
  "guards": [
   "Eq(Mod(t0.size(0), 2), 0)",
   "t0.size(0) > 2"
  ]
 })json"));
  absl::StatusOr<GraphFile> again = parse_graph_json(written, "again");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(to_graph_json(*again), written);
}

// "weight_kinds" (an extension of version 1): each weight's kind, read,
// written back before "weights", and refused when it names no kind.
TEST(GraphFileRead, KeepsTheWeightKinds) {
  std::string text(kSymbolic);
  text.insert(text.rfind('}'),
              R"json(, "weights": "w.pt", "weight_kinds": {"p": "parameter",
              "f": "frozen_parameter", "b": "buffer",
              "n": "non_persistent_buffer", "t": "tensor"})json");
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "kinds");
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->weight_kinds.size(), 5u);
  EXPECT_EQ(file->weight_kinds[1].first, "f");
  EXPECT_EQ(file->weight_kinds[1].second, WeightKind::kFrozenParameter);
  EXPECT_EQ(file->weight_kinds[4].second, WeightKind::kTensor);
  std::string written = to_graph_json(*file);
  EXPECT_THAT(written, HasSubstr(R"json("weight_kinds": {
  "p": "parameter",
  "f": "frozen_parameter",
  "b": "buffer",
  "n": "non_persistent_buffer",
  "t": "tensor"
 },
 "weights": "w.pt")json"));
  absl::StatusOr<GraphFile> again = parse_graph_json(written, "again");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(to_graph_json(*again), written);

  std::string bad(kSymbolic);
  bad.insert(bad.rfind('}'), R"json(, "weight_kinds": {"p": "param"})json");
  EXPECT_THAT(std::string(parse_graph_json(bad, "g.json").status().message()),
              HasSubstr("g.json: field 'weight_kinds': weight 'p': the kind "
                        "must be"));
}

TEST(GraphFileErrors, AMalformedShapeEnvironmentIsRefused) {
  auto with_env = [](const std::string& env) {
    std::string text(kSymbolic);
    text.insert(text.rfind('}'), ", \"shape_env\": " + env);
    return parse_error(text);
  };
  EXPECT_THAT(with_env(R"json({"guards": ["Eq(t0.size(0)"]})json"),
              HasSubstr("g.json: field 'shape_env': shape_env guard [0] "
                        "\"Eq(t0.size(0)\": "));
  EXPECT_EQ(with_env(R"json({"hints": {"2*s0": 4}})json"),
            "g.json: field 'shape_env': shape_env hint '2*s0' does not name "
            "a symbol");
  EXPECT_EQ(with_env(R"json({"hints": {"s0": "4"}})json"),
            "g.json: field 'shape_env': hint 's0' must be an integer");
  EXPECT_EQ(with_env(R"json({"guard": []})json"),
            "g.json: field 'shape_env': unknown or malformed entry 'guard' "
            "(expected hints, an object, and guards and printed_guards, "
            "arrays)");
  EXPECT_EQ(with_env(R"json({"guards": ["t0.size(0) > 2"],
                            "printed_guards": []})json"),
            "g.json: field 'shape_env': printed_guards has 0 texts for 1 "
            "guards");
  EXPECT_EQ(with_env(R"json({"guards": ["t0.size(0) > 2"],
                            "printed_guards": [3]})json"),
            "g.json: field 'shape_env': printed_guards must be strings");
  EXPECT_EQ(with_env(R"json({"guards": ["Eq(2, 3)"]})json"),
            "g.json: field 'shape_env': shape_env guard [0] \"Eq(2, 3)\": a "
            "guard comparing 2 and 3 can never hold");
}

TEST(GraphFileErrors, ASymbolicIntOutsideMetaOrMalformedIsRefused) {
  std::string in_args = file_with(
      std::string(kX) + "," +
      R"({"name": "view", "op": "call_function", "target": "torch.reshape",
          "args": [{"node": "x"}, [{"symint": "s0"}]], "kwargs": {}},)" +
      output_of(R"({"node": "view"})"));
  EXPECT_EQ(parse_error(in_args),
            "g.json: node 'view' field 'args[1][0]': a symbolic int can "
            "only appear in meta");
  std::string malformed = file_with(
      R"({"name": "x", "op": "placeholder", "target": "x", "args": [],
          "kwargs": {}, "meta": {"val": {"symint": "2*"}}},)" +
      output_of(R"({"node": "x"})"));
  EXPECT_THAT(parse_error(malformed),
              HasSubstr("g.json: node 'x' field 'meta.val': 'symint' \"2*\" "
                        "is not a symbolic int: "));
}

TEST(GraphFileRead, MarksFunctionsOutsideTorchAsWrapped) {
  // torch.fx's seed_wrap: len and math.sqrt are wrapped.
  std::string text = file_with(std::string(kX) + "," + R"(
    {"name": "len_1", "op": "call_function", "target": "builtins.len",
     "args": [{"node": "x"}], "kwargs": {}},
    {"name": "sqrt", "op": "call_function", "target": "math.sqrt",
     "args": [{"node": "len_1"}], "kwargs": {}},
    {"name": "truediv", "op": "call_function", "target": "operator.truediv",
     "args": [{"node": "x"}, {"node": "sqrt"}], "kwargs": {}},
  )" + output_of(R"({"node": "truediv"})"));
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "wrap");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->graph->python_code("self").src,
            "\ntorch.fx._symbolic_trace.wrap(\"len\")\n"
            "torch.fx._symbolic_trace.wrap(\"math_sqrt\")\n"
            "\ndef forward(self, x):\n"
            "    len_1 = len(x)\n"
            "    sqrt = math_sqrt(len_1);  len_1 = None\n"
            "    truediv = x / sqrt;  x = sqrt = None\n"
            "    return truediv\n"
            "    ");
  EXPECT_EQ(to_graph_json(*file).find("is_wrapped"), std::string::npos);
}

TEST(GraphFileRead, WrappedByDefaultCoversOnlyNonTorchFunctions) {
  EXPECT_TRUE(is_wrapped_by_default("math.sqrt"));
  EXPECT_TRUE(is_wrapped_by_default("builtins.len"));
  EXPECT_FALSE(is_wrapped_by_default("builtins.getattr"));
  EXPECT_FALSE(is_wrapped_by_default("operator.add"));
  EXPECT_FALSE(is_wrapped_by_default("torch.relu"));
}

// ---------------------------------------------------------------- writing

TEST(GraphFileWrite, WritesPythonJsonDumpIndentOne) {
  Graph g;
  Node* x = g.placeholder("x", "torch.Tensor");
  Node* relu = g.call_function("torch.relu", {x}, {{"inplace", false}});
  relu->set_meta("k", Argument::tuple({1, 2.5}));
  g.output(relu);
  // json.dump(obj, f, indent=1) of the same object in Python 3.11:
  EXPECT_EQ(to_graph_json(g),
            "{\n"
            " \"format\": \"fx-graph\",\n"
            " \"version\": 1,\n"
            " \"nodes\": [\n"
            "  {\n"
            "   \"name\": \"x\",\n"
            "   \"op\": \"placeholder\",\n"
            "   \"target\": \"x\",\n"
            "   \"args\": [],\n"
            "   \"kwargs\": {},\n"
            "   \"type\": \"torch.Tensor\"\n"
            "  },\n"
            "  {\n"
            "   \"name\": \"relu\",\n"
            "   \"op\": \"call_function\",\n"
            "   \"target\": \"torch.relu\",\n"
            "   \"args\": [\n"
            "    {\n"
            "     \"node\": \"x\"\n"
            "    }\n"
            "   ],\n"
            "   \"kwargs\": {\n"
            "    \"inplace\": false\n"
            "   },\n"
            "   \"meta\": {\n"
            "    \"k\": {\n"
            "     \"tuple\": [\n"
            "      1,\n"
            "      2.5\n"
            "     ]\n"
            "    }\n"
            "   }\n"
            "  },\n"
            "  {\n"
            "   \"name\": \"output\",\n"
            "   \"op\": \"output\",\n"
            "   \"target\": \"output\",\n"
            "   \"args\": [\n"
            "    {\n"
            "     \"node\": \"relu\"\n"
            "    }\n"
            "   ],\n"
            "   \"kwargs\": {}\n"
            "  }\n"
            " ]\n"
            "}");
}

TEST(GraphFileWrite, EscapesStringsAsPythonJson) {
  Graph g;
  g.output(Argument("tab\t\"q\" \xc3\xa9 \xf0\x9f\x98\x80"));
  std::string json = to_graph_json(g);
  // json.dumps('tab\t"q" é 😀'):
  EXPECT_THAT(json, HasSubstr(R"("tab\t\"q\" \u00e9 \ud83d\ude00")"));
}

// ------------------------------------------------------------- round trips

TEST(GraphFileRoundTrip, ReadingThenWritingGivesTheSameBytes) {
  absl::StatusOr<GraphFile> file = parse_graph_json(kMyModule, "mymodule");
  ASSERT_TRUE(file.ok()) << file.status().message();
  std::string written = to_graph_json(*file);
  absl::StatusOr<GraphFile> again = parse_graph_json(written, "again");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(to_graph_json(*again), written);
  EXPECT_EQ(again->graph->str(), file->graph->str());
  EXPECT_EQ(again->modules.size(), 1u);
  EXPECT_EQ(again->weights, "model.weights.pt");
}

TEST(GraphFileRoundTrip, EveryArgumentKindSurvives) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Graph g;
  Node* x = g.placeholder("x", {}, Argument(1.5));
  Node* full = g.call_function(
      "torch.full", {Argument::list({x, 2})},
      {{"none", nullptr},
       {"b", true},
       {"big", int64_t{1} << 40},
       {"small", 1e-05},
       {"pinf", kInf},
       {"ninf", -kInf},
       {"nan", std::numeric_limits<double>::quiet_NaN()},
       {"s", "it's \"x\"\n"},
       {"tup", Argument::tuple({x, Argument::tuple({})})},
       {"d", Argument::dict({{"k", x}, {"v", Argument::list({})}})},
       {"sl", Argument::slice(x, nullptr, -1)},
       {"ell", Argument::ellipsis()},
       {"dt", Argument::dtype("torch.float16")},
       {"dev", Argument::device("cuda:1")},
       {"mf", Argument::memory_format("torch.preserve_format")},
       {"lay", Argument::layout("torch.sparse_coo")},
       {"qs", Argument::qscheme("torch.per_tensor_affine")}});
  g.output(Argument::tuple({full, x}), "typing_Tuple[torch.Tensor,float]");

  std::string json = to_graph_json(g);
  absl::StatusOr<GraphFile> file = parse_graph_json(json, "kinds");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->graph->str(), g.str());
  EXPECT_EQ(file->graph->python_code("self").src, g.python_code("self").src);
  EXPECT_EQ(to_graph_json(*file->graph), json);
  Node* full2 = file->graph->nodes().to_vector()[1];
  EXPECT_EQ(full2->kwargs().size(), full->kwargs().size());
  for (size_t i = 0; i < full->kwargs().size(); ++i) {
    EXPECT_EQ(full2->kwargs()[i].second.kind(), full->kwargs()[i].second.kind())
        << full->kwargs()[i].first;
  }
}

TEST(GraphFileRoundTrip, WritesAndReadsAFileOnDisk) {
  absl::StatusOr<GraphFile> file = parse_graph_json(kMyModule, "mymodule");
  ASSERT_TRUE(file.ok()) << file.status().message();
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "graph_file_test.fx.json";
  ASSERT_TRUE(write_graph_file(path, *file).ok());
  absl::StatusOr<GraphFile> read = read_graph_file(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->graph->str(), file->graph->str());
  EXPECT_EQ(to_graph_json(*read), to_graph_json(*file));
  EXPECT_EQ(read->directory + "/graph_file_test.fx.json", path);
  std::remove(path.c_str());
}

TEST(GraphFileRoundTrip, AMissingFileIsNotFound) {
  absl::StatusOr<GraphFile> file =
      read_graph_file(::testing::TempDir() + "no/such/file.json");
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
}

// ----------------------------------------------------------------- errors

TEST(GraphFileErrors, MalformedJsonIsReported) {
  std::string message = parse_error(R"({"format": "fx-graph", "nodes": [)");
  EXPECT_THAT(message, HasSubstr("g.json: malformed JSON"));
}

TEST(GraphFileErrors, TheTopLevelMustBeAnObject) {
  EXPECT_EQ(parse_error("[]"),
            "g.json: file: the top level must be a JSON object");
}

TEST(GraphFileErrors, FormatAndVersionAreChecked) {
  EXPECT_EQ(parse_error(R"({"format": "onnx", "version": 1, "nodes": []})"),
            "g.json: file: field 'format' must be \"fx-graph\"");
  EXPECT_EQ(
      parse_error(R"({"format": "fx-graph", "version": 2, "nodes": []})"),
      "g.json: file: unsupported version 2 (this reader knows version 1)");
  EXPECT_EQ(parse_error(R"({"format": "fx-graph", "nodes": []})"),
            "g.json: file: field 'version' must be an integer");
}

TEST(GraphFileErrors, UnknownTopLevelFieldsAreRefused) {
  EXPECT_EQ(parse_error(
                R"({"format": "fx-graph", "version": 1, "nodes": [], "x": 1})"),
            "g.json: file: unknown top-level field 'x'");
}

TEST(GraphFileErrors, AnUnknownOpNamesTheNodeAndField) {
  std::string text = file_with(
      R"({"name": "x", "op": "call", "target": "x", "args": [],
          "kwargs": {}},)" +
      output_of("null"));
  EXPECT_EQ(parse_error(text),
            "g.json: node 'x': field 'op': unknown opcode 'call' (expected "
            "placeholder, get_attr, call_function, call_method, call_module "
            "or output)");
}

TEST(GraphFileErrors, ADanglingNodeReferenceNamesTheNodeAndField) {
  std::string text = file_with(std::string(kX) + "," + R"(
    {"name": "add", "op": "call_function", "target": "operator.add",
     "args": [{"node": "x"}, {"node": "y"}], "kwargs": {}},
  )" + output_of(R"({"node": "add"})"));
  EXPECT_EQ(parse_error(text),
            "g.json: node 'add' field 'args[1]': reference to node 'y', which "
            "is not defined before this node");
}

TEST(GraphFileErrors, AForwardReferenceInKwargsIsDangling) {
  std::string text = file_with(std::string(kX) + "," + R"(
    {"name": "add", "op": "call_function", "target": "torch.add",
     "args": [{"node": "x"}], "kwargs": {"other": [{"node": "relu"}]}},
    {"name": "relu", "op": "call_function", "target": "torch.relu",
     "args": [{"node": "x"}], "kwargs": {}},
  )" + output_of(R"({"node": "add"})"));
  EXPECT_EQ(parse_error(text),
            "g.json: node 'add' field 'kwargs.other[0]': reference to node "
            "'relu', which is not defined before this node");
}

TEST(GraphFileErrors, ADanglingReferenceInATupleNamesTheWholePath) {
  std::string text = file_with(std::string(kX) + "," + R"(
    {"name": "cat", "op": "call_function", "target": "torch.cat",
     "args": [{"tuple": [{"node": "x"}, {"node": "z"}]}], "kwargs": {}},
  )" + output_of(R"({"node": "cat"})"));
  EXPECT_EQ(parse_error(text),
            "g.json: node 'cat' field 'args[0].tuple[1]': reference to node "
            "'z', which is not defined before this node");
}

TEST(GraphFileErrors, AMissingOutputIsReported) {
  EXPECT_EQ(parse_error(file_with(kX)),
            "g.json: node 'x': the last node must be the output node");
  EXPECT_EQ(parse_error(file_with("")),
            "g.json: file: the graph has no output node (exactly one, last, "
            "is required)");
}

TEST(GraphFileErrors, TheOutputMustBeLast) {
  std::string text = file_with(output_of("null") + "," + kX);
  EXPECT_EQ(parse_error(text),
            "g.json: node 'output': the output node must be the last node");
}

TEST(GraphFileErrors, DuplicateNamesNameTheNode) {
  std::string text = file_with(std::string(kX) + "," + kX + "," +
                               output_of(R"({"node": "x"})"));
  EXPECT_EQ(parse_error(text), "g.json: node 'x': duplicate node name");
}

TEST(GraphFileErrors, ANameTorchFxWouldNotGiveIsRefused) {
  std::string text = file_with(
      R"({"name": "sum", "op": "placeholder", "target": "sum", "args": [],
          "kwargs": {}},)" +
      output_of("null"));
  EXPECT_EQ(parse_error(text),
            "g.json: node 'sum': 'sum' is not a legal Python name for a node "
            "(torch.fx would name it 'sum_1')");
}

TEST(GraphFileErrors, MissingFieldsNameTheNode) {
  EXPECT_EQ(parse_error(file_with(
                R"({"name": "x", "op": "placeholder", "target": "x",
                    "kwargs": {}},)" +
                output_of("null"))),
            "g.json: node 'x': field 'args' is missing");
  EXPECT_EQ(parse_error(file_with(
                R"({"op": "placeholder", "target": "x", "args": [],
                    "kwargs": {}},)" +
                output_of("null"))),
            "g.json: node #0: field 'name' must be a non-empty string");
  EXPECT_EQ(parse_error(file_with(
                R"({"name": "x", "op": "placeholder", "args": [],
                    "kwargs": {}},)" +
                output_of("null"))),
            "g.json: node 'x': field 'target' must be a string");
}

TEST(GraphFileErrors, UnknownNodeFieldsAreRefused) {
  EXPECT_EQ(parse_error(file_with(
                R"({"name": "x", "op": "placeholder", "target": "x",
                    "args": [], "kwargs": {}, "users": 1},)" +
                output_of("null"))),
            "g.json: node 'x': unknown field 'users'");
}

TEST(GraphFileErrors, BadTaggedArgumentsNameTheField) {
  auto with_arg = [](const std::string& arg) {
    return file_with(std::string(kX) + "," +
                     R"({"name": "f", "op": "call_function",
                         "target": "torch.f", "args": [)" +
                     arg + R"(], "kwargs": {}},)" +
                     output_of(R"({"node": "f"})"));
  };
  EXPECT_EQ(parse_error(with_arg(R"({"float": "big"})")),
            "g.json: node 'f' field 'args[0]': 'float' must be \"inf\", "
            "\"-inf\" or \"nan\", not \"big\"");
  EXPECT_EQ(parse_error(with_arg(R"({"complex": 1})")),
            "g.json: node 'f' field 'args[0]': unknown argument tag "
            "'complex'");
  EXPECT_EQ(parse_error(with_arg(R"({"slice": [1, 2]})")),
            "g.json: node 'f' field 'args[0]': 'slice' must hold [start, "
            "stop, step]");
  EXPECT_THAT(parse_error(with_arg(R"({"node": "x", "extra": 1})")),
              HasSubstr("node 'f' field 'args[0]': an object argument must "
                        "have exactly one key"));
}

TEST(GraphFileErrors, OutputShapeIsChecked) {
  EXPECT_EQ(parse_error(file_with(
                R"({"name": "output", "op": "output", "target": "output",
                    "args": [1, 2], "kwargs": {}})")),
            "g.json: node 'output': an output node has exactly one arg (the "
            "returned value) and no kwargs");
}

TEST(GraphFileErrors, BadModulesNameTheModule) {
  std::string text = R"({"format": "fx-graph", "version": 1, "nodes": [)" +
                     output_of("null") +
                     R"(], "modules": {"layer": {"config": {}}}})";
  EXPECT_EQ(parse_error(text),
            "g.json: module 'layer': field 'type' must be a string");
}

TEST(GraphFileErrors, NothingIsBuiltOnFailure) {
  std::string text = file_with(std::string(kX) + "," + R"(
    {"name": "add", "op": "call_function", "target": "operator.add",
     "args": [{"node": "x"}, {"node": "y"}], "kwargs": {}},
  )" + output_of(R"({"node": "add"})"));
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "g.json");
  EXPECT_FALSE(file.ok());
}

}  // namespace
}  // namespace fx
