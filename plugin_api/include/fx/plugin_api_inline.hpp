// The inline bodies of the C++ plugin wrapper, declared (and documented) in
// fx/plugin_api.hpp, which includes this file at its end. Include
// fx/plugin_api.hpp, not this file.
//
// Every definition here is inline (or a template), as it was inside the
// class, so the wrapper stays header-only: each plugin compiles its own copy
// and links nothing.
#ifndef FX_PLUGIN_API_INLINE_HPP_
#define FX_PLUGIN_API_INLINE_HPP_

// Makes this header self-contained for tools that parse it alone; when
// plugin_api.hpp is the includer its guard makes this a no-op.
#include "fx/plugin_api.hpp"

namespace fxp {

inline const FxApi*& api() {
  static const FxApi* table = nullptr;
  return table;
}

inline void require_api_version(uint32_t version, const char* entry) {
  uint32_t host = api()->version;
  if (host >= version) return;
  throw Error(FX_UNIMPLEMENTED,
              std::string(entry) + " needs fx plugin API version " +
                  std::to_string(version) +
                  ", but the host's table is version " + std::to_string(host) +
                  " (use a newer fx host)");
}

inline void check(FxStatus* status) {
  if (status == nullptr) return;
  FxStatusCode code = api()->GetStatusCode(status);
  std::string message = api()->GetStatusMessage(status);
  api()->ReleaseStatus(status);
  throw Error(code, message);
}

namespace detail {
// A string the host lent, or "" where it answered NULL: the getters answer
// NULL for a NULL, released or stale handle, and neither std::string nor
// std::string_view may be made from NULL.
inline const char* lent(const char* text) { return text ? text : ""; }
}  // namespace detail

inline std::string take_string(char* text) {
  std::string out = text ? text : "";
  api()->ReleaseString(text);
  return out;
}

// ------------------------------------------------------------------ ArgView

inline FxArgKind ArgView::kind() const { return api()->ArgKind(arg_); }
inline bool ArgView::is_none() const { return kind() == FX_ARG_NONE; }
inline bool ArgView::is_node() const { return kind() == FX_ARG_NODE; }
inline bool ArgView::is_symint() const {
  require_api_version(8, "ArgIsSymInt");
  return api()->ArgIsSymInt(arg_) != 0;
}

inline bool ArgView::as_bool() const {
  int v = 0;
  check(api()->ArgGetBool(arg_, &v));
  return v != 0;
}

inline int64_t ArgView::as_int() const {
  int64_t v = 0;
  check(api()->ArgGetInt(arg_, &v));
  return v;
}

inline double ArgView::as_float() const {
  double v = 0;
  check(api()->ArgGetFloat(arg_, &v));
  return v;
}

inline std::string ArgView::as_string() const {
  const char* v = nullptr;
  check(api()->ArgGetString(arg_, &v));
  return v;
}

inline Node ArgView::node() const {
  FxNode* n = nullptr;
  check(api()->ArgGetNode(arg_, &n));
  return Node(n);
}

inline size_t ArgView::size() const { return api()->ArgSize(arg_); }

inline ArgView ArgView::operator[](size_t i) const {
  return ArgView(api()->ArgItem(arg_, i));
}

inline std::string ArgView::key(size_t i) const {
  const char* k = api()->ArgKey(arg_, i);
  return k ? k : "";
}

inline bool ArgView::operator==(const ArgView& other) const {
  return api()->ArgEqual(arg_, other.arg_) != 0;
}

// ---------------------------------------------------------------------- Arg

template <typename Seq>
inline Arg Arg::sequence(const Seq& items, bool tuple) {
  std::vector<const FxArg*> raw;
  for (const Arg& a : items) raw.push_back(a.get());
  FxArg* out = nullptr;
  check(tuple ? api()->CreateTuple(raw.data(), raw.size(), &out)
              : api()->CreateList(raw.data(), raw.size(), &out));
  return Arg(out);
}

inline Arg Arg::torch_value(FxArgKind kind, const char* name) {
  FxArg* out = nullptr;
  check(api()->CreateTorchValue(kind, name, &out));
  return Arg(out);
}

inline Arg::Arg() { check(api()->CreateNone(&arg_)); }
inline Arg::Arg(std::nullptr_t) : Arg() {}
inline Arg::Arg(bool v) { check(api()->CreateBool(v ? 1 : 0, &arg_)); }
inline Arg::Arg(int v) { check(api()->CreateInt(v, &arg_)); }
inline Arg::Arg(int64_t v) { check(api()->CreateInt(v, &arg_)); }
inline Arg::Arg(double v) { check(api()->CreateFloat(v, &arg_)); }
inline Arg::Arg(const char* v) { check(api()->CreateString(v, &arg_)); }
inline Arg::Arg(const std::string& v) : Arg(v.c_str()) {}
inline Arg::Arg(const Node& node) {
  check(api()->CreateNodeRef(node.get(), &arg_));
}
inline Arg::Arg(ArgView view) { check(api()->CloneArg(view.get(), &arg_)); }
inline Arg::Arg(std::initializer_list<Arg> items)
    : Arg(sequence(items, false)) {}

inline Arg::Arg(const Arg& other) { check(api()->CloneArg(other.arg_, &arg_)); }

inline Arg& Arg::operator=(Arg other) noexcept {
  std::swap(arg_, other.arg_);
  return *this;
}

inline Arg::~Arg() {
  if (arg_) api()->ReleaseArg(arg_);
}

inline Arg Arg::list(const std::vector<Arg>& items) {
  return sequence(items, false);
}

inline Arg Arg::tuple(const std::vector<Arg>& items) {
  return sequence(items, true);
}

inline Arg Arg::dict(const std::vector<std::pair<std::string, Arg>>& items) {
  std::vector<const char*> keys;
  std::vector<const FxArg*> values;
  for (const auto& kv : items) {
    keys.push_back(kv.first.c_str());
    values.push_back(kv.second.get());
  }
  FxArg* out = nullptr;
  check(api()->CreateDict(keys.data(), values.data(), items.size(), &out));
  return Arg(out);
}

inline Arg Arg::slice(const Arg& start, const Arg& stop, const Arg& step) {
  FxArg* out = nullptr;
  check(api()->CreateSlice(start.get(), stop.get(), step.get(), &out));
  return Arg(out);
}

inline Arg Arg::ellipsis() {
  FxArg* out = nullptr;
  check(api()->CreateEllipsis(&out));
  return Arg(out);
}

inline Arg Arg::dtype(const char* name) {
  return torch_value(FX_ARG_DTYPE, name);
}

inline Arg Arg::device(const char* name) {
  return torch_value(FX_ARG_DEVICE, name);
}

inline Arg Arg::symint(const char* expression) {
  require_api_version(8, "CreateSymInt");
  FxArg* out = nullptr;
  check(api()->CreateSymInt(expression, &out));
  return Arg(out);
}

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

// ----------------------------------------------------------------- ShapeEnv

inline ShapeEnv& ShapeEnv::operator=(ShapeEnv&& o) noexcept {
  if (this != &o) {
    if (env_ != nullptr) api()->ReleaseShapeEnv(env_);
    env_ = std::exchange(o.env_, nullptr);
  }
  return *this;
}

inline ShapeEnv::~ShapeEnv() {
  if (env_ != nullptr) api()->ReleaseShapeEnv(env_);
}

inline std::vector<ShapeEnv::Symbol> ShapeEnv::symbols() const {
  std::vector<Symbol> out;
  size_t n = env_ ? api()->ShapeEnvNumSymbols(env_) : 0;
  for (size_t i = 0; i < n; ++i) {
    Symbol s;
    s.name = detail::lent(api()->ShapeEnvSymbolName(env_, i));
    int64_t hint = 0;
    FxStatus* status = api()->ShapeEnvSymbolHint(env_, i, &hint);
    if (status == nullptr) s.hint = hint;
    api()->ReleaseStatus(status);
    Source at;
    const char* placeholder = nullptr;
    int stride = 0;
    status =
        api()->ShapeEnvSymbolSource(env_, i, &placeholder, &at.dim, &stride);
    if (status == nullptr) {
      at.placeholder = placeholder;
      at.stride = stride != 0;
      s.source = std::move(at);
    }
    api()->ReleaseStatus(status);
    out.push_back(std::move(s));
  }
  return out;
}

inline std::vector<ShapeEnv::Guard> ShapeEnv::guards() const {
  std::vector<Guard> out;
  size_t n = env_ ? api()->ShapeEnvNumGuards(env_) : 0;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(
        {api()->ShapeEnvGuard(env_, i), api()->ShapeEnvGuardRelation(env_, i)});
  }
  return out;
}

inline std::string ShapeEnv::format_guards() const {
  std::string out;
  for (const Guard& g : guards()) {
    out += (out.empty() ? " - " : "\n - ") + g.text;
  }
  return out;
}

inline void ShapeEnv::check(const std::vector<const DLTensor*>& inputs) const {
  if (env_ == nullptr) return;
  fxp::check(api()->ShapeEnvCheck(env_, inputs.data(), inputs.size()));
}

// -------------------------------------------------------------------- Value

inline Value::operator Arg() const { return Arg(node_); }

inline Value Value::call_method(const char* method, std::vector<Arg> args,
                                const Kwargs& kwargs) const {
  args.insert(args.begin(), Arg(node_));
  return graph().call_method(method, args, kwargs);
}

inline Value Value::relu() const { return call_method("relu"); }
inline Value Value::sigmoid() const { return call_method("sigmoid"); }
inline Value Value::tanh() const { return call_method("tanh"); }

inline Graph Value::graph() const {
  return Graph(api()->NodeGraph(node_.get()));
}

inline Value call(Graph g, const char* target, const std::vector<Arg>& args,
                  const Kwargs& kwargs) {
  return g.call_function(target, args, kwargs);
}

namespace detail {
inline Value binary(const char* op, const Value& a, const Arg& b) {
  return a.graph().call_function(op, {Arg(a.node()), b});
}
inline Value rbinary(const char* op, const Arg& a, const Value& b) {
  return b.graph().call_function(op, {a, Arg(b.node())});
}
}  // namespace detail

#define FXP_DEFINE_BINARY_OPERATOR(OP, TARGET)               \
  inline Value operator OP(const Value& a, const Value& b) { \
    return detail::binary(TARGET, a, Arg(b.node()));         \
  }                                                          \
  inline Value operator OP(const Value& a, double b) {       \
    return detail::binary(TARGET, a, Arg(b));                \
  }                                                          \
  inline Value operator OP(const Value& a, int b) {          \
    return detail::binary(TARGET, a, Arg(b));                \
  }                                                          \
  inline Value operator OP(double a, const Value& b) {       \
    return detail::rbinary(TARGET, Arg(a), b);               \
  }                                                          \
  inline Value operator OP(int a, const Value& b) {          \
    return detail::rbinary(TARGET, Arg(a), b);               \
  }

FXP_DEFINE_BINARY_OPERATOR(+, "operator.add")
FXP_DEFINE_BINARY_OPERATOR(-, "operator.sub")
FXP_DEFINE_BINARY_OPERATOR(*, "operator.mul")
FXP_DEFINE_BINARY_OPERATOR(/, "operator.truediv")
FXP_DEFINE_BINARY_OPERATOR(>, "operator.gt")
FXP_DEFINE_BINARY_OPERATOR(<, "operator.lt")
FXP_DEFINE_BINARY_OPERATOR(>=, "operator.ge")
FXP_DEFINE_BINARY_OPERATOR(<=, "operator.le")
#undef FXP_DEFINE_BINARY_OPERATOR

inline Value operator-(const Value& a) {
  return a.graph().call_function("operator.neg", {Arg(a.node())});
}

// ------------------------------------------------------------------- Tensor

inline Tensor& Tensor::operator=(Tensor&& o) noexcept {
  if (this != &o) {
    reset();
    t_ = std::exchange(o.t_, nullptr);
  }
  return *this;
}

inline Tensor::~Tensor() { reset(); }

inline void Tensor::reset() {
  if (t_ && t_->deleter) t_->deleter(t_);
  t_ = nullptr;
}

inline std::vector<int64_t> Tensor::shape() const {
  return std::vector<int64_t>(dl().shape, dl().shape + dl().ndim);
}

inline int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int i = 0; i < dl().ndim; ++i) n *= dl().shape[i];
  return n;
}

inline bool Tensor::is_contiguous() const {
  if (dl().strides == nullptr) return true;
  int64_t step = 1;
  for (int i = dl().ndim - 1; i >= 0; --i) {
    if (dl().shape[i] != 1 && dl().strides[i] != step) return false;
    step *= dl().shape[i];
  }
  return true;
}

inline double Tensor::float_at(int64_t i) const {
  return dl().dtype.bits == 64 ? data<double>()[i] : data<float>()[i];
}

namespace detail {
struct OwnedTensorStorage {
  DLManagedTensor managed;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
};
}  // namespace detail

inline Tensor make_tensor(const std::vector<int64_t>& shape, DLDataType dtype) {
  auto* s = new detail::OwnedTensorStorage();
  s->shape = shape;
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  s->bytes.assign(
      static_cast<size_t>(count) * ((dtype.bits + 7) / 8) * dtype.lanes + 1, 0);
  DLTensor& t = s->managed.dl_tensor;
  t.data = s->bytes.data();
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = dtype;
  t.shape = s->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  s->managed.manager_ctx = s;
  s->managed.deleter = [](DLManagedTensor* self) {
    delete static_cast<detail::OwnedTensorStorage*>(self->manager_ctx);
  };
  return Tensor(&s->managed);
}

// ------------------------------------------------------------- RuntimeValue

inline FxValueKind RuntimeValue::kind() const { return api()->ValueKind(v_); }

inline bool RuntimeValue::is_tensor() const {
  return kind() == FX_VALUE_TENSOR;
}

inline std::string RuntimeValue::type_name() const {
  return api()->ValueTypeName(v_);
}

inline FxTensorMeta RuntimeValue::tensor_meta() const {
  FxTensorMeta m;
  FX_TENSOR_META_INIT(m);
  // Version 1 hosts fill the same fields through the version-1 entry.
  check(api()->version >= 2 ? api()->ValueTensorMeta2(v_, &m)
                            : api()->ValueTensorMeta(v_, &m));
  return m;
}

inline Tensor RuntimeValue::to_dlpack() const {
  DLManagedTensor* out = nullptr;
  check(api()->ValueToDLPack(v_, &out));
  return Tensor(out);
}

inline int64_t RuntimeValue::as_int() const {
  int64_t out = 0;
  check(api()->ValueGetInt(v_, &out));
  return out;
}

inline double RuntimeValue::as_float() const {
  double out = 0;
  check(api()->ValueGetFloat(v_, &out));
  return out;
}

inline bool RuntimeValue::as_bool() const {
  int out = 0;
  check(api()->ValueGetBool(v_, &out));
  return out != 0;
}

inline size_t RuntimeValue::size() const { return api()->ValueSize(v_); }

inline RuntimeValue RuntimeValue::item(size_t i) const {
  return RuntimeValue(api()->ValueItem(v_, i));
}

inline TensorStorage RuntimeValue::storage() const {
  require_api_version(12, "ValueStorage");
  TensorStorage out{0, 0};
  check(api()->ValueStorage(v_, &out.id, &out.offset));
  return out;
}

// ------------------------------------------------ running and module access

namespace detail {
// Carries a C++ exception from a callback across the host, which only sees
// the status that stops the run; rethrown once the host has returned.
struct CallbackState {
  std::function<void(Node, RuntimeValue)> fn;
  std::exception_ptr error;
};
inline FxStatus* callback_trampoline(FxNode* node, const FxValue* value,
                                     void* user_data) {
  auto* state = static_cast<CallbackState*>(user_data);
  try {
    state->fn(Node(node), RuntimeValue(value));
    return nullptr;
  } catch (...) {
    state->error = std::current_exception();
    return api()->CreateStatus(FX_INTERNAL, "stopped by the plugin");
  }
}
inline void finish_callback(FxStatus* status, CallbackState& state) {
  if (state.error) {
    if (status) api()->ReleaseStatus(status);
    std::rethrow_exception(state.error);
  }
  check(status);
}
}  // namespace detail

inline void run_graph(Graph& g, const std::vector<const DLTensor*>& inputs,
                      bool meta,
                      std::function<void(Node, RuntimeValue)> on_node) {
  detail::CallbackState state{std::move(on_node), nullptr};
  FxStatus* s =
      api()->GraphRun(g.get(), inputs.data(), inputs.size(), meta ? 1 : 0,
                      &detail::callback_trampoline, &state);
  detail::finish_callback(s, state);
}

inline void evaluate(Graph& g, Node node,
                     std::function<void(RuntimeValue)> on_value) {
  detail::CallbackState state{
      [&on_value](Node, RuntimeValue v) { on_value(v); }, nullptr};
  FxStatus* s = api()->GraphEvaluate(g.get(), node.get(),
                                     &detail::callback_trampoline, &state);
  detail::finish_callback(s, state);
}

inline std::vector<Tensor> example_inputs(const Graph& g) {
  std::vector<Tensor> out;
  size_t n = api()->GraphNumExampleInputs(g.get());
  for (size_t i = 0; i < n; ++i) {
    DLManagedTensor* t = nullptr;
    check(api()->GraphExampleInput(g.get(), i, &t));
    out.emplace_back(t);
  }
  return out;
}

inline std::vector<std::vector<Tensor>> example_batches(const Graph& g) {
  std::vector<std::vector<Tensor>> out;
  if (api()->version < 10) {
    std::vector<Tensor> first = example_inputs(g);
    if (!first.empty()) out.push_back(std::move(first));
    return out;
  }
  const size_t batches = api()->GraphNumExampleBatches(g.get());
  const size_t inputs = api()->GraphNumExampleInputs(g.get());
  for (size_t b = 0; b < batches; ++b) {
    std::vector<Tensor> batch;
    for (size_t i = 0; i < inputs; ++i) {
      DLManagedTensor* t = nullptr;
      check(api()->GraphExampleBatchInput(g.get(), b, i, &t));
      batch.emplace_back(t);
    }
    out.push_back(std::move(batch));
  }
  return out;
}

inline Graph add_subgraph_module(Graph& g, const char* name) {
  FxGraph* out = nullptr;
  check(api()->GraphAddSubgraphModule(g.get(), name, &out));
  return Graph(out);
}

inline void share_attr(Graph& g, Graph& sub, const char* name) {
  check(api()->GraphShareAttr(g.get(), sub.get(), name));
}

inline void share_attr(Graph& g, Graph& sub, const char* name,
                       const char* as_name) {
  if (api()->version < 15 && std::strcmp(name, as_name) == 0) {
    return share_attr(g, sub, name);
  }
  require_api_version(15, "GraphShareAttrAs");
  check(api()->GraphShareAttrAs(g.get(), sub.get(), name, as_name));
}

inline std::vector<ModuleParameter> module_parameters(const Graph& g,
                                                      const char* name) {
  require_api_version(11, "GraphModuleParameters");
  FxArg* out = nullptr;
  check(api()->GraphModuleParameters(g.get(), name, &out));
  const Arg dict = Arg::adopt(out);
  std::vector<ModuleParameter> params;
  for (size_t i = 0; i < dict.view().size(); ++i) {
    ModuleParameter p{dict.view().key(i), {}};
    const ArgView shape = dict.view()[i];
    for (size_t d = 0; d < shape.size(); ++d) {
      p.shape.push_back(shape[d].as_int());
    }
    params.push_back(std::move(p));
  }
  return params;
}

inline std::vector<std::string> operator_schemas(const char* target) {
  require_api_version(12, "OperatorSchemas");
  FxArg* out = nullptr;
  check(api()->OperatorSchemas(target, &out));
  const Arg list = Arg::adopt(out);
  std::vector<std::string> schemas;
  for (size_t i = 0; i < list.view().size(); ++i) {
    schemas.emplace_back(list.view()[i].as_string());
  }
  return schemas;
}

inline void write_output_file(const std::string& path, std::string_view bytes) {
  require_api_version(13, "WriteOutputFile");
  check(api()->WriteOutputFile(path.c_str(), bytes.data(), bytes.size()));
}

inline std::optional<std::vector<SignatureParam>> target_signature(
    const Graph& g, FxOpcode op, const std::string& target) {
  require_api_version(14, "TargetSignature");
  FxArg* out = nullptr;
  FxStatus* status = api()->TargetSignature(g.get(), op, target.c_str(), &out);
  if (status != nullptr && api()->GetStatusCode(status) == FX_NOT_FOUND) {
    api()->ReleaseStatus(status);
    return std::nullopt;
  }
  check(status);
  const Arg list = Arg::adopt(out);
  std::vector<SignatureParam> params;
  for (size_t i = 0; i < list.view().size(); ++i) {
    const ArgView d = list.view()[i];
    SignatureParam p;
    for (size_t k = 0; k < d.size(); ++k) {
      if (d.key(k) == "name") p.name = d[k].as_string();
      if (d.key(k) == "kind") p.kind = d[k].as_string();
      if (d.key(k) == "default") p.default_value = Arg(d[k]);
    }
    params.push_back(std::move(p));
  }
  return params;
}

inline std::optional<std::string> target_return_type(
    const Graph& g, FxOpcode op, const std::string& target) {
  require_api_version(14, "TargetReturnType");
  char* out = nullptr;
  FxStatus* status = api()->TargetReturnType(g.get(), op, target.c_str(), &out);
  if (status != nullptr && api()->GetStatusCode(status) == FX_NOT_FOUND) {
    api()->ReleaseStatus(status);
    return std::nullopt;
  }
  check(status);
  return take_string(out);
}

inline Arg module_config(const Graph& g, const char* name) {
  FxArg* out = nullptr;
  check(api()->GraphModuleConfig(g.get(), name, &out));
  return Arg::adopt(out);
}

inline void add_module(Graph& g, const char* name, const char* type,
                       const Arg& config) {
  check(api()->GraphAddModule(g.get(), name, type, config.get()));
}

inline ArgView dict_get(ArgView dict, std::string_view key) {
  for (size_t i = 0; i < dict.size(); ++i) {
    if (dict.key(i) == key) return dict[i];
  }
  return ArgView();
}

inline Value op(const char* target, const Value& x, std::vector<Arg> rest,
                const Kwargs& kwargs) {
  rest.insert(rest.begin(), Arg(x.node()));
  return x.graph().call_function(target, rest, kwargs);
}

// ------------------------------------------------------------------ Options

inline bool Options::get_bool(const char* name) const {
  int v = 0;
  check(api()->OptionsGetBool(options_, name, &v));
  return v != 0;
}

inline int64_t Options::get_int(const char* name) const {
  int64_t v = 0;
  check(api()->OptionsGetInt(options_, name, &v));
  return v;
}

inline double Options::get_float(const char* name) const {
  double v = 0;
  check(api()->OptionsGetFloat(options_, name, &v));
  return v;
}

inline std::string Options::get_string(const char* name) const {
  const char* v = nullptr;
  check(api()->OptionsGetString(options_, name, &v));
  return v;
}

inline std::vector<std::string> Options::get_list(const char* name) const {
  size_t n = 0;
  check(api()->OptionsGetListSize(options_, name, &n));
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    const char* v = nullptr;
    check(api()->OptionsGetListItem(options_, name, i, &v));
    out.emplace_back(v);
  }
  return out;
}

template <PassFn Fn>
FxStatus* run_pass(const FxApi* table, FxGraph* graph, const FxOptions* options,
                   void* /*user_data*/, int* changed) {
  api() = table;
  try {
    Graph g(graph);
    Options o(options);
    bool did = Fn(g, o);
    if (changed) *changed = did ? 1 : 0;
    return nullptr;
  } catch (const Error& e) {
    return table->CreateStatus(e.code(), e.what());
  } catch (const std::exception& e) {
    return table->CreateStatus(FX_INTERNAL, e.what());
  } catch (...) {
    return table->CreateStatus(FX_INTERNAL, "unknown exception in pass");
  }
}

// ------------------------------------------------------ patterns, rewriting

inline OwnedGraph::OwnedGraph() {
  FxGraph* g = nullptr;
  check(api()->CreateGraph(&g));
  graph_ = g;
}

inline OwnedGraph::~OwnedGraph() {
  if (graph_) api()->ReleaseGraph(graph_);
}

inline Value OwnedGraph::placeholder(const char* name) {
  return view().create_node(FX_OP_PLACEHOLDER, name);
}

inline void OwnedGraph::output(const Arg& value) {
  view().create_node(FX_OP_OUTPUT, "output", {value});
}

inline size_t Match::size() const { return api()->MatchSize(m_); }

inline Node Match::pattern_node(size_t i) const {
  return Node(const_cast<FxNode*>(api()->MatchPatternNode(m_, i)));
}

inline ArgView Match::value(size_t i) const {
  return ArgView(api()->MatchValue(m_, i));
}

inline Node Match::node_for(Node pattern_node) const {
  for (size_t i = 0; i < size(); ++i) {
    if (this->pattern_node(i) == pattern_node && value(i).is_node()) {
      return value(i).node();
    }
  }
  return Node();
}

inline Node Match::anchor() const { return Node(api()->MatchAnchor(m_)); }

inline std::vector<Node> Match::replacements() const {
  std::vector<Node> out;
  for (size_t i = 0, n = api()->MatchNumReplacements(m_); i < n; ++i) {
    out.emplace_back(api()->MatchReplacement(m_, i));
  }
  return out;
}

namespace detail {
template <typename Fn>
struct MatchCallback {
  Fn* fn;
  std::string error;
  static FxStatus* call(const FxMatch* m, void* self) {
    auto* cb = static_cast<MatchCallback*>(self);
    try {
      (*cb->fn)(Match(m));
      return nullptr;
    } catch (const std::exception& e) {
      return api()->CreateStatus(FX_INTERNAL, e.what());
    }
  }
};
template <typename Fn>
struct FilterCallback {
  Fn* fn;
  static int call(const FxMatch* m, void* self) {
    try {
      return (*static_cast<FilterCallback*>(self)->fn)(Match(m)) ? 1 : 0;
    } catch (...) {
      return 0;
    }
  }
};
}  // namespace detail

template <typename Fn>
void match_pattern(const Graph& graph, const OwnedGraph& pattern, Fn on_match,
                   uint32_t flags) {
  detail::MatchCallback<Fn> cb{&on_match, {}};
  check(api()->GraphMatchPattern(graph.get(), pattern.get(), flags,
                                 &detail::MatchCallback<Fn>::call, &cb));
}

inline size_t replace_pattern(Graph& graph, const OwnedGraph& pattern,
                              const OwnedGraph& replacement, uint32_t flags) {
  size_t count = 0;
  check(api()->GraphReplacePattern(graph.get(), pattern.get(),
                                   replacement.get(), flags, nullptr, nullptr,
                                   nullptr, nullptr, &count));
  return count;
}

template <typename Filter>
size_t replace_pattern_with_filters(Graph& graph, const OwnedGraph& pattern,
                                    const OwnedGraph& replacement, Filter keep,
                                    uint32_t flags) {
  detail::FilterCallback<Filter> cb{&keep};
  size_t count = 0;
  check(api()->GraphReplacePattern(
      graph.get(), pattern.get(), replacement.get(), flags,
      &detail::FilterCallback<Filter>::call, &cb, nullptr, nullptr, &count));
  return count;
}

// ------------------------------------------------ PassDef, pass, PluginDef

inline PassDef::PassDef(const char* name, const char* description,
                        FxPassRunFn run, void* user_data) {
  info_.name = name;
  info_.description = description;
  info_.run = run;
  info_.user_data = user_data;
}

inline PassDef& PassDef::option(const char* name, FxOptionType type,
                                const char* default_value,
                                const char* description) {
  options_.push_back(FxOptionSpec{name, type, default_value, description});
  return *this;
}

inline PassDef& PassDef::run_after(std::initializer_list<const char*> names) {
  run_after_.insert(run_after_.end(), names);
  return *this;
}

inline PassDef& PassDef::run_before(std::initializer_list<const char*> names) {
  run_before_.insert(run_before_.end(), names);
  return *this;
}

inline PassDef& PassDef::requires_property(
    std::initializer_list<const char*> names) {
  required_.insert(required_.end(), names);
  return *this;
}

inline PassDef& PassDef::produces(std::initializer_list<const char*> names) {
  produces_.insert(produces_.end(), names);
  return *this;
}

inline PassDef& PassDef::invalidates(std::initializer_list<const char*> names) {
  invalidates_.insert(invalidates_.end(), names);
  return *this;
}

inline PassDef& PassDef::tolerance(double rtol, double atol) {
  info_.tolerance = FxTolerance{rtol, atol};
  return *this;
}

inline PassDef& PassDef::idempotent(bool idempotent) {
  info_.idempotent = idempotent ? 1 : 0;
  return *this;
}

inline const FxPassInfo& PassDef::info() {
  info_.options = options_.data();
  info_.num_options = options_.size();
  info_.run_after = list(run_after_);
  info_.run_before = list(run_before_);
  info_.required = list(required_);
  info_.produces = list(produces_);
  info_.invalidates = list(invalidates_);
  return info_;
}

inline FxNameList PassDef::list(const std::vector<const char*>& names) {
  return FxNameList{names.data(), names.size()};
}

template <PassFn Fn>
PassDef pass(const char* name, const char* description) {
  return PassDef(name, description, &run_pass<Fn>);
}

inline void Registrar::custom_op(const FxCustomOp& op) {
  check(api()->RegisterCustomOp(r_, &op));
}

inline void Registrar::leaf_module_rule(FxLeafModuleFn is_leaf,
                                        void* user_data) {
  check(api()->RegisterLeafModuleRule(r_, is_leaf, user_data));
}

inline void Registrar::decomposition(const char* op,
                                     const OwnedGraph& replacement) {
  require_api_version(4, "RegisterDecomposition");
  check(api()->RegisterDecomposition(r_, op, replacement.get()));
}

inline void Registrar::leaf_op(const char* op) {
  require_api_version(4, "RegisterLeafOp");
  check(api()->RegisterLeafOp(r_, op));
}

template <RegisterFn Fn>
FxStatus* registration(const FxApi* table, FxRegistrar* registrar) {
  api() = table;
  try {
    Registrar r(registrar);
    Fn(r);
    return nullptr;
  } catch (const Error& e) {
    return table->CreateStatus(e.code(), e.what());
  } catch (const std::exception& e) {
    return table->CreateStatus(FX_INTERNAL, e.what());
  } catch (...) {
    return table->CreateStatus(FX_INTERNAL, "unknown exception");
  }
}

inline PluginDef::PluginDef(const char* name, const char* version,
                            std::initializer_list<PassDef> passes,
                            FxRegisterFn register_extensions)
    : passes_(passes) {
  info_.register_extensions = register_extensions;
  for (PassDef& p : passes_) infos_.push_back(p.info());
  info_.name = name;
  info_.version = version;
  info_.api_version = FX_API_VERSION;
  info_.min_api_version = FX_API_VERSION;
  info_.struct_size = sizeof(FxPluginInfo);
  info_.pass_info_size = sizeof(FxPassInfo);
  info_.passes = infos_.data();
  info_.num_passes = infos_.size();
}

// ------------------------------------------------------------- partitioning

inline Support::Support(FxSupport* rule,
                        std::vector<std::shared_ptr<void>> keep)
    : rule_(rule, [](FxSupport* r) { api()->ReleaseSupport(r); }),
      keep_(std::move(keep)) {}

inline Support Support::targets(FxOpcode op,
                                const std::vector<std::string>& names) {
  require_api_version(3, "SupportTargets");
  std::vector<const char*> c;
  for (const std::string& n : names) c.push_back(n.c_str());
  FxSupport* out = nullptr;
  check(api()->SupportTargets(op, c.data(), c.size(), &out));
  return Support(out, {});
}

inline Support Support::functions(const std::vector<std::string>& targets) {
  return Support::targets(FX_OP_CALL_FUNCTION, targets);
}
inline Support Support::methods(const std::vector<std::string>& names) {
  return targets(FX_OP_CALL_METHOD, names);
}
inline Support Support::module_types(const std::vector<std::string>& types) {
  return targets(FX_OP_CALL_MODULE, types);
}

inline Support Support::tensor_meta(FxTensorRule rule) {
  require_api_version(3, "SupportTensorMeta");
  rule.struct_size = sizeof(FxTensorRule);
  FxSupport* out = nullptr;
  check(api()->SupportTensorMeta(&rule, &out));
  return Support(out, {});
}

inline Support Support::opcodes(const std::vector<FxOpcode>& ops) {
  require_api_version(3, "SupportOpcodes");
  FxSupport* out = nullptr;
  check(api()->SupportOpcodes(ops.data(), ops.size(), &out));
  return Support(out, {});
}

inline Support Support::node_names(const std::vector<std::string>& names) {
  require_api_version(3, "SupportNodeNames");
  std::vector<const char*> c;
  for (const std::string& n : names) c.push_back(n.c_str());
  FxSupport* out = nullptr;
  check(api()->SupportNodeNames(c.data(), c.size(), &out));
  return Support(out, {});
}

namespace detail {
inline int call_support_predicate(const FxNode* node, void* data) {
  try {
    auto& fn = *static_cast<std::function<bool(Node)>*>(data);
    return fn(Node(const_cast<FxNode*>(node))) ? 1 : 0;
  } catch (...) {
    return -1;
  }
}
}  // namespace detail

inline Support Support::predicate(std::function<bool(Node)> fn) {
  require_api_version(3, "SupportCallback");
  auto held = std::make_shared<std::function<bool(Node)>>(std::move(fn));
  FxSupport* out = nullptr;
  check(api()->SupportCallback(&detail::call_support_predicate, held.get(),
                               &out));
  return Support(out, {held});
}

inline Support Support::combined(const std::vector<Support>& rules, bool all) {
  require_api_version(3, all ? "SupportAllOf" : "SupportAnyOf");
  std::vector<const FxSupport*> c;
  std::vector<std::shared_ptr<void>> keep;
  for (const Support& r : rules) {
    c.push_back(r.get());
    keep.insert(keep.end(), r.keep_.begin(), r.keep_.end());
  }
  FxSupport* out = nullptr;
  check(all ? api()->SupportAllOf(c.data(), c.size(), &out)
            : api()->SupportAnyOf(c.data(), c.size(), &out));
  return Support(out, std::move(keep));
}

inline Support Support::all_of(const std::vector<Support>& rules) {
  return combined(rules, true);
}
inline Support Support::any_of(const std::vector<Support>& rules) {
  return combined(rules, false);
}

inline Support Support::operator!() const {
  require_api_version(3, "SupportNot");
  FxSupport* out = nullptr;
  check(api()->SupportNot(get(), &out));
  return Support(out, keep_);
}

inline bool Support::is_node_supported(Node node) const {
  require_api_version(3, "SupportIsNodeSupported");
  int out = 0;
  check(api()->SupportIsNodeSupported(get(), node.get(), &out));
  return out != 0;
}

inline Partitions::Partitions(FxPartitions* p)
    : partitions_(p, [](FxPartitions* q) { api()->ReleasePartitions(q); }) {}

inline size_t Partitions::size() const { return api()->PartitionsCount(get()); }

inline std::vector<Node> Partitions::operator[](size_t index) const {
  std::vector<Node> out;
  size_t n = api()->PartitionSize(get(), index);
  for (size_t j = 0; j < n; ++j) {
    out.emplace_back(api()->PartitionNode(get(), index, j));
  }
  return out;
}

inline Partitions propose_partitions(const Graph& graph, const Support& rule,
                                     const PartitionOptions& options) {
  require_api_version(3, "GraphProposePartitions");
  FxPartitionOptions o{};
  o.struct_size = sizeof(o);
  o.allows_single_node_partition = options.allows_single_node_partition;
  o.min_partition_size = options.min_partition_size;
  FxPartitions* out = nullptr;
  check(api()->GraphProposePartitions(graph.get(), rule.get(), &o, &out));
  return Partitions(out);
}

inline void fuse_partitions(Graph& graph, const Partitions& partitions,
                            const char* prefix) {
  require_api_version(3, "GraphFusePartitions");
  check(api()->GraphFusePartitions(graph.get(), partitions.get(), prefix));
}

inline void delegate_partitions(Graph& graph, const Partitions& partitions,
                                const char* backend, const char* prefix) {
  require_api_version(5, "GraphDelegatePartitions");
  check(api()->GraphDelegatePartitions(graph.get(), partitions.get(), backend,
                                       prefix));
}

}  // namespace fxp

#endif  // FX_PLUGIN_API_INLINE_HPP_
