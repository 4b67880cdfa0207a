// fx::LifetimeListener: who is told that an observed node or graph is being
// destroyed. The C ABI's handle table (host/capi/handle_table.h) is
// the one listener: it observes every node and graph it hands to a plugin,
// so that a handle kept after its object was destroyed (a rolled-back or
// released graph, a purged node) is refused instead of used after free.
//
// Contract:
//  - Only objects with an external slot (Node::set_external_slot(),
//    Graph::set_external_slot()) are reported: an object without one pays
//    one test when it is destroyed.
//  - node_destroyed / graph_destroyed are called from the destructor, before
//    the object's memory is freed; the listener may read the object's
//    external slot, nothing else, and must not throw.
//  - One listener per process, set once (set_lifetime_listener) before any
//    object is observed; it must outlive every observed object.
#ifndef FX_CORE_IR_LIFETIME_LISTENER_H_
#define FX_CORE_IR_LIFETIME_LISTENER_H_

namespace fx {

class Graph;
class Node;

class LifetimeListener {
 public:
  virtual void node_destroyed(const Node* node) noexcept = 0;
  virtual void graph_destroyed(const Graph* graph) noexcept = 0;

 protected:
  ~LifetimeListener() = default;
};

// Sets the process's listener (nullptr: none).
void set_lifetime_listener(LifetimeListener* listener);

namespace detail {
void notify_node_destroyed(const Node* node) noexcept;
void notify_graph_destroyed(const Graph* graph) noexcept;
}  // namespace detail

}  // namespace fx

#endif  // FX_CORE_IR_LIFETIME_LISTENER_H_
