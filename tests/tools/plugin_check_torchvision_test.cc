// `fx plugin-check --torchvision default` on the first-party plugins:
// torchvision's resnet18, mobilenet_v2 and squeezenet1_1, exported by
// Python torch.fx (/usr/bin/python3) into a cache under TEST_TMPDIR, and
// every pass of each plugin checked on them without a failure. A second
// check reuses the cache. Skipped when /usr/bin/python3 lacks torchvision.
#include <gtest/gtest.h>

#include <boost/filesystem.hpp>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/python.h"
#include "tests/tools/fx_run.h"

namespace fx {
namespace {

namespace fs = boost::filesystem;

using testing::Result;
using testing::run;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class PluginCheckTorchvision : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    cache_ = std::string(std::getenv("TEST_TMPDIR")) + "/fx_cache";
    setenv("FX_CACHE_DIR", cache_.c_str(), 1);
  }
  void SetUp() override {
    if (!testing::have_python_torch(/*torchvision=*/true)) {
      GTEST_SKIP() << "needs torch and torchvision at /usr/bin/python3";
    }
  }
  static inline std::string cache_;
};

// Whether a check's result column says FAIL (a status code quoted in a
// skip's reason, such as FAILED_PRECONDITION, is not a failed check).
bool any_check_failed(const std::string& report) {
  std::istringstream lines(report);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string pass, check, result;
    if (words >> pass >> check >> result && result == "FAIL") return true;
  }
  return false;
}

TEST_P(PluginCheckTorchvision, EveryPassPassesOnTheDefaultModels) {
  Result r = run(
      {"plugin-check", "plugins/" + GetParam(), "--torchvision", "default"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out,
                  " on 3 graphs torchvision "
                  "resnet18,mobilenet_v2,squeezenet1_1\n"))
      << r.out;
  EXPECT_FALSE(any_check_failed(r.out)) << r.out;
  EXPECT_TRUE(has(r.out, "  numbers        ok")) << r.out;
  // The cache holds the three bundles and nothing half-written.
  for (const char* model : {"resnet18", "mobilenet_v2", "squeezenet1_1"}) {
    fs::path bundle = fs::path(cache_) / "torchvision" / model;
    EXPECT_TRUE(fs::exists(bundle / "graph.fx.json")) << bundle;
    EXPECT_TRUE(fs::exists(bundle / "model.weights.pt")) << bundle;
    EXPECT_TRUE(fs::exists(bundle / "input.pt")) << bundle;
  }
  for (fs::directory_iterator it(fs::path(cache_) / "torchvision"), end;
       it != end; ++it) {
    EXPECT_EQ(it->path().filename().string().rfind(".", 0), std::string::npos)
        << "left behind: " << it->path();
  }
}

INSTANTIATE_TEST_SUITE_P(FirstParty, PluginCheckTorchvision,
                         ::testing::Values("libfx_passes.so",
                                           "libfx_shape_prop.so",
                                           "libfx_decompose.so",
                                           "libfx_quantize.so",
                                           "libfx_optimization.so"),
                         [](const auto& info) {
                           std::string name = info.param;
                           return name.substr(6, name.size() - 9);
                         });

}  // namespace
}  // namespace fx
