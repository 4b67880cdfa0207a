#include "plugin_api/pipeline/pass_target.h"

#include <ATen/DLConvertor.h>

#include <utility>
#include <vector>

#include "fx_core/io/atomic_file.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/support/strings.h"
#include "plugin_api/capi/c_api.h"
#include "plugin_api/pipeline/graph_equality.h"

namespace fx::host {

PassTarget::~PassTarget() = default;

void PassTarget::begin() {
  snapshot_ = graph().snapshot();
  begin_attributes();
}

void PassTarget::commit() {
  snapshot_.reset();
  end_attributes();
  committed();
}

void PassTarget::rollback() {
  rollback_attributes();
  if (snapshot_) replace_graph(std::move(snapshot_));
}

bool PassTarget::changed() {
  return attributes_changed() ||
         (snapshot_ && !structurally_equal(*snapshot_, graph()));
}

// The module's tensors and submodules for the C ABI, with a journal of the
// tensors a pass replaced so a rollback can put them back.
class GraphModuleTarget::Attributes : public AttributeStore {
 public:
  Attributes(GraphModule& module, std::vector<at::Tensor> example_inputs)
      : module_(module), example_inputs_(std::move(example_inputs)) {}

  size_t num_example_inputs() const override { return example_inputs_.size(); }
  const std::vector<at::Tensor>& example_inputs() const {
    return example_inputs_;
  }
  DLManagedTensor* example_input(size_t index,
                                 std::string* error) const override {
    if (index >= example_inputs_.size()) {
      *error = cat("there are ", example_inputs_.size(),
                   " example inputs, no index ", index);
      return nullptr;
    }
    return at::toDLPack(example_inputs_[index].detach());
  }

  bool has_attr(std::string_view name) const override {
    return module_.get_attr(name).defined() ||
           module_.get_submodule(name) != nullptr;
  }

  DLManagedTensor* get_attr(std::string_view name,
                            std::string* error) const override {
    at::Tensor t = module_.get_attr(name);
    if (!t.defined()) {
      *error = cat("the module has no parameter or buffer '", name, "'");
      return nullptr;
    }
    return at::toDLPack(t.detach());
  }

  bool set_attr(std::string_view name, DLManagedTensor* tensor,
                std::string* error) override {
    at::Tensor value;
    try {
      // fromDLPack takes ownership and calls the deleter when done.
      value = at::fromDLPack(tensor).clone();
    } catch (const std::exception& e) {
      *error = cat("cannot read the tensor for '", name, "': ", e.what());
      return false;
    }
    // set_attr replaces an existing tensor's data in place, so keep the old
    // data through a new alias of it (and its requires_grad).
    at::Tensor current = module_.get_attr(name);
    bool is_parameter = false;
    for (const auto& p : module_.named_parameters(/*recurse=*/true)) {
      if (p.key() == name) is_parameter = true;
    }
    Entry entry;
    entry.name = std::string(name);
    entry.previous = current.defined() ? current.variable_data() : at::Tensor();
    entry.is_parameter = is_parameter;
    entry.requires_grad = current.defined() && current.requires_grad();
    journal_.push_back(std::move(entry));
    module_.set_attr(name, value, is_parameter);
    return true;
  }

  bool module_type(std::string_view name, std::string* type,
                   std::string* error) const override {
    std::shared_ptr<torch::nn::Module> m = module_.get_submodule(name);
    if (m == nullptr) {
      *error = cat("the module has no submodule '", name, "'");
      return false;
    }
    const ModuleKind* kind = ModuleRegistry::global().find(*m);
    *type = kind ? kind->type : m->name();
    return true;
  }

  bool add_module(std::string_view name, std::string_view type,
                  const ArgumentDict& config, std::string* error) override {
    std::shared_ptr<torch::nn::Module> module;
    try {
      module = ModuleRegistry::global().create(type, config);
    } catch (const std::exception& e) {
      *error = cat("cannot build module '", name, "': ", e.what());
      return false;
    }
    Entry entry;
    entry.name = std::string(name);
    entry.is_module = true;
    entry.previous_module = module_.get_submodule(name);
    journal_.push_back(std::move(entry));
    module_.add_submodule(name, std::move(module));
    return true;
  }

  void clear() { journal_.clear(); }
  bool changed() const { return !journal_.empty(); }
  // Undoes the pass's changes, newest first.
  void undo() {
    for (auto it = journal_.rbegin(); it != journal_.rend(); ++it) {
      if (it->is_module) {
        if (it->previous_module) {
          module_.add_submodule(it->name, it->previous_module);
        }
      } else if (it->previous.defined()) {
        it->previous.set_requires_grad(it->requires_grad);
        module_.set_attr(it->name, it->previous, it->is_parameter);
      }
    }
    journal_.clear();
  }

 private:
  // One change a pass made: a tensor replaced or a module added/replaced.
  struct Entry {
    std::string name;
    at::Tensor previous;  // undefined when the pass added the attribute
    bool is_parameter = false;
    bool requires_grad = false;
    bool is_module = false;
    std::shared_ptr<torch::nn::Module> previous_module;  // null: added
  };
  GraphModule& module_;
  std::vector<at::Tensor> example_inputs_;
  std::vector<Entry> journal_;
};

GraphModuleTarget::GraphModuleTarget(GraphModule& module,
                                     std::vector<at::Tensor> example_inputs)
    : module_(module),
      attributes_(
          std::make_unique<Attributes>(module, std::move(example_inputs))) {}
GraphModuleTarget::~GraphModuleTarget() = default;

Graph& GraphModuleTarget::graph() { return module_.graph(); }
AttributeStore* GraphModuleTarget::attributes() { return attributes_.get(); }
std::vector<at::Tensor> GraphModuleTarget::example_inputs() const {
  return attributes_->example_inputs();
}

void GraphModuleTarget::replace_graph(std::unique_ptr<Graph> graph) {
  module_.set_graph(std::move(graph));
}
void GraphModuleTarget::begin_attributes() { attributes_->clear(); }
void GraphModuleTarget::end_attributes() { attributes_->clear(); }
void GraphModuleTarget::rollback_attributes() { attributes_->undo(); }
bool GraphModuleTarget::attributes_changed() const {
  return attributes_->changed();
}
namespace {
void recompile_graph_submodules(GraphModule& gm) {
  for (const auto& m : gm.named_modules("", /*include_self=*/false)) {
    if (auto* sub = dynamic_cast<GraphModule*>(m.value().get())) {
      sub->recompile();
    }
  }
}
}  // namespace

void GraphModuleTarget::committed() { recompile_graph_submodules(module_); }
void GraphModuleTarget::finish() {
  recompile_graph_submodules(module_);
  module_.recompile();
}

absl::Status GraphModuleTarget::write(const std::string& json_path) const {
  return write_graph_module(module_, json_path);
}

absl::Status GraphFileTarget::write(const std::string& json_path) const {
  return write_file_atomically(
      json_path, to_graph_json(*file_.graph, file_.modules, file_.weights));
}

}  // namespace fx::host
