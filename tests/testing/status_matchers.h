// The message of an absl::Status / StatusOr, for tests that pin exact error
// texts ("" when OK).
#ifndef TESTS_TESTING_STATUS_MATCHERS_H_
#define TESTS_TESTING_STATUS_MATCHERS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fx::testing {

inline std::string error_of(const absl::Status& s) {
  return std::string(s.message());
}
template <typename T>
std::string error_of(const absl::StatusOr<T>& s) {
  return s.ok() ? "" : std::string(s.status().message());
}

}  // namespace fx::testing

#endif  // TESTS_TESTING_STATUS_MATCHERS_H_
