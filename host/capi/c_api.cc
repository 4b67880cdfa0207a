#include "host/capi/c_api.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "fx_core/format/code_names.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/aten/aten_effects.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/capi/api_internal.h"
#include "host/capi/wrap.h"

namespace fx::host {
namespace internal {

// ---------------------------------------------------------- attributes

std::mutex& stores_mutex() {
  static std::mutex m;
  return m;
}

absl::flat_hash_map<const Graph*, AttributeStore*>& stores() {
  static auto* map = new absl::flat_hash_map<const Graph*, AttributeStore*>();
  return *map;
}

AttributeStore* store_for(const Graph* g) {
  std::lock_guard<std::mutex> lock(stores_mutex());
  auto it = stores().find(g);
  return it == stores().end() ? nullptr : it->second;
}

// ------------------------------------------- released graphs, erased nodes

namespace {

struct GraphsOfPlugins {
  std::mutex mutex;
  absl::flat_hash_set<const Graph*> created;  // by CreateGraph, not freed
  absl::flat_hash_set<const Graph*> released;
  std::atomic<size_t> num_released{0};  // read without the lock
};

GraphsOfPlugins& graphs_of_plugins() {
  static auto* graphs = new GraphsOfPlugins();
  return *graphs;
}

}  // namespace

void note_created_graph(Graph* g) {
  GraphsOfPlugins& all = graphs_of_plugins();
  std::lock_guard<std::mutex> lock(all.mutex);
  all.created.insert(g);
}

// Only a graph from CreateGraph is released, once; any other is left alone.
void release_graph(Graph* g) {
  GraphsOfPlugins& all = graphs_of_plugins();
  std::lock_guard<std::mutex> lock(all.mutex);
  if (all.created.count(g) == 0 || !all.released.insert(g).second) return;
  all.num_released.store(all.released.size(), std::memory_order_release);
}

bool is_released(const Graph* g) {
  GraphsOfPlugins& all = graphs_of_plugins();
  if (all.num_released.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<std::mutex> lock(all.mutex);
  return all.released.count(g) > 0;
}

namespace {
[[noreturn]] void fail_released() {
  fail(FX_FAILED_PRECONDITION,
       "the graph was released (ReleaseGraph); it and its nodes can no longer "
       "be used");
}
}  // namespace

Graph* live_graph(FxGraph* g) {
  Graph* graph = require(unwrap(g), "graph");
  if (is_released(graph)) fail_released();
  return graph;
}

const Graph* live_graph(const FxGraph* g) {
  const Graph* graph = require(unwrap(g), "graph");
  if (is_released(graph)) fail_released();
  return graph;
}

Node* live_node(FxNode* n, const char* what) {
  return const_cast<Node*>(live_node(static_cast<const FxNode*>(n), what));
}

const Node* live_node(const FxNode* n, const char* what) {
  const Node* node = require(unwrap(n), what);
  if (is_released(node->graph())) fail_released();
  if (node->erased()) {
    fail(FX_FAILED_PRECONDITION,
         cat(what, " '", node->name(),
             "' was erased; an erased node can only be read"));
  }
  return node;
}

AttributeStore* require_store(const Graph* g) {
  AttributeStore* s = store_for(g);
  if (s == nullptr) {
    fail(FX_FAILED_PRECONDITION,
         "this graph has no owning module, so it has no attributes");
  }
  return s;
}

// What an FxOptions handle names: the options of the pass being called.
template <>
struct HostObject<FxOptions> : HandleSlot {
  const FxOptions* options = nullptr;
};

namespace {

const std::pair<std::string, OptionValue>* find_option(const FxOptions* handle,
                                                       const char* name,
                                                       FxOptionType type) {
  const FxOptions& options =
      *require(unwrap_object(handle), "options")->options;
  require(name, "name");
  for (const auto& kv : options.values) {
    if (kv.first == name) {
      if (kv.second.type != type) {
        fail(FX_INVALID_ARGUMENT,
             cat("option '", name, "' has another type than requested"));
      }
      return &kv;
    }
  }
  fail(FX_NOT_FOUND, cat("no option '", name, "' in this pass's schema"));
}

Node::Kwargs make_kwargs(const char* const* keys, const FxArg* const* values,
                         size_t count) {
  Node::Kwargs kwargs;
  if (count > 0) {
    require(keys, "kwarg keys");
    require(values, "kwarg values");
  }
  for (size_t i = 0; i < count; ++i) {
    kwargs.emplace_back(require(keys[i], "kwarg key"),
                        copy_arg(values[i], "kwarg value"));
  }
  return kwargs;
}

Node::Args make_args(const FxArg* const* args, size_t count) {
  Node::Args out;
  if (count > 0) require(args, "args");
  for (size_t i = 0; i < count; ++i) out.push_back(copy_arg(args[i], "arg"));
  return out;
}

Opcode to_opcode(FxOpcode op) {
  if (op < FX_OP_PLACEHOLDER || op > FX_OP_OUTPUT) {
    fail(FX_INVALID_ARGUMENT, cat("unknown opcode ", static_cast<int>(op)));
  }
  return static_cast<Opcode>(op);
}

// --------------------------------------------------------------- status

// What a handle that names no live status says.
constexpr const char* kNoStatus =
    "not a live status (released already, or not made by this host)";

void fill_status_entries(FxApi& t) {
  t.CreateStatus = [](FxStatusCode code, const char* message) {
    return make_status(code, message ? message : "");
  };
  // A handle that names no live status reads as an internal error.
  t.GetStatusCode = [](const FxStatus* s) {
    const HostObject<FxStatus>* status = peek_object(s);
    return status ? status->code : s ? FX_INTERNAL : FX_OK;
  };
  t.GetStatusMessage = [](const FxStatus* s) {
    const HostObject<FxStatus>* status = peek_object(s);
    return status ? status->message.c_str() : s ? kNoStatus : "";
  };
  t.ReleaseStatus = [](FxStatus* s) { release_object(s); };
  t.ReleaseString = [](char* text) { std::free(text); };
}

// ------------------------------------------------ arguments: construction

// Stores a new argument, owned by the caller, in *out. Callers compute
// `value` first, so its errors come before a NULL `out`'s.
void give_arg(FxArg** out, Argument value) {
  FxArg** slot = require(out, "out");
  *slot = give(std::move(value));
}

ArgumentList copy_items(const FxArg* const* items, size_t count) {
  ArgumentList list;
  if (count) require(items, "items");
  for (size_t i = 0; i < count; ++i) list.push_back(copy_arg(items[i], "item"));
  return list;
}

Argument torch_value(FxArgKind kind, const char* name) {
  std::string n = require(name, "name");
  switch (kind) {
    case FX_ARG_DTYPE:
      return Argument::dtype(n);
    case FX_ARG_DEVICE:
      return Argument::device(n);
    case FX_ARG_MEMORY_FORMAT:
      return Argument::memory_format(n);
    case FX_ARG_LAYOUT:
      return Argument::layout(n);
    default:
      fail(FX_INVALID_ARGUMENT,
           "kind must be a dtype, device, memory format or layout");
  }
}

// CreateNone .. CreateNodeRef.
void fill_scalar_arg_entries(FxApi& t) {
  t.CreateNone = [](FxArg** out) {
    return guarded("CreateNone", [&] { give_arg(out, Argument()); });
  };
  t.CreateBool = [](int v, FxArg** out) {
    return guarded("CreateBool", [&] { give_arg(out, Argument(v != 0)); });
  };
  t.CreateInt = [](int64_t v, FxArg** out) {
    return guarded("CreateInt", [&] { give_arg(out, Argument(v)); });
  };
  t.CreateFloat = [](double v, FxArg** out) {
    return guarded("CreateFloat", [&] { give_arg(out, Argument(v)); });
  };
  t.CreateString = [](const char* v, FxArg** out) {
    return guarded("CreateString", [&] {
      give_arg(out, Argument(std::string(require(v, "value"))));
    });
  };
  t.CreateNodeRef = [](FxNode* node, FxArg** out) {
    return guarded("CreateNodeRef", [&] {
      give_arg(out, Argument(unwrap(require(node, "node"))));
    });
  };
}

// CreateList .. ReleaseArg.
void fill_compound_arg_entries(FxApi& t) {
  t.CreateList = [](const FxArg* const* items, size_t count, FxArg** out) {
    return guarded("CreateList", [&] {
      ArgumentList list = copy_items(items, count);
      give_arg(out, Argument::list(std::move(list)));
    });
  };
  t.CreateTuple = [](const FxArg* const* items, size_t count, FxArg** out) {
    return guarded("CreateTuple", [&] {
      ArgumentList list = copy_items(items, count);
      give_arg(out, Argument::tuple(std::move(list)));
    });
  };
  t.CreateDict = [](const char* const* keys, const FxArg* const* values,
                    size_t count, FxArg** out) {
    return guarded("CreateDict", [&] {
      give_arg(out, Argument::dict(make_kwargs(keys, values, count)));
    });
  };
  t.CreateSlice = [](const FxArg* start, const FxArg* stop, const FxArg* step,
                     FxArg** out) {
    return guarded("CreateSlice", [&] {
      give_arg(out,
               Argument::slice(copy_arg(start, "start"), copy_arg(stop, "stop"),
                               copy_arg(step, "step")));
    });
  };
  t.CreateEllipsis = [](FxArg** out) {
    return guarded("CreateEllipsis",
                   [&] { give_arg(out, Argument::ellipsis()); });
  };
  t.CreateTorchValue = [](FxArgKind kind, const char* name, FxArg** out) {
    return guarded("CreateTorchValue", [&] {
      Argument value = torch_value(kind, name);
      give_arg(out, std::move(value));
    });
  };
  t.CloneArg = [](const FxArg* arg, FxArg** out) {
    return guarded("CloneArg", [&] { give_arg(out, copy_arg(arg, "arg")); });
  };
  t.ReleaseArg = release_arg;
}

// -------------------------------------------------- arguments: inspection

size_t arg_size(const FxArg* a) {
  const Argument* found = peek(a);
  if (found == nullptr) return 0;
  const Argument& arg = *found;
  if (arg.is_sequence() || arg.is_slice()) return arg.elements().size();
  if (arg.is_dict()) return arg.items().size();
  return 0;
}

const FxArg* arg_item(const FxArg* a, size_t i) { return borrow(a, i); }

// ArgKind .. ArgEqual.
void fill_arg_inspection_entries(FxApi& t) {
  t.ArgKind = [](const FxArg* a) {
    const Argument* arg = peek(a);
    if (arg == nullptr) return FX_ARG_NONE;
    // Symbolic ints have no FxArgKind (old plugins' switches): a string
    // (ArgGetString: the expression) that ArgIsSymInt (version 8) tells apart.
    // A qscheme (in a module config) likewise reads as its name.
    if (arg->is_symint() || arg->kind() == Argument::Kind::kQScheme) {
      return FX_ARG_STRING;
    }
    return static_cast<FxArgKind>(arg->kind());
  };
  t.ArgGetBool = [](const FxArg* a, int* out) {
    return guarded("ArgGetBool", [&] {
      *require(out, "out") = require(unwrap(a), "arg")->as_bool() ? 1 : 0;
    });
  };
  t.ArgGetInt = [](const FxArg* a, int64_t* out) {
    return guarded("ArgGetInt", [&] {
      *require(out, "out") = require(unwrap(a), "arg")->as_int();
    });
  };
  t.ArgGetFloat = [](const FxArg* a, double* out) {
    return guarded("ArgGetFloat", [&] {
      *require(out, "out") = require(unwrap(a), "arg")->as_float();
    });
  };
  t.ArgGetString = [](const FxArg* a, const char** out) {
    return guarded("ArgGetString", [&] {
      *require(out, "out") = require(unwrap(a), "arg")->as_string().c_str();
    });
  };
  t.ArgGetNode = [](const FxArg* a, FxNode** out) {
    return guarded("ArgGetNode", [&] {
      *require(out, "out") = wrap(require(unwrap(a), "arg")->as_node());
    });
  };
  t.ArgSize = arg_size;
  t.ArgItem = arg_item;
  t.ArgKey = [](const FxArg* a, size_t i) -> const char* {
    const Argument* arg = peek(a);
    if (arg == nullptr || !arg->is_dict() || i >= arg->items().size()) {
      return nullptr;
    }
    return arg->items()[i].first.c_str();
  };
  t.ArgEqual = [](const FxArg* a, const FxArg* b) -> int {
    const Argument* x = peek(a);
    const Argument* y = peek(b);
    if (x == nullptr || y == nullptr) return x == y;
    return *x == *y ? 1 : 0;
  };
}

// ------------------------------------------------------ nodes: inspection

// The index of `key` in `dict`, or its size when absent.
size_t index_of(const ArgumentDict& dict, std::string_view key) {
  size_t i = 0;
  while (i < dict.size() && dict[i].first != key) ++i;
  return i;
}

// NodeOp .. NodeFindKwarg: the node's own fields.
void fill_node_field_entries(FxApi& t) {
  t.NodeOp = [](const FxNode* h) {
    const Node* n = peek(h);
    return n ? static_cast<FxOpcode>(n->op()) : FX_OP_PLACEHOLDER;
  };
  t.NodeName = [](const FxNode* h) -> const char* {
    const Node* n = peek(h);
    return n ? n->name().data() : nullptr;
  };
  t.NodeTarget = [](const FxNode* h) -> const char* {
    const Node* n = peek(h);
    return n ? n->target().c_str() : nullptr;
  };
  t.NodeType = [](const FxNode* h) -> const char* {
    const Node* n = peek(h);
    if (n == nullptr) return nullptr;
    std::string_view type = n->type();
    return type.empty() ? "" : type.data();
  };
  t.NodeTypeText = [](const FxNode* n, char** out) {
    return guarded("NodeTypeText", [&] {
      const Node* node = live_node(n, "node");
      *require(out, "out") = c_string(node->type_text());
    });
  };
  t.NodeGraph = [](const FxNode* h) -> FxGraph* {
    const Node* n = peek(h);
    return n ? wrap(n->graph()) : nullptr;
  };
  t.NodeNumArgs = [](const FxNode* h) -> size_t {
    const Node* n = peek(h);
    return n ? n->args().size() : 0;
  };
  t.NodeArg = [](const FxNode* h, size_t i) {
    return borrow(h, StepField::kArgs, i);
  };
  t.NodeNumKwargs = [](const FxNode* h) -> size_t {
    const Node* n = peek(h);
    return n ? n->kwargs().size() : 0;
  };
  t.NodeKwargKey = [](const FxNode* h, size_t i) -> const char* {
    const Node* n = peek(h);
    if (n == nullptr || i >= n->kwargs().size()) return nullptr;
    return n->kwargs()[i].first.c_str();
  };
  t.NodeKwargValue = [](const FxNode* h, size_t i) {
    return borrow(h, StepField::kKwargs, i);
  };
  t.NodeFindKwarg = [](const FxNode* h, const char* key) -> const FxArg* {
    const Node* n = peek(h);
    if (n == nullptr || key == nullptr) return nullptr;
    return borrow(h, StepField::kKwargs, index_of(n->kwargs(), key));
  };
}

size_t node_users(const FxNode* h, FxNode** out, size_t capacity) {
  const Node* n = peek(h);
  if (n == nullptr) return 0;
  size_t i = 0;
  for (Node* user : n->users()) {
    if (i < capacity && out != nullptr) out[i] = wrap(user);
    ++i;
  }
  return i;
}

// The neighbour in graph order that is not erased, or nullptr.
FxNode* live_neighbour(const FxNode* h, bool forward) {
  const Node* n = peek(h);
  if (n == nullptr) return nullptr;
  Node* next = forward ? n->next() : n->prev();
  while (next != nullptr && next->erased()) {
    next = forward ? next->next() : next->prev();
  }
  return wrap(next);
}

// NodeNumUsers .. NodeFormat: users, inputs, neighbours, flags, meta, text.
void fill_node_link_entries(FxApi& t) {
  t.NodeNumUsers = [](const FxNode* h) -> size_t {
    const Node* n = peek(h);
    return n ? n->num_users() : 0;
  };
  t.NodeUser = [](const FxNode* h, size_t i) -> FxNode* {
    const Node* n = peek(h);
    if (n == nullptr || i >= n->users().size()) return nullptr;
    return wrap(n->users()[i]);
  };
  t.NodeUsers = node_users;
  t.NodeNumInputs = [](const FxNode* h) -> size_t {
    const Node* n = peek(h);
    return n ? n->all_input_nodes().size() : 0;
  };
  t.NodeInput = [](const FxNode* h, size_t i) -> FxNode* {
    const Node* n = peek(h);
    if (n == nullptr) return nullptr;
    std::vector<Node*> inputs = n->all_input_nodes();
    return i < inputs.size() ? wrap(inputs[i]) : nullptr;
  };
  t.NodeNext = [](const FxNode* n) { return live_neighbour(n, true); };
  t.NodePrev = [](const FxNode* n) { return live_neighbour(n, false); };
  t.NodeIsErased = [](const FxNode* h) -> int {
    const Node* n = peek(h);
    return n && n->erased();
  };
  t.NodeIsImpure = [](const FxNode* h) -> int {
    const Node* n = peek(h);
    return n && n->is_impure();
  };
  t.NodeOperatorEffects = [](const FxNode* h) -> uint32_t {
    const Node* n = peek(h);
    if (n == nullptr) return 0;
    const Node& node = *n;
    try {
      OperatorEffects e = operator_effects(node.op(), node.target());
      return (e.nondeterministic ? FX_EFFECT_NONDETERMINISTIC : 0u) |
             (e.mutates ? FX_EFFECT_MUTATES : 0u);
    } catch (...) {  // nothing C++ crosses the table
      return 0u;
    }
  };
  t.NodeNumMeta = [](const FxNode* h) -> size_t {
    const Node* n = peek(h);
    return n ? n->meta().size() : 0;
  };
  t.NodeMetaKey = [](const FxNode* h, size_t i) -> const char* {
    const Node* n = peek(h);
    if (n == nullptr || i >= n->meta().size()) return nullptr;
    return n->meta()[i].first.c_str();
  };
  t.NodeGetMeta = [](const FxNode* h, const char* key) -> const FxArg* {
    const Node* n = peek(h);
    if (n == nullptr || key == nullptr) return nullptr;
    return borrow(h, StepField::kMeta, index_of(n->meta(), key));
  };
  t.NodeFormat = [](const FxNode* n, char** out) {
    return guarded("NodeFormat", [&] {
      *require(out, "out") =
          c_string(require(unwrap(n), "node")->format_node());
    });
  };
}

// --------------------------------------------------------- nodes: changes

void remove_meta(FxNode* n, const char* key) {
  ArgumentDict& meta = live_node(n, "node")->mutable_meta();
  std::string_view k = require(key, "key");
  for (auto it = meta.begin(); it != meta.end(); ++it) {
    if (it->first == k) {
      meta.erase(it);
      return;
    }
  }
  fail(FX_NOT_FOUND,
       cat("node '", unwrap(n)->name(), "' has no meta '", k, "'"));
}

// NodeSetTypeText (version 15): the type as code spells it and as
// print(graph) shows it, both checked as a graph file's are.
void set_type_text(FxNode* n, const char* type, const char* text) {
  Node* node = live_node(n, "node");
  const std::string_view code = type ? type : "";
  const std::string_view shown = text ? text : "";
  if (!code.empty() && !is_type_expression(code)) {
    fail(FX_INVALID_ARGUMENT,
         cat("type '", code,
             "' is not a type expression (dotted ASCII names, [ ] and "
             "commas)"));
  }
  if (!shown.empty() && code.empty()) {
    fail(FX_INVALID_ARGUMENT, "a type text needs a type");
  }
  if (!is_printable_text(shown)) {
    fail(FX_INVALID_ARGUMENT, "a type text is printable ASCII on one line");
  }
  node->set_type(code, shown);
}

// NodeSetArgs .. NodeRemoveMeta: the node's own fields.
void fill_node_update_entries(FxApi& t) {
  t.NodeSetArgs = [](FxNode* n, const FxArg* const* args, size_t count) {
    return guarded("NodeSetArgs", [&] {
      live_node(n, "node")->set_args(make_args(args, count));
    });
  };
  t.NodeSetArg = [](FxNode* n, size_t i, const FxArg* value) {
    return guarded("NodeSetArg", [&] {
      live_node(n, "node")->update_arg(i, copy_arg(value, "value"));
    });
  };
  t.NodeSetKwargs = [](FxNode* n, const char* const* keys,
                       const FxArg* const* values, size_t count) {
    return guarded("NodeSetKwargs", [&] {
      live_node(n, "node")->set_kwargs(make_kwargs(keys, values, count));
    });
  };
  t.NodeSetKwarg = [](FxNode* n, const char* key, const FxArg* value) {
    return guarded("NodeSetKwarg", [&] {
      live_node(n, "node")->update_kwarg(require(key, "key"),
                                         copy_arg(value, "value"));
    });
  };
  t.NodeSetTarget = [](FxNode* n, const char* target) {
    return guarded("NodeSetTarget", [&] {
      std::string_view tgt = require(target, "target");
      if (tgt.empty()) fail(FX_INVALID_ARGUMENT, "target must not be empty");
      live_node(n, "node")->set_target(tgt);
    });
  };
  t.NodeSetType = [](FxNode* n, const char* type) {
    return guarded("NodeSetType",
                   [&] { live_node(n, "node")->set_type(type ? type : ""); });
  };
  t.NodeSetTypeText = [](FxNode* n, const char* type, const char* text) {
    return guarded("NodeSetTypeText", [&] { set_type_text(n, type, text); });
  };
  t.NodeSetMeta = [](FxNode* n, const char* key, const FxArg* value) {
    return guarded("NodeSetMeta", [&] {
      live_node(n, "node")->set_meta(require(key, "key"),
                                     copy_arg(value, "value"));
    });
  };
  t.NodeRemoveMeta = [](FxNode* n, const char* key) {
    return guarded("NodeRemoveMeta", [&] { remove_meta(n, key); });
  };
}

// NodeReplaceAllUsesWith .. NodeAppend: the node's place among the others.
void fill_node_rewire_entries(FxApi& t) {
  t.NodeReplaceAllUsesWith = [](FxNode* n, FxNode* replacement,
                                size_t* num_changed) {
    return guarded("NodeReplaceAllUsesWith", [&] {
      size_t changed =
          live_node(n, "node")
              ->replace_all_uses_with(live_node(replacement, "replacement"))
              .size();
      if (num_changed) *num_changed = changed;
    });
  };
  t.NodeReplaceInputWith = [](FxNode* n, FxNode* old_input, FxNode* new_input) {
    return guarded("NodeReplaceInputWith", [&] {
      live_node(n, "node")->replace_input_with(
          live_node(old_input, "old_input"), live_node(new_input, "new_input"));
    });
  };
  t.NodePrepend = [](FxNode* n, FxNode* x) {
    return guarded("NodePrepend",
                   [&] { live_node(n, "node")->prepend(live_node(x, "x")); });
  };
  t.NodeAppend = [](FxNode* n, FxNode* x) {
    return guarded("NodeAppend",
                   [&] { live_node(n, "node")->append(live_node(x, "x")); });
  };
}

// ------------------------------------------------------------------ graphs

FxStatus* find_nodes(const FxGraph* g, FxOpcode op, const char* target,
                     FxNode** out, size_t capacity, size_t* count) {
  return guarded("GraphFindNodes", [&] {
    std::vector<Node*> found =
        require(unwrap(g), "graph")
            ->find_nodes(to_opcode(op), require(target, "target"));
    *require(count, "count") = found.size();
    if (out == nullptr) return;
    if (capacity < found.size()) {
      fail(FX_INVALID_ARGUMENT, cat("capacity ", capacity, " is less than the ",
                                    found.size(), " nodes found"));
    }
    for (size_t i = 0; i < found.size(); ++i) out[i] = wrap(found[i]);
  });
}

// GraphNumNodes .. GraphFindNodes.
void fill_graph_query_entries(FxApi& t) {
  t.GraphNumNodes = [](const FxGraph* h) -> size_t {
    const Graph* g = peek(h);
    return g ? g->size() : 0;
  };
  t.GraphFirstNode = [](const FxGraph* h) -> FxNode* {
    const Graph* g = peek(h);
    return g ? wrap(g->first()) : nullptr;
  };
  t.GraphLastNode = [](const FxGraph* h) -> FxNode* {
    const Graph* g = peek(h);
    return g ? wrap(g->last()) : nullptr;
  };
  t.GraphOutputNode = [](const FxGraph* h) -> FxNode* {
    const Graph* g = peek(h);
    return g ? wrap(g->output_node()) : nullptr;
  };
  t.GraphFindNodes = find_nodes;
}

FxStatus* create_node(FxGraph* g, FxOpcode op, const char* target,
                      const FxArg* const* args, size_t num_args,
                      const char* const* kwarg_keys,
                      const FxArg* const* kwarg_values, size_t num_kwargs,
                      const char* name, const char* type, FxNode** out) {
  return guarded("GraphCreateNode", [&] {
    require(out, "out");
    std::string_view tgt = require(target, "target");
    if (tgt.empty()) fail(FX_INVALID_ARGUMENT, "target must not be empty");
    Node* node = live_graph(g)->create_node(
        to_opcode(op), tgt, make_args(args, num_args),
        make_kwargs(kwarg_keys, kwarg_values, num_kwargs),
        name ? std::optional<std::string_view>(name) : std::nullopt,
        type ? type : "");
    *out = wrap(node);
  });
}

// GraphCreateNode .. GraphPythonCode.
void fill_graph_edit_entries(FxApi& t) {
  t.GraphCreateNode = create_node;
  t.GraphSetInsertPoint = [](FxGraph* g, FxNode* anchor, int after) {
    return guarded("GraphSetInsertPoint", [&] {
      live_graph(g)->set_insert_point(
          anchor ? live_node(anchor, "anchor") : nullptr, after != 0);
    });
  };
  t.GraphGetInsertPoint = [](const FxGraph* h, FxNode** anchor, int* after) {
    const Graph* g = peek(h);
    if (g == nullptr) return;
    auto [node, is_after] = g->insert_point();
    if (anchor) *anchor = wrap(node);
    if (after) *after = is_after ? 1 : 0;
  };
  t.GraphEraseNode = [](FxGraph* g, FxNode* n) {
    return guarded("GraphEraseNode",
                   [&] { live_graph(g)->erase_node(live_node(n, "node")); });
  };
  t.GraphEliminateDeadCode = [](FxGraph* g, int* changed) {
    return guarded("GraphEliminateDeadCode", [&] {
      bool c = live_graph(g)->eliminate_dead_code();
      if (changed) *changed = c ? 1 : 0;
    });
  };
  t.GraphLint = [](const FxGraph* g) {
    return guarded("GraphLint", [&] { live_graph(g)->lint(); });
  };
  t.GraphToText = [](const FxGraph* g, char** out) {
    return guarded("GraphToText", [&] {
      *require(out, "out") = c_string(live_graph(g)->str());
    });
  };
  t.GraphPythonCode = [](const FxGraph* g, char** out) {
    return guarded("GraphPythonCode", [&] {
      *require(out, "out") = c_string(live_graph(g)->python_code("self").src);
    });
  };
}

// -------------------------------------------------- the owning module

// GraphSetAttr takes ownership of `tensor` in all cases.
void set_attr(FxGraph* g, const char* name, DLManagedTensor* tensor) {
  if (g == nullptr || name == nullptr || tensor == nullptr) {
    if (tensor && tensor->deleter) tensor->deleter(tensor);
    fail(FX_INVALID_ARGUMENT, "graph, name and tensor must not be NULL");
  }
  const Graph* graph = nullptr;
  try {
    graph = live_graph(g);
  } catch (...) {
    if (tensor->deleter) tensor->deleter(tensor);
    throw;
  }
  AttributeStore* s = store_for(graph);
  if (s == nullptr) {
    if (tensor->deleter) tensor->deleter(tensor);
    require_store(graph);
  }
  std::string error;
  if (!s->set_attr(name, tensor, &error)) fail(FX_INVALID_ARGUMENT, error);
}

// GraphHasAttr .. GraphModuleType.
void fill_attribute_entries(FxApi& t) {
  t.GraphHasAttr = [](const FxGraph* g, const char* name) -> int {
    if (name == nullptr || peek(g) == nullptr) return 0;
    AttributeStore* s = store_for(peek(g));
    return s != nullptr && s->has_attr(name);
  };
  t.GraphGetAttr = [](const FxGraph* g, const char* name,
                      DLManagedTensor** out) {
    return guarded("GraphGetAttr", [&] {
      require(out, "out");
      std::string error;
      DLManagedTensor* tensor =
          require_store(live_graph(g))->get_attr(require(name, "name"), &error);
      if (tensor == nullptr) fail(FX_NOT_FOUND, error);
      *out = tensor;
    });
  };
  t.GraphSetAttr = [](FxGraph* g, const char* name, DLManagedTensor* tensor) {
    return guarded("GraphSetAttr", [&] { set_attr(g, name, tensor); });
  };
  t.GraphModuleType = [](const FxGraph* g, const char* name, char** out) {
    return guarded("GraphModuleType", [&] {
      require(out, "out");
      std::string type, error;
      if (!require_store(live_graph(g))
               ->module_type(require(name, "name"), &type, &error)) {
        fail(FX_NOT_FOUND, error);
      }
      *out = c_string(type);
    });
  };
}

void add_module(FxGraph* g, const char* name, const char* type,
                const FxArg* config) {
  AttributeStore* s = require_store(live_graph(g));
  const Argument& c = *unwrap(require(config, "config"));
  if (!c.is_dict()) fail(FX_INVALID_ARGUMENT, "config must be a dict");
  std::string error;
  if (!s->add_module(require(name, "qualified_name"),
                     require(type, "module_type"), c.items(), &error)) {
    fail(FX_INVALID_ARGUMENT, error);
  }
}

// GraphNodeCopy .. GraphExampleInput.
void fill_module_entries(FxApi& t) {
  t.GraphNodeCopy = [](FxGraph* g, const FxNode* n, FxNode** out) {
    return guarded("GraphNodeCopy", [&] {
      require(out, "out");
      *out = wrap(live_graph(g)->node_copy(live_node(n, "node")));
    });
  };
  t.GraphAddModule = [](FxGraph* g, const char* name, const char* type,
                        const FxArg* config) {
    return guarded("GraphAddModule",
                   [&] { add_module(g, name, type, config); });
  };
  t.GraphNumExampleInputs = [](const FxGraph* g) -> size_t {
    if (peek(g) == nullptr) return 0;
    AttributeStore* s = store_for(peek(g));
    return s ? s->num_example_inputs() : 0;
  };
  t.GraphExampleInput = [](const FxGraph* g, size_t index,
                           DLManagedTensor** out) {
    return guarded("GraphExampleInput", [&] {
      require(out, "out");
      std::string error;
      DLManagedTensor* tensor =
          require_store(live_graph(g))->example_input(index, &error);
      if (tensor == nullptr) fail(FX_NOT_FOUND, error);
      *out = tensor;
    });
  };
}

// GraphNumExampleBatches, GraphExampleBatchInput (version 10).
void fill_example_batch_entries(FxApi& t) {
  t.GraphNumExampleBatches = [](const FxGraph* g) -> size_t {
    if (peek(g) == nullptr) return 0;
    AttributeStore* s = store_for(peek(g));
    return s ? s->num_example_batches() : 0;
  };
  t.GraphExampleBatchInput = [](const FxGraph* g, size_t batch, size_t index,
                                DLManagedTensor** out) {
    return guarded("GraphExampleBatchInput", [&] {
      require(out, "out");
      std::string error;
      DLManagedTensor* tensor = require_store(live_graph(g))
                                    ->example_batch_input(batch, index, &error);
      if (tensor == nullptr) fail(FX_NOT_FOUND, error);
      *out = tensor;
    });
  };
}

// ----------------------------------------------------------------- options

// OptionsGetBool .. OptionsGetListItem.
void fill_option_entries(FxApi& t) {
  t.OptionsGetBool = [](const FxOptions* o, const char* name, int* out) {
    return guarded("OptionsGetBool", [&] {
      *require(out, "out") = find_option(o, name, FX_OPTION_BOOL)->second.b;
    });
  };
  t.OptionsGetInt = [](const FxOptions* o, const char* name, int64_t* out) {
    return guarded("OptionsGetInt", [&] {
      *require(out, "out") = find_option(o, name, FX_OPTION_INT)->second.i;
    });
  };
  t.OptionsGetFloat = [](const FxOptions* o, const char* name, double* out) {
    return guarded("OptionsGetFloat", [&] {
      *require(out, "out") = find_option(o, name, FX_OPTION_FLOAT)->second.f;
    });
  };
  t.OptionsGetString = [](const FxOptions* o, const char* name,
                          const char** out) {
    return guarded("OptionsGetString", [&] {
      *require(out, "out") =
          find_option(o, name, FX_OPTION_STRING)->second.s.c_str();
    });
  };
  t.OptionsGetListSize = [](const FxOptions* o, const char* name, size_t* out) {
    return guarded("OptionsGetListSize", [&] {
      *require(out, "out") =
          find_option(o, name, FX_OPTION_STRING_LIST)->second.list.size();
    });
  };
  t.OptionsGetListItem = [](const FxOptions* o, const char* name, size_t i,
                            const char** out) {
    return guarded("OptionsGetListItem", [&] {
      const auto& list =
          find_option(o, name, FX_OPTION_STRING_LIST)->second.list;
      if (i >= list.size()) {
        fail(FX_INVALID_ARGUMENT, cat("option '", name, "' has ", list.size(),
                                      " items, no index ", i));
      }
      *require(out, "out") = list[i].c_str();
    });
  };
}

}  // namespace

// --------------------------------------------------------------- the table

// Fills every entry of version FX_API_VERSION; the parts in the order the
// table has always been filled.
FxApi make_api() {
  FxApi t{};
  t.version = FX_API_VERSION;
  fill_runtime_entries(t);
  fill_extension_entries(t);
  fill_rewrite_entries(t);
  fill_status_entries(t);
  fill_scalar_arg_entries(t);
  fill_compound_arg_entries(t);
  fill_arg_inspection_entries(t);
  fill_node_field_entries(t);
  fill_node_link_entries(t);
  fill_node_update_entries(t);
  fill_node_rewire_entries(t);
  fill_graph_query_entries(t);
  fill_graph_edit_entries(t);
  fill_attribute_entries(t);
  fill_module_entries(t);
  fill_option_entries(t);
  fill_partition_entries(t);
  fill_delegate_entries(t);
  fill_shape_env_entries(t);
  fill_symbolic_shape_prop_entry(t);
  fill_quantized_attr_entry(t);
  fill_example_batch_entries(t);
  fill_rename_entries(t);
  fill_schema_entries(t);
  fill_output_file_entry(t);
  return t;
}

}  // namespace internal

using internal::stores;
using internal::stores_mutex;

namespace {

// Where the entries of each version end: the offset of the first entry of
// the next version (appended with it), or the table's end.
constexpr size_t entries_end(uint32_t version) {
  switch (version) {
    case 1:
      return offsetof(FxApi, ValueTensorMeta2);
    case 2:
      return offsetof(FxApi, SupportTargets);
    case 3:
      return offsetof(FxApi, RegisterDecomposition);
    case 4:
      return offsetof(FxApi, RegisterBackend);
    case 5:  // version 6 adds no entries: versions 5 and 6 end here
    case 6:
      return offsetof(FxApi, NodeOperatorEffects);
    case 7:
      return offsetof(FxApi, ArgIsSymInt);
    case 8:
      return offsetof(FxApi, GraphSetQuantizedAttr);
    case 9:
      return offsetof(FxApi, GraphNumExampleBatches);
    case 10:
      return offsetof(FxApi, GraphRenameNodes);
    case 11:
      return offsetof(FxApi, OperatorSchemas);
    case 12:
      return offsetof(FxApi, WriteOutputFile);
    case 13:
      return offsetof(FxApi, TargetSignature);
    case 14:
      return offsetof(FxApi, NodeSetTypeText);
    default:
      return sizeof(FxApi);
  }
}
static_assert(FX_API_VERSION == 15,
              "a new API version: add where its entries end to entries_end");

// The whole table cut down to `version`: later entries zeroed.
FxApi table_of_version(const FxApi& full, uint32_t version) {
  FxApi t = full;
  t.version = version;
  size_t end = entries_end(version);
  std::memset(reinterpret_cast<char*>(&t) + end, 0, sizeof(FxApi) - end);
  return t;
}

}  // namespace

const FxApi* api(uint32_t version) {
  static const auto* tables = [] {
    const FxApi full = internal::make_api();
    auto* all = new std::vector<FxApi>();
    for (uint32_t v = 1; v <= FX_API_VERSION; ++v) {
      all->push_back(table_of_version(full, v));
    }
    internal::forward_first_release_slots(all->front());
    return all;
  }();
  uint32_t v = std::clamp<uint32_t>(version, 1, FX_API_VERSION);
  return &(*tables)[v - 1];
}

void free_released_graphs() {
  internal::GraphsOfPlugins& all = internal::graphs_of_plugins();
  std::lock_guard<std::mutex> lock(all.mutex);
  for (const Graph* g : all.released) {
    all.created.erase(g);
    delete g;
  }
  all.released.clear();
  all.num_released.store(0, std::memory_order_release);
}

FxGraph* to_handle(Graph* g) { return internal::wrap(g); }
Graph* from_handle(FxGraph* g) { return internal::unwrap(g); }
FxNode* to_handle(Node* n) { return internal::wrap(n); }
Node* from_handle(FxNode* n) { return internal::unwrap(n); }

StatusText take_status(FxStatus* status) {
  StatusText text;
  if (status == nullptr) return text;
  const auto* live = internal::peek_object(status);
  if (live == nullptr) return {FX_INTERNAL, internal::kNoStatus};
  text.code = live->code;
  text.message = live->message;
  internal::release_object(status);
  return text;
}

// The scope is destroyed first, so the handle turns stale before the object
// goes.
struct LentOptions::Lent {
  explicit Lent(const FxOptions& options) { object.options = &options; }
  internal::HostObject<FxOptions> object;
  internal::ScopedObject<FxOptions> scope{object};
};

LentOptions::LentOptions(const FxOptions& options)
    : lent_(std::make_unique<Lent>(options)), handle_(lent_->scope.handle()) {}

LentOptions::~LentOptions() = default;

ScopedAttributeStore::ScopedAttributeStore(const Graph* graph,
                                           AttributeStore* store)
    : graph_(graph) {
  std::lock_guard<std::mutex> lock(stores_mutex());
  auto it = stores().find(graph);
  previous_ = it == stores().end() ? nullptr : it->second;
  if (store) {
    stores()[graph] = store;
  } else {
    stores().erase(graph);
  }
}

ScopedAttributeStore::~ScopedAttributeStore() {
  std::lock_guard<std::mutex> lock(stores_mutex());
  if (previous_) {
    stores()[graph_] = previous_;
  } else {
    stores().erase(graph_);
  }
}

}  // namespace fx::host
