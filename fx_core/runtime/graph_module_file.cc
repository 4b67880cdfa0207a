#include "fx_core/runtime/graph_module_file.h"

#include <functional>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "fx_core/io/atomic_file.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/modules/functional_module.h"
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

// Copies `value` into the parameter or buffer `key` of `module` (a dotted
// path inside it). False with *error set when missing or misshapen.
// With `share`, the parameter or buffer takes `value`'s data instead.
bool load_into(torch::nn::Module& module, const std::string& key,
               const at::Tensor& value, bool share, std::string* error) {
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
    if (share) {
      target->set_data(value);
    } else {
      target->copy_(value);
    }
  } catch (const c10::Error& e) {
    *error = e.what_without_backtrace();
    return false;
  }
  return true;
}

// Modules, from the registry; with `skip_init`, without LibTorch's random
// initialisation of weights that will all be replaced (skip_init.h).
absl::Status create_modules(const GraphFile& file,
                            GraphModule::AttributeMap& attrs, bool skip_init) {
  std::optional<SkipInitGuard> no_init;
  if (skip_init) no_init.emplace();
  for (const auto& [path, spec] : file.modules) {
    std::shared_ptr<torch::nn::Module> module;
    try {
      module = ModuleRegistry::global().create(spec.type, spec.config);
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(
          cat("module '", path, "': ", message_of(e)));
    }
    module->train(spec.training);
    attrs.push_back({path, {module, {}}});
  }
  return absl::OkStatus();
}

// One weight: into the module whose path prefixes `key`, or a top-level
// get_attr target.
absl::Status place_weight(const std::string& key, const at::Tensor& tensor,
                          bool share, GraphModule::AttributeMap& attrs) {
  for (const auto& [path, attr] : attrs) {
    if (attr.module && starts_with(key, path) && key.size() > path.size() &&
        key[path.size()] == '.') {
      std::string error;
      if (!load_into(*attr.module, key.substr(path.size() + 1), tensor, share,
                     &error)) {
        return absl::InvalidArgumentError(cat(
            "weight '", key, "' for module '", path, "' (",
            ModuleRegistry::global().find(*attr.module)->type, "): ", error));
      }
      return absl::OkStatus();
    }
  }
  // Parameters (only floating and complex tensors can be ones);
  // torch.fx's tensor constants stay buffers.
  bool is_parameter = !starts_with(key, "_tensor_constant") &&
                      (tensor.is_floating_point() || tensor.is_complex());
  at::Tensor t =
      is_parameter ? tensor.detach().set_requires_grad(true) : tensor;
  attrs.push_back({key, {nullptr, t, is_parameter}});
  return absl::OkStatus();
}

// Weights: into the modules, or top-level get_attr targets. Adds the keys
// read to `loaded`.
absl::Status load_weights(const GraphFile& file,
                          GraphModule::AttributeMap& attrs,
                          absl::flat_hash_set<std::string>& loaded) {
  if (file.weights.empty()) return absl::OkStatus();
  std::string weights_path = file.weights[0] == '/'
                                 ? file.weights
                                 : cat(file.directory, "/", file.weights);
  auto weights = read_tensor_dict(weights_path);
  if (!weights.ok()) return weights.status();
  for (const auto& [key, tensor] : *weights) {
    loaded.insert(key);
    absl::Status placed = place_weight(key, tensor, /*share=*/false, attrs);
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
            cat("module '", path, "' (",
                ModuleRegistry::global().find(*attr.module)->type, "): '", key,
                "' is missing from the weights",
                file.weights.empty() ? " (the file names no weights)"
                                     : cat(" (", file.weights, ")")));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// Builds the modules, places the weights (`place` adds the keys it read to
// `loaded`) and compiles. `skip_init`: `place` shares tensors it is given
// (every weight is replaced, or the build fails), so the modules' own are
// left uninitialised.
absl::StatusOr<std::shared_ptr<GraphModule>> build_graph_module(
    GraphFile file,
    const std::function<absl::Status(GraphModule::AttributeMap&,
                                     absl::flat_hash_set<std::string>&)>& place,
    bool skip_init = false) {
  if (!file.graph) return absl::InvalidArgumentError("the file has no graph");
  GraphModule::AttributeMap attrs;
  absl::Status s = create_modules(file, attrs, skip_init);
  if (!s.ok()) return s;
  absl::flat_hash_set<std::string> loaded;
  s = place(attrs, loaded);
  if (!s.ok()) return s;
  s = check_weights_complete(file, attrs, loaded);
  if (!s.ok()) return s;
  std::shared_ptr<GraphModule> module;
  try {
    module = std::make_shared<GraphModule>(attrs, std::move(file.graph));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(message_of(e));
  }
  absl::Status executable = module->check_executable();
  if (!executable.ok()) return executable;
  return module;
}

}  // namespace

absl::StatusOr<std::shared_ptr<GraphModule>> load_graph_module(GraphFile file) {
  // load_weights needs only where the weights are (`file` itself is moved).
  GraphFile where;
  where.weights = file.weights;
  where.directory = file.directory;
  return build_graph_module(std::move(file),
                            [&where](GraphModule::AttributeMap& attrs,
                                     absl::flat_hash_set<std::string>& loaded) {
                              return load_weights(where, attrs, loaded);
                            });
}

absl::StatusOr<std::shared_ptr<GraphModule>> load_graph_module_shared(
    GraphFile file, const TensorList& weights) {
  file.weights = "in memory";  // named in messages about missing weights
  return build_graph_module(
      std::move(file),
      [&weights](GraphModule::AttributeMap& attrs,
                 absl::flat_hash_set<std::string>& loaded) {
        for (const auto& [key, tensor] : weights) {
          loaded.insert(key);
          absl::Status placed =
              place_weight(key, tensor, /*share=*/true, attrs);
          if (!placed.ok()) return placed;
        }
        return absl::OkStatus();
      },
      /*skip_init=*/true);
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

absl::StatusOr<GraphBundle> describe_graph_module(const GraphModule& module,
                                                  std::string_view weights_name,
                                                  bool include_nodes) {
  std::vector<std::pair<std::string, ModuleSpec>> modules;
  GraphBundle bundle;
  TensorList& weights = bundle.weights;
  for (const auto& [path, attr] : module.referenced_attributes()) {
    if (attr.module) {
      bool seen = false;
      for (const auto& m : modules) seen |= m.first == path;
      if (seen) continue;
      const ModuleKind* kind = ModuleRegistry::global().find(*attr.module);
      if (kind == nullptr || !kind->describe) {
        return absl::InvalidArgumentError(
            cat("module '", path, "' (", attr.module->name(),
                ") cannot be described: register its class with "
                "fx::ModuleRegistry::global().add()"));
      }
      ModuleSpec spec;
      spec.type = kind->type;
      spec.config = kind->describe(*attr.module);
      spec.training = attr.module->is_training();
      modules.emplace_back(path, std::move(spec));
      for (const auto& p : attr.module->named_parameters(true)) {
        weights.emplace_back(cat(path, ".", p.key()), p.value());
      }
      for (const auto& b : attr.module->named_buffers(true)) {
        weights.emplace_back(cat(path, ".", b.key()), b.value());
      }
    } else if (attr.tensor.defined()) {
      bool seen = false;
      for (const auto& w : weights) seen |= w.first == path;
      if (!seen) weights.emplace_back(path, attr.tensor);
    }
  }
  std::string_view weights_ref =
      weights.empty() ? std::string_view() : weights_name;
  bundle.json = include_nodes
                    ? to_graph_json(module.graph(), modules, weights_ref)
                    : to_graph_json(Graph(), modules, weights_ref);
  return bundle;
}

absl::Status write_graph_module(const GraphModule& module,
                                const std::string& json_path,
                                const std::string& weights_file) {
  const std::string weights_name =
      weights_file.empty() ? weights_file_for(json_path) : weights_file;
  absl::StatusOr<GraphBundle> bundle =
      describe_graph_module(module, weights_name);
  if (!bundle.ok()) return bundle.status();
  size_t slash = json_path.rfind('/');
  std::string dir =
      slash == std::string::npos ? "." : json_path.substr(0, slash);
  const std::string weights_path = cat(dir, "/", weights_name);
  if (absl::Status s = check_replaceable(json_path); !s.ok()) return s;
  if (!bundle->weights.empty()) {
    if (absl::Status s = check_replaceable(weights_path); !s.ok()) return s;
    absl::Status s = write_tensor_dict(weights_path, bundle->weights);
    if (!s.ok()) return s;
  }
  return write_file_atomically(json_path, bundle->json);
}

}  // namespace fx
