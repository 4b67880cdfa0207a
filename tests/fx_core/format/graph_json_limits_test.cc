// Hostile fx-graph JSON files (issue 22): numbers out of range, unknown
// torch names, duplicate keys, references that would make cycles, deep
// nesting and paths that are not regular files. Each is a clear error that
// names the file and the place, never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/symbolic/work_budget.h"

namespace fx {
namespace {

using ::testing::HasSubstr;

// A graph `x -> output(VALUE)`.
std::string graph_returning(const std::string& value) {
  return R"({"format": "fx-graph", "version": 1, "nodes": [
    {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
    {"name": "output", "op": "output", "target": "output", "args": [)" +
         value + R"(], "kwargs": {}}]})";
}

std::string parse_error(const std::string& text) {
  absl::StatusOr<GraphFile> file = parse_graph_json(text, "g.json");
  if (file.ok()) return "";
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(file.status().message());
}

TEST(GraphFileLimits, ANumberBeyondADoubleIsAnError) {
  EXPECT_EQ(parse_error(graph_returning("[1, 1e999]")),
            "g.json: number 1e999 out of range (beyond a double) at "
            "nodes[1].args[0][1]");
}

TEST(GraphFileLimits, IntegersBeyond64BitsAreErrorsNotFloats) {
  EXPECT_EQ(parse_error(graph_returning("123456789012345678901234567890")),
            "g.json: integer 123456789012345678901234567890 out of range "
            "(beyond 64 bits) at nodes[1].args[0]");
  EXPECT_EQ(parse_error(graph_returning("18446744073709551615")),
            "g.json: node 'output' field 'args[0]': integer "
            "18446744073709551615 out of range (beyond a 64-bit signed int)");
}

TEST(GraphFileLimits, UnknownTorchNamesAreRefused) {
  EXPECT_EQ(parse_error(graph_returning(R"({"dtype": "torch.float33"})")),
            "g.json: node 'output' field 'args[0]': unknown dtype "
            "'torch.float33' (torch 1.13 has no such dtype; expected e.g. "
            "\"torch.float32\")");
  EXPECT_EQ(parse_error(graph_returning(R"([{"device": "gpu:0"}])")),
            "g.json: node 'output' field 'args[0][0]': unknown device 'gpu:0' "
            "(torch 1.13 has no such device; expected e.g. \"cpu\" or "
            "\"cuda:0\")");
  EXPECT_THAT(parse_error(graph_returning(R"({"layout": "torch.dense"})")),
              HasSubstr("unknown layout 'torch.dense'"));
  EXPECT_THAT(
      parse_error(graph_returning(R"({"qscheme": "torch.per_tensor"})")),
      HasSubstr("unknown qscheme 'torch.per_tensor'"));
  EXPECT_THAT(
      parse_error(graph_returning(R"({"memory_format": "channels_last"})")),
      HasSubstr("unknown memory_format 'channels_last'"));
  EXPECT_EQ(parse_error(graph_returning(
                R"([{"dtype": "torch.float16"}, {"device": "cuda:1"},
                    {"layout": "torch.strided"},
                    {"qscheme": "torch.per_tensor_affine"},
                    {"memory_format": "torch.channels_last"}])")),
            "");
}

TEST(GraphFileLimits, DuplicateKeysAreRefused) {
  EXPECT_EQ(parse_error(R"({"format": "fx-graph", "version": 1, "nodes": [
    {"name": "x", "op": "placeholder", "target": "x", "target": "y",
     "args": [], "kwargs": {}}]})"),
            "g.json: duplicate key 'target' at nodes[0]");
  EXPECT_EQ(parse_error(graph_returning(R"({"dict": {"a": 1, "a": 2}})")),
            "g.json: duplicate key 'a' at nodes[1].args[0].dict");
}

// References go to earlier nodes only, so no graph read has a cycle.
TEST(GraphFileLimits, ReferencesThatWouldMakeACycleAreRefused) {
  EXPECT_EQ(parse_error(R"({"format": "fx-graph", "version": 1, "nodes": [
    {"name": "a", "op": "call_function", "target": "torch.relu",
     "args": [{"node": "b"}], "kwargs": {}},
    {"name": "b", "op": "call_function", "target": "torch.relu",
     "args": [{"node": "a"}], "kwargs": {}},
    {"name": "output", "op": "output", "target": "output",
     "args": [{"node": "b"}], "kwargs": {}}]})"),
            "g.json: node 'a' field 'args[0]': reference to node 'b', which "
            "is not defined before this node");
  EXPECT_EQ(parse_error(R"({"format": "fx-graph", "version": 1, "nodes": [
    {"name": "a", "op": "call_function", "target": "torch.relu",
     "args": [{"node": "a"}], "kwargs": {}},
    {"name": "output", "op": "output", "target": "output",
     "args": [{"node": "a"}], "kwargs": {}}]})"),
            "g.json: node 'a' field 'args[0]': reference to node 'a', which "
            "is not defined before this node");
}

TEST(GraphFileLimits, FiftyThousandNestedListsAreAnErrorNotACrash) {
  std::string deep = std::string(50000, '[') + std::string(50000, ']');
  EXPECT_THAT(parse_error(graph_returning(deep)),
              HasSubstr("g.json: nested deeper than 1000 levels at "
                        "nodes[1].args[0][0][0]"));
}

TEST(GraphFileLimits, NestingUpToTheLimitReadsPrintsAndGeneratesCode) {
  // file, nodes, node, args: 4 levels; 996 lists more make 1000.
  std::string deep = std::string(996, '[') + "1" + std::string(996, ']');
  absl::StatusOr<GraphFile> file =
      parse_graph_json(graph_returning(deep), "g.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_THAT(file->graph->str(), HasSubstr("[[[[1]]]]"));
  EXPECT_THAT(file->graph->python_code("self").src, HasSubstr("[[[[1]]]]"));
  EXPECT_THAT(to_graph_json(*file), HasSubstr("1"));
  std::string deeper = "[" + deep + "]";
  EXPECT_THAT(parse_error(graph_returning(deeper)),
              HasSubstr("nested deeper than 1000 levels"));
}

TEST(GraphFileLimits, OnlyRegularFilesAreRead) {
  absl::StatusOr<GraphFile> zero = read_graph_file("/dev/zero");
  EXPECT_EQ(zero.status().message(),
            "cannot read '/dev/zero': not a regular file (a character device)");
  std::string fifo = ::testing::TempDir() + "graph_limits_fifo";
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  absl::StatusOr<GraphFile> from_fifo = read_graph_file(fifo);  // no hang
  EXPECT_EQ(from_fifo.status().message(),
            "cannot read '" + fifo + "': not a regular file (a FIFO)");
  std::remove(fifo.c_str());
  EXPECT_THAT(read_graph_file(::testing::TempDir()).status().message(),
              HasSubstr("not a regular file (a directory)"));
}

// Issue 22: text that generated code writes as is must be what it claims.
TEST(GraphFileLimits, TextThatCodeWritesAsIsIsChecked) {
  auto with_x = [](const std::string& x_fields) {
    return R"({"format": "fx-graph", "version": 1, "nodes": [
      {"name": "x", "op": "placeholder", )" +
           x_fields + R"(},
      {"name": "output", "op": "output", "target": "output",
       "args": [{"node": "x"}], "kwargs": {}}]})";
  };
  EXPECT_EQ(parse_error(with_x(
                R"("target": "x):\n import os #", "args": [], "kwargs": {})")),
            "g.json: node 'x': field 'target': 'x):\\n import os #' is not "
            "a parameter name (x, *args or **kwargs)");
  EXPECT_EQ(
      parse_error(with_x(R"("target": "**kw", "args": [], "kwargs": {})")), "");
  EXPECT_EQ(
      parse_error(with_x(
          R"("target": "x", "args": [], "kwargs": {}, "type": "int) -> None: pass\n#")")),
      "g.json: node 'x': field 'type': 'int) -> None: pass\\n#' is not a "
      "type expression (dotted ASCII names, [ ] and commas)");
  EXPECT_EQ(
      parse_error(with_x(
          R"("target": "x", "args": [], "kwargs": {}, "type": "typing.Tuple[torch.Tensor, int]")")),
      "");
  EXPECT_THAT(parse_error(R"({"format": "fx-graph", "version": 1, "nodes": [
    {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
    {"name": "r", "op": "call_function", "target": "torch.relu",
     "args": [{"node": "x"}], "kwargs": {"a=print(1),b": 1}},
    {"name": "output", "op": "output", "target": "output",
     "args": [{"node": "r"}], "kwargs": {}}]})"),
              HasSubstr("node 'r': field 'kwargs': 'a=print(1),b' is not a "
                        "Python identifier"));
}

// Mod((a0 + ... + a59)*(b0 + ... + b59), c0 + ... + c19 + 1): a kilobyte
// that costs about 0.7 million term operations to simplify, within one
// expression's budget.
std::string costly_symint() {
  std::vector<std::string> sums;
  for (const char* x : {"a", "b", "c"}) {
    std::string s;
    for (int i = 0; i < (*x == 'c' ? 20 : 60); ++i) {
      s += (i ? " + " : "") + std::string(x) + std::to_string(i);
    }
    sums.push_back("(" + s + (*x == 'c' ? " + 1)" : ")"));
  }
  return "Mod(" + sums[0] + "*" + sums[1] + ", " + sums[2] + ")";
}

// Placeholders x0.. whose meta.val is the costly expression.
std::string graph_of_costly_symints(int n) {
  std::string nodes;
  for (int i = 0; i < n; ++i) {
    const std::string x = "x" + std::to_string(i);
    nodes += R"({"name": ")" + x + R"(", "op": "placeholder", "target": ")" +
             x +
             R"(", "args": [], "kwargs": {}, "meta": {"val": {"symint": ")" +
             costly_symint() + R"("}}},)";
  }
  return R"({"format": "fx-graph", "version": 1, "nodes": [)" + nodes +
         R"({"name": "output", "op": "output", "target": "output",
             "args": [null], "kwargs": {}}]})";
}

// One work budget covers every expression of a file (work_budget.h): what
// one expression may cost, a file of many such may not.
TEST(GraphFileLimits, SymbolicSimplificationHasOneBudgetPerFile) {
  EXPECT_EQ(parse_error(graph_of_costly_symints(1)), "");
  const std::string many = graph_of_costly_symints(2);
  EXPECT_THAT(parse_error(many),
              HasSubstr("node 'x1' field 'meta.val': 'symint' \"Mod((a0 + "));
  EXPECT_THAT(parse_error(many),
              HasSubstr("symbolic expression too costly to simplify: more "
                        "than " +
                        std::to_string(sym::parse_work_limit(many.size())) +
                        " term operations"));
}

}  // namespace
}  // namespace fx
