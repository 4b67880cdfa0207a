// Running Python torch.fx from a test, for goldens made at test time.
#ifndef TESTS_TESTING_PYTHON_H_
#define TESTS_TESTING_PYTHON_H_

#include <string>
#include <vector>

namespace fx::testing {

// A file of the test's runfiles (the workspace is fx_sdk); `path` itself when
// the test does not run under Bazel.
std::string runfile(const std::string& path);

// True when Debian's /usr/bin/python3 can import torch (and torchvision).
// Checked once per process.
bool have_python_torch(bool torchvision = false);

// Runs `/usr/bin/python3 SCRIPT ARGS...` (SCRIPT a runfile path) and returns
// what it printed on stdout. Throws std::runtime_error with its exit status
// and stderr when it fails.
std::string run_python(const std::string& script,
                       const std::vector<std::string>& args);

}  // namespace fx::testing

#endif  // TESTS_TESTING_PYTHON_H_
