// Small helpers the IR suites share: node names in order, and the message of
// the FxError a call throws.
#ifndef TESTS_TESTING_GRAPH_HELPERS_H_
#define TESTS_TESTING_GRAPH_HELPERS_H_

#include <string>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/support/error.h"

namespace fx::testing {

using Names = std::vector<std::string>;

// The names of `nodes` (any range of Node pointers), in order.
template <typename Container>
Names names_of(const Container& nodes) {
  Names out;
  for (const Node* n : nodes) out.emplace_back(n->name());
  return out;
}

// The graph's live nodes' names, in graph order.
inline Names graph_order(const Graph& g) {
  return names_of(g.nodes().to_vector());
}

// Calls fn and returns the FxError message it throws ("" when none).
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const FxError& e) {
    return e.what();
  }
  return "";
}

}  // namespace fx::testing

#endif  // TESTS_TESTING_GRAPH_HELPERS_H_
