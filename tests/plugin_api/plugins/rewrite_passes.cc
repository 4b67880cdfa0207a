// Subgraph rewriting through the C ABI: patterns and replacements written
// with the wrapper's Values (the proxy API), as torch.fx's tests write them
// in Python (tests/fx_core/rewrite/rewrite_cases.py has the Python twins).
#include <string>

#include "fx/plugin_api.hpp"

namespace {

fxp::Value call(const char* target, std::vector<fxp::Arg> args) {
  fxp::Value first = args.front().view().node();
  return first.graph().call_function(target, args);
}

// docs_basic_usage: torch.cat([w1, w2]).sum() -> torch.stack([w1, w2]).
bool cat_sum_to_stack(fxp::Graph& g, const fxp::Options&) {
  fxp::OwnedGraph pattern, replacement;
  {
    fxp::Value w1 = pattern.placeholder("w1"), w2 = pattern.placeholder("w2");
    fxp::Value cat =
        pattern.view().call_function("torch.cat", {fxp::Arg::list({w1, w2})});
    pattern.output(cat.call_method("sum"));
  }
  {
    fxp::Value w1 = replacement.placeholder("w1");
    fxp::Value w2 = replacement.placeholder("w2");
    replacement.output(replacement.view().call_function(
        "torch.stack", {fxp::Arg::list({w1, w2})}));
  }
  return fxp::replace_pattern(g, pattern, replacement) > 0;
}

// overlapping_matches: sigmoid(sigmoid(x)) -> exp(x), on four sigmoids.
bool sigmoid_pairs_to_exp(fxp::Graph& g, const fxp::Options&) {
  fxp::OwnedGraph pattern, replacement;
  fxp::Value x = pattern.placeholder("x");
  pattern.output(call("torch.sigmoid", {call("torch.sigmoid", {x})}));
  fxp::Value y = replacement.placeholder("x");
  replacement.output(call("torch.exp", {y}));
  return fxp::replace_pattern(g, pattern, replacement) > 0;
}

// oneliner_pattern: torch.neg(x) -> torch.relu(x), and every match reported
// (meta['matched_by'] on the anchor's replacement).
bool neg_to_relu(fxp::Graph& g, const fxp::Options&) {
  fxp::OwnedGraph pattern, replacement;
  fxp::Value x = pattern.placeholder("x");
  pattern.output(call("torch.neg", {x}));
  fxp::Value y = replacement.placeholder("x");
  replacement.output(call("torch.relu", {y}));
  size_t matches = 0;
  fxp::match_pattern(
      g, pattern, [&](const fxp::Match& m) { matches += m.anchor() ? 1 : 0; });
  size_t done = fxp::replace_pattern(g, pattern, replacement);
  if (done != matches) throw fxp::Error(FX_INTERNAL, "match count differs");
  return done > 0;
}

// Literals as wildcards: x + <any number> -> x * 2.
bool add_literal_to_double(fxp::Graph& g, const fxp::Options&) {
  fxp::OwnedGraph pattern, replacement;
  fxp::Value x = pattern.placeholder("x");
  pattern.output(x + 1);
  fxp::Value y = replacement.placeholder("x");
  replacement.output(y * 2);
  return fxp::replace_pattern(g, pattern, replacement,
                              FX_REWRITE_IGNORE_LITERALS) > 0;
}

}  // namespace

FXP_PLUGIN("rewrite_passes", "1.0",
           fxp::pass<cat_sum_to_stack>("cat_sum_to_stack",
                                       "torch.cat([a, b]).sum() -> stack"),
           fxp::pass<sigmoid_pairs_to_exp>("sigmoid_pairs_to_exp",
                                           "sigmoid(sigmoid(x)) -> exp(x)"),
           fxp::pass<neg_to_relu>("neg_to_relu", "neg(x) -> relu(x)"),
           fxp::pass<add_literal_to_double>("add_literal_to_double",
                                            "x + c -> x * 2, any c"))
