// torch 1.13's torch.fx.experimental.graph_gradual_typechecker.
// GraphTypeChecker.type_check(): every node gets a gradual type
// (gradual_type.h) from the inference rule of its target, in graph order:
//  - placeholder: its annotation, Dyn without one;
//  - get_attr: TensorType of the tensor's shape;
//  - call_function: torch.add / operator.add (broadcasting), getattr
//    (`.shape`: Dyn), torch.transpose, torch.reshape, torch.flatten;
//  - call_module of torch.nn's Conv2d, BatchNorm2d, ReLU, MaxPool2d,
//    Linear, AdaptiveAvgPool2d (by exact class, as torch looks them up);
//    a Conv2d's and a MaxPool2d's spatial sizes are calculate_out_dimension's,
//    each divided by its own stride (what the module outputs), or, with the
//    option first_stride_for_both, both by stride[0] as torch 1.13 does (a
//    bug: conv_window.h);
//  - output: its value's type.
// Some rules also refine their input's type (Conv2d and BatchNorm2d expand
// a Dyn input to rank 4; ReLU, MaxPool2d, Linear, AdaptiveAvgPool2d and
// flatten expand a Dyn input to their own type's rank). A node whose target
// has no rule, an argument torch's rules assert on, and each TypeError
// torch raises are errors naming the pass and the node with torch's
// message; the pass manager then rolls the graph back.
//
// Each changed type is written in its code form with the text print(graph)
// shows for it (torch's repr: TensorType[(1, Dyn)], TensorType[[1, Dyn]]
// from a list, TensorType[torch.Size([3, 4])] from a parameter's shape).
//
// add_inference_rule's meta['broadcast'] (whether broadcasting changed an
// operand's type) is written as torch writes it, on every add of two
// non-int operands; where it is True, so are the operands' broadcast
// types under their names, each as the pair (code form, graph text),
// which fx_sdk.to_torch_fx makes the TensorType torch leaves there.
//
// What torch does and this does not: an output of several values typed as
// the Python tuple of their types, which is no annotation (torch's
// recompile then fails with "unhashable type: 'TensorType'"); the output
// is left untyped here.
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/optimization/conv_window.h"
#include "plugins/optimization/gradual_type.h"
#include "plugins/optimization/module_repr.h"
#include "plugins/optimization/passes.h"

namespace fx_optimization {
namespace {

using fxp::ArgView;
using fxp::Graph;
using fxp::Node;
using Type = GradualType;

constexpr const char* kPass = "gradual_typecheck";

[[noreturn]] void fail(const Node& n, const std::string& what) {
  throw fxp::Error(
      FX_INVALID_ARGUMENT,
      std::string(kPass) + ": node '" + std::string(n.name()) + "': " + what);
}

// How print(graph) shows `t` when that is not its code form's derived text
// (torch's _type_repr: repr(TensorType), Dyn); "" otherwise.
std::string graph_text(const Type& t) {
  return t.is_tensor() || t.is_dyn() ? repr(t) : "";
}

// The types as the check goes (rules change their inputs' types too).
class Checker {
 public:
  // `first_stride_for_both`: torch 1.13's division of both spatial sizes
  // by stride[0] (conv_window.h's out_stride).
  Checker(Graph& g, bool first_stride_for_both)
      : g_(g), first_stride_for_both_(first_stride_for_both) {}

  void run() {
    for (Node n : g_) check_node(n);
  }

  // Writes every changed type to its node; true when one changed.
  bool write() {
    bool changed = false;
    GlobalNames names(g_);
    for (Node n : g_) {
      auto it = types_.find(n.get());
      if (it == types_.end()) {
        // Its annotation's sizes are still met by torch's code, in order.
        code_form(parse_gradual_type(n.type(), n.type_text()), names);
        continue;
      }
      const std::string code = code_form(it->second, names);
      const std::string text = graph_text(it->second);
      if (code != n.type() || (!text.empty() && text != n.type_text())) {
        n.set_type(code.c_str(), text.c_str());
        changed = true;
      }
    }
    return changed;
  }

 private:
  Type& type_of(const Node& n) {
    auto [it, added] = types_.try_emplace(n.get());
    if (!added) return it->second;
    // The code form does not say TensorType's form; the graph text does.
    it->second = parse_gradual_type(n.type(), n.type_text());
    return it->second;
  }

  // n.args[i], asserted to be a node as torch asserts.
  Node node_arg(const Node& n, size_t i) {
    if (i >= n.num_args() || !n.arg(i).is_node()) {
      fail(n, "AssertionError: argument " + std::to_string(i) +
                  " is not a node (torch asserts isinstance(n.args[" +
                  std::to_string(i) + "], Node))");
    }
    return n.arg(i).node();
  }

  int64_t int_arg(const Node& n, size_t i) {
    if (n.arg(i).kind() != FX_ARG_INT) {
      fail(n,
           "AssertionError: argument " + std::to_string(i) + " is not an int");
    }
    return n.arg(i).as_int();
  }

  void check_node(Node n) {
    Type& t = type_of(n);
    if (t.kind == Type::Kind::kNone) t = Type::dyn();
    switch (n.op()) {
      case FX_OP_PLACEHOLDER:
        return;
      case FX_OP_GET_ATTR:
        return check_get_attr(n);
      case FX_OP_CALL_FUNCTION:
        return check_function(n);
      case FX_OP_CALL_MODULE:
        return check_module(n);
      case FX_OP_OUTPUT:
        return check_output(n);
      default:
        fail(n, std::string("NotImplementedError: Method ") +
                    (n.op() == FX_OP_CALL_METHOD ? "call_method" : "?") +
                    " not yet implemented");
    }
  }

  void check_get_attr(const Node& n) {
    const std::string target(n.target());
    if (!g_.has_attr(target.c_str())) return;
    fxp::Tensor tensor(g_.get_attr_tensor(target.c_str()));
    std::vector<Dim> dims;
    for (int64_t d : tensor.shape()) dims.emplace_back(d);
    type_of(n) = Type::tensor(std::move(dims), Type::Form::kSize);
  }

  void check_output(const Node& n) {
    if (n.num_args() == 1 && n.arg(0).is_node()) {
      type_of(n) = type_of(n.arg(0).node());
    } else {
      type_of(n) = Type{};
    }
  }

  void check_function(const Node& n);
  void check_module(const Node& n);

  // The rules (torch's names).
  void add_rule(const Node& n);
  void getattr_rule(const Node& n);
  void transpose_rule(const Node& n);
  void reshape_rule(const Node& n);
  void flatten_rule(const Node& n);
  void bn2d_rule(const Node& n, const fxp::Arg& config);
  void conv2d_rule(const Node& n, const fxp::Arg& config);
  // ReLU, MaxPool2d, Linear, AdaptiveAvgPool2d, flatten: the input made
  // the node's rank when Dyn, then `check` of a tensor input joined with
  // the node's own type (`own_first`: in that order, as torch joins them).
  using Check = std::function<Type(const Type&)>;
  void shape_rule(const Node& n, const Check& check, bool own_first);

  Graph& g_;
  const bool first_stride_for_both_;
  std::unordered_map<FxNode*, Type> types_;
};

// ----------------------------------------------------------------- helpers

Type expand_to_tensor_dim(const Node& n, const Type& t, size_t rank) {
  if (t.is_dyn()) return Type::tensor(std::vector<Dim>(rank));
  if (!t.is_tensor()) fail(n, "TypeError: Cannot match the type " + repr(t));
  if (t.rank() != rank) {
    fail(n, "TypeError: Cannot extend tensor. Tensor " + repr(t) +
                " has rank " + std::to_string(t.rank()) +
                ". It should have rank " + std::to_string(rank));
  }
  return t;
}

Type greatest_upper_bound(const Node& n, const Type& a, const Type& b) {
  if (a.is_dyn()) return b;
  if (b.is_dyn()) return a;
  if (!a.is_tensor() || !b.is_tensor()) return Type{};
  if (!is_consistent(a, b)) {
    fail(n, "TypeError: Inconsistent types " + repr(a) + ", " + repr(b));
  }
  std::vector<Dim> dims;
  for (size_t i = 0; i < a.rank(); ++i) {
    dims.push_back(is_more_precise(a.dims[i], b.dims[i]) ? a.dims[i]
                                                         : b.dims[i]);
  }
  return Type::tensor(std::move(dims));
}

// broadcast_types: both tensors padded with leading 1s to one rank, each 1
// replaced by the other's dimension.
std::pair<Type, Type> broadcast_types(const Node& n, const Type& a,
                                      const Type& b) {
  if (a.is_dyn() || b.is_dyn()) return {a, b};
  if (!a.is_tensor() || !b.is_tensor()) {
    fail(n, "TypeError: Cannot broadcast types " + repr(a) + " and " + repr(b));
  }
  std::vector<Dim> x = a.dims, y = b.dims;
  while (x.size() < y.size()) x.insert(x.begin(), Dim(1));
  while (y.size() < x.size()) y.insert(y.begin(), Dim(1));
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == Dim(1)) {
      x[i] = y[i];
    } else if (y[i] == Dim(1)) {
      y[i] = x[i];
    }
  }
  return {Type::tensor(std::move(x)), Type::tensor(std::move(y))};
}

// ------------------------------------------------------- module attributes

int64_t int_of(const Node& n, const fxp::Arg& config, const char* key) {
  ArgView v = fxp::dict_get(config.view(), key);
  if (!v || v.kind() != FX_ARG_INT) {
    fail(n, std::string("TypeError: the module's ") + key + " is not an int");
  }
  return v.as_int();
}

// The module's window (conv_window.h); refused when a field is not an int
// or a pair of ints.
ConvWindow window_of(const Node& n, const fxp::Arg& config) {
  std::string error;
  std::optional<ConvWindow> w = conv_window(config, &error);
  if (!w) fail(n, error);
  return *w;
}

// calculate_out_dimension, dividing by out_stride's stride (stride[0] for
// both dimensions with `first_stride_for_both`, as torch 1.13).
Dim out_dimension(const Node& n, const Dim& d_in, const ConvWindow& w,
                  size_t index, bool first_stride_for_both) {
  if (!d_in) return std::nullopt;
  if (out_stride(w, index, first_stride_for_both) == 0) {
    fail(n, "ZeroDivisionError: integer division or modulo by zero");
  }
  const std::optional<int64_t> size =
      out_size(*d_in, w, index, first_stride_for_both);
  if (!size) fail(n, "the module's window makes a size beyond 64 bits");
  return *size;
}

// ------------------------------------------------------------------- rules

void Checker::check_function(const Node& n) {
  const std::string_view target = n.target();
  if (target == "torch.add" || target == "operator.add") return add_rule(n);
  if (target == "builtins.getattr") return getattr_rule(n);
  if (target == "torch.transpose") return transpose_rule(n);
  if (target == "torch.reshape") return reshape_rule(n);
  if (target == "torch.flatten") return flatten_rule(n);
  fail(n, "RuntimeError: No inference rule registered for target " +
              std::string(target) + "!");
}

void Checker::add_rule(const Node& n) {
  const Node lhs = node_arg(n, 0), rhs = node_arg(n, 1);
  const Type t1 = type_of(lhs), t2 = type_of(rhs);
  if (t1.kind == Type::Kind::kInt && t2.is_tensor()) {
    type_of(n) = t2;
    return;
  }
  if (t2.kind == Type::Kind::kInt && t1.is_tensor()) {
    type_of(n) = t1;
    return;
  }
  const auto [b1, b2] = broadcast_types(n, t1, t2);
  // Whether broadcasting changed an operand's type, as torch notes it, and
  // then, as torch does, each operand's broadcast type under the operand's
  // name (str(node)): the type's code form and graph text, which
  // fx_sdk.to_torch_fx makes a TensorType again.
  const bool broadcast = b1 != t1 || b2 != t2;
  Node(n).set_meta("broadcast", fxp::Arg(broadcast));
  if (broadcast) {
    for (const auto& [operand, t] : {std::pair{lhs, b1}, std::pair{rhs, b2}}) {
      Node(n).set_meta(
          std::string(operand.name()).c_str(),
          fxp::Arg::tuple({fxp::Arg(code_form(t)), fxp::Arg(repr(t))}));
    }
  }
  if (!is_consistent(b1, b2)) {
    fail(n, "TypeError: Cannot add arguments " + std::string(lhs.name()) +
                " (" + repr(t1) + ") and " + std::string(rhs.name()) + " (" +
                repr(t2) + ") in node " + std::string(n.name()) +
                ". Types should match ");
  }
  type_of(n) = is_more_precise(b1, b2) ? b2 : b1;
}

void Checker::getattr_rule(const Node& n) {
  if (n.num_args() < 2 || n.arg(1).kind() != FX_ARG_STRING ||
      n.arg(1).as_string() != "shape") {
    fail(n, "TypeError: Not yet implelemted");
  }
  type_of(n) = Type::dyn();
}

void Checker::transpose_rule(const Node& n) {
  const Type t = type_of(node_arg(n, 0));
  const int64_t dim1 = int_arg(n, 1), dim2 = int_arg(n, 2);
  if (t.is_dyn()) {
    type_of(n) = Type::dyn();
    return;
  }
  const auto rank = static_cast<int64_t>(t.rank());
  if (!t.is_tensor() || dim1 < 0 || dim1 >= rank || dim2 < 0 || dim2 >= rank) {
    fail(n, "TypeError: Cannot transpose " + std::to_string(dim1) + " and " +
                std::to_string(dim2) + " in type " + repr(t) + " for node " +
                std::string(n.name()));
  }
  std::vector<Dim> dims = t.dims;
  std::swap(dims[dim1], dims[dim2]);
  type_of(n) = greatest_upper_bound(n, type_of(n),
                                    Type::tensor(dims, Type::Form::kList));
}

void Checker::reshape_rule(const Node& n) {
  const Type t1 = type_of(node_arg(n, 0));
  const ArgView shape = n.num_args() > 1 ? n.arg(1) : ArgView();
  if (!shape || shape.kind() != FX_ARG_LIST) {
    fail(n, "AssertionError: argument 1 is not a list");
  }
  std::vector<Dim> dims;
  int64_t p2 = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].kind() != FX_ARG_INT) {
      fail(n, "TypeError: the shape holds a value that is not an int");
    }
    const int64_t d = shape[i].as_int();
    dims.push_back(d == -1 ? Dim() : Dim(d));
    p2 *= d;
  }
  const Type wanted = Type::tensor(dims, Type::Form::kList);
  if (t1.is_dyn()) {
    type_of(n) = wanted;
    return;
  }
  int64_t p1 = 1;
  for (const Dim& d : t1.dims) p1 *= d ? *d : 1;
  if (!t1.is_tensor() || shape.size() == 0 || p1 == 0 || p2 == 0 ||
      (p1 % p2 != 0 && p2 % p1 != 0)) {
    fail(n, "TypeError: Cannot reshape in node " + std::string(n.name()) +
                " from " + repr(t1) + " to " + repr(wanted));
  }
  type_of(n) = wanted;
}

// flatten_check, with torch's reading of negative start dimensions.
Type flatten_check(const Node& n, const Type& t, int64_t start, int64_t end) {
  const auto l = static_cast<int64_t>(t.rank());
  start = start == -1 ? l : (start < 0 ? -start : start);
  end = end < 0 ? l + end + 1 : end + 1;
  if (!(0 <= start && start <= l - 1 && 0 <= end && end <= l && start < end)) {
    fail(n, "TypeError: Incompatable dimentions " + std::to_string(start) +
                ", " + std::to_string(end - 1) + " in type " + repr(t));
  }
  std::vector<Dim> dims(t.dims.begin(), t.dims.begin() + start);
  Dim mid = 1;
  for (int64_t i = start; i < end; ++i) {
    mid = t.dims[i] && mid ? Dim(*mid * *t.dims[i]) : Dim();
  }
  dims.push_back(mid);
  dims.insert(dims.end(), t.dims.begin() + end, t.dims.end());
  return Type::tensor(std::move(dims));
}

void Checker::flatten_rule(const Node& n) {
  node_arg(n, 0);
  const int64_t start = n.num_args() > 1 ? int_arg(n, 1) : 1;
  const int64_t end = n.num_args() > 2 ? int_arg(n, 2) : -1;
  shape_rule(
      n, [&](const Type& t) { return flatten_check(n, t, start, end); },
      /*own_first=*/false);
}

void Checker::shape_rule(const Node& n, const Check& check, bool own_first) {
  Type& input = type_of(node_arg(n, 0));
  const Type own = type_of(n);
  if (input.is_dyn() && own.is_tensor()) {
    input = expand_to_tensor_dim(n, input, own.rank());
  }
  if (!input.is_tensor()) return;
  const Type out = check(input);
  type_of(n) = own_first ? greatest_upper_bound(n, own, out)
                         : greatest_upper_bound(n, out, own);
}

void Checker::bn2d_rule(const Node& n, const fxp::Arg& config) {
  Type& input = type_of(node_arg(n, 0));
  input = expand_to_tensor_dim(n, input, 4);
  const Type arg = input;
  const Type own = expand_to_tensor_dim(n, type_of(n), 4);
  const Dim features = int_of(n, config, "num_features");
  if (!is_consistent(arg.dims[1], features) ||
      !is_consistent(own.dims[1], features) || !is_consistent(arg, own)) {
    fail(n, "TypeError: Cannot apply " + module_repr("BatchNorm2d", config) +
                " with input type " + repr(arg) + " and existing type " +
                repr(own) + " on " + std::string(n.name()));
  }
  type_of(n) = greatest_upper_bound(n, arg, own);
}

void Checker::conv2d_rule(const Node& n, const fxp::Arg& config) {
  Type& input = type_of(node_arg(n, 0));
  input = expand_to_tensor_dim(n, input, 4);
  const Type arg = input;
  const Type own = expand_to_tensor_dim(n, type_of(n), 4);
  if (!is_consistent(arg.dims[1], int_of(n, config, "in_channels"))) {
    fail(n, "TypeError: Cannot apply " + module_repr("Conv2d", config) +
                " with input type " + repr(arg) + " and existing type " +
                repr(type_of(n)) + " on " + std::string(n.name()));
  }
  const ConvWindow w = window_of(n, config);
  const bool first = first_stride_for_both_;
  const Type out = Type::tensor({arg.dims[0], int_of(n, config, "out_channels"),
                                 out_dimension(n, arg.dims[2], w, 0, first),
                                 out_dimension(n, arg.dims[3], w, 1, first)});
  type_of(n) = greatest_upper_bound(n, out, own);
}

// maxpool2d_check (`first_stride_for_both` as out_dimension's).
Type maxpool2d_check(const Node& n, const Type& t, const ConvWindow& w,
                     const std::string& module, bool first_stride_for_both) {
  if (t.rank() != 3 && t.rank() != 4) {
    fail(n, "TypeError: Wrong size " + repr(t) + " for " + module);
  }
  std::vector<Dim> dims = t.dims;
  const size_t r = dims.size();
  dims[r - 2] = out_dimension(n, t.dims[r - 2], w, 0, first_stride_for_both);
  dims[r - 1] = out_dimension(n, t.dims[r - 1], w, 1, first_stride_for_both);
  return Type::tensor(std::move(dims));
}

// linear_check.
Type linear_check(const Node& n, const Type& t, int64_t in, int64_t out,
                  const std::string& module) {
  if (t.rank() < 2) {
    fail(n, "TypeError: Type " + repr(t) + " must have rank 2 or more.");
  }
  if (!is_consistent(Dim(in), t.dims.back())) {
    fail(n, "TypeError: Inconsistent " + std::to_string(in) + " and " +
                repr(t.dims.back()) + " in " + module);
  }
  std::vector<Dim> dims = t.dims;
  dims.back() = out;
  return Type::tensor(std::move(dims));
}

// AdaptiveAvgPool2d's output_size as (height, width); None takes the
// other's.
std::vector<Dim> output_size_of(const Node& n, const fxp::Arg& config) {
  ArgView v = fxp::dict_get(config.view(), "output_size");
  if (v && v.kind() == FX_ARG_INT) return {v.as_int(), v.as_int()};
  if (v && (v.kind() == FX_ARG_TUPLE || v.kind() == FX_ARG_LIST) &&
      v.size() == 2) {
    std::vector<Dim> size;
    for (size_t i = 0; i < 2; ++i) {
      if (v[i].kind() == FX_ARG_INT) {
        size.emplace_back(v[i].as_int());
      } else if (v[i].is_none() && v.kind() == FX_ARG_TUPLE) {
        size.emplace_back(std::nullopt);
      } else {
        fail(n, "TypeError: the module's output_size is not a pair of ints");
      }
    }
    if (!size[0] && size[1]) size[0] = size[1];
    if (!size[1] && size[0]) size[1] = size[0];
    if (size[0] && size[1]) return size;
  }
  fail(n, "TypeError: the module's output_size is not an int or a pair");
}

Type adaptiveavgpool2d_check(const Node& n, const Type& t,
                             const std::vector<Dim>& size) {
  if (t.rank() != 3 && t.rank() != 4) {
    fail(n, "TypeError: Tensor ranks must be 3 or 4. Got " + repr(t));
  }
  std::vector<Dim> dims = t.dims;
  dims[dims.size() - 2] = size[0];
  dims[dims.size() - 1] = size[1];
  return Type::tensor(std::move(dims));
}

void Checker::check_module(const Node& n) {
  const std::string target(n.target());
  const std::string cls = g_.module_type(target.c_str());
  const auto config = [&] { return fxp::module_config(g_, target.c_str()); };
  if (cls == "torch.nn.Conv2d") return conv2d_rule(n, config());
  if (cls == "torch.nn.BatchNorm2d") return bn2d_rule(n, config());
  if (cls == "torch.nn.ReLU") {
    return shape_rule(
        n, [](const Type& t) { return t; }, /*own_first=*/false);
  }
  if (cls == "torch.nn.MaxPool2d") {
    const fxp::Arg c = config();
    const ConvWindow w = window_of(n, c);
    const std::string module = module_repr("MaxPool2d", c);
    return shape_rule(
        n,
        [&](const Type& t) {
          return maxpool2d_check(n, t, w, module, first_stride_for_both_);
        },
        false);
  }
  if (cls == "torch.nn.Linear") {
    const fxp::Arg c = config();
    const int64_t in = int_of(n, c, "in_features");
    const int64_t out = int_of(n, c, "out_features");
    const std::string module = module_repr("Linear", c);
    return shape_rule(
        n, [&](const Type& t) { return linear_check(n, t, in, out, module); },
        false);
  }
  if (cls == "torch.nn.AdaptiveAvgPool2d") {
    const std::vector<Dim> size = output_size_of(n, config());
    return shape_rule(
        n, [&](const Type& t) { return adaptiveavgpool2d_check(n, t, size); },
        /*own_first=*/true);
  }
  fail(n, "RuntimeError: No inference rule registered for class " + cls + "!");
}

}  // namespace

bool gradual_typecheck(Graph& g, const fxp::Options& options) {
  Checker checker(g, options.get_bool("first_stride_for_both"));
  checker.run();
  return checker.write();
}

}  // namespace fx_optimization
