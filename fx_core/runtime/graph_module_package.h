// The Python package fx::to_folder writes (graph_module_folder.h), as text
// and tensors: module.py's source (the module rebuilt from the attributes
// the code references, the definitions the code needs at module level) and
// the state dict. Writing them as a folder is graph_module_folder.cc's.
#ifndef FX_CORE_RUNTIME_GRAPH_MODULE_PACKAGE_H_
#define FX_CORE_RUNTIME_GRAPH_MODULE_PACKAGE_H_

#include <ATen/ATen.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fx_core/runtime/graph_module.h"

namespace fx {
namespace folder_package {

using TensorDict = std::vector<std::pair<std::string, at::Tensor>>;

// `status` with "to_folder: WHAT: " before its message (OK stays OK).
absl::Status with_context(const absl::Status& status, std::string_view what);

// module.py's source for `gm`, its class named `module_name`, and the state
// dict its __init__ loads; or why the package cannot be written.
absl::Status package_contents(const GraphModule& gm,
                              const std::string& module_name, std::string* py,
                              TensorDict* state);

}  // namespace folder_package
}  // namespace fx

#endif  // FX_CORE_RUNTIME_GRAPH_MODULE_PACKAGE_H_
