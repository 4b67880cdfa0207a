// torch.nn.MultiheadAttention and the Transformer encoder and decoder
// layers, rebuilt from torch 1.13's torch/nn/modules/activation.py,
// transformer.py and F.multi_head_attention_forward.
//
// The parameters are Python's (in_proj_weight or q/k/v_proj_weight,
// in_proj_bias, bias_k, bias_v, and the out_proj Linear submodule), so a
// bundle's weights load by name. forward() is Python's, including its
// choice of path: in eval mode, for batch-first self-attention with the
// conditions Python checks, torch._native_multi_head_attention (the fused
// kernel Python calls); otherwise F.multi_head_attention_forward step for
// step (masks merged the same way, the same scaling and baddbmm). The
// layers hold Python's children (self_attn, linear1, dropout, linear2,
// norm1.., dropout1..) and run Python's forward, with the fused
// torch._transformer_encoder_layer_fwd where Python takes it. Only 'relu'
// and 'gelu' activations can be named in a graph file.
#include <ATen/ATen.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/modules/functional_module.h"
#include "fx_core/runtime/modules/module_spec.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using c10::IValue;
using nn::FunctionalModuleImpl;
using MaybeTensor = c10::optional<at::Tensor>;

MaybeTensor tensor_named(FunctionalModuleImpl& m, const std::string& name) {
  return m.tensor(name);
}

// What one attention call uses, read from the module once.
struct Attention {
  int64_t embed_dim, num_heads;
  double dropout;
  bool add_zero_attn, batch_first, same_embed_dim, training;
  MaybeTensor in_proj_weight, in_proj_bias, bias_k, bias_v, q_proj, k_proj,
      v_proj, out_weight, out_bias;
};

Attention attention_of(FunctionalModuleImpl& m) {
  Attention a;
  a.embed_dim = m.config("embed_dim").toInt();
  a.num_heads = m.config("num_heads").toInt();
  a.dropout = m.config("dropout").toScalar().toDouble();
  a.add_zero_attn = m.config("add_zero_attn").toBool();
  a.batch_first = m.config("batch_first").toBool();
  a.training = m.is_training();
  a.in_proj_weight = tensor_named(m, "in_proj_weight");
  a.same_embed_dim = a.in_proj_weight.has_value();
  a.in_proj_bias = tensor_named(m, "in_proj_bias");
  a.bias_k = tensor_named(m, "bias_k");
  a.bias_v = tensor_named(m, "bias_v");
  a.q_proj = tensor_named(m, "q_proj_weight");
  a.k_proj = tensor_named(m, "k_proj_weight");
  a.v_proj = tensor_named(m, "v_proj_weight");
  a.out_weight = tensor_named(m, "out_proj.weight");
  a.out_bias = tensor_named(m, "out_proj.bias");
  return a;
}

bool same(const at::Tensor& a, const at::Tensor& b) { return a.is_same(b); }

// _in_projection_packed: one linear when q, k and v are the same tensor.
std::vector<at::Tensor> in_projection_packed(const at::Tensor& q,
                                             const at::Tensor& k,
                                             const at::Tensor& v,
                                             const at::Tensor& w,
                                             const MaybeTensor& b) {
  int64_t e = q.size(-1);
  if (same(k, v)) {
    if (same(q, k)) return at::linear(q, w, b).chunk(3, -1);
    std::vector<at::Tensor> ws = w.split_with_sizes({e, e * 2});
    MaybeTensor b_q, b_kv;
    if (b) {
      std::vector<at::Tensor> bs = b->split_with_sizes({e, e * 2});
      b_q = bs[0];
      b_kv = bs[1];
    }
    std::vector<at::Tensor> kv = at::linear(k, ws[1], b_kv).chunk(2, -1);
    return {at::linear(q, ws[0], b_q), kv[0], kv[1]};
  }
  std::vector<at::Tensor> ws = w.chunk(3);
  std::vector<MaybeTensor> bs(3);
  if (b) {
    std::vector<at::Tensor> chunks = b->chunk(3);
    for (int i = 0; i < 3; ++i) bs[i] = chunks[i];
  }
  return {at::linear(q, ws[0], bs[0]), at::linear(k, ws[1], bs[1]),
          at::linear(v, ws[2], bs[2])};
}

std::vector<at::Tensor> in_projection(const Attention& at_, const at::Tensor& q,
                                      const at::Tensor& k,
                                      const at::Tensor& v) {
  if (at_.same_embed_dim) {
    return in_projection_packed(q, k, v, *at_.in_proj_weight, at_.in_proj_bias);
  }
  std::vector<MaybeTensor> bs(3);
  if (at_.in_proj_bias) {
    std::vector<at::Tensor> chunks = at_.in_proj_bias->chunk(3);
    for (int i = 0; i < 3; ++i) bs[i] = chunks[i];
  }
  return {at::linear(q, *at_.q_proj, bs[0]), at::linear(k, *at_.k_proj, bs[1]),
          at::linear(v, *at_.v_proj, bs[2])};
}

at::Tensor pad_last(const at::Tensor& t) {
  return at::constant_pad_nd(t, {0, 1});
}

// F.multi_head_attention_forward on (L, N, E) inputs, or unbatched (L, E).
std::tuple<at::Tensor, MaybeTensor> attention_forward(
    const Attention& a, at::Tensor query, at::Tensor key, at::Tensor value,
    MaybeTensor key_padding_mask, bool need_weights, MaybeTensor attn_mask,
    bool average_weights) {
  bool is_batched = query.dim() == 3;
  if (!is_batched) {
    bool kv_same = same(key, value), qk_same = same(query, key);
    query = query.unsqueeze(1);
    key = qk_same ? query : key.unsqueeze(1);
    value = kv_same ? key : value.unsqueeze(1);
    if (key_padding_mask) key_padding_mask = key_padding_mask->unsqueeze(0);
  }
  int64_t tgt_len = query.size(0), bsz = query.size(1);
  int64_t heads = a.num_heads, head_dim = a.embed_dim / heads;
  if (query.size(2) != a.embed_dim) {
    throw FxError(cat("was expecting embedding dimension of ", a.embed_dim,
                      ", but got ", query.size(2)));
  }
  std::vector<at::Tensor> qkv = in_projection(a, query, key, value);
  at::Tensor q = qkv[0], k = qkv[1], v = qkv[2];
  if (attn_mask) {
    if (attn_mask->scalar_type() == at::kByte) {
      attn_mask = attn_mask->to(at::kBool);
    }
    if (attn_mask->dim() == 2) attn_mask = attn_mask->unsqueeze(0);
  }
  if (a.bias_k && a.bias_v) {
    k = at::cat({k, a.bias_k->repeat({1, bsz, 1})});
    v = at::cat({v, a.bias_v->repeat({1, bsz, 1})});
    if (attn_mask) attn_mask = pad_last(*attn_mask);
    if (key_padding_mask) key_padding_mask = pad_last(*key_padding_mask);
  }
  q = q.contiguous().view({tgt_len, bsz * heads, head_dim}).transpose(0, 1);
  k = k.contiguous().view({k.size(0), bsz * heads, head_dim}).transpose(0, 1);
  v = v.contiguous().view({v.size(0), bsz * heads, head_dim}).transpose(0, 1);
  if (a.add_zero_attn) {
    k = at::cat({k, at::zeros({bsz * heads, 1, head_dim}, k.options())}, 1);
    v = at::cat({v, at::zeros({bsz * heads, 1, head_dim}, v.options())}, 1);
    if (attn_mask) attn_mask = pad_last(*attn_mask);
    if (key_padding_mask) key_padding_mask = pad_last(*key_padding_mask);
  }
  int64_t src_len = k.size(1);
  if (key_padding_mask) {
    at::Tensor kpm = key_padding_mask->view({bsz, 1, 1, src_len})
                         .expand({-1, heads, -1, -1})
                         .reshape({bsz * heads, 1, src_len});
    if (!attn_mask) {
      attn_mask = kpm;
    } else if (attn_mask->scalar_type() == at::kBool) {
      attn_mask = attn_mask->logical_or(kpm);
    } else {
      attn_mask = *attn_mask + kpm;
    }
  }
  if (attn_mask && attn_mask->scalar_type() == at::kBool) {
    at::Tensor additive = at::zeros_like(*attn_mask, q.options());
    additive.masked_fill_(*attn_mask, -std::numeric_limits<double>::infinity());
    attn_mask = additive;
  }
  double dropout_p = a.training ? a.dropout : 0.0;
  at::Tensor q_scaled = q / std::sqrt(static_cast<double>(q.size(2)));
  at::Tensor weights =
      attn_mask ? at::baddbmm(*attn_mask, q_scaled, k.transpose(-2, -1))
                : at::bmm(q_scaled, k.transpose(-2, -1));
  weights = at::softmax(weights, -1);
  if (dropout_p > 0.0) weights = at::dropout(weights, dropout_p, true);
  at::Tensor out = at::bmm(weights, v);
  out = out.transpose(0, 1).contiguous().view({tgt_len * bsz, a.embed_dim});
  out = at::linear(out, *a.out_weight, a.out_bias);
  out = out.view({tgt_len, bsz, out.size(1)});
  if (!need_weights) {
    return {is_batched ? out : out.squeeze(1), c10::nullopt};
  }
  weights = weights.view({bsz, heads, tgt_len, src_len});
  if (average_weights) weights = weights.sum(1) / heads;
  if (!is_batched) return {out.squeeze(1), weights.squeeze(0)};
  return {out, weights};
}

bool fast_path(const Attention& a, const at::Tensor& q, const at::Tensor& k,
               const at::Tensor& v, const MaybeTensor& attn_mask) {
  if (q.dim() != 3 || !same(q, k) || !same(k, v) || a.training ||
      !a.batch_first || a.bias_k || a.bias_v || a.dropout != 0.0 ||
      a.add_zero_attn || !a.same_embed_dim || attn_mask ||
      a.num_heads % 2 == 1) {
    return false;
  }
  if (a.in_proj_bias && q.scalar_type() != a.in_proj_bias->scalar_type()) {
    return false;
  }
  if (q.scalar_type() != a.in_proj_weight->scalar_type()) return false;
  if (!at::GradMode::is_enabled()) return true;
  for (const MaybeTensor& t : {MaybeTensor(q), a.in_proj_weight, a.in_proj_bias,
                               a.out_weight, a.out_bias}) {
    if (t && t->requires_grad()) return false;
  }
  return true;
}

IValue result(at::Tensor out, const MaybeTensor& weights) {
  return make_tuple({out, weights ? IValue(*weights) : IValue()});
}

// MultiheadAttention.forward(query, key, value, key_padding_mask=None,
// need_weights=True, attn_mask=None, average_attn_weights=True)
IValue multihead_forward(FunctionalModuleImpl& m, OpArgs& args) {
  Attention a = attention_of(m);
  at::Tensor query = args.tensor(0), key = args.tensor(1),
             value = args.tensor(2);
  MaybeTensor kpm = args.optional_tensor(3);
  bool need_weights = args.to_bool(4), average = args.to_bool(6);
  MaybeTensor attn_mask = args.optional_tensor(5);
  if (kpm && kpm->scalar_type() != at::kBool && !kpm->is_floating_point()) {
    throw FxError(
        "only bool and floating types of key_padding_mask are "
        "supported");
  }
  if (fast_path(a, query, key, value, attn_mask)) {
    c10::optional<int64_t> mask_type;
    if (kpm) mask_type = 1;
    auto [out, weights] = at::_native_multi_head_attention(
        query, key, value, a.embed_dim, a.num_heads, *a.in_proj_weight,
        *a.in_proj_bias, *a.out_weight, *a.out_bias, kpm, need_weights, average,
        mask_type);
    return result(out, weights.defined() ? MaybeTensor(weights) : c10::nullopt);
  }
  bool batched = query.dim() == 3;
  if (a.batch_first && batched) {
    bool kv = same(key, value), qk = same(query, key);
    query = query.transpose(1, 0);
    key = qk ? query : key.transpose(1, 0);
    value = kv ? key : value.transpose(1, 0);
  }
  auto [out, weights] = attention_forward(a, query, key, value, kpm,
                                          need_weights, attn_mask, average);
  if (a.batch_first && batched) out = out.transpose(1, 0);
  return result(out, weights);
}

// MultiheadAttention's parameters by key and shape, as
// make_multihead_parameters makes them (out_proj is a Linear).
WeightShapes multihead_weight_shapes(OpArgs& args) {
  int64_t e = args.to_int(0);
  bool bias = args.to_bool(3), bias_kv = args.to_bool(4);
  int64_t kdim = args.is_none(6) ? e : args.to_int(6);
  int64_t vdim = args.is_none(7) ? e : args.to_int(7);
  if (args.to_int(1) <= 0 || e % args.to_int(1) != 0) {
    throw FxError("embed_dim must be divisible by num_heads");
  }
  WeightShapes shapes;
  if (kdim == e && vdim == e) {
    shapes.push_back({"in_proj_weight", {3 * e, e}});
  } else {
    shapes.push_back({"q_proj_weight", {e, e}});
    shapes.push_back({"k_proj_weight", {e, kdim}});
    shapes.push_back({"v_proj_weight", {e, vdim}});
  }
  if (bias) shapes.push_back({"in_proj_bias", {3 * e}});
  shapes.push_back({"out_proj.weight", {e, e}});
  if (bias) shapes.push_back({"out_proj.bias", {e}});
  if (bias_kv) {
    shapes.push_back({"bias_k", {1, 1, e}});
    shapes.push_back({"bias_v", {1, 1, e}});
  }
  return shapes;
}

void make_multihead_parameters(FunctionalModuleImpl& m, OpArgs& args) {
  int64_t e = args.to_int(0), heads = args.to_int(1);
  bool bias = args.to_bool(3), bias_kv = args.to_bool(4);
  int64_t kdim = args.is_none(6) ? e : args.to_int(6);
  int64_t vdim = args.is_none(7) ? e : args.to_int(7);
  if (heads <= 0 || e % heads != 0) {
    throw FxError("embed_dim must be divisible by num_heads");
  }
  if (kdim == e && vdim == e) {
    m.register_parameter("in_proj_weight", at::zeros({3 * e, e}));
  } else {
    m.register_parameter("q_proj_weight", at::zeros({e, e}));
    m.register_parameter("k_proj_weight", at::zeros({e, kdim}));
    m.register_parameter("v_proj_weight", at::zeros({e, vdim}));
  }
  if (bias) m.register_parameter("in_proj_bias", at::zeros({3 * e}));
  m.register_module("out_proj", std::make_shared<torch::nn::LinearImpl>(
                                    torch::nn::LinearOptions(e, e).bias(bias)));
  if (bias_kv) {
    m.register_parameter("bias_k", at::zeros({1, 1, e}));
    m.register_parameter("bias_v", at::zeros({1, 1, e}));
  }
}

// --- Transformer layers ---------------------------------------------------

std::shared_ptr<torch::nn::Module> child(FunctionalModuleImpl& m,
                                         const std::string& name) {
  return m.named_children()[name];
}

at::Tensor linear(FunctionalModuleImpl& m, const char* name,
                  const at::Tensor& x) {
  return child(m, name)->as<torch::nn::LinearImpl>()->forward(x);
}

at::Tensor layer_norm(FunctionalModuleImpl& m, const char* name,
                      const at::Tensor& x) {
  return child(m, name)->as<torch::nn::LayerNormImpl>()->forward(x);
}

at::Tensor dropout(FunctionalModuleImpl& m, const char* name,
                   const at::Tensor& x) {
  return child(m, name)->as<torch::nn::DropoutImpl>()->forward(x);
}

// Calls the MultiheadAttention child `name` with need_weights=False.
at::Tensor attend(FunctionalModuleImpl& m, const char* name,
                  const at::Tensor& q, const at::Tensor& kv,
                  const MaybeTensor& attn_mask, const MaybeTensor& kpm) {
  auto* mha = dynamic_cast<FunctionalModuleImpl*>(child(m, name).get());
  Attention a = attention_of(*mha);
  at::Tensor query = q, key = kv, value = kv;
  bool batched = q.dim() == 3;
  if (a.batch_first && batched) {
    bool self_attention = same(q, kv);
    query = q.transpose(1, 0);
    key = self_attention ? query : kv.transpose(1, 0);
    value = key;
  }
  at::Tensor out = std::get<0>(
      attention_forward(a, query, key, value, kpm, false, attn_mask, true));
  return a.batch_first && batched ? out.transpose(1, 0) : out;
}

at::Tensor activation(FunctionalModuleImpl& m, const at::Tensor& x) {
  const std::string& name = m.config("activation").toStringRef();
  if (name == "relu") return at::relu(x);
  if (name == "gelu") return at::gelu(x);
  throw FxError(cat("activation should be relu/gelu, not ", name));
}

at::Tensor feed_forward(FunctionalModuleImpl& m, const at::Tensor& x) {
  at::Tensor h = linear(m, "linear1", x);
  h = linear(m, "linear2", dropout(m, "dropout", activation(m, h)));
  return dropout(
      m, m.named_children().contains("dropout3") ? "dropout3" : "dropout2", h);
}

at::Tensor self_attention_block(FunctionalModuleImpl& m, const at::Tensor& x,
                                const MaybeTensor& mask,
                                const MaybeTensor& kpm) {
  return dropout(m, "dropout1", attend(m, "self_attn", x, x, mask, kpm));
}

bool encoder_fast_path(FunctionalModuleImpl& m, const at::Tensor& src,
                       const MaybeTensor& src_mask) {
  auto* mha = dynamic_cast<FunctionalModuleImpl*>(child(m, "self_attn").get());
  Attention a = attention_of(*mha);
  double eps1 =
      child(m, "norm1")->as<torch::nn::LayerNormImpl>()->options.eps();
  double eps2 =
      child(m, "norm2")->as<torch::nn::LayerNormImpl>()->options.eps();
  if (src.dim() != 3 || m.is_training() || !a.batch_first ||
      !a.same_embed_dim || src_mask || eps1 != eps2 || a.num_heads % 2 == 1 ||
      !a.in_proj_bias || !a.out_bias) {
    return false;
  }
  if (!at::GradMode::is_enabled()) return true;
  if (src.requires_grad()) return false;
  for (const auto& p : m.parameters()) {
    if (p.requires_grad()) return false;
  }
  return true;
}

// TransformerEncoderLayer.forward(src, src_mask=None,
// src_key_padding_mask=None)
IValue encoder_layer_forward(FunctionalModuleImpl& m, OpArgs& args) {
  at::Tensor x = args.tensor(0);
  MaybeTensor mask = args.optional_tensor(1), kpm = args.optional_tensor(2);
  if (kpm && kpm->scalar_type() != at::kBool && !kpm->is_floating_point()) {
    throw FxError(
        "only bool and floating types of key_padding_mask are "
        "supported");
  }
  bool norm_first = m.config("norm_first").toBool();
  if (encoder_fast_path(m, x, mask)) {
    auto* mha =
        dynamic_cast<FunctionalModuleImpl*>(child(m, "self_attn").get());
    Attention a = attention_of(*mha);
    auto ln = [&m](const char* name) {
      return child(m, name)->as<torch::nn::LayerNormImpl>();
    };
    auto lin = [&m](const char* name) {
      return child(m, name)->as<torch::nn::LinearImpl>();
    };
    c10::optional<int64_t> mask_type;
    if (kpm) mask_type = 1;
    return at::_transformer_encoder_layer_fwd(
        x, a.embed_dim, a.num_heads, *a.in_proj_weight, *a.in_proj_bias,
        *a.out_weight, *a.out_bias,
        m.config("activation").toStringRef() == "gelu", norm_first,
        ln("norm1")->options.eps(), ln("norm1")->weight, ln("norm1")->bias,
        ln("norm2")->weight, ln("norm2")->bias, lin("linear1")->weight,
        lin("linear1")->bias, lin("linear2")->weight, lin("linear2")->bias, kpm,
        mask_type);
  }
  if (norm_first) {
    x = x + self_attention_block(m, layer_norm(m, "norm1", x), mask, kpm);
    return x + feed_forward(m, layer_norm(m, "norm2", x));
  }
  x = layer_norm(m, "norm1", x + self_attention_block(m, x, mask, kpm));
  return layer_norm(m, "norm2", x + feed_forward(m, x));
}

// TransformerDecoderLayer.forward(tgt, memory, tgt_mask=None,
// memory_mask=None, tgt_key_padding_mask=None,
// memory_key_padding_mask=None)
IValue decoder_layer_forward(FunctionalModuleImpl& m, OpArgs& args) {
  at::Tensor x = args.tensor(0), memory = args.tensor(1);
  MaybeTensor tgt_mask = args.optional_tensor(2);
  MaybeTensor memory_mask = args.optional_tensor(3);
  MaybeTensor tgt_kpm = args.optional_tensor(4);
  MaybeTensor memory_kpm = args.optional_tensor(5);
  auto cross = [&](const at::Tensor& h) {
    return dropout(
        m, "dropout2",
        attend(m, "multihead_attn", h, memory, memory_mask, memory_kpm));
  };
  if (m.config("norm_first").toBool()) {
    x = x +
        self_attention_block(m, layer_norm(m, "norm1", x), tgt_mask, tgt_kpm);
    x = x + cross(layer_norm(m, "norm2", x));
    return x + feed_forward(m, layer_norm(m, "norm3", x));
  }
  x = layer_norm(m, "norm1", x + self_attention_block(m, x, tgt_mask, tgt_kpm));
  x = layer_norm(m, "norm2", x + cross(x));
  return layer_norm(m, "norm3", x + feed_forward(m, x));
}

// The children both layers have, as Python's constructors make them.
void make_layer_children(FunctionalModuleImpl& m, OpArgs& args, bool decoder) {
  int64_t d = args.to_int(0), ff = args.to_int(2);
  double p = args.to_double(3), eps = args.to_double(5);
  bool batch_first = args.to_bool(6);
  const std::string activation = args[4].isString() ? args.to_string(4) : "";
  if (activation != "relu" && activation != "gelu") {
    throw FxError(
        "activation should be 'relu' or 'gelu' (a graph file "
        "cannot name another callable)");
  }
  auto attention = [&] {
    return ModuleRegistry::global().create("torch.nn.MultiheadAttention",
                                           {{"embed_dim", d},
                                            {"num_heads", args.to_int(1)},
                                            {"dropout", p},
                                            {"batch_first", batch_first}});
  };
  m.register_module("self_attn", attention());
  if (decoder) m.register_module("multihead_attn", attention());
  m.register_module("linear1", std::make_shared<torch::nn::LinearImpl>(d, ff));
  m.register_module("dropout", std::make_shared<torch::nn::DropoutImpl>(p));
  m.register_module("linear2", std::make_shared<torch::nn::LinearImpl>(ff, d));
  int norms = decoder ? 3 : 2;
  for (int i = 1; i <= norms; ++i) {
    m.register_module(cat("norm", i),
                      std::make_shared<torch::nn::LayerNormImpl>(
                          torch::nn::LayerNormOptions({d}).eps(eps)));
  }
  for (int i = 1; i <= norms; ++i) {
    m.register_module(cat("dropout", i),
                      std::make_shared<torch::nn::DropoutImpl>(p));
  }
}

// The weights make_layer_children makes: the attention blocks' (as
// MultiheadAttention declares them), the feed-forward Linears' and the
// LayerNorms'.
void visit_layer_weights(OpArgs& args, bool decoder,
                         const WeightVisitor& visit) {
  int64_t d = args.to_int(0), ff = args.to_int(2);
  for (const char* block : {"self_attn", "multihead_attn"}) {
    if (!decoder && std::string(block) == "multihead_attn") continue;
    ModuleRegistry::global().visit_weights(
        "torch.nn.MultiheadAttention",
        {{"embed_dim", d}, {"num_heads", args.to_int(1)}},
        [&](const std::string& key, const std::vector<int64_t>& shape) {
          visit(cat(block, ".", key), shape);
        });
  }
  visit("linear1.weight", {ff, d});
  visit("linear1.bias", {ff});
  visit("linear2.weight", {d, ff});
  visit("linear2.bias", {d});
  for (int i = 1; i <= (decoder ? 3 : 2); ++i) {
    visit(cat("norm", i, ".weight"), {d});
    visit(cat("norm", i, ".bias"), {d});
  }
}

}  // namespace

void add_attention_specs(std::vector<FunctionalModuleSpec>* specs) {
  FunctionalModuleSpec mha{
      "MultiheadAttention",
      "embed_dim, num_heads, dropout=0.0, bias=True, "
      "add_bias_kv=False, add_zero_attn=False, kdim=None, "
      "vdim=None, batch_first=False, device=None, dtype=None",
      "query, key, value, key_padding_mask=None, need_weights=True, "
      "attn_mask=None, average_attn_weights=True",
      "",
      {}};
  mha.config_rules = {ints_at_least("embed_dim", 1),
                      ints_at_least("num_heads", 1), ints_at_least("kdim", 1),
                      ints_at_least("vdim", 1), float_in("dropout", 0, 1)};
  mha.weight_shapes = multihead_weight_shapes;
  mha.parameters = make_multihead_parameters;
  mha.custom = multihead_forward;
  specs->push_back(std::move(mha));
  const char* layer =
      "d_model, nhead, dim_feedforward=2048, dropout=0.1, activation='relu', "
      "layer_norm_eps=1e-05, batch_first=False, norm_first=False, "
      "device=None, dtype=None";
  const std::vector<ConfigRule> layer_rules = {
      ints_at_least("d_model", 1), ints_at_least("nhead", 1),
      ints_at_least("dim_feedforward", 0), float_in("dropout", 0, 1)};
  FunctionalModuleSpec encoder{"TransformerEncoderLayer",
                               layer,
                               "src, src_mask=None, src_key_padding_mask=None",
                               "",
                               {}};
  encoder.config_rules = layer_rules;
  encoder.parameters = [](FunctionalModuleImpl& m, OpArgs& a) {
    make_layer_children(m, a, false);
  };
  encoder.visit_weights = [](OpArgs& a, const WeightVisitor& visit) {
    visit_layer_weights(a, false, visit);
  };
  encoder.custom = encoder_layer_forward;
  specs->push_back(std::move(encoder));
  FunctionalModuleSpec decoder{
      "TransformerDecoderLayer",
      layer,
      "tgt, memory, tgt_mask=None, memory_mask=None, "
      "tgt_key_padding_mask=None, memory_key_padding_mask=None",
      "",
      {}};
  decoder.config_rules = layer_rules;
  decoder.parameters = [](FunctionalModuleImpl& m, OpArgs& a) {
    make_layer_children(m, a, true);
  };
  decoder.visit_weights = [](OpArgs& a, const WeightVisitor& visit) {
    visit_layer_weights(a, true, visit);
  };
  decoder.custom = decoder_layer_forward;
  specs->push_back(std::move(decoder));
}

}  // namespace fx
