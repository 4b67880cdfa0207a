// The `fx` command's subcommands, callable in-process (tests drive them with
// string streams).
#ifndef TOOLS_FX_COMMANDS_H_
#define TOOLS_FX_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

namespace fx::tools {

// Runs `fx ARGS...`; returns the process exit status.
int run_fx_command(const std::vector<std::string>& args, std::ostream& out,
                   std::ostream& err);

}  // namespace fx::tools

#endif  // TOOLS_FX_COMMANDS_H_
