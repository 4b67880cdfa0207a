// Runs the fx command in process for the tools' tests: its exit status and
// what it wrote to stdout and stderr.
#ifndef TESTS_TOOLS_FX_RUN_H_
#define TESTS_TOOLS_FX_RUN_H_

#include <sstream>
#include <string>
#include <vector>

#include "tools/fx_commands.h"

namespace fx::testing {

struct Result {
  int status;
  std::string out;
  std::string err;
};

// `fx ARGS...` (args without the program name).
inline Result run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int status = tools::run_fx_command(args, out, err);
  return {status, out.str(), err.str()};
}

}  // namespace fx::testing

#endif  // TESTS_TOOLS_FX_RUN_H_
