// What a fuzz target asserts beyond "no crash": a failed check aborts, which
// libFuzzer (and the replayer, and the sanitizers) report as a finding with
// the input that caused it.
#ifndef TESTS_FUZZ_FUZZ_CHECK_H_
#define TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "absl/status/status.h"

namespace fx::fuzz {

// Aborts with `what` when `holds` is false.
inline void require(bool holds, std::string_view what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz check failed: %.*s\n",
               static_cast<int>(what.size()), what.data());
  std::abort();
}

// A refusal must say what is wrong: a non-empty message.
inline void require_message(const absl::Status& status) {
  require(status.ok() || !status.message().empty(),
          "an error status without a message");
}

}  // namespace fx::fuzz

#endif  // TESTS_FUZZ_FUZZ_CHECK_H_
