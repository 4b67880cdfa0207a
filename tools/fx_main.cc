// The `fx` command: inspect, generate code for, and run fx-graph files.
//
//   fx print FILE              graph text, as print(gm.graph)
//   fx tabular FILE            graph.print_tabular()
//   fx code [--lang=python|cpp] FILE
//                              gm.code (Python), or the C++ (LibTorch) source
//   fx exec FILE --inputs IN.pt [--outputs OUT.pt] [--engine E]
//           [--threads N] [--repeat N]
//                              runs a bundle (and times it)
//   fx plugins / run / dot / minimize
//                              plugins, pipelines of their passes, Graphviz,
//                              the net minimizer
//   fx plugin-check LIB.so     every pass of a plugin checked on graphs
//   fx reduce FILE             a failing graph shrunk to a reproducer
//   fx demo                    the seed docs' MyModule, traced, run, piped
//                              through first-party plugins
//
// Output goes to stdout; errors go to stderr with a non-zero exit status.
// `--max-file-bytes N`, before or after the command, sets the largest file
// read (16 GiB by default, or $FX_MAX_FILE_BYTES).
// Threads: every CPU the process may run on ($OMP_NUM_THREADS when set), for
// LibTorch and OpenBLAS (fx_core/runtime/parallel.h); `fx exec --threads N`
// sets another count.
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "fx_core/runtime/parallel.h"
#include "tools/fx_commands.h"

int main(int argc, char** argv) {
  fx::set_num_threads();  // the SDK's default: all available cores
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return fx::tools::run_fx_command(args, std::cout, std::cerr);
  } catch (const std::bad_alloc&) {
    // A file within the limit whose contents still do not fit (a graph
    // whose parse needs more memory than there is): an error, not abort().
    std::cerr << "fx: out of memory\n";
    return 1;
  }
}
