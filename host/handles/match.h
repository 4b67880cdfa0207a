// FxMatch, the C ABI's view of a subgraph match (or of a replacement made):
// what GraphMatchPattern / GraphReplacePattern lend a plugin's callback.
// Private to the host's C ABI (host/capi). A plugin holds it as a checked
// handle (wrap.h), valid for the duration of the callback only: the host
// forgets it when the callback returns (ScopedMatch), so a match kept longer,
// and the arguments borrowed from it, are refused.
#ifndef HOST_HANDLES_MATCH_H_
#define HOST_HANDLES_MATCH_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "fx_core/ir/argument.h"

namespace fx {
class Node;
}  // namespace fx

struct FxMatch {
  const std::vector<std::pair<const fx::Node*, fx::Argument>>* nodes_map;
  fx::Node* anchor;
  const std::vector<fx::Node*>* replacements;

  // The handle table's slot (HandleTable::handle_of).
  uint32_t external_slot() const { return slot; }
  void set_external_slot(uint32_t s) const { slot = s; }
  mutable uint32_t slot = 0;
};

#endif  // HOST_HANDLES_MATCH_H_
