// The module-coverage suite (README "Module coverage"): every torch.nn
// module class, exported by tools/nn_module_export.py with Python torch 1.13
// as the graph torch.fx records for a call of that leaf module (its
// constructor arguments in the bundle's `config`, random parameters in its
// weights), then built from the config, loaded, run and compared with eager
// in this process (tools/opinfo_runner.h, as the OpInfo suite).
//
// Every exported case must match, and every torch.nn class must have a case
// unless it is one of the few listed below with the reason it cannot be
// built from a graph file. Needs Debian's python3-torch at /usr/bin/python3;
// without it the suite is skipped with a message.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/testing/python.h"
#include "tools/opinfo_runner.h"

namespace fx {
namespace {

namespace fs = std::filesystem;
using opinfo::CaseResult;

// torch.nn classes a graph file cannot describe, and why.
const std::set<std::string> kNotBuildable = {
    // Needs a process group (distributed); on CPU it raises in Python too.
    "SyncBatchNorm",
};

TEST(NnModuleCoverage, EveryModuleClassMatchesEager) {
  if (!testing::have_python_torch()) {
    GTEST_SKIP() << "python3-torch is not installed (/usr/bin/python3 cannot "
                    "import torch): the module suite needs it to export";
  }
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/nn_modules";
  fs::remove_all(dir);
  std::cout << "[ export ] "
            << testing::run_python("tools/nn_module_export.py", {"-o", dir});
  at::set_num_threads(1);  // as the exporter's eager runs
  absl::StatusOr<opinfo::Summary> summary =
      opinfo::run_index(dir + "/index.json", {});
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  std::cout << opinfo::summary_markdown(*summary);
  for (const CaseResult& c : summary->cases) {
    EXPECT_EQ(c.status, CaseResult::Status::kMatch) << opinfo::result_line(c);
  }
  EXPECT_GE(summary->exported(), 150);

  std::ifstream in(dir + "/index.json");
  nlohmann::json index = nlohmann::json::parse(in);
  for (const auto& name : index.at("uncovered")) {
    EXPECT_TRUE(kNotBuildable.count(name.get<std::string>()))
        << "torch.nn." << name.get<std::string>() << " has no case";
  }
}

}  // namespace
}  // namespace fx
