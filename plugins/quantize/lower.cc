// quantize_lower (lower.h): matching the reference pattern and building the
// quantized modules and ops that replace it.
#include "plugins/quantize/lower.h"

#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "plugins/common/rewrite_util.h"
#include "plugins/quantize/patterns.h"
#include "plugins/quantize/reference_modules.h"
#include "plugins/quantize/report.h"

namespace fx_quant {
namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

constexpr const char* kQuantize = "torch.quantize_per_tensor";

// A number argument: a literal, or a 0-dim tensor attribute (as PyTorch's
// graphs hold scales and zero points).
std::optional<double> number(const Graph& g, ArgView a) {
  if (!a) return std::nullopt;
  if (a.kind() == FX_ARG_INT || a.kind() == FX_ARG_FLOAT) return a.as_float();
  if (!a.is_node() || a.node().op() != FX_OP_GET_ATTR) return std::nullopt;
  fxp::Tensor t(g.get_attr_tensor(a.node().target_cstr()));
  if (t.numel() != 1) return std::nullopt;
  if (t.dl().dtype.code == kDLFloat) return t.float_at(0);
  if (t.dl().dtype.code == kDLInt && t.dl().dtype.bits == 64) {
    return static_cast<double>(t.data<int64_t>()[0]);
  }
  return std::nullopt;
}

// A scale or zero point as a message shows it: 0.1, -1, 300, nan, inf.
std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", v);
  return text;
}

// torch.quantize_per_tensor(x, scale, zero_point, torch.quint8): its
// quantization, when it is one onednn's int8 ops take. Scales and zero
// points the kernels cannot use (a scale not positive and finite, a zero
// point not a whole number in [0, 255]) are bad input, named: a lowering
// that left such a node in float would hide the graph's error.
std::optional<QParams> quint8_quantize(const Graph& g, Node n) {
  if (n.op() != FX_OP_CALL_FUNCTION || n.target() != kQuantize ||
      n.num_args() != 4 || n.num_kwargs() != 0) {
    return std::nullopt;
  }
  ArgView dtype = n.arg(3);
  if (dtype.kind() != FX_ARG_DTYPE || dtype.as_string() != "torch.quint8") {
    return std::nullopt;
  }
  std::optional<double> scale = number(g, n.arg(1));
  std::optional<double> zero_point = number(g, n.arg(2));
  if (!scale || !zero_point) return std::nullopt;
  const std::string where = "quantize_lower: node '" + std::string(n.name()) +
                            "' (" + kQuantize + ")";
  if (!(*scale > 0) || !std::isfinite(*scale)) {
    throw fxp::Error(FX_INVALID_ARGUMENT,
                     where + " has scale " + number_text(*scale) +
                         ": a scale must be positive and finite");
  }
  if (!(*zero_point >= 0 && *zero_point <= 255) ||
      *zero_point != std::floor(*zero_point)) {
    throw fxp::Error(FX_INVALID_ARGUMENT,
                     where + " has zero point " + number_text(*zero_point) +
                         ": a quint8 zero point is a whole number in [0, "
                         "255]");
  }
  return QParams{*scale, static_cast<int64_t>(*zero_point)};
}

// An op's output requantized: op [-> ReLU, or -> ReLU6 / Hardtanh] ->
// quantize_per_tensor, each feeding only the next.
struct Requantized {
  Node relu;   // empty without; the quantized op takes it in
  Node clamp;  // empty without; stays, on the quantized op's result
  Node quantize;
  QParams qparams;
  // Where the quantized op's call goes: before the first node of the chain
  // that stays.
  Node insert_before() const { return clamp ? clamp : quantize; }
};

class Lowering {
 public:
  explicit Lowering(Graph& g) : g_(g) {
    for (Node n : g_.find_nodes(FX_OP_CALL_FUNCTION, kQuantize)) {
      if (quint8_quantize(g_, n)) quantized_.insert(n.get());
    }
  }

  bool run() {
    bool changed = false;
    for (Node n : g_.nodes()) {
      if (is_add(n)) {
        changed |= lower_add(n);
      } else if (keeps_quantization(g_, n)) {
        changed |= move_dequantize_after(n);
      } else if (quint8_quantize(g_, n)) {
        changed |= drop_requantize(n);
      } else if (n.op() == FX_OP_CALL_FUNCTION) {
        changed |= lower_weighted(n) || lower_dynamic(n);
      } else if (n.op() == FX_OP_CALL_MODULE) {
        changed |= lower_reference(n);
      }
    }
    if (changed) g_.eliminate_dead_code();
    if (changed) record_what_stays_float();
    return changed;
  }

 private:
  // The output node's meta['int8_lowering']: {"int8": the nodes that run
  // int8 kernels, "float": the ops left computing on dequantized values
  // (an op this lowering has no int8 form for), each "name (target)"}.
  void record_what_stays_float() {
    std::vector<Arg> int8, in_float;
    for (Node n : g_) {
      std::string label =
          std::string(n.name()) + " (" + std::string(n.target()) + ")";
      if (lowered_.count(n.get()) > 0) {
        int8.emplace_back(label);
      } else if (n.op() != FX_OP_OUTPUT && !is_dequantize(n) &&
                 !quint8_quantize(g_, n) && reads_a_dequantize(n)) {
        in_float.emplace_back(label);
      }
    }
    g_.output_node().set_meta(
        "int8_lowering",
        Arg::dict({{"int8", Arg::list(int8)}, {"float", Arg::list(in_float)}}));
  }

  // x.dequantize() of a node x.
  static bool is_dequantize(Node n) {
    return n.op() == FX_OP_CALL_METHOD && n.target() == "dequantize" &&
           n.num_args() == 1 && n.arg(0).is_node();
  }
  static bool reads_a_dequantize(Node n) {
    for (Node input : n.all_input_nodes()) {
      if (is_dequantize(input)) return true;
    }
    return false;
  }

  // X in X.dequantize() when X is a quint8 tensor of the lowered chain.
  std::optional<Node> quantized_source(ArgView a) const {
    if (!a || !a.is_node()) return std::nullopt;
    Node dq = a.node();
    if (!is_dequantize(dq)) return std::nullopt;
    Node x = dq.arg(0).node();
    if (quantized_.count(x.get()) == 0) return std::nullopt;
    return x;
  }

  std::optional<Requantized> requantized(Node op) const {
    Requantized r;
    Node last = op;
    std::vector<Node> users = op.users();
    if (users.size() == 1 && is_relu(g_, users[0])) {
      r.relu = users[0];
      last = r.relu;
      users = last.users();
    } else if (users.size() == 1 && is_clamp_of(g_, users[0], op)) {
      r.clamp = users[0];
      last = r.clamp;
      users = last.users();
    }
    if (users.size() != 1 || !users[0].arg(0).is_node() ||
        users[0].arg(0).node() != last) {
      return std::nullopt;
    }
    std::optional<QParams> q = quint8_quantize(g_, users[0]);
    if (!q) return std::nullopt;
    r.quantize = users[0];
    r.qparams = *q;
    return r;
  }

  // The chain from `op` to its quantize node replaced by `replacement`
  // (`op` itself when it is the call made quantized): a clamp now reads the
  // quint8 result and stands for the quantize node.
  void replace_chain(Node op, Requantized r, Node replacement) {
    Node out = replacement;
    if (r.clamp) {
      if (op != replacement) r.clamp.replace_input_with(op, replacement);
      quantized_.insert(r.clamp.get());
      lowered_.insert(r.clamp.get());
      out = r.clamp;
    }
    r.quantize.replace_all_uses_with(out);
    g_.erase_node(r.quantize);
    if (r.relu) g_.erase_node(r.relu);
    if (op != replacement) g_.erase_node(op);
    quantized_.insert(replacement.get());
  }

  bool lower_add(Node add) {
    std::optional<Node> a = quantized_source(add.arg(0));
    std::optional<Node> b = quantized_source(add.arg(1));
    std::optional<Requantized> r = requantized(add);
    if (!a || !b || !r) return false;
    Node call;
    {
      auto guard = g_.inserting_before(r->insert_before());
      call = g_.call_function(
          r->relu ? "torch.ops.quantized.add_relu" : "torch.ops.quantized.add",
          // Before a clamp, the quantize's own scale and zero point
          // nodes (PyTorch's get_attrs, after the clamp) are not defined
          // yet: their values then.
          {Arg(*a), Arg(*b),
           r->clamp ? Arg(r->qparams.scale) : Arg(r->quantize.arg(1)),
           r->clamp ? Arg(r->qparams.zero_point) : Arg(r->quantize.arg(2))});
    }
    replace_chain(add, *r, call);
    lowered_.insert(call.get());
    return true;
  }

  // op(dequantize(X)) -> dequantize(op(X)) for an op that keeps X's
  // quantization: the op runs on the quint8 tensor.
  bool move_dequantize_after(Node op) {
    std::optional<Node> x = quantized_source(op.arg(0));
    if (!x) return false;
    Node dq = op.arg(0).node();
    op.replace_input_with(dq, *x);
    quantized_.insert(op.get());
    lowered_.insert(op.get());
    Node after;
    {
      auto guard = g_.inserting_after(op);
      after = g_.call_method("dequantize", {Arg(op)});
    }
    for (Node u : op.users()) {
      if (u != after) u.replace_input_with(op, after);
    }
    if (dq.num_users() == 0) g_.erase_node(dq);
    quantized_dropout(op);
    return true;
  }

  // A Dropout module now called on a quint8 tensor becomes the quantized
  // Dropout convert_fx puts there (the identity in eval mode, as this one
  // is), unless another call shares it.
  void quantized_dropout(Node op) {
    if (op.op() != FX_OP_CALL_MODULE ||
        g_.module_type(op.target_cstr()) != "torch.nn.Dropout" ||
        g_.find_nodes(FX_OP_CALL_MODULE, op.target_cstr()).size() != 1) {
      return;
    }
    Arg config = fxp::module_config(g_, op.target_cstr());
    fxp::add_module(g_, op.target_cstr(),
                    "torch.ao.nn.quantized.modules.dropout.Dropout", config);
  }

  // quantize_per_tensor(dequantize(Y), s, z) -> Y: Y is quint8 already,
  // with the quantization of the op that made it (a pooling after a
  // convolution: PyTorch shares the two's observer the same way).
  bool drop_requantize(Node q) {
    std::optional<Node> y = quantized_source(q.arg(0));
    if (!y) return false;
    q.replace_all_uses_with(*y);
    g_.erase_node(q);
    return true;
  }

  bool lower_weighted(Node op);
  bool lower_dynamic(Node op);
  bool lower_reference(Node op);

  Graph& g_;
  std::set<FxNode*> quantized_;  // nodes whose value is a quint8 tensor
  std::set<FxNode*> lowered_;    // nodes this lowering made run int8
};

// ------------------------------------------------ Conv2d and Linear

// The attributes of quantize_convert's dequantized weight,
// int8_attr.to(torch.float32) * scale_attr.
struct Int8Weight {
  std::string values;  // int8, [out, ...]
  std::string scales;  // float, out elements
};

std::optional<Int8Weight> int8_weight(ArgView w) {
  if (!w || !w.is_node()) return std::nullopt;
  Node mul = w.node();
  if (mul.op() != FX_OP_CALL_FUNCTION || mul.target() != "operator.mul" ||
      mul.num_args() != 2 || !mul.arg(0).is_node() || !mul.arg(1).is_node()) {
    return std::nullopt;
  }
  Node to = mul.arg(0).node();
  Node scales = mul.arg(1).node();
  if (to.op() != FX_OP_CALL_METHOD || to.target() != "to" ||
      to.num_args() != 2 || !to.arg(0).is_node() ||
      to.arg(0).node().op() != FX_OP_GET_ATTR ||
      scales.op() != FX_OP_GET_ATTR) {
    return std::nullopt;
  }
  return Int8Weight{std::string(to.arg(0).node().target()),
                    std::string(scales.target())};
}

bool int_or_ints(ArgView a) {
  if (a.kind() == FX_ARG_INT) return true;
  if (a.kind() != FX_ARG_LIST && a.kind() != FX_ARG_TUPLE) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind() != FX_ARG_INT) return false;
  }
  return true;
}

// The quantized module's constructor arguments for `op`'s call, or nullopt
// when its arguments are not ones the module takes.
std::optional<Arg> module_config(Node op, const std::vector<int64_t>& shape,
                                 bool relu) {
  const bool bias = !op.arg(2).is_none();
  if (op.target() == "torch.nn.functional.linear") {
    if (op.num_args() != 3 || shape.size() != 2) return std::nullopt;
    return Arg::dict({{"in_features", Arg(shape[1])},
                      {"out_features", Arg(shape[0])},
                      {relu ? "bias" : "bias_", Arg(bias)}});
  }
  if (op.num_args() != 7 || shape.size() != 4) return std::nullopt;
  for (size_t i = 3; i < 6; ++i) {
    if (!int_or_ints(op.arg(i))) return std::nullopt;  // not padding='same'
  }
  if (op.arg(6).kind() != FX_ARG_INT) return std::nullopt;
  const int64_t groups = op.arg(6).as_int();
  return Arg::dict({{"in_channels", Arg(shape[1] * groups)},
                    {"out_channels", Arg(shape[0])},
                    {"kernel_size", Arg::tuple({Arg(shape[2]), Arg(shape[3])})},
                    {"stride", Arg(op.arg(3))},
                    {"padding", Arg(op.arg(4))},
                    {"dilation", Arg(op.arg(5))},
                    {"groups", Arg(groups)},
                    {"bias", Arg(bias)},
                    {"padding_mode", Arg("zeros")}});
}

const char* module_type(bool conv, bool relu) {
  if (conv) {
    return relu ? "torch.nn.intrinsic.quantized.modules.conv_relu.ConvReLU2d"
                : "torch.ao.nn.quantized.modules.conv.Conv2d";
  }
  return relu ? "torch.nn.intrinsic.quantized.modules.linear_relu.LinearReLU"
              : "torch.ao.nn.quantized.modules.linear.Linear";
}

fxp::Tensor scalar(double value) {
  fxp::Tensor t = fxp::make_tensor({}, fxp::kFloat64);
  t.mutable_data<double>()[0] = value;
  return t;
}

fxp::Tensor scalar(int64_t value) {
  fxp::Tensor t = fxp::make_tensor({}, fxp::kInt64);
  t.mutable_data<int64_t>()[0] = value;
  return t;
}

// The module's weight as qint8 per channel (axis 0, zero points 0,
// quantize_convert's symmetric scales) and its float bias.
void set_weight_and_bias(Graph& g, const std::string& name, const Int8Weight& w,
                         ArgView bias) {
  fxp::Tensor values(g.get_attr_tensor(w.values.c_str()));
  fxp::Tensor scales(g.get_attr_tensor(w.scales.c_str()));
  const int64_t channels = values.dl().shape[0];
  if (scales.numel() != channels || scales.dl().dtype.code != kDLFloat ||
      !scales.is_contiguous()) {
    throw fxp::Error(FX_INVALID_ARGUMENT, "'" + w.scales +
                                              "' must hold one float scale per "
                                              "output channel of '" +
                                              w.values + "'");
  }
  fxp::Tensor channel_scales = fxp::make_tensor({channels}, fxp::kFloat64);
  for (int64_t c = 0; c < channels; ++c) {
    channel_scales.mutable_data<double>()[c] = scales.float_at(c);
  }
  fxp::Tensor zero_points = fxp::make_tensor({channels}, fxp::kInt64);
  g.set_attr_quantized((name + ".weight").c_str(), values.release(),
                       channel_scales.dl(), zero_points.dl(), 0);
  if (!bias.is_none()) {
    g.set_attr_tensor((name + ".bias").c_str(),
                      g.get_attr_tensor(bias.node().target_cstr()));
  }
}

// The output's quantization of a static module.
void set_output_qparams(Graph& g, const std::string& name, QParams out) {
  g.set_attr_tensor((name + ".scale").c_str(), scalar(out.scale).release());
  g.set_attr_tensor((name + ".zero_point").c_str(),
                    scalar(out.zero_point).release());
}

// A new submodule's name from the int8 weight's (conv2d_3_weight_int8 ->
// conv2d_3_quantized).
std::string module_name(const Graph& g, const Int8Weight& w) {
  std::string base = w.values;
  const std::string suffix = "_weight_int8";
  if (base.size() > suffix.size() &&
      base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0) {
    base.resize(base.size() - suffix.size());
  }
  return fx_plugins::fresh_attr_name(g, base + "_quantized");
}

bool bias_ok(ArgView bias) {
  return bias.is_none() ||
         (bias.is_node() && bias.node().op() == FX_OP_GET_ATTR);
}

// dequantize(X) -> F.conv2d / F.linear on an int8 weight [-> ReLU] ->
// quantize_per_tensor: one quantized module called on X.
bool Lowering::lower_weighted(Node op) {
  const bool conv = op.target() == "torch.nn.functional.conv2d";
  if (!conv && op.target() != "torch.nn.functional.linear") return false;
  if (op.num_kwargs() != 0 || op.num_args() < 3) return false;
  std::optional<Node> x = quantized_source(op.arg(0));
  std::optional<Int8Weight> w = int8_weight(op.arg(1));
  std::optional<Requantized> r = requantized(op);
  if (!x || !w || !r || !bias_ok(op.arg(2))) return false;
  std::vector<int64_t> shape =
      fxp::Tensor(g_.get_attr_tensor(w->values.c_str())).shape();
  std::optional<Arg> config = module_config(op, shape, bool(r->relu));
  if (!config) return false;
  std::string name = module_name(g_, *w);
  fxp::add_module(g_, name.c_str(), module_type(conv, bool(r->relu)), *config);
  set_weight_and_bias(g_, name, *w, op.arg(2));
  set_output_qparams(g_, name, r->qparams);
  Node call;
  {
    auto guard = g_.inserting_before(r->insert_before());
    call = g_.call_module(name.c_str(), {Arg(*x)});
  }
  replace_chain(op, *r, call);
  lowered_.insert(call.get());
  return true;
}

// quantize_weights{dynamic=true}'s pattern, F.linear(dequantize(
// torch.quantize_per_tensor_dynamic(x, torch.quint8, False)), int8 weight,
// bias): one dynamically quantized Linear called on x.
bool Lowering::lower_dynamic(Node op) {
  if (op.target() != "torch.nn.functional.linear" || op.num_args() != 3 ||
      op.num_kwargs() != 0 || !op.arg(0).is_node()) {
    return false;
  }
  Node dq = op.arg(0).node();
  if (!is_dequantize(dq)) return false;
  Node q = dq.arg(0).node();
  if (q.op() != FX_OP_CALL_FUNCTION ||
      q.target() != "torch.quantize_per_tensor_dynamic" || q.num_args() != 3 ||
      !q.arg(0).is_node()) {
    return false;
  }
  std::optional<Int8Weight> w = int8_weight(op.arg(1));
  if (!w || !bias_ok(op.arg(2))) return false;
  std::vector<int64_t> shape =
      fxp::Tensor(g_.get_attr_tensor(w->values.c_str())).shape();
  std::optional<Arg> config = module_config(op, shape, false);
  if (!config) return false;
  std::string name = module_name(g_, *w);
  fxp::add_module(g_, name.c_str(),
                  "torch.ao.nn.quantized.dynamic.modules.linear.Linear",
                  *config);
  set_weight_and_bias(g_, name, *w, op.arg(2));
  Node call;
  {
    auto guard = g_.inserting_before(op);
    call = g_.call_module(name.c_str(), {Arg(q.arg(0).node())});
  }
  op.replace_all_uses_with(call);
  lowered_.insert(call.get());
  g_.erase_node(op);
  return true;
}

// PyTorch's reference pattern (convert_to_reference_fx): dequantize(X) ->
// a call of a reference Conv2d / Linear, or of a ConvReLU2d / LinearReLU
// holding one [-> ReLU] -> quantize_per_tensor becomes a call of the
// quantized module convert_fx builds, under the same name (so a module
// called from two places stays as it is).
bool Lowering::lower_reference(Node op) {
  if (op.num_args() != 1 || op.num_kwargs() != 0) return false;
  const std::string target(op.target());
  std::optional<ReferenceModule> m = reference_module(g_, target);
  if (!m) return false;
  std::optional<Node> x = quantized_source(op.arg(0));
  std::optional<Requantized> r = requantized(op);
  if (!x || !r || (m->fused_relu && r->relu)) return false;
  if (g_.find_nodes(FX_OP_CALL_MODULE, target.c_str()).size() != 1) {
    return false;
  }
  const bool relu = m->fused_relu || bool(r->relu);
  std::optional<QuantizedParts> parts = quantized_parts(g_, *m, relu);
  if (!parts) return false;
  fxp::add_module(g_, target.c_str(), module_type(m->conv, relu),
                  parts->config);
  g_.set_attr_quantized((target + ".weight").c_str(), parts->values.release(),
                        parts->scales.dl(), parts->zero_points.dl(),
                        parts->axis);
  if (parts->bias) {
    g_.set_attr_tensor((target + ".bias").c_str(), parts->bias.release());
  }
  set_output_qparams(g_, target, r->qparams);
  op.replace_input_with(op.arg(0).node(), *x);
  replace_chain(op, *r, op);
  lowered_.insert(op.get());
  return true;
}

}  // namespace

bool quantize_lower(Graph& g, const fxp::Options&) { return Lowering(g).run(); }

}  // namespace fx_quant
