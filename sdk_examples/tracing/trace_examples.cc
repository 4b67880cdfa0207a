// trace_examples NAME graph|code: prints the graph (print(gm.graph)) or the
// Python code (gm.code) fx::symbolic_trace records for example NAME.
//
//   bazel run //sdk_examples:trace_examples -- seed_topk code
#include <iostream>
#include <string>

#include "fx_core/support/error.h"
#include "sdk_examples/tracing/examples.h"

int main(int argc, char** argv) {
  auto usage = [] {
    std::cerr << "usage: trace_examples NAME graph|code\nNAME is one of:";
    for (const std::string& n : fx::examples::example_names()) {
      std::cerr << " " << n;
    }
    std::cerr << "\n";
    return 2;
  };
  if (argc != 3) return usage();
  std::string name = argv[1], what = argv[2];
  if (what != "graph" && what != "code") return usage();
  try {
    auto gm = fx::examples::trace_example(name);
    if (what == "graph") {
      std::cout << gm->graph().str() << "\n";
    } else {
      std::cout << gm->code();
    }
  } catch (const fx::FxError& e) {
    std::cerr << "trace_examples: " << e.what() << "\n";
    return usage();
  }
  return 0;
}
