#include "fx_core/graph_module.h"

#include <utility>

#include "fx_core/codegen.h"
#include "fx_core/error.h"
#include "fx_core/execution_plan.h"
#include "fx_core/op_registry.h"
#include "fx_core/strings.h"

namespace fx {
namespace {

// A plain container module (torch.fx uses torch.nn.Module() for the
// intermediate levels of a qualified path).
std::shared_ptr<torch::nn::Module> make_container() {
  return std::make_shared<torch::nn::Module>("Module");
}

bool is_container(const torch::nn::Module& m) {
  return typeid(m) == typeid(torch::nn::Module);
}

std::shared_ptr<torch::nn::Module> child_named(const torch::nn::Module& m,
                                               std::string_view name) {
  for (const auto& item : m.named_children()) {
    if (item.key() == name) return item.value();
  }
  return nullptr;
}

// Walks `path` from `root`; nullptr when a level is missing.
std::shared_ptr<torch::nn::Module> walk(
    const std::shared_ptr<torch::nn::Module>& root, std::string_view path) {
  std::shared_ptr<torch::nn::Module> m = root;
  if (path.empty()) return m;
  for (std::string_view atom : split(path, '.')) {
    m = child_named(*m, atom);
    if (!m) return nullptr;
  }
  return m;
}

void split_path(std::string_view path, std::string_view* owner,
                std::string_view* leaf) {
  size_t dot = path.rfind('.');
  *owner = dot == std::string_view::npos ? "" : path.substr(0, dot);
  *leaf = dot == std::string_view::npos ? path : path.substr(dot + 1);
}

// Deep-copies a module tree: containers rebuilt, leaves cloned.
std::shared_ptr<torch::nn::Module> clone_tree(const torch::nn::Module& m,
                                              std::string_view path) {
  if (!is_container(m)) {
    try {
      return m.clone();
    } catch (const std::exception& e) {
      throw FxError(cat("deepcopy: submodule '", path, "' (", m.name(),
                        ") cannot be cloned: make it torch::nn::Cloneable"));
    }
  }
  auto copy = make_container();
  for (const auto& p : m.named_parameters(false)) {
    copy->register_parameter(p.key(), p.value().detach().clone(),
                             p.value().requires_grad());
  }
  for (const auto& b : m.named_buffers(false)) {
    copy->register_buffer(b.key(), b.value().clone());
  }
  for (const auto& c : m.named_children()) {
    std::string child_path = path.empty() ? c.key() : cat(path, ".", c.key());
    copy->register_module(c.key(), clone_tree(*c.value(), child_path));
  }
  return copy;
}

}  // namespace

GraphModule::GraphModule(torch::nn::Module& root, std::unique_ptr<Graph> graph,
                         std::string class_name)
    : torch::nn::Module(class_name),
      graph_(std::move(graph)),
      class_name_(std::move(class_name)) {
  // named_children() hands out shared_ptrs; walk the root the same way.
  copy_from([&root](const Node& n) {
    Attribute a;
    std::string_view owner_path, leaf;
    if (n.op() == Opcode::kCallModule) {
      torch::nn::Module* m = &root;
      std::shared_ptr<torch::nn::Module> found;
      for (std::string_view atom : split(n.target(), '.')) {
        found = child_named(*m, atom);
        if (!found) break;
        m = found.get();
      }
      a.module = found;
      return a;
    }
    split_path(n.target(), &owner_path, &leaf);
    torch::nn::Module* owner = &root;
    if (!owner_path.empty()) {
      for (std::string_view atom : split(owner_path, '.')) {
        std::shared_ptr<torch::nn::Module> next = child_named(*owner, atom);
        if (!next) return a;
        owner = next.get();
      }
    }
    std::string key(leaf);
    if (const at::Tensor* p = owner->named_parameters(false).find(key)) {
      a.tensor = *p;
    } else if (const at::Tensor* b = owner->named_buffers(false).find(key)) {
      a.tensor = *b;
    } else if (auto child = child_named(*owner, key)) {
      a.module = child;
    }
    return a;
  });
}

GraphModule::GraphModule(const AttributeMap& root, std::unique_ptr<Graph> graph,
                         std::string class_name)
    : torch::nn::Module(class_name),
      graph_(std::move(graph)),
      class_name_(std::move(class_name)) {
  copy_from([&root](const Node& n) {
    for (const auto& [path, attr] : root) {
      if (path == n.target()) return attr;
    }
    // A get_attr of something inside a listed submodule (`linear.weight`).
    for (const auto& [path, attr] : root) {
      if (attr.module && n.target().size() > path.size() &&
          n.target().compare(0, path.size(), path) == 0 &&
          n.target()[path.size()] == '.') {
        std::string_view rest =
            std::string_view(n.target()).substr(path.size() + 1);
        std::string_view owner_path, leaf;
        split_path(rest, &owner_path, &leaf);
        std::shared_ptr<torch::nn::Module> owner =
            walk(attr.module, owner_path);
        Attribute a;
        if (!owner) return a;
        std::string key(leaf);
        if (const at::Tensor* p = owner->named_parameters(false).find(key)) {
          a.tensor = *p;
        } else if (const at::Tensor* b =
                       owner->named_buffers(false).find(key)) {
          a.tensor = *b;
        } else {
          a.module = child_named(*owner, key);
        }
        return a;
      }
    }
    return Attribute{};
  });
}

GraphModule::~GraphModule() = default;

void GraphModule::copy_from(
    const std::function<Attribute(const Node&)>& lookup) {
  if (!graph_) throw FxError("GraphModule: the graph is null");
  for (Node* n : graph_->nodes()) {
    if (n->op() != Opcode::kGetAttr && n->op() != Opcode::kCallModule) {
      continue;
    }
    // As torch.fx's _copy_attr: a call_module target is always installed
    // (replacing a container made for an earlier `linear.weight`); a
    // get_attr target already present came with its submodule.
    AttrKind present = resolve_attr(n->target());
    if (n->op() == Opcode::kGetAttr && present != AttrKind::kMissing &&
        present != AttrKind::kModule) {
      continue;
    }
    Attribute a = lookup(*n);
    if (a.module) {
      add_submodule(n->target(), a.module);
    } else if (a.tensor.defined()) {
      set_attr(n->target(), a.tensor, a.tensor.requires_grad());
    } else {
      throw FxError(cat("node '", n->name(), "' (", opcode_name(n->op()),
                        ") refers to '", n->target(),
                        "', which the root module does not have"));
    }
  }
  graph_->set_owning_module(this);
  recompile();
}

void GraphModule::set_graph(std::unique_ptr<Graph> graph) {
  if (!graph) throw FxError("GraphModule::set_graph: the graph is null");
  graph_->set_owning_module(nullptr);
  graph_ = std::move(graph);
  graph_->set_owning_module(this);
  recompile();
}

void GraphModule::recompile() {
  code_ = graph_->python_code("self").src;
  plan_.reset();
  plan_error_.clear();
  try {
    plan_ = ExecutionPlan::compile(*graph_, *this);
  } catch (const FxError& e) {
    plan_error_ = e.what();
  }
}

absl::Status GraphModule::check_executable() const {
  if (plan_) return absl::OkStatus();
  return absl::FailedPreconditionError(plan_error_);
}

c10::IValue GraphModule::forward(std::vector<c10::IValue> inputs) {
  if (!plan_) throw FxError(plan_error_);
  const CodeGen& codegen = graph_->codegen();
  return codegen.process_outputs(
      plan_->run(codegen.process_inputs(std::move(inputs))));
}

std::shared_ptr<GraphModule> GraphModule::deepcopy() const {
  AttributeMap attrs;
  for (const auto& p : named_parameters(false)) {
    attrs.push_back({p.key(),
                     {nullptr, p.value().detach().clone().set_requires_grad(
                                   p.value().requires_grad())}});
  }
  for (const auto& b : named_buffers(false)) {
    attrs.push_back({b.key(), {nullptr, b.value().clone()}});
  }
  for (const auto& c : named_children()) {
    attrs.push_back({c.key(), {clone_tree(*c.value(), c.key()), {}}});
  }
  auto copy = std::make_shared<GraphModule>(
      AttributeMap{}, std::make_unique<Graph>(), class_name_);
  for (auto& [name, attr] : attrs) {
    if (attr.module) {
      copy->register_module(name, attr.module);
    } else if (named_parameters(false).find(name)) {
      copy->register_parameter(name, attr.tensor, attr.tensor.requires_grad());
    } else {
      copy->register_buffer(name, attr.tensor);
    }
  }
  copy->train(is_training());
  copy->set_graph(graph_->deepcopy());
  return copy;
}

std::shared_ptr<torch::nn::Module> GraphModule::get_submodule(
    std::string_view qualified_name) const {
  const torch::nn::Module* m = this;
  std::shared_ptr<torch::nn::Module> found;
  for (std::string_view atom : split(qualified_name, '.')) {
    found = child_named(*m, atom);
    if (!found) return nullptr;
    m = found.get();
  }
  return found;
}

at::Tensor GraphModule::get_attr(std::string_view qualified_name) const {
  std::string_view owner_path, leaf;
  split_path(qualified_name, &owner_path, &leaf);
  const torch::nn::Module* owner = this;
  std::shared_ptr<torch::nn::Module> holder;
  if (!owner_path.empty()) {
    holder = get_submodule(owner_path);
    if (!holder) return at::Tensor();
    owner = holder.get();
  }
  std::string key(leaf);
  if (const at::Tensor* p = owner->named_parameters(false).find(key)) return *p;
  if (const at::Tensor* b = owner->named_buffers(false).find(key)) return *b;
  return at::Tensor();
}

torch::nn::Module& GraphModule::container(std::string_view path,
                                          std::string* leaf) {
  std::string_view owner_path, last;
  split_path(path, &owner_path, &last);
  if (last.empty()) {
    throw FxError(cat("'", path, "' is not a valid qualified name"));
  }
  *leaf = std::string(last);
  torch::nn::Module* m = this;
  if (owner_path.empty()) return *m;
  for (std::string_view atom : split(owner_path, '.')) {
    std::shared_ptr<torch::nn::Module> next = child_named(*m, atom);
    if (!next) {
      next = make_container();
      m->register_module(std::string(atom), next);
    }
    m = next.get();
  }
  return *m;
}

void GraphModule::add_submodule(std::string_view qualified_name,
                                std::shared_ptr<torch::nn::Module> module) {
  std::string leaf;
  torch::nn::Module& owner = container(qualified_name, &leaf);
  if (child_named(owner, leaf)) {
    owner.replace_module(leaf, std::move(module));
  } else {
    owner.register_module(leaf, std::move(module));
  }
}

void GraphModule::set_attr(std::string_view qualified_name,
                           const at::Tensor& tensor, bool is_parameter) {
  std::string leaf;
  torch::nn::Module& owner = container(qualified_name, &leaf);
  if (is_parameter) {
    owner.register_parameter(leaf, tensor, tensor.requires_grad());
  } else {
    owner.register_buffer(leaf, tensor);
  }
}

GraphModule::AttributeMap GraphModule::referenced_attributes() const {
  AttributeMap out;
  for (Node* n : graph_->nodes()) {
    if (n->op() == Opcode::kCallModule) {
      out.push_back({n->target(), {get_submodule(n->target()), {}}});
    } else if (n->op() == Opcode::kGetAttr) {
      out.push_back({n->target(), {nullptr, get_attr(n->target())}});
    }
  }
  return out;
}

GraphOwner::AttrKind GraphModule::resolve_attr(
    std::string_view qualified_name) const {
  if (get_submodule(qualified_name)) return AttrKind::kModule;
  std::string_view owner_path, leaf;
  split_path(qualified_name, &owner_path, &leaf);
  const torch::nn::Module* owner = this;
  std::shared_ptr<torch::nn::Module> holder;
  if (!owner_path.empty()) {
    holder = get_submodule(owner_path);
    if (!holder) return AttrKind::kMissing;
    owner = holder.get();
  }
  std::string key(leaf);
  if (owner->named_parameters(false).find(key)) return AttrKind::kParameter;
  if (owner->named_buffers(false).find(key)) return AttrKind::kBuffer;
  return AttrKind::kMissing;
}

bool GraphModule::has_function(std::string_view target) const {
  return OpRegistry::global().find(Opcode::kCallFunction, target) != nullptr;
}

}  // namespace fx
