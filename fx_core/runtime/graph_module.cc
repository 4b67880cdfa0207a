#include "fx_core/runtime/graph_module.h"

#include <mutex>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/runtime/graph_executor.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/runtime_codegen.h"
#include "fx_core/runtime/shape_guards.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

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

// What `root` has at a use's target, as torch.fx's _copy_attr reads it (a
// buffer's kind from `root_gm` when it is a GraphModule).
GraphModule::Attribute lookup_attribute(const torch::nn::Module& root,
                                        const GraphModule::AttributeUse& use,
                                        const GraphModule* root_gm) {
  GraphModule::Attribute a;
  if (use.op == Opcode::kCallModule) {
    a.module = submodule_at(root, use.target);
  } else if (auto t = tensor_at(root, use.target)) {
    a.tensor = t->tensor;
    a.is_parameter = t->is_parameter;
    if (root_gm != nullptr) a.buffer_kind = root_gm->buffer_kind(use.target);
  } else {
    a.module = submodule_at(root, use.target);
  }
  return a;
}

}  // namespace

GraphModule::GraphModule(torch::nn::Module& root, std::unique_ptr<Graph> graph,
                         std::string class_name)
    : torch::nn::Module(class_name),
      graph_(std::move(graph)),
      class_name_(std::move(class_name)) {
  const auto* root_gm = dynamic_cast<const GraphModule*>(&root);
  if (root_gm != nullptr) foreign_targets_ = root_gm->foreign_targets_;
  copy_from([&root, root_gm](const AttributeUse& use) {
    return lookup_attribute(root, use, root_gm);
  });
}

GraphModule::GraphModule(const AttributeMap& root, std::unique_ptr<Graph> graph,
                         std::string class_name, ForeignTargets foreign_targets)
    : torch::nn::Module(class_name),
      graph_(std::move(graph)),
      class_name_(std::move(class_name)),
      foreign_targets_(std::move(foreign_targets)) {
  // Each path at its first position in `root`: all of them, and the
  // modules' (a lookup per node, not a scan of `root`).
  absl::flat_hash_map<std::string_view, size_t> first, first_module;
  for (size_t i = 0; i < root.size(); ++i) {
    first.emplace(root[i].first, i);
    if (root[i].second.module) first_module.emplace(root[i].first, i);
  }
  copy_from([&](const AttributeUse& use) {
    const std::string& target = use.target;
    if (auto exact = first.find(target); exact != first.end()) {
      return root[exact->second].second;
    }
    // A get_attr of something inside a listed submodule (`linear.weight`):
    // the first listed module whose path is a dotted prefix of the target.
    size_t owner = root.size();
    for (size_t dot = target.find('.'); dot != std::string::npos;
         dot = target.find('.', dot + 1)) {
      auto found = first_module.find(std::string_view(target).substr(0, dot));
      if (found != first_module.end() && found->second < owner) {
        owner = found->second;
      }
    }
    if (owner == root.size()) return Attribute{};
    const auto& [path, attr] = root[owner];
    std::string_view rest = std::string_view(target).substr(path.size() + 1);
    Attribute a;
    if (auto t = tensor_at(*attr.module, rest)) {
      a.tensor = t->tensor;
      a.is_parameter = t->is_parameter;
    } else {
      a.module = submodule_at(*attr.module, rest);
    }
    return a;
  });
}

GraphModule::~GraphModule() = default;

namespace {

// A GraphModule called from another graph (call_module: split_module's
// submodules, a nested GraphModule) runs its own graph; its kind is
// torch.fx.GraphModule, with forward(*args).
void register_graph_module_kind() {
  static std::once_flag once;
  std::call_once(once, [] {
    ModuleKind kind;
    kind.type = "torch.fx.GraphModule";
    kind.cpp_type = typeid(GraphModule);
    kind.forward_schema = OpSchema::parse("*args");
    kind.forward = [](torch::nn::Module& m, OpArgs& a) -> c10::IValue {
      auto& gm = static_cast<GraphModule&>(m);
      const auto& elements = a[0].toTupleRef().elements();
      return gm.forward(
          std::vector<c10::IValue>(elements.begin(), elements.end()));
    };
    ModuleRegistry::global().add(std::move(kind));
  });
}

}  // namespace

void GraphModule::copy_from(const AttributeLookup& lookup) {
  register_graph_module_kind();
  if (!graph_) throw FxError("GraphModule: the graph is null");
  install_attributes(attribute_uses(*graph_), lookup);
  graph_->set_owning_module(this);
  recompile();
}

void GraphModule::install_attributes(const std::vector<AttributeUse>& uses,
                                     const AttributeLookup& lookup) {
  for (const AttributeUse& use : uses) {
    // As torch.fx's _copy_attr: a call_module target is always installed
    // (replacing a container made for an earlier `linear.weight`); a
    // get_attr target already present came with its submodule.
    // A foreign attribute is the overlay's, not the root's.
    AttrKind present = resolve_attr(use.target);
    if (use.op == Opcode::kGetAttr &&
        ((present != AttrKind::kMissing && present != AttrKind::kModule) ||
         foreign_targets_.find_attribute(use.target) != nullptr)) {
      continue;
    }
    Attribute a = lookup(use);
    if (a.module) {
      add_submodule(use.target, a.module);
    } else if (a.tensor.defined()) {
      set_attr(use.target, a.tensor, a.is_parameter, a.buffer_kind);
    } else {
      throw FxError(cat("node '", use.node, "' (", opcode_name(use.op),
                        ") refers to '", use.target,
                        "', which the root module does not have"));
    }
  }
}

std::vector<GraphModule::AttributeUse> GraphModule::attribute_uses(
    const Graph& graph) {
  std::vector<AttributeUse> uses;
  for (const Node* n : graph.nodes()) {
    if (n->op() == Opcode::kGetAttr || n->op() == Opcode::kCallModule) {
      uses.push_back(
          {n->op(), std::string(n->target()), std::string(n->name())});
    }
  }
  return uses;
}

namespace {

// What a module tree holds, path by path in named_modules' order: each
// submodule (a plain container by its path alone), parameter and buffer.
std::vector<std::pair<std::string, const void*>> layout_of(
    const torch::nn::Module& m) {
  std::vector<std::pair<std::string, const void*>> out;
  for (const auto& sub : m.named_modules("", /*include_self=*/false)) {
    out.emplace_back("m " + sub.key(),
                     is_container(*sub.value()) ? nullptr : sub.value().get());
  }
  for (const auto& p : m.named_parameters()) {
    out.emplace_back("p " + p.key(), p.value().unsafeGetTensorImpl());
  }
  for (const auto& b : m.named_buffers()) {
    out.emplace_back("b " + b.key(), b.value().unsafeGetTensorImpl());
  }
  return out;
}

}  // namespace

std::shared_ptr<GraphModule::HeldAttributes> GraphModule::keep_used_attributes(
    const std::vector<AttributeUse>& uses) {
  // Copies first: nothing changes until they are made.
  auto held = std::make_shared<HeldAttributes>();
  held->members = members_of(*this);
  held->buffer_kinds = buffer_kinds_;
  // The lookups read the old tree, held by a scratch module meanwhile.
  torch::nn::Module old("Module");
  restore_members(old, held->members);
  (void)take_members(*this);
  buffer_kinds_.clear();
  try {
    install_attributes(uses, [&](const AttributeUse& use) {
      Attribute a = lookup_attribute(old, use, nullptr);
      auto kind = held->buffer_kinds.find(use.target);
      if (kind != held->buffer_kinds.end()) a.buffer_kind = kind->second;
      return a;
    });
  } catch (...) {
    restore_members(*this, std::move(held->members));
    buffer_kinds_ = std::move(held->buffer_kinds);
    throw;
  }
  if (layout_of(*this) == layout_of(old) &&
      buffer_kinds_ == held->buffer_kinds) {
    // It held just that already: its own containers back, nothing changed.
    restore_members(*this, std::move(held->members));
    buffer_kinds_ = std::move(held->buffer_kinds);
    return nullptr;
  }
  return held;
}

void GraphModule::restore_attributes(const HeldAttributes& held) {
  restore_members(*this, held.members);
  buffer_kinds_ = held.buffer_kinds;
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
  shape_env_.reset();
  std::string error;
  try {
    shape_env_ = graph_shape_env(*graph_, declared_shape_env_.get());
  } catch (const FxError& e) {
    error = e.what();
  }
  // The executor is compiled at first use (executor()); a graph whose shape
  // environment failed has none.
  std::lock_guard<std::mutex> lock(plan_mutex_);
  plan_.reset();
  plan_compiled_ = !error.empty();
  plan_error_ = std::move(error);
}

const GraphExecutor* GraphModule::executor() const {
  std::lock_guard<std::mutex> lock(plan_mutex_);
  if (plan_compiled_) return plan_.get();
  try {
    // The executor reads the module's attributes and submodules; it
    // changes none of them (a GraphModule is not made const in practice:
    // make_shared, register_module).
    plan_ = compile_graph_executor(*graph_, const_cast<GraphModule&>(*this),
                                   &foreign_targets_);
  } catch (const FxError& e) {
    plan_error_ = e.what();
  }
  // Any other exception leaves it uncompiled: the next call tries again.
  plan_compiled_ = true;
  return plan_.get();
}

void GraphModule::set_foreign_targets(ForeignTargets targets) {
  foreign_targets_ = std::move(targets);
  recompile();
}

void GraphModule::set_shape_env(std::shared_ptr<const sym::ShapeEnv> declared) {
  declared_shape_env_ = std::move(declared);
  recompile();
}

absl::Status GraphModule::check_executable() const {
  if (executor() != nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(plan_error_);
}

c10::IValue GraphModule::forward(std::vector<c10::IValue> inputs) {
  const GraphExecutor* plan = executor();
  if (plan == nullptr) throw FxError(plan_error_);
  const CodeGen& codegen = graph_->codegen();
  std::vector<c10::IValue> flat = process_inputs(codegen, std::move(inputs));
  if (shape_env_) check_shape_guards(*shape_env_, *graph_, flat);
  return process_outputs(codegen, plan->run(std::move(flat)));
}

std::shared_ptr<GraphModule> GraphModule::deepcopy() const {
  auto copy = std::make_shared<GraphModule>(
      AttributeMap{}, std::make_unique<Graph>(), class_name_);
  for (const auto& p : named_parameters(false)) {
    copy->register_parameter(p.key(), p.value().detach().clone(),
                             p.value().requires_grad());
  }
  for (const auto& b : named_buffers(false)) {
    copy->register_buffer(b.key(), b.value().clone());
  }
  for (const auto& c : named_children()) {
    copy->register_module(c.key(), clone_tree(*c.value(), c.key()));
  }
  copy->train(is_training());
  copy->buffer_kinds_ = buffer_kinds_;
  copy->declared_shape_env_ = declared_shape_env_;
  copy->foreign_targets_ = foreign_targets_.deepcopy();
  copy->set_graph(graph_->deepcopy());
  return copy;
}

std::shared_ptr<torch::nn::Module> GraphModule::get_submodule(
    std::string_view qualified_name) const {
  return submodule_at(*this, qualified_name);
}

at::Tensor GraphModule::get_attr(std::string_view qualified_name) const {
  std::optional<TensorAttr> t = tensor_at(*this, qualified_name);
  return t ? t->tensor : at::Tensor();
}

torch::nn::Module& GraphModule::container(std::string_view path,
                                          std::string* leaf) {
  std::string_view owner_path, last;
  split_qualified_name(path, &owner_path, &last);
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
                           const at::Tensor& tensor, bool is_parameter,
                           BufferKind buffer_kind) {
  std::string leaf;
  torch::nn::Module& owner = container(qualified_name, &leaf);
  if (std::optional<TensorAttr> existing = own_tensor(owner, leaf)) {
    // LibTorch cannot unregister: replace the value in place.
    if (existing->is_parameter != is_parameter) {
      throw FxError(cat("set_attr: '", qualified_name, "' is a ",
                        existing->is_parameter ? "parameter" : "buffer",
                        ", not a ", is_parameter ? "parameter" : "buffer"));
    }
    if (existing->tensor.is_quantized() != tensor.is_quantized()) {
      // set_data would give the old TensorImpl the other kind's keys
      // without its quantizer.
      throw FxError(cat(
          "set_attr: '", qualified_name, "' holds ",
          existing->tensor.is_quantized() ? "a quantized" : "an unquantized",
          " tensor and cannot be replaced in place by ",
          tensor.is_quantized() ? "a quantized" : "an unquantized",
          " one: give the new tensor a new name"));
    }
    torch::NoGradGuard no_grad;
    existing->tensor.set_data(tensor);
    if (is_parameter)
      existing->tensor.set_requires_grad(tensor.requires_grad());
    return;
  }
  if (is_parameter) {
    owner.register_parameter(leaf, tensor, tensor.requires_grad());
  } else {
    owner.register_buffer(leaf, tensor);
    if (buffer_kind != BufferKind::kPersistent) {
      buffer_kinds_[std::string(qualified_name)] = buffer_kind;
    }
  }
}

BufferKind GraphModule::buffer_kind(std::string_view qualified_name) const {
  auto it = buffer_kinds_.find(qualified_name);
  if (it != buffer_kinds_.end()) return it->second;
  // A path through a child GraphModule: that one's (the deepest).
  const torch::nn::Module* m = this;
  const GraphModule* owner = this;
  size_t rest = 0;
  for (size_t start = 0, dot = qualified_name.find('.');
       dot != std::string_view::npos && m != nullptr;
       start = dot + 1, dot = qualified_name.find('.', start)) {
    m = child_named(*m, qualified_name.substr(start, dot - start)).get();
    if (auto* gm = dynamic_cast<const GraphModule*>(m)) {
      owner = gm;
      rest = dot + 1;
    }
  }
  return owner == this ? BufferKind::kPersistent
                       : owner->buffer_kind(qualified_name.substr(rest));
}

GraphModule::AttributeMap GraphModule::referenced_attributes() const {
  AttributeMap out;
  for (Node* n : graph_->nodes()) {
    if (n->op() == Opcode::kCallModule) {
      out.push_back({n->target(), {get_submodule(n->target()), {}}});
    } else if (n->op() == Opcode::kGetAttr) {
      std::optional<TensorAttr> t = tensor_at(*this, n->target());
      out.push_back({n->target(),
                     {nullptr, t ? t->tensor : at::Tensor(),
                      t && t->is_parameter, buffer_kind(n->target())}});
    }
  }
  return out;
}

GraphOwner::AttrKind GraphModule::resolve_attr(
    std::string_view qualified_name) const {
  if (get_submodule(qualified_name)) return AttrKind::kModule;
  std::optional<TensorAttr> t = tensor_at(*this, qualified_name);
  if (!t) {
    return foreign_targets_.has_attribute_within(qualified_name)
               ? AttrKind::kOther
               : AttrKind::kMissing;
  }
  return t->is_parameter ? AttrKind::kParameter : AttrKind::kBuffer;
}

bool GraphModule::has_function(std::string_view target) const {
  return foreign_targets_.resolve(Opcode::kCallFunction, target) != nullptr;
}

}  // namespace fx
