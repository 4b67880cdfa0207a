// The inline bodies of the wrapper's graph and node handles: Node, the
// InsertGuard that Graph::inserting_before/after return, and Graph.
//
// Part of the wrapper declared (and documented) in fx/plugin_api.hpp,
// which includes it through fx/plugin_api_inline.hpp. Include
// fx/plugin_api.hpp, not this file. Every definition here is inline (or a
// template), so the wrapper stays header-only.
#ifndef FX_PLUGIN_API_GRAPH_INLINE_HPP_
#define FX_PLUGIN_API_GRAPH_INLINE_HPP_

// Makes this header self-contained for tools that parse it alone; when
// plugin_api.hpp is the includer its guard makes this a no-op.
#include "fx/plugin_api.hpp"

namespace fxp {

// --------------------------------------------------------------------- Node

inline FxOpcode Node::op() const { return api()->NodeOp(node_); }
inline std::string_view Node::name() const {
  return detail::lent(api()->NodeName(node_));
}
inline std::string_view Node::target() const {
  return detail::lent(api()->NodeTarget(node_));
}
inline const char* Node::target_cstr() const {
  return api()->NodeTarget(node_);
}
inline std::string_view Node::type() const {
  return detail::lent(api()->NodeType(node_));
}
inline size_t Node::num_args() const { return api()->NodeNumArgs(node_); }

inline ArgView Node::arg(size_t i) const {
  return ArgView(api()->NodeArg(node_, i));
}

inline std::vector<ArgView> Node::args() const {
  std::vector<ArgView> out;
  for (size_t i = 0; i < num_args(); ++i) out.push_back(arg(i));
  return out;
}

inline size_t Node::num_kwargs() const { return api()->NodeNumKwargs(node_); }

inline std::string Node::kwarg_key(size_t i) const {
  return detail::lent(api()->NodeKwargKey(node_, i));
}

inline ArgView Node::kwarg_value(size_t i) const {
  return ArgView(api()->NodeKwargValue(node_, i));
}

inline ArgView Node::kwarg(const char* key) const {
  return ArgView(api()->NodeFindKwarg(node_, key));
}

inline std::vector<Node> Node::users() const {
  std::vector<FxNode*> handles(api()->NodeNumUsers(node_));
  handles.resize(api()->NodeUsers(node_, handles.data(), handles.size()));
  return std::vector<Node>(handles.begin(), handles.end());
}

inline size_t Node::num_users() const { return api()->NodeNumUsers(node_); }

inline std::vector<Node> Node::all_input_nodes() const {
  std::vector<Node> out;
  size_t n = api()->NodeNumInputs(node_);
  for (size_t i = 0; i < n; ++i) out.emplace_back(api()->NodeInput(node_, i));
  return out;
}

inline Node Node::next() const { return api()->NodeNext(node_); }
inline Node Node::prev() const { return api()->NodePrev(node_); }
inline bool Node::is_impure() const { return api()->NodeIsImpure(node_) != 0; }
inline uint32_t Node::operator_effects() const {
  require_api_version(7, "NodeOperatorEffects");
  return api()->NodeOperatorEffects(node_);
}

inline ArgView Node::meta(const char* key) const {
  return ArgView(api()->NodeGetMeta(node_, key));
}

inline std::string Node::format() const {
  char* out = nullptr;
  check(api()->NodeFormat(node_, &out));
  return take_string(out);
}

inline void Node::set_args(const std::vector<Arg>& args) {
  std::vector<const FxArg*> raw;
  for (const Arg& a : args) raw.push_back(a.get());
  check(api()->NodeSetArgs(node_, raw.data(), raw.size()));
}

inline void Node::update_arg(size_t i, const Arg& value) {
  check(api()->NodeSetArg(node_, i, value.get()));
}

inline void Node::update_kwarg(const char* key, const Arg& value) {
  check(api()->NodeSetKwarg(node_, key, value.get()));
}

inline void Node::set_kwargs(
    const std::vector<std::pair<std::string, Arg>>& kwargs) {
  std::vector<const char*> keys;
  std::vector<const FxArg*> values;
  for (const auto& [key, value] : kwargs) {
    keys.push_back(key.c_str());
    values.push_back(value.get());
  }
  check(api()->NodeSetKwargs(node_, keys.data(), values.data(), kwargs.size()));
}

inline void Node::set_target(const char* target) {
  check(api()->NodeSetTarget(node_, target));
}

inline void Node::set_type(const char* type) {
  check(api()->NodeSetType(node_, type));
}

inline void Node::set_type(const char* type, const char* text) {
  require_api_version(15, "NodeSetTypeText");
  check(api()->NodeSetTypeText(node_, type, text));
}

inline std::string Node::type_text() const {
  if (api()->version < 15) return std::string(type());
  char* out = nullptr;
  check(api()->NodeTypeText(node_, &out));
  return take_string(out);
}

inline void Node::set_meta(const char* key, const Arg& value) {
  check(api()->NodeSetMeta(node_, key, value.get()));
}

inline size_t Node::replace_all_uses_with(Node replacement) {
  size_t changed = 0;
  check(api()->NodeReplaceAllUsesWith(node_, replacement.node_, &changed));
  return changed;
}

inline void Node::replace_input_with(Node old_input, Node new_input) {
  check(api()->NodeReplaceInputWith(node_, old_input.node_, new_input.node_));
}

inline void Node::prepend(Node x) { check(api()->NodePrepend(node_, x.node_)); }

inline void Node::append(Node x) { check(api()->NodeAppend(node_, x.node_)); }

// -------------------------------------------------------------- InsertGuard

inline InsertGuard::InsertGuard(FxGraph* graph, FxNode* anchor, int after)
    : graph_(graph) {
  api()->GraphGetInsertPoint(graph, &saved_anchor_, &saved_after_);
  check(api()->GraphSetInsertPoint(graph, anchor, after));
}

inline InsertGuard::~InsertGuard() {
  if (graph_) {
    FxStatus* s =
        api()->GraphSetInsertPoint(graph_, saved_anchor_, saved_after_);
    if (s) api()->ReleaseStatus(s);
  }
}

// -------------------------------------------------------------------- Graph

inline Graph::iterator::iterator(FxNode* n)
    : cur_(n), next_(n ? api()->NodeNext(n) : nullptr) {}

inline Graph::iterator& Graph::iterator::operator++() {
  cur_ = next_;
  next_ = cur_ ? api()->NodeNext(cur_) : nullptr;
  return *this;
}

inline Graph::iterator Graph::begin() const {
  return iterator(api()->GraphFirstNode(graph_));
}

inline Graph::iterator Graph::end() const { return iterator(nullptr); }

inline std::vector<Node> Graph::nodes() const {
  std::vector<Node> out;
  for (Node n : *this) out.push_back(n);
  return out;
}

inline size_t Graph::size() const { return api()->GraphNumNodes(graph_); }

inline Node Graph::output_node() const {
  return api()->GraphOutputNode(graph_);
}

inline std::vector<Node> Graph::find_nodes(FxOpcode op,
                                           const char* target) const {
  size_t count = 0;
  check(api()->GraphFindNodes(graph_, op, target, nullptr, 0, &count));
  std::vector<FxNode*> raw(count);
  check(api()->GraphFindNodes(graph_, op, target, raw.data(), raw.size(),
                              &count));
  return std::vector<Node>(raw.begin(), raw.begin() + count);
}

inline Node Graph::create_node(FxOpcode op, const char* target,
                               const std::vector<Arg>& args,
                               const Kwargs& kwargs, const char* name,
                               const char* type) {
  std::vector<const FxArg*> raw_args;
  for (const Arg& a : args) raw_args.push_back(a.get());
  std::vector<const char*> keys;
  std::vector<const FxArg*> values;
  for (const auto& kv : kwargs) {
    keys.push_back(kv.first.c_str());
    values.push_back(kv.second.get());
  }
  FxNode* out = nullptr;
  check(api()->GraphCreateNode(graph_, op, target, raw_args.data(),
                               raw_args.size(), keys.data(), values.data(),
                               kwargs.size(), name, type, &out));
  return Node(out);
}

inline Node Graph::call_function(const char* target,
                                 const std::vector<Arg>& args,
                                 const Kwargs& kwargs) {
  return create_node(FX_OP_CALL_FUNCTION, target, args, kwargs);
}

inline Node Graph::node_copy(Node n) {
  FxNode* out = nullptr;
  check(api()->GraphNodeCopy(graph_, n.get(), &out));
  return Node(out);
}

inline Node Graph::create_node_borrowing(FxOpcode op, const char* target,
                                         const std::vector<ArgView>& args) {
  std::vector<const FxArg*> raw;
  raw.reserve(args.size());
  for (const ArgView& a : args) raw.push_back(a.get());
  FxNode* out = nullptr;
  check(api()->GraphCreateNode(graph_, op, target, raw.data(), raw.size(),
                               nullptr, nullptr, 0, nullptr, nullptr, &out));
  return Node(out);
}

inline Node Graph::call_method(const char* method, const std::vector<Arg>& args,
                               const Kwargs& kwargs) {
  return create_node(FX_OP_CALL_METHOD, method, args, kwargs);
}

inline Node Graph::call_module(const char* target, const std::vector<Arg>& args,
                               const Kwargs& kwargs) {
  return create_node(FX_OP_CALL_MODULE, target, args, kwargs);
}

inline Node Graph::get_attr(const char* target) {
  return create_node(FX_OP_GET_ATTR, target);
}

inline InsertGuard Graph::inserting_before(Node n) {
  return InsertGuard(graph_, n.get(), 0);
}

inline InsertGuard Graph::inserting_after(Node n) {
  return InsertGuard(graph_, n.get(), 1);
}

inline void Graph::erase_node(Node n) {
  check(api()->GraphEraseNode(graph_, n.get()));
}

inline void Graph::rename_nodes(
    const std::vector<std::pair<Node, std::string>>& renames) {
  require_api_version(11, "GraphRenameNodes");
  std::vector<FxNode*> nodes;
  std::vector<const char*> names;
  for (const auto& [node, name] : renames) {
    nodes.push_back(node.get());
    names.push_back(name.c_str());
  }
  check(api()->GraphRenameNodes(graph_, renames.size(), nodes.data(),
                                names.data()));
}

inline void Graph::reset_namespace() {
  require_api_version(11, "GraphResetNamespace");
  check(api()->GraphResetNamespace(graph_));
}

inline bool Graph::eliminate_dead_code() {
  int changed = 0;
  check(api()->GraphEliminateDeadCode(graph_, &changed));
  return changed != 0;
}

inline void Graph::lint() const { check(api()->GraphLint(graph_)); }

inline std::string Graph::str() const {
  char* out = nullptr;
  check(api()->GraphToText(graph_, &out));
  return take_string(out);
}

inline std::string Graph::python_code() const {
  char* out = nullptr;
  check(api()->GraphPythonCode(graph_, &out));
  return take_string(out);
}

inline bool Graph::has_attr(const char* name) const {
  return api()->GraphHasAttr(graph_, name) != 0;
}

inline DLManagedTensor* Graph::get_attr_tensor(const char* name) const {
  DLManagedTensor* out = nullptr;
  check(api()->GraphGetAttr(graph_, name, &out));
  return out;
}

inline DLManagedTensor* Graph::find_attr_tensor(const char* name) const {
  DLManagedTensor* out = nullptr;
  FxStatus* status = api()->GraphGetAttr(graph_, name, &out);
  if (status != nullptr && api()->GetStatusCode(status) == FX_NOT_FOUND) {
    api()->ReleaseStatus(status);
    return nullptr;
  }
  check(status);
  return out;
}

inline void Graph::set_attr_tensor(const char* name, DLManagedTensor* tensor) {
  check(api()->GraphSetAttr(graph_, name, tensor));
}

inline void Graph::set_attr_quantized(const char* name, DLManagedTensor* values,
                                      const DLTensor& scales,
                                      const DLTensor& zero_points,
                                      int64_t axis) {
  if (api()->version < 9 && values != nullptr && values->deleter) {
    values->deleter(values);
  }
  require_api_version(9, "GraphSetQuantizedAttr");
  check(api()->GraphSetQuantizedAttr(graph_, name, values, &scales,
                                     &zero_points, axis));
}

inline std::string Graph::module_type(const char* name) const {
  char* out = nullptr;
  check(api()->GraphModuleType(graph_, name, &out));
  return take_string(out);
}

inline ShapeEnv Graph::shape_env() const {
  require_api_version(8, "GraphShapeEnv");
  FxShapeEnv* out = nullptr;
  check(api()->GraphShapeEnv(graph_, &out));
  return ShapeEnv(out);
}

inline std::vector<std::string> Graph::symbolic_shape_prop(
    const std::vector<std::string>& shapes,
    const std::vector<std::string>& hints) const {
  require_api_version(8, "GraphSymbolicShapeProp");
  std::vector<const char*> shape_texts, hint_texts;
  for (const std::string& s : shapes) shape_texts.push_back(s.c_str());
  for (const std::string& h : hints) hint_texts.push_back(h.c_str());
  FxArg* out = nullptr;
  check(api()->GraphSymbolicShapeProp(graph_, shape_texts.data(),
                                      shape_texts.size(), hint_texts.data(),
                                      hint_texts.size(), &out));
  Arg guards = Arg::adopt(out);
  std::vector<std::string> texts;
  for (size_t i = 0; i < guards.view().size(); ++i) {
    texts.push_back(guards.view()[i].as_string());
  }
  return texts;
}

inline int Graph::module_training(const char* name) const {
  if (api()->version < 8) return -1;
  return api()->GraphModuleTraining(graph_, name);
}

}  // namespace fxp

#endif  // FX_PLUGIN_API_GRAPH_INLINE_HPP_
