// Back to Python: a graph edited in C++ and written as a bundle is rebuilt by
// tools/torchfx_import.py as a torch.fx GraphModule that computes what the
// C++ GraphModule computed. Needs python3-torch at /usr/bin/python3
// (skipped with a message otherwise).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "fx_core/io/atomic_file.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module_file.h"
#include "tests/testing/python.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

using testing::have_python_torch;
using testing::runfile;

// Runs torchfx_import.py on `dir`; returns its exit status, output in *log.
int import_in_python(const std::string& dir, std::string* log) {
  std::string log_path = dir + "/import.log";
  std::string command = "/usr/bin/python3 " +
                        runfile("tools/torchfx_import.py") + " " + dir +
                        " --print > " + log_path + " 2>&1";
  int status = std::system(command.c_str());
  *log = testing::read_file(log_path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(PythonRoundTrip, GraphEditedInCppComputesTheSameInTorchFx) {
  if (!have_python_torch()) GTEST_SKIP() << "python3-torch is not installed";
  std::string ref = testing::reference_dir() + "/seed_mymodule/";
  auto gm = read_graph_module(ref + "graph.fx.json");
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  // The C++ edit: clamp -> relu, then a multiplication by 3 before output.
  Graph& g = (*gm)->graph();
  Node* clamp = g.find_nodes(Opcode::kCallMethod, "clamp")[0];
  clamp->set_target("relu");
  clamp->set_kwargs({});
  Node* tripled;
  {
    auto at_point = g.inserting_after(clamp);
    tripled = g.call_function("operator.mul", {clamp, Argument(3)});
  }
  clamp->replace_all_uses_with(tripled, [&](Node* u) { return u != tripled; });
  (*gm)->recompile();

  std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/edited";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(write_graph_module(**gm, dir + "/graph.fx.json").ok());
  auto inputs = read_value_file(ref + "input.pt");
  ASSERT_TRUE(inputs.ok()) << inputs.status().message();
  ASSERT_TRUE(write_value_file(dir + "/input.pt", *inputs).ok());
  c10::IValue out = (*gm)->forward(inputs->toListRef().vec());
  ASSERT_TRUE(write_value_file(dir + "/expected.pt", out).ok());

  std::string log;
  EXPECT_EQ(import_in_python(dir, &log), 0) << log;
  EXPECT_NE(log.find("torchfx_import: allclose"), std::string::npos) << log;
  // torch.fx regenerates the same code for the rebuilt graph.
  EXPECT_NE(log.find((*gm)->code()), std::string::npos) << log;
}

TEST(PythonRoundTrip, ImportRefusesADanglingNodeReferenceByName) {
  if (!have_python_torch()) GTEST_SKIP() << "python3-torch is not installed";
  std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/dangling";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(write_file_atomically(dir + "/graph.fx.json", R"({
 "format": "fx-graph", "version": 1, "nodes": [
  {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
  {"name": "y", "op": "call_function", "target": "torch.relu", "args": [{"node": "z"}], "kwargs": {}},
  {"name": "output", "op": "output", "target": "output", "args": [{"node": "y"}], "kwargs": {}}]})")
                  .ok());
  std::string log;
  EXPECT_EQ(import_in_python(dir, &log), 2) << log;
  EXPECT_NE(log.find("node 'y' args: node 'z' is not defined before"),
            std::string::npos)
      << log;
}

}  // namespace
}  // namespace fx
