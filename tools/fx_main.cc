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
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "fx_core/io/regular_file.h"
#include "fx_core/runtime/parallel.h"
#include "tools/fx_commands.h"

namespace {

// Takes the global `--max-file-bytes N` (or `=N`) out of `args`: the largest
// file any command reads (fx_core/io/regular_file.h). False with a message
// on a bad value.
bool take_file_limit(std::vector<std::string>& args) {
  const std::string flag = "--max-file-bytes";
  for (size_t i = 0; i < args.size(); ++i) {
    std::string value;
    size_t taken = 1;
    if (args[i] == flag && i + 1 < args.size()) {
      value = args[i + 1];
      taken = 2;
    } else if (args[i].rfind(flag + "=", 0) == 0) {
      value = args[i].substr(flag.size() + 1);
    } else if (args[i] == flag) {
      value = "";
    } else {
      continue;
    }
    char* end = nullptr;
    unsigned long long bytes = std::strtoull(value.c_str(), &end, 10);
    if (value.empty() || value[0] == '-' || *end != '\0' || bytes == 0) {
      std::cerr << "fx: --max-file-bytes needs a positive number of bytes, "
                   "got '"
                << value << "'\n";
      return false;
    }
    fx::set_max_file_bytes(bytes);
    args.erase(args.begin() + i, args.begin() + i + taken);
    return true;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  fx::set_num_threads();  // the SDK's default: all available cores
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!take_file_limit(args)) return 2;
  try {
    return fx::tools::run_fx_command(args, std::cout, std::cerr);
  } catch (const std::bad_alloc&) {
    // A file within the limit whose contents still do not fit (a graph
    // whose parse needs more memory than there is): an error, not abort().
    std::cerr << "fx: out of memory\n";
    return 1;
  }
}
