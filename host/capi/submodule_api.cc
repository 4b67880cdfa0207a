// The FxApi entries of the children of a graph's owning GraphModule:
// GraphAddSubgraphModule, GraphModuleConfig, GraphModuleParameters,
// GraphModuleTraining, GraphShareAttr(As), GraphSubmoduleGraph and
// GraphKeepUsedAttrs; and
// owning_module(), which every entry that needs the GraphModule behind a
// graph goes through.
#include <ATen/ATen.h>

#include <memory>
#include <optional>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "fx_core/format/code_names.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/runtime/module_registry.h"
#include "host/capi/api_internal.h"
#include "host/handles/wrap.h"

namespace fx::host::internal {

GraphModule& owning_module(const Graph* g) {
  const GraphOwner* owner = require(g, "graph")->owning_module();
  auto* gm = dynamic_cast<const GraphModule*>(owner);
  if (gm == nullptr) {
    fail(FX_FAILED_PRECONDITION,
         "this graph has no owning GraphModule, so it cannot run");
  }
  return const_cast<GraphModule&>(*gm);
}

namespace {

void add_subgraph_module(FxGraph* g, const char* name, FxGraph** out) {
  GraphModule& gm = owning_module(unwrap(g));
  require(name, "qualified_name");
  require(out, "out");
  if (gm.get_submodule(name) != nullptr || gm.get_attr(name).defined()) {
    fail(FX_FAILED_PRECONDITION,
         cat("the module already has an attribute '", name, "'"));
  }
  auto child = std::make_shared<GraphModule>(GraphModule::AttributeMap{},
                                             std::make_unique<Graph>());
  // The nodes the pass moves into the child may call gm's own targets.
  if (!gm.foreign_targets().empty()) {
    child->set_foreign_targets(gm.foreign_targets());
  }
  gm.add_submodule(name, child);
  *out = wrap(&child->graph());
}

void submodule_graph(FxGraph* g, const char* name, FxGraph** out) {
  const Graph* graph = live_graph(static_cast<const FxGraph*>(g));
  GraphModule& gm = owning_module(graph);
  require(name, "qualified_name");
  require(out, "out");
  std::shared_ptr<torch::nn::Module> m = gm.get_submodule(name);
  if (m == nullptr) {
    fail(FX_NOT_FOUND, cat("the module has no submodule '", name, "'"));
  }
  auto child = std::dynamic_pointer_cast<GraphModule>(m);
  if (child == nullptr) {
    fail(FX_INVALID_ARGUMENT, cat("the submodule '", name, "' is a ",
                                  module_type_name(*m), ", not a GraphModule"));
  }
  AttributeStore* store = store_for(graph);
  if (store == nullptr) {
    fail(FX_FAILED_PRECONDITION,
         "no pass runs on this graph, so it cannot lend child graphs");
  }
  std::string error;
  Graph* lent = store->lend_child_graph(name, child, &error);
  if (lent == nullptr) fail(FX_FAILED_PRECONDITION, error);
  *out = wrap(lent);
}

void keep_used_attrs(FxGraph* g) {
  const Graph* graph = live_graph(static_cast<const FxGraph*>(g));
  GraphModule& gm = owning_module(graph);
  for (const Node* n : graph->nodes()) {
    const bool call = n->op() == Opcode::kCallModule;
    if (!call && n->op() != Opcode::kGetAttr) continue;
    const GraphOwner::AttrKind kind = gm.resolve_attr(n->target());
    if (kind == GraphOwner::AttrKind::kMissing ||
        (call && kind != GraphOwner::AttrKind::kModule)) {
      fail(FX_NOT_FOUND,
           cat("node '", n->name(), "' (", opcode_name(n->op()),
               ") refers to '", n->target(), "', where the module has no ",
               call ? "submodule" : "attribute"));
    }
  }
  AttributeStore* store = store_for(graph);
  if (store == nullptr) {
    fail(FX_FAILED_PRECONDITION,
         "this graph is neither a pass's graph nor one lent to it "
         "(GraphSubmoduleGraph), so its module's attributes cannot change "
         "here");
  }
  std::string error;
  if (!store->keep_used_attributes("", *graph, &error)) {
    fail(FX_FAILED_PRECONDITION, error);
  }
}

void module_config(const FxGraph* g, const char* name, FxArg** out) {
  GraphModule& gm = owning_module(unwrap(g));
  require(name, "qualified_name");
  require(out, "out");
  std::shared_ptr<torch::nn::Module> m = gm.get_submodule(name);
  if (m == nullptr) {
    fail(FX_NOT_FOUND, cat("the module has no submodule '", name, "'"));
  }
  const ModuleKind* kind = ModuleRegistry::global().find(*m);
  if (kind == nullptr || !kind->describe) {
    fail(FX_UNIMPLEMENTED, cat("the module '", name, "' (", m->name(),
                               ") cannot describe its configuration"));
  }
  *out = give(Argument::dict(kind->describe(*m)));
}

void module_parameters(const FxGraph* g, const char* name, FxArg** out) {
  GraphModule& gm = owning_module(unwrap(g));
  require(name, "qualified_name");
  require(out, "out");
  std::shared_ptr<torch::nn::Module> sub;
  torch::nn::Module* m = &gm;
  if (*name != '\0') {
    sub = gm.get_submodule(name);
    if (sub == nullptr) {
      fail(FX_NOT_FOUND, cat("the module has no submodule '", name, "'"));
    }
    m = sub.get();
  }
  const std::string prefix = *name != '\0' ? cat(name, ".") : "";
  std::vector<const void*> seen;
  ArgumentDict shapes;
  for (const auto& p : m->named_parameters(/*recurse=*/true)) {
    const void* impl = p.value().unsafeGetTensorImpl();
    if (std::find(seen.begin(), seen.end(), impl) != seen.end()) continue;
    seen.push_back(impl);
    ArgumentList sizes(p.value().sizes().begin(), p.value().sizes().end());
    shapes.emplace_back(prefix + p.key(), Argument::tuple(std::move(sizes)));
  }
  *out = give(Argument::dict(std::move(shapes)));
}

// Whether `child` is a module below `m`, by identity: a walk of the
// children in place (named_modules() would build every module's name, once
// per attribute a split shares).
bool is_submodule(const torch::nn::Module& m, const GraphModule& child) {
  for (const auto& c : children_of(m)) {
    if (c.value().get() == &child || is_submodule(*c.value(), child)) {
      return true;
    }
  }
  return false;
}

// Whether `held` is a plain container made on the way to tensors of
// `module` (a get_attr of block.0.weight before block.0 is called): it
// gives way to the module, as torch.fx's _copy_attr installs a
// call_module target over such a container.
bool container_of_parts(const torch::nn::Module& held,
                        const torch::nn::Module& module) {
  if (typeid(held) != typeid(torch::nn::Module)) return false;
  for (const auto& dict : {held.named_parameters(), held.named_buffers()}) {
    for (const auto& t : dict) {
      std::optional<TensorAttr> theirs = tensor_at(module, t.key());
      if (!theirs || !theirs->tensor.is_same(t.value())) return false;
    }
  }
  return true;
}

// Whether `child` already holds `object` (a module or a tensor) at `name`:
// false when it holds nothing there (or a container of `module`'s parts);
// FX_FAILED_PRECONDITION when it holds something else.
bool holds_already(GraphModule& child, const std::string& name,
                   const void* object,
                   const torch::nn::Module* module = nullptr) {
  const void* held = nullptr;
  if (std::shared_ptr<torch::nn::Module> m = child.get_submodule(name)) {
    if (module != nullptr && container_of_parts(*m, *module)) return false;
    held = m.get();
  } else if (at::Tensor t = child.get_attr(name); t.defined()) {
    held = t.unsafeGetTensorImpl();
  }
  if (held == nullptr) return false;
  if (held != object) {
    fail(FX_FAILED_PRECONDITION,
         cat("the subgraph's module already has another attribute '", name,
             "'"));
  }
  return true;
}

// GraphShareAttr (as_name NULL: the same name, replacing what is there) and
// GraphShareAttrAs (refusing to replace another object).
void share_attr(FxGraph* g, FxGraph* sub, const char* name,
                const char* as_name) {
  GraphModule& gm = owning_module(unwrap(g));
  GraphModule& child = owning_module(unwrap(require(sub, "subgraph")));
  require(name, "qualified_name");
  const bool checked = as_name != nullptr;
  const std::string as = checked ? as_name : name;
  if (checked && !is_attribute_path(as)) {
    fail(FX_INVALID_ARGUMENT,
         cat("name '", as, "' is not a qualified attribute name"));
  }
  if (!is_submodule(gm, child)) {
    fail(FX_INVALID_ARGUMENT,
         "the subgraph's module is not a submodule of the graph's module");
  }
  if (std::shared_ptr<torch::nn::Module> m = gm.get_submodule(name)) {
    if (checked && holds_already(child, as, m.get(), m.get())) return;
    child.add_submodule(as, std::move(m));
    return;
  }
  std::optional<TensorAttr> t = tensor_at(gm, name);
  if (!t || !t->tensor.defined()) {
    fail(FX_NOT_FOUND,
         cat("the module has no submodule, parameter or buffer '", name, "'"));
  }
  const at::Tensor& tensor = t->tensor;
  if (checked && holds_already(child, as, tensor.unsafeGetTensorImpl())) return;
  child.set_attr(as, tensor, t->is_parameter, gm.buffer_kind(name));
}

}  // namespace

// GraphAddSubgraphModule .. GraphModuleTraining, GraphShareAttr(As).
void fill_submodule_entries(FxApi& t) {
  t.GraphAddSubgraphModule = [](FxGraph* g, const char* name, FxGraph** out) {
    return guarded("GraphAddSubgraphModule",
                   [&] { add_subgraph_module(g, name, out); });
  };
  t.GraphSubmoduleGraph = [](FxGraph* g, const char* name, FxGraph** out) {
    return guarded("GraphSubmoduleGraph",
                   [&] { submodule_graph(g, name, out); });
  };
  t.GraphKeepUsedAttrs = [](FxGraph* g) {
    return guarded("GraphKeepUsedAttrs", [&] { keep_used_attrs(g); });
  };
  t.GraphModuleConfig = [](const FxGraph* g, const char* name, FxArg** out) {
    return guarded("GraphModuleConfig", [&] { module_config(g, name, out); });
  };
  t.GraphShareAttr = [](FxGraph* g, FxGraph* sub, const char* name) {
    return guarded("GraphShareAttr",
                   [&] { share_attr(g, sub, name, nullptr); });
  };
  t.GraphShareAttrAs = [](FxGraph* g, FxGraph* sub, const char* name,
                          const char* as_name) {
    return guarded("GraphShareAttrAs",
                   [&] { share_attr(g, sub, name, require(as_name, "name")); });
  };
  t.GraphModuleParameters = [](const FxGraph* g, const char* name,
                               FxArg** out) {
    return guarded("GraphModuleParameters",
                   [&] { module_parameters(g, name, out); });
  };
  t.GraphModuleTraining = [](const FxGraph* g, const char* name) -> int {
    const Graph* graph = peek(g);
    auto* gm = graph == nullptr
                   ? nullptr
                   : dynamic_cast<const GraphModule*>(graph->owning_module());
    if (gm == nullptr || name == nullptr) return -1;
    std::shared_ptr<torch::nn::Module> m =
        const_cast<GraphModule*>(gm)->get_submodule(name);
    if (m == nullptr) return -1;
    return m->is_training() ? 1 : 0;
  };
}

}  // namespace fx::host::internal
