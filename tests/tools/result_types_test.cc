// `fx exec` writes what Python's torch.load gives back as the types eager
// PyTorch returns (issue: Python's result types): torch.Size for sizes,
// torch.return_types.* named tuples for torch.max / Tensor.sort / linalg,
// plain tuples for torch.ops.aten.*, and dicts, lists and tuples nested in
// each other. The model (tests/tools/result_types.py) is traced and run by
// Python at test time; its expected.pt is eager's output. Skipped without
// python3-torch.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "tests/testing/python.h"
#include "tools/fx_commands.h"

namespace fx {
namespace {

TEST(ResultTypes, FxExecWritesPythonsTypes) {
  if (!testing::have_python_torch()) GTEST_SKIP() << "python3-torch missing";
  std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/result_types";
  testing::run_python(
      "tools/torchfx_export.py",
      {"--module",
       testing::runfile("tests/tools/result_types.py") + ":ResultTypes",
       "--input-shape", "3,4", "-o", dir});
  std::ostringstream out, err;
  int status =
      tools::run_fx_command({"exec", dir + "/graph.fx.json", "--inputs",
                             dir + "/input.pt", "--outputs", dir + "/got.pt"},
                            out, err);
  ASSERT_EQ(status, 0) << err.str();
  EXPECT_EQ(
      testing::run_python("tests/tools/result_types.py",
                          {"compare", dir + "/got.pt", dir + "/expected.pt"}),
      "same\n");
}

}  // namespace
}  // namespace fx
