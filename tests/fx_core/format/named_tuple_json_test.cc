// The fx-graph format's NamedTuple and keyed-dict ARG forms (graph_json.h):
// round trips, the bytes written, and malformed values refused with the
// node and field named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "fx_core/format/graph_json.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"

namespace fx {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const NamedTupleType> pair_type(bool fields_repr) {
  auto type = std::make_shared<NamedTupleType>();
  type->name = "test_fx.Pair";
  type->fields = {"x", "y"};
  type->fields_repr = fields_repr;
  return type;
}

std::unique_ptr<Graph> named_tuple_graph() {
  auto graph = std::make_unique<Graph>();
  Graph& g = *graph;
  Node* inp = g.placeholder("inp");
  Node* fn = g.call_function(
      "test_fx.wrapped", {Argument::named_tuple(pair_type(true), {inp, 1.2})},
      {{"p2", Argument::named_tuple(pair_type(false), {3.4, inp})}});
  fn->mutable_meta().emplace_back("is_wrapped", Argument(true));
  g.output(Argument::keyed_dict(
      {{0, fn}, {"a", inp}, {-1.5, Argument::list({})}, {false, nullptr}}));
  return graph;
}

TEST(NamedTupleJson, RoundTripsTextCodeAndBytes) {
  std::unique_ptr<Graph> graph = named_tuple_graph();
  const Graph& g = *graph;
  std::string json = to_graph_json(g);
  absl::StatusOr<GraphFile> file = parse_graph_json(json, "nt");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->graph->str(), g.str());
  EXPECT_EQ(file->graph->python_code("self").src, g.python_code("self").src);
  EXPECT_EQ(to_graph_json(*file->graph), json);
  const Node* fn = file->graph->nodes().to_vector()[1];
  ASSERT_NE(fn->args()[0].named_tuple_type(), nullptr);
  EXPECT_EQ(*fn->args()[0].named_tuple_type(), *pair_type(true));
  const NamedTupleType* p2 = fn->kwargs()[0].second.named_tuple_type();
  ASSERT_NE(p2, nullptr);
  EXPECT_FALSE(p2->fields_repr);
  EXPECT_NE(file->graph->output_node()->args()[0].dict_keys(), nullptr);
}

// The layout is Python's json.dump(indent=1) of the same document.
TEST(NamedTupleJson, WritesTheDocumentedForms) {
  std::string json = to_graph_json(*named_tuple_graph());
  EXPECT_THAT(json, HasSubstr(R"(     "namedtuple": {
      "class": "test_fx.Pair",
      "fields": [
       "x",
       "y"
      ],
      "items": [
       {
        "node": "inp"
       },
       1.2
      ],
      "repr": "fields"
     })"));
  // A NamedTuple the graph text shows as the tuple has no "repr".
  EXPECT_THAT(json, HasSubstr(R"(      "items": [
       3.4,
       {
        "node": "inp"
       }
      ]
     })"));
  EXPECT_THAT(json, HasSubstr(R"(     "keyed_dict": [
      [
       0,
       {
        "node": "wrapped"
       }
      ],
      [
       "a",
       {
        "node": "inp"
       }
      ],
      [
       -1.5,
       []
      ],
      [
       false,
       null
      ]
     ])"));
}

// A file whose node `f` has `arg` as its one argument.
std::string file_with_arg(const std::string& arg) {
  return R"({"format": "fx-graph", "version": 1, "nodes": [
    {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
    {"name": "f", "op": "call_function", "target": "torch.f", "args": [)" +
         arg + R"(], "kwargs": {}},
    {"name": "output", "op": "output", "target": "output",
     "args": [{"node": "f"}], "kwargs": {}}]})";
}

std::string parse_error(const std::string& text) {
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "g.json");
  return file.ok() ? "" : std::string(file.status().message());
}

TEST(NamedTupleJson, AcceptsTheInProcessSuffixAndLocals) {
  absl::StatusOr<GraphFile> file = parse_graph_json(
      file_with_arg(R"({"namedtuple": {"class": "m.f.<locals>.P#7fa0",
          "fields": ["a"], "items": [{"node": "x"}], "repr": "tuple"}})"),
      "g.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_THAT(file->graph->python_code("self").src,
              HasSubstr("f = torch.f(m_f_locals_P(x,))"));
}

TEST(NamedTupleJson, MalformedNamedTuplesNameTheField) {
  const std::string where = "g.json: node 'f' field 'args[0]': ";
  EXPECT_THAT(parse_error(file_with_arg(R"({"namedtuple": [1]})")),
              HasSubstr(where + "'namedtuple' must hold {\"class\""));
  EXPECT_THAT(
      parse_error(file_with_arg(
          R"({"namedtuple": {"class": "m.P", "fields": ["a"], "items": []}})")),
      HasSubstr(where + "'namedtuple': 1 fields for 0 items"));
  EXPECT_THAT(
      parse_error(file_with_arg(
          R"({"namedtuple": {"class": "P", "fields": [], "items": []}})")),
      HasSubstr(where + "'namedtuple': class \"P\" is not a qualified"));
  EXPECT_THAT(parse_error(file_with_arg(
                  R"({"namedtuple": {"class": "m.P; import os", "fields": [],
              "items": []}})")),
              HasSubstr("is not a qualified Python name"));
  EXPECT_THAT(parse_error(file_with_arg(
                  R"({"namedtuple": {"class": "m.P#xyz", "fields": [],
                      "items": []}})")),
              HasSubstr("is not a qualified Python name"));
  EXPECT_THAT(parse_error(file_with_arg(
                  R"({"namedtuple": {"class": "m.P", "fields": ["a b"],
              "items": [1]}})")),
              HasSubstr(where + "'namedtuple': fields must be Python names"));
  EXPECT_THAT(parse_error(file_with_arg(
                  R"({"namedtuple": {"class": "m.P", "fields": [], "items": [],
              "repr": "custom"}})")),
              HasSubstr(where + "'namedtuple': repr must be"));
  EXPECT_THAT(parse_error(file_with_arg(
                  R"({"namedtuple": {"class": "m.P", "fields": [], "items": [],
              "code": "x"}})")),
              HasSubstr(where + "'namedtuple': unknown entry 'code'"));
  EXPECT_THAT(
      parse_error(file_with_arg(
          R"({"namedtuple": {"class": "m.P", "fields": ["a"],
              "items": [{"node": "nope"}]}})")),
      HasSubstr("field 'args[0].namedtuple.items[0]': reference to node "
                "'nope'"));
}

TEST(NamedTupleJson, MalformedKeyedDictsNameTheField) {
  const std::string where = "g.json: node 'f' field 'args[0]";
  EXPECT_THAT(parse_error(file_with_arg(R"({"keyed_dict": {"a": 1}})")),
              HasSubstr(where + "': 'keyed_dict' must hold an array"));
  EXPECT_THAT(parse_error(file_with_arg(R"({"keyed_dict": [[1]]})")),
              HasSubstr(where + ".keyed_dict[0]': must be a [KEY, VALUE]"));
  EXPECT_THAT(parse_error(file_with_arg(R"({"keyed_dict": [[null, 1]]})")),
              HasSubstr(where + ".keyed_dict[0]': a key must be a bool, int"));
  EXPECT_THAT(parse_error(file_with_arg(R"({"keyed_dict": [[[1], 1]]})")),
              HasSubstr("a key must be a bool, int, float or str"));
  EXPECT_THAT(parse_error(file_with_arg(R"({"keyed_dict": [[1, 1], [1, 2]]})")),
              HasSubstr(where + ".keyed_dict[1]': a key appears twice"));
}

}  // namespace
}  // namespace fx
