// Graph bundles as fx plugin-check reads them: one bundle read, the bundles
// of a set read and loaded, the files they hold, and find_graph_bundles
// (plugin_check.h).
#include "host/plugin_check/graph_bundle.h"

#include <algorithm>
#include <boost/filesystem.hpp>
#include <utility>

#include "fx_core/format/graph_json.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/support/strings.h"
#include "host/plugin_check/plugin_check.h"

namespace fx::host {
namespace plugin_check_internal {

namespace fs = boost::filesystem;

absl::StatusOr<Bundle> read_bundle(const std::string& directory) {
  Bundle bundle;
  bundle.name = fs::path(directory).filename().string();
  bundle.json_path = (fs::path(directory) / std::string(kGraphFile)).string();
  fs::path inputs = fs::path(directory) / std::string(kInputsFile);
  boost::system::error_code ec;
  if (!fs::exists(inputs, ec)) return bundle;
  absl::StatusOr<c10::IValue> value = read_value_file(inputs.string());
  if (!value.ok()) return value.status();
  bundle.has_inputs = true;
  if (value->isList()) {
    bundle.inputs = value->toListRef().vec();
  } else if (value->isTuple()) {
    const auto& items = value->toTupleRef().elements();
    bundle.inputs.assign(items.begin(), items.end());
  } else {
    bundle.inputs = {*value};
  }
  return bundle;
}

// A fresh GraphModule of the bundle's file.
absl::StatusOr<std::shared_ptr<GraphModule>> load_fresh(const Bundle& bundle) {
  absl::StatusOr<GraphFile> file = read_graph_file(bundle.json_path);
  if (!file.ok()) return file.status();
  return load_graph_module(*std::move(file));
}

std::vector<at::Tensor> example_tensors(const Bundle& bundle) {
  std::vector<at::Tensor> tensors;
  for (const c10::IValue& v : bundle.inputs) {
    if (v.isTensor()) tensors.push_back(v.toTensor().clone());
  }
  return tensors;
}

std::vector<c10::IValue> cloned_inputs(const Bundle& bundle) {
  std::vector<c10::IValue> inputs;
  for (const c10::IValue& v : bundle.inputs) {
    inputs.push_back(v.isTensor() ? c10::IValue(v.toTensor().clone()) : v);
  }
  return inputs;
}

// The bundles of `directories`, each read and its graph loaded once: a
// graph that does not load is bad input, not a graph the passes decline, so
// every such bundle is named (one line each, with why) and nothing is
// checked.
absl::StatusOr<std::vector<Bundle>> read_bundles(
    const std::vector<std::string>& directories) {
  std::vector<Bundle> bundles;
  std::vector<std::string> unloadable;
  for (const std::string& dir : directories) {
    absl::StatusOr<Bundle> bundle = read_bundle(dir);
    if (!bundle.ok()) return bundle.status();
    absl::StatusOr<std::shared_ptr<GraphModule>> module = load_fresh(*bundle);
    if (!module.ok()) {
      unloadable.push_back(cat(dir, ": the graph does not load: ",
                               std::string(module.status().message())));
    }
    bundles.push_back(*std::move(bundle));
  }
  if (!unloadable.empty()) {
    return absl::InvalidArgumentError(
        cat(unloadable.size(), " of ", directories.size(), " graph",
            directories.size() == 1 ? "" : "s", " do not load:\n",
            join(unloadable, "\n")));
  }
  return bundles;
}

// Every regular file of the bundles' directories (graph, weights, inputs),
// as files the command reads.
FilesRead bundle_files(const std::vector<std::string>& directories) {
  FilesRead reads;
  for (const std::string& dir : directories) {
    boost::system::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
         it.increment(ec)) {
      if (fs::is_regular_file(it->path(), ec)) {
        reads.add(it->path().string(), cat("a file of the bundle ", dir));
      }
    }
  }
  return reads;
}

}  // namespace plugin_check_internal

using plugin_check_internal::kGraphFile;
namespace fs = boost::filesystem;

absl::StatusOr<std::vector<std::string>> find_graph_bundles(
    const std::string& directory) {
  boost::system::error_code ec;
  fs::path dir(directory);
  if (fs::exists(dir / std::string(kGraphFile), ec)) return {{directory}};
  std::vector<std::string> bundles;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        cat(directory, ": cannot read the directory: ", ec.message()));
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    // Hidden directories are no bundles of the set (a writer's temporary
    // left by a crash: .NAME.export.*, .NAME.to_folder.*, .MODEL.partial-*).
    if (it->path().filename().string().rfind('.', 0) == 0) continue;
    if (fs::exists(it->path() / std::string(kGraphFile), ec)) {
      bundles.push_back(it->path().string());
    }
  }
  if (bundles.empty()) {
    return absl::InvalidArgumentError(
        cat(directory, ": no graph bundles (directories holding ", kGraphFile,
            ") in it"));
  }
  std::sort(bundles.begin(), bundles.end());
  return bundles;
}

}  // namespace fx::host
