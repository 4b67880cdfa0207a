// Reading and writing `fx-graph` JSON files (docs/fx-graph-json.md,
// version 1): the interchange format between torch.fx and this SDK.
//
// Reading validates everything and builds nothing on failure: a malformed
// file gets an absl::Status that names the place (`node 'add' field
// 'args[1]'`) and the problem. Writing produces the bytes Python's
// `json.dump(obj, f, indent=1)` produces, so a file read and written again is
// byte-identical, and replaces the destination atomically.
//
// A graph whose codegen is a PyTreeCodeGen (fx_core/ir/pytree_codegen.h,
// torch 1.13's _PyTreeCodeGen) is written with its pytree info in the
// file's optional "pytree" entry (an extension of the spec's version 1):
//   "pytree": {"orig_args": ["self", "x"], "in_spec": SPEC,
//              "out_spec": SPEC or null}
//   SPEC: "*" (a leaf) or {"type": "tuple" | "list" | "namedtuple" | "dict" |
//         "OrderedDict" | "immutable_list" | "immutable_dict",
//         "context": the keys, an array of ARGs (dict types), or
//                    {"class": "module.Name", "fields": ["a", ..]}
//                    (namedtuple); absent for the others,
//         "children": [SPEC, ...]}
// and the reader gives the graph that codegen back; other graphs are
// written without the entry, as before.
//
// Three ARG forms extend the spec's version 1 (files without them read as
// before):
//   {"namedtuple": {"class": "test_fx.Pair", "fields": ["x", "y"],
//                   "items": [ARG, ARG], "repr": "fields"}}
//     a NamedTuple (argument.h): the class as torch.fx's code names it
//     (module and __name__; `#<hex>` after it: a class only the process that
//     wrote the file could tell apart), one item per field; "repr" (optional,
//     "tuple" when absent) says how the graph text shows it: "fields" as
//     `Pair(x=%a, y=1.2)` (the class's _custom_fx_repr_fn), "tuple" as
//     `(%a, 1.2)`. Reading builds no class: text, code and runs (a named
//     tuple value of that name) need none.
//   {"keyed_dict": [[KEY, ARG], ...]}
//     a dict whose keys are not all str; KEY a bool, int or float ARG (or a
//     str), each once. A dict with str keys only is written as {"dict": ..}.
//   {"qscheme": "torch.per_channel_affine"}
//     a torch.qscheme (the five torch 1.13 has), as convert_to_reference_fx's
//     reference modules take one in their weight_qparams.
//
// torch.fx does not export `meta['is_wrapped']`; a call_function target
// outside torch, operator and builtins.getattr can only come from `wrap`, so
// the reader marks such nodes wrapped unless meta says otherwise, and the
// writer leaves out what the reader would infer.
#ifndef FX_CORE_FORMAT_GRAPH_JSON_H_
#define FX_CORE_FORMAT_GRAPH_JSON_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/graph.h"
#include "fx_core/symbolic/shape_env.h"

namespace fx {

// The `type` of a child GraphModule (fuse_by_partitions' and split_module's
// submodules) in a `modules` entry.
inline constexpr std::string_view kGraphModuleType =
    "torch.fx.graph_module.GraphModule";

struct ChildGraphModule;

// A `modules` entry: the Python class and its constructor arguments.
struct ModuleSpec {
  std::string type;     // "torch.nn.Conv2d"
  ArgumentDict config;  // constructor keyword arguments
  bool training = false;
  // Set exactly when `type` is kGraphModuleType; `config` is then empty.
  std::shared_ptr<ChildGraphModule> graph_module;
};

// A child GraphModule, described by GraphModule's constructor arguments
// (`GraphModule(root, graph, class_name)`) in ARG encoding:
//   "config": {"root": {"dict": {"PATH": {"dict": {"type": .., "config":
//                {"dict": {..}}, "training": ..}}}},
//              "graph": [{"dict": {"name": .., "op": .., "target": ..,
//                "args": [..], "kwargs": {"dict": {..}}, "type"?: ..,
//                "meta"?: {"dict": {..}}}}, ..],
//              "class_name": "fused_0"}
// `root` holds the modules the child's call_module nodes call, by path
// inside the child, in the form of a module-valued config (nested
// GraphModules the same way); `graph` its nodes as NODE entries written as
// dict ARGs, whose {"node": NAME} references name the child's own nodes.
// Its parameters, buffers and get_attr tensors are in the file's weights
// under the child's path (`fused_0.conv1.weight`).
struct ChildGraphModule {
  std::shared_ptr<Graph> graph;
  std::vector<std::pair<std::string, ModuleSpec>> modules;
  std::string class_name = "GraphModule";
};

// What a weight is in the Python module (the file's optional
// "weight_kinds": {"KEY": "parameter", ...}, an extension of the spec's
// version 1): torch.nn.Parameter with requires_grad True or False, a buffer
// in or out of state_dict, or a plain tensor attribute (set with setattr).
enum class WeightKind {
  kParameter,            // "parameter"
  kFrozenParameter,      // "frozen_parameter": requires_grad=False
  kBuffer,               // "buffer"
  kNonPersistentBuffer,  // "non_persistent_buffer": persistent=False
  kTensor,               // "tensor": neither parameter nor buffer
};
std::string_view weight_kind_name(WeightKind kind);
// Weights key -> kind, in file order.
using WeightKinds = std::vector<std::pair<std::string, WeightKind>>;

struct GraphFile {
  std::unique_ptr<Graph> graph;
  // Qualified path -> module, in file order.
  std::vector<std::pair<std::string, ModuleSpec>> modules;
  // The weights path as written in the file (relative to the file), or empty.
  std::string weights;
  // The kind of each weight the file names one for; a weight without one
  // is what files without "weight_kinds" make it (graph_module_file.h).
  WeightKinds weight_kinds;
  // A symbolic graph's capture-time hints and guards (the file's optional
  // "shape_env": {"hints": {"t0.size(0)": 4}, "guards": ["Eq(Mod(t0.size(1),
  // 2), 0)", ...]}, an extension of the spec's version 1), or nullptr.
  std::shared_ptr<const sym::ShapeEnv> shape_env;
  // The directory of the file that was read (for resolving `weights`).
  std::string directory;
};

// Parses JSON text; `source` names it in messages (a path or "<string>").
absl::StatusOr<GraphFile> parse_graph_json(std::string_view text,
                                           std::string_view source);
absl::StatusOr<GraphFile> read_graph_file(const std::string& path);

// The path the reader opens for `file`'s weights (its `weights` resolved
// against its directory), or "" when it names none.
std::string weights_path(const GraphFile& file);

// The `weights` the graph file at `path` names, read without building its
// graph (for a writer about to replace it), or "" when there is no such
// file, it is not a JSON object, or it names no weights.
std::string read_weights_name(const std::string& path);

// True when the reader infers is_wrapped for a call_function target.
bool is_wrapped_by_default(std::string_view call_function_target);

// Serialises a graph (and optional modules, weights path, shape
// environment: its hints and guards, and weight kinds).
std::string to_graph_json(
    const Graph& graph,
    const std::vector<std::pair<std::string, ModuleSpec>>& modules = {},
    std::string_view weights = {}, const sym::ShapeEnv* shape_env = nullptr,
    const WeightKinds& weight_kinds = {});
std::string to_graph_json(const GraphFile& file);

// Checks that `text` (about to be written to `path`) reads back, so that a
// writer never leaves a file its own reader refuses: OK, or an error naming
// `path` and what the reader says.
absl::Status check_reads_back(std::string_view text, std::string_view path);
// Writes to a temporary file beside `path` and renames it into place.
absl::Status write_graph_file(const std::string& path, const GraphFile& file);

}  // namespace fx

#endif  // FX_CORE_FORMAT_GRAPH_JSON_H_
