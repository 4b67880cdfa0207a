// fx::Graph: an ordered list of Nodes (torch.fx's `Graph`).
//
// Insert, erase and move are O(1) (a doubly linked list around a sentinel);
// new nodes go to the current insertion point (the end unless an
// InsertPoint guard from inserting_before/inserting_after says otherwise).
// Names follow torch.fx exactly (see graph_namespace.h). Nodes are found by
// opcode and target through an index (built on first use), without a scan.
//
// Text and code: str() is `print(graph)`, tabular() is print_tabular(),
// python_code() is `graph.python_code("self").src` from the graph's CodeGen.
//
// A Graph is neither copyable nor movable (nodes point back to it); use
// deepcopy() or graph_copy() to copy one.
//
// Threads: like torch.fx's, a Graph has no locks. Do not share one between
// threads without synchronising, even for const calls: the ones that compare
// positions (Node::is_before, lint, deepcopy) number the nodes lazily, and
// the first find_nodes builds its index.
#ifndef FX_CORE_IR_GRAPH_H_
#define FX_CORE_IR_GRAPH_H_

#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/graph_namespace.h"
#include "fx_core/ir/node.h"

namespace fx {

class CodeGen;
struct PythonCode;

// What a Graph asks of the module that owns it (a GraphModule): lint checks
// get_attr/call_module/call_function targets against it, and DCE asks it
// whether a called module is impure. Implemented outside fx_core, so the IR
// needs no LibTorch.
class GraphOwner {
 public:
  enum class AttrKind { kMissing, kModule, kParameter, kBuffer, kOther };
  virtual ~GraphOwner() = default;
  // What the dotted path names, relative to the owning module.
  virtual AttrKind resolve_attr(std::string_view qualified_name) const = 0;
  // True when a call_function target can be run (the op registry knows it).
  virtual bool has_function(std::string_view target) const = 0;
  // True when calling the module at `qualified_name` has side effects.
  virtual bool is_impure_module(std::string_view qualified_name) const {
    (void)qualified_name;
    return false;
  }
};

class Graph {
 public:
  // Iterates the live nodes in order. Erasing the node an iterator points at
  // is allowed (as torch.fx allows it during `for node in graph.nodes`).
  class NodeIterator {
   public:
    using iterator_category = std::bidirectional_iterator_tag;
    using value_type = Node*;
    using difference_type = std::ptrdiff_t;
    using pointer = Node* const*;
    using reference = Node*;
    NodeIterator() = default;
    NodeIterator(Node* cur, Node* sentinel, bool reverse)
        : cur_(cur), sentinel_(sentinel), reverse_(reverse) {
      skip_erased();
    }
    Node* operator*() const { return cur_; }
    NodeIterator& operator++();
    NodeIterator operator++(int) {
      NodeIterator r = *this;
      ++*this;
      return r;
    }
    bool operator==(const NodeIterator& o) const { return cur_ == o.cur_; }
    bool operator!=(const NodeIterator& o) const { return cur_ != o.cur_; }

   private:
    void skip_erased();
    Node* cur_ = nullptr;
    Node* sentinel_ = nullptr;
    bool reverse_ = false;
  };

  class NodeRange {
   public:
    NodeRange(Node* sentinel, bool reverse)
        : sentinel_(sentinel), reverse_(reverse) {}
    NodeIterator begin() const;
    NodeIterator end() const {
      return NodeIterator(sentinel_, sentinel_, reverse_);
    }
    // The nodes as a vector (a snapshot: safe to edit the graph while
    // walking it).
    std::vector<Node*> to_vector() const;

   private:
    Node* sentinel_;
    bool reverse_;
  };

  // Restores the previous insertion point when destroyed.
  class [[nodiscard]] InsertPoint {
   public:
    InsertPoint(InsertPoint&& other) noexcept;
    InsertPoint(const InsertPoint&) = delete;
    InsertPoint& operator=(const InsertPoint&) = delete;
    InsertPoint& operator=(InsertPoint&&) = delete;
    ~InsertPoint();

   private:
    friend class Graph;
    InsertPoint(Graph* graph, Node* anchor, bool before);
    Graph* graph_;
    Node* saved_anchor_;
    bool saved_before_;
  };

  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  NodeRange nodes() const { return NodeRange(sentinel_.get(), false); }
  NodeRange reversed_nodes() const { return NodeRange(sentinel_.get(), true); }
  size_t size() const { return size_; }
  Node* first() const;
  Node* last() const;
  // The output node, or nullptr.
  Node* output_node() const;

  // Creates a node at the insertion point. The name is `name` when given
  // (made unique), else derived from the target as torch.fx does.
  Node* create_node(Opcode op, std::string_view target, Node::Args args = {},
                    Node::Kwargs kwargs = {},
                    std::optional<std::string_view> name = std::nullopt,
                    std::string_view type = {});
  Node* placeholder(std::string_view name, std::string_view type = {},
                    std::optional<Argument> default_value = std::nullopt);
  Node* get_attr(std::string_view qualified_name, std::string_view type = {});
  Node* call_module(std::string_view module_name, Node::Args args = {},
                    Node::Kwargs kwargs = {}, std::string_view type = {});
  Node* call_method(std::string_view method_name, Node::Args args = {},
                    Node::Kwargs kwargs = {}, std::string_view type = {});
  Node* call_function(std::string_view the_function, Node::Args args = {},
                      Node::Kwargs kwargs = {}, std::string_view type = {});
  Node* output(Argument result, std::string_view type = {});

  // Insertion points, as RAII guards:
  //   { auto ip = g.inserting_before(n); g.call_function(...); }
  // inserting_before(nullptr) inserts at the beginning,
  // inserting_after(nullptr) at the end. As in torch.fx, inserting_after(n)
  // puts each new node right after n (so consecutive nodes end up in reverse
  // creation order).
  InsertPoint inserting_before(Node* n = nullptr);
  InsertPoint inserting_after(Node* n = nullptr);

  // The insertion point without the RAII guard (for the C ABI): new nodes go
  // just before `anchor` (after == false) or just after it. A null anchor
  // stands for the graph's ends: before null is the end (the default), after
  // null is the start. Throws FxError for a node of another graph.
  void set_insert_point(Node* anchor, bool after);
  std::pair<Node*, bool> insert_point() const;

  // Erases a node that has no users. Throws FxError (torch.fx's message) when
  // it still has users or belongs to another graph; the graph is unchanged.
  void erase_node(Node* node);

  // Copies `node` (from any graph) here; its node arguments are mapped through
  // `arg_transform` (identity when empty). Meta is copied.
  Node* node_copy(const Node* node,
                  const std::function<Argument(Node*)>& arg_transform = {});

  using ValueMap = absl::flat_hash_map<const Node*, Node*>;
  // Copies every node of `g` not already in `val_map` (inlining `g` here),
  // recording old -> new in `val_map`. Returns the mapped output value (and,
  // with output_node, sets *output_node to g's output node); std::nullopt
  // when g has no output.
  std::optional<Argument> graph_copy(const Graph& g, ValueMap& val_map,
                                     const Node** output_node = nullptr);
  // A deep copy, with its own namespace, codegen and output node.
  std::unique_ptr<Graph> deepcopy(ValueMap* memo = nullptr) const;

  // A deepcopy that also carries this graph's namespace, insertion point
  // aside: nodes created in the copy get exactly the names they would get
  // here. The pass manager restores a graph from one when a pass fails.
  std::unique_ptr<Graph> snapshot() const;
  // Marks every name `other`'s namespace has handed out as used here too, so
  // a graph rebuilt from a file names new nodes as `other` would (the pass
  // manager's isolated passes send their result back as a file).
  void reserve_names_of(const Graph& other);

  // Gives nodes[i] the name names[i], for every i at once: a node may take a
  // name another node of the batch gives up (a swap) or one an erased node
  // had. Each name must be a legal node name (Namespace::is_legal_node_name)
  // and unique among the live nodes afterwards; the nodes live nodes of this
  // graph, each once. Throws FxError naming the entry, and then nothing has
  // changed. O(nodes of the graph + the batch).
  void rename_nodes(const std::vector<Node*>& nodes,
                    const std::vector<std::string_view>& names);
  // From now on names new nodes as a graph freshly built from its live nodes
  // would (what a retrace by torch.fx's Transformer gives): the names of
  // erased nodes, and names given up by renames, are free again. O(nodes).
  void reset_namespace();

  // Erases nodes without users that are not impure, last to first. Lints
  // first. Returns whether anything changed.
  bool eliminate_dead_code();

  // Checks the invariants torch.fx's lint checks, with its messages:
  // use before definition, nodes or arguments from another graph, duplicate
  // names, and (with an owning module) call_function/get_attr/call_module
  // targets. Throws FxError.
  void lint() const;

  // Live nodes with this opcode and target, in graph order, found through the
  // target index (no scan of the graph). The first call builds the index
  // (O(nodes)); edits keep it up to date from then on.
  std::vector<Node*> find_nodes(Opcode op, std::string_view target) const;

  // print(graph): "graph():\n    %x : [num_users=1] =
  // placeholder[target=x]...".
  std::string str() const;
  // print_tabular(): torch.fx's columns (opcode, name, target, args, kwargs)
  // in tabulate's "simple" layout.
  std::string tabular() const;

  // The graph's code generator (a CodeGen unless set_codegen replaced it).
  CodeGen& codegen() const { return *codegen_; }
  void set_codegen(std::unique_ptr<CodeGen> codegen);
  // graph.python_code(root_module): source and globals.
  PythonCode python_code(std::string_view root_module = "self") const;

  // The module that owns this graph (a GraphModule), or nullptr.
  // A number a host attaches to the graph (the C ABI's handle slot; 0:
  // none). While it is non-zero, the process's LifetimeListener is told
  // when the graph is destroyed (lifetime_listener.h).
  uint32_t external_slot() const { return external_slot_; }
  void set_external_slot(uint32_t slot) const { external_slot_ = slot; }

  const GraphOwner* owning_module() const { return owner_; }
  void set_owning_module(const GraphOwner* owner) { owner_ = owner; }

  const Namespace& graph_namespace() const { return namespace_; }

  // Frees erased nodes. Handles to them become dangling.
  void purge_erased_nodes();

 private:
  friend class Node;
  void insert(Node* n);
  detail::TargetEntry* intern_target(std::string_view target);
  void index_node(Node* n, detail::TargetEntry* entry);
  void unindex_node(Node* n);
  void renumber() const;
  // create_node's last steps, shared with copy_named: names the node
  // (`name` is a view this graph's namespace handed out), indexes it under
  // `target`, types it, sets its arguments and inserts it.
  Node* add_node(std::unique_ptr<Node> node, std::string_view name,
                 std::string_view target, std::string_view type,
                 std::string_view type_text, Node::Args args,
                 Node::Kwargs kwargs);
  // snapshot()'s copy of `from`, its node arguments mapped through `map`:
  // named as `from` is (its name must be a view of this namespace's shared
  // storage), its type and meta shared. Arguments are not checked again.
  Node* copy_named(const Node& from, const std::function<Argument(Node*)>& map);
  // graph_copy's loop: copies g's nodes that `find` (g's node -> its copy or
  // null) does not know yet, telling `record` each new copy.
  template <typename Find, typename Record>
  std::optional<Argument> copy_nodes(const Graph& g, const Find& find,
                                     const Record& record,
                                     const Node** output_node);

  std::unique_ptr<Node> sentinel_;
  // The sentinel's target entry: it only tells the sentinel (and a node being
  // created, until it is indexed) which graph it belongs to.
  detail::TargetEntry sentinel_entry_;
  // New nodes go before insert_anchor_ (or after it, when !insert_before_).
  Node* insert_anchor_;
  bool insert_before_ = true;
  size_t size_ = 0;
  mutable bool order_valid_ = false;
  // Whether each TargetEntry lists its nodes (find_nodes' index): built by
  // the first find_nodes, so a graph nobody searches does not pay for it.
  mutable bool nodes_indexed_ = false;
  mutable uint32_t external_slot_ = 0;
  Namespace namespace_;
  absl::flat_hash_map<std::string_view, std::unique_ptr<detail::TargetEntry>>
      targets_;
  std::vector<std::unique_ptr<Node>> erased_;
  std::unique_ptr<CodeGen> codegen_;
  const GraphOwner* owner_ = nullptr;
};

// Target names of side-effectful functions that DCE keeps (torch.fx's
// _side_effectful_functions); code outside fx_core may add to the set.
bool is_side_effectful_function(std::string_view target);
void register_side_effectful_function(std::string_view target);

}  // namespace fx

#endif  // FX_CORE_IR_GRAPH_H_
