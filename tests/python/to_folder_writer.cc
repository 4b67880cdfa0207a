// to_folder for the crash test (bundle_crash_test.py): reads the bundle
// GRAPH and writes it with fx::to_folder to FOLDER as MODULE_NAME.
//
//   to_folder_writer GRAPH FOLDER MODULE_NAME
#include <iostream>
#include <memory>

#include "absl/status/statusor.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/graph_module_folder.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: to_folder_writer GRAPH FOLDER MODULE_NAME\n";
    return 2;
  }
  absl::StatusOr<std::shared_ptr<fx::GraphModule>> gm =
      fx::read_graph_module(argv[1]);
  if (!gm.ok()) {
    std::cerr << gm.status().message() << "\n";
    return 1;
  }
  absl::Status s = fx::to_folder(**gm, argv[2], argv[3]);
  if (!s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  return 0;
}
