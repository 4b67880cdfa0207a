// opinfo_run: runs the op-coverage suite that tools/opinfo_export.py wrote.
//
//   opinfo_run DIR/index.json [--results FILE] [--md FILE] [--json FILE]
//              [--threads N] [--save-mismatches]
//
// Loads, runs and compares every exported case in one process
// (tools/opinfo_runner.h), writes one result line per case (to FILE with
// --results, else to stdout), then the summary table: cases exported / run /
// matching and the failures grouped by reason, as markdown on stdout and in
// --md, and as JSON (with every case's result) in --json. LibTorch runs on
// --threads intra-op threads (default 1, as the exporter's eager runs).
// Exits 0 when the suite ran, whatever it matched; 2 on a usage error, 1 when
// the index cannot be read. --save-mismatches writes what a mismatching case
// computed as output.pt in its directory.
#include <ATen/Parallel.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "fx_core/io/atomic_file.h"
#include "tools/opinfo_runner.h"

namespace {

int usage() {
  std::cerr << "usage: opinfo_run DIR/index.json [--results FILE] [--md FILE] "
               "[--json FILE] [--threads N] [--save-mismatches]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string index, results, md, json_path;
  int threads = 1;
  fx::opinfo::RunOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string n;
    if (arg == "--results") {
      if (!value(&results)) return usage();
    } else if (arg == "--md") {
      if (!value(&md)) return usage();
    } else if (arg == "--json") {
      if (!value(&json_path)) return usage();
    } else if (arg == "--save-mismatches") {
      options.save_mismatches = true;
    } else if (arg == "--threads") {
      if (!value(&n)) return usage();
      threads = std::atoi(n.c_str());
      if (threads < 1) return usage();
    } else if (!arg.empty() && arg[0] == '-') {
      return usage();
    } else if (index.empty()) {
      index = arg;
    } else {
      return usage();
    }
  }
  if (index.empty()) return usage();
  at::set_num_threads(threads);

  std::ofstream results_file;
  options.lines = &std::cout;
  if (!results.empty()) {
    results_file.open(results);
    if (!results_file) {
      std::cerr << "opinfo_run: " << results << ": cannot write\n";
      return 1;
    }
    options.lines = &results_file;
  }
  auto summary = fx::opinfo::run_index(index, options);
  if (!summary.ok()) {
    std::cerr << "opinfo_run: " << summary.status().message() << "\n";
    return 1;
  }
  std::string table = fx::opinfo::summary_markdown(*summary);
  std::cout << "\n" << table;
  for (const auto& [path, text] :
       {std::pair{md, table},
        std::pair{json_path, fx::opinfo::summary_json(*summary)}}) {
    if (path.empty()) continue;
    absl::Status written = fx::write_file_atomically(path, text);
    if (!written.ok()) {
      std::cerr << "opinfo_run: " << written.message() << "\n";
      return 1;
    }
  }
  return 0;
}
