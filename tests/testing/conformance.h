// Shared by the conformance tests (torchvision's classification models, the
// other model families): exporting models with Python torch.fx
// (tests/tools/export_torchvision.py) and checking a bundle against the
// text torch.fx printed for it.
#ifndef TESTS_TESTING_CONFORMANCE_H_
#define TESTS_TESTING_CONFORMANCE_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tests/testing/reference.h"

namespace fx::testing {

// Why conformance tests cannot run here ("" when python3-torch and
// python3-torchvision are installed).
std::string conformance_skip_reason();

// The models a conformance test runs: `all`, or, when the environment
// variable `env` is set (a comma-separated list, as tools/test.sh sets it to
// bound the run under the sanitizers), the names it lists, in its order. A
// listed name that `all` lacks is kept, so the test fails naming it (the
// export refuses it) instead of silently running fewer models.
std::vector<std::string> selected_models(const std::vector<std::string>& all,
                                         const char* env);

// Exports `models` (export_torchvision.py's NAMEs) into `dir`, one
// sub-directory each. Returns "" on success, else the exporter's log.
std::string export_models(const std::string& dir,
                          const std::vector<std::string>& models);

// Checks (gtest EXPECTs) that the bundle in `model_dir` prints exactly as
// torch.fx printed it (graph.txt), generates exactly gm.code (code.py) and
// round-trips JSON -> SDK -> JSON byte for byte.
void expect_text_and_code_as_torch_fx(const std::string& model_dir);

// A test over exported models, one parameter per model. `Models` provides
// `static std::vector<std::string> names()` and `static const char* dir()`
// (a directory under $TEST_TMPDIR). The suite exports them
// once; each test is skipped (with the reason) without Python, fails when
// the export failed, and is skipped with torch.fx's error when torch.fx
// cannot trace its model.
template <typename Models>
class ExportedModelTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    skip_reason_ = conformance_skip_reason();
    if (!skip_reason_.empty()) return;
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/" + Models::dir();
    export_failed_ = export_models(dir_, Models::names());
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_TRUE(export_failed_.empty()) << export_failed_;
    if (std::ifstream(path("untraceable.txt")).good()) {
      GTEST_SKIP() << "torch.fx cannot trace it: "
                   << read_file(path("untraceable.txt"));
    }
  }
  // The model's directory, or a file in it.
  std::string model_dir() const { return dir_ + "/" + GetParam(); }
  std::string path(const std::string& file) const {
    return model_dir() + "/" + file;
  }

 private:
  static inline std::string dir_;
  static inline std::string skip_reason_;
  static inline std::string export_failed_;
};

}  // namespace fx::testing

#endif  // TESTS_TESTING_CONFORMANCE_H_
