// The shape environment a symbolic graph runs under (make_fx's symbolic
// mode), and the check of real inputs against it before a run.
//
// A graph is symbolic when a placeholder's meta['tensor_meta'] has a
// symbolic size ({"symint": "t0.size(0)"} in the file). Its environment
// declares every placeholder with a tensor_meta as an input of those sizes
// (symbols, integers the capture specialised, expressions) and adds the
// hints and guards a capture recorded (`declared`: what torch 1.13's
// gm.shape_env held, or a file's "shape_env"). A graph with only concrete
// tensor_meta (shape_prop's) has none: it runs on any shape, as before.
#ifndef FX_CORE_RUNTIME_SHAPE_GUARDS_H_
#define FX_CORE_RUNTIME_SHAPE_GUARDS_H_

#include <ATen/core/ivalue.h>

#include <memory>
#include <string_view>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/symbolic/shape_env.h"

namespace fx {

// The environment of `graph` (nullptr when it is not symbolic), with
// `declared`'s hints and guards (may be nullptr). Throws FxError naming the
// placeholder whose tensor_meta holds a malformed size.
std::shared_ptr<const sym::ShapeEnv> graph_shape_env(
    const Graph& graph, const sym::ShapeEnv* declared);

// Checks the positional inputs (one per placeholder, in order) against
// `env`; throws FxError with the environment's message (the placeholder,
// the dimension, the guard) when they break it.
void check_shape_guards(const sym::ShapeEnv& env, const Graph& graph,
                        const std::vector<c10::IValue>& inputs);
// The same for inputs named by `placeholders` (one per input, in order: the
// graph's placeholders when `env` was derived from it).
void check_shape_guards(const sym::ShapeEnv& env,
                        const std::vector<std::string_view>& placeholders,
                        const std::vector<c10::IValue>& inputs);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_SHAPE_GUARDS_H_
