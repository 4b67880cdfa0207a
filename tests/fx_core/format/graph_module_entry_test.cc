// Child GraphModules as MODULE entries of an fx-graph file (type
// torch.fx.graph_module.GraphModule, config = GraphModule's constructor
// arguments in ARG encoding: root, graph, class_name): read with their own
// node names, nested, written back byte for byte, and malformed ones refused
// with the module and node at fault named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "fx_core/format/graph_json.h"
#include "fx_core/ir/graph.h"

namespace fx {
namespace {

using ::testing::HasSubstr;

// A node as a dict ARG (the form a child's config.graph holds).
std::string node_arg(const std::string& name, const std::string& op,
                     const std::string& target, const std::string& args) {
  return R"({"dict": {"name": ")" + name + R"(", "op": ")" + op +
         R"(", "target": ")" + target + R"(", "args": [)" + args +
         R"(], "kwargs": {"dict": {}}}})";
}

// fused_0(x) = relu(lin(x)), lin a Linear inside the child; `inner` replaces
// the child's relu node when given.
std::string file_with_child(const std::string& root, const std::string& graph) {
  return R"({"format": "fx-graph", "version": 1, "nodes": [
    {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
    {"name": "fused_0", "op": "call_module", "target": "fused_0",
     "args": [{"node": "x"}], "kwargs": {}},
    {"name": "output", "op": "output", "target": "output",
     "args": [{"node": "fused_0"}], "kwargs": {}}],
   "modules": {"fused_0": {"type": "torch.fx.graph_module.GraphModule",
     "config": {"root": )" +
         root + R"(, "graph": [)" + graph + R"(], "class_name": "fused_0"},
     "training": true}}})";
}

const std::string kLinearRoot =
    R"({"dict": {"lin": {"dict": {"type": "torch.nn.Linear", "config":
         {"dict": {"in_features": 4, "out_features": 2, "bias": true}},
         "training": false}}}})";

std::string child_graph(const std::string& relu_args = R"({"node": "lin"})") {
  return node_arg("x", "placeholder", "x", "") + "," +
         node_arg("lin", "call_module", "lin", R"({"node": "x"})") + "," +
         node_arg("relu", "call_function", "torch.relu", relu_args) + "," +
         node_arg("output", "output", "output", R"({"node": "relu"})");
}

std::string parse_error(const std::string& text) {
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "g.json");
  return file.ok() ? "" : std::string(file.status().message());
}

TEST(GraphModuleEntry, ReadsTheChildsGraphAndModules) {
  absl::StatusOr<GraphFile> file =
      parse_graph_json(file_with_child(kLinearRoot, child_graph()), "g.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->modules.size(), 1u);
  const ModuleSpec& spec = file->modules[0].second;
  EXPECT_EQ(spec.type, kGraphModuleType);
  EXPECT_TRUE(spec.training);
  EXPECT_TRUE(spec.config.empty());
  ASSERT_NE(spec.graph_module, nullptr);
  EXPECT_EQ(spec.graph_module->class_name, "fused_0");
  ASSERT_EQ(spec.graph_module->modules.size(), 1u);
  EXPECT_EQ(spec.graph_module->modules[0].first, "lin");
  EXPECT_EQ(spec.graph_module->modules[0].second.type, "torch.nn.Linear");
  EXPECT_FALSE(spec.graph_module->modules[0].second.training);
  // torch.fx prints the same graph built with its Graph API so.
  EXPECT_EQ(spec.graph_module->graph->str(),
            "graph():\n"
            "    %x : [num_users=1] = placeholder[target=x]\n"
            "    %lin : [num_users=1] = call_module[target=lin](args = (%x,), "
            "kwargs = {})\n"
            "    %relu : [num_users=1] = call_function[target=torch.relu]("
            "args = (%lin,), kwargs = {})\n"
            "    return relu");
}

TEST(GraphModuleEntry, NestedChildrenRoundTripByteForByte) {
  // fused_0's root holds another GraphModule (a fusion of a fusion).
  std::string inner =
      R"({"dict": {"type": "torch.fx.graph_module.GraphModule", "config":
           {"dict": {"root": )" +
      kLinearRoot + R"(, "graph": [)" + child_graph() +
      R"(], "class_name": "inner"}}, "training": false}})";
  std::string graph =
      node_arg("x", "placeholder", "x", "") + "," +
      node_arg("inner", "call_module", "inner", R"({"node": "x"})") + "," +
      node_arg("output", "output", "output", R"({"node": "inner"})");
  absl::StatusOr<GraphFile> file = parse_graph_json(
      file_with_child(R"({"dict": {"inner": )" + inner + "}}", graph), "g");
  ASSERT_TRUE(file.ok()) << file.status().message();
  const ChildGraphModule& outer = *file->modules[0].second.graph_module;
  ASSERT_EQ(outer.modules.size(), 1u);
  ASSERT_NE(outer.modules[0].second.graph_module, nullptr);
  EXPECT_EQ(outer.modules[0].second.graph_module->class_name, "inner");
  std::string written = to_graph_json(*file);
  absl::StatusOr<GraphFile> again = parse_graph_json(written, "again");
  ASSERT_TRUE(again.ok()) << again.status().message() << written;
  EXPECT_EQ(to_graph_json(*again), written);
  EXPECT_THAT(written, HasSubstr("\"type\": \"torch.fx.graph_module."
                                 "GraphModule\",\n   \"config\": {\n"
                                 "    \"root\": {\n     \"dict\": {"));
}

TEST(GraphModuleEntry, ChildNodeNamesAreTheirOwn) {
  // The child's `x` is not the parent's: a reference to a parent-only node
  // dangles.
  std::string msg = parse_error(
      file_with_child(kLinearRoot, child_graph(R"({"node": "fused_0"})")));
  EXPECT_THAT(msg,
              HasSubstr("module 'fused_0': config.graph: node 'relu' field "
                        "'args[0]': reference to node 'fused_0'"));
}

TEST(GraphModuleEntry, MalformedChildrenNameTheModuleAndPlace) {
  EXPECT_THAT(
      parse_error(file_with_child(kLinearRoot, "")),
      HasSubstr("module 'fused_0': config.graph: graph: no output node"));
  EXPECT_THAT(
      parse_error(file_with_child(kLinearRoot, R"({"name": "x"})")),
      HasSubstr("module 'fused_0': config.graph: node #0: must be a dict ARG"));
  EXPECT_THAT(
      parse_error(file_with_child(R"({"lin": {}})", child_graph())),
      HasSubstr("module 'fused_0': config.root: root: must be a dict ARG"));
  EXPECT_THAT(
      parse_error(file_with_child(R"({"dict": {"lin": {"dict": {"type": 3}}}})",
                                  child_graph())),
      HasSubstr(
          "module 'fused_0': config.root: module 'lin': field 'type' must be "
          "a string"));
  std::string no_graph = R"({"format": "fx-graph", "version": 1, "nodes": [
    {"name": "output", "op": "output", "target": "output", "args": [null],
     "kwargs": {}}],
    "modules": {"m": {"type": "torch.fx.graph_module.GraphModule",
      "config": {"root": {"dict": {}}, "class_name": "m"}}}})";
  EXPECT_THAT(parse_error(no_graph),
              HasSubstr("module 'm': config.graph must be an array"));
  std::string extra = no_graph;
  extra.replace(extra.find("\"class_name\""), 0, "\"tracer\": 1, ");
  EXPECT_THAT(parse_error(extra),
              HasSubstr("unknown GraphModule argument 'tracer'"));
  std::string kwargs_plain = child_graph();
  kwargs_plain.replace(kwargs_plain.find(R"("kwargs": {"dict": {}})"),
                       std::string(R"("kwargs": {"dict": {}})").size(),
                       R"("kwargs": {})");
  EXPECT_THAT(
      parse_error(file_with_child(kLinearRoot, kwargs_plain)),
      HasSubstr("config.graph: node #0 field 'kwargs': must be a dict ARG"));
}

}  // namespace
}  // namespace fx
