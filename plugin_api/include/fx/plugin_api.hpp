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
//              fxp::pass<relu_to_mul>("relu_to_mul",
//                                     "relu(x) -> (x > 0) * x"));
//
// Exceptions stay on the plugin's side: the trampoline that fxp::pass<>
// installs turns them into FxStatus objects before returning to the host. The
// wrapper links nothing of fx_core; it only calls through the FxApi table the
// host hands to each pass.
//
// Layout. This file is the wrapper's reference: its classes and functions
// with their contracts. Their bodies are in fx/plugin_api_inline.hpp, which
// this file includes at its end, and in the one-concept headers that it
// includes in turn (fx/plugin_api_<concept>_inline.hpp: arg, graph,
// shape_env, value, tensor, run, rewrite, pass, partition); plugins include
// only fx/plugin_api.hpp.
// Bodies stay here, in the class, only when they are one statement over the
// object's own members and call nothing of the host: handle getters (get(),
// Arg::view(), OwnedGraph::view(), PluginDef::info()), explicit operator
// bool, handle comparisons, constructors that store a handle, move
// constructors, Arg::adopt, Tensor::release() / dl() / ndim(), the iterator's
// operator* / == / !=, and Error. Tensor::data<T>() and mutable_data<T>() are
// such accessors too (member templates, a cast each). Each says what the
// object holds, which a separate definition would only hide. Everything that
// calls the host through api() (directly or through another member),
// allocates, loops or branches is defined in the inline header, as are the
// function templates (match_pattern, replace_pattern_with_filters, pass,
// run_pass, Arg::sequence) and namespace fxp::detail.
#ifndef FX_PLUGIN_API_HPP_
#define FX_PLUGIN_API_HPP_

#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx/plugin_api.h"

namespace fxp {

// The host's table for the pass that is running (set by the trampoline).
inline const FxApi*& api();

// A failed call, carrying the host's status code and message.
class Error : public std::runtime_error {
 public:
  Error(FxStatusCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  FxStatusCode code() const { return code_; }

 private:
  FxStatusCode code_;
};

// Versions. The table a host hands over may be older than this header
// (FxApi.version, plugin_api.h "Negotiation"). Every wrapper function that
// calls an entry newer than version 1 checks api()->version first: it uses
// an older entry where one does the same job, and otherwise calls this,
// which throws Error(FX_UNIMPLEMENTED) naming the entry and both versions
// unless the host's table is at least `version`.
inline void require_api_version(uint32_t version, const char* entry);

// Throws Error for a non-NULL status (and releases it).
inline void check(FxStatus* status);

// A string the host allocated, copied and released.
inline std::string take_string(char* text);

class Node;
class Arg;

// A borrowed argument (from a node's args, kwargs or meta, or an Arg).
class ArgView {
 public:
  ArgView() = default;
  explicit ArgView(const FxArg* arg) : arg_(arg) {}
  const FxArg* get() const { return arg_; }
  explicit operator bool() const { return arg_ != nullptr; }

  FxArgKind kind() const;
  bool is_none() const;
  bool is_node() const;
  // A symbolic int: kind() says FX_ARG_STRING and as_string() gives its
  // expression ("2*t0.size(0)"). Version 8: ArgIsSymInt (FX_UNIMPLEMENTED
  // on an older host, which cannot tell it from a string).
  bool is_symint() const;
  // The value; Error when the argument is not of that kind. as_float accepts
  // ints too; as_string reads strings, dtypes, devices, memory formats and
  // layouts.
  bool as_bool() const;
  int64_t as_int() const;
  double as_float() const;
  std::string as_string() const;
  Node node() const;
  // The elements of a list, tuple or slice (3) or the values of a dict;
  // size() is 0 for other kinds, operator[] is empty out of range.
  size_t size() const;
  ArgView operator[](size_t i) const;
  // The key of dict item i ("" when not a dict or out of range).
  std::string key(size_t i) const;
  // Structural equality (nodes by identity).
  bool operator==(const ArgView& other) const;

 private:
  const FxArg* arg_ = nullptr;
};

// An owned argument value.
class Arg {
 public:
  // None, a literal, a reference to `node`, or a copy of `view`.
  Arg();
  Arg(std::nullptr_t);        // NOLINT
  Arg(bool v);                // NOLINT
  Arg(int v);                 // NOLINT
  Arg(int64_t v);             // NOLINT
  Arg(double v);              // NOLINT
  Arg(const char* v);         // NOLINT
  Arg(const std::string& v);  // NOLINT
  Arg(const Node& node);      // NOLINT
  Arg(ArgView view);          // NOLINT
  // A Python list: Arg{a, b}.
  Arg(std::initializer_list<Arg> items);

  static Arg list(const std::vector<Arg>& items);
  static Arg tuple(const std::vector<Arg>& items);
  static Arg dict(const std::vector<std::pair<std::string, Arg>>& items);
  // The same from borrowed values (an Arg's view(), a config's entry),
  // each copied once, into the dict.
  static Arg dict_of_views(
      const std::vector<std::pair<const char*, ArgView>>& items);
  static Arg slice(const Arg& start, const Arg& stop, const Arg& step);
  static Arg ellipsis();
  // torch.float32 from "torch.float32"; a device from "cpu", "cuda:0".
  static Arg dtype(const char* name);
  static Arg device(const char* name);
  // A symbolic int from its expression, stored as sympy prints it (version
  // 8: CreateSymInt; Error FX_INVALID_ARGUMENT when it does not parse).
  static Arg symint(const char* expression);

  // Takes ownership of an argument the host returned.
  static Arg adopt(FxArg* owned) { return Arg(owned); }

  Arg(const Arg& other);
  Arg(Arg&& other) noexcept : arg_(std::exchange(other.arg_, nullptr)) {}
  Arg& operator=(Arg other) noexcept;
  ~Arg();

  const FxArg* get() const { return arg_; }
  ArgView view() const { return ArgView(arg_); }
  operator ArgView() const { return view(); }  // NOLINT

 private:
  explicit Arg(FxArg* owned) : arg_(owned) {}
  template <typename Seq>
  static Arg sequence(const Seq& items, bool tuple);
  static Arg torch_value(FxArgKind kind, const char* name);
  FxArg* arg_ = nullptr;
};

using Kwargs = std::vector<std::pair<std::string, Arg>>;

// A node handle (borrowed from the host; cheap to copy). Valid while the node
// is in its graph; an erased node stays readable until the pass returns. One
// kept longer (from an earlier pass, a rolled-back or released graph) is
// refused by the host: getters answer as for an empty Node ("", 0, an empty
// view) and changes throw Error(FX_FAILED_PRECONDITION).
class Node {
 public:
  Node() = default;
  Node(FxNode* node) : node_(node) {}  // NOLINT
  FxNode* get() const { return node_; }
  explicit operator bool() const { return node_ != nullptr; }
  bool operator==(const Node& o) const { return node_ == o.node_; }
  bool operator!=(const Node& o) const { return node_ != o.node_; }

  FxOpcode op() const;
  // Borrowed from the host, valid while the node is.
  std::string_view name() const;
  std::string_view target() const;
  // The target as a C string (borrowed, valid while the node is).
  const char* target_cstr() const;
  // The type annotation ("torch.Tensor"), or "" for none.
  std::string_view type() const;
  size_t num_args() const;
  ArgView arg(size_t i) const;
  std::vector<ArgView> args() const;
  size_t num_kwargs() const;
  std::string kwarg_key(size_t i) const;
  ArgView kwarg_value(size_t i) const;
  // The kwarg named `key`; an empty view when absent.
  ArgView kwarg(const char* key) const;
  // The users, in order.
  std::vector<Node> users() const;
  size_t num_users() const;
  // The distinct nodes used by args, then kwargs.
  std::vector<Node> all_input_nodes() const;
  // Neighbours in graph order; an empty Node at either end.
  Node next() const;
  Node prev() const;
  bool is_impure() const;
  // The FX_EFFECT_* bits of the ATen operator the node calls (version 7:
  // NodeOperatorEffects; FX_UNIMPLEMENTED on an older host).
  uint32_t operator_effects() const;
  // meta[key]; an empty view when absent.
  ArgView meta(const char* key) const;
  // One line of graph text (`%add : [num_users=1] = ...`).
  std::string format() const;

  // Changes: each either succeeds completely or throws and leaves the graph
  // unchanged. Arguments are copied.
  void set_args(const std::vector<Arg>& args);
  void update_arg(size_t i, const Arg& value);
  void update_kwarg(const char* key, const Arg& value);
  // Replaces every keyword argument, in this order.
  void set_kwargs(const std::vector<std::pair<std::string, Arg>>& kwargs);
  void set_target(const char* target);
  // The type annotation; nullptr or "" for none.
  void set_type(const char* type);
  // The type annotation and how print(graph) shows it when that is not what
  // torch.fx derives ("TensorType[(1, Dyn)]"); "" for derived. Version 15:
  // NodeSetTypeText; FX_UNIMPLEMENTED on an older host.
  void set_type(const char* type, const char* text);
  // The type as print(graph) shows it, "" for none. Version 15:
  // NodeTypeText; on an older host, the type as code spells it.
  std::string type_text() const;
  void set_meta(const char* key, const Arg& value);
  // Every user of this node uses `replacement` instead; returns how many
  // users changed.
  size_t replace_all_uses_with(Node replacement);
  void replace_input_with(Node old_input, Node new_input);
  // Moves `x` to just before / after this node (Node.prepend / Node.append).
  void prepend(Node x);
  void append(Node x);

 private:
  FxNode* node_ = nullptr;
};

// Restores the graph's previous insertion point when destroyed.
class InsertGuard {
 public:
  // New nodes go just before `anchor` (after = 0) or just after it (1).
  InsertGuard(FxGraph* graph, FxNode* anchor, int after);
  InsertGuard(InsertGuard&& o) noexcept
      : graph_(std::exchange(o.graph_, nullptr)),
        saved_anchor_(o.saved_anchor_),
        saved_after_(o.saved_after_) {}
  InsertGuard(const InsertGuard&) = delete;
  InsertGuard& operator=(const InsertGuard&) = delete;
  ~InsertGuard();

 private:
  FxGraph* graph_;
  FxNode* saved_anchor_ = nullptr;
  int saved_after_ = 0;
};

// A symbolic graph's shape environment (version 8): a snapshot owned by the
// plugin, taken by Graph::shape_env(). Empty (false) for a graph that is
// not symbolic.
class ShapeEnv {
 public:
  // Where a symbol's value is read from: a placeholder's size or stride.
  struct Source {
    std::string placeholder;
    size_t dim = 0;
    bool stride = false;
  };
  struct Symbol {
    std::string name;              // "t0.size(0)"
    std::optional<int64_t> hint;   // its value at capture (var_to_val)
    std::optional<Source> source;  // none when only guards name it
  };
  // One guard: how the capture printed it (torch 1.13's format_guards()
  // line) and the relation that must hold (sympy's text).
  struct Guard {
    std::string text;
    std::string relation;
  };

  ShapeEnv() = default;
  explicit ShapeEnv(FxShapeEnv* owned) : env_(owned) {}
  ShapeEnv(ShapeEnv&& o) noexcept : env_(std::exchange(o.env_, nullptr)) {}
  ShapeEnv& operator=(ShapeEnv&& o) noexcept;
  ShapeEnv(const ShapeEnv&) = delete;
  ShapeEnv& operator=(const ShapeEnv&) = delete;
  ~ShapeEnv();

  explicit operator bool() const { return env_ != nullptr; }
  FxShapeEnv* get() const { return env_; }
  // In the order the placeholders name them, then those only guards name.
  std::vector<Symbol> symbols() const;
  std::vector<Guard> guards() const;
  // torch 1.13's ShapeEnv.format_guards(): " - TEXT" lines joined by "\n".
  std::string format_guards() const;
  // Checks the shapes of one input per placeholder, in order (data is not
  // read; nullptr for a placeholder that is not a tensor). Error
  // (FX_INVALID_ARGUMENT) naming the placeholder, the dimension and the
  // guard the shapes break.
  void check(const std::vector<const DLTensor*>& inputs) const;

 private:
  FxShapeEnv* env_ = nullptr;
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
    explicit iterator(FxNode* n);
    Node operator*() const { return Node(cur_); }
    iterator& operator++();
    bool operator!=(const iterator& o) const { return cur_ != o.cur_; }
    bool operator==(const iterator& o) const { return cur_ == o.cur_; }

   private:
    FxNode* cur_;
    FxNode* next_;
  };
  iterator begin() const;
  iterator end() const;
  std::vector<Node> nodes() const;

  size_t size() const;
  Node output_node() const;

  // The nodes with this opcode and target, in graph order.
  std::vector<Node> find_nodes(FxOpcode op, const char* target) const;

  // Creates a node at the insertion point (by default the end of the graph).
  // `name` and `type` may be null.
  Node create_node(FxOpcode op, const char* target,
                   const std::vector<Arg>& args = {}, const Kwargs& kwargs = {},
                   const char* name = nullptr, const char* type = nullptr);
  Node call_function(const char* target, const std::vector<Arg>& args = {},
                     const Kwargs& kwargs = {});
  // Graph.node_copy: a copy of `n` at the insertion point.
  Node node_copy(Node n);
  // A node whose args are borrowed views (another node's args()): nothing
  // is copied on the plugin's side.
  Node create_node_borrowing(FxOpcode op, const char* target,
                             const std::vector<ArgView>& args);

  Node call_method(const char* method, const std::vector<Arg>& args = {},
                   const Kwargs& kwargs = {});
  Node call_module(const char* target, const std::vector<Arg>& args = {},
                   const Kwargs& kwargs = {});
  Node get_attr(const char* target);

  // New nodes go just before / after `n` until the guard is destroyed.
  [[nodiscard]] InsertGuard inserting_before(Node n);
  [[nodiscard]] InsertGuard inserting_after(Node n);
  // Error (FX_FAILED_PRECONDITION) when `n` still has users.
  void erase_node(Node n);
  // torch.fx's eliminate_dead_code; returns whether it removed anything.
  bool eliminate_dead_code();
  // Renames every (node, name) pair at once (version 11: GraphRenameNodes;
  // swaps allowed, an erased node's name may be taken). Error
  // (FX_INVALID_ARGUMENT) and nothing renamed when a name is illegal or
  // would be two nodes'; FX_UNIMPLEMENTED on an older host.
  void rename_nodes(const std::vector<std::pair<Node, std::string>>& renames);
  // New nodes named as in a graph freshly built from the live nodes
  // (version 11: GraphResetNamespace; a retrace's names).
  void reset_namespace();
  // Throws Error when the graph is malformed.
  void lint() const;
  // print(graph) and gm.code.
  std::string str() const;
  std::string python_code() const;
  // Attributes of the owning module (parameters, buffers, constants).
  bool has_attr(const char* name) const;
  // A DLPack view of the attribute; the caller calls its deleter.
  DLManagedTensor* get_attr_tensor(const char* name) const;
  // get_attr_tensor, or nullptr where the module holds no tensor at `name`
  // (one call where has_attr and get_attr_tensor would make two).
  DLManagedTensor* find_attr_tensor(const char* name) const;
  // Adds or replaces a tensor attribute; ownership moves to the host.
  void set_attr_tensor(const char* name, DLManagedTensor* tensor);
  // Adds or replaces a quantized tensor attribute (version 9:
  // GraphSetQuantizedAttr) from its integers (int8, uint8 or int32;
  // ownership moves to the host), scales and zero points: one of each with
  // axis -1 (per tensor), else one per channel along `axis`.
  void set_attr_quantized(const char* name, DLManagedTensor* values,
                          const DLTensor& scales, const DLTensor& zero_points,
                          int64_t axis);
  // The type of the submodule `name` ("torch.nn.Linear").
  std::string module_type(const char* name) const;
  // The graph's shape environment now (version 8: GraphShapeEnv); empty
  // when the graph is not symbolic.
  ShapeEnv shape_env() const;
  // Symbolic shape propagation by the host (version 8:
  // GraphSymbolicShapeProp): `shapes` empty for a symbolic graph's own
  // sizes, else one per placeholder ("Bx3x224x224"; "" keeps one's
  // tensor_meta); `hints` "NAME=VALUE". Returns the guards taken.
  std::vector<std::string> symbolic_shape_prop(
      const std::vector<std::string>& shapes,
      const std::vector<std::string>& hints) const;
  // Whether the submodule `name` is in training mode (version 8:
  // GraphModuleTraining): 1, 0, or -1 when there is none. On an older host
  // -1 (unknown).
  int module_training(const char* name) const;

 private:
  FxGraph* graph_;
};

// A value in a graph being built: operators and methods record nodes at the
// graph's insertion point (torch.fx's Proxy used for retracing).
class Value {
 public:
  Value(Node node) : node_(node) {}  // NOLINT
  Node node() const { return node_; }
  operator Arg() const;  // NOLINT

  // Records `self.method(args..., **kwargs)`.
  Value call_method(const char* method, std::vector<Arg> args = {},
                    const Kwargs& kwargs = {}) const;
  Value relu() const;
  Value sigmoid() const;
  Value tanh() const;

  Graph graph() const;

 private:
  Node node_;
};

// Records `target(args..., **kwargs)` in g, at its insertion point.
inline Value call(Graph g, const char* target, const std::vector<Arg>& args,
                  const Kwargs& kwargs = {});

// Operators record operator.<name>(a, b) in the Value's graph, with a Value,
// an int or a double on either side: + add, - sub, * mul, / truediv, > gt,
// < lt, >= ge, <= le. Unary minus records operator.neg.
#define FXP_DECLARE_BINARY_OPERATOR(OP)                     \
  inline Value operator OP(const Value& a, const Value& b); \
  inline Value operator OP(const Value& a, double b);       \
  inline Value operator OP(const Value& a, int b);          \
  inline Value operator OP(double a, const Value& b);       \
  inline Value operator OP(int a, const Value& b);

FXP_DECLARE_BINARY_OPERATOR(+)
FXP_DECLARE_BINARY_OPERATOR(-)
FXP_DECLARE_BINARY_OPERATOR(*)
FXP_DECLARE_BINARY_OPERATOR(/)
FXP_DECLARE_BINARY_OPERATOR(>)
FXP_DECLARE_BINARY_OPERATOR(<)
FXP_DECLARE_BINARY_OPERATOR(>=)
FXP_DECLARE_BINARY_OPERATOR(<=)
#undef FXP_DECLARE_BINARY_OPERATOR

inline Value operator-(const Value& a);

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
  Tensor& operator=(Tensor&& o) noexcept;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor();

  explicit operator bool() const { return t_ != nullptr; }
  DLManagedTensor* get() const { return t_; }
  DLManagedTensor* release() { return std::exchange(t_, nullptr); }
  // Calls the deleter (if any) and holds nothing.
  void reset();
  const DLTensor& dl() const { return t_->dl_tensor; }
  int ndim() const { return t_->dl_tensor.ndim; }
  std::vector<int64_t> shape() const;
  int64_t numel() const;
  // Dense row-major strides (or none); size-1 dimensions' are ignored.
  bool is_contiguous() const;
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
  double float_at(int64_t i) const;

 private:
  DLManagedTensor* t_ = nullptr;
};

// A new zero-filled, contiguous CPU tensor owned by the plugin.
inline Tensor make_tensor(const std::vector<int64_t>& shape, DLDataType dtype);
inline constexpr DLDataType kFloat32{kDLFloat, 32, 1};
inline constexpr DLDataType kFloat64{kDLFloat, 64, 1};
inline constexpr DLDataType kInt8{kDLInt, 8, 1};
inline constexpr DLDataType kInt64{kDLInt, 64, 1};

// Where a tensor value of a run keeps its elements (RuntimeValue::storage).
struct TensorStorage {
  // Equal for two values of the same run exactly when they share a storage
  // (a view and its base, an in-place op's result and its input); nonzero,
  // never reused within a run.
  uint64_t id;
  int64_t offset;  // storage_offset(), in elements
};

// A borrowed runtime value (what a node computed), valid during the callback
// that receives it.
class RuntimeValue {
 public:
  explicit RuntimeValue(const FxValue* v) : v_(v) {}
  const FxValue* get() const { return v_; }
  FxValueKind kind() const;
  bool is_tensor() const;
  // The Python type name ShapeProp records as meta['type'].
  std::string type_name() const;
  // torch.fx's TensorMetadata; its pointers are borrowed from the value.
  FxTensorMeta tensor_meta() const;
  // A read-only view of the data (fails for meta tensors).
  Tensor to_dlpack() const;
  int64_t as_int() const;
  double as_float() const;
  bool as_bool() const;
  // The items of a sequence (tuple, list, torch.Size).
  size_t size() const;
  RuntimeValue item(size_t i) const;
  // A tensor value's storage within its run_graph run, meta runs included
  // (version 12: ValueStorage; FX_UNIMPLEMENTED on an older host). Error
  // (FX_INVALID_ARGUMENT) for a value that is not a tensor or not of a run
  // (evaluate's).
  TensorStorage storage() const;

 private:
  const FxValue* v_;
};

// Runs the graph's module (GraphRun) on `inputs`, one per placeholder;
// `on_node` sees every node's value in graph order. With `meta` the inputs'
// data is ignored: shapes and dtypes propagate, nothing is computed. An
// exception from `on_node` stops the run and is rethrown here.
inline void run_graph(Graph& g, const std::vector<const DLTensor*>& inputs,
                      bool meta,
                      std::function<void(Node, RuntimeValue)> on_node);

// Computes `node` from attributes and literals alone (GraphEvaluate).
inline void evaluate(Graph& g, Node node,
                     std::function<void(RuntimeValue)> on_value);

// The example inputs the host holds for the graph (GraphExampleInput).
inline std::vector<Tensor> example_inputs(const Graph& g);

// Every batch of example inputs the host holds (version 10:
// GraphExampleBatchInput; on an older host, the one example_inputs gives).
inline std::vector<std::vector<Tensor>> example_batches(const Graph& g);

// A new child GraphModule at `name` with an empty graph to fill.
inline Graph add_subgraph_module(Graph& g, const char* name);

// The graph of the existing child GraphModule at `name`, borrowed for the
// pass; changes to it are the pass's (version 16: GraphSubmoduleGraph;
// FX_UNIMPLEMENTED on an older host).
inline Graph submodule_graph(Graph& g, const char* name);

// torch.fx's GraphModule(gm, gm.graph) in place: g's module keeps only the
// submodules and tensors its graph uses, in the order it first uses them
// (version 17: GraphKeepUsedAttrs; FX_UNIMPLEMENTED on an older host).
inline void keep_used_attrs(Graph& g);

// Shares the attribute or submodule `name` of g's module with `sub`'s.
inline void share_attr(Graph& g, Graph& sub, const char* name);
// Shares it as `sub`'s attribute `as_name` (split_module's "layer1_0_conv"
// for "layer1.0.conv"). Version 15: GraphShareAttrAs; FX_UNIMPLEMENTED on an
// older host unless as_name == name.
inline void share_attr(Graph& g, Graph& sub, const char* name,
                       const char* as_name);

// The module's constructor keyword arguments ({"eps": 1e-05, ...}).
inline Arg module_config(const Graph& g, const char* name);

// The parameters of the submodule `name` ("" for the graph's module), as
// torch's named_parameters() lists them: qualified names and shapes, no
// tensor read (version 11: GraphModuleParameters; FX_UNIMPLEMENTED on an
// older host).
struct ModuleParameter {
  std::string name;
  std::vector<int64_t> shape;
};
inline std::vector<ModuleParameter> module_parameters(const Graph& g,
                                                      const char* name);

// The schemas of the ATen operators a node target names, each as torch
// prints str(op._schema): one for torch.ops.aten.NAME.OVERLOAD; every
// overload of aten::NAME, in torch's order, for torch.ops.aten.NAME,
// torch.NAME, torch.nn.functional.NAME or a Tensor method NAME; none for a
// target that names no operator (operator.add). Version 12:
// OperatorSchemas; FX_UNIMPLEMENTED on an older host.
inline std::vector<std::string> operator_schemas(const char* target);

// Writes `bytes` to the file `path` (a report, a drawing) through the host:
// refused with Error(FX_INVALID_ARGUMENT) naming `path` and the input it
// would overwrite when the running host command reads that file (its graph,
// its weights: the host's one output rule), otherwise replaced atomically
// (a temporary beside it, renamed). Version 13: WriteOutputFile;
// FX_UNIMPLEMENTED on an older host.
inline void write_output_file(const std::string& path, std::string_view bytes);

// One parameter of a Python signature (TargetSignature).
struct SignatureParam {
  std::string name;
  // inspect's kind: "POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY",
  // "VAR_POSITIONAL" or "VAR_KEYWORD".
  std::string kind;
  std::optional<Arg> default_value;  // none: the parameter has no default
};
// The Python signature a call of `target` binds to, as inspect.signature
// has it: a call_function target that is a Python function
// (torch.nn.functional.relu), or (FX_OP_CALL_MODULE) the forward of the
// submodule `target` of g's owning GraphModule. std::nullopt when there is
// none the host knows: a builtin (its arguments bind to its ATen schemas,
// operator_schemas), an unknown target or module class. Version 14:
// TargetSignature; FX_UNIMPLEMENTED on an older host.
inline std::optional<std::vector<SignatureParam>> target_signature(
    const Graph& g, FxOpcode op, const std::string& target);

// The type torch 1.13's AnnotateTypesWithSchema gives a call_function of a
// torch.nn.functional Python function, a call_module of a torch.nn class
// (its forward's return annotation) or a get_attr of a tensor
// ("torch.Tensor"), as torch.fx's code spells types; std::nullopt when it
// gives none. Version 14: TargetReturnType; FX_UNIMPLEMENTED on an older
// host.
inline std::optional<std::string> target_return_type(const Graph& g,
                                                     FxOpcode op,
                                                     const std::string& target);

// Adds or replaces the submodule `name` with a new `type` module built from
// `config` (a dict of constructor keyword arguments).
inline void add_module(Graph& g, const char* name, const char* type,
                       const Arg& config);

// The value of `key` in a dict argument; an empty view when absent.
inline ArgView dict_get(ArgView dict, std::string_view key);

// Records `target(x, rest..., **kwargs)` in x's graph, for rewrites:
// fxp::op("torch.erf", x), fxp::op("torch.clamp", x, {0, 6}).
inline Value op(const char* target, const Value& x, std::vector<Arg> rest = {},
                const Kwargs& kwargs = {});

// The running pass's options (declared in its schema); Error for an unknown
// name or another type.
class Options {
 public:
  explicit Options(const FxOptions* options) : options_(options) {}
  bool get_bool(const char* name) const;
  int64_t get_int(const char* name) const;
  double get_float(const char* name) const;
  std::string get_string(const char* name) const;
  std::vector<std::string> get_list(const char* name) const;

 private:
  const FxOptions* options_;
};

// A pass body: returns whether it changed the graph; throws to fail.
using PassFn = bool (*)(Graph& graph, const Options& options);

// The FxPassRunFn that pass<Fn> installs: sets api() to `table`, runs Fn and
// turns an exception into a status for the host.
template <PassFn Fn>
FxStatus* run_pass(const FxApi* table, FxGraph* graph, const FxOptions* options,
                   void* user_data, int* changed);

// A standalone graph the plugin owns (a pattern or a replacement for
// replace_pattern). Build it with placeholder(), Values and output():
//
//   fxp::OwnedGraph pattern;
//   fxp::Value x = pattern.placeholder("x");
//   pattern.output(x.call_method("relu"));
class OwnedGraph {
 public:
  OwnedGraph();
  ~OwnedGraph();
  OwnedGraph(OwnedGraph&& o) noexcept
      : graph_(std::exchange(o.graph_, nullptr)) {}
  OwnedGraph(const OwnedGraph&) = delete;
  OwnedGraph& operator=(const OwnedGraph&) = delete;

  Graph view() const { return Graph(graph_); }
  FxGraph* get() const { return graph_; }
  Value placeholder(const char* name);
  void output(const Arg& value);

 private:
  FxGraph* graph_ = nullptr;
};

// A match or replacement reported by match_pattern / replace_pattern.
class Match {
 public:
  explicit Match(const FxMatch* m) : m_(m) {}
  // Pattern node i and the graph value it matched (a node reference, or a
  // literal for a placeholder).
  size_t size() const;
  Node pattern_node(size_t i) const;
  ArgView value(size_t i) const;
  // The graph node a pattern node matched (empty Node if none).
  Node node_for(Node pattern_node) const;
  // The graph node the pattern's first anchor matched.
  Node anchor() const;
  // For a replacement: the nodes inserted.
  std::vector<Node> replacements() const;

 private:
  const FxMatch* m_;
};

// Calls on_match(Match) for every non-overlapping match, in graph order.
// `flags`: FX_REWRITE_* of plugin_api.h.
template <typename Fn>
void match_pattern(const Graph& graph, const OwnedGraph& pattern, Fn on_match,
                   uint32_t flags = 0);

// torch.fx's replace_pattern; returns the replacements made.
inline size_t replace_pattern(Graph& graph, const OwnedGraph& pattern,
                              const OwnedGraph& replacement,
                              uint32_t flags = 0);

// replace_pattern_with_filters: keep(Match) decides before anything changes.
template <typename Filter>
size_t replace_pattern_with_filters(Graph& graph, const OwnedGraph& pattern,
                                    const OwnedGraph& replacement, Filter keep,
                                    uint32_t flags = 0);

// A pass's declaration, built fluently; the strings must be static (string
// literals), the PassDef itself lives in the plugin's static PluginDef.
//
//   fxp::pass<decompose>("decompose", "rewrites ops into smaller ones")
//       .option("rules", FX_OPTION_STRING_LIST, "relu,gelu", "rules to apply")
//       .run_after({"shape_prop"})
//       .invalidates({"tensor_meta"})
//       .tolerance(1e-4, 1e-5)  // its numbers within these of the original's
//       .idempotent()           // a second run changes nothing
class PassDef {
 public:
  PassDef(const char* name, const char* description, FxPassRunFn run,
          void* user_data = nullptr);
  // A typed option; `default_value` in text form ("true", "8", "relu,gelu").
  PassDef& option(const char* name, FxOptionType type,
                  const char* default_value, const char* description);
  // When both run, `names` run before / after this pass.
  PassDef& run_after(std::initializer_list<const char*> names);
  PassDef& run_before(std::initializer_list<const char*> names);
  // Properties ("tensor_meta") that must hold before the pass, that it
  // establishes, that it destroys.
  PassDef& requires_property(std::initializer_list<const char*> names);
  PassDef& produces(std::initializer_list<const char*> names);
  PassDef& invalidates(std::initializer_list<const char*> names);
  // How far it may move the numbers against the unchanged graph
  // (FxTolerance, API version 6): finite and >= 0; not called, or both 0,
  // declares none.
  PassDef& tolerance(double rtol, double atol);
  // Running it on its own output changes nothing (API version 6).
  PassDef& idempotent(bool idempotent = true);

  // The C declaration, pointing into this object (which must not move
  // afterwards).
  const FxPassInfo& info();

 private:
  static FxNameList list(const std::vector<const char*>& names);
  FxPassInfo info_{};
  std::vector<FxOptionSpec> options_;
  std::vector<const char*> run_after_, run_before_, required_, produces_,
      invalidates_;
};

// A pass whose body is `Fn`, run through the exception-catching trampoline.
template <PassFn Fn>
PassDef pass(const char* name, const char* description);

// What a plugin registers when it is loaded (FxPluginInfo.
// register_extensions), wrapping the registrar the host hands over:
//
//   void register_vendor(fxp::Registrar& r) {
//     fxp::OwnedGraph silu;  // aten::silu(self) -> self * sigmoid(self)
//     fxp::Value x = silu.placeholder("self");
//     silu.output(fxp::call(silu.view(), "torch.ops.aten.mul.Tensor",
//                           {x, fxp::call(silu.view(),
//                                         "torch.ops.aten.sigmoid.default",
//                                         {x})}));
//     r.decomposition("aten::silu", silu);
//     r.leaf_op("aten::layer_norm");
//   }
//   FXP_PLUGIN_WITH_EXTENSIONS("vendor", "1.0",
//                              fxp::registration<register_vendor>, ...)
class Registrar {
 public:
  explicit Registrar(FxRegistrar* r) : r_(r) {}
  FxRegistrar* get() const { return r_; }

  // A custom op (plugin_api.h FxCustomOp) and a leaf-module rule.
  void custom_op(const FxCustomOp& op);
  void leaf_module_rule(FxLeafModuleFn is_leaf, void* user_data = nullptr);
  // API version 4 (plugin_api.h RegisterDecomposition / RegisterLeafOp):
  // fx::make_fx records `replacement`'s calls in place of ATen operator
  // `op`; records `op` whole.
  void decomposition(const char* op, const OwnedGraph& replacement);
  void leaf_op(const char* op);

 private:
  FxRegistrar* r_;
};

// A registration function, run through an exception-catching trampoline
// (fxp::registration<Fn>, an FxRegisterFn).
using RegisterFn = void (*)(Registrar& registrar);
template <RegisterFn Fn>
FxStatus* registration(const FxApi* table, FxRegistrar* registrar);

// The plugin's declaration: what fx_plugin_get_info returns. It declares
// FX_API_VERSION as both the API it was built against and the oldest it runs
// on, and this header's struct sizes (struct_size, pass_info_size).
class PluginDef {
 public:
  PluginDef(const char* name, const char* version,
            std::initializer_list<PassDef> passes,
            FxRegisterFn register_extensions = nullptr);
  PluginDef(const PluginDef&) = delete;
  PluginDef& operator=(const PluginDef&) = delete;
  const FxPluginInfo* info() const { return &info_; }

 private:
  std::vector<PassDef> passes_;
  std::vector<FxPassInfo> infos_;
  FxPluginInfo info_{};
};

// A support rule (FxSupport, API version 3): which nodes a backend runs, as
// torch.fx's OperatorSupport says it. Rules compose; a rule keeps alive the
// C++ predicates it was made from.
//
//   fxp::Support rule = fxp::Support::any_of(
//       {fxp::Support::functions({"aten::convolution", "operator.add"}),
//        fxp::Support::opcodes({FX_OP_GET_ATTR})});
class Support {
 public:
  // By target (plugin_api.h SupportTargets): call_function targets in any
  // spelling, call_method names, call_module types.
  static Support functions(const std::vector<std::string>& targets);
  static Support methods(const std::vector<std::string>& names);
  static Support module_types(const std::vector<std::string>& types);
  // meta['tensor_meta'] within `rule`'s limits (struct_size is set here).
  static Support tensor_meta(FxTensorRule rule);
  static Support opcodes(const std::vector<FxOpcode>& ops);
  static Support node_names(const std::vector<std::string>& names);
  // The plugin's own test; an exception it throws stops partitioning.
  static Support predicate(std::function<bool(Node)> fn);
  // torch.fx's chain (every rule), the union, the negation.
  static Support all_of(const std::vector<Support>& rules);
  static Support any_of(const std::vector<Support>& rules);
  Support operator!() const;

  bool is_node_supported(Node node) const;
  const FxSupport* get() const { return rule_.get(); }

 private:
  Support(FxSupport* rule, std::vector<std::shared_ptr<void>> keep);
  static Support targets(FxOpcode op, const std::vector<std::string>& names);
  static Support combined(const std::vector<Support>& rules, bool all);

  std::shared_ptr<FxSupport> rule_;
  std::vector<std::shared_ptr<void>> keep_;  // predicates the rule calls
};

// torch.fx's CapabilityBasedPartitioner options.
struct PartitionOptions {
  bool allows_single_node_partition = false;
  size_t min_partition_size = 0;
};

// Partitions proposed by propose_partitions (FxPartitions, owned): each a
// list of nodes in graph order, in torch.fx's order.
class Partitions {
 public:
  explicit Partitions(FxPartitions* p);
  size_t size() const;
  std::vector<Node> operator[](size_t index) const;
  const FxPartitions* get() const { return partitions_.get(); }

 private:
  std::shared_ptr<FxPartitions> partitions_;
};

// torch.fx's propose_partitions and fuse_by_partitions (plugin_api.h
// GraphProposePartitions / GraphFusePartitions; `prefix` null: "fused_").
Partitions propose_partitions(const Graph& graph, const Support& rule,
                              const PartitionOptions& options = {});
void fuse_partitions(Graph& graph, const Partitions& partitions,
                     const char* prefix = nullptr);
// GraphDelegatePartitions (version 5): each partition fused, compiled by
// `backend` and run by it; `prefix` null: "<backend>_".
void delegate_partitions(Graph& graph, const Partitions& partitions,
                         const char* backend, const char* prefix = nullptr);

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

#include "fx/plugin_api_inline.hpp"  // IWYU pragma: export

#endif  // FX_PLUGIN_API_HPP_
