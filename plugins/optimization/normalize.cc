// torch 1.13's torch.fx.experimental.normalize.NormalizeArgs (with
// torch.fx.operator_schemas.normalize_function and normalize_module): each
// call_function and call_module node's arguments matched to the callee's
// signature and rewritten as keyword arguments in the signature's order,
// defaults filled in (or, with normalize_to_only_use_kwargs false, the
// positional arguments kept and the rest so).
//
// Where the signature comes from, as torch decides it:
//  - a Python function (torch.nn.functional.relu, torch.functional.split,
//    torch._assert): its inspect.signature, which the host knows as the
//    signature it binds the call to (TargetSignature);
//  - a builtin naming ATen operators (torch.add, torch._C._nn.linear,
//    torch.ops.aten.add.Tensor, torch.ops.aten.add): every schema of the
//    operator (one for an overload), `self` named `input`; the call is
//    normalized when exactly one binds, or else by the first whose
//    annotations the arguments' types match (python_types.h);
//  - a module whose class is torch.nn.NAME: its forward's signature.
// Everything else (operator.*, math.*, call_method, a module of another
// class, torch.nonzero, which torch's table overrides without answering)
// keeps its arguments. Like torch's Transformer, the pass records every
// node afresh: nodes are named again from their targets (retrace.h), keep
// their type and meta, and the output node loses its type.
//
// Where torch 1.13 is wrong, an option says so and the default differs:
//  - node_type_for_args: torch types every positional node argument of a
//    call with the meta['type'] of the node being normalized
//    (NormalizeArgs.run_node's get_type reads n.meta, not the argument's)
//    and every keyword one as a Proxy (it types the Transformer's values),
//    which matches nothing; by default each node argument has its own
//    meta['type']; true reproduces torch;
//  - ops_self_as_input: torch renames an ATen schema's `self` to `input`
//    for torch.ops targets too, which the operator then refuses
//    ("aten::relu() is missing value for argument 'self'"). By default a
//    torch.ops.* call keeps `self` as its first positional argument (the
//    one way to pass it: OpOverload.__call__ cannot take `self` by
//    keyword), so the graph still runs; true renames as torch does.
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/op_schema.h"
#include "plugins/optimization/passes.h"
#include "plugins/optimization/python_types.h"
#include "plugins/optimization/retrace.h"

namespace fx_optimization {
namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

// One parameter of the signature a call is normalized to.
struct Param {
  std::string name;
  bool keyword_only = false;
  bool variadic = false;  // *args or **kwargs: torch does not normalize
  std::optional<Arg> default_value;
  PyType annotation;  // schemas only
};
using Signature = std::vector<Param>;

[[noreturn]] void refuse(const Node& n, const std::string& what) {
  throw fxp::Error(FX_INVALID_ARGUMENT,
                   "normalize_args: node '" + std::string(n.name()) + "' (" +
                       std::string(n.target()) + "): " + what);
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// ------------------------------------------------------------- signatures

Signature from_python(const std::vector<fxp::SignatureParam>& params) {
  Signature sig;
  for (const fxp::SignatureParam& p : params) {
    Param param;
    param.name = p.name;
    param.keyword_only = p.kind == "KEYWORD_ONLY";
    param.variadic = p.kind == "VAR_POSITIONAL" || p.kind == "VAR_KEYWORD";
    param.default_value = p.default_value;
    sig.push_back(std::move(param));
  }
  return sig;
}

Arg schema_scalar(std::string_view text, bool is_float) {
  if (text == "None") return Arg();
  if (text == "True") return Arg(true);
  if (text == "False") return Arg(false);
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'')) {
    return Arg(std::string(text.substr(1, text.size() - 2)));
  }
  const std::string s(text);
  if (is_float || s.find_first_of(".eEna") != std::string::npos) {
    return Arg(std::stod(s));
  }
  return Arg(static_cast<int64_t>(std::stoll(s)));
}

// A schema default as torch's argument.default_value holds it: "1." is
// 1.0, a float argument's "1" too, "int[2] stride=1" is [1, 1].
Arg schema_default(std::string_view text,
                   const fx_plugins::SchemaArgument& arg) {
  const bool is_float = starts_with(arg.type, "float");
  const bool is_list = arg.type.find("[]") != std::string::npos;
  if (text.size() >= 2 && text.front() == '[') {
    std::vector<Arg> items;
    for (std::string_view part : fx_plugins::schema_detail::split_top_level(
             text.substr(1, text.size() - 2))) {
      items.push_back(schema_scalar(part, is_float));
    }
    return Arg::list(items);
  }
  Arg scalar = schema_scalar(text, is_float);
  if (!is_list || scalar.view().is_none() || arg.list_size == 0) return scalar;
  return Arg::list(std::vector<Arg>(arg.list_size, scalar));
}

Signature from_schema(const fx_plugins::OperatorSchema& schema,
                      bool self_as_input) {
  Signature sig;
  for (const fx_plugins::SchemaArgument& a : schema.arguments) {
    Param param;
    param.name = a.name == "self" && self_as_input ? "input" : a.name;
    param.keyword_only = a.kwarg_only;
    if (a.default_value) {
      param.default_value = schema_default(*a.default_value, a);
    }
    param.annotation = annotation_of_schema_type(a.type);
    sig.push_back(std::move(param));
  }
  return sig;
}

// ---------------------------------------------------------------- binding

// Python's Signature.bind for a call with `num_args` positionals and
// keywords `keys`: which parameter each argument fills, or the TypeError's
// message.
struct Binding {
  std::vector<int> source;  // per parameter: arg index, -1 - kwarg, or kNone
  std::string error;
};
constexpr int kNone = -1000000;

Binding bind(const Signature& sig, size_t num_args,
             const std::vector<std::string>& keys) {
  Binding b;
  b.source.assign(sig.size(), kNone);
  size_t positional = 0;
  for (size_t i = 0; i < num_args; ++i) {
    while (positional < sig.size() && sig[positional].keyword_only) {
      ++positional;
    }
    if (positional >= sig.size()) {
      b.error = "too many positional arguments";
      return b;
    }
    b.source[positional++] = static_cast<int>(i);
  }
  for (size_t k = 0; k < keys.size(); ++k) {
    size_t p = 0;
    while (p < sig.size() && sig[p].name != keys[k]) ++p;
    if (p == sig.size()) {
      b.error = "got an unexpected keyword argument '" + keys[k] + "'";
      return b;
    }
    if (b.source[p] != kNone) {
      b.error = "multiple values for argument '" + keys[k] + "'";
      return b;
    }
    b.source[p] = -1 - static_cast<int>(k);
  }
  for (size_t p = 0; p < sig.size(); ++p) {
    if (b.source[p] == kNone && !sig[p].default_value) {
      b.error = "missing a required argument: '" + sig[p].name + "'";
      return b;
    }
  }
  return b;
}

struct Call {
  std::vector<ArgView> args;
  std::vector<std::string> keys;
  std::vector<ArgView> values;
};

Call call_of(const Node& n) {
  Call c;
  c.args = n.args();
  for (size_t i = 0; i < n.num_kwargs(); ++i) {
    c.keys.push_back(n.kwarg_key(i));
    c.values.push_back(n.kwarg_value(i));
  }
  return c;
}

bool has_variadic(const Signature& sig) {
  for (const Param& p : sig) {
    if (p.variadic) return true;
  }
  return false;
}

// torch's _args_kwargs_to_normalized_args_kwargs on a binding that holds.
// Whether the call already passes `args` and `kwargs` (in that order).
bool unchanged(const Call& call, const std::vector<Arg>& args,
               const fxp::Kwargs& kwargs) {
  if (args.size() != call.args.size() || kwargs.size() != call.keys.size()) {
    return false;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!(args[i].view() == call.args[i])) return false;
  }
  for (size_t k = 0; k < kwargs.size(); ++k) {
    if (kwargs[k].first != call.keys[k] ||
        !(kwargs[k].second.view() == call.values[k])) {
      return false;
    }
  }
  return true;
}

// Rewrites the call as bound; false when it already reads so.
bool rewrite(Node& n, const Signature& sig, const Call& call, const Binding& b,
             bool only_kwargs) {
  std::vector<Arg> args;
  fxp::Kwargs kwargs;
  for (size_t p = 0; p < sig.size(); ++p) {
    const int s = b.source[p];
    Arg value = s == kNone ? *sig[p].default_value
                : s >= 0   ? Arg(call.args[s])
                           : Arg(call.values[-1 - s]);
    // torch.ops' `self` stays positional: OpOverload.__call__(self, ...)
    // cannot take it by keyword.
    const bool positional_self = p == 0 && sig[p].name == "self";
    if (positional_self || (!only_kwargs && p < call.args.size())) {
      args.push_back(std::move(value));
    } else {
      kwargs.emplace_back(sig[p].name, std::move(value));
    }
  }
  if (unchanged(call, args, kwargs)) return false;
  n.set_args(args);
  n.set_kwargs(kwargs);
  return true;
}

// Whether every argument the binding gives matches its annotation.
struct ArgTypes {
  NodeType positional;  // a node among the positional arguments
  NodeType keyword;     // a node given by keyword
};

bool types_match(const Signature& sig, const Call& call, const Binding& b,
                 const ArgTypes& types) {
  for (size_t p = 0; p < sig.size(); ++p) {
    const int s = b.source[p];
    if (s == kNone) continue;
    const PyType t = s >= 0 ? positional_type(call.args[s], types.positional)
                            : keyword_type(call.values[-1 - s], types.keyword);
    if (!type_matches(sig[p].annotation, t)) return false;
  }
  return true;
}

// normalize_function's builtin branch: the one schema the call binds to,
// or the first whose annotations its arguments' types match.
bool normalize_builtin(Node& n, const std::vector<Signature>& overloads,
                       bool only_kwargs, const ArgTypes& types) {
  const Call call = call_of(n);
  std::vector<std::pair<const Signature*, Binding>> bound;
  for (const Signature& sig : overloads) {
    Binding b = bind(sig, call.args.size(), call.keys);
    if (b.error.empty()) bound.emplace_back(&sig, std::move(b));
  }
  if (bound.size() == 1) {
    return rewrite(n, *bound[0].first, call, bound[0].second, only_kwargs);
  }
  // Several bind (none: nothing to do): torch takes the first, in schema
  // order, whose annotations the arguments' types match.
  for (const auto& [sig, b] : bound) {
    if (types_match(*sig, call, b, types)) {
      return rewrite(n, *sig, call, b, only_kwargs);
    }
  }
  return false;
}

// Normalizes to a Python signature: torch raises the bind's TypeError,
// here the pass's error naming the node.
bool normalize_python(Node& n, const Signature& sig, bool only_kwargs) {
  if (has_variadic(sig)) return false;
  const Call call = call_of(n);
  const Binding b = bind(sig, call.args.size(), call.keys);
  if (!b.error.empty()) refuse(n, b.error);
  return rewrite(n, sig, call, b, only_kwargs);
}

// The builtins torch binds to ATen schemas: torch.ops.*, torch.NAME, the
// C modules torch.* functions live in (torch._C._nn.linear), and the
// torch.nn.functional names that are C functions (F.pad), which the host
// gives no Python signature (a Python function of torch.nn.functional the
// host does not know has none either: such a graph does not run here).
bool names_schemas(std::string_view target) {
  if (starts_with(target, "torch.ops.") || starts_with(target, "torch._C.") ||
      starts_with(target, "torch.nn.functional.")) {
    return true;
  }
  return starts_with(target, "torch.") &&
         target.find('.', 6) == std::string_view::npos &&
         target != "torch.nonzero";
}

struct Settings {
  bool only_kwargs = true;
  bool ops_self_as_input = false;
  bool node_type_for_args = false;
};

// How node arguments are typed: each by its own meta['type'], or as torch
// 1.13 types them (node_type_for_args): a positional node by the meta of
// the node being normalized, a keyword one as the Transformer's Proxy it
// is there (a class no annotation names).
ArgTypes arg_types(const Node& n, const Settings& s) {
  if (!s.node_type_for_args) return {meta_type, meta_type};
  const PyType own = meta_type(n);
  PyType proxy;
  proxy.kind = PyType::Kind::kClass;
  proxy.cls = "Proxy";
  return {[own](const Node&) { return own; },
          [proxy](const Node&) { return proxy; }};
}

// What a callee binds to, found once per target (module type).
struct Callee {
  std::optional<Signature> python;   // a Python signature
  std::vector<Signature> overloads;  // else a builtin's schemas
};

class Callees {
 public:
  Callees(const Graph& g, const Settings& s) : g_(g), s_(s) {}

  const Callee& function(const std::string& target) {
    auto [it, added] = functions_.try_emplace(target);
    if (!added) return it->second;
    Callee& c = it->second;
    if (auto python = fxp::target_signature(g_, FX_OP_CALL_FUNCTION, target)) {
      c.python = from_python(*python);
    } else if (names_schemas(target)) {
      const bool self_as_input =
          !starts_with(target, "torch.ops.") || s_.ops_self_as_input;
      for (const auto& schema :
           fx_plugins::operator_schemas_of(target.c_str())) {
        c.overloads.push_back(from_schema(schema, self_as_input));
      }
    }
    return c;
  }

  // The forward's signature of the torch.nn module `target` calls, or
  // nullptr for a module of another class.
  const Signature* module(const Node& n) {
    const std::string target(n.target());
    std::string type;
    try {
      type = g_.module_type(target.c_str());
    } catch (const fxp::Error&) {
      refuse(n, "the module has no submodule '" + target + "'");
    }
    if (!starts_with(type, "torch.nn.") ||
        type.find('.', 9) != std::string::npos) {
      return nullptr;
    }
    auto [it, added] = modules_.try_emplace(type);
    if (added) {
      if (auto python = fxp::target_signature(g_, FX_OP_CALL_MODULE, target)) {
        it->second = from_python(*python);
      }
    }
    return it->second ? &*it->second : nullptr;
  }

 private:
  const Graph& g_;
  const Settings& s_;
  std::unordered_map<std::string, Callee> functions_;
  std::unordered_map<std::string, std::optional<Signature>> modules_;
};

bool normalize_node(Node& n, Callees& callees, const Settings& s) {
  if (n.op() == FX_OP_CALL_FUNCTION) {
    const Callee& c = callees.function(std::string(n.target()));
    if (c.python) return normalize_python(n, *c.python, s.only_kwargs);
    return normalize_builtin(n, c.overloads, s.only_kwargs, arg_types(n, s));
  }
  if (n.op() == FX_OP_CALL_MODULE) {
    const Signature* sig = callees.module(n);
    return sig != nullptr && normalize_python(n, *sig, s.only_kwargs);
  }
  if (n.op() == FX_OP_OUTPUT && !n.type().empty()) {
    n.set_type(nullptr);  // the Transformer's output has no type
    return true;
  }
  return false;
}

}  // namespace

bool normalize_args(Graph& g, const fxp::Options& options) {
  require_renaming("normalize_args");
  Settings s;
  s.only_kwargs = options.get_bool("normalize_to_only_use_kwargs");
  s.ops_self_as_input = options.get_bool("ops_self_as_input");
  s.node_type_for_args = options.get_bool("node_type_for_args");
  const Renames renames = retrace_names(g, {}, "normalize_args");
  bool changed = !renames.empty();
  Callees callees(g, s);
  for (Node n : g) changed |= normalize_node(n, callees, s);
  apply_retrace_names(g, renames);
  return changed;
}

}  // namespace fx_optimization
