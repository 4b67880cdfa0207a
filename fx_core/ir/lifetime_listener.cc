#include "fx_core/ir/lifetime_listener.h"

#include <atomic>

namespace fx {

namespace {
std::atomic<LifetimeListener*> the_listener{nullptr};
}  // namespace

void set_lifetime_listener(LifetimeListener* listener) {
  the_listener.store(listener, std::memory_order_release);
}

namespace detail {

void notify_node_destroyed(const Node* node) noexcept {
  LifetimeListener* l = the_listener.load(std::memory_order_acquire);
  if (l != nullptr) l->node_destroyed(node);
}

void notify_graph_destroyed(const Graph* graph) noexcept {
  LifetimeListener* l = the_listener.load(std::memory_order_acquire);
  if (l != nullptr) l->graph_destroyed(graph);
}

}  // namespace detail
}  // namespace fx
