// Passes that declare API version 6's FxPassInfo fields through the C++
// wrapper (PassDef::tolerance, PassDef::idempotent), for fx plugin-check's
// tests: each keeps or breaks exactly what it declares.
//   scale_output      output * (1 + 1e-3), declares rtol 1e-2: within it
//                     (beyond plugin-check's default rtol of 1e-5);
//   scale_too_far     output * (1 + 1e-2), declares rtol 1e-4: beyond it;
//   stamp_once        sets meta['stamped'] = True on the output, declared
//                     idempotent: a second run changes nothing;
//   stamp_again       adds 1 to meta['stamps'] on the output, declared
//                     idempotent: a second run changes the graph.
#include <cstdint>

#include "fx/plugin_api.hpp"

namespace {

// output(x) -> output(x * factor) when the graph returns one node.
bool scale_output_by(fxp::Graph& g, double factor) {
  fxp::Node out = g.output_node();
  fxp::ArgView result = out.arg(0);
  if (!result.is_node()) return false;
  fxp::Node x = result.node();
  auto guard = g.inserting_before(out);
  fxp::Value scaled = fxp::Value(x) * factor;
  out.update_arg(0, fxp::Arg(scaled.node()));
  return true;
}

bool scale_output(fxp::Graph& g, const fxp::Options&) {
  return scale_output_by(g, 1 + 1e-3);
}

bool scale_too_far(fxp::Graph& g, const fxp::Options&) {
  return scale_output_by(g, 1 + 1e-2);
}

bool stamp_once(fxp::Graph& g, const fxp::Options&) {
  fxp::Node out = g.output_node();
  if (out.meta("stamped")) return false;
  out.set_meta("stamped", fxp::Arg(true));
  return true;
}

bool stamp_again(fxp::Graph& g, const fxp::Options&) {
  fxp::Node out = g.output_node();
  fxp::ArgView stamps = out.meta("stamps");
  int64_t count = stamps ? stamps.as_int() : 0;
  out.set_meta("stamps", fxp::Arg(count + 1));
  return true;
}

}  // namespace

FXP_PLUGIN("declaring", "1.0",
           fxp::pass<scale_output>("scale_output",
                                   "output * 1.001, within its tolerance")
               .tolerance(1e-2, 1e-5)
               .invalidates({"tensor_meta"}),
           fxp::pass<scale_too_far>("scale_too_far",
                                    "output * 1.01, beyond its tolerance")
               .tolerance(1e-4, 1e-6)
               .invalidates({"tensor_meta"}),
           fxp::pass<stamp_once>("stamp_once",
                                 "marks the output once (idempotent)")
               .idempotent(),
           fxp::pass<stamp_again>("stamp_again",
                                  "counts its runs in the output's meta "
                                  "(declared idempotent, is not)")
               .idempotent())
