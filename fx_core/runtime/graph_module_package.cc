// The package to_folder writes, as text and tensors (graph_module_package.h):
// the tree of attributes the code references, module.py's source rebuilding
// them and the definitions the code needs, the state dict in Python's order.
#include "fx_core/runtime/graph_module_package.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <torch/nn/module.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/io/atomic_file.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/graph_namespace.h"
#include "fx_core/ir/node.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace folder_package {
namespace {

// The indentation of __init__'s body.
constexpr std::string_view kBody = "        ";
// How torch.fx's code calls wrap (add_global keeps torch's qualified name).
constexpr std::string_view kWrapCall = "torch.fx._symbolic_trace.wrap(";
// torch.fx's _custom_builtins import lines, in their registration order.
constexpr std::string_view kCustomBuiltinImports =
    "from math import inf\n"
    "from math import nan\n"
    "NoneType = type(None)\n"
    "import torch\n"
    "from torch import device\n"
    "import torch.fx._pytree as fx_pytree\n"
    "import torch.utils._pytree as pytree\n";

std::string message_of(const std::exception& e) {
  if (auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
    return c10_error->what_without_backtrace();
  }
  return e.what();
}

// One attribute of the Python module being written: a container, a module
// rebuilt from its constructor arguments, a parameter or a buffer.
struct Attr {
  enum class Kind { kContainer, kModule, kParameter, kBuffer };
  Kind kind = Kind::kContainer;
  std::string atom;  // the last atom of its qualified path
  // The C++ container or module (kept alive by the GraphModule).
  const torch::nn::Module* module = nullptr;
  at::Tensor tensor;
  const ModuleKind* module_kind = nullptr;
  ArgumentDict config;
  std::vector<std::unique_ptr<Attr>> children;  // in registration order

  Attr* child(std::string_view name) const {
    for (const auto& c : children) {
      if (c->atom == name) return c.get();
    }
    return nullptr;
  }
};

// True when `atom` can be written as `base.atom`.
bool is_attribute_name(std::string_view atom) {
  return is_python_identifier(atom) && !Namespace::is_keyword(atom);
}

// `base.atom`, or getattr(base, 'atom') for an atom such as "0".
std::string member(std::string_view base, std::string_view atom) {
  if (is_attribute_name(atom)) return cat(base, ".", atom);
  return cat("getattr(", base, ", ", python_string_repr(atom), ")");
}

// The Python expression for a dotted path below `base`.
std::string path_expression(std::string_view base, std::string_view path) {
  std::string out(base);
  for (std::string_view atom : split(path, '.')) out = member(out, atom);
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// True when `path` lies strictly inside the module at `module_path`.
bool is_inside(std::string_view path, std::string_view module_path) {
  return path.size() > module_path.size() && starts_with(path, module_path) &&
         path[module_path.size()] == '.';
}

// The parameter or buffer at a dotted path (GraphModule::get_attr, keeping
// the looked-up dictionaries alive while their entries are read).
at::Tensor tensor_at(const GraphModule& gm, std::string_view path) {
  size_t dot = path.rfind('.');
  std::shared_ptr<torch::nn::Module> holder;
  const torch::nn::Module* owner = &gm;
  if (dot != std::string_view::npos) {
    holder = gm.get_submodule(path.substr(0, dot));
    if (!holder) return {};
    owner = holder.get();
  }
  const std::string key(dot == std::string_view::npos ? path
                                                      : path.substr(dot + 1));
  const auto parameters = owner->named_parameters(false);
  if (const at::Tensor* p = parameters.find(key)) return *p;
  const auto buffers = owner->named_buffers(false);
  if (const at::Tensor* b = buffers.find(key)) return *b;
  return {};
}

// A call_module or get_attr target and what it is.
struct Reference {
  std::string path;
  GraphOwner::AttrKind kind;
};

// The graph's distinct call_module and get_attr targets, in graph order;
// an error for a target that is not what its node needs.
absl::StatusOr<std::vector<Reference>> graph_references(const GraphModule& gm) {
  std::vector<Reference> entries;
  for (Node* n : gm.graph().nodes()) {
    if (n->op() != Opcode::kCallModule && n->op() != Opcode::kGetAttr) {
      continue;
    }
    const std::string& path = n->target();
    if (std::any_of(entries.begin(), entries.end(),
                    [&](const Reference& e) { return e.path == path; })) {
      continue;
    }
    GraphOwner::AttrKind kind = gm.resolve_attr(path);
    const bool usable = n->op() == Opcode::kCallModule
                            ? kind == GraphOwner::AttrKind::kModule
                            : kind == GraphOwner::AttrKind::kModule ||
                                  kind == GraphOwner::AttrKind::kParameter ||
                                  kind == GraphOwner::AttrKind::kBuffer;
    if (!usable && n->op() == Opcode::kGetAttr &&
        gm.foreign_targets().has_attribute_within(path)) {
      return absl::InvalidArgumentError(
          cat("node '", n->name(), "' (get_attr) reads attribute '", path,
              "', an object that exists only in this process: a folder "
              "cannot hold it"));
    }
    if (!usable) {
      return absl::InvalidArgumentError(cat(
          "node '", n->name(), "': ", opcode_name(n->op()), " target '", path,
          "' is not ",
          n->op() == Opcode::kCallModule ? "a submodule"
                                         : "a submodule, parameter or buffer",
          " of the module"));
    }
    entries.push_back({path, kind});
  }
  return entries;
}

// The container the last atom of `path` goes in, creating the containers on
// the way from `root`.
absl::StatusOr<Attr*> parent_container(
    const GraphModule& gm, Attr* root, const std::string& path,
    const std::vector<std::string_view>& atoms) {
  Attr* parent = root;
  for (size_t i = 0; i + 1 < atoms.size(); ++i) {
    Attr* next = parent->child(atoms[i]);
    if (next == nullptr) {
      std::string prefix(
          path.substr(0, static_cast<size_t>(atoms[i].data() + atoms[i].size() -
                                             path.data())));
      auto container = std::make_unique<Attr>();
      container->atom = std::string(atoms[i]);
      container->module = gm.get_submodule(prefix).get();
      if (container->module == nullptr) {
        return absl::InvalidArgumentError(
            cat("'", prefix, "' (on the path to '", path,
                "') is not a submodule of the module"));
      }
      next = container.get();
      parent->children.push_back(std::move(container));
    }
    parent = next;
  }
  return parent;
}

// Makes `attr` the module at `path`, rebuilt from its constructor arguments.
absl::Status describe_module(const GraphModule& gm, const std::string& path,
                             Attr& attr) {
  attr.kind = Attr::Kind::kModule;
  std::shared_ptr<torch::nn::Module> module = gm.get_submodule(path);
  attr.module = module.get();
  attr.module_kind = ModuleRegistry::global().find(*module);
  if (attr.module_kind == nullptr || !attr.module_kind->describe) {
    return absl::InvalidArgumentError(
        cat("module '", path, "' (", module->name(),
            ") cannot be described: register its class with a describe "
            "function with fx::ModuleRegistry::global().add()"));
  }
  try {
    attr.config = attr.module_kind->describe(*module);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        cat("module '", path, "' (", attr.module_kind->type,
            ") cannot be described: ", message_of(e)));
  }
  return absl::OkStatus();
}

// The attribute a reference names.
absl::StatusOr<std::unique_ptr<Attr>> referenced_attr(const GraphModule& gm,
                                                      const Reference& entry,
                                                      std::string_view atom) {
  auto attr = std::make_unique<Attr>();
  attr->atom = std::string(atom);
  switch (entry.kind) {
    case GraphOwner::AttrKind::kModule: {
      absl::Status s = describe_module(gm, entry.path, *attr);
      if (!s.ok()) return s;
      break;
    }
    case GraphOwner::AttrKind::kParameter:
    case GraphOwner::AttrKind::kBuffer:
      attr->kind = entry.kind == GraphOwner::AttrKind::kParameter
                       ? Attr::Kind::kParameter
                       : Attr::Kind::kBuffer;
      attr->tensor = tensor_at(gm, entry.path);
      break;
    case GraphOwner::AttrKind::kMissing:
    case GraphOwner::AttrKind::kOther:
      break;  // refused above
  }
  return attr;
}

// What the graph references (call_module and get_attr targets), as the tree
// of attributes module.py creates. Targets inside a module that is rebuilt
// from its constructor arguments are left to that module.
absl::StatusOr<std::unique_ptr<Attr>> referenced_tree(const GraphModule& gm) {
  absl::StatusOr<std::vector<Reference>> entries = graph_references(gm);
  if (!entries.ok()) return entries.status();

  auto root = std::make_unique<Attr>();
  root->module = &gm;
  for (const Reference& entry : *entries) {
    bool covered = std::any_of(entries->begin(), entries->end(), [&](auto& e) {
      return e.kind == GraphOwner::AttrKind::kModule &&
             is_inside(entry.path, e.path);
    });
    if (covered) continue;
    std::vector<std::string_view> atoms = split(entry.path, '.');
    absl::StatusOr<Attr*> parent =
        parent_container(gm, root.get(), entry.path, atoms);
    if (!parent.ok()) return parent.status();
    if ((*parent)->child(atoms.back()) != nullptr) continue;
    absl::StatusOr<std::unique_ptr<Attr>> attr =
        referenced_attr(gm, entry, atoms.back());
    if (!attr.ok()) return attr.status();
    (*parent)->children.push_back(*std::move(attr));
  }
  return root;
}

// `torch.empty([3, 4], dtype=torch.float32)`: a tensor of the shape and dtype.
std::string torch_empty(const at::Tensor& t) {
  std::string shape;
  for (int64_t size : t.sizes()) {
    append(&shape, shape.empty() ? "" : ", ", size);
  }
  return cat("torch.empty([", shape, "], dtype=", dtype_name(t.scalar_type()),
             ")");
}

// `torch.nn.Linear(in_features=4, out_features=5, bias=True)`.
std::string constructor_call(const Attr& module) {
  std::string out = cat(module.module_kind->type, "(");
  bool first = true;
  for (const auto& [key, value] : module.config) {
    append(&out, first ? "" : ", ", key, "=");
    append_repr(out, value);
    first = false;
  }
  out += ")";
  return out;
}

// __init__'s statements creating the children of `parent` (at `base`).
void emit_attributes(const Attr& parent, const std::string& base,
                     std::string* out) {
  for (const auto& child : parent.children) {
    const std::string expr = member(base, child->atom);
    const bool plain = is_attribute_name(child->atom);
    const std::string quoted = python_string_repr(child->atom);
    switch (child->kind) {
      case Attr::Kind::kContainer:
      case Attr::Kind::kModule: {
        std::string value = child->kind == Attr::Kind::kContainer
                                ? std::string("torch.nn.Module()")
                                : constructor_call(*child);
        if (plain) {
          append(out, kBody, expr, " = ", value, "\n");
        } else {
          append(out, kBody, base, ".add_module(", quoted, ", ", value, ")\n");
        }
        if (child->kind == Attr::Kind::kContainer) {
          emit_attributes(*child, expr, out);
        } else {
          for (const auto& p : child->module->named_parameters(true)) {
            if (!p.value().requires_grad()) {
              append(out, kBody, path_expression(expr, p.key()),
                     ".requires_grad_(False)\n");
            }
          }
        }
        break;
      }
      case Attr::Kind::kParameter: {
        std::string value = cat(
            "torch.nn.Parameter(", torch_empty(child->tensor),
            child->tensor.requires_grad() ? "" : ", requires_grad=False", ")");
        if (plain) {
          append(out, kBody, expr, " = ", value, "\n");
        } else {
          append(out, kBody, base, ".register_parameter(", quoted, ", ", value,
                 ")\n");
        }
        break;
      }
      case Attr::Kind::kBuffer:
        append(out, kBody, base, ".register_buffer(", quoted, ", ",
               torch_empty(child->tensor), ")\n");
        break;
    }
  }
}

// `.train(mode)` wherever a module's mode differs from its parent's (applied
// top-down, as train() recurses).
void emit_training(const Attr& parent, bool parent_mode,
                   const std::string& base, std::string* out) {
  for (const auto& child : parent.children) {
    if (child->kind != Attr::Kind::kContainer &&
        child->kind != Attr::Kind::kModule) {
      continue;
    }
    const std::string expr = member(base, child->atom);
    const bool mode = child->module->is_training();
    if (mode != parent_mode) {
      append(out, kBody, expr, ".train(", mode ? "True" : "False", ")\n");
    }
    if (child->kind == Attr::Kind::kContainer) {
      emit_training(*child, mode, expr, out);
    }
  }
}

// Python's state_dict order for a module: its parameters, its buffers, then
// each child's.
void module_state(const torch::nn::Module& module, const std::string& prefix,
                  TensorDict* out) {
  for (const auto& p : module.named_parameters(false)) {
    out->emplace_back(prefix + p.key(), p.value());
  }
  for (const auto& b : module.named_buffers(false)) {
    out->emplace_back(prefix + b.key(), b.value());
  }
  for (const auto& c : module.named_children()) {
    module_state(*c.value(), cat(prefix, c.key(), "."), out);
  }
}

void tree_state(const Attr& node, const std::string& prefix, TensorDict* out) {
  for (Attr::Kind kind : {Attr::Kind::kParameter, Attr::Kind::kBuffer}) {
    for (const auto& child : node.children) {
      if (child->kind == kind) {
        out->emplace_back(prefix + child->atom, child->tensor);
      }
    }
  }
  for (const auto& child : node.children) {
    if (child->kind == Attr::Kind::kContainer) {
      tree_state(*child, cat(prefix, child->atom, "."), out);
    } else if (child->kind == Attr::Kind::kModule) {
      module_state(*child->module, cat(prefix, child->atom, "."), out);
    }
  }
}

// Module-level definitions for what the code refers to and a plain module
// does not have in scope: (import lines, assignment lines).
struct GlobalDefinitions {
  std::vector<std::string> imports;
  std::vector<std::string> assignments;
  std::vector<std::string> names;  // every name defined at module level

  void add_import(std::string_view module) {
    std::string line = cat("import ", module);
    if (std::find(imports.begin(), imports.end(), line) == imports.end()) {
      imports.push_back(line);
      names.push_back(std::string(split(module, '.')[0]));
    }
  }
  void add_global(const std::string& name, std::string_view obj) {
    if (!Namespace::custom_builtin_object(name).empty()) return;
    size_t dot = obj.rfind('.');
    if (dot == std::string_view::npos) {
      add_import(obj);
      if (name != obj) assignments.push_back(cat(name, " = ", obj));
    } else {
      // A builtin under its own name is in scope already.
      if (obj.substr(0, dot) == "builtins" && obj.substr(dot + 1) == name) {
        return;
      }
      add_import(obj.substr(0, dot));
      assignments.push_back(cat(name, " = ", obj));
    }
    names.push_back(name);
  }
};

void collect_module_types(const Attr& node, GlobalDefinitions* defs) {
  for (const auto& child : node.children) {
    if (child->kind == Attr::Kind::kModule) {
      std::string_view type = child->module_kind->type;
      size_t dot = type.rfind('.');
      if (dot != std::string_view::npos) {
        std::string_view module = type.substr(0, dot);
        // `import torch` brings torch.nn.
        if (module != "torch" && module != "torch.nn") defs->add_import(module);
      }
    } else if (child->kind == Attr::Kind::kContainer) {
      collect_module_types(*child, defs);
    }
  }
}

// torch.fx's _addindent: every line but the first indented.
std::string add_indent(std::string_view text, size_t spaces) {
  std::vector<std::string_view> lines = split(text, '\n');
  if (lines.size() == 1) return std::string(text);
  std::string out(lines[0]);
  const std::string pad(spaces, ' ');
  for (size_t i = 1; i < lines.size(); ++i) append(&out, "\n", pad, lines[i]);
  return out;
}

// What the code needs at module level.
absl::StatusOr<GlobalDefinitions> module_definitions(
    const GraphModule& gm, const Attr& tree, const std::string& module_name) {
  GlobalDefinitions defs;
  collect_module_types(tree, &defs);
  for (const auto& [name, obj] : gm.graph().python_code("self").globals) {
    defs.add_global(name, obj);
  }
  if (!Namespace::custom_builtin_object(module_name).empty() ||
      std::find(defs.names.begin(), defs.names.end(), module_name) !=
          defs.names.end()) {
    return absl::InvalidArgumentError(
        cat("to_folder: module_name '", module_name,
            "' is a name the generated code needs for something else"));
  }
  return defs;
}

// torch.fx.wrap must run at module level: the code's wrap lines go there.
// Sets `wraps` to those lines and `code` to the other lines.
void split_wrap_lines(std::string_view gm_code, std::string& wraps,
                      std::string& code) {
  std::vector<std::string_view> lines = split(gm_code, '\n');
  std::vector<std::string_view> kept;
  for (std::string_view line : lines) {
    if (starts_with(line, kWrapCall)) {
      append(&wraps, line, "\n");
    } else {
      kept.push_back(line);
    }
  }
  code = join(kept, "\n");
}

// module.py.
std::string module_source(const GraphModule& gm, const Attr& tree,
                          const GlobalDefinitions& defs,
                          const std::string& module_name) {
  std::string wraps;
  std::string code;
  split_wrap_lines(gm.code(), wraps, code);

  std::string py = cat("\nimport torch\n", kCustomBuiltinImports,
                       "\nfrom torch.nn import *\n");
  for (const std::string& line : defs.imports) append(&py, line, "\n");
  for (const std::string& line : defs.assignments) append(&py, line, "\n");
  py += wraps;
  append(&py, "class ", module_name,
         "(torch.nn.Module):\n"
         "    def __init__(self):\n"
         "        super().__init__()\n");
  emit_attributes(tree, "self", &py);
  append(&py, kBody, "import os\n", kBody,
         "self.load_state_dict(torch.load(os.path.join(os.path.dirname("
         "os.path.abspath(__file__)), 'state_dict.pt')))\n");
  // Python modules start in training mode.
  if (!gm.is_training()) append(&py, kBody, "self.train(False)\n");
  emit_training(tree, gm.is_training(), "self", &py);
  append(&py, add_indent(code, 4), "\n");
  return py;
}

}  // namespace

absl::Status with_context(const absl::Status& status, std::string_view what) {
  if (status.ok()) return status;
  return absl::Status(
      status.code(),
      cat("to_folder: ", what, ": ",
          std::string_view(status.message().data(), status.message().size())));
}

absl::Status package_contents(const GraphModule& gm,
                              const std::string& module_name, std::string* py,
                              TensorDict* state) {
  if (!is_attribute_name(module_name)) {
    return absl::InvalidArgumentError(cat("to_folder: module_name ",
                                          python_string_repr(module_name),
                                          " is not a Python identifier"));
  }
  absl::StatusOr<std::unique_ptr<Attr>> tree = referenced_tree(gm);
  if (!tree.ok()) return with_context(tree.status(), "cannot write the module");
  absl::StatusOr<GlobalDefinitions> defs =
      module_definitions(gm, **tree, module_name);
  if (!defs.ok()) return defs.status();
  *py = module_source(gm, **tree, *defs, module_name);
  tree_state(**tree, "", state);
  return absl::OkStatus();
}

}  // namespace folder_package
}  // namespace fx
