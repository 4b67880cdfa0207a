// Patterns and replacements written as C++ functions of fx::Value, traced
// with fx::symbolic_trace_function (torch.fx's replace_pattern(gm,
// pattern_fn, replacement_fn), which symbolic_traces both functions):
//
//   auto pattern = [](fx::Value w1, fx::Value w2) {
//     return fx::th::cat({w1, w2}).sum();
//   };
//   auto replacement = [](fx::Value w1, fx::Value w2) {
//     return fx::th::stack({w1, w2});
//   };
//   fx::replace_pattern(gm, pattern, replacement);
//
// A function takes fx::Value parameters and returns an fx::Value (several
// outputs as fx::Value::tuple({a, b})). Its parameters become the graph's
// placeholders, named by `signature` ("w1, w2"); without one they are named
// x (one parameter) or x0, x1, ... . Everything fx::symbolic_trace records
// can appear (torch.* and Tensor methods, operators, fx::F, fx::wrap-ped
// functions). The traced functions are GraphModules, so what the
// replacement's graph reads (a real tensor used in its body becomes a
// `_tensor_constantN` attribute) is copied into the rewritten module, as
// replace_pattern(gm, GraphModule, GraphModule) does.
#ifndef FX_CORE_REWRITE_PATTERN_FUNCTION_H_
#define FX_CORE_REWRITE_PATTERN_FUNCTION_H_

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/rewrite/subgraph_rewriter.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/strings.h"
#include "fx_core/tracer/functions.h"
#include "fx_core/tracer/proxy.h"
#include "fx_core/tracer/tracer.h"

namespace fx {

// Traces a pattern or replacement function (see above) into a GraphModule.
// Throws TraceError / FxError as fx::symbolic_trace does.
template <typename Fn>
std::shared_ptr<GraphModule> trace_pattern(const Fn& fn,
                                           std::string signature = {}) {
  constexpr size_t arity = detail::FunctionTraits<Fn>::kArity;
  if (signature.empty() && arity > 1) {
    for (size_t i = 0; i < arity; ++i) {
      fx::append(&signature, i ? ", " : "", "x", i);
    }
  }
  return symbolic_trace_function("pattern", std::move(signature), fn);
}

namespace detail {
template <typename Fn>
constexpr bool kIsPatternFunction =
    !std::is_convertible_v<const Fn&, const Graph&> &&
    !std::is_base_of_v<torch::nn::Module, Fn>;
}  // namespace detail

// replace_pattern_with_filters with functions: the traced pattern and
// replacement go in as GraphModules (what the replacement reads is copied
// into gm), filters see the traced pattern's graph, and each result keeps the
// traced pattern alive (ReplacedPatterns::pattern_owner).
template <
    typename PatternFn, typename ReplacementFn,
    typename = std::enable_if_t<detail::kIsPatternFunction<PatternFn> &&
                                detail::kIsPatternFunction<ReplacementFn>>>
std::vector<ReplacedPatterns> replace_pattern_with_filters(
    GraphModule& gm, const PatternFn& pattern, const ReplacementFn& replacement,
    const std::vector<MatchFilter>& match_filters,
    const RewriteOptions& options = {}) {
  std::shared_ptr<GraphModule> p = trace_pattern(pattern);
  std::shared_ptr<GraphModule> r = trace_pattern(replacement);
  std::vector<ReplacedPatterns> result =
      replace_pattern_with_filters(gm, *p, *r, match_filters, options);
  for (ReplacedPatterns& rp : result) rp.pattern_owner = p;
  return result;
}

// replace_pattern with functions (see subgraph_rewriter.h for the rest).
template <
    typename PatternFn, typename ReplacementFn,
    typename = std::enable_if_t<detail::kIsPatternFunction<PatternFn> &&
                                detail::kIsPatternFunction<ReplacementFn>>>
std::vector<ReplacedPatterns> replace_pattern(
    GraphModule& gm, const PatternFn& pattern, const ReplacementFn& replacement,
    const RewriteOptions& options = {}) {
  return replace_pattern_with_filters(gm, pattern, replacement, {}, options);
}

}  // namespace fx

#endif  // FX_CORE_REWRITE_PATTERN_FUNCTION_H_
