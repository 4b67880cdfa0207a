// torch 1.13's torch.fx.experimental.unify_refinements.
// infer_symbolic_types_single_pass (rounds=1): Refine.refine() gives every
// Dyn of every node's type a fresh variable ~0, ~1, ... (in graph order,
// dimensions left to right; a Dyn type itself becomes a variable), and the
// refinement rule of each node's target adds equality constraints between
// its input's and its own dimensions (Conv2d, Linear: the first; BatchNorm2d,
// ReLU: all; MaxPool2d, AdaptiveAvgPool2d: the first two; torch.add and
// operator.add: the broadcast operands' equal dimensions with the result's;
// torch.flatten: the dimensions it keeps). unify_eq solves them in order
// (unification's unify: each side walked through the substitution, a
// variable bound to the other side) and substitute_all_types replaces
// every variable with its solution. rounds=2 runs it twice, as
// infer_symbolic_types does; symbolic_relations=true then takes its last
// step (Refine.symbolic_relations): variables become sympy symbols and a
// Conv2d's spatial sizes expressions over its input's, each divided by its
// own stride (what the module outputs), or, with first_stride_for_both,
// both by stride[0] as torch 1.13's calculate_out_dimension does (a bug:
// conv_window.h).
//
// A variable prints as torch prints it (TensorType[(~1, 2)], ~3); the code
// spells it Dyn (torch.fx.tensor_type._DynType), the dimension it stands
// for being unknown there (torch 1.13 cannot generate code for a type with
// a variable: AttributeError: 'Var' object has no attribute '__name__').
// After the symbolic step torch can, and the code names each size, symbol
// and expression with the global torch's code generation gives it
// (GlobalNames). Every refined TensorType is of a tuple, as torch makes
// them.
//
// Errors (naming the pass and the node): a type whose graph text is not a
// gradual type, a Conv2d node whose types are not both tensors (torch's
// rule returns None: TypeError), arguments torch's rules assert on, and
// two different sizes the constraints make equal (unify fails).
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/optimization/conv_window.h"
#include "plugins/optimization/global_names.h"
#include "plugins/optimization/gradual_type.h"
#include "plugins/optimization/module_repr.h"
#include "plugins/optimization/passes.h"

namespace fx_optimization {
namespace {

using fxp::Graph;
using fxp::Node;

constexpr const char* kPass = "unify_refinements";
constexpr std::string_view kDynCode = "torch.fx.tensor_type._DynType";
constexpr std::string_view kTensorCode = "torch.fx.tensor_type.TensorType";

[[noreturn]] void fail(const Node& n, const std::string& what) {
  throw fxp::Error(
      FX_INVALID_ARGUMENT,
      std::string(kPass) + ": node '" + std::string(n.name()) + "': " + what);
}

// A dimension: a size, Dyn, or the variable ~value; after the symbolic
// step, the sympy symbol ~value, or a Conv2d's output size over one,
// floor((~value + offset) / stride) + 1.
struct Sym {
  enum class Kind { kSize, kDyn, kVar, kSymbol, kExpr };
  Kind kind = Kind::kDyn;
  int64_t value = 0;
  int64_t stride = 1;  // kExpr
  int64_t offset = 0;  // kExpr
  bool operator==(const Sym& o) const {
    if (kind != o.kind) return false;
    if (kind == Kind::kDyn) return true;
    return value == o.value &&
           (kind != Kind::kExpr || (stride == o.stride && offset == o.offset));
  }
  bool operator!=(const Sym& o) const { return !(*this == o); }
  bool is_var() const { return kind == Kind::kVar; }
};

// A node's type: none, a TensorType, a lone dimension (Dyn or a variable),
// or another annotation kept as it is.
struct SymType {
  enum class Kind { kNone, kTensor, kDim, kOther };
  Kind kind = Kind::kNone;
  std::vector<Sym> dims;  // kTensor; kDim: one
  bool changed = false;
  bool is_tensor() const { return kind == Kind::kTensor; }
};

// " + k", " - k", or nothing for 0, as sympy prints an Add's constant.
std::string signed_term(int64_t k, const std::string& denominator = "") {
  if (k == 0) return "";
  return (k > 0 ? " + " : " - ") + std::to_string(k > 0 ? k : -k) + denominator;
}

int64_t gcd(int64_t a, int64_t b) {
  a = a < 0 ? -a : a;
  while (b != 0) {
    const int64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

// floor((~v + c) / s) + 1 as sympy 1.11 prints it: the quotient expanded
// (~v/s + c/s, the fraction reduced), an integer c/s taken out of the
// floor, and the constants summed (floor(~v/2 - 1/2) + 1, floor(~7/3) - 2,
// floor(~5)).
std::string expr_repr(const Sym& e) {
  const std::string var = "~" + std::to_string(e.value);
  const int64_t s = e.stride, c = e.offset;
  if (c % s == 0) {
    const std::string inner = s == 1 ? var : var + "/" + std::to_string(s);
    return "floor(" + inner + ")" + signed_term(c / s + 1);
  }
  const int64_t g = gcd(c, s);
  return "floor(" + var + "/" + std::to_string(s) +
         signed_term(c / g, "/" + std::to_string(s / g)) + ") + 1";
}

std::string repr(const Sym& s) {
  switch (s.kind) {
    case Sym::Kind::kSize:
      return std::to_string(s.value);
    case Sym::Kind::kVar:
    case Sym::Kind::kSymbol:
      return "~" + std::to_string(s.value);
    case Sym::Kind::kExpr:
      return expr_repr(s);
    case Sym::Kind::kDyn:
      break;
  }
  return "Dyn";
}

// The class of a dimension as torch's messages print type(d) (sympy's
// function classes print as their bare names: floor).
std::string python_class(const Sym& s) {
  switch (s.kind) {
    case Sym::Kind::kSize:
      return "<class 'int'>";
    case Sym::Kind::kSymbol:
      return "<class 'sympy.core.symbol.Symbol'>";
    case Sym::Kind::kExpr:
      return s.offset % s.stride == 0 && s.offset / s.stride == -1
                 ? "floor"
                 : "<class 'sympy.core.add.Add'>";
    default:
      return "<class 'torch.fx.experimental.unification.variable.Var'>";
  }
}

// A dimension's code form: a size's global `_N`, Dyn's class for Dyn and
// for a variable (torch 1.13 cannot generate code for a Var); with
// `names` (after the symbolic step, when torch can), each object's global.
std::string code(const Sym& s, GlobalNames* names) {
  switch (s.kind) {
    case Sym::Kind::kSize:
      return names->size_name(s.value);
    case Sym::Kind::kSymbol:
      return names->name_of("symbol", repr(s));
    case Sym::Kind::kExpr:
      return names->name_of("expr", repr(s));
    default:
      return std::string(kDynCode);
  }
}

// One dimension as print(graph) shows it: 3, Dyn, ~4.
bool read_sym(std::string_view text, size_t* pos, Sym* out) {
  if (text.substr(*pos, 3) == "Dyn") {
    *pos += 3;
    *out = Sym{};
    return true;
  }
  const bool var = *pos < text.size() && text[*pos] == '~';
  size_t p = *pos + (var ? 1 : 0);
  int64_t v = 0;
  if (!read_int(text, &p, &v)) return false;
  *pos = p;
  *out = Sym{var ? Sym::Kind::kVar : Sym::Kind::kSize, v};
  return true;
}

// TensorType[(a, b)], TensorType[[a, b]], TensorType[torch.Size([a, b])].
bool read_tensor(std::string_view text, std::vector<Sym>* dims) {
  dims->clear();
  return read_tensor_dims(text, [&](std::string_view body, size_t* pos) {
    Sym s;
    if (!read_sym(body, pos, &s)) return false;
    dims->push_back(s);
    return true;
  });
}

// The code form's dimensions (_3, DynType): a type without graph text.
bool read_code(std::string_view type, std::vector<Sym>* dims) {
  std::string_view body = type.substr(kTensorCode.size());
  if (body.size() < 2 || body.front() != '[' || body.back() != ']') {
    return false;
  }
  body = body.substr(1, body.size() - 2);
  dims->clear();
  while (!body.empty()) {
    const size_t comma = body.find(',');
    const std::string_view item = body.substr(0, comma);
    size_t pos = 1;
    int64_t v = 0;
    if (item == kDynCode) {
      dims->push_back(Sym{});
    } else if (item.size() > 1 && item[0] == '_' && read_int(item, &pos, &v) &&
               pos == item.size() && v >= 0) {
      dims->push_back(Sym{Sym::Kind::kSize, v});
    } else {
      return false;
    }
    body = comma == std::string_view::npos ? std::string_view()
                                           : body.substr(comma + 1);
  }
  return true;
}

SymType parse(const Node& n) {
  SymType t;
  const std::string_view type = n.type();
  if (type.empty()) return t;
  std::string text = n.type_text();
  if (type == kDynCode) {
    size_t pos = 0;
    Sym s;
    if (text == kDynCode) text = "Dyn";
    if (!read_sym(text, &pos, &s) || pos != text.size()) {
      fail(n, "type text '" + text + "' is not Dyn or a variable");
    }
    t.kind = SymType::Kind::kDim;
    t.dims = {s};
    return t;
  }
  if (type.substr(0, kTensorCode.size()) != kTensorCode) {
    t.kind = SymType::Kind::kOther;
    return t;
  }
  t.kind = SymType::Kind::kTensor;
  if (!read_tensor(text, &t.dims) && !read_code(type, &t.dims)) {
    fail(n, "type text '" + text +
                "' is not a TensorType of sizes, Dyn and "
                "variables");
  }
  return t;
}

std::string repr(const SymType& t) {
  if (t.kind == SymType::Kind::kDim) return repr(t.dims[0]);
  std::string out = "TensorType[(";
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (i) out += ", ";
    out += repr(t.dims[i]);
  }
  if (t.dims.size() == 1) out += ',';
  return out + ")]";
}

std::string code(const SymType& t, GlobalNames* names) {
  if (t.kind == SymType::Kind::kDim) return code(t.dims[0], names);
  std::string out(kTensorCode);
  out += '[';
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (i) out += ',';
    out += code(t.dims[i], names);
  }
  return out + ']';
}

struct Equality {
  Sym lhs, rhs;
  Node node;  // whose rule made it
};

// Python's a[start:stop] bounds for a sequence of `size`.
std::pair<size_t, size_t> py_slice(int64_t start, int64_t stop, size_t size) {
  const auto n = static_cast<int64_t>(size);
  auto clamp = [n](int64_t i) {
    if (i < 0) i += n;
    return static_cast<size_t>(i < 0 ? 0 : (i > n ? n : i));
  };
  const size_t a = clamp(start), b = clamp(stop);
  return {a, b < a ? a : b};
}

class Refine {
 public:
  // `first_stride_for_both`: torch 1.13's division of a Conv2d's spatial
  // sizes both by stride[0] in symbolic_relations (conv_window.h's
  // out_stride).
  Refine(Graph& g, bool first_stride_for_both)
      : g_(g), first_stride_for_both_(first_stride_for_both) {}

  // One round: fresh variables, constraints, unification, substitution.
  void round() {
    next_var_ = 0;
    constraints_.clear();
    for (Node n : g_) refine_node(n);
    substitute(unify());
  }

  // Refine.symbolic_relations (infer_symbolic_types' last step), in graph
  // order: every variable becomes a sympy symbol (printed as the variable
  // was), a Conv2d's spatial sizes become expressions over its input's,
  // and the output's type is its value's again.
  void symbolic_relations() {
    symbolic_ = true;
    for (Node n : g_) {
      if (n.op() == FX_OP_OUTPUT) {
        refine_output(n);
        continue;
      }
      SymType& t = type_of(n);
      if (t.is_tensor() || t.kind == SymType::Kind::kDim) {
        for (Sym& s : t.dims) {
          if (s.is_var()) s.kind = Sym::Kind::kSymbol;
        }
        t.changed = true;
      }
      if (n.op() == FX_OP_CALL_MODULE && module_type(n) == "torch.nn.Conv2d") {
        conv_relations(n);
      }
    }
  }

  bool write() {
    bool changed = false;
    GlobalNames names(g_);
    for (Node n : g_) {
      auto it = types_.find(n.get());
      if (it == types_.end()) continue;
      const SymType& t = it->second;
      // Every type is spelled, changed or not: torch's code meets each
      // annotation's objects in graph order and names them as it goes.
      const std::string c = code(t, &names);
      if (!t.changed) continue;
      const std::string text = repr(t);
      if (c != n.type() || text != n.type_text()) {
        n.set_type(c.c_str(), text.c_str());
        changed = true;
      }
    }
    return changed;
  }

 private:
  SymType& type_of(const Node& n) {
    auto [it, added] = types_.try_emplace(n.get());
    if (added) it->second = parse(n);
    return it->second;
  }

  Sym fresh() { return Sym{Sym::Kind::kVar, next_var_++}; }

  // The class of the module `n` calls, asked once per target (a model
  // calls one ReLU module many times).
  const std::string& module_type(const Node& n) {
    auto [it, added] = classes_.try_emplace(std::string(n.target()));
    if (added) it->second = g_.module_type(it->first.c_str());
    return it->second;
  }

  // What conv_rule reads of a Conv2d module, once per target: its window
  // (or why it has none) and its repr.
  struct ConvModule {
    std::optional<ConvWindow> window;
    std::string error;
    std::string repr;
  };
  const ConvModule& conv_module(const Node& n) {
    auto [it, added] = convs_.try_emplace(std::string(n.target()));
    if (added) {
      const fxp::Arg config = fxp::module_config(g_, it->first.c_str());
      it->second.window = conv_window(config, &it->second.error);
      it->second.repr = module_repr("Conv2d", config);
    }
    return it->second;
  }

  // conv_rule: the output's sizes 2 and 3 from the input's (read 3, then
  // 2, as torch does), each calculate_out_dimension's.
  void conv_relations(const Node& n) {
    const SymType& arg = type_of(node_arg(n));
    SymType& own = type_of(n);
    if (!arg.is_tensor() || !own.is_tensor()) return;
    const Sym w_in = dims(n, 3, arg)[3], h_in = arg.dims[2];
    const ConvModule& conv = conv_module(n);
    if (!conv.window) fail(n, conv.error);
    const Sym h_out = out_dimension(n, h_in, *conv.window, 0, conv.repr);
    const Sym w_out = out_dimension(n, w_in, *conv.window, 1, conv.repr);
    own.dims = {dims(n, 1, own)[0], own.dims[1], h_out, w_out};
  }

  // calculate_out_dimension on an int or a symbol (any other is torch's
  // TypeError), dividing by out_stride's stride (stride[0] for both
  // dimensions with first_stride_for_both_, as torch 1.13).
  Sym out_dimension(const Node& n, const Sym& d_in, const ConvWindow& w,
                    size_t index, const std::string& module) {
    if (d_in.kind != Sym::Kind::kSize && d_in.kind != Sym::Kind::kSymbol) {
      fail(n, "TypeError: " + repr(d_in) + " in " + module +
                  " must be a number or Dyn. Received " + python_class(d_in));
    }
    const int64_t stride = out_stride(w, index, first_stride_for_both_);
    if (stride == 0) {
      fail(n, "ZeroDivisionError: integer division or modulo by zero");
    }
    constexpr const char* kOverflow =
        "the module's window makes a size beyond 64 bits";
    if (d_in.kind == Sym::Kind::kSize) {
      const std::optional<int64_t> size =
          out_size(d_in.value, w, index, first_stride_for_both_);
      if (!size) fail(n, kOverflow);
      return Sym{Sym::Kind::kSize, *size};
    }
    const std::optional<int64_t> offset = out_offset(w, index);
    if (!offset || *offset == INT64_MIN) fail(n, kOverflow);
    if (stride < 0) {
      fail(n,
           "a negative stride over a symbolic size (torch's sympy "
           "expression is not one this pass writes)");
    }
    return Sym{Sym::Kind::kExpr, d_in.value, stride, *offset};
  }

  // replace_dyn_with_fresh_var (a missing type is Dyn).
  void replace_dyn(SymType& t) {
    if (t.kind == SymType::Kind::kNone) {
      t.kind = SymType::Kind::kDim;
      t.dims = {Sym{}};
    }
    if (t.kind != SymType::Kind::kTensor && t.kind != SymType::Kind::kDim) {
      return;
    }
    // torch makes a new TensorType of a tuple whatever the old one's form.
    t.changed = true;
    for (Sym& s : t.dims) {
      if (s.kind == Sym::Kind::kDyn) s = fresh();
    }
  }

  Node node_arg(const Node& n) {
    if (n.num_args() == 0 || !n.arg(0).is_node()) {
      fail(n,
           "AssertionError: argument 0 is not a node (torch asserts "
           "isinstance(n.args[0], Node))");
    }
    return n.arg(0).node();
  }

  void refine_node(const Node& n) {
    if (n.op() == FX_OP_OUTPUT) return refine_output(n);
    replace_dyn(type_of(n));
    if (n.op() == FX_OP_CALL_FUNCTION) {
      const std::string_view target = n.target();
      if (target == "torch.add" || target == "operator.add") {
        return element_wise_eq(n);
      }
      if (target == "torch.flatten") return flatten_eq(n);
    } else if (n.op() == FX_OP_CALL_MODULE) {
      const std::string cls = module_type(n);
      if (cls == "torch.nn.Conv2d") return first_eq(n, /*conv=*/true);
      if (cls == "torch.nn.Linear") return first_eq(n, false);
      if (cls == "torch.nn.BatchNorm2d" || cls == "torch.nn.ReLU") {
        return all_eq(n);
      }
      if (cls == "torch.nn.MaxPool2d" || cls == "torch.nn.AdaptiveAvgPool2d") {
        return first_two_eq(n);
      }
    }
  }

  // The output's type is its value's (an output of several values stays
  // untyped, as gradual_typecheck leaves it).
  void refine_output(const Node& n) {
    SymType& t = type_of(n);
    if (n.num_args() == 1 && n.arg(0).is_node()) {
      t = type_of(n.arg(0).node());
      t.changed = t.is_tensor() || t.kind == SymType::Kind::kDim;
    }
  }

  void add(const Node& n, const Sym& a, const Sym& b) {
    constraints_.push_back({a, b, n});
  }

  const std::vector<Sym>& dims(const Node& n, size_t i, const SymType& t) {
    if (i >= t.dims.size()) {
      fail(n, "IndexError: tuple index out of range");
    }
    return t.dims;
  }

  void first_eq(const Node& n, bool conv) {
    const SymType& arg = type_of(node_arg(n));
    const SymType& own = type_of(n);
    if (!arg.is_tensor() || !own.is_tensor()) {
      if (conv) {
        fail(n,
             "TypeError: 'NoneType' object is not iterable (torch's "
             "Conv2d refinement rule returns None unless the input and "
             "the node are tensors)");
      }
      return;
    }
    add(n, dims(n, 0, arg)[0], dims(n, 0, own)[0]);
  }

  void all_eq(const Node& n) {
    const SymType& arg = type_of(node_arg(n));
    const SymType& own = type_of(n);
    if (!arg.is_tensor() || !own.is_tensor()) return;
    for (size_t i = 0; i < arg.dims.size(); ++i) {
      add(n, arg.dims[i], dims(n, i, own)[i]);
    }
  }

  void first_two_eq(const Node& n) {
    const SymType& arg = type_of(node_arg(n));
    const SymType& own = type_of(n);
    if (!arg.is_tensor() || !own.is_tensor()) return;
    add(n, dims(n, 0, arg)[0], dims(n, 0, own)[0]);
    add(n, dims(n, 1, arg)[1], dims(n, 1, own)[1]);
  }

  void element_wise_eq(const Node& n) {
    if (n.num_args() < 2 || !n.arg(0).is_node() || !n.arg(1).is_node()) {
      return;
    }
    const SymType& t1 = type_of(n.arg(0).node());
    const SymType& t2 = type_of(n.arg(1).node());
    const SymType& own = type_of(n);
    if (!t1.is_tensor() || !t2.is_tensor() || !own.is_tensor()) return;
    // broadcast_types: padded with leading 1s, each 1 replaced by the
    // other's dimension.
    std::vector<Sym> a = t1.dims, b = t2.dims;
    const Sym one{Sym::Kind::kSize, 1};
    while (a.size() < b.size()) a.insert(a.begin(), one);
    while (b.size() < a.size()) b.insert(b.begin(), one);
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] == one) {
        a[i] = b[i];
      } else if (b[i] == one) {
        b[i] = a[i];
      }
    }
    for (size_t i = 0; i < a.size() && i < own.dims.size(); ++i) {
      if (a[i] == b[i]) add(n, a[i], own.dims[i]);
    }
  }

  int64_t int_arg(const Node& n, size_t i) {
    if (n.arg(i).kind() != FX_ARG_INT) {
      fail(n,
           "AssertionError: argument " + std::to_string(i) + " is not an int");
    }
    return n.arg(i).as_int();
  }

  void flatten_eq(const Node& n) {
    const Node input = node_arg(n);
    int64_t start = n.num_args() > 1 ? int_arg(n, 1) : 1;
    int64_t end = n.num_args() > 2 ? int_arg(n, 2) : -1;
    const SymType& own = type_of(n);
    const SymType& arg = type_of(input);
    if (!own.is_tensor() || !arg.is_tensor()) return;
    const auto l = static_cast<int64_t>(own.dims.size());
    start = start == -1 ? l : start;
    end = end < 0 ? l + end + 1 : end + 1;
    const auto [o0, o1] = py_slice(0, start, own.dims.size());
    const auto [a0, a1] = py_slice(0, start, arg.dims.size());
    for (size_t i = 0; o0 + i < o1 && a0 + i < a1; ++i) {
      add(n, own.dims[o0 + i], arg.dims[a0 + i]);
    }
    const auto [p0, p1] = py_slice(end, l, own.dims.size());
    const auto [b0, b1] =
        py_slice(end, static_cast<int64_t>(arg.dims.size()), arg.dims.size());
    for (size_t i = 0; p0 + i < p1 && b0 + i < b1; ++i) {
      add(n, own.dims[p0 + i], arg.dims[b0 + i]);
    }
  }

  using Substitution = std::unordered_map<int64_t, Sym>;

  static Sym walk(Sym s, const Substitution& sub) {
    while (s.is_var()) {
      auto it = sub.find(s.value);
      if (it == sub.end()) break;
      s = it->second;
    }
    return s;
  }

  // unify_eq: each constraint in order, as unification's unify.
  Substitution unify() {
    Substitution sub;
    for (const Equality& e : constraints_) {
      const Sym u = walk(e.lhs, sub), v = walk(e.rhs, sub);
      if (u == v) continue;
      if (u.is_var()) {
        sub[u.value] = v;
      } else if (v.is_var()) {
        sub[v.value] = u;
      } else {
        fail(e.node,
             "NotImplementedError: Could not find signature for _unify: "
             "<int, int, dict> (torch's unify on two different sizes: the "
             "refinement constraint " +
                 repr(e.lhs) + " = " + repr(e.rhs) + " makes " + repr(u) +
                 " and " + repr(v) + " equal)");
      }
    }
    return sub;
  }

  // substitute_all_types: every variable replaced by its solution.
  void substitute(const Substitution& sub) {
    for (auto& [node, t] : types_) {
      if (t.kind != SymType::Kind::kTensor && t.kind != SymType::Kind::kDim) {
        continue;
      }
      for (Sym& s : t.dims) {
        const Sym solved = walk(s, sub);
        if (solved != s) {
          s = solved;
          t.changed = true;
        }
      }
    }
  }

  Graph& g_;
  const bool first_stride_for_both_;
  std::unordered_map<FxNode*, SymType> types_;
  std::vector<Equality> constraints_;
  int64_t next_var_ = 0;
  bool symbolic_ = false;  // after symbolic_relations()
  std::unordered_map<std::string, std::string> classes_;  // by target
  std::unordered_map<std::string, ConvModule> convs_;     // by target
};

}  // namespace

bool unify_refinements(Graph& g, const fxp::Options& options) {
  const int64_t rounds = options.get_int("rounds");
  if (rounds < 1) {
    throw fxp::Error(FX_INVALID_ARGUMENT,
                     std::string(kPass) +
                         ": option rounds must be 1 or more, "
                         "not " +
                         std::to_string(rounds));
  }
  Refine refine(g, options.get_bool("first_stride_for_both"));
  for (int64_t i = 0; i < rounds; ++i) refine.round();
  if (options.get_bool("symbolic_relations")) refine.symbolic_relations();
  return refine.write();
}

}  // namespace fx_optimization
