// Shared by the conformance tests (torchvision's classification models, the
// other model families): exporting models with Python torch.fx
// (tests/tools/export_torchvision.py) and checking a bundle against the
// text torch.fx printed for it.
#ifndef TESTS_TESTING_CONFORMANCE_H_
#define TESTS_TESTING_CONFORMANCE_H_

#include <string>
#include <vector>

namespace fx::testing {

// Why conformance tests cannot run here ("" when python3-torch and
// python3-torchvision are installed).
std::string conformance_skip_reason();

// Exports `models` (export_torchvision.py's NAMEs) into `dir`, one
// sub-directory each. Returns "" on success, else the exporter's log.
std::string export_models(const std::string& dir,
                          const std::vector<std::string>& models);

// Checks (gtest EXPECTs) that the bundle in `model_dir` prints exactly as
// torch.fx printed it (graph.txt), generates exactly gm.code (code.py) and
// round-trips JSON -> SDK -> JSON byte for byte.
void expect_text_and_code_as_torch_fx(const std::string& model_dir);

}  // namespace fx::testing

#endif  // TESTS_TESTING_CONFORMANCE_H_
