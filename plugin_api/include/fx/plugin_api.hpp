// Header-only C++ wrapper over the fx plugin C API (plugin_api.h).
//
// For pass authors writing in C++: RAII for owned handles, iterators over
// nodes, exceptions instead of status objects, and Values whose operators
// record nodes so a rewrite reads like the code it produces:
//
//   bool relu_to_mul(fxp::Graph& g, const fxp::Options&) {
//     bool changed = false;
//     for (fxp::Node n : g.find_nodes(FX_OP_CALL_FUNCTION, "torch.relu")) {
//       auto guard = g.inserting_before(n);
//       fxp::Value x = n.arg(0).node();
//       fxp::Value y = (x > 0) * x;
//       n.replace_all_uses_with(y.node());
//       g.erase_node(n);
//       changed = true;
//     }
//     return changed;
//   }
//   FXP_PLUGIN("my_passes", "1.0",
//              fxp::pass<relu_to_mul>("relu_to_mul", "relu(x) -> (x > 0) *
//              x"));
//
// Exceptions stay on the plugin's side: the trampoline that fxp::pass<>
// installs turns them into FxStatus objects before returning to the host. The
// wrapper links nothing of fx_core; it only calls through the FxApi table the
// host hands to each pass.
#ifndef FX_PLUGIN_API_HPP_
#define FX_PLUGIN_API_HPP_

#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx/plugin_api.h"

namespace fxp {

// The host's table for the pass that is running (set by the trampoline).
inline const FxApi*& api() {
  static const FxApi* table = nullptr;
  return table;
}

// A failed call, carrying the host's status code and message.
class Error : public std::runtime_error {
 public:
  Error(FxStatusCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  FxStatusCode code() const { return code_; }

 private:
  FxStatusCode code_;
};

// Throws Error for a non-NULL status (and releases it).
inline void check(FxStatus* status) {
  if (status == nullptr) return;
  FxStatusCode code = api()->GetStatusCode(status);
  std::string message = api()->GetStatusMessage(status);
  api()->ReleaseStatus(status);
  throw Error(code, message);
}

// A string the host allocated, copied and released.
inline std::string take_string(char* text) {
  std::string out = text ? text : "";
  api()->ReleaseString(text);
  return out;
}

class Node;
class Arg;

// A borrowed argument (from a node's args, kwargs or meta, or an Arg).
class ArgView {
 public:
  ArgView() = default;
  explicit ArgView(const FxArg* arg) : arg_(arg) {}
  const FxArg* get() const { return arg_; }
  explicit operator bool() const { return arg_ != nullptr; }

  FxArgKind kind() const { return api()->ArgKind(arg_); }
  bool is_none() const { return kind() == FX_ARG_NONE; }
  bool is_node() const { return kind() == FX_ARG_NODE; }
  bool as_bool() const {
    int v = 0;
    check(api()->ArgGetBool(arg_, &v));
    return v != 0;
  }
  int64_t as_int() const {
    int64_t v = 0;
    check(api()->ArgGetInt(arg_, &v));
    return v;
  }
  double as_float() const {
    double v = 0;
    check(api()->ArgGetFloat(arg_, &v));
    return v;
  }
  std::string as_string() const {
    const char* v = nullptr;
    check(api()->ArgGetString(arg_, &v));
    return v;
  }
  inline Node node() const;
  size_t size() const { return api()->ArgSize(arg_); }
  ArgView operator[](size_t i) const {
    return ArgView(api()->ArgItem(arg_, i));
  }
  std::string key(size_t i) const {
    const char* k = api()->ArgKey(arg_, i);
    return k ? k : "";
  }
  bool operator==(const ArgView& other) const {
    return api()->ArgEqual(arg_, other.arg_) != 0;
  }

 private:
  const FxArg* arg_ = nullptr;
};

// An owned argument value.
class Arg {
 public:
  Arg() { check(api()->CreateNone(&arg_)); }
  Arg(std::nullptr_t) : Arg() {}                                    // NOLINT
  Arg(bool v) { check(api()->CreateBool(v ? 1 : 0, &arg_)); }       // NOLINT
  Arg(int v) { check(api()->CreateInt(v, &arg_)); }                 // NOLINT
  Arg(int64_t v) { check(api()->CreateInt(v, &arg_)); }             // NOLINT
  Arg(double v) { check(api()->CreateFloat(v, &arg_)); }            // NOLINT
  Arg(const char* v) { check(api()->CreateString(v, &arg_)); }      // NOLINT
  Arg(const std::string& v) : Arg(v.c_str()) {}                     // NOLINT
  inline Arg(const Node& node);                                     // NOLINT
  Arg(ArgView view) { check(api()->CloneArg(view.get(), &arg_)); }  // NOLINT
  // A Python list: Arg{a, b}.
  Arg(std::initializer_list<Arg> items) : Arg(sequence(items, false)) {}

  static Arg list(const std::vector<Arg>& items) {
    return sequence(items, false);
  }
  static Arg tuple(const std::vector<Arg>& items) {
    return sequence(items, true);
  }
  static Arg dict(const std::vector<std::pair<std::string, Arg>>& items) {
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
  static Arg slice(const Arg& start, const Arg& stop, const Arg& step) {
    FxArg* out = nullptr;
    check(api()->CreateSlice(start.get(), stop.get(), step.get(), &out));
    return Arg(out);
  }
  static Arg ellipsis() {
    FxArg* out = nullptr;
    check(api()->CreateEllipsis(&out));
    return Arg(out);
  }
  static Arg dtype(const char* name) { return torch_value(FX_ARG_DTYPE, name); }
  static Arg device(const char* name) {
    return torch_value(FX_ARG_DEVICE, name);
  }

  // Takes ownership of an argument the host returned.
  static Arg adopt(FxArg* owned) { return Arg(owned); }

  Arg(const Arg& other) { check(api()->CloneArg(other.arg_, &arg_)); }
  Arg(Arg&& other) noexcept : arg_(std::exchange(other.arg_, nullptr)) {}
  Arg& operator=(Arg other) noexcept {
    std::swap(arg_, other.arg_);
    return *this;
  }
  ~Arg() {
    if (arg_) api()->ReleaseArg(arg_);
  }

  const FxArg* get() const { return arg_; }
  ArgView view() const { return ArgView(arg_); }
  operator ArgView() const { return view(); }  // NOLINT

 private:
  explicit Arg(FxArg* owned) : arg_(owned) {}
  template <typename Seq>
  static Arg sequence(const Seq& items, bool tuple) {
    std::vector<const FxArg*> raw;
    for (const Arg& a : items) raw.push_back(a.get());
    FxArg* out = nullptr;
    check(tuple ? api()->CreateTuple(raw.data(), raw.size(), &out)
                : api()->CreateList(raw.data(), raw.size(), &out));
    return Arg(out);
  }
  static Arg torch_value(FxArgKind kind, const char* name) {
    FxArg* out = nullptr;
    check(api()->CreateTorchValue(kind, name, &out));
    return Arg(out);
  }
  FxArg* arg_ = nullptr;
};

using Kwargs = std::vector<std::pair<std::string, Arg>>;

// A node handle (borrowed from the host; cheap to copy).
class Node {
 public:
  Node() = default;
  Node(FxNode* node) : node_(node) {}  // NOLINT
  FxNode* get() const { return node_; }
  explicit operator bool() const { return node_ != nullptr; }
  bool operator==(const Node& o) const { return node_ == o.node_; }
  bool operator!=(const Node& o) const { return node_ != o.node_; }

  FxOpcode op() const { return api()->NodeOp(node_); }
  std::string_view name() const { return api()->NodeName(node_); }
  std::string_view target() const { return api()->NodeTarget(node_); }
  // The target as a C string (borrowed, valid while the node is).
  const char* target_cstr() const { return api()->NodeTarget(node_); }
  std::string_view type() const { return api()->NodeType(node_); }
  size_t num_args() const { return api()->NodeNumArgs(node_); }
  ArgView arg(size_t i) const { return ArgView(api()->NodeArg(node_, i)); }
  std::vector<ArgView> args() const {
    std::vector<ArgView> out;
    for (size_t i = 0; i < num_args(); ++i) out.push_back(arg(i));
    return out;
  }
  size_t num_kwargs() const { return api()->NodeNumKwargs(node_); }
  std::string kwarg_key(size_t i) const {
    return api()->NodeKwargKey(node_, i);
  }
  ArgView kwarg_value(size_t i) const {
    return ArgView(api()->NodeKwargValue(node_, i));
  }
  // The kwarg named `key`; an empty view when absent.
  ArgView kwarg(const char* key) const {
    return ArgView(api()->NodeFindKwarg(node_, key));
  }
  std::vector<Node> users() const {
    std::vector<FxNode*> handles(api()->NodeNumUsers(node_));
    handles.resize(api()->NodeUsers(node_, handles.data(), handles.size()));
    return std::vector<Node>(handles.begin(), handles.end());
  }
  size_t num_users() const { return api()->NodeNumUsers(node_); }
  std::vector<Node> all_input_nodes() const {
    std::vector<Node> out;
    size_t n = api()->NodeNumInputs(node_);
    for (size_t i = 0; i < n; ++i) out.emplace_back(api()->NodeInput(node_, i));
    return out;
  }
  Node next() const { return api()->NodeNext(node_); }
  Node prev() const { return api()->NodePrev(node_); }
  bool is_impure() const { return api()->NodeIsImpure(node_) != 0; }
  ArgView meta(const char* key) const {
    return ArgView(api()->NodeGetMeta(node_, key));
  }
  std::string format() const {
    char* out = nullptr;
    check(api()->NodeFormat(node_, &out));
    return take_string(out);
  }

  void set_args(const std::vector<Arg>& args) {
    std::vector<const FxArg*> raw;
    for (const Arg& a : args) raw.push_back(a.get());
    check(api()->NodeSetArgs(node_, raw.data(), raw.size()));
  }
  void update_arg(size_t i, const Arg& value) {
    check(api()->NodeSetArg(node_, i, value.get()));
  }
  void update_kwarg(const char* key, const Arg& value) {
    check(api()->NodeSetKwarg(node_, key, value.get()));
  }
  void set_target(const char* target) {
    check(api()->NodeSetTarget(node_, target));
  }
  void set_meta(const char* key, const Arg& value) {
    check(api()->NodeSetMeta(node_, key, value.get()));
  }
  size_t replace_all_uses_with(Node replacement) {
    size_t changed = 0;
    check(api()->NodeReplaceAllUsesWith(node_, replacement.node_, &changed));
    return changed;
  }
  void replace_input_with(Node old_input, Node new_input) {
    check(api()->NodeReplaceInputWith(node_, old_input.node_, new_input.node_));
  }
  void prepend(Node x) { check(api()->NodePrepend(node_, x.node_)); }
  void append(Node x) { check(api()->NodeAppend(node_, x.node_)); }

 private:
  FxNode* node_ = nullptr;
};

inline Node ArgView::node() const {
  FxNode* n = nullptr;
  check(api()->ArgGetNode(arg_, &n));
  return Node(n);
}

inline Arg::Arg(const Node& node) {
  check(api()->CreateNodeRef(node.get(), &arg_));
}

// Restores the graph's previous insertion point when destroyed.
class InsertGuard {
 public:
  InsertGuard(FxGraph* graph, FxNode* anchor, int after) : graph_(graph) {
    api()->GraphGetInsertPoint(graph, &saved_anchor_, &saved_after_);
    check(api()->GraphSetInsertPoint(graph, anchor, after));
  }
  InsertGuard(InsertGuard&& o) noexcept
      : graph_(std::exchange(o.graph_, nullptr)),
        saved_anchor_(o.saved_anchor_),
        saved_after_(o.saved_after_) {}
  InsertGuard(const InsertGuard&) = delete;
  InsertGuard& operator=(const InsertGuard&) = delete;
  ~InsertGuard() {
    if (graph_) {
      FxStatus* s =
          api()->GraphSetInsertPoint(graph_, saved_anchor_, saved_after_);
      if (s) api()->ReleaseStatus(s);
    }
  }

 private:
  FxGraph* graph_;
  FxNode* saved_anchor_ = nullptr;
  int saved_after_ = 0;
};

// A borrowed graph.
class Graph {
 public:
  explicit Graph(FxGraph* graph) : graph_(graph) {}
  FxGraph* get() const { return graph_; }

  // Iteration reads the next node before yielding the current one, so the
  // current node may be erased or moved.
  class iterator {
   public:
    explicit iterator(FxNode* n)
        : cur_(n), next_(n ? api()->NodeNext(n) : nullptr) {}
    Node operator*() const { return Node(cur_); }
    iterator& operator++() {
      cur_ = next_;
      next_ = cur_ ? api()->NodeNext(cur_) : nullptr;
      return *this;
    }
    bool operator!=(const iterator& o) const { return cur_ != o.cur_; }
    bool operator==(const iterator& o) const { return cur_ == o.cur_; }

   private:
    FxNode* cur_;
    FxNode* next_;
  };
  iterator begin() const { return iterator(api()->GraphFirstNode(graph_)); }
  iterator end() const { return iterator(nullptr); }
  std::vector<Node> nodes() const {
    std::vector<Node> out;
    for (Node n : *this) out.push_back(n);
    return out;
  }

  size_t size() const { return api()->GraphNumNodes(graph_); }
  Node output_node() const { return api()->GraphOutputNode(graph_); }

  std::vector<Node> find_nodes(FxOpcode op, const char* target) const {
    size_t count = 0;
    check(api()->GraphFindNodes(graph_, op, target, nullptr, 0, &count));
    std::vector<FxNode*> raw(count);
    check(api()->GraphFindNodes(graph_, op, target, raw.data(), raw.size(),
                                &count));
    return std::vector<Node>(raw.begin(), raw.begin() + count);
  }

  Node create_node(FxOpcode op, const char* target,
                   const std::vector<Arg>& args = {}, const Kwargs& kwargs = {},
                   const char* name = nullptr, const char* type = nullptr) {
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
  Node call_function(const char* target, const std::vector<Arg>& args = {},
                     const Kwargs& kwargs = {}) {
    return create_node(FX_OP_CALL_FUNCTION, target, args, kwargs);
  }
  // Graph.node_copy: a copy of `n` at the insertion point.
  Node node_copy(Node n) {
    FxNode* out = nullptr;
    check(api()->GraphNodeCopy(graph_, n.get(), &out));
    return Node(out);
  }
  // A node whose args are borrowed views (another node's args()): nothing
  // is copied on the plugin's side.
  Node create_node_borrowing(FxOpcode op, const char* target,
                             const std::vector<ArgView>& args) {
    std::vector<const FxArg*> raw;
    raw.reserve(args.size());
    for (const ArgView& a : args) raw.push_back(a.get());
    FxNode* out = nullptr;
    check(api()->GraphCreateNode(graph_, op, target, raw.data(), raw.size(),
                                 nullptr, nullptr, 0, nullptr, nullptr, &out));
    return Node(out);
  }

  Node call_method(const char* method, const std::vector<Arg>& args = {},
                   const Kwargs& kwargs = {}) {
    return create_node(FX_OP_CALL_METHOD, method, args, kwargs);
  }
  Node call_module(const char* target, const std::vector<Arg>& args = {},
                   const Kwargs& kwargs = {}) {
    return create_node(FX_OP_CALL_MODULE, target, args, kwargs);
  }
  Node get_attr(const char* target) {
    return create_node(FX_OP_GET_ATTR, target);
  }

  [[nodiscard]] InsertGuard inserting_before(Node n) {
    return InsertGuard(graph_, n.get(), 0);
  }
  [[nodiscard]] InsertGuard inserting_after(Node n) {
    return InsertGuard(graph_, n.get(), 1);
  }
  void erase_node(Node n) { check(api()->GraphEraseNode(graph_, n.get())); }
  bool eliminate_dead_code() {
    int changed = 0;
    check(api()->GraphEliminateDeadCode(graph_, &changed));
    return changed != 0;
  }
  void lint() const { check(api()->GraphLint(graph_)); }
  std::string str() const {
    char* out = nullptr;
    check(api()->GraphToText(graph_, &out));
    return take_string(out);
  }
  std::string python_code() const {
    char* out = nullptr;
    check(api()->GraphPythonCode(graph_, &out));
    return take_string(out);
  }
  bool has_attr(const char* name) const {
    return api()->GraphHasAttr(graph_, name) != 0;
  }
  // A DLPack view of the attribute; the caller calls its deleter.
  DLManagedTensor* get_attr_tensor(const char* name) const {
    DLManagedTensor* out = nullptr;
    check(api()->GraphGetAttr(graph_, name, &out));
    return out;
  }
  // Adds or replaces a tensor attribute; ownership moves to the host.
  void set_attr_tensor(const char* name, DLManagedTensor* tensor) {
    check(api()->GraphSetAttr(graph_, name, tensor));
  }
  std::string module_type(const char* name) const {
    char* out = nullptr;
    check(api()->GraphModuleType(graph_, name, &out));
    return take_string(out);
  }

 private:
  FxGraph* graph_;
};

// A value in a graph being built: operators and methods record nodes at the
// graph's insertion point (torch.fx's Proxy used for retracing).
class Value {
 public:
  Value(Node node) : node_(node) {}  // NOLINT
  Node node() const { return node_; }
  operator Arg() const { return Arg(node_); }  // NOLINT

  Value call_method(const char* method, std::vector<Arg> args = {},
                    const Kwargs& kwargs = {}) const {
    args.insert(args.begin(), Arg(node_));
    return graph().call_method(method, args, kwargs);
  }
  Value relu() const { return call_method("relu"); }
  Value sigmoid() const { return call_method("sigmoid"); }
  Value tanh() const { return call_method("tanh"); }

  Graph graph() const { return Graph(api()->NodeGraph(node_.get())); }

 private:
  Node node_;
};

// Records `target(args..., **kwargs)` in the graph of the first Value.
inline Value call(Graph g, const char* target, const std::vector<Arg>& args,
                  const Kwargs& kwargs = {}) {
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

#define FXP_BINARY_OPERATOR(OP, TARGET)                      \
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

FXP_BINARY_OPERATOR(+, "operator.add")
FXP_BINARY_OPERATOR(-, "operator.sub")
FXP_BINARY_OPERATOR(*, "operator.mul")
FXP_BINARY_OPERATOR(/, "operator.truediv")
FXP_BINARY_OPERATOR(>, "operator.gt")
FXP_BINARY_OPERATOR(<, "operator.lt")
FXP_BINARY_OPERATOR(>=, "operator.ge")
FXP_BINARY_OPERATOR(<=, "operator.le")
#undef FXP_BINARY_OPERATOR

inline Value operator-(const Value& a) {
  return a.graph().call_function("operator.neg", {Arg(a.node())});
}

// ------------------------------------------------------------------------
// Tensors and runtime values (GraphRun, GraphEvaluate, attributes).

// An owned DLManagedTensor: calls its deleter when destroyed. Views the host
// hands out (GraphGetAttr, ValueToDLPack, GraphExampleInput) and tensors made
// by make_tensor() both fit; release() gives ownership away (to
// GraphSetAttr, a kernel's result).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(DLManagedTensor* owned) : t_(owned) {}
  Tensor(Tensor&& o) noexcept : t_(std::exchange(o.t_, nullptr)) {}
  Tensor& operator=(Tensor&& o) noexcept {
    if (this != &o) {
      reset();
      t_ = std::exchange(o.t_, nullptr);
    }
    return *this;
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor() { reset(); }

  explicit operator bool() const { return t_ != nullptr; }
  DLManagedTensor* get() const { return t_; }
  DLManagedTensor* release() { return std::exchange(t_, nullptr); }
  void reset() {
    if (t_ && t_->deleter) t_->deleter(t_);
    t_ = nullptr;
  }
  const DLTensor& dl() const { return t_->dl_tensor; }
  int ndim() const { return t_->dl_tensor.ndim; }
  std::vector<int64_t> shape() const {
    return std::vector<int64_t>(dl().shape, dl().shape + dl().ndim);
  }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < dl().ndim; ++i) n *= dl().shape[i];
    return n;
  }
  bool is_contiguous() const {
    if (dl().strides == nullptr) return true;
    int64_t step = 1;
    for (int i = dl().ndim - 1; i >= 0; --i) {
      if (dl().shape[i] != 1 && dl().strides[i] != step) return false;
      step *= dl().shape[i];
    }
    return true;
  }
  // The element data (contiguous tensors; byte_offset applied).
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(static_cast<const char*>(dl().data) +
                                      dl().byte_offset);
  }
  template <typename T>
  T* mutable_data() {
    return reinterpret_cast<T*>(static_cast<char*>(t_->dl_tensor.data) +
                                t_->dl_tensor.byte_offset);
  }
  // Element i of a contiguous float32 / float64 tensor as a double.
  double float_at(int64_t i) const {
    return dl().dtype.bits == 64 ? data<double>()[i] : data<float>()[i];
  }

 private:
  DLManagedTensor* t_ = nullptr;
};

namespace detail {
struct OwnedTensorStorage {
  DLManagedTensor managed;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
};
}  // namespace detail

// A new zero-filled, contiguous CPU tensor owned by the plugin.
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
inline constexpr DLDataType kFloat32{kDLFloat, 32, 1};
inline constexpr DLDataType kFloat64{kDLFloat, 64, 1};
inline constexpr DLDataType kInt8{kDLInt, 8, 1};
inline constexpr DLDataType kInt64{kDLInt, 64, 1};

// A borrowed runtime value (what a node computed), valid during the callback
// that receives it.
class RuntimeValue {
 public:
  explicit RuntimeValue(const FxValue* v) : v_(v) {}
  const FxValue* get() const { return v_; }
  FxValueKind kind() const { return api()->ValueKind(v_); }
  bool is_tensor() const { return kind() == FX_VALUE_TENSOR; }
  // The Python type name ShapeProp records as meta['type'].
  std::string type_name() const { return api()->ValueTypeName(v_); }
  FxTensorMeta tensor_meta() const {
    FxTensorMeta m{};
    check(api()->ValueTensorMeta(v_, &m));
    return m;
  }
  // A read-only view of the data (fails for meta tensors).
  Tensor to_dlpack() const {
    DLManagedTensor* out = nullptr;
    check(api()->ValueToDLPack(v_, &out));
    return Tensor(out);
  }
  int64_t as_int() const {
    int64_t out = 0;
    check(api()->ValueGetInt(v_, &out));
    return out;
  }
  double as_float() const {
    double out = 0;
    check(api()->ValueGetFloat(v_, &out));
    return out;
  }
  bool as_bool() const {
    int out = 0;
    check(api()->ValueGetBool(v_, &out));
    return out != 0;
  }
  size_t size() const { return api()->ValueSize(v_); }
  RuntimeValue item(size_t i) const {
    return RuntimeValue(api()->ValueItem(v_, i));
  }

 private:
  const FxValue* v_;
};

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

// Runs the graph's module (GraphRun) on `inputs`, one per placeholder;
// `on_node` sees every node's value in graph order. With `meta` the inputs'
// data is ignored: shapes and dtypes propagate, nothing is computed.
inline void run_graph(Graph& g, const std::vector<const DLTensor*>& inputs,
                      bool meta,
                      std::function<void(Node, RuntimeValue)> on_node) {
  detail::CallbackState state{std::move(on_node), nullptr};
  FxStatus* s =
      api()->GraphRun(g.get(), inputs.data(), inputs.size(), meta ? 1 : 0,
                      &detail::callback_trampoline, &state);
  detail::finish_callback(s, state);
}

// Computes `node` from attributes and literals alone (GraphEvaluate).
inline void evaluate(Graph& g, Node node,
                     std::function<void(RuntimeValue)> on_value) {
  detail::CallbackState state{
      [&on_value](Node, RuntimeValue v) { on_value(v); }, nullptr};
  FxStatus* s = api()->GraphEvaluate(g.get(), node.get(),
                                     &detail::callback_trampoline, &state);
  detail::finish_callback(s, state);
}

// The example inputs the host holds for the graph (GraphExampleInput).
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

// A new child GraphModule at `name` with an empty graph to fill.
inline Graph add_subgraph_module(Graph& g, const char* name) {
  FxGraph* out = nullptr;
  check(api()->GraphAddSubgraphModule(g.get(), name, &out));
  return Graph(out);
}

// Shares the attribute or submodule `name` of g's module with `sub`'s.
inline void share_attr(Graph& g, Graph& sub, const char* name) {
  check(api()->GraphShareAttr(g.get(), sub.get(), name));
}

// The module's constructor keyword arguments ({"eps": 1e-05, ...}).
inline Arg module_config(const Graph& g, const char* name) {
  FxArg* out = nullptr;
  check(api()->GraphModuleConfig(g.get(), name, &out));
  return Arg::adopt(out);
}

// Adds or replaces the submodule `name` with a new `type` module built from
// `config` (a dict of constructor keyword arguments).
inline void add_module(Graph& g, const char* name, const char* type,
                       const Arg& config) {
  check(api()->GraphAddModule(g.get(), name, type, config.get()));
}

// The value of `key` in a dict argument; an empty view when absent.
inline ArgView dict_get(ArgView dict, std::string_view key) {
  for (size_t i = 0; i < dict.size(); ++i) {
    if (dict.key(i) == key) return dict[i];
  }
  return ArgView();
}

// Records `target(x, rest..., **kwargs)` in x's graph, for rewrites:
// fxp::op("torch.erf", x), fxp::op("torch.clamp", x, {0, 6}).
inline Value op(const char* target, const Value& x, std::vector<Arg> rest = {},
                const Kwargs& kwargs = {}) {
  rest.insert(rest.begin(), Arg(x.node()));
  return x.graph().call_function(target, rest, kwargs);
}

// The running pass's options.
class Options {
 public:
  explicit Options(const FxOptions* options) : options_(options) {}
  bool get_bool(const char* name) const {
    int v = 0;
    check(api()->OptionsGetBool(options_, name, &v));
    return v != 0;
  }
  int64_t get_int(const char* name) const {
    int64_t v = 0;
    check(api()->OptionsGetInt(options_, name, &v));
    return v;
  }
  double get_float(const char* name) const {
    double v = 0;
    check(api()->OptionsGetFloat(options_, name, &v));
    return v;
  }
  std::string get_string(const char* name) const {
    const char* v = nullptr;
    check(api()->OptionsGetString(options_, name, &v));
    return v;
  }
  std::vector<std::string> get_list(const char* name) const {
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

 private:
  const FxOptions* options_;
};

// A pass body: returns whether it changed the graph; throws to fail.
using PassFn = bool (*)(Graph& graph, const Options& options);

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

// A standalone graph the plugin owns (a pattern or a replacement for
// replace_pattern). Build it with placeholder(), Values and output():
//
//   fxp::OwnedGraph pattern;
//   fxp::Value x = pattern.placeholder("x");
//   pattern.output(x.call_method("relu"));
class OwnedGraph {
 public:
  OwnedGraph() {
    FxGraph* g = nullptr;
    check(api()->CreateGraph(&g));
    graph_ = g;
  }
  ~OwnedGraph() {
    if (graph_) api()->ReleaseGraph(graph_);
  }
  OwnedGraph(OwnedGraph&& o) noexcept : graph_(std::exchange(o.graph_, nullptr)) {}
  OwnedGraph(const OwnedGraph&) = delete;
  OwnedGraph& operator=(const OwnedGraph&) = delete;

  Graph view() const { return Graph(graph_); }
  FxGraph* get() const { return graph_; }
  Value placeholder(const char* name) {
    return view().create_node(FX_OP_PLACEHOLDER, name);
  }
  void output(const Arg& value) {
    view().create_node(FX_OP_OUTPUT, "output", {value});
  }

 private:
  FxGraph* graph_ = nullptr;
};

// A match or replacement reported by match_pattern / replace_pattern.
class Match {
 public:
  explicit Match(const FxMatch* m) : m_(m) {}
  size_t size() const { return api()->MatchSize(m_); }
  Node pattern_node(size_t i) const {
    return Node(const_cast<FxNode*>(api()->MatchPatternNode(m_, i)));
  }
  ArgView value(size_t i) const { return ArgView(api()->MatchValue(m_, i)); }
  // The graph node a pattern node matched (empty Node if none).
  Node node_for(Node pattern_node) const {
    for (size_t i = 0; i < size(); ++i) {
      if (this->pattern_node(i) == pattern_node && value(i).is_node()) {
        return value(i).node();
      }
    }
    return Node();
  }
  Node anchor() const { return Node(api()->MatchAnchor(m_)); }
  std::vector<Node> replacements() const {
    std::vector<Node> out;
    for (size_t i = 0, n = api()->MatchNumReplacements(m_); i < n; ++i) {
      out.emplace_back(api()->MatchReplacement(m_, i));
    }
    return out;
  }

 private:
  const FxMatch* m_;
};

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

// Calls on_match(Match) for every non-overlapping match, in graph order.
template <typename Fn>
void match_pattern(const Graph& graph, const OwnedGraph& pattern, Fn on_match,
                   uint32_t flags = 0) {
  detail::MatchCallback<Fn> cb{&on_match, {}};
  check(api()->GraphMatchPattern(graph.get(), pattern.get(), flags,
                                 &detail::MatchCallback<Fn>::call, &cb));
}

// torch.fx's replace_pattern; returns the replacements made.
inline size_t replace_pattern(Graph& graph, const OwnedGraph& pattern,
                              const OwnedGraph& replacement,
                              uint32_t flags = 0) {
  size_t count = 0;
  check(api()->GraphReplacePattern(graph.get(), pattern.get(),
                                   replacement.get(), flags, nullptr, nullptr,
                                   nullptr, nullptr, &count));
  return count;
}

// replace_pattern_with_filters: keep(Match) decides before anything changes.
template <typename Filter>
size_t replace_pattern_with_filters(Graph& graph, const OwnedGraph& pattern,
                                    const OwnedGraph& replacement, Filter keep,
                                    uint32_t flags = 0) {
  detail::FilterCallback<Filter> cb{&keep};
  size_t count = 0;
  check(api()->GraphReplacePattern(
      graph.get(), pattern.get(), replacement.get(), flags,
      &detail::FilterCallback<Filter>::call, &cb, nullptr, nullptr, &count));
  return count;
}

// A pass's declaration, built fluently; the strings must be static (string
// literals), the PassDef itself lives in the plugin's static PluginDef.
//
//   fxp::pass<decompose>("decompose", "rewrites ops into smaller ones")
//       .option("rules", FX_OPTION_STRING_LIST, "relu,gelu", "rules to apply")
//       .run_after({"shape_prop"})
//       .invalidates({"tensor_meta"})
class PassDef {
 public:
  PassDef(const char* name, const char* description, FxPassRunFn run,
          void* user_data = nullptr) {
    info_.name = name;
    info_.description = description;
    info_.run = run;
    info_.user_data = user_data;
  }
  PassDef& option(const char* name, FxOptionType type,
                  const char* default_value, const char* description) {
    options_.push_back(FxOptionSpec{name, type, default_value, description});
    return *this;
  }
  PassDef& run_after(std::initializer_list<const char*> names) {
    run_after_.insert(run_after_.end(), names);
    return *this;
  }
  PassDef& run_before(std::initializer_list<const char*> names) {
    run_before_.insert(run_before_.end(), names);
    return *this;
  }
  PassDef& requires_property(std::initializer_list<const char*> names) {
    required_.insert(required_.end(), names);
    return *this;
  }
  PassDef& produces(std::initializer_list<const char*> names) {
    produces_.insert(produces_.end(), names);
    return *this;
  }
  PassDef& invalidates(std::initializer_list<const char*> names) {
    invalidates_.insert(invalidates_.end(), names);
    return *this;
  }

  // The C declaration, pointing into this object (which must not move
  // afterwards).
  const FxPassInfo& info() {
    info_.options = options_.data();
    info_.num_options = options_.size();
    info_.run_after = list(run_after_);
    info_.run_before = list(run_before_);
    info_.required = list(required_);
    info_.produces = list(produces_);
    info_.invalidates = list(invalidates_);
    return info_;
  }

 private:
  static FxNameList list(const std::vector<const char*>& names) {
    return FxNameList{names.data(), names.size()};
  }
  FxPassInfo info_{};
  std::vector<FxOptionSpec> options_;
  std::vector<const char*> run_after_, run_before_, required_, produces_,
      invalidates_;
};

// A pass whose body is `Fn`, run through the exception-catching trampoline.
template <PassFn Fn>
PassDef pass(const char* name, const char* description) {
  return PassDef(name, description, &run_pass<Fn>);
}

// The plugin's declaration: what fx_plugin_get_info returns.
class PluginDef {
 public:
  PluginDef(const char* name, const char* version,
            std::initializer_list<PassDef> passes,
            FxRegisterFn register_extensions = nullptr)
      : passes_(passes) {
    info_.register_extensions = register_extensions;
    for (PassDef& p : passes_) infos_.push_back(p.info());
    info_.name = name;
    info_.version = version;
    info_.api_version = FX_API_VERSION;
    info_.min_api_version = FX_API_VERSION;
    info_.passes = infos_.data();
    info_.num_passes = infos_.size();
  }
  PluginDef(const PluginDef&) = delete;
  PluginDef& operator=(const PluginDef&) = delete;
  const FxPluginInfo* info() const { return &info_; }

 private:
  std::vector<PassDef> passes_;
  std::vector<FxPassInfo> infos_;
  FxPluginInfo info_{};
};

}  // namespace fxp

// Defines the plugin's entry point. The declaration is built on the first
// call (never at load time), so loading runs none of the plugin's code.
//
//   FXP_PLUGIN("my_passes", "1.0",
//              fxp::pass<relu_to_mul>("relu_to_mul", "relu(x) -> (x > 0) * x"))
#define FXP_PLUGIN(NAME, VERSION, ...) \
  FXP_PLUGIN_WITH_EXTENSIONS(NAME, VERSION, nullptr, __VA_ARGS__)

// The same, with a function that registers tracer and runtime extensions
// (custom ops, leaf-module rules) when the plugin is loaded.
#define FXP_PLUGIN_WITH_EXTENSIONS(NAME, VERSION, REGISTER, ...)             \
  extern "C" FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) { \
    static const ::fxp::PluginDef plugin_def(NAME, VERSION, {__VA_ARGS__},   \
                                             REGISTER);                      \
    return plugin_def.info();                                                \
  }

#endif  // FX_PLUGIN_API_HPP_
