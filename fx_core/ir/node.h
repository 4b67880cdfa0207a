// fx::Node: one operation of a Graph (torch.fx's `Node`).
//
// A node has an opcode, a unique name, a target, positional args and keyword
// args (fx::Argument values that may reference earlier nodes), an optional
// type annotation and a meta dict. Its `users` are the nodes whose args or
// kwargs reference it, in the order torch.fx keeps them: a node that updates
// its arguments moves to the end of each input's users.
//
// Nodes are created, owned and erased by their Graph. An erased node stays
// readable (erased() is true; its args are None) until the graph purges erased
// nodes or is destroyed, so iteration survives erasing the current node, as in
// torch.fx.
//
// Costs: reading is O(1); setting args is O(old + new inputs) amortised
// (see UserList); replace_all_uses_with is O(uses); prepend/append are O(1).
#ifndef FX_CORE_IR_NODE_H_
#define FX_CORE_IR_NODE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/user_list.h"

namespace fx {

class Graph;

// torch.fx's six opcodes.
enum class Opcode : uint8_t {
  kPlaceholder,
  kGetAttr,
  kCallFunction,
  kCallMethod,
  kCallModule,
  kOutput,
};

// "placeholder", "get_attr", "call_function", ...
std::string_view opcode_name(Opcode op);
// Parses an opcode name; std::nullopt for anything else.
std::optional<Opcode> parse_opcode(std::string_view name);

namespace detail {
// One interned target string and, once Graph::find_nodes has built its
// index, the live nodes that have it. Owned by the Graph.
struct TargetEntry {
  std::string text;
  std::vector<Node*> nodes;
  Graph* graph = nullptr;  // the owning graph (Node::graph() reads it here)
};
}  // namespace detail

class Node {
 public:
  // Positional arguments: inline storage for the usual one or two.
  using Args = absl::InlinedVector<Argument, 2>;
  using Users = UserList;
  using Kwargs = ArgumentDict;

  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();

  // A number a host attaches to the node (the C ABI's handle slot; 0:
  // none). While it is non-zero, the process's LifetimeListener is told
  // when the node is destroyed (lifetime_listener.h).
  // Slots are below kMaxExternalSlot.
  static constexpr uint32_t kMaxExternalSlot = uint32_t{1} << 26;
  uint32_t external_slot() const { return external_slot_; }
  void set_external_slot(uint32_t slot) const { external_slot_ = slot; }

  Graph* graph() const { return target_->graph; }
  // The unique name; name().data() is NUL-terminated.
  std::string_view name() const { return {name_, name_len_}; }
  Opcode op() const { return static_cast<Opcode>(op_); }
  const std::string& target() const { return target_->text; }
  const Args& args() const { return args_; }
  const Kwargs& kwargs() const;
  // Users in torch.fx's order (insertion order of the uses).
  const Users& users() const { return users_; }
  size_t num_users() const { return users_.size(); }
  // The distinct nodes referenced by args then kwargs, in first-use order.
  std::vector<Node*> all_input_nodes() const;
  // Neighbours in graph order; nullptr at either end.
  Node* prev() const;
  Node* next() const;
  bool erased() const { return erased_; }

  // The type annotation as torch.fx's code spells it ("torch.Tensor"), or
  // empty for None.
  std::string_view type() const;
  // Sets the type; `text` is how print(graph) shows it when that is not what
  // type_text_form(type) derives (torch.fx prints repr(type): a forward
  // reference 'torch.Tensor' is `_torch_Tensor_` in code, a gradual type
  // TensorType[(1, Dyn)] a list of globals), empty otherwise.
  void set_type(std::string_view type, std::string_view text = {});
  // The override set_type() was given, or empty.
  std::string_view type_text_override() const;
  // The type as print(graph) shows it: the override, else derived.
  std::string type_text() const;

  // Meta: string keys to Argument values (shape_prop's "tensor_meta", ...).
  // Node references in meta are not uses. A graph's snapshot shares its
  // nodes' meta and type until either side changes them (copy on write), so
  // the reference mutable_meta() returns is valid until the node is next
  // snapshotted or its meta replaced: do not keep it across a pass.
  const ArgumentDict& meta() const;
  ArgumentDict& mutable_meta();
  const Argument* meta_value(std::string_view key) const;
  void set_meta(std::string_view key, Argument value);

  // Replaces args / kwargs, keeping users consistent. Throws FxError when an
  // argument references a node of another graph or an erased node; the node is
  // then unchanged.
  void set_args(Args args);
  void set_kwargs(Kwargs kwargs);
  // args[index] = arg; throws FxError when index is out of range.
  void update_arg(size_t index, Argument arg);
  // kwargs[key] = arg (appended when new).
  void update_kwarg(std::string_view key, Argument arg);
  // Changes the target (call_function/call_method/... retargeting).
  void set_target(std::string_view target);

  // Makes every user that `filter` accepts (all when empty) use `replacement`
  // instead of this node. Returns the users that changed, in users order.
  // With propagate_meta, copies this node's meta into replacement's (which
  // must then have none).
  std::vector<Node*> replace_all_uses_with(
      Node* replacement, const std::function<bool(Node*)>& filter = {},
      bool propagate_meta = false);
  // Replaces every use of `old_input` in this node's args and kwargs.
  void replace_input_with(Node* old_input, Node* new_input);

  // Moves `x` (a node of the same graph) to just before / after this node.
  void prepend(Node* x);
  void append(Node* x);

  // True for placeholder and output, side-effectful functions
  // (torch._assert, ...) and modules the owning module reports impure.
  bool is_impure() const;

  // True when this node comes before `other` in their graph (O(1) amortised).
  bool is_before(const Node* other) const;

  // One line of the graph text: `%add : [num_users=1] = call_function[...]`,
  // `return add` for output.
  std::string format_node() const;

 private:
  friend class Graph;
  // The graph's sentinel, and every node before Graph::create_node fills it.
  Node() : op_(0), erased_(0), sentinel_(0), external_slot_(0) {}

  // Rarely set state, allocated on first use. Kwargs come first: a node with
  // kwargs but no meta or type pays only for them. MetaAndType is shared
  // between a node and its snapshot copy (Graph::snapshot) until one of them
  // writes: more() copies it first when it is shared.
  struct MetaAndType {
    ArgumentDict meta;
    std::string type;
    std::string type_text;  // set_type's override
  };
  struct Extras {
    Kwargs kwargs;
    std::shared_ptr<MetaAndType> more;
  };
  Extras& extras();
  // The meta and type for writing: allocated, or unshared, first.
  MetaAndType& more();
  // Makes this node's meta and type `from`'s, shared until either writes.
  void share_meta_and_type(const Node& from);
  void set_name(std::string_view name) {
    name_ = name.data();
    name_len_ = static_cast<uint32_t>(name.size());
  }
  // Replaces args and kwargs, moving this node to the end of each new input's
  // users (torch.fx's __update_args_kwargs).
  void update_args_kwargs(Args args, Kwargs kwargs);
  void check_inputs(const Args& args, const Kwargs& kwargs) const;
  void remove_from_list();
  void insert_before_this(Node* x);

  // 120 bytes on LP64: the graph is reached through target_, and the name is
  // a pointer into the namespace's arena plus a length that fills padding.
  Node* prev_ = nullptr;
  Node* next_ = nullptr;
  detail::TargetEntry* target_ = nullptr;  // never null once in a graph
  // One 32-bit word: the opcode, two flags and the host's slot.
  uint32_t op_ : 4;  // an Opcode
  uint32_t erased_ : 1;
  uint32_t sentinel_ : 1;
  mutable uint32_t external_slot_ : 26;
  uint32_t target_slot_ = 0;  // position in target_->nodes, once indexed
  mutable uint32_t order_ = 0;
  uint32_t name_len_ = 0;
  const char* name_ = "";  // NUL-terminated, name_len_ chars
  Args args_;
  Users users_;
  std::unique_ptr<Extras> extras_;
};

}  // namespace fx

#endif  // FX_CORE_IR_NODE_H_
