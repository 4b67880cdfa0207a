// `fx demo`: the seed docs' MyModule, built with the Graph API around real
// LibTorch modules, printed (graph, table, Python and C++ code) and run
// against the eager module.
#ifndef TOOLS_DEMO_H_
#define TOOLS_DEMO_H_

#include <ostream>

namespace fx::tools {

// Returns 0 when the GraphModule's output equals the eager module's.
int run_demo(std::ostream& out, std::ostream& err);

}  // namespace fx::tools

#endif  // TOOLS_DEMO_H_
