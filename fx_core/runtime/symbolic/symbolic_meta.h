// Symbolic shape propagation driven by a shape environment, and its result
// written into the graph as torch.fx's passes leave it.
//
// symbolic_shape_prop(gm, env): the inputs are `env`'s placeholders with
// their declared sizes (a symbolic graph's own, graph_shape_env(), or sizes
// a user named: `Bx3x224x224`); every symbol needs a hint in `env`. The
// examples run at the hints are meta tensors of the hint sizes with the
// dtype of the placeholder's tensor_meta (float32 without one). A
// placeholder `env` does not declare must be a tensor with a tensor_meta of
// concrete sizes. Then every node gets, as ShapeProp / make_fx leave them,
// meta['type'] (type(result); torch.SymIntNode for a symbolic int) and:
//  - a tensor: meta['tensor_meta'] {shape, dtype, stride, requires_grad,
//    memory_format} with symbolic sizes as symints (stride left out when
//    not known, see symbolic_shape_prop.h);
//  - a tuple or list holding tensors: a tuple of those dicts;
//  - a symbolic int (sym_size and its arithmetic): meta['val'].
// Nothing is written unless the whole propagation succeeds (FxError names
// the node; the graph is unchanged). Returns the guards taken.
#ifndef FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_META_H_
#define FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_META_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "fx_core/symbolic/shape_env.h"
#include "fx_core/symbolic/sym_relation.h"

namespace fx {

class GraphModule;

std::vector<sym::Relation> symbolic_shape_prop(GraphModule& gm,
                                               const sym::ShapeEnv& env);

// A placeholder's sizes as text, "Bx3x224x224": integers, symbols and
// expressions (2*B) separated by 'x'. The error names the size that does not
// parse.
absl::StatusOr<std::vector<sym::Expr>> parse_sizes_text(std::string_view text);

// Sets a symbol's hint for a propagation: the symbol must be one the
// inputs' sizes name, and the value at least 2 (sizes 0 and 1 are
// specialised). Throws FxError naming the symbol otherwise.
void set_symbol_hint(sym::ShapeEnv& env, std::string_view symbol,
                     int64_t value);

// Gives each symbol of `env`'s inputs that has no hint a default one: 64,
// 96, 128, ... in the order the symbols appear (distinct, so that no two
// symbols look equal at the hints, and divisible by 32, so that halving
// and quartering sizes stay exact).
void assign_default_hints(sym::ShapeEnv& env);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_SYMBOLIC_SYMBOLIC_META_H_
