// The node entries of the C function table: a node's fields, users, inputs
// and neighbours (NodeOp .. NodeFormat), its changes (NodeSetArgs ..
// NodeRemoveMeta) and its place among the others (NodeReplaceAllUsesWith ..
// NodeAppend).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

#include "fx_core/format/code_names.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/aten/aten_effects.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/capi/api_internal.h"
#include "host/capi/c_api.h"
#include "host/handles/wrap.h"

namespace fx::host {
namespace internal {

namespace {

// ------------------------------------------------------ nodes: inspection

// The index of `key` in `dict`, or its size when absent.
size_t index_of(const ArgumentDict& dict, std::string_view key) {
  size_t i = 0;
  while (i < dict.size() && dict[i].first != key) ++i;
  return i;
}

}  // namespace

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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace internal

}  // namespace fx::host
