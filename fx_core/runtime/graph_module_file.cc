#include "fx_core/runtime/graph_module_file.h"

#include <cstdio>
#include <functional>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/modules/functional_module.h"
#include "fx_core/runtime/modules/opaque_module.h"
#include "fx_core/runtime/skip_init.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

std::string message_of(const std::exception& e) {
  if (auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
    return c10_error->what_without_backtrace();
  }
  return e.what();
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The file's weight kinds by key.
using KindMap = absl::flat_hash_map<std::string, WeightKind>;

// The kind the file gives weight `key`, or nullptr.
const WeightKind* kind_of(const KindMap& kinds, const std::string& key) {
  auto it = kinds.find(key);
  return it == kinds.end() ? nullptr : &it->second;
}

bool is_parameter_kind(WeightKind kind) {
  return kind == WeightKind::kParameter || kind == WeightKind::kFrozenParameter;
}

BufferKind buffer_kind_of(WeightKind kind) {
  switch (kind) {
    case WeightKind::kNonPersistentBuffer:
      return BufferKind::kNonPersistent;
    case WeightKind::kTensor:
      return BufferKind::kPlain;
    default:
      return BufferKind::kPersistent;
  }
}

// A get_attr tensor outside every module, of the kind the file gives it;
// without one (files before "weight_kinds"), a parameter when it can be one
// (a floating or complex tensor) except torch.fx's tensor constants, which
// stay buffers.
GraphModule::Attribute loose_tensor(const std::string& key,
                                    const at::Tensor& tensor,
                                    const WeightKind* kind) {
  if (kind != nullptr && !is_parameter_kind(*kind)) {
    return {nullptr, tensor, false, buffer_kind_of(*kind)};
  }
  bool is_parameter =
      kind != nullptr || (!starts_with(key, "_tensor_constant") &&
                          (tensor.is_floating_point() || tensor.is_complex()));
  if (!is_parameter) return {nullptr, tensor, false};
  bool requires_grad = kind == nullptr || *kind == WeightKind::kParameter;
  return {nullptr, tensor.detach().set_requires_grad(requires_grad), true};
}

// The kind the file gives a module's weight must be what the module has;
// a parameter takes its requires_grad from it.
bool apply_kind(at::Tensor& target, bool is_parameter, const WeightKind& kind,
                std::string* error) {
  if (is_parameter != is_parameter_kind(kind)) {
    *error =
        cat("the module has it as a ", is_parameter ? "parameter" : "buffer",
            ", the file as a ", weight_kind_name(kind));
    return false;
  }
  if (is_parameter) {
    target.set_requires_grad(kind == WeightKind::kParameter);
  }
  return true;
}

// A file's tensor nothing else holds, laid out as a fresh copy of it into
// `target` would be (same dtype, contiguous, its storage its own and no
// larger): the module can take it instead of a copy, so a weight is not
// held twice while a file loads.
bool held_only_here(const at::Tensor& value, const at::Tensor& target) {
  return value.use_count() == 1 && value.storage().use_count() == 1 &&
         !value.is_quantized() && !target.is_quantized() &&
         value.dtype() == target.dtype() && value.device() == target.device() &&
         value.is_contiguous() && value.storage_offset() == 0 &&
         value.storage().nbytes() == value.nbytes();
}

// Copies `value` into the parameter or buffer `key` of `module` (a dotted
// path inside it). False with *error set when missing or misshapen.
// With `share`, the parameter or buffer takes `value`'s data instead, as it
// does when nothing else holds `value` (held_only_here). `kind`, when the file
// gives one, must agree (apply_kind).
bool load_into(torch::nn::Module& module, const std::string& key,
               const at::Tensor& value, bool share, const WeightKind* kind,
               std::string* error) {
  torch::NoGradGuard no_grad;
  std::optional<TensorAttr> found = tensor_at(module, key);
  auto* generic = dynamic_cast<nn::FunctionalModuleImpl*>(&module);
  if (!found && generic != nullptr && generic->adopt(key, value)) return true;
  if (!found) {
    *error = "the module has no such parameter or buffer";
    return false;
  }
  at::Tensor* target = &found->tensor;  // shares storage with the module's
  if (target->sizes() != value.sizes()) {
    *error =
        cat("shape mismatch: the module expects ", c10::str(target->sizes()),
            ", the weights hold ", c10::str(value.sizes()));
    return false;
  }
  // LibTorch refuses some weights here (an integer tensor as the data of a
  // parameter that requires grad, a complex one copied into a float one).
  try {
    if (share || held_only_here(value, *target)) {
      target->set_data(value);
    } else {
      target->copy_(value);
    }
  } catch (const c10::Error& e) {
    *error = e.what_without_backtrace();
    return false;
  }
  return kind == nullptr ||
         apply_kind(*target, found->is_parameter, *kind, error);
}

// True when `target` is `path` or inside it.
bool within(std::string_view target, std::string_view path) {
  return starts_with(target, path) &&
         (target.size() == path.size() || target[path.size()] == '.');
}

// Sets the mode of `module` and of everything below it as `spec` says:
// LibTorch's train() reaches every descendant, and a child GraphModule's
// mode (fuse_by_partitions makes them in training mode) is not its
// modules'.
void set_training(torch::nn::Module& module, const ModuleSpec& spec) {
  module.train(spec.training);
  if (!spec.graph_module) return;
  for (const auto& [path, sub] : spec.graph_module->modules) {
    if (auto m = submodule_at(module, path)) set_training(*m, sub);
  }
}

// The file's weights by key (the last of equal keys, as a dict keeps).
using WeightIndex = absl::flat_hash_map<std::string, const at::Tensor*>;

WeightIndex index_weights(const TensorList& weights) {
  WeightIndex index;
  index.reserve(weights.size());
  for (const auto& [k, t] : weights) index[k] = &t;
  return index;
}

absl::Status create_modules(
    const std::string& prefix,
    const std::vector<std::pair<std::string, ModuleSpec>>& specs,
    const WeightIndex& weights, const KindMap& kinds,
    GraphModule::AttributeMap& attrs);

// A child GraphModule: its modules, its get_attr tensors from the weights
// under its path, then its graph.
absl::StatusOr<std::shared_ptr<torch::nn::Module>> create_child(
    const std::string& path, const ChildGraphModule& child,
    const WeightIndex& weights, const KindMap& kinds) {
  GraphModule::AttributeMap attrs;
  absl::Status s =
      create_modules(cat(path, "."), child.modules, weights, kinds, attrs);
  if (!s.ok()) return s;
  for (const Node* n : child.graph->nodes()) {
    if (n->op() != Opcode::kGetAttr) continue;
    bool in_module = false;
    for (const auto& [p, attr] : attrs) in_module |= within(n->target(), p);
    if (in_module) continue;
    std::string key = cat(path, ".", n->target());
    auto found = weights.find(key);
    if (found == weights.end()) {
      return absl::InvalidArgumentError(
          cat("module '", path, "' (GraphModule): node '", n->name(),
              "' reads '", n->target(), "', but the weights lack '", key, "'"));
    }
    attrs.push_back({n->target(), loose_tensor(n->target(), *found->second,
                                               kind_of(kinds, key))});
  }
  try {
    return std::shared_ptr<torch::nn::Module>(std::make_shared<GraphModule>(
        attrs, child.graph->deepcopy(), child.class_name));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        cat("module '", path, "' (GraphModule): ", message_of(e)));
  }
}

// The weights `weights` holds for the module at `path`: the registry checks
// a config against them before the module allocates anything.
ModuleWeights module_weights(const std::string& path,
                             const WeightIndex& weights) {
  std::string prefix = cat(path, ".");
  return {path, [prefix, &weights](const std::string& key) {
            auto found = weights.find(cat(prefix, key));
            return found == weights.end() ? nullptr : found->second;
          }};
}

// Modules, from the registry (child GraphModules built here); `prefix` is
// the path of the GraphModule holding them, for messages and weights.
absl::Status create_modules(
    const std::string& prefix,
    const std::vector<std::pair<std::string, ModuleSpec>>& specs,
    const WeightIndex& weights, const KindMap& kinds,
    GraphModule::AttributeMap& attrs) {
  for (const auto& [path, spec] : specs) {
    std::shared_ptr<torch::nn::Module> module;
    if (spec.graph_module) {
      auto child =
          create_child(cat(prefix, path), *spec.graph_module, weights, kinds);
      if (!child.ok()) return child.status();
      module = *child;
    } else {
      try {
        ModuleWeights held = module_weights(cat(prefix, path), weights);
        module = ModuleRegistry::global().create(spec.type, spec.config, &held);
      } catch (const std::exception& e) {
        return absl::InvalidArgumentError(
            cat("module '", prefix, path, "': ", message_of(e)));
      }
    }
    set_training(*module, spec);
    attrs.push_back({path, {module, {}}});
  }
  return absl::OkStatus();
}

// The module attributes of `attrs` by path, each path at its first
// position.
using ModuleIndex = absl::flat_hash_map<std::string, size_t>;

ModuleIndex index_modules(const GraphModule::AttributeMap& attrs) {
  ModuleIndex index;
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (attrs[i].second.module) index.emplace(attrs[i].first, i);
  }
  return index;
}

// The first module (in `attrs` order) whose path is a dotted prefix of
// `key`, or nullptr; looked up once per '.' of the key.
const GraphModule::AttributeMap::value_type* owning_module(
    const std::string& key, const ModuleIndex& index,
    const GraphModule::AttributeMap& attrs) {
  size_t best = attrs.size();
  for (size_t dot = key.find('.'); dot != std::string::npos;
       dot = key.find('.', dot + 1)) {
    auto found = index.find(key.substr(0, dot));
    if (found != index.end() && found->second < best) best = found->second;
  }
  return best < attrs.size() ? &attrs[best] : nullptr;
}

// One weight: into the module whose path prefixes `key`, or a top-level
// get_attr target.
absl::Status place_weight(const std::string& key, const at::Tensor& tensor,
                          bool share, const WeightKind* kind,
                          const ModuleIndex& modules,
                          GraphModule::AttributeMap& attrs) {
  if (const auto* owner = owning_module(key, modules, attrs)) {
    const auto& [path, attr] = *owner;
    std::string error;
    if (!load_into(*attr.module, key.substr(path.size() + 1), tensor, share,
                   kind, &error)) {
      return absl::InvalidArgumentError(
          cat("weight '", key, "' for module '", path, "' (",
              module_type_name(*attr.module), "): ", error));
    }
    return absl::OkStatus();
  }
  attrs.push_back({key, loose_tensor(key, tensor, kind)});
  return absl::OkStatus();
}

// Weights: into the modules, or top-level get_attr targets. Adds the keys
// read to `loaded`.
absl::Status place_weights(const TensorList& weights, const KindMap& kinds,
                           bool share, GraphModule::AttributeMap& attrs,
                           absl::flat_hash_set<std::string>& loaded) {
  const ModuleIndex modules = index_modules(attrs);
  for (const auto& [key, tensor] : weights) {
    loaded.insert(key);
    absl::Status placed =
        place_weight(key, tensor, share, kind_of(kinds, key), modules, attrs);
    if (!placed.ok()) return placed;
  }
  return absl::OkStatus();
}

// Every parameter and buffer of every module must come from the weights.
absl::Status check_weights_complete(
    const GraphFile& file, const GraphModule::AttributeMap& attrs,
    const absl::flat_hash_set<std::string>& loaded) {
  for (const auto& [path, attr] : attrs) {
    if (!attr.module) continue;
    std::vector<std::string> keys;
    for (const auto& p : attr.module->named_parameters(true)) {
      keys.push_back(p.key());
    }
    for (const auto& b : attr.module->named_buffers(true)) {
      keys.push_back(b.key());
    }
    for (const std::string& key : keys) {
      if (!loaded.contains(cat(path, ".", key))) {
        return absl::InvalidArgumentError(
            cat("module '", path, "' (", module_type_name(*attr.module), "): '",
                key, "' is missing from the weights",
                file.weights.empty() ? " (the file names no weights)"
                                     : cat(" (", file.weights, ")")));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// Builds the modules, places the weights and compiles. Every module's
// weights are replaced by the given tensors (shared with `share`, else
// copied) or the build fails, so LibTorch's random initialisation is
// skipped (skip_init.h), and each config is checked against the weights
// before its module is made.
absl::StatusOr<std::shared_ptr<GraphModule>> build_graph_module(
    GraphFile file, const TensorList& weights, bool share,
    const InProcessParts& in_process = {}) {
  if (!file.graph) return absl::InvalidArgumentError("the file has no graph");
  GraphModule::AttributeMap attrs;
  const KindMap kinds(file.weight_kinds.begin(), file.weight_kinds.end());
  absl::Status s;
  {
    // Every module weight is replaced (copied or shared) or the build fails
    // (check_weights_complete), so none is randomly initialised first.
    SkipInitGuard no_init;
    s = create_modules("", file.modules, index_weights(weights), kinds, attrs);
  }
  if (!s.ok()) return s;
  absl::flat_hash_set<std::string> loaded;
  s = place_weights(weights, kinds, share, attrs, loaded);
  if (!s.ok()) return s;
  s = check_weights_complete(file, attrs, loaded);
  if (!s.ok()) return s;
  attrs.insert(attrs.end(), in_process.modules.begin(),
               in_process.modules.end());
  std::shared_ptr<GraphModule> module;
  try {
    module = std::make_shared<GraphModule>(attrs, std::move(file.graph),
                                           "GraphModule", in_process.targets);
    if (file.shape_env) module->set_shape_env(file.shape_env);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(message_of(e));
  }
  absl::Status executable = module->check_executable();
  if (!executable.ok()) return executable;
  return module;
}

}  // namespace

absl::StatusOr<std::shared_ptr<GraphModule>> load_graph_module(GraphFile file) {
  TensorList weights;
  if (!file.weights.empty()) {
    auto read = read_tensor_dict(weights_path(file));
    if (!read.ok()) return read.status();
    weights = std::move(*read);
  }
  return build_graph_module(std::move(file), weights, /*share=*/false);
}

absl::StatusOr<std::shared_ptr<GraphModule>> load_graph_module_shared(
    GraphFile file, const TensorList& weights,
    const InProcessParts& in_process) {
  file.weights = "in memory";  // named in messages about missing weights
  return build_graph_module(std::move(file), weights, /*share=*/true,
                            in_process);
}

std::string module_type_name(const torch::nn::Module& module) {
  if (dynamic_cast<const GraphModule*>(&module)) {
    return std::string(kGraphModuleType);
  }
  const ModuleKind* kind = ModuleRegistry::global().find(module);
  return kind ? kind->type : module.name();
}

absl::StatusOr<std::shared_ptr<GraphModule>> read_graph_module(
    const std::string& path) {
  absl::StatusOr<GraphFile> file = read_graph_file(path);
  if (!file.ok()) return file.status();
  return load_graph_module(std::move(*file));
}

std::string weights_file_for(const std::string& json_path) {
  size_t slash = json_path.rfind('/');
  std::string name =
      slash == std::string::npos ? json_path : json_path.substr(slash + 1);
  if (name == "graph.fx.json") return "model.weights.pt";
  auto strip = [&](std::string_view suffix) {
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      name.resize(name.size() - suffix.size());
    }
  };
  strip(".json");
  strip(".fx");
  return name + ".weights.pt";
}

}  // namespace fx
