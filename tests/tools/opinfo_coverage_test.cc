// The op-coverage suite (README "Op coverage"): PyTorch's OpInfo database
// (float32 CPU samples, function and method variants) exported as one-node
// graphs by tools/opinfo_export.py with Python torch 1.13, then loaded, run
// and compared with eager in this process (tools/opinfo_runner.h).
//
// The suite fails when the match rate drops below the floor (a ratchet: raise
// it when the runtime covers more), when the export yields fewer cases than
// it should, or when one of the core ops stops matching on every sample.
// Its files (results.txt: one line per case; summary.md; summary.json) are
// kept in the test's undeclared outputs.
//
// Needs Debian's python3-torch at /usr/bin/python3; without it the suite is
// skipped with a message (the comparison's own tests still run). About 1-2
// minutes on 2 cores, most of it the export.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "fx_core/io/atomic_file.h"
#include "tests/testing/python.h"
#include "tools/opinfo_runner.h"

namespace fx {
namespace {

namespace fs = std::filesystem;
using opinfo::CaseResult;
using opinfo::compare_results;

// The ratchet. Measured: 11321 of 18927 exported cases matched (59.81%) at
// 3547c11, 14713 (77.74%) once the Python wrappers over single ATen
// operators (max_poolNd_with_indices, unfold, fold, unique) and factories'
// requires_grad= were bound, 15606 (82.45%) with max_unpoolNd and
// gaussian_nll_loss, 15761 (83.27%) with einsum, nonzero(as_tuple=), a
// method's self anywhere in the schema (polygamma) and bfloat16(); 18905
// (99.88%) with torch.masked, the losses, torch.functional's and
// torch._lowrank's functions and the remaining F.* wrappers (what is left:
// torch.Size and sparse tensors in torch.save files); 18915 (99.94%) once
// torch.Size was readable; the same on repeated exports; 18927 (100%) with
// result types compared and sparse tensors read (0.9999 leaves room for one
// case). Raise it as the runtime covers more; never lower it to make a
// change pass.
constexpr double kMatchFloor = 0.9999;
// Measured: 18927 cases exported (19048 in the index, 121 not exportable).
constexpr int kMinExported = 18000;
// OpInfo entries whose every exported case must match.
const char* const kCoreOps[] = {
    "add",
    "sub",
    "mul",
    "div.no_rounding_mode",
    "matmul",
    "addmm",
    "bmm",
    "sum",
    "mean",
    "std",
    "var",
    "logsumexp",
    "softmax",
    "cat",
    "reshape",
    "transpose",
    "permute",
    "where",
    "topk",
    "cumsum",
    "exp",
    "tanh",
    "clamp",
    "index_select",
    "linalg.solve",
    "nn.functional.relu",
    "nn.functional.gelu",
    "nn.functional.linear",
    "nn.functional.layer_norm",
    "nn.functional.batch_norm",
    "nn.functional.dropout",
    "nn.functional.prelu",
    "nn.functional.pad.reflect",
    "nn.functional.interpolate.nearest",
    "nn.functional.max_pool1d",
    "nn.functional.max_pool2d",
    "nn.functional.max_pool3d",
    "nn.functional.unfold",
    "nn.functional.max_unpool1d",
    "nn.functional.max_unpool2d",
    "nn.functional.max_unpool3d",
    "nn.functional.gaussian_nll_loss",
    "unique",
    "unique_consecutive",
    "einsum",
    "nonzero",
    "bfloat16",
    "eye",
    "masked.sum",
    "masked.norm",
    "masked.var",
    "masked.softmax",
    "nn.functional.nll_loss",
    "nn.functional.cross_entropy",
    "nn.functional.binary_cross_entropy_with_logits",
    "nn.functional.kl_div",
    "cdist",
    "norm",
    "norm.nuc",
    "svd_lowrank",
    "pca_lowrank",
    "histogramdd",
    "nn.functional.embedding_bag",
    "nn.functional.grid_sample",
    "nn.functional.interpolate.area",
    "nn.functional.fractional_max_pool2d",
    "nn.functional.conv2d",
    "to",
    "__getitem__",
    "gradient",
    "hsplit",
};

std::string output_dir() {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  if (dir == nullptr) dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

TEST(OpInfoCoverage, MatchRateIsAtLeastTheFloor) {
  if (!testing::have_python_torch()) {
    GTEST_SKIP() << "python3-torch is not installed (/usr/bin/python3 cannot "
                    "import torch): the OpInfo suite needs it to export";
  }
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/opinfo";
  fs::remove_all(dir);
  auto start = std::chrono::steady_clock::now();
  std::string exported =
      testing::run_python("tools/opinfo_export.py", {"-o", dir});
  std::cout << "[ export ] " << exported << "  (" << seconds_since(start)
            << " s)\n";

  at::set_num_threads(1);  // as the exporter's eager runs
  std::ofstream lines(output_dir() + "/results.txt");
  opinfo::RunOptions options;
  options.lines = &lines;
  start = std::chrono::steady_clock::now();
  absl::StatusOr<opinfo::Summary> summary =
      opinfo::run_index(dir + "/index.json", options);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  std::cout << "[ run ] " << summary->exported() << " cases in "
            << seconds_since(start) << " s\n";
  std::string table = opinfo::summary_markdown(*summary);
  std::cout << table;
  ASSERT_TRUE(write_file_atomically(output_dir() + "/summary.md", table).ok());
  ASSERT_TRUE(write_file_atomically(output_dir() + "/summary.json",
                                    opinfo::summary_json(*summary))
                  .ok());

  EXPECT_EQ(summary->ops, 621) << "torch 1.13's op_db has 621 OpInfos";
  EXPECT_GE(summary->exported(), kMinExported);
  EXPECT_GE(summary->match_rate(), kMatchFloor)
      << summary->matched() << " of " << summary->exported()
      << " exported cases match";

  std::map<std::string, std::pair<int, std::string>> core;  // runs, failure
  for (const char* op : kCoreOps) core[op];
  for (const CaseResult& c : summary->cases) {
    auto found = core.find(c.op);
    if (found == core.end() || c.status == CaseResult::Status::kNotExported) {
      continue;
    }
    ++found->second.first;
    if (c.status != CaseResult::Status::kMatch &&
        found->second.second.empty()) {
      found->second.second = opinfo::result_line(c);
    }
  }
  for (const auto& [op, result] : core) {
    EXPECT_GT(result.first, 0) << op << ": no exported case";
    EXPECT_EQ(result.second, "") << op;
  }
}

// The comparison itself, without Python.

TEST(OpInfoCompare, TensorsWithinToleranceMatch) {
  at::Tensor a = at::arange(6, at::kFloat).reshape({2, 3});
  EXPECT_EQ(compare_results(a + 1e-6, a, true), "");
  EXPECT_EQ(compare_results(a * (1 + 5e-5), a, true), "");
  EXPECT_EQ(compare_results(a + 1e-3, a, false), "");  // dtype/shape only
  std::string differs = compare_results(a + 1e-3, a, true);
  EXPECT_EQ(differs.substr(0, differs.find('\n')), "values differ");
}

TEST(OpInfoCompare, NanEqualsNan) {
  at::Tensor a = at::tensor({1.0f, NAN});
  EXPECT_EQ(compare_results(a.clone(), a, true), "");
  std::string differs = compare_results(at::tensor({1.0f, 2.0f}), a, true);
  EXPECT_EQ(differs.substr(0, differs.find('\n')), "values differ");
  EXPECT_EQ(compare_results(c10::IValue(NAN), c10::IValue(NAN), true), "");
}

TEST(OpInfoCompare, DtypeAndShapeMustBeEqual) {
  at::Tensor a = at::zeros({2, 3});
  EXPECT_EQ(compare_results(a.to(at::kDouble), a, true),
            "dtype differs (expected Float, got Double)");
  EXPECT_EQ(compare_results(a.reshape({3, 2}), a, true),
            "shape differs\nexpected [2, 3], got [3, 2]");
  EXPECT_EQ(compare_results(a.to(at::kLong), a.to(at::kLong), true), "");
}

TEST(OpInfoCompare, ConjugateBitIsHonoured) {
  at::Tensor z = at::complex(at::ones({3}), at::ones({3}));
  std::string differs = compare_results(z.conj(), z, true);
  EXPECT_EQ(differs.substr(0, differs.find('\n')), "values differ");
  EXPECT_EQ(compare_results(z.conj(), z.conj().resolve_conj(), true), "");
}

TEST(OpInfoCompare, StructureMustBeEqual) {
  at::Tensor a = at::ones({2});
  c10::IValue tuple = c10::ivalue::Tuple::create({a, a});
  c10::IValue list = c10::List<at::Tensor>({a, a});
  EXPECT_EQ(compare_results(tuple, tuple, true), "");
  EXPECT_EQ(compare_results(list, tuple, true),
            "result type differs (expected tuple, got list)");
  EXPECT_EQ(compare_results(c10::ivalue::Tuple::create({a}), tuple, true),
            "tuple length differs (expected 2, got 1)");
  EXPECT_EQ(compare_results(c10::ivalue::Tuple::create({a, a * 2}), tuple, true)
                .substr(0, 24),
            "values differ at result[");
  EXPECT_EQ(compare_results(c10::IValue(int64_t{3}), c10::IValue(3.0), true),
            "result type differs (expected float, got int)");
  EXPECT_EQ(compare_results(c10::IValue(true), c10::IValue(true), true), "");
  EXPECT_EQ(compare_results(c10::IValue(false), c10::IValue(true), true),
            "values differ\nexpected True, got False");
  EXPECT_EQ(compare_results(a, c10::IValue(), true),
            "result type differs (expected None, got Tensor)");
}

}  // namespace
}  // namespace fx
