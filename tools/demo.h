// `fx demo`: the seed docs' MyModule, written against fx::Value and traced
// with fx::symbolic_trace, printed (graph, table, Python and C++ code), run
// against the eager module, then put through a pipeline of first-party
// plugins loaded at runtime and run again.
#ifndef TOOLS_DEMO_H_
#define TOOLS_DEMO_H_

#include <ostream>

namespace fx::tools {

// Returns 0 when the traced module's output equals the eager module's and
// the pipeline's result is allclose to it.
int run_demo(std::ostream& out, std::ostream& err);

}  // namespace fx::tools

#endif  // TOOLS_DEMO_H_
