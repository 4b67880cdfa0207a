// fx_batch: many `fx` commands in one process, for the torch.fx conformance
// suite (tools/conformance/torch_fx_suite.py), which checks `fx print` and
// `fx code` on hundreds of bundles: starting the fx binary once per bundle
// (LibTorch's load, about 0.5 s each) was a third of the suite's time.
//
// Reads one JSON array of strings a line on stdin, the arguments of one `fx`
// command (without the program name), runs it with run_fx_command, the
// function the fx binary's main() calls, and writes one JSON object a line on
// stdout: {"status": N, "out": "...", "err": "..."} (bytes that are not
// UTF-8 replaced). Ends at the end of stdin. A line that is not such an array
// is answered with status 2 and a message. Threads as in fx: every CPU, or
// $OMP_NUM_THREADS.
#include <iostream>
#include <new>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "fx_core/runtime/parallel.h"
#include "tools/fx_commands.h"

namespace {

using json = nlohmann::json;

json run_line(const std::string& line) {
  std::vector<std::string> args;
  try {
    json request = json::parse(line);
    if (!request.is_array()) throw std::invalid_argument("not an array");
    for (const json& a : request) args.push_back(a.get<std::string>());
  } catch (const std::exception& e) {
    return {{"status", 2},
            {"out", ""},
            {"err", std::string("fx_batch: a request is a JSON array of "
                                "strings: ") +
                        e.what() + "\n"}};
  }
  std::ostringstream out, err;
  int status;
  try {
    status = fx::tools::run_fx_command(args, out, err);
  } catch (const std::bad_alloc&) {
    err << "fx: out of memory\n";
    status = 1;
  }
  return {{"status", status}, {"out", out.str()}, {"err", err.str()}};
}

}  // namespace

int main() {
  fx::set_num_threads();
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::cout << run_line(line).dump(-1, ' ', false,
                                     json::error_handler_t::replace)
              << '\n'
              << std::flush;
  }
  return 0;
}
