#include "plugins/inference/chain.h"

#include <cstddef>

#include "plugins/common/plugin_util.h"

namespace fx_inference {
namespace {

using fx_plugins::call_param;
using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

// Only the input, and for the functions that have one `inplace`.
bool only_input(const Node& n) {
  if (n.num_args() == 0 || !n.arg(0).is_node()) return false;
  if (n.num_args() > 2) return false;
  if (n.num_args() == 2 && n.arg(1).kind() != FX_ARG_BOOL) return false;
  for (size_t i = 0; i < n.num_kwargs(); ++i) {
    if (n.kwarg_key(i) != "inplace") return false;
  }
  return true;
}

// F.gelu's approximation ('none' when absent) as an activation name.
std::optional<Activation> gelu_activation(const ArgView& approximate) {
  if (!approximate) return Activation{"gelu"};
  if (approximate.kind() != FX_ARG_STRING) return std::nullopt;
  const std::string a = approximate.as_string();
  if (a == "none") return Activation{"gelu"};
  if (a == "tanh") return Activation{"gelu_tanh"};
  return std::nullopt;
}

bool is_gelu(const Activation& a) {
  return a.name == "gelu" || a.name == "gelu_tanh";
}

std::optional<Activation> module_activation(Graph& g, const Node& n) {
  if (n.num_args() != 1 || n.num_kwargs() != 0) return std::nullopt;
  std::string target(n.target());
  std::string type = g.module_type(target.c_str());
  if (type == "torch.nn.ReLU") return Activation{"relu"};
  if (type == "torch.nn.ReLU6") return Activation{"hardtanh", 0.0, 6.0};
  if (type == "torch.nn.Hardswish") return Activation{"hardswish"};
  if (type == "torch.nn.SiLU") return Activation{"silu"};
  if (type == "torch.nn.Sigmoid") return Activation{"sigmoid"};
  if (type == "torch.nn.Hardsigmoid") return Activation{"hardsigmoid"};
  if (type == "torch.nn.GELU") {
    Arg config = fxp::module_config(g, target.c_str());
    ArgView approximate = fxp::dict_get(config.view(), "approximate");
    return gelu_activation(approximate);
  }
  if (type == "torch.nn.Hardtanh") {
    Arg config = fxp::module_config(g, target.c_str());
    ArgView lo = fxp::dict_get(config.view(), "min_val");
    ArgView hi = fxp::dict_get(config.view(), "max_val");
    if (!lo || !hi) return std::nullopt;
    return Activation{"hardtanh", lo.as_float(), hi.as_float()};
  }
  return std::nullopt;
}

std::optional<Activation> function_activation(const Node& n) {
  std::string_view t = n.target();
  if (n.op() == FX_OP_CALL_METHOD) {
    if (n.num_args() != 1 || n.num_kwargs() != 0) return std::nullopt;
    if (t == "relu") return Activation{"relu"};
    if (t == "sigmoid") return Activation{"sigmoid"};
    return std::nullopt;
  }
  if (t == "torch.nn.functional.hardtanh") {
    ArgView lo = call_param(n, 1, "min_val");
    ArgView hi = call_param(n, 2, "max_val");
    ArgView inplace = call_param(n, 3, "inplace");
    if (n.num_args() > 4 || !n.arg(0).is_node()) return std::nullopt;
    if ((lo && lo.is_node()) || (hi && hi.is_node()) ||
        (inplace && inplace.is_node())) {
      return std::nullopt;
    }
    return Activation{"hardtanh", lo ? lo.as_float() : -1.0,
                      hi ? hi.as_float() : 1.0};
  }
  if (t == "torch._C._nn.gelu" || t == "torch.nn.functional.gelu") {
    if (n.num_args() + n.num_kwargs() > 2 || !n.arg(0).is_node()) {
      return std::nullopt;
    }
    if (n.num_kwargs() == 1 && n.kwarg_key(0) != "approximate") {
      return std::nullopt;
    }
    return gelu_activation(call_param(n, 1, "approximate"));
  }
  if (!only_input(n)) return std::nullopt;
  if (t == "torch.relu" || t == "torch.nn.functional.relu") {
    return Activation{"relu"};
  }
  if (t == "torch.nn.functional.relu6") return Activation{"hardtanh", 0, 6};
  if (t == "torch.nn.functional.hardswish") return Activation{"hardswish"};
  if (t == "torch.nn.functional.silu") return Activation{"silu"};
  if (t == "torch.sigmoid") return Activation{"sigmoid"};
  if (t == "torch.nn.functional.hardsigmoid") return Activation{"hardsigmoid"};
  return std::nullopt;
}

std::optional<Activation> activation_of(Graph& g, const Node& n) {
  if (n.op() == FX_OP_CALL_MODULE) return module_activation(g, n);
  if (n.op() == FX_OP_CALL_FUNCTION || n.op() == FX_OP_CALL_METHOD) {
    return function_activation(n);
  }
  return std::nullopt;
}

// The shape in meta['tensor_meta'], sizes as text (symbolic ones too; empty
// when absent or not a tensor's).
std::vector<std::string> meta_shape(const Node& n) {
  ArgView m = n.meta("tensor_meta");
  if (!m) return {};
  return fx_plugins::size_texts(fxp::dict_get(m, "shape"));
}

// The other operand when `add` is `value + other` (either order, no alpha)
// and other is a tensor of the same shape (by tensor_meta).
std::optional<Node> residual_of(const Node& add, const Node& value) {
  if (!binary_call(add, {"operator.add", "torch.add"}, "add")) {
    return std::nullopt;
  }
  if (!add.arg(0).is_node() || !add.arg(1).is_node()) return std::nullopt;
  Node a = add.arg(0).node(), b = add.arg(1).node();
  if (a == b) return std::nullopt;
  Node other = a == value ? b : a;
  std::vector<std::string> shape = meta_shape(other);
  if (shape.empty() || shape != meta_shape(value)) return std::nullopt;
  return other;
}

}  // namespace

bool binary_call(const Node& n,
                 std::initializer_list<std::string_view> functions,
                 std::string_view method) {
  if (n.num_args() != 2 || n.num_kwargs() != 0) return false;
  if (n.op() == FX_OP_CALL_METHOD) return n.target() == method;
  if (n.op() != FX_OP_CALL_FUNCTION) return false;
  for (std::string_view f : functions) {
    if (n.target() == f) return true;
  }
  return false;
}

Chain chain_after(Graph& g, const Node& head, bool gelu) {
  Chain c;
  c.nodes.push_back(head);
  auto sole_user = [&]() -> std::optional<Node> {
    const Node& last = c.nodes.back();
    if (last.num_users() != 1) return std::nullopt;
    return last.users()[0];
  };
  if (auto u = sole_user()) {
    if (auto r = residual_of(*u, c.nodes.back())) {
      c.residual = *r;
      c.nodes.push_back(*u);
    }
  }
  if (auto u = sole_user()) {
    if (auto a = activation_of(g, *u); a && (gelu || !is_gelu(*a))) {
      c.act = *a;
      c.nodes.push_back(*u);
    }
  }
  return c;
}

std::vector<Arg> input_weight_bias(Graph& g, Node input,
                                   const std::string& weight,
                                   const std::string& bias) {
  return {Arg(input), Arg(g.get_attr(weight.c_str())),
          bias.empty() ? Arg() : Arg(g.get_attr(bias.c_str()))};
}

fxp::Kwargs tail_kwargs(const Chain& c) {
  fxp::Kwargs kwargs;
  if (c.residual) kwargs.emplace_back("residual", Arg(*c.residual));
  kwargs.emplace_back("activation", Arg(c.act.name));
  if (c.act.name == "hardtanh") {
    kwargs.emplace_back("min_val", Arg(c.act.min_val));
    kwargs.emplace_back("max_val", Arg(c.act.max_val));
  }
  return kwargs;
}

}  // namespace fx_inference
