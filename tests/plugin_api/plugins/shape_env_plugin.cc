// Reads a symbolic graph's shape environment through the C ABI (version 8)
// with the C++ wrapper, as a pass that needs symbolic shapes would, and
// writes what it read into the output node's meta for the test to compare
// with torch's own ShapeEnv:
//   "format_guards"   ShapeEnv::format_guards()
//   "relations"       each guard's relation, one a line
//   "symbols"         "NAME HINT PLACEHOLDER DIM" lines ("-" for none)
//   "check"           "ok" or the error checking the example inputs gives
//   "symint_sizes"    how many placeholder sizes in tensor_meta are symints
//   "doubled"         a symint made from the first symbol: 2*SYMBOL
// A graph that is not symbolic gets "format_guards" = "not symbolic".
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"

namespace {

std::string symbol_lines(const fxp::ShapeEnv& env) {
  std::string out;
  for (const fxp::ShapeEnv::Symbol& s : env.symbols()) {
    out += s.name + " " + (s.hint ? std::to_string(*s.hint) : "-") + " ";
    out += s.source
               ? s.source->placeholder + " " + std::to_string(s.source->dim) +
                     (s.source->stride ? " stride" : "")
               : "- -";
    out += "\n";
  }
  return out;
}

std::string relation_lines(const fxp::ShapeEnv& env) {
  std::string out;
  for (const fxp::ShapeEnv::Guard& g : env.guards()) out += g.relation + "\n";
  return out;
}

std::string check_examples(const fxp::Graph& g, const fxp::ShapeEnv& env) {
  std::vector<fxp::Tensor> inputs = fxp::example_inputs(g);
  std::vector<const DLTensor*> views;
  for (const fxp::Tensor& t : inputs) views.push_back(t ? &t.dl() : nullptr);
  try {
    env.check(views);
    return "ok";
  } catch (const fxp::Error& e) {
    return e.what();
  }
}

int64_t symint_sizes(const fxp::Graph& g) {
  int64_t count = 0;
  for (fxp::Node n : g) {
    if (n.op() != FX_OP_PLACEHOLDER) continue;
    fxp::ArgView meta = n.meta("tensor_meta");
    if (!meta) continue;
    for (size_t i = 0; i < meta.size(); ++i) {
      if (meta.key(i) != "shape") continue;
      for (size_t d = 0; d < meta[i].size(); ++d) {
        count += meta[i][d].is_symint() ? 1 : 0;
      }
    }
  }
  return count;
}

bool read_shape_env(fxp::Graph& g, const fxp::Options&) {
  fxp::Node out = g.output_node();
  fxp::ShapeEnv env = g.shape_env();
  if (!env) {
    out.set_meta("format_guards", fxp::Arg("not symbolic"));
    return true;
  }
  out.set_meta("format_guards", fxp::Arg(env.format_guards()));
  out.set_meta("relations", fxp::Arg(relation_lines(env)));
  out.set_meta("symbols", fxp::Arg(symbol_lines(env)));
  out.set_meta("check", fxp::Arg(check_examples(g, env)));
  out.set_meta("symint_sizes", fxp::Arg(symint_sizes(g)));
  std::string doubled = "2*" + env.symbols().at(0).name;
  out.set_meta("doubled", fxp::Arg::symint(doubled.c_str()));
  return true;
}

}  // namespace

FXP_PLUGIN("shape_env_plugin", "1.0",
           fxp::pass<read_shape_env>("read_shape_env",
                                     "writes the graph's shape environment "
                                     "into the output node's meta"))
