// Issue 34, "nothing executable from data": every string a graph file gives
// for what generated code names (targets, node and parameter names, types,
// module paths and types, classes, pytree specs) is checked against the
// grammar of what it names (fx_core/format/code_names.h) when the file is
// read, so no command ever prints or runs code made from it. Each injection
// form goes into each field and is refused with an error naming the place;
// the names torch.fx and the SDK really write stay accepted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fx_core/format/code_names.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/ir/graph.h"

namespace fx {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::ordered_json;

// Text that would run a statement, or name something else, if generated
// code held it as it is.
const std::vector<std::string>& injections() {
  static const std::vector<std::string> kForms = {
      "torch.relu;__import__('os').system('touch /tmp/pwned')",   // semicolon
      "torch.relu\n__import__('os').system('touch /tmp/pwned')",  // newline
      "torch.relu\r\nimport os",                                  // CR LF
      "torch.relu(__import__('os').system('x'))or torch.relu",    // call
      "torch.relu\")\nprint(\"x",                                 // quotes
      "torch.relu'",                                              // quote
      "torch.relu\\",                                             // backslash
      "builtins.__import__",                                      // dunder
      "torch.Tensor.__subclasses__",                              // dunder
      "__import__",                                               // dunder
      "__class__",                                                // dunder
      "f\"{__import__('os').system('x')}\"",                      // f-string
      "\xef\xbd\x85\xef\xbd\x96\xef\xbd\x81\xef\xbd\x8c",  // fullwidth "eval"
      "torch.r\xd0\xb5lu",  // Cyrillic "е" in relu
      "torch..relu",
      "torch.",
      "",
  };
  return kForms;
}

// x -> relu (call_function) -> clamp (call_method) -> lin (call_module),
// with p (get_attr), a NamedTuple argument and a pytree codegen.
Json legit_document() {
  return Json::parse(R"({"format": "fx-graph", "version": 1, "nodes": [
    {"name": "x", "op": "placeholder", "target": "x", "args": [],
     "kwargs": {}, "type": "torch.Tensor", "type_text": "torch.Tensor"},
    {"name": "p", "op": "get_attr", "target": "sub.0.p", "args": [],
     "kwargs": {}},
    {"name": "relu", "op": "call_function", "target": "torch.relu",
     "args": [{"node": "x"}], "kwargs": {"inplace": false}},
    {"name": "clamp", "op": "call_method", "target": "clamp",
     "args": [{"node": "relu"}], "kwargs": {}},
    {"name": "lin", "op": "call_module", "target": "sub.0.lin",
     "args": [{"node": "clamp"}], "kwargs": {}},
    {"name": "pair", "op": "call_function", "target": "__main__.make",
     "args": [{"namedtuple": {"class": "__main__.Pair", "fields": ["a"],
                              "items": [{"node": "p"}]}}], "kwargs": {}},
    {"name": "output", "op": "output", "target": "output",
     "args": [{"node": "lin"}], "kwargs": {}}],
   "modules": {"sub.0.lin": {"type": "torch.nn.Linear",
                             "config": {"in_features": 2,
                                        "out_features": 2}}},
   "weight_kinds": {"sub.0.p": "parameter"},
   "pytree": {"orig_args": ["x"],
              "in_spec": {"type": "tuple", "children": [
                {"type": "namedtuple",
                 "context": {"class": "__main__.Point", "fields": ["x"]},
                 "children": ["*"]}]},
              "out_spec": null}})");
}

Json& node(Json& doc, const std::string& name) {
  for (Json& n : doc["nodes"]) {
    if (n["name"] == name) return n;
  }
  ADD_FAILURE() << "no node " << name;
  return doc;
}

std::string parse_error(const Json& doc) {
  absl::StatusOr<GraphFile> file = parse_graph_json(doc.dump(), "g.json");
  return file.ok() ? "" : std::string(file.status().message());
}

// A field a test writes text into, and the place its error must name.
struct Field {
  const char* what;
  std::string place;
  void (*set)(Json& doc, const std::string& text);
};

const std::vector<Field>& fields() {
  static const std::vector<Field> kFields = {
      {"call_function target", "node 'relu': field 'target'",
       [](Json& d, const std::string& t) { node(d, "relu")["target"] = t; }},
      {"call_method target", "node 'clamp': field 'target'",
       [](Json& d, const std::string& t) { node(d, "clamp")["target"] = t; }},
      {"get_attr target", "node 'p': field 'target'",
       [](Json& d, const std::string& t) { node(d, "p")["target"] = t; }},
      {"call_module target", "node 'lin': field 'target'",
       [](Json& d, const std::string& t) { node(d, "lin")["target"] = t; }},
      {"placeholder target", "node 'x': field 'target'",
       [](Json& d, const std::string& t) { node(d, "x")["target"] = t; }},
      {"node name", "node ",
       [](Json& d, const std::string& t) { node(d, "clamp")["name"] = t; }},
      {"type", "node 'x': field 'type",
       [](Json& d, const std::string& t) { node(d, "x")["type"] = t; }},
      {"kwargs key", "node 'relu': field 'kwargs'",
       [](Json& d, const std::string& t) {
         node(d, "relu")["kwargs"] = Json{{t, 1}};
       }},
      {"NamedTuple class", "node 'pair' field 'args[0]'",
       [](Json& d, const std::string& t) {
         node(d, "pair")["args"][0]["namedtuple"]["class"] = t;
       }},
      {"NamedTuple field", "node 'pair' field 'args[0]'",
       [](Json& d, const std::string& t) {
         node(d, "pair")["args"][0]["namedtuple"]["fields"][0] = t;
       }},
      {"module type", "module 'sub.0.lin': field 'type'",
       [](Json& d, const std::string& t) {
         d["modules"]["sub.0.lin"]["type"] = t;
       }},
      {"module path", "module ",
       [](Json& d, const std::string& t) {
         d["modules"] = Json{{t, d["modules"]["sub.0.lin"]}};
       }},
      {"weight_kinds key", "field 'weight_kinds'",
       [](Json& d, const std::string& t) {
         d["weight_kinds"] = Json{{t, "buffer"}};
       }},
      {"pytree orig_args", "field 'pytree'",
       [](Json& d, const std::string& t) { d["pytree"]["orig_args"][0] = t; }},
      {"pytree namedtuple class", "field 'pytree' in_spec.children[0]",
       [](Json& d, const std::string& t) {
         d["pytree"]["in_spec"]["children"][0]["context"]["class"] = t;
       }},
      {"pytree namedtuple field", "field 'pytree' in_spec.children[0]",
       [](Json& d, const std::string& t) {
         d["pytree"]["in_spec"]["children"][0]["context"]["fields"][0] = t;
       }},
  };
  return kFields;
}

TEST(CodeInjection, TheLegitDocumentReads) {
  EXPECT_EQ(parse_error(legit_document()), "");
}

TEST(CodeInjection, EveryFormIsRefusedInEveryFieldNamingThePlace) {
  for (const Field& field : fields()) {
    for (const std::string& text : injections()) {
      Json doc = legit_document();
      field.set(doc, text);
      std::string error = parse_error(doc);
      EXPECT_THAT(error, HasSubstr(field.place))
          << field.what << " holding \"" << text << "\" read as legit";
    }
  }
}

TEST(CodeInjection, TypeTextIsOneLineOfPrintableAscii) {
  for (const std::string text :
       {"torch.Tensor\n    %y : [num_users=0] = placeholder[target=y]",
        "torch.Tensor\r", "torch.Tensor\x1b[2J", "torch.T\xd0\xb5nsor"}) {
    Json doc = legit_document();
    node(doc, "x")["type_text"] = text;
    EXPECT_EQ(parse_error(doc),
              "g.json: node 'x': field 'type_text' must be printable ASCII on "
              "one line");
  }
  Json doc = legit_document();
  node(doc, "x")["type_text"] = "<class 'torch.Tensor'>";
  EXPECT_EQ(parse_error(doc), "");
}

TEST(CodeInjection, TheErrorShowsTheTextEscaped) {
  Json doc = legit_document();
  node(doc, "relu")["target"] = "torch.relu\nimport os";
  EXPECT_EQ(parse_error(doc),
            "g.json: node 'relu': field 'target': 'torch.relu\\nimport os' is "
            "not a qualified Python name (dotted ASCII identifiers such as "
            "operator.add or torch.relu, no dunder attributes)");
}

// Names torch.fx and the SDK write keep reading (and the code holds them).
TEST(CodeInjection, RealNamesAreAccepted) {
  for (const std::string target :
       {"operator.add", "builtins.getattr", "torch.ops.aten.add.Tensor",
        "torch._C._nn.linear", "__main__.fn", "m.f.<locals>.g",
        "test_mod.<lambda>",
        "torchvision.ops.stochastic_depth.stochastic_depth", "my_fn"}) {
    Json doc = legit_document();
    node(doc, "relu")["target"] = target;
    EXPECT_EQ(parse_error(doc), "") << target;
  }
  for (const std::string type :
       {"typing_Tuple[int, ...]", "typing.List[torch.Tensor]", "Literal[1]",
        "__main__.Pair", "typing_Union[torch.Tensor,NoneType]"}) {
    Json doc = legit_document();
    node(doc, "x")["type"] = type;
    EXPECT_EQ(parse_error(doc), "") << type;
  }
  for (const std::string cls :
       {"torch.fx.graph_module.GraphModule.__new__.<locals>.GraphModuleImpl",
        "__main__.M", "m.f.<locals>.M#7fa0"}) {
    Json doc = legit_document();
    doc["modules"]["sub.0.lin"]["type"] = cls;
    EXPECT_EQ(parse_error(doc), "") << cls;
  }
  Json doc = legit_document();
  node(doc, "p")["target"] = "sub.block1-0.p";  // torchvision's regnet
  node(doc, "x")["target"] = "**kwargs";
  node(doc, "clamp")["target"] = "class";  // a keyword: getattr(x, "class")
  EXPECT_EQ(parse_error(doc), "");
}

TEST(CodeNames, TheGrammar) {
  EXPECT_TRUE(is_ascii_identifier("_a1"));
  EXPECT_FALSE(is_ascii_identifier("1a"));
  EXPECT_FALSE(is_ascii_identifier("\xc3\xa9"));
  EXPECT_TRUE(is_dunder_name("__init__"));
  EXPECT_FALSE(is_dunder_name("____"));
  EXPECT_FALSE(is_dunder_name("__x"));
  EXPECT_TRUE(is_qualified_name("__main__.f"));
  EXPECT_FALSE(is_qualified_name("a.__main__"));
  EXPECT_FALSE(is_qualified_name("<locals>.f"));
  EXPECT_FALSE(is_qualified_name("m.P#7f"));
  EXPECT_TRUE(is_qualified_name("m.P#7f", /*class_suffix=*/true));
  EXPECT_FALSE(is_qualified_name("m.P#", /*class_suffix=*/true));
  EXPECT_FALSE(is_qualified_name("torch.relu #"));
  EXPECT_TRUE(is_attribute_path("layer1.0.conv1"));
  EXPECT_TRUE(is_attribute_path("trunk_output.block1.block1-0"));
  EXPECT_FALSE(is_attribute_path("layer1.__dict__"));
  EXPECT_FALSE(is_attribute_path("a\"b"));
  EXPECT_FALSE(is_attribute_path("a'b"));
  EXPECT_FALSE(is_attribute_path("a\\b"));
  EXPECT_FALSE(is_attribute_path("a\nb"));
  EXPECT_FALSE(is_plain_name("__call__"));
  // torch.fx records x.__call__(...) (test_fx's test_annotation_with_future)
  // and other operator methods called by name; never the dunders that walk
  // from an object to the interpreter (x.__getattribute__("__init__")...).
  for (const char* name :
       {"clamp", "__call__", "__getitem__", "__add__", "__radd__", "__iadd__",
        "__rmatmul__", "__neg__", "__len__", "__eq__"}) {
    EXPECT_TRUE(is_method_name(name)) << name;
  }
  for (const char* name :
       {"__getattribute__", "__getattr__", "__setattr__", "__class__",
        "__init__", "__new__", "__reduce__", "__reduce_ex__", "__dict__",
        "__globals__", "__subclasses__", "__import__", "__xadd__", "__rcall__",
        "a.b", "x y"}) {
    EXPECT_FALSE(is_method_name(name)) << name;
  }
  EXPECT_FALSE(is_parameter_name("*__x__"));
  EXPECT_TRUE(is_type_expression("typing_Dict[str, typing_List[int]]"));
  EXPECT_FALSE(is_type_expression("List[int]]"));
  EXPECT_FALSE(is_type_expression("torch.__class__"));
  EXPECT_FALSE(is_type_expression("'torch.Tensor'"));
  EXPECT_TRUE(is_printable_text("<class 'torch.Tensor'>"));
  EXPECT_FALSE(is_printable_text("a\tb"));
}

}  // namespace
}  // namespace fx
