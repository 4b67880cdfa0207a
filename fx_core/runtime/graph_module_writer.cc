// Writing a GraphModule as a bundle (graph_module_file.h): its modules
// described as the registry builds them, its weights with their kinds, the
// graph file and the weights file written atomically.
#include <ATen/ATen.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "fx_core/io/atomic_file.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/modules/functional_module.h"
#include "fx_core/runtime/modules/opaque_module.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

namespace {

absl::Status describe_modules(
    const std::string& prefix, const GraphModule& module,
    std::vector<std::pair<std::string, ModuleSpec>>& modules,
    std::vector<std::string>* in_process = nullptr);

// A graph that calls a target or reads an attribute only this process has
// cannot be written.
absl::Status check_no_foreign_targets(const std::string& prefix,
                                      const GraphModule& module) {
  const ForeignTargets& foreign = module.foreign_targets();
  if (foreign.empty()) return absl::OkStatus();
  for (const Node* n : module.graph().nodes()) {
    const ForeignAttribute* a = n->op() == Opcode::kGetAttr
                                    ? foreign.find_attribute(n->target())
                                    : nullptr;
    if (a != nullptr && !module.get_attr(n->target()).defined()) {
      return absl::InvalidArgumentError(cat(
          prefix, "node '", n->name(), "' (get_attr) reads attribute '",
          n->target(), "'", a->description.empty() ? "" : " (", a->description,
          a->description.empty() ? "" : ")", ", a ", a->origin,
          " object that exists only in this process: a graph file cannot "
          "hold it"));
    }
    if (const ForeignTarget* t = foreign.find(n->op(), n->target())) {
      return absl::InvalidArgumentError(
          cat(prefix, "node '", n->name(), "' calls ", opcode_name(n->op()),
              " target '", n->target(), "', a ", t->origin,
              " object that exists only in this process: a graph file cannot "
              "hold it"));
    }
  }
  return absl::OkStatus();
}

// One module's MODULE entry: through the registry, a child GraphModule by
// its graph and modules.
absl::StatusOr<ModuleSpec> describe_module(const std::string& path,
                                           const torch::nn::Module& module) {
  ModuleSpec spec;
  spec.training = module.is_training();
  if (auto* opaque = dynamic_cast<const OpaqueModuleImpl*>(&module)) {
    return absl::InvalidArgumentError(
        cat("module '", path, "' (", opaque->type(),
            ") cannot be written to a file: it is a ", opaque->origin(),
            " object that exists only in this process (its class is not a "
            "module kind the SDK knows)"));
  }
  if (auto* child = dynamic_cast<const GraphModule*>(&module)) {
    absl::Status foreign =
        check_no_foreign_targets(cat("module '", path, "': "), *child);
    if (!foreign.ok()) return foreign;
    spec.type = std::string(kGraphModuleType);
    spec.graph_module = std::make_shared<ChildGraphModule>();
    spec.graph_module->graph = child->graph().deepcopy();
    spec.graph_module->class_name = child->class_name();
    absl::Status s =
        describe_modules(cat(path, "."), *child, spec.graph_module->modules);
    if (!s.ok()) return s;
    return spec;
  }
  const ModuleKind* kind = ModuleRegistry::global().find(module);
  if (kind != nullptr && !kind->describe) {
    return absl::InvalidArgumentError(
        cat("module '", path, "' (", kind->type,
            ") cannot be written to a file: its kind cannot describe itself "
            "(a module delegated to a backend exists only in this process)"));
  }
  if (kind == nullptr) {
    return absl::InvalidArgumentError(
        cat("module '", path, "' (", module.name(),
            ") cannot be described: register its class with "
            "fx::ModuleRegistry::global().add()"));
  }
  spec.type = kind->type;
  spec.config = kind->describe(module);
  return spec;
}

// The modules `module`'s graph calls, by path inside it; `prefix` is its
// own path, for messages.
absl::Status describe_modules(
    const std::string& prefix, const GraphModule& module,
    std::vector<std::pair<std::string, ModuleSpec>>& modules,
    std::vector<std::string>* in_process) {
  for (const auto& [path, attr] : module.referenced_attributes()) {
    if (!attr.module) continue;
    if (in_process != nullptr &&
        dynamic_cast<const OpaqueModuleImpl*>(attr.module.get()) != nullptr) {
      in_process->push_back(path);
      continue;
    }
    bool seen = false;
    for (const auto& m : modules) seen |= m.first == path;
    if (seen) continue;
    absl::StatusOr<ModuleSpec> spec =
        describe_module(cat(prefix, path), *attr.module);
    if (!spec.ok()) return spec.status();
    modules.emplace_back(path, std::move(*spec));
  }
  return absl::OkStatus();
}

// A weight's kind: a parameter's by its requires_grad, a buffer's as the
// GraphModule holding it records it.
WeightKind kind_of_weight(const at::Tensor& t, bool is_parameter,
                          BufferKind buffer) {
  if (is_parameter) {
    return t.requires_grad() ? WeightKind::kParameter
                             : WeightKind::kFrozenParameter;
  }
  switch (buffer) {
    case BufferKind::kNonPersistent:
      return WeightKind::kNonPersistentBuffer;
    case BufferKind::kPlain:
      return WeightKind::kTensor;
    default:
      return WeightKind::kBuffer;
  }
}

// What a reader assumes of a weight the file gives no kind (loose_tensor,
// a module's own weights): the file records only kinds that differ, so a
// module without such weights writes what it always wrote.
WeightKind default_kind(const std::string& key, const at::Tensor& t,
                        bool module_weight, bool module_parameter) {
  if (module_weight) {
    return module_parameter ? WeightKind::kParameter : WeightKind::kBuffer;
  }
  bool parameter = key.rfind("_tensor_constant", 0) != 0 &&
                   (t.is_floating_point() || t.is_complex());
  return parameter ? WeightKind::kParameter : WeightKind::kBuffer;
}

// Every parameter and buffer `module`'s graph references (its modules',
// its get_attr tensors), each once, with its kind where a reader would not
// assume it.
void collect_weights(const GraphModule& module, TensorList& weights,
                     WeightKinds& kinds) {
  absl::flat_hash_set<std::string> keys;
  // `recorded`: the kind is written even when it is the default (a child
  // GraphModule's parameters: its readers build it through torch.fx's
  // GraphModule constructor, which makes a buffer of every tensor it is
  // given, so a parameter a child's get_attr reads is one only if the file
  // says so).
  auto add = [&](const std::string& key, const at::Tensor& t, bool is_parameter,
                 BufferKind buffer, bool module_weight, bool recorded) {
    if (!keys.insert(key).second) return;
    weights.emplace_back(key, t);
    WeightKind kind = kind_of_weight(t, is_parameter, buffer);
    if (recorded || kind != default_kind(key, t, module_weight, is_parameter)) {
      kinds.emplace_back(key, kind);
    }
  };
  for (const auto& [path, attr] : module.referenced_attributes()) {
    if (attr.module) {
      auto* child = dynamic_cast<const GraphModule*>(attr.module.get());
      for (const auto& p : attr.module->named_parameters(true)) {
        add(cat(path, ".", p.key()), p.value(), true, BufferKind::kPersistent,
            true, child != nullptr);
      }
      for (const auto& b : attr.module->named_buffers(true)) {
        add(cat(path, ".", b.key()), b.value(), false,
            child ? child->buffer_kind(b.key()) : BufferKind::kPersistent, true,
            false);
      }
    } else if (attr.tensor.defined()) {
      add(path, attr.tensor, attr.is_parameter, attr.buffer_kind, false, false);
    }
  }
}

}  // namespace

absl::StatusOr<GraphBundle> describe_graph_module(
    const GraphModule& module, std::string_view weights_name,
    bool include_nodes, std::vector<std::string>* in_process_modules) {
  if (include_nodes) {
    absl::Status s = check_no_foreign_targets("", module);
    if (!s.ok()) return s;
    if (module.graph().output_node() == nullptr) {
      // torch.fx runs such a graph (it returns None); the format has no
      // form for it.
      return absl::InvalidArgumentError(
          "the graph has no output node, which an fx-graph file needs");
    }
  }
  std::vector<std::pair<std::string, ModuleSpec>> modules;
  absl::Status s = describe_modules("", module, modules, in_process_modules);
  if (!s.ok()) return s;
  GraphBundle bundle;
  WeightKinds kinds;
  collect_weights(module, bundle.weights, kinds);
  std::string_view weights_ref =
      bundle.weights.empty() ? std::string_view() : weights_name;
  // Without the nodes, the graph-level entries (its pytree codegen) stay.
  Graph no_nodes;
  if (!include_nodes) no_nodes.set_codegen(module.graph().codegen().clone());
  bundle.json =
      include_nodes
          ? to_graph_json(module.graph(), modules, weights_ref,
                          module.declared_shape_env().get(), kinds)
          : to_graph_json(no_nodes, modules, weights_ref, nullptr, kinds);
  return bundle;
}

std::string alternate_weights_name(const std::string& name) {
  const std::string pt = ".pt", alt = ".1.pt";
  auto ends_with = [&](const std::string& suffix) {
    return name.size() > suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) ==
               0;
  };
  if (ends_with(alt)) return name.substr(0, name.size() - alt.size()) + pt;
  if (ends_with(pt)) return name.substr(0, name.size() - pt.size()) + alt;
  return name + ".1";
}

absl::Status write_graph_module(const GraphModule& module,
                                const std::string& json_path,
                                const std::string& weights_file) {
  const std::string base =
      weights_file.empty() ? weights_file_for(json_path) : weights_file;
  // The graph is written last and its rename is the commit: until then the
  // old graph must keep its own weights, so a bundle rewritten in place
  // takes the other of its two names (out.weights.pt, out.weights.1.pt).
  const std::string old_name = read_weights_name(json_path);
  const std::string weights_name =
      old_name == base ? alternate_weights_name(base) : base;
  absl::StatusOr<GraphBundle> bundle =
      describe_graph_module(module, weights_name);
  if (!bundle.ok()) return bundle.status();
  if (absl::Status s = check_reads_back(bundle->json, json_path); !s.ok()) {
    return s;
  }
  size_t slash = json_path.rfind('/');
  std::string dir =
      slash == std::string::npos ? "." : json_path.substr(0, slash);
  if (absl::Status s = check_replaceable(json_path); !s.ok()) return s;
  if (!bundle->weights.empty()) {
    const std::string weights_path = cat(dir, "/", weights_name);
    if (absl::Status s = check_replaceable(weights_path); !s.ok()) return s;
    absl::Status s = write_tensor_dict(weights_path, bundle->weights);
    if (!s.ok()) return s;
  }
  absl::Status s = write_file_atomically(json_path, bundle->json);
  if (!s.ok()) return s;
  // The old graph's weights, when they are one of this bundle's two names
  // and no longer named (a crash before this leaves an unused file only).
  if ((old_name == base || old_name == alternate_weights_name(base)) &&
      (old_name != weights_name || bundle->weights.empty())) {
    std::remove(cat(dir, "/", old_name).c_str());
  }
  return absl::OkStatus();
}

}  // namespace fx
