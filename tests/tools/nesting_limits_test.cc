// The `fx` command at the nesting limits of the files it reads. A graph
// argument nested as deep as a graph file may nest it (the JSON reader's
// 1000 levels) prints, generates code and runs to what Python torch
// computes; inputs nested as deep as a torch.save file may nest them (the
// pickle reader's 1000 levels) run and are written back as Python wrote
// them; 100,000 levels are an error naming the file and the place, not a
// stack overflow, and so is a value a run would build deeper than that. The
// files and goldens are written by Python torch at test time
// (tools/bench/make_resource_inputs.py, the generator of BENCHMARKS.md's
// resource measurements); without python3-torch every case is skipped.
#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/io/torch_save.h"
#include "tests/testing/python.h"
#include "tests/tools/fx_run.h"

namespace fx {
namespace {

using ::testing::HasSubstr;

using testing::Result;
using testing::run;

// "" when `a` and `b` are equal tensors in the same nesting of lists, else
// what differs. Iterative: the values nest 1000 levels deep.
std::string difference(const c10::IValue& a, const c10::IValue& b) {
  std::vector<std::pair<c10::IValue, c10::IValue>> todo = {{a, b}};
  while (!todo.empty()) {
    auto [x, y] = std::move(todo.back());
    todo.pop_back();
    if (x.isTensor() && y.isTensor()) {
      if (!at::equal(x.toTensor(), y.toTensor())) return "tensors differ";
    } else if (x.isList() && y.isList() &&
               x.toListRef().size() == y.toListRef().size()) {
      for (size_t i = 0; i < x.toListRef().size(); ++i) {
        todo.emplace_back(x.toListRef()[i], y.toListRef()[i]);
      }
    } else {
      return x.tagKind() + " against " + y.tagKind();
    }
  }
  return "";
}

class NestingLimits : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::have_python_torch()) return;
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/nesting";
    testing::run_python("tools/bench/make_resource_inputs.py",
                        {dir_, "--only",
                         "deep_limit,deep_100k,deep_runtime,deep_input_limit,"
                         "deep_input_100k"});
  }
  void SetUp() override {
    if (!testing::have_python_torch()) {
      GTEST_SKIP() << "python3-torch is not installed";
    }
  }
  static std::string path(const std::string& name, const std::string& file) {
    return dir_ + "/" + name + "/" + file;
  }
  // fx exec on the case `name`, its output written beside its input.
  static Result exec(const std::string& name) {
    return run({"exec", path(name, "graph.fx.json"), "--inputs",
                path(name, "input.pt"), "--outputs", path(name, "out.pt")});
  }
  // What fx exec wrote against what Python computed.
  static std::string output_difference(const std::string& name) {
    auto got = read_value_file(path(name, "out.pt"));
    auto want = read_value_file(path(name, "expected.pt"));
    if (!got.ok()) return std::string(got.status().message());
    if (!want.ok()) return std::string(want.status().message());
    return difference(*got, *want);
  }

 private:
  static inline std::string dir_;
};

TEST_F(NestingLimits, GraphArgumentAtTheLimitPrintsGeneratesCodeAndRuns) {
  Result printed = run({"print", path("deep_limit", "graph.fx.json")});
  EXPECT_EQ(printed.status, 0) << printed.err;
  EXPECT_THAT(printed.out, HasSubstr("[[[[%x]]]]"));
  Result code = run({"code", path("deep_limit", "graph.fx.json")});
  EXPECT_EQ(code.status, 0) << code.err;
  EXPECT_THAT(code.out, HasSubstr("[[[[x]]]]"));
  Result ran = exec("deep_limit");
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(output_difference("deep_limit"), "");
}

TEST_F(NestingLimits, GraphArgumentNestedAHundredThousandDeepIsAnError) {
  const std::string file = path("deep_100k", "graph.fx.json");
  const std::string where =
      file + ": nested deeper than 1000 levels at nodes[1].args[0][0]";
  for (const char* command : {"print", "code"}) {
    Result r = run({command, file});
    EXPECT_EQ(r.status, 1) << command;
    EXPECT_THAT(r.err, HasSubstr(where)) << command;
  }
  Result ran = exec("deep_100k");
  EXPECT_EQ(ran.status, 1);
  EXPECT_THAT(ran.err, HasSubstr("fx exec: " + where));
  EXPECT_EQ(ran.err.find(file), ran.err.rfind(file));  // named once
}

// Each node's argument is within the reader's limit, but nests the previous
// node's value 995 lists deeper: the value the run would build is refused
// where it passes 1000 levels, naming the node, instead of overflowing the
// stack when LibTorch frees it (recursively, one frame per level).
TEST_F(NestingLimits, ValueBuiltDeeperThanTheLimitAtRunTimeIsAnError) {
  Result ran = exec("deep_runtime");
  EXPECT_EQ(ran.status, 1);
  EXPECT_THAT(ran.err, HasSubstr("getitem_1"));
  EXPECT_THAT(ran.err, HasSubstr("a value nested deeper than 1000 levels of "
                                 "lists, tuples and dicts"));
}

TEST_F(NestingLimits, InputsAtTheLimitRunAndAreWrittenBack) {
  Result ran = exec("deep_input_limit");
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(output_difference("deep_input_limit"), "");
}

TEST_F(NestingLimits, InputsNestedAHundredThousandDeepAreAnError) {
  Result ran = exec("deep_input_100k");
  EXPECT_EQ(ran.status, 1);
  EXPECT_THAT(ran.err, HasSubstr(path("deep_input_100k", "input.pt") +
                                 ": not a readable torch.save file: bad "
                                 "pickle at byte "));
  EXPECT_THAT(ran.err, HasSubstr("containers nested deeper than 1000"));
}

}  // namespace
}  // namespace fx
