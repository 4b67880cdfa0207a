// Patterns and replacements written as C++ functions of fx::Value, traced
// into Graphs (torch.fx's replace_pattern(gm, pattern_fn, replacement_fn),
// which symbolic_traces both functions):
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
// functions); a real tensor in the body becomes a get_attr of a tensor
// constant, which the matcher compares by name only.
#ifndef FX_CORE_REWRITE_PATTERN_FUNCTION_H_
#define FX_CORE_REWRITE_PATTERN_FUNCTION_H_

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fx_core/graph.h"
#include "fx_core/graph_module.h"
#include "fx_core/rewrite/subgraph_rewriter.h"
#include "fx_core/tracer/functions.h"
#include "fx_core/tracer/proxy.h"
#include "fx_core/tracer/tracer.h"

namespace fx {

using ValueFunction = std::function<Value(const std::vector<Value>&)>;

// Traces `body` (taking `arity` Values) into a Graph. Throws TraceError /
// FxError as fx::symbolic_trace does.
std::unique_ptr<Graph> trace_function(size_t arity, const ValueFunction& body,
                                      std::string signature = {});

// Traces a function or lambda of fx::Values.
template <typename Fn>
std::unique_ptr<Graph> trace_function(const Fn& fn,
                                      std::string signature = {}) {
  constexpr size_t arity = detail::FunctionTraits<Fn>::kArity;
  return trace_function(
      arity,
      [&fn](const std::vector<Value>& args) {
        return detail::call_with_values(fn, "pattern function", args);
      },
      std::move(signature));
}

namespace detail {
template <typename Fn>
constexpr bool kIsPatternFunction =
    !std::is_convertible_v<const Fn&, const Graph&> &&
    !std::is_base_of_v<torch::nn::Module, Fn>;
}  // namespace detail

// replace_pattern / replace_pattern_with_filters with functions (see
// subgraph_rewriter.h for the rest).
template <
    typename PatternFn, typename ReplacementFn,
    typename = std::enable_if_t<detail::kIsPatternFunction<PatternFn> &&
                                detail::kIsPatternFunction<ReplacementFn>>>
std::vector<ReplacedPatterns> replace_pattern_with_filters(
    GraphModule& gm, const PatternFn& pattern, const ReplacementFn& replacement,
    const std::vector<MatchFilter>& match_filters,
    const RewriteOptions& options = {}) {
  std::unique_ptr<Graph> p = trace_function(pattern);
  std::unique_ptr<Graph> r = trace_function(replacement);
  return replace_pattern_with_filters(gm, *p, *r, match_filters, options);
}

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
