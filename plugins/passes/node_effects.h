// What the graph passes of libfx_passes.so ask about a node's effects
// before they drop, merge or fold it (dce, cse, const_fold). Both questions
// read the host's NodeOperatorEffects (C ABI version 7: LibTorch's own
// declarations of an ATen operator) and Python's in-place spellings, which
// LibTorch does not know. Built from plugin_api/include alone.
#ifndef PLUGINS_PASSES_NODE_EFFECTS_H_
#define PLUGINS_PASSES_NODE_EFFECTS_H_

#include "fx/plugin_api.hpp"

namespace fx_passes {

// Whether `n` writes its first argument: an ATen operator whose schema
// marks a positional argument as written (NodeOperatorEffects), Python's
// in-place operators and setitem, an in-place method LibTorch does not
// know, or inplace=True.
bool mutates(const fxp::Node& n);

// Whether `n`'s value may not be shared (CSE never merges it, const_fold
// never folds it into an attribute): random draws (tag
// nondeterministic_seeded: two calls with the same arguments differ),
// mutations, and values a later node mutates (two equal-looking buffers,
// torch.empty(3) twice, must stay two buffers when one is written).
bool unsafe_to_share(const fxp::Node& n);

}  // namespace fx_passes

#endif  // PLUGINS_PASSES_NODE_EFFECTS_H_
