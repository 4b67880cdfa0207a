// GraphModules to and from fx-graph bundles (docs/fx-graph-json.md):
// `graph.fx.json` plus the weights file it names (torch.save format).
//
// Loading builds every module of the file's `modules` section through the
// ModuleRegistry (type and constructor config, training mode), loads the
// weights into those modules' parameters and buffers and into the get_attr
// targets, and compiles the graph. Everything is checked before a
// GraphModule is returned: an unknown module type, a config that does not
// bind, a missing or misshapen weight, a call_function target without a
// kernel all fail with a status naming the module, weight or node (and how
// to register what is unknown), never later at run time.
//
// Weight kinds (the file's optional "weight_kinds", graph_json.h): a
// get_attr tensor outside every listed module becomes what its kind says: a
// parameter with requires_grad True ("parameter") or False
// ("frozen_parameter"), or a buffer the GraphModule records as a buffer,
// a non-persistent one or a plain tensor attribute (BufferKind). A module's
// weight must have the kind the module gives it (a parameter's kind sets its
// requires_grad). Without a kind (files written before "weight_kinds"), a
// get_attr tensor is a parameter requiring grad when it can be one (floating
// or complex), except torch.fx's tensor constants (`_tensor_constant0`,
// ...), which are buffers, and a module's weights are as the module makes
// them. Writing records every weight's kind.
#ifndef FX_CORE_RUNTIME_GRAPH_MODULE_FILE_H_
#define FX_CORE_RUNTIME_GRAPH_MODULE_FILE_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"

namespace fx {

// Builds a GraphModule from a parsed file (consuming its graph).
absl::StatusOr<std::shared_ptr<GraphModule>> load_graph_module(GraphFile file);
// The weights of a bundle in memory: key -> tensor, in file order.
using TensorList = std::vector<std::pair<std::string, at::Tensor>>;

// What a GraphModule built in process may hold beyond what a file can
// express: modules made by the caller (placed at their paths as they are,
// after the file's modules and weights; such a module takes no weights from
// `weights`), targets no registry knows and get_attr targets that are host
// objects (GraphModule::foreign_targets).
struct InProcessParts {
  GraphModule::AttributeMap modules;
  ForeignTargets targets;
};

// Builds a GraphModule from a parsed file and weights given in memory (the
// file's `weights` name is ignored), checked as load_graph_module checks,
// with `in_process`'s modules and targets.
// No weight is copied: every parameter and buffer of a module, and every
// get_attr tensor, shares the storage of the given tensor (the module's
// parameter takes the given tensor's data, as Python's `p.data = t`), so an
// in-place change on either side is seen by the other. Since every weight is
// replaced, the modules are built without LibTorch's random initialisation
// (skip_init.h).
absl::StatusOr<std::shared_ptr<GraphModule>> load_graph_module_shared(
    GraphFile file, const TensorList& weights,
    const InProcessParts& in_process = {});
// The Python type a bundle names `module` by: its ModuleRegistry kind's
// ("torch.nn.Conv2d"), torch.fx.graph_module.GraphModule for a GraphModule,
// else LibTorch's class name (module.name()) for a module no kind covers.
std::string module_type_name(const torch::nn::Module& module);

// Reads and loads `path` (an fx-graph JSON file).
absl::StatusOr<std::shared_ptr<GraphModule>> read_graph_module(
    const std::string& path);

// The weights file a bundle written to `json_path` names, derived from its
// name so that two bundles in one directory never share one: `OUT.json`,
// `OUT.fx.json` and `OUT` -> `OUT.weights.pt`; `graph.fx.json` (the bundle
// layout torchfx_export.py and to_folder write) -> `model.weights.pt`.
std::string weights_file_for(const std::string& json_path);

// A GraphModule as a bundle in memory: the fx-graph JSON text (naming
// `weights_name` when there are weights) and every parameter and buffer
// the graph references, the module's own tensors (not copies). With
// include_nodes false the JSON's node list is left empty (for a reader that
// takes the nodes another way: fx_sdk.to_torch_fx).
//
// What exists only in this process cannot be described: a graph calling a
// foreign target or reading a foreign attribute
// (GraphModule::foreign_targets) fails naming the node and target, a module
// that is an OpaqueModuleImpl or has a kind without `describe` (a delegated
// module) fails naming the module. With `in_process_modules` given, opaque
// modules the graph calls are left out of the bundle instead (they have no
// weights of their own there) and their paths appended to it, for a caller that
// puts the objects back itself (fx_sdk.to_torch_fx).
struct GraphBundle {
  std::string json;
  TensorList weights;
};
absl::StatusOr<GraphBundle> describe_graph_module(
    const GraphModule& module, std::string_view weights_name,
    bool include_nodes = true,
    std::vector<std::string>* in_process_modules = nullptr);

// The other of a bundle's two weights names: `out.weights.pt` <->
// `out.weights.1.pt` (`NAME` <-> `NAME.1` for names without `.pt`).
std::string alternate_weights_name(const std::string& name);

// Writes `module` as a bundle: `json_path` and, beside it, `weights_name`
// (weights_file_for(json_path) when empty) holding every parameter and
// buffer the graph references. Modules are described through the
// ModuleRegistry.
//
// The bundle is written as a set: the weights first, each file atomically,
// the graph last, whose rename commits the new bundle. A bundle already at
// `json_path` naming `weights_name` keeps it until then: the new weights
// take alternate_weights_name(weights_name), and the old weights file is
// removed after the commit. A crash at any point leaves the old bundle
// loadable and unchanged, or the new one whole (and at worst an unused
// weights file beside it).
absl::Status write_graph_module(const GraphModule& module,
                                const std::string& json_path,
                                const std::string& weights_name = "");

}  // namespace fx

#endif  // FX_CORE_RUNTIME_GRAPH_MODULE_FILE_H_
