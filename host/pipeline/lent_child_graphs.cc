#include "host/pipeline/lent_child_graphs.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "fx_core/format/graph_json.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/handles/attribute_store.h"
#include "host/pipeline/graph_equality.h"
#include "host/pipeline/pass_target.h"

namespace fx::host {
namespace {

// A child GraphModule's attributes as its owner's store has them, under
// the child's qualified name and a dot.
class ChildAttributeStore : public AttributeStore {
 public:
  ChildAttributeStore(AttributeStore& owner, std::string_view child)
      : owner_(owner), prefix_(cat(child, ".")) {}

  bool has_attr(std::string_view name) const override {
    return owner_.has_attr(at(name));
  }
  DLManagedTensor* get_attr(std::string_view name,
                            std::string* error) const override {
    return owner_.get_attr(at(name), error);
  }
  bool set_attr(std::string_view name, DLManagedTensor* tensor,
                std::string* error) override {
    return owner_.set_attr(at(name), tensor, error);
  }
  bool set_tensor_attr(std::string_view name, const at::Tensor& tensor,
                       std::string* error) override {
    return owner_.set_tensor_attr(at(name), tensor, error);
  }
  bool module_type(std::string_view name, std::string* type,
                   std::string* error) const override {
    return owner_.module_type(at(name), type, error);
  }
  bool add_module(std::string_view name, std::string_view type,
                  const ArgumentDict& config, std::string* error) override {
    return owner_.add_module(at(name), type, config, error);
  }
  Graph* lend_child_graph(std::string_view name,
                          const std::shared_ptr<GraphModule>& child,
                          std::string* error) override {
    return owner_.lend_child_graph(at(name), child, error);
  }
  bool keep_used_attributes(std::string_view module_path, const Graph& graph,
                            std::string* error) override {
    const std::string path = module_path.empty()
                                 ? prefix_.substr(0, prefix_.size() - 1)
                                 : at(module_path);
    return owner_.keep_used_attributes(path, graph, error);
  }

 private:
  std::string at(std::string_view name) const { return cat(prefix_, name); }

  AttributeStore& owner_;
  std::string prefix_;
};

}  // namespace

struct LentChildGraphs::Lent {
  std::string name;
  std::shared_ptr<GraphModule> child;
  std::unique_ptr<Graph> snapshot;
  uint64_t namespace_generation = 0;  // the graph's when it was lent
  std::unique_ptr<ChildAttributeStore> store;
  std::unique_ptr<ScopedAttributeStore> binding;
};

LentChildGraphs::LentChildGraphs(AttributeStore& owner) : owner_(owner) {}
LentChildGraphs::~LentChildGraphs() { clear(); }

LentChildGraphs::Lent& LentChildGraphs::note(
    std::string_view qualified_name,
    const std::shared_ptr<GraphModule>& child) {
  for (const auto& lent : lent_) {
    if (lent->child == child) return *lent;
  }
  auto lent = std::make_unique<Lent>();
  lent->name = std::string(qualified_name);
  lent->child = child;
  lent->snapshot = child->graph().snapshot();
  lent->namespace_generation = child->graph().graph_namespace().generation();
  lent->store = std::make_unique<ChildAttributeStore>(owner_, qualified_name);
  lent->binding = std::make_unique<ScopedAttributeStore>(&child->graph(),
                                                         lent->store.get());
  lent_.push_back(std::move(lent));
  return *lent_.back();
}

Graph* LentChildGraphs::lend(std::string_view qualified_name,
                             const std::shared_ptr<GraphModule>& child) {
  return &note(qualified_name, child).child->graph();
}

std::string LentChildGraphs::lent_at_or_below(
    std::string_view qualified_name) const {
  for (const auto& lent : lent_) {
    const std::string_view name = lent->name;
    if (name == qualified_name || path_is_below(name, qualified_name)) {
      return lent->name;
    }
  }
  return {};
}

std::string LentChildGraphs::detached_from(const GraphModule& owner) const {
  for (const auto& lent : lent_) {
    if (owner.get_submodule(lent->name) != lent->child) return lent->name;
  }
  return {};
}

bool LentChildGraphs::changed() const {
  for (const auto& lent : lent_) {
    if (!structurally_equal(*lent->snapshot, lent->child->graph())) {
      return true;
    }
  }
  return false;
}

void LentChildGraphs::lint() const {
  for (const auto& lent : lent_) {
    try {
      lent->child->graph().lint();
    } catch (const FxError& e) {
      throw FxError(cat("in the graph of its child GraphModule '", lent->name,
                        "': ", e.what()));
    }
  }
}

std::vector<LentChildGraphs::Change> LentChildGraphs::encode() const {
  std::vector<Change> out;
  for (const auto& lent : lent_) {
    const Graph& graph = lent->child->graph();
    if (!structurally_equal(*lent->snapshot, graph)) {
      out.push_back(
          {lent->name, to_graph_json(graph),
           graph.graph_namespace().generation() != lent->namespace_generation});
    }
  }
  return out;
}

absl::Status LentChildGraphs::apply(GraphModule& owner, const Change& change) {
  auto child = std::dynamic_pointer_cast<GraphModule>(
      owner.get_submodule(change.qualified_name));
  if (child == nullptr) {
    return absl::InternalError(cat("the worker changed the graph of '",
                                   change.qualified_name,
                                   "', which is no child GraphModule here"));
  }
  absl::StatusOr<GraphFile> file =
      parse_graph_json(change.json, "<worker result>");
  if (!file.ok()) return file.status();
  Lent& lent = note(change.qualified_name, child);
  adopt_worker_graph(child->graph(), *file->graph, change.namespace_reset);
  // A binding names the graph it was made for: the new graph gets its own.
  lent.binding.reset();
  child->set_graph(std::move(file->graph));
  lent.binding =
      std::make_unique<ScopedAttributeStore>(&child->graph(), lent.store.get());
  return absl::OkStatus();
}

void LentChildGraphs::rollback() {
  // Every graph is put back even when one fails to recompile.
  std::exception_ptr first;
  for (auto& lent : lent_) {
    lent->binding.reset();
    try {
      lent->child->set_graph(std::move(lent->snapshot));
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  lent_.clear();
  if (first) std::rethrow_exception(first);
}

void LentChildGraphs::clear() {
  // Unbound newest first, as the bindings nest.
  while (!lent_.empty()) lent_.pop_back();
}

}  // namespace fx::host
