// Graph bundles as fx plugin-check reads them (plugin_check.h): directories
// holding graph.fx.json and, optionally, input.pt (torch.save of the example
// inputs). Private to host/plugin_check.
#ifndef HOST_PLUGIN_CHECK_GRAPH_BUNDLE_H_
#define HOST_PLUGIN_CHECK_GRAPH_BUNDLE_H_

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "fx_core/io/output_rule.h"
#include "fx_core/runtime/graph_module.h"

namespace fx::host::plugin_check_internal {

inline constexpr std::string_view kGraphFile = "graph.fx.json";
inline constexpr std::string_view kInputsFile = "input.pt";

// A graph bundle: where its JSON is, and its example inputs (if any).
struct Bundle {
  std::string name;
  std::string json_path;
  bool has_inputs = false;
  std::vector<c10::IValue> inputs;
};

// The bundle in `directory`, its example inputs read (when it has them).
absl::StatusOr<Bundle> read_bundle(const std::string& directory);

// A fresh GraphModule of the bundle's file.
absl::StatusOr<std::shared_ptr<GraphModule>> load_fresh(const Bundle& bundle);

// The bundle's example inputs that are tensors, cloned.
std::vector<at::Tensor> example_tensors(const Bundle& bundle);

// The bundle's example inputs, the tensors cloned.
std::vector<c10::IValue> cloned_inputs(const Bundle& bundle);

// The bundles of `directories`, each read and its graph loaded once; an
// error naming every bundle whose graph does not load.
absl::StatusOr<std::vector<Bundle>> read_bundles(
    const std::vector<std::string>& directories);

// Every regular file of the bundles' directories, as files the command
// reads.
FilesRead bundle_files(const std::vector<std::string>& directories);

}  // namespace fx::host::plugin_check_internal

#endif  // HOST_PLUGIN_CHECK_GRAPH_BUNDLE_H_
