#include "fx_core/ir/node.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/lifetime_listener.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

std::string_view opcode_name(Opcode op) {
  switch (op) {
    case Opcode::kPlaceholder:
      return "placeholder";
    case Opcode::kGetAttr:
      return "get_attr";
    case Opcode::kCallFunction:
      return "call_function";
    case Opcode::kCallMethod:
      return "call_method";
    case Opcode::kCallModule:
      return "call_module";
    case Opcode::kOutput:
      return "output";
  }
  return "?";
}

std::optional<Opcode> parse_opcode(std::string_view name) {
  for (Opcode op :
       {Opcode::kPlaceholder, Opcode::kGetAttr, Opcode::kCallFunction,
        Opcode::kCallMethod, Opcode::kCallModule, Opcode::kOutput}) {
    if (opcode_name(op) == name) return op;
  }
  return std::nullopt;
}

namespace {

const Node::Kwargs& empty_kwargs() {
  static const auto* empty = new Node::Kwargs();
  return *empty;
}

// The distinct nodes referenced by args then kwargs, in first-use order.
using InputList = absl::InlinedVector<Node*, 4>;

InputList collect_inputs(const Node::Args& args, const Node::Kwargs& kwargs) {
  InputList out;
  absl::flat_hash_set<Node*> seen;  // only used for long argument lists
  auto add = [&](Node* n) {
    if (out.size() < 16 && seen.empty()) {
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
      return;
    }
    if (seen.empty()) seen.insert(out.begin(), out.end());
    if (seen.insert(n).second) out.push_back(n);
  };
  for (const Argument& a : args) for_each_node(a, add);
  for (const auto& kv : kwargs) for_each_node(kv.second, add);
  return out;
}

}  // namespace

const Node::Kwargs& Node::kwargs() const {
  return extras_ ? extras_->kwargs : empty_kwargs();
}

std::vector<Node*> Node::all_input_nodes() const {
  InputList in = collect_inputs(args_, kwargs());
  return std::vector<Node*>(in.begin(), in.end());
}

Node* Node::prev() const {
  return (prev_ == nullptr || prev_->sentinel_) ? nullptr : prev_;
}

Node* Node::next() const {
  return (next_ == nullptr || next_->sentinel_) ? nullptr : next_;
}

// The bytes-per-node goal (BENCHMARKS.md) counts on it: 120 bytes, a
// 128-byte malloc chunk.
static_assert(sizeof(void*) != 8 || sizeof(Node) == 120,
              "fx::Node grew past 120 bytes");

Node::~Node() {
  if (external_slot_ != 0) detail::notify_node_destroyed(this);
}

Node::Extras& Node::extras() {
  if (!extras_) extras_ = std::make_unique<Extras>();
  return *extras_;
}

Node::MetaAndType& Node::more() {
  Extras& e = extras();
  if (!e.more) {
    e.more = std::make_shared<MetaAndType>();
  } else if (e.more.use_count() > 1) {
    e.more = std::make_shared<MetaAndType>(*e.more);
  }
  return *e.more;
}

void Node::share_meta_and_type(const Node& from) {
  if (from.extras_ && from.extras_->more) {
    extras().more = from.extras_->more;
  } else if (extras_) {
    extras_->more.reset();
  }
}

std::string_view Node::type() const {
  return extras_ && extras_->more ? std::string_view(extras_->more->type)
                                  : std::string_view();
}

void Node::set_type(std::string_view type, std::string_view text) {
  if (type.empty() && !(extras_ && extras_->more)) return;
  MetaAndType& m = more();
  m.type = std::string(type);
  m.type_text = type.empty() || text == type_text_form(type)
                    ? std::string()
                    : std::string(text);
}

std::string_view Node::type_text_override() const {
  return extras_ && extras_->more ? std::string_view(extras_->more->type_text)
                                  : std::string_view();
}

std::string Node::type_text() const {
  std::string_view text = type_text_override();
  return text.empty() ? type_text_form(type()) : std::string(text);
}

const ArgumentDict& Node::meta() const {
  return extras_ && extras_->more ? extras_->more->meta : empty_kwargs();
}

ArgumentDict& Node::mutable_meta() { return more().meta; }

const Argument* Node::meta_value(std::string_view key) const {
  return find_item(meta(), key);
}

void Node::set_meta(std::string_view key, Argument value) {
  set_item(more().meta, key, std::move(value));
}

void Node::check_inputs(const Args& args, const Kwargs& kwargs) const {
  auto check = [&](Node* n) {
    if (n == nullptr) {
      throw FxError(cat("Node '", name(), "' was given a null Node reference"));
    }
    if (n->graph() != graph()) {
      throw FxError(cat(
          "Argument '", n->name(), "' of Node '", name(),
          "' does not belong to this Graph, but was used as an argument! If "
          "you are copying nodes from another graph, make sure to use "
          "``arg_transform`` on node_copy() to remap values"));
    }
    if (n->erased_) {
      throw FxError(cat("Argument '", n->name(), "' of Node '", name(),
                        "' has been erased from the graph"));
    }
  };
  for (const Argument& a : args) for_each_node(a, check);
  for (const auto& kv : kwargs) for_each_node(kv.second, check);
}

void Node::update_args_kwargs(Args args, Kwargs kwargs) {
  for (Node* old_input : collect_inputs(args_, this->kwargs())) {
    old_input->users_.erase(this);
  }
  args_ = std::move(args);
  if (!kwargs.empty() || extras_) extras().kwargs = std::move(kwargs);
  for (Node* new_input : collect_inputs(args_, this->kwargs())) {
    new_input->users_.push_back(this);
  }
}

void Node::set_args(Args args) {
  check_inputs(args, {});
  update_args_kwargs(std::move(args), Kwargs(kwargs()));
}

void Node::set_kwargs(Kwargs kwargs) {
  check_inputs({}, kwargs);
  update_args_kwargs(Args(args_), std::move(kwargs));
}

void Node::update_arg(size_t index, Argument arg) {
  if (index >= args_.size()) {
    throw FxError(cat("update_arg: Node '", name(), "' has ", args_.size(),
                      " args, no index ", index));
  }
  Args args = args_;
  args[index] = std::move(arg);
  set_args(std::move(args));
}

void Node::update_kwarg(std::string_view key, Argument arg) {
  Kwargs kwargs = this->kwargs();
  set_item(kwargs, key, std::move(arg));
  set_kwargs(std::move(kwargs));
}

void Node::set_target(std::string_view target) {
  graph()->unindex_node(this);
  graph()->index_node(this, graph()->intern_target(target));
}

std::vector<Node*> Node::replace_all_uses_with(
    Node* replacement, const std::function<bool(Node*)>& filter,
    bool propagate_meta) {
  if (replacement == nullptr || replacement->graph() != graph() ||
      replacement->erased_) {
    throw FxError(cat("replace_all_uses_with: the replacement for Node '",
                      name(), "' must be a live node of the same graph"));
  }
  if (propagate_meta) {
    if (!replacement->meta().empty()) {
      throw FxError(
          "Called node.replace_all_uses_with(replace_with, "
          "propagate_meta=True), but replace_with already has .meta keys");
    }
    for (const auto& kv : meta()) replacement->set_meta(kv.first, kv.second);
  }
  std::vector<Node*> to_process(users_.begin(), users_.end());
  std::vector<Node*> changed;
  changed.reserve(to_process.size());
  auto swap = [&](Node* n) -> Argument {
    return n == this ? Argument(replacement) : Argument(n);
  };
  for (Node* use : to_process) {
    if (filter && !filter(use)) continue;
    Args args;
    args.reserve(use->args_.size());
    for (const Argument& a : use->args_) args.push_back(map_arg(a, swap));
    Kwargs kwargs;
    for (const auto& kv : use->kwargs()) {
      kwargs.emplace_back(kv.first, map_arg(kv.second, swap));
    }
    use->update_args_kwargs(std::move(args), std::move(kwargs));
    changed.push_back(use);
  }
  return changed;
}

void Node::replace_input_with(Node* old_input, Node* new_input) {
  if (new_input != nullptr) check_inputs({Argument(new_input)}, {});
  auto swap = [&](Node* n) -> Argument {
    return n == old_input ? Argument(new_input) : Argument(n);
  };
  Args args;
  for (const Argument& a : args_) args.push_back(map_arg(a, swap));
  Kwargs kwargs;
  for (const auto& kv : this->kwargs()) {
    kwargs.emplace_back(kv.first, map_arg(kv.second, swap));
  }
  update_args_kwargs(std::move(args), std::move(kwargs));
}

void Node::remove_from_list() {
  prev_->next_ = next_;
  next_->prev_ = prev_;
}

void Node::insert_before_this(Node* x) {
  Node* p = prev_;
  p->next_ = x;
  x->prev_ = p;
  x->next_ = this;
  prev_ = x;
}

void Node::prepend(Node* x) {
  if (x == nullptr || x->graph() != graph()) {
    throw FxError("Attempting to move a Node into a different Graph");
  }
  if (x->erased_ || erased_) {
    throw FxError(
        cat("Cannot move erased Node '", x->erased_ ? x->name() : name(), "'"));
  }
  if (x == this) return;  // torch.fx warns and does nothing
  x->remove_from_list();
  insert_before_this(x);
  graph()->order_valid_ = false;
}

void Node::append(Node* x) {
  if (x == this) return;
  next_->prepend(x);
}

bool Node::is_impure() const {
  switch (op()) {
    case Opcode::kPlaceholder:
    case Opcode::kOutput:
      return true;
    case Opcode::kCallFunction:
      return is_side_effectful_function(target());
    case Opcode::kCallModule:
      return graph()->owning_module() != nullptr &&
             graph()->owning_module()->is_impure_module(target());
    default:
      return false;
  }
}

bool Node::is_before(const Node* other) const {
  if (!graph()->order_valid_) graph()->renumber();
  return order_ < other->order_;
}

std::string Node::format_node() const {
  std::string out;
  if (op() == Opcode::kOutput) {
    out = "return ";
    out += args_.empty() ? "None" : str(args_[0]);
    return out;
  }
  fx::append(&out, "%", name(), " : ");
  if (!type().empty()) fx::append(&out, type_text(), " ");
  fx::append(&out, "[num_users=", users_.size(), "] = ", opcode_name(op()),
             "[target=", target(), "]");
  if (op() == Opcode::kPlaceholder) {
    if (!args_.empty()) fx::append(&out, "(default=", str(args_[0]), ")");
    return out;
  }
  if (op() == Opcode::kGetAttr) return out;
  out += "(args = (";
  for (size_t i = 0; i < args_.size(); ++i) {
    if (i) out += ", ";
    append_format_arg(out, args_[i]);
  }
  if (args_.size() == 1) out += ",";
  out += "), kwargs = {";
  bool first = true;
  for (const auto& kv : kwargs()) {
    if (!first) out += ", ";
    first = false;
    fx::append(&out, kv.first, ": ");
    append_format_arg(out, kv.second);
  }
  out += "})";
  return out;
}

}  // namespace fx
