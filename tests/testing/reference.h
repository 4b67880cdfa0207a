// Locating ../shared/reference (torch.fx's own outputs) from a Bazel test.
#ifndef TESTS_TESTING_REFERENCE_H_
#define TESTS_TESTING_REFERENCE_H_

#include <string>
#include <vector>

namespace fx::testing {

// The reference directory: the test's runfiles copy of @shared//:reference.
// Returns an empty string when it cannot be found.
std::string reference_dir();

// The names of the reference cases (sub-directories), sorted.
std::vector<std::string> reference_cases();

// The whole contents of a file; throws std::runtime_error when unreadable.
std::string read_file(const std::string& path);

}  // namespace fx::testing

#endif  // TESTS_TESTING_REFERENCE_H_
