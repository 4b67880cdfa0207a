// A symbolic graph (torch 1.13's make_fx(tracing_mode="symbolic"), written
// by tools/torchfx_export.py at test time, export_symbolic.py) through the
// fx command: fx print and fx code give torch's text byte for byte, fx exec
// runs it on shapes other than the captured one with eager's numbers, and
// an input that breaks one of torch's guards is refused naming the guard,
// the placeholder and the dimension; fx exec --dynamic runs every shape
// with one plan. Needs python3-torch.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "fx_core/io/torch_save.h"
#include "tests/testing/python.h"
#include "tests/testing/reference.h"
#include "tests/tools/fx_run.h"

namespace fx {
namespace {

using testing::Result;
using testing::run;

class SymbolicBundle : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::have_python_torch()) return;
    dir_ = new std::string(std::string(std::getenv("TEST_TMPDIR")) + "/sym");
    std::string command = "/usr/bin/python3 " +
                          testing::runfile("tests/tools/export_symbolic.py") +
                          " " + *dir_ + " > " + *dir_ + ".log 2>&1";
    exported_ = std::system(command.c_str()) == 0;
  }
  void SetUp() override {
    if (!testing::have_python_torch()) {
      GTEST_SKIP() << "python3-torch is not installed";
    }
    ASSERT_TRUE(exported_) << testing::read_file(*dir_ + ".log");
  }
  static std::string file(const std::string& name) {
    return *dir_ + "/" + name;
  }
  void exec_shape(const char* engine, int n);
  void refuse_bad_input(const char* engine);
  static std::string* dir_;
  static bool exported_;
};
std::string* SymbolicBundle::dir_ = nullptr;
bool SymbolicBundle::exported_ = false;

TEST_F(SymbolicBundle, PrintAndCodeAreTorchs) {
  Result printed = run({"print", file("graph.fx.json")});
  EXPECT_EQ(printed.status, 0) << printed.err;
  EXPECT_EQ(printed.out, testing::read_file(file("graph.txt")));
  Result code = run({"code", file("graph.fx.json")});
  EXPECT_EQ(code.status, 0) << code.err;
  EXPECT_EQ(code.out, testing::read_file(file("code.py")));
}

// The engines that check a symbolic graph's guards before running it.
const char* const kEngines[] = {"graph_module", "inference_plan"};

TEST_F(SymbolicBundle, ExecRunsEveryShapeTheGuardsAllow) {
  for (const char* engine : kEngines) {
    for (int n = 0; n < 3; ++n) {
      SCOPED_TRACE(engine);
      exec_shape(engine, n);
    }
  }
}

void SymbolicBundle::exec_shape(const char* engine, int n) {
  std::string in = file("input_" + std::to_string(n) + ".pt");
  std::string out = file("output_" + std::to_string(n) + ".pt");
  Result r = run({"exec", file("graph.fx.json"), "--inputs", in, "--outputs",
                  out, "--engine", engine});
  ASSERT_EQ(r.status, 0) << r.err;
  auto got = read_value_file(out);
  auto want = read_value_file(file("expected_" + std::to_string(n) + ".pt"));
  ASSERT_TRUE(got.ok() && want.ok());
  EXPECT_TRUE(at::allclose(got->toTensor(), want->toTensor(), 1e-5, 1e-6))
      << "shape " << n;
}

TEST_F(SymbolicBundle, ExecRefusesAnInputThatBreaksAGuard) {
  for (const char* engine : kEngines) {
    SCOPED_TRACE(engine);
    refuse_bad_input(engine);
  }
}

void SymbolicBundle::refuse_bad_input(const char* engine) {
  Result r =
      run({"exec", file("graph.fx.json"), "--inputs", file("input_bad.pt"),
           "--outputs", file("bad_out.pt"), "--engine", engine});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("the guard Eq(t0.size(0)*(Mod(t0.size(1), 2)), 0) "
                       "does not hold: t0.size(0) = 5 (placeholder 'x_1' "
                       "dimension 0), t0.size(1) = 7 (placeholder 'x_1' "
                       "dimension 1)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(file("bad_out.pt")));
}

// fx exec --dynamic: one plan runs the three shapes (several --inputs),
// prints one plan build, and writes one output per set.
TEST_F(SymbolicBundle, ExecDynamicRunsEveryShapeWithOnePlan) {
  const std::string out = file("dynamic_out.pt");
  Result r = run({"exec", file("graph.fx.json"), "--engine", "inference_plan",
                  "--dynamic", "--inputs", file("input_0.pt"), "--inputs",
                  file("input_1.pt"), "--inputs", file("input_2.pt"),
                  "--inputs", file("input_0.pt"), "--outputs", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "plan builds: 1\nshape specialisations: 3\n");
  auto got = read_value_file(out);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_TRUE(got->isList());
  ASSERT_EQ(got->toListRef().size(), 4u);
  const int expected[] = {0, 1, 2, 0};
  for (size_t i = 0; i < 4; ++i) {
    auto want = read_value_file(
        file("expected_" + std::to_string(expected[i]) + ".pt"));
    ASSERT_TRUE(want.ok());
    EXPECT_TRUE(at::allclose(got->toListRef()[i].toTensor(), want->toTensor(),
                             1e-5, 1e-6))
        << "set " << i;
  }
  // The static plan re-plans for each new shape.
  r = run({"exec", file("graph.fx.json"), "--engine", "inference_plan",
           "--inputs", file("input_0.pt"), "--inputs", file("input_1.pt"),
           "--inputs", file("input_2.pt"), "--outputs", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "plan builds: 3\nshape specialisations: 1\n");
}

// A set that breaks a guard stops the run with the guard's error, whatever
// shapes the dynamic plan has already specialised; nothing is written.
TEST_F(SymbolicBundle, ExecDynamicRefusesAnInputThatBreaksAGuard) {
  const std::string out = file("dynamic_bad_out.pt");
  Result r = run({"exec", file("graph.fx.json"), "--engine", "inference_plan",
                  "--dynamic", "--inputs", file("input_0.pt"), "--inputs",
                  file("input_bad.pt"), "--outputs", out});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("the guard Eq(t0.size(0)*(Mod(t0.size(1), 2)), 0) "
                       "does not hold"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace fx
