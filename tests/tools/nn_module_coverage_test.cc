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
#include <torch/nn/module.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/module_registry.h"
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

// Exports the suite once per process; the directory holding index.json.
const std::string& exported_suite() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TEST_TMPDIR");
    std::string d = std::string(tmp != nullptr ? tmp : "/tmp") + "/nn_modules";
    fs::remove_all(d);
    std::cout << "[ export ] "
              << testing::run_python("tools/nn_module_export.py", {"-o", d});
    return d;
  }();
  return dir;
}

TEST(NnModuleCoverage, EveryModuleClassMatchesEager) {
  if (!testing::have_python_torch()) {
    GTEST_SKIP() << "python3-torch is not installed (/usr/bin/python3 cannot "
                    "import torch): the module suite needs it to export";
  }
  const std::string& dir = exported_suite();
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

using ShapeMap = std::map<std::string, std::vector<int64_t>>;

// The parameters and buffers PyTorch's module at `path` holds, from the
// case's weights (its state_dict, saved by Python torch).
ShapeMap pytorch_weights(const GraphFile& file, const std::string& case_dir,
                         const std::string& path) {
  ShapeMap out;
  if (file.weights.empty() || !fs::exists(case_dir + "/" + file.weights)) {
    return out;
  }
  auto weights = read_tensor_dict(case_dir + "/" + file.weights);
  EXPECT_TRUE(weights.ok()) << weights.status().message();
  if (!weights.ok()) return out;
  std::string prefix = path + ".";
  for (const auto& [key, t] : *weights) {
    if (key.rfind(prefix, 0) == 0) {
      out[key.substr(prefix.size())] = t.sizes().vec();
    }
  }
  return out;
}

// Issue 41: a config is checked against the weights its kind declares
// before anything is allocated, so every kind's declaration must be exactly
// what PyTorch's constructor makes for the same arguments.
TEST(NnModuleCoverage, EveryKindDeclaresTheWeightsPyTorchMakes) {
  if (!testing::have_python_torch()) {
    GTEST_SKIP() << "python3-torch is not installed: the suite needs it";
  }
  const std::string& dir = exported_suite();
  std::ifstream in(dir + "/index.json");
  nlohmann::json index = nlohmann::json::parse(in);
  int checked = 0;
  for (const auto& c : index.at("cases")) {
    std::string case_dir = dir + "/" + c.at("dir").get<std::string>();
    auto file = read_graph_file(case_dir + "/graph.fx.json");
    ASSERT_TRUE(file.ok()) << file.status().message();
    for (const auto& [path, spec] : file->modules) {
      if (spec.graph_module) continue;
      ShapeMap declared;
      bool declares = ModuleRegistry::global().visit_weights(
          spec.type, spec.config,
          [&](const std::string& key, const std::vector<int64_t>& shape) {
            EXPECT_TRUE(declared.emplace(key, shape).second)
                << spec.type << " declares '" << key << "' twice";
          });
      if (!declares) {
        // Then its config allocates nothing: a loss's optional weight is
        // the file's tensor, adopted as it is.
        auto module = ModuleRegistry::global().create(spec.type, spec.config);
        for (const auto& p : module->named_parameters()) {
          ADD_FAILURE() << spec.type << " declares no weights but makes '"
                        << p.key() << "'";
        }
        for (const auto& b : module->named_buffers()) {
          EXPECT_FALSE(b.value().defined())
              << spec.type << " declares no weights but makes '" << b.key()
              << "'";
        }
        continue;
      }
      ShapeMap made = pytorch_weights(*file, case_dir, path);
      EXPECT_EQ(declared, made) << c.at("call").get<std::string>();
      ++checked;
    }
  }
  EXPECT_GE(checked, 40);
}

}  // namespace
}  // namespace fx
