// libfx_inference.so: the rewrites the InferencePlan compiles a CPU
// inference graph with, as passes a user can run and print
// (`fx run --pipeline fold_bn,fuse_conv --print-after ...`).
//
//  - fold_bn: a BatchNorm2d (running statistics) whose input is a Conv2d
//    used by nothing else becomes part of the convolution: one torch.conv2d
//    with new weight and bias attributes (w * g / sqrt(v + eps),
//    (b - m) * g / sqrt(v + eps) + beta), as torch.fx's
//    experimental.optimization.fuse does. For graphs of modules in eval
//    mode (inference): the batch statistics of training mode are not
//    folded.
//  - fuse_conv: a Conv2d (module or torch.conv2d / F.conv2d with attribute
//    weights) and the chain of single users after it (a residual `add` of a
//    tensor of the same shape, then one activation: relu, relu6/hardtanh,
//    hardswish, silu, sigmoid, hardsigmoid) become one fx_inference.conv2d
//    node (fx_core/runtime/ops/inference_ops.cc), which the host runs with
//    ATen's kernels and the InferencePlan binds to oneDNN with the tail as
//    post-ops.
//  - fuse_linear: a Linear (module or F.linear with attribute weights) and
//    the same tail (residual add, then one activation, gelu included)
//    become one fx_inference.linear node, which the InferencePlan binds to
//    oneDNN's matmul with the tail as post-ops.
//  - fuse_matmul: a matmul of two tensors (operator.matmul, torch.matmul,
//    torch.bmm, Tensor.matmul) and a multiplication of its only use by a
//    number (attention's q @ k^T * scale) become one fx_inference.matmul
//    node, which the InferencePlan runs on oneDNN's matmul reading strided
//    (permuted, transposed) operands in place.
//  - fuse_pointwise (fuse_pointwise.h): what fuse_conv leaves of the
//    elementwise tails (chains and DAGs of float elementwise nodes, operands
//    broadcasting) becomes one fx_inference.pointwise node each, which the
//    InferencePlan runs in one TensorIterator pass.
// All keep meta['tensor_meta'] (the replaced chain's last value's).
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/inference/fuse_pointwise.h"

namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

constexpr const char* kFusedConv = "torch.ops.fx_inference.conv2d";
constexpr const char* kFusedLinear = "torch.ops.fx_inference.linear";
constexpr const char* kFusedMatmul = "torch.ops.fx_inference.matmul";

// ------------------------------------------------------------ conv sites

// A 2-d convolution whose weight (and bias) are attributes.
struct ConvSite {
  Node node;
  Node input;
  std::string weight;       // attribute path
  std::string bias;         // attribute path, or empty
  std::vector<Arg> config;  // stride, padding, dilation, groups
};

ArgView call_param(const Node& n, size_t index, const char* name) {
  if (ArgView k = n.kwarg(name)) return k;
  return index < n.num_args() ? n.arg(index) : ArgView();
}

// Padding given as numbers (not 'same' / 'valid').
bool numeric(const ArgView& v) {
  if (v.kind() == FX_ARG_INT) return true;
  if (v.size() == 0) return false;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].kind() != FX_ARG_INT) return false;
  }
  return true;
}

std::optional<ConvSite> module_conv(Graph& g, const Node& n) {
  std::string target(n.target());
  if (g.module_type(target.c_str()) != "torch.nn.Conv2d") return std::nullopt;
  if (n.num_args() != 1 || n.num_kwargs() != 0 || !n.arg(0).is_node()) {
    return std::nullopt;
  }
  ConvSite s{n, n.arg(0).node(), target + ".weight", "", {}};
  if (!g.has_attr(s.weight.c_str())) return std::nullopt;
  if (g.has_attr((target + ".bias").c_str())) s.bias = target + ".bias";
  Arg config = fxp::module_config(g, target.c_str());
  ArgView mode = fxp::dict_get(config.view(), "padding_mode");
  if (!mode || mode.as_string() != "zeros") return std::nullopt;
  for (const char* key : {"stride", "padding", "dilation", "groups"}) {
    ArgView v = fxp::dict_get(config.view(), key);
    if (!v || !numeric(v)) return std::nullopt;
    s.config.emplace_back(v);
  }
  return s;
}

std::optional<ConvSite> function_conv(const Node& n) {
  std::string_view t = n.target();
  if (t != "torch.conv2d" && t != "torch.nn.functional.conv2d") {
    return std::nullopt;
  }
  ArgView x = call_param(n, 0, "input");
  ArgView w = call_param(n, 1, "weight");
  if (!x || !x.is_node() || !w || !w.is_node() ||
      w.node().op() != FX_OP_GET_ATTR) {
    return std::nullopt;
  }
  ConvSite s{n, x.node(), std::string(w.node().target()), "", {}};
  ArgView b = call_param(n, 2, "bias");
  if (b && b.is_node()) {
    if (b.node().op() != FX_OP_GET_ATTR) return std::nullopt;
    s.bias = std::string(b.node().target());
  } else if (b && !b.is_none()) {
    return std::nullopt;
  }
  const char* keys[] = {"stride", "padding", "dilation", "groups"};
  Arg defaults[] = {Arg(1), Arg(0), Arg(1), Arg(1)};
  for (size_t i = 0; i < 4; ++i) {
    ArgView v = call_param(n, 3 + i, keys[i]);
    if (v && !numeric(v)) return std::nullopt;
    s.config.push_back(v ? Arg(v) : defaults[i]);
  }
  return s;
}

std::optional<ConvSite> conv_site(Graph& g, const Node& n) {
  if (n.op() == FX_OP_CALL_MODULE) return module_conv(g, n);
  if (n.op() == FX_OP_CALL_FUNCTION) return function_conv(n);
  return std::nullopt;
}

// ---------------------------------------------------------- linear sites

// A linear layer whose weight (and bias) are attributes.
struct LinearSite {
  Node node;
  Node input;
  std::string weight;  // attribute path
  std::string bias;    // attribute path, or empty
};

std::optional<LinearSite> module_linear(Graph& g, const Node& n) {
  std::string target(n.target());
  if (g.module_type(target.c_str()) != "torch.nn.Linear") return std::nullopt;
  if (n.num_args() != 1 || n.num_kwargs() != 0 || !n.arg(0).is_node()) {
    return std::nullopt;
  }
  LinearSite s{n, n.arg(0).node(), target + ".weight", ""};
  if (!g.has_attr(s.weight.c_str())) return std::nullopt;
  if (g.has_attr((target + ".bias").c_str())) s.bias = target + ".bias";
  return s;
}

std::optional<LinearSite> function_linear(const Node& n) {
  std::string_view t = n.target();
  if (t != "torch._C._nn.linear" && t != "torch.nn.functional.linear") {
    return std::nullopt;
  }
  if (n.num_args() + n.num_kwargs() > 3) return std::nullopt;
  ArgView x = call_param(n, 0, "input");
  ArgView w = call_param(n, 1, "weight");
  if (!x || !x.is_node() || !w || !w.is_node() ||
      w.node().op() != FX_OP_GET_ATTR) {
    return std::nullopt;
  }
  LinearSite s{n, x.node(), std::string(w.node().target()), ""};
  ArgView b = call_param(n, 2, "bias");
  if (b && b.is_node()) {
    if (b.node().op() != FX_OP_GET_ATTR) return std::nullopt;
    s.bias = std::string(b.node().target());
  } else if (b && !b.is_none()) {
    return std::nullopt;
  }
  return s;
}

std::optional<LinearSite> linear_site(Graph& g, const Node& n) {
  if (n.op() == FX_OP_CALL_MODULE) return module_linear(g, n);
  if (n.op() == FX_OP_CALL_FUNCTION) return function_linear(n);
  return std::nullopt;
}

// ------------------------------------------------------------ attributes

std::string flat(std::string s) {
  for (char& c : s) {
    if (c == '.') c = '_';
  }
  return s;
}

std::string fresh_attr(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int i = 1; g.has_attr(name.c_str()); ++i) {
    name = base + "_" + std::to_string(i);
  }
  return name;
}

// A contiguous float32 attribute's values, or nullopt.
std::optional<std::vector<double>> float_values(const Graph& g,
                                                const std::string& name,
                                                std::vector<int64_t>* shape) {
  fxp::Tensor t(g.get_attr_tensor(name.c_str()));
  const DLDataType dt = t.dl().dtype;
  if (dt.code != kDLFloat || dt.bits != 32 || dt.lanes != 1 ||
      !t.is_contiguous()) {
    return std::nullopt;
  }
  if (shape != nullptr) *shape = t.shape();
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.float_at(i);
  return v;
}

std::string store_float(Graph& g, const std::string& base,
                        const std::vector<int64_t>& shape,
                        const std::vector<double>& values) {
  fxp::Tensor t = fxp::make_tensor(shape, fxp::kFloat32);
  float* data = t.mutable_data<float>();
  for (size_t i = 0; i < values.size(); ++i) {
    data[i] = static_cast<float>(values[i]);
  }
  std::string name = fresh_attr(g, base);
  g.set_attr_tensor(name.c_str(), t.release());
  return name;
}

// get_attr nodes the rewrites left without users.
void erase_unused_attrs(Graph& g) {
  for (Node n : g) {
    if (n.op() == FX_OP_GET_ATTR && n.num_users() == 0) g.erase_node(n);
  }
}

void copy_tensor_meta(const Node& from, Node& to) {
  if (ArgView m = from.meta("tensor_meta")) to.set_meta("tensor_meta", Arg(m));
}

// -------------------------------------------------------------- fold_bn

// The folded weight and bias of `conv` followed by the BatchNorm2d `bn`;
// nullopt when some tensor is not contiguous float32 or shapes disagree.
struct Folded {
  std::vector<int64_t> weight_shape;
  std::vector<double> weight, bias;
};

std::optional<Folded> fold(Graph& g, const ConvSite& conv,
                           const std::string& bn) {
  Folded f;
  auto w = float_values(g, conv.weight, &f.weight_shape);
  auto mean = float_values(g, bn + ".running_mean", nullptr);
  auto var = float_values(g, bn + ".running_var", nullptr);
  if (!w || !mean || !var || f.weight_shape.empty()) return std::nullopt;
  const size_t channels = static_cast<size_t>(f.weight_shape[0]);
  if (mean->size() != channels || var->size() != channels) return std::nullopt;
  std::vector<double> gamma(channels, 1.0), beta(channels, 0.0),
      bias(channels, 0.0);
  for (auto [name, into] :
       {std::pair{bn + ".weight", &gamma}, std::pair{bn + ".bias", &beta},
        std::pair{conv.bias, &bias}}) {
    if (name.empty() || !g.has_attr(name.c_str())) continue;
    auto v = float_values(g, name, nullptr);
    if (!v || v->size() != channels) return std::nullopt;
    *into = *v;
  }
  Arg config = fxp::module_config(g, bn.c_str());
  ArgView eps_arg = fxp::dict_get(config.view(), "eps");
  const double eps = eps_arg ? eps_arg.as_float() : 1e-5;
  const size_t per = w->size() / channels;
  f.weight = *w;
  f.bias.resize(channels);
  for (size_t c = 0; c < channels; ++c) {
    const double scale = gamma[c] / std::sqrt((*var)[c] + eps);
    for (size_t i = 0; i < per; ++i) f.weight[c * per + i] *= scale;
    f.bias[c] = (bias[c] - (*mean)[c]) * scale + beta[c];
  }
  return f;
}

// `bn` when it is a BatchNorm2d in eval mode with running statistics called
// on `x` alone.
bool is_batch_norm(Graph& g, const Node& bn) {
  if (bn.op() != FX_OP_CALL_MODULE || bn.num_args() != 1 ||
      bn.num_kwargs() != 0) {
    return false;
  }
  std::string target(bn.target());
  // Training mode normalises by the batch's statistics: nothing to fold
  // (unknown, on an older host: folded, as before).
  if (g.module_training(target.c_str()) == 1) return false;
  return g.module_type(target.c_str()) == "torch.nn.BatchNorm2d" &&
         g.has_attr((target + ".running_mean").c_str()) &&
         g.has_attr((target + ".running_var").c_str());
}

bool fold_bn(Graph& g, const fxp::Options&) {
  bool changed = false;
  for (Node bn : g.nodes()) {
    if (!is_batch_norm(g, bn) || !bn.arg(0).is_node()) continue;
    Node conv_node = bn.arg(0).node();
    if (conv_node.num_users() != 1) continue;
    std::optional<ConvSite> conv = conv_site(g, conv_node);
    if (!conv) continue;
    std::string bn_target(bn.target());
    std::optional<Folded> f = fold(g, *conv, bn_target);
    if (!f) continue;
    const std::string base = flat(std::string(conv_node.name()));
    std::string w =
        store_float(g, base + "_folded_weight", f->weight_shape, f->weight);
    std::string b =
        store_float(g, base + "_folded_bias",
                    {static_cast<int64_t>(f->bias.size())}, f->bias);
    auto guard = g.inserting_before(bn);
    std::vector<Arg> args{Arg(conv->input), Arg(g.get_attr(w.c_str())),
                          Arg(g.get_attr(b.c_str()))};
    for (const Arg& a : conv->config) args.push_back(a);
    Node folded = g.call_function("torch.conv2d", args);
    copy_tensor_meta(bn, folded);
    bn.replace_all_uses_with(folded);
    g.erase_node(bn);
    g.erase_node(conv_node);
    changed = true;
  }
  erase_unused_attrs(g);
  return changed;
}

// ------------------------------------------------------------ fuse_conv

struct Activation {
  std::string name;
  double min_val = 0.0, max_val = 0.0;
};

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

// Whether `n` calls one of `functions` or the Tensor method `method`, with
// two positional arguments and no keywords.
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

// The conv or linear, its tail and what the fused node takes.
struct Chain {
  std::vector<Node> nodes;  // the conv / linear first, the last value last
  std::optional<Node> residual;
  Activation act{"none"};
};

// `head`'s tail; gelu only when `gelu` (oneDNN's convolutions here do not
// take it).
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

// Replaces the chain's nodes with the node `make` inserts (after the
// chain's last node, so the new nodes keep their order).
template <typename Make>
void replace_chain(Graph& g, const Chain& c, Make make) {
  Node last = c.nodes.back();
  Node fused;
  {
    // Before the node after the chain (an output node always follows).
    auto guard = g.inserting_before(last.next());
    fused = make();
  }
  copy_tensor_meta(last, fused);
  last.replace_all_uses_with(fused);
  for (auto it = c.nodes.rbegin(); it != c.nodes.rend(); ++it) {
    g.erase_node(*it);
  }
}

// A fused node's leading arguments: input, weight and bias (None when
// `bias` is empty), the parameters as get_attr nodes.
std::vector<Arg> input_weight_bias(Graph& g, Node input,
                                   const std::string& weight,
                                   const std::string& bias) {
  return {Arg(input), Arg(g.get_attr(weight.c_str())),
          bias.empty() ? Arg() : Arg(g.get_attr(bias.c_str()))};
}

// A fused node's keyword arguments for its tail: residual=, activation=
// and hardtanh's bounds.
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

Node fused_node(Graph& g, const ConvSite& conv, const Chain& c) {
  std::vector<Arg> args =
      input_weight_bias(g, conv.input, conv.weight, conv.bias);
  for (const Arg& a : conv.config) args.push_back(a);
  return g.call_function(kFusedConv, args, tail_kwargs(c));
}

// Replaces every site `site_of` finds (a conv or a linear) and its tail
// with the node `make(site, chain)` builds; `gelu`: whether the tail may
// end in gelu.
template <typename SiteOf, typename Make>
bool fuse_sites(Graph& g, SiteOf site_of, bool gelu, Make make) {
  bool changed = false;
  // The chains erase nodes after the one being visited: walk a copy.
  for (Node n : g.nodes()) {
    auto site = site_of(g, n);
    if (!site) continue;
    Chain c = chain_after(g, n, gelu);
    replace_chain(g, c, [&] { return make(*site, c); });
    changed = true;
  }
  erase_unused_attrs(g);
  return changed;
}

bool fuse_conv(Graph& g, const fxp::Options&) {
  return fuse_sites(g, conv_site, /*gelu=*/false,
                    [&](const ConvSite& conv, const Chain& c) {
                      return fused_node(g, conv, c);
                    });
}

// ---------------------------------------------------------- fuse_linear

Node fused_linear_node(Graph& g, const LinearSite& linear, const Chain& c) {
  return g.call_function(
      kFusedLinear,
      input_weight_bias(g, linear.input, linear.weight, linear.bias),
      tail_kwargs(c));
}

bool fuse_linear(Graph& g, const fxp::Options&) {
  return fuse_sites(g, linear_site, /*gelu=*/true,
                    [&](const LinearSite& linear, const Chain& c) {
                      return fused_linear_node(g, linear, c);
                    });
}

// ---------------------------------------------------------- fuse_matmul

bool is_matmul(const Node& n) {
  return binary_call(n, {"operator.matmul", "torch.matmul", "torch.bmm"},
                     "matmul") &&
         n.arg(0).is_node() && n.arg(1).is_node();
}

// The number `mul` multiplies `value` by (either order, no out=), or nullopt.
std::optional<double> scale_of(const Node& mul, const Node& value) {
  if (!binary_call(mul, {"operator.mul", "torch.mul"}, "mul")) {
    return std::nullopt;
  }
  for (size_t i = 0; i < 2; ++i) {
    ArgView v = mul.arg(i), other = mul.arg(1 - i);
    if (!v.is_node() || v.node() != value) continue;
    if (other.kind() == FX_ARG_FLOAT || other.kind() == FX_ARG_INT) {
      return other.as_float();
    }
  }
  return std::nullopt;
}

bool fuse_matmul(Graph& g, const fxp::Options&) {
  bool changed = false;
  for (Node n : g.nodes()) {  // a copy: the chains erase later nodes
    if (!is_matmul(n)) continue;
    Chain c;
    c.nodes.push_back(n);
    double scale = 1.0;
    if (n.num_users() == 1) {
      if (auto s = scale_of(n.users()[0], n)) {
        scale = *s;
        c.nodes.push_back(n.users()[0]);
      }
    }
    replace_chain(g, c, [&] {
      return g.call_function(kFusedMatmul,
                             {Arg(n.arg(0).node()), Arg(n.arg(1).node())},
                             {{"scale", Arg(scale)}});
    });
    changed = true;
  }
  return changed;
}

}  // namespace

FXP_PLUGIN(
    "fx_inference", "1.0",
    fxp::pass<fold_bn>("fold_bn",
                       "folds eval-mode BatchNorm2d into the Conv2d before "
                       "it (torch.fx experimental.optimization.fuse)"),
    fxp::pass<fuse_conv>(
        "fuse_conv",
        "Conv2d + residual add + activation -> one fx_inference.conv2d "
        "(oneDNN post-ops in the InferencePlan)")
        .run_after({"shape_prop", "fold_bn"}),
    fxp::pass<fuse_linear>(
        "fuse_linear",
        "Linear + residual add + activation (gelu included) -> one "
        "fx_inference.linear (oneDNN matmul post-ops in the InferencePlan)")
        .run_after({"shape_prop"})
        .tolerance(1e-4, 1e-5)
        .idempotent(),
    fxp::pass<fuse_matmul>(
        "fuse_matmul",
        "matmul [* number] -> one fx_inference.matmul (oneDNN's matmul on "
        "strided operands, the scale as a post-op, in the InferencePlan)")
        .run_after({"shape_prop"})
        .tolerance(1e-4, 1e-5)
        .idempotent(),
    fxp::pass<fx_inference::fuse_pointwise>(
        "fuse_pointwise",
        "chains of elementwise ops -> one fx_inference.pointwise (one "
        "TensorIterator pass in the InferencePlan)")
        .run_after({"shape_prop", "fuse_conv", "fuse_linear", "fuse_matmul"})
        .tolerance(1e-6, 1e-6)
        .idempotent())
