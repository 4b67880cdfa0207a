#include "fx_core/ir/graph.h"

#include <algorithm>
#include <array>

#include "absl/container/flat_hash_set.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/lifetime_listener.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

absl::flat_hash_set<std::string>& side_effectful_functions() {
  // torch.fx's _side_effectful_functions.
  static auto* set = new absl::flat_hash_set<std::string>{
      "torch._assert",
      "torch._assert_async",
      "torch.ops.profiler._record_function_enter",
      "torch.ops.profiler._record_function_enter_new",
      "torch.ops.profiler._record_function_exit",
  };
  return *set;
}

// A call_function target's __name__: the last dotted component, but
// "OP.OVERLOAD" for an operator overload (torch.ops.NS.OP.OVERLOAD), whose
// __name__ names both (the packet torch.ops.NS.OP's is OP).
std::string_view function_name(std::string_view target) {
  constexpr std::string_view kOps = "torch.ops.";
  size_t dot = target.rfind('.');
  if (dot == std::string_view::npos) return target;
  if (target.substr(0, kOps.size()) == kOps) {
    std::string_view rest = target.substr(kOps.size());
    size_t ns_end = rest.find('.');
    size_t op_end = ns_end == std::string_view::npos
                        ? std::string_view::npos
                        : rest.find('.', ns_end + 1);
    if (op_end != std::string_view::npos &&
        rest.find('.', op_end + 1) == std::string_view::npos) {
      return rest.substr(ns_end + 1);
    }
  }
  return target.substr(dot + 1);
}

// torch.fx's Graph._target_to_str then _snake_case: the name candidate for a
// node. Callable targets (call_function) use their __name__ (above); string
// targets are used whole, dunder stripped. The namespace then makes the
// candidate an identifier ("add_.tensor" -> "add__tensor").
std::string target_to_name_candidate(Opcode op, std::string_view target) {
  std::string_view t = target;
  if (op == Opcode::kCallFunction) {
    t = function_name(t);
  } else if (t.size() >= 4 && t.substr(0, 2) == "__" &&
             t.substr(t.size() - 2) == "__") {
    t = t.substr(2, t.size() - 4);
  }
  std::string out;
  out.reserve(t.size() + 4);
  bool prev_lower = false;
  for (char c : t) {
    bool upper = c >= 'A' && c <= 'Z';
    if (prev_lower && upper) out.push_back('_');
    out.push_back(upper ? static_cast<char>(c - 'A' + 'a') : c);
    prev_lower = c >= 'a' && c <= 'z';
  }
  return out;
}

// The target column of print_tabular: str(node.target). Built-in functions
// print as Python shows them (`<built-in function add>`); other callables'
// str() holds a memory address, so their qualified name stands in.
std::string tabular_target(const Node* n) {
  const std::string& t = n->target();
  if (n->op() != Opcode::kCallFunction) return t;
  for (std::string_view module : {"operator.", "builtins.", "math."}) {
    if (t.size() > module.size() && t.compare(0, module.size(), module) == 0) {
      return cat("<built-in function ", t.substr(module.size()), ">");
    }
  }
  return t;
}

// lint's checks of a node's target against the graph's owning module: a
// call_function target must be runnable, every atom of a get_attr or
// call_module target must exist (and be a module for call_module).
void lint_target(const GraphOwner& owner, const Node& node) {
  const std::string& target = node.target();
  if (node.op() == Opcode::kCallFunction) {
    if (!owner.has_function(target)) {
      throw FxError(cat("Node ", node.name(), " target ", target,
                        " is not a known function: register it in "
                        "the op registry"));
    }
    return;
  }
  if (node.op() != Opcode::kGetAttr && node.op() != Opcode::kCallModule) {
    return;
  }
  std::vector<std::string_view> atoms = split(target, '.');
  size_t prefix_len = 0;
  for (size_t i = 0; i < atoms.size(); ++i) {
    std::string_view seen_qualname =
        std::string_view(target).substr(0, prefix_len ? prefix_len - 1 : 0);
    prefix_len += atoms[i].size() + 1;
    std::string_view path = std::string_view(target).substr(0, prefix_len - 1);
    GraphOwner::AttrKind kind = owner.resolve_attr(path);
    if (kind == GraphOwner::AttrKind::kMissing) {
      throw FxError(cat("Node ", node.name(), " target ", target,
                        " references nonexistent attribute ", atoms[i], " of ",
                        seen_qualname));
    }
    if (node.op() == Opcode::kCallModule &&
        kind != GraphOwner::AttrKind::kModule) {
      throw FxError(cat("Node ", node.name(), " target ", target, " ", atoms[i],
                        " of ", seen_qualname,
                        " does not reference an nn.Module"));
    }
  }
}

}  // namespace

bool is_side_effectful_function(std::string_view target) {
  return side_effectful_functions().contains(std::string(target));
}

void register_side_effectful_function(std::string_view target) {
  side_effectful_functions().insert(std::string(target));
}

// ---------------------------------------------------------------- iteration

void Graph::NodeIterator::skip_erased() {
  while (cur_ != sentinel_ && cur_->erased_) {
    cur_ = reverse_ ? cur_->prev_ : cur_->next_;
  }
}

Graph::NodeIterator& Graph::NodeIterator::operator++() {
  cur_ = reverse_ ? cur_->prev_ : cur_->next_;
  skip_erased();
  return *this;
}

Graph::NodeIterator Graph::NodeRange::begin() const {
  return NodeIterator(reverse_ ? sentinel_->prev_ : sentinel_->next_, sentinel_,
                      reverse_);
}

std::vector<Node*> Graph::NodeRange::to_vector() const {
  std::vector<Node*> out;
  for (Node* n : *this) out.push_back(n);
  return out;
}

// ---------------------------------------------------------- insert points

Graph::InsertPoint::InsertPoint(Graph* graph, Node* anchor, bool before)
    : graph_(graph),
      saved_anchor_(graph->insert_anchor_),
      saved_before_(graph->insert_before_) {
  graph->insert_anchor_ = anchor;
  graph->insert_before_ = before;
}

Graph::InsertPoint::InsertPoint(InsertPoint&& other) noexcept
    : graph_(other.graph_),
      saved_anchor_(other.saved_anchor_),
      saved_before_(other.saved_before_) {
  other.graph_ = nullptr;
}

Graph::InsertPoint::~InsertPoint() {
  if (graph_ == nullptr) return;
  graph_->insert_anchor_ = saved_anchor_;
  graph_->insert_before_ = saved_before_;
}

Graph::InsertPoint Graph::inserting_before(Node* n) {
  if (n == nullptr) return InsertPoint(this, sentinel_.get(), false);
  if (n->graph() != this)
    throw FxError("Node to insert before is not in graph.");
  return InsertPoint(this, n, true);
}

Graph::InsertPoint Graph::inserting_after(Node* n) {
  if (n == nullptr) return InsertPoint(this, sentinel_.get(), true);
  if (n->graph() != this)
    throw FxError("Node to insert after is not in graph.");
  return InsertPoint(this, n, false);
}

void Graph::set_insert_point(Node* anchor, bool after) {
  if (anchor != nullptr && (anchor->graph() != this || anchor->erased_)) {
    throw FxError("Insertion point is not a live node of this graph.");
  }
  insert_anchor_ = anchor ? anchor : sentinel_.get();
  insert_before_ = !after;
}

std::pair<Node*, bool> Graph::insert_point() const {
  Node* anchor = insert_anchor_ == sentinel_.get() ? nullptr : insert_anchor_;
  return {anchor, !insert_before_};
}

// ------------------------------------------------------------ construction

Graph::Graph()
    : sentinel_(new Node()),
      insert_anchor_(nullptr),
      codegen_(std::make_unique<CodeGen>()) {
  Node* s = sentinel_.get();
  sentinel_entry_.graph = this;
  s->target_ = &sentinel_entry_;
  s->sentinel_ = true;
  s->prev_ = s->next_ = s;
  insert_anchor_ = s;
}

Graph::~Graph() {
  Node* s = sentinel_.get();
  for (Node* n = s->next_; n != s;) {
    Node* next = n->next_;
    delete n;
    n = next;
  }
  if (external_slot_ != 0) detail::notify_graph_destroyed(this);
}

Node* Graph::first() const {
  Node* n = sentinel_->next_;
  return n == sentinel_.get() ? nullptr : n;
}

Node* Graph::last() const {
  Node* n = sentinel_->prev_;
  return n == sentinel_.get() ? nullptr : n;
}

Node* Graph::output_node() const {
  for (Node* n : reversed_nodes()) {
    if (n->op() == Opcode::kOutput) return n;
  }
  return nullptr;
}

detail::TargetEntry* Graph::intern_target(std::string_view target) {
  auto it = targets_.find(target);
  if (it != targets_.end()) return it->second.get();
  auto entry = std::make_unique<detail::TargetEntry>();
  entry->text = std::string(target);
  entry->graph = this;
  detail::TargetEntry* raw = entry.get();
  targets_.emplace(std::string_view(raw->text), std::move(entry));
  return raw;
}

void Graph::index_node(Node* n, detail::TargetEntry* entry) {
  n->target_ = entry;
  if (!nodes_indexed_) return;
  n->target_slot_ = static_cast<uint32_t>(entry->nodes.size());
  entry->nodes.push_back(n);
}

void Graph::unindex_node(Node* n) {
  if (!nodes_indexed_) return;
  auto& nodes = n->target_->nodes;
  Node* moved = nodes.back();
  nodes[n->target_slot_] = moved;
  moved->target_slot_ = n->target_slot_;
  nodes.pop_back();
}

void Graph::insert(Node* n) {
  Node* before = insert_before_ ? insert_anchor_ : insert_anchor_->next_;
  before->insert_before_this(n);
  if (order_valid_ && before == sentinel_.get()) {
    n->order_ = n->prev_->order_ + 1;
  } else {
    order_valid_ = false;
  }
}

void Graph::renumber() const {
  uint32_t i = 0;
  Node* s = sentinel_.get();
  s->order_ = 0;
  for (Node* n = s->next_; n != s; n = n->next_) n->order_ = ++i;
  order_valid_ = true;
}

Node* Graph::create_node(Opcode op, std::string_view target, Node::Args args,
                         Node::Kwargs kwargs,
                         std::optional<std::string_view> name,
                         std::string_view type) {
  auto node = std::unique_ptr<Node>(new Node());
  node->target_ = &sentinel_entry_;  // this graph, until indexed below
  node->op_ = static_cast<uint32_t>(op);
  std::string candidate =
      name ? std::string(*name) : target_to_name_candidate(op, target);
  node->set_name(candidate);
  node->check_inputs(args, kwargs);  // before any state changes
  return add_node(std::move(node), namespace_.create_name(candidate), target,
                  type, {}, std::move(args), std::move(kwargs));
}

Node* Graph::add_node(std::unique_ptr<Node> node, std::string_view name,
                      std::string_view target, std::string_view type,
                      std::string_view type_text, Node::Args args,
                      Node::Kwargs kwargs) {
  node->set_name(name);
  index_node(node.get(), intern_target(target));
  node->set_type(type, type_text);
  node->update_args_kwargs(std::move(args), std::move(kwargs));
  Node* raw = node.release();
  insert(raw);
  ++size_;
  return raw;
}

Node* Graph::placeholder(std::string_view name, std::string_view type,
                         std::optional<Argument> default_value) {
  Node::Args args;
  if (default_value) args.push_back(std::move(*default_value));
  return create_node(Opcode::kPlaceholder, name, std::move(args), {},
                     std::nullopt, type);
}

Node* Graph::get_attr(std::string_view qualified_name, std::string_view type) {
  return create_node(Opcode::kGetAttr, qualified_name, {}, {}, std::nullopt,
                     type);
}

Node* Graph::call_module(std::string_view module_name, Node::Args args,
                         Node::Kwargs kwargs, std::string_view type) {
  return create_node(Opcode::kCallModule, module_name, std::move(args),
                     std::move(kwargs), std::nullopt, type);
}

Node* Graph::call_method(std::string_view method_name, Node::Args args,
                         Node::Kwargs kwargs, std::string_view type) {
  return create_node(Opcode::kCallMethod, method_name, std::move(args),
                     std::move(kwargs), std::nullopt, type);
}

Node* Graph::call_function(std::string_view the_function, Node::Args args,
                           Node::Kwargs kwargs, std::string_view type) {
  return create_node(Opcode::kCallFunction, the_function, std::move(args),
                     std::move(kwargs), std::nullopt, type);
}

Node* Graph::output(Argument result, std::string_view type) {
  Node::Args args;
  args.push_back(std::move(result));
  return create_node(Opcode::kOutput, "output", std::move(args), {},
                     std::nullopt, type);
}

// ----------------------------------------------------------------- editing

void Graph::erase_node(Node* node) {
  if (node == nullptr || node->sentinel_) {
    throw FxError("Attempting to remove None from wrong graph!");
  }
  // torch.fx's checks, in its order: users first, then the graph.
  if (!node->users_.empty()) {
    std::string users = "{";
    const char* sep = "";
    for (const Node* user : node->users_) {
      fx::append(&users, sep, user->name(), ": None");
      sep = ", ";
    }
    users += "}";
    throw FxError(cat("Tried to erase Node ", node->name(),
                      " but it still had ", node->users_.size(),
                      " users in the graph: ", users, "!"));
  }
  if (node->graph() != this) {
    throw FxError(
        cat("Attempting to remove ", node->name(), " from wrong graph!"));
  }
  if (node->erased_) return;  // torch.fx warns and does nothing
  node->remove_from_list();
  node->erased_ = true;
  --size_;
  unindex_node(node);
  // Null out the node's arguments so its inputs' users stay accurate.
  auto none = [](Node*) { return Argument(); };
  Node::Args args;
  for (const Argument& a : node->args_) args.push_back(map_arg(a, none));
  Node::Kwargs kwargs;
  for (const auto& kv : node->kwargs()) {
    kwargs.emplace_back(kv.first, map_arg(kv.second, none));
  }
  node->update_args_kwargs(std::move(args), std::move(kwargs));
  erased_.emplace_back(node);
}

void Graph::purge_erased_nodes() { erased_.clear(); }

namespace {
// `node`'s arguments with every node in them mapped through `fn`.
void map_inputs(const Node& node, const std::function<Argument(Node*)>& fn,
                Node::Args* args, Node::Kwargs* kwargs) {
  args->reserve(node.args().size());
  for (const Argument& a : node.args()) args->push_back(map_arg(a, fn));
  kwargs->reserve(node.kwargs().size());
  for (const auto& kv : node.kwargs()) {
    kwargs->emplace_back(kv.first, map_arg(kv.second, fn));
  }
}
}  // namespace

Node* Graph::node_copy(const Node* node,
                       const std::function<Argument(Node*)>& arg_transform) {
  Node::Args args;
  Node::Kwargs kwargs;
  if (arg_transform) {
    map_inputs(*node, arg_transform, &args, &kwargs);
  } else {
    args = node->args_;
    kwargs = node->kwargs();
  }
  Node* result = create_node(node->op(), node->target(), std::move(args),
                             std::move(kwargs), node->name(), node->type());
  if (!node->type_text_override().empty()) {
    result->set_type(node->type(), node->type_text_override());
  }
  if (!node->meta().empty()) result->mutable_meta() = node->meta();
  return result;
}

template <typename Find, typename Record>
std::optional<Argument> Graph::copy_nodes(const Graph& g, const Find& find,
                                          const Record& record,
                                          const Node** output_node) {
  const std::function<Argument(Node*)> lookup = [&](Node* n) -> Argument {
    Node* copy = find(n);
    if (copy == nullptr) {
      throw FxError(cat("graph_copy: Node '", n->name(),
                        "' is used before it is defined"));
    }
    return Argument(copy);
  };
  namespace_.reserve(g.size());
  for (Node* node : g.nodes()) {
    if (find(node) != nullptr) continue;
    if (node->op() == Opcode::kOutput) {
      if (output_node) *output_node = node;
      return node->args_.empty() ? Argument() : map_arg(node->args_[0], lookup);
    }
    record(node, node_copy(node, lookup));
  }
  return std::nullopt;
}

std::optional<Argument> Graph::graph_copy(const Graph& g, ValueMap& val_map,
                                          const Node** output_node) {
  val_map.reserve(val_map.size() + g.size());
  return copy_nodes(
      g,
      [&](const Node* n) -> Node* {
        auto it = val_map.find(n);
        return it == val_map.end() ? nullptr : it->second;
      },
      [&](const Node* from, Node* to) { val_map[from] = to; }, output_node);
}

std::unique_ptr<Graph> Graph::deepcopy(ValueMap* memo) const {
  auto g = std::make_unique<Graph>();
  const Node* old_output = nullptr;
  std::optional<Argument> out;
  if (memo != nullptr) {
    out = g->graph_copy(*this, *memo, &old_output);
  } else {
    // No memo to fill: the copies sit in a vector by position, which at a
    // million nodes is several times faster than a hash map.
    // Positions grow along the graph (erasing leaves gaps): the last node's
    // is the largest.
    if (!order_valid_) renumber();
    std::vector<Node*> copies(sentinel_->prev_->order_ + 1, nullptr);
    out = g->copy_nodes(
        *this,
        [&](const Node* n) -> Node* {
          bool ours = n->graph() == this && !n->erased_ && !n->sentinel_ &&
                      n->order_ < copies.size();
          return ours ? copies[n->order_] : nullptr;
        },
        [&](const Node* from, Node* to) { copies[from->order_] = to; },
        &old_output);
  }
  g->codegen_ = codegen_->clone();
  if (out && old_output) {
    Node* new_output = g->output(std::move(*out), old_output->type());
    if (!old_output->type_text_override().empty()) {
      new_output->set_type(old_output->type(),
                           old_output->type_text_override());
    }
    if (!old_output->meta().empty()) {
      new_output->mutable_meta() = old_output->meta();
    }
    if (memo != nullptr) (*memo)[old_output] = new_output;
  }
  g->owner_ = nullptr;
  return g;
}

// deepcopy() as its nodes would be named by it, built without naming them:
// the copy's namespace is a copy of this one sharing its storage, so each
// node keeps the very name it has here (create_node's legalising and counting
// would give the same name, at a third of a snapshot's cost). Meta and types
// are shared until either side writes. Node arguments are valid (they come
// from a graph), so they are not checked again.
std::unique_ptr<Graph> Graph::snapshot() const {
  auto g = std::make_unique<Graph>();
  g->namespace_.copy_from(namespace_);
  if (!order_valid_) renumber();
  std::vector<Node*> copies(sentinel_->prev_->order_ + 1, nullptr);
  const std::function<Argument(Node*)> copy_of = [&](Node* n) -> Argument {
    return Argument(copies[n->order_]);
  };
  for (const Node* from : nodes()) {
    copies[from->order_] = g->copy_named(*from, copy_of);
  }
  g->codegen_ = codegen_->clone();
  return g;
}

Node* Graph::copy_named(const Node& from,
                        const std::function<Argument(Node*)>& map) {
  Node::Args args;
  Node::Kwargs kwargs;
  map_inputs(from, map, &args, &kwargs);
  auto node = std::unique_ptr<Node>(new Node());
  node->target_ = &sentinel_entry_;  // this graph, until indexed below
  node->op_ = from.op_;
  // The namespaces share storage (Namespace::copy_from): `from`'s name is
  // already one of this namespace's views.
  Node* copy = add_node(std::move(node), from.name(), from.target(), {}, {},
                        std::move(args), std::move(kwargs));
  copy->share_meta_and_type(from);
  return copy;
}

void Graph::reserve_names_of(const Graph& other) {
  namespace_.merge_from(other.namespace_);
}

void Graph::rename_nodes(const std::vector<Node*>& nodes,
                         const std::vector<std::string_view>& names) {
  if (nodes.size() != names.size()) {
    throw FxError(cat("rename_nodes: ", nodes.size(), " nodes but ",
                      names.size(), " names"));
  }
  absl::flat_hash_map<const Node*, size_t> renamed;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* n = nodes[i];
    if (n == nullptr || n->sentinel_ || n->graph() != this || n->erased()) {
      throw FxError(
          cat("rename_nodes: entry ", i, " is not a live node of this graph"));
    }
    if (!renamed.emplace(n, i).second) {
      throw FxError(cat("rename_nodes: entry ", i, " renames node '", n->name(),
                        "' again (entry ", renamed[n], ")"));
    }
    if (!Namespace::is_legal_node_name(names[i])) {
      throw FxError(cat("rename_nodes: entry ", i, " (node '", n->name(),
                        "'): ", python_string_repr(names[i]),
                        " is not a legal node name (a Python identifier that "
                        "is not a keyword, a builtin or a code generation "
                        "global)"));
    }
  }
  // Every live node's name after the rename, with who has it.
  absl::flat_hash_map<std::string_view, const Node*> final_names;
  final_names.reserve(size_);
  auto take = [&](std::string_view name, const Node* n) {
    auto [it, fresh] = final_names.emplace(name, n);
    if (fresh) return;
    const Node* a = renamed.contains(n) ? n : it->second;
    const Node* b = a == n ? it->second : n;
    throw FxError(cat("rename_nodes: entry ", renamed[a], " gives node '",
                      a->name(), "' the name '", name, "', which node '",
                      b->name(), "' ",
                      renamed.contains(b) ? "is given too" : "keeps"));
  };
  for (size_t i = 0; i < nodes.size(); ++i) take(names[i], nodes[i]);
  for (Node* n : this->nodes()) {
    if (!renamed.contains(n)) take(n->name(), n);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i]->set_name(namespace_.claim(names[i]));
  }
}

void Graph::reset_namespace() {
  namespace_.forget_names();
  for (Node* n : nodes()) n->set_name(namespace_.claim(n->name()));
}

bool Graph::eliminate_dead_code() {
  lint();
  bool changed = false;
  for (Node* node : reversed_nodes()) {
    if (!node->is_impure() && node->users_.empty()) {
      erase_node(node);
      changed = true;
    }
  }
  return changed;
}

// --------------------------------------------------------------------- lint

void Graph::lint() const {
  // "Defined before use" compares positions (one pass numbers the nodes)
  // rather than filling a set of the nodes seen so far: at a million nodes
  // the set's cache misses were most of lint's time.
  if (!order_valid_) renumber();
  absl::flat_hash_set<std::string_view> seen_names;
  seen_names.reserve(size_);
  for (Node* node : nodes()) {
    if (node->graph() != this) {
      throw FxError(
          cat("Node '", node->name(), "' does not belong to this Graph!"));
    }
    auto check_arg = [&](Node* arg) {
      if (arg->graph() != this) {
        throw FxError(cat(
            "Argument '", arg->name(), "' of Node '", node->name(),
            "' does not belong to this Graph, but was used as an argument! If "
            "you are copying nodes from another graph, make sure to use "
            "``arg_transform`` on node_copy() to remap values\n",
            str()));
      }
      if (arg->erased_ || arg->order_ >= node->order_) {
        throw FxError(cat(
            "Argument '", arg->name(), "' of Node '", node->name(),
            "' was used before it has been defined! Please check that Nodes "
            "in the graph are topologically ordered\n",
            str()));
      }
    };
    for (const Argument& a : node->args_) for_each_node(a, check_arg);
    for (const auto& kv : node->kwargs()) for_each_node(kv.second, check_arg);
    if (!seen_names.insert(node->name()).second) {
      throw FxError(cat("Node redefined name ", node->name(), "!"));
    }
  }

  if (owner_ == nullptr) return;
  for (const Node* node : nodes()) lint_target(*owner_, *node);
}

std::vector<Node*> Graph::find_nodes(Opcode op, std::string_view target) const {
  if (!nodes_indexed_) {
    // The first call builds the index; every edit keeps it from then on.
    nodes_indexed_ = true;
    for (Node* n : nodes()) {
      n->target_slot_ = static_cast<uint32_t>(n->target_->nodes.size());
      n->target_->nodes.push_back(n);
    }
  }
  std::vector<Node*> out;
  auto it = targets_.find(target);
  if (it == targets_.end()) return out;
  for (Node* n : it->second->nodes) {
    if (n->op() == op) out.push_back(n);
  }
  if (out.size() > 1) {
    if (!order_valid_) renumber();
    std::sort(out.begin(), out.end(),
              [](Node* a, Node* b) { return a->order_ < b->order_; });
  }
  return out;
}

// --------------------------------------------------------------------- text

std::string Graph::str() const {
  // torch.fx passes an empty (falsy) placeholder list to format_node, so the
  // header is always "graph():" and placeholders print as nodes.
  std::string out = "graph():";
  for (Node* node : nodes()) {
    out += "\n    ";
    out += node->format_node();
  }
  return out;
}

std::string Graph::tabular() const {
  std::vector<std::array<std::string, 5>> rows;
  rows.push_back({"opcode", "name", "target", "args", "kwargs"});
  for (Node* n : nodes()) {
    Argument args =
        Argument::tuple(ArgumentList(n->args_.begin(), n->args_.end()));
    rows.push_back({std::string(opcode_name(n->op())), std::string(n->name()),
                    tabular_target(n), repr(args),
                    repr(Argument::dict(n->kwargs()))});
  }
  std::array<size_t, 5> width{};
  for (const auto& row : rows) {
    for (size_t c = 0; c < 5; ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  auto emit = [&](const std::array<std::string, 5>& row) {
    std::string line;
    for (size_t c = 0; c < 5; ++c) {
      if (c) line += "  ";
      line += row[c];
      line.append(width[c] - row[c].size(), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += "\n";
  };
  emit(rows[0]);
  std::array<std::string, 5> dashes;
  for (size_t c = 0; c < 5; ++c) dashes[c] = std::string(width[c], '-');
  emit(dashes);
  for (size_t r = 1; r < rows.size(); ++r) emit(rows[r]);
  return out;
}

void Graph::set_codegen(std::unique_ptr<CodeGen> codegen) {
  if (codegen) codegen_ = std::move(codegen);
}

PythonCode Graph::python_code(std::string_view root_module) const {
  return codegen_->gen_python_code(*this, root_module);
}

}  // namespace fx
