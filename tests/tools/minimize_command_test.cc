// `fx minimize` on resnet18 (exported with Python torch.fx at test time)
// against a planted wrong lowering
// (tests/plugin_api/plugins/planted_fault_plugin.c): the command names the
// planted node, and refuses bad arguments with the flag at fault.
#include "tools/minimize_command.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/plugins/plugin_test_util.h"
#include "tools/fx_commands.h"

namespace fx {
namespace {

const std::string kPlugin =
    "tests/plugin_api/plugins/libplanted_fault_plugin.so";

struct Result {
  int status;
  std::string out;
  std::string err;
};

Result run(std::vector<std::string> args) {
  std::ostringstream out, err;
  int status = tools::run_fx_command(args, out, err);
  return {status, out.str(), err.str()};
}

class FxMinimize : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string skip = plugins_test::python_skip_reason();
    if (!skip.empty()) GTEST_SKIP() << skip;
    dir_ = plugins_test::export_torchvision("resnet18");
  }

  // fx minimize on resnet18 with the planted-fault plugin and `more` flags.
  Result minimize(std::vector<std::string> more) {
    std::vector<std::string> args = {"minimize",
                                     dir_ + "/graph.fx.json",
                                     "--inputs",
                                     dir_ + "/input.pt",
                                     "--no-default-plugins",
                                     "--plugin",
                                     kPlugin};
    args.insert(args.end(), more.begin(), more.end());
    // In process, as before isolation became the default ("auto"), unless
    // the test isolates.
    bool isolated = false;
    for (const std::string& m : more) {
      isolated = isolated || m == "--isolate" || m == "--pass-timeout" ||
                 m == "--pass-memory-limit";
    }
    if (!isolated) args.push_back("--no-isolate");
    return run(args);
  }

  std::string dir_;
};

std::string last_line(const std::string& text) {
  size_t end = text.size() - (text.empty() || text.back() != '\n' ? 0 : 1);
  size_t start = text.rfind('\n', end == 0 ? 0 : end - 1);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1));
}

TEST_F(FxMinimize, BisectNamesThePlantedNode) {
  Result r = minimize({"--pipeline", "planted_fault{nodes=layer3_0_relu_1}"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(last_line(r.out), "culprits: layer3_0_relu_1") << r.out;
  EXPECT_EQ(r.out.rfind("check 1: [conv1 .. fc (69 nodes)] ", 0), 0u) << r.out;
  // The first check (the whole graph) differs by a printed amount.
  std::string first = r.out.substr(0, r.out.find('\n'));
  std::string diff = first.substr(first.rfind(' ') + 1);
  EXPECT_EQ(first.rfind("check 1: [conv1 .. fc (69 nodes)] mismatch, max "
                        "|a-b| ",
                        0),
            0u)
      << first;
  EXPECT_GT(std::stod(diff), 1e-3) << first;
}

TEST_F(FxMinimize, SequentialFindAll) {
  Result r = minimize({"--pipeline",
                       "planted_fault{nodes=layer4_1_relu_1,layer1_1_relu}",
                       "--mode", "sequential", "--find-all"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(last_line(r.out), "culprits: layer1_1_relu, layer4_1_relu_1")
      << r.out;
}

// Issue 39: minimize takes the isolation flags fx run takes.
TEST_F(FxMinimize, IsolatedWithLimits) {
  Result r = minimize({"--pipeline", "planted_fault{nodes=layer3_0_relu_1}",
                       "--isolate", "--pass-timeout", "60",
                       "--pass-memory-limit", "4096"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(last_line(r.out), "culprits: layer3_0_relu_1") << r.out;
  r = minimize({"--pipeline", "planted_fault", "--pass-timeout", "-2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "fx minimize: --pass-timeout expects seconds (a number > 0), got "
            "'-2'\n");
}

TEST_F(FxMinimize, NoCulprit) {
  Result r = minimize({"--pipeline", "planted_fault{nodes=none}", "--atol", "0",
                       "--rtol", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("check 1: [conv1 .. fc (69 nodes)] match\n", 0), 0u)
      << r.out;
  EXPECT_NE(last_line(r.out).find("no culprit"), std::string::npos) << r.out;
}

TEST_F(FxMinimize, BadArgumentsNameTheFlag) {
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"--pipeline", "planted_fault", "--mode", "binary"},
       "fx minimize: --mode: expected \"bisect\" or \"sequential\", got "
       "\"binary\"\n"},
      {{"--pipeline", "planted_fault", "--atol", "-1"},
       "fx minimize: --atol: expected a number >= 0, got '-1'\n"},
      {{"--pipeline", "planted_fault", "--rtol", "1e-3x"},
       "fx minimize: --rtol: expected a number >= 0, got '1e-3x'\n"},
      {{},
       "fx minimize: give exactly one of --pipeline TEXT and --config "
       "CONF.json\n"},
  };
  for (const Case& c : cases) {
    Result r = minimize(c.flags);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, c.message);
  }
  Result r = minimize({"--pipeline", "no_such_pass"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no_such_pass"), std::string::npos) << r.err;
  r = run({"minimize", dir_ + "/graph.fx.json", "--pipeline", "x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "fx minimize: --inputs IN.pt is required\n");
  r = run({"minimize", dir_ + "/missing.fx.json", "--inputs",
           dir_ + "/input.pt", "--no-default-plugins", "--plugin", kPlugin,
           "--pipeline", "planted_fault"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("missing.fx.json"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fx
