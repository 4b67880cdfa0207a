// `fx reduce`: resnet18 (exported by Python torch.fx at test time), whose
// pipeline fails while one node is there, shrinks to that node, its input
// and the output; the reproducer still fails the same way under `fx run`.
// With --inputs, a pipeline that needs example inputs (shape_prop first)
// reduces too.
#include "tools/reduce_command.h"

#include <gtest/gtest.h>

#include <boost/filesystem.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "tests/testing/python.h"
#include "tests/tools/fx_run.h"

namespace fx {
namespace {

using testing::Result;
using testing::run;

std::string temp_dir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp ? tmp : "/tmp") + "/reduce/" + name;
  boost::filesystem::create_directories(dir);
  return dir;
}

const std::string kPicky = "tests/plugin_api/plugins/libpicky_plugin.so";

std::string resnet18() {
  static const std::string dir = [] {
    std::string d = temp_dir("resnet18");
    testing::run_python("tools/torchfx_export.py",
                        {"--torchvision", "resnet18", "-o", d});
    return d;
  }();
  return dir + "/graph.fx.json";
}

TEST(FxReduce, ShrinksResnet18ToTheNodeThatFails) {
  if (!testing::have_python_torch(/*torchvision=*/true)) {
    GTEST_SKIP() << "needs Python torch and torchvision";
  }
  std::string out = temp_dir("out") + "/small.fx.json";
  const std::string pipeline = "refuse_target{target=layer3.1.conv2}";
  Result r = run({"reduce", resnet18(), "--no-default-plugins", "--no-isolate",
                  "--plugin", kPicky, "--pipeline", pipeline, "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("to 3 nodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the failure: pass 'refuse_target': INTERNAL"),
            std::string::npos)
      << r.out;
  auto reduced = read_graph_file(out);
  ASSERT_TRUE(reduced.ok()) << reduced.status();
  auto original = read_graph_file(resnet18());
  ASSERT_TRUE(original.ok());
  EXPECT_GT(original->graph->size(), 60u);
  EXPECT_EQ(reduced->graph->size(), 3u);
  // The reproducer fails the same way, and only its own weights came along.
  Result again = run({"run", out, "--no-default-plugins", "--plugin", kPicky,
                      "--pipeline", pipeline, "-o", out + ".again.fx.json"});
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("refusing layer3.1.conv2"), std::string::npos)
      << again.err;
  EXPECT_LT(boost::filesystem::file_size(temp_dir("out") + "/small.weights.pt"),
            boost::filesystem::file_size(
                boost::filesystem::path(resnet18()).parent_path() /
                "model.weights.pt") /
                4);
}

// Issue 39: reduce takes the isolation flags fx run takes; the isolated
// reduction finds the same failure.
TEST(FxReduce, RunsIsolatedWithLimits) {
  if (!testing::have_python_torch(/*torchvision=*/true)) {
    GTEST_SKIP() << "needs Python torch and torchvision";
  }
  std::string out = temp_dir("isolated") + "/small.fx.json";
  Result r =
      run({"reduce", resnet18(), "--no-default-plugins", "--plugin", kPicky,
           "--pipeline", "refuse_target{target=layer3.1.conv2}",
           "--pass-timeout", "60", "--pass-memory-limit", "4096", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("to 3 nodes"), std::string::npos) << r.out;
  Result bad = run(
      {"reduce", resnet18(), "--pipeline", "dce", "--pass-timeout", "soon"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err,
            "fx reduce: --pass-timeout expects seconds (a number > 0), got "
            "'soon'\n");
  bad = run(
      {"reduce", resnet18(), "--pipeline", "dce", "--pass-memory-limit", "0"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--pass-memory-limit expects MiB"), std::string::npos)
      << bad.err;
}

TEST(FxReduce, AGraphThatDoesNotFailIsAnError) {
  if (!testing::have_python_torch(/*torchvision=*/true)) {
    GTEST_SKIP() << "needs Python torch and torchvision";
  }
  std::string out = temp_dir("none") + "/none.fx.json";
  Result r = run({"reduce", resnet18(), "--no-default-plugins", "--no-isolate",
                  "--plugin", kPicky, "--pipeline",
                  "refuse_target{target=no.such}", "-o", out});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("does not fail"), std::string::npos) << r.err;
  EXPECT_FALSE(boost::filesystem::exists(out));
}

// Two linears: b refuses to be there; a's output is what b needs (8
// features), so only a placeholder standing for a's value can replace it.
constexpr char kChainModule[] = R"(import torch


class Chain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 8)
        self.b = torch.nn.Linear(8, 3)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))
)";

std::string chain() {
  static const std::string dir = [] {
    std::string d = temp_dir("chain");
    std::string module = d + "/chain.py";
    std::ofstream(module) << kChainModule;
    testing::run_python(
        "tools/torchfx_export.py",
        {"--module", module + ":Chain", "--input-shape", "2,4", "-o", d});
    return d;
  }();
  return dir;
}

// Issue 39 item 5: shape_prop needs example inputs. With --inputs every
// candidate gets them, the placeholder put in place of `a` is fed what `a`
// computed, and the chain shrinks to b; without them shape_prop's own
// failure is what reduces.
TEST(FxReduce, ExampleInputsFeedEveryCandidate) {
  if (!testing::have_python_torch()) GTEST_SKIP() << "needs Python torch";
  const std::string pipeline = "shape_prop,refuse_target{target=b}";
  std::string out = temp_dir("chain_out") + "/small.fx.json";
  Result r = run({"reduce", chain() + "/graph.fx.json", "--plugin", kPicky,
                  "--pipeline", pipeline, "--inputs", chain() + "/input.pt",
                  "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("from 5 to 3 nodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the failure: pass 'refuse_target': INTERNAL"),
            std::string::npos)
      << r.out;
  auto reduced = read_graph_file(out);
  ASSERT_TRUE(reduced.ok()) << reduced.status();
  EXPECT_EQ(reduced->graph->first()->target(), "a_input")
      << reduced->graph->str();
  Result bare = run({"reduce", chain() + "/graph.fx.json", "--plugin", kPicky,
                     "--pipeline", pipeline, "-o", out + ".bare.fx.json"});
  ASSERT_EQ(bare.status, 0) << bare.err;
  EXPECT_NE(
      bare.out.find("the failure: pass 'shape_prop': FAILED_PRECONDITION"),
      std::string::npos)
      << bare.out;
}

TEST(FxReduce, InputsThatDoNotFitAreNamed) {
  if (!testing::have_python_torch()) GTEST_SKIP() << "needs Python torch";
  std::string graph = chain() + "/graph.fx.json";
  std::string out = temp_dir("chain_bad") + "/small.fx.json";
  Result missing =
      run({"reduce", graph, "--plugin", kPicky, "--pipeline",
           "refuse_target{target=b}", "--inputs", "no/such.pt", "-o", out});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("no/such.pt"), std::string::npos) << missing.err;
  // The eager output is a tensor, but of b's shape: FILE does not run on it.
  Result wrong = run({"reduce", graph, "--plugin", kPicky, "--pipeline",
                      "refuse_target{target=b}", "--inputs",
                      chain() + "/expected.pt", "-o", out});
  EXPECT_EQ(wrong.status, 1) << wrong.out;
  EXPECT_NE(wrong.err.find("does not run on " + chain() + "/expected.pt"),
            std::string::npos)
      << wrong.err;
  Result clash = run({"reduce", graph, "--plugin", kPicky, "--pipeline",
                      "refuse_target{target=b}", "--inputs",
                      chain() + "/input.pt", "-o", chain() + "/input.pt"});
  EXPECT_EQ(clash.status, 2);
  EXPECT_NE(clash.err.find("--inputs"), std::string::npos) << clash.err;
  EXPECT_FALSE(boost::filesystem::exists(out));
}

TEST(FxReduce, UsageErrors) {
  Result none = run({"reduce", "x.fx.json"});
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("--pipeline TEXT is required"), std::string::npos);
  Result missing = run({"reduce", "no/such.fx.json", "--no-default-plugins",
                        "--plugin", kPicky, "--pipeline", "refuse_target"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("no/such.fx.json"), std::string::npos)
      << missing.err;
  EXPECT_EQ(tools::default_reduce_output("d/graph.fx.json"),
            "d/graph.reduced.fx.json");
  EXPECT_EQ(tools::default_reduce_output("g"), "g.reduced.fx.json");
}

}  // namespace
}  // namespace fx
