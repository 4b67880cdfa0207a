// torch.nn.TransformerEncoder, TransformerDecoder and Transformer: stacks of
// the Transformer layers of attention_modules.cc, as torch 1.13 defines them
// (torch/nn/modules/transformer.py).
//
// Their constructors take modules (the layer to clone, the final norm, a
// custom encoder or decoder). A graph file's `config` holds such an argument
// as the module's own description in ARG encoding, a dict
// {"type": "torch.nn.TransformerEncoderLayer", "config": {...},
// "training": false} (what tools/torchfx_export.py writes), built here
// through the module registry like any other module.
#include <ATen/ATen.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/normalization.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/runtime/modules/module_spec.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using c10::IValue;
using nn::FunctionalModuleImpl;
using MaybeTensor = c10::optional<at::Tensor>;
using ModulePtr = std::shared_ptr<torch::nn::Module>;

// The weights of `n` copies of the layer `layer` describes (children
// "layers.0" .. "layers.<n-1>") and of the norm: the layer's are formed
// once and named for each copy in turn.
void visit_stack(const IValue& layer, int64_t n, const IValue& norm,
                 const std::string& what, const std::string& prefix,
                 const WeightVisitor& visit) {
  WeightShapes one;
  visit_described_weights(
      layer, what, "",
      [&](const std::string& key, const std::vector<int64_t>& s) {
        one.emplace_back(key, s);
      });
  for (int64_t i = 0; i < n; ++i) {
    for (const auto& [key, shape] : one) {
      visit(cat(prefix, "layers.", i, ".", key), shape);
    }
  }
  if (!norm.isNone())
    visit_described_weights(norm, "norm", cat(prefix, "norm."), visit);
}

// Python's _get_clones: `n` copies of the layer `layer` describes, as
// children "0" .. "n-1" of a ModuleList registered as "layers".
void make_layers(FunctionalModuleImpl& m, const IValue& layer, int64_t n,
                 const std::string& what) {
  if (n < 0) throw FxError(cat("num_layers must be >= 0, got ", n));
  torch::nn::ModuleList layers;
  for (int64_t i = 0; i < n; ++i) {
    layers->push_back(module_from_description(layer, what));
  }
  m.register_module("layers", layers.ptr());
}

void make_norm(FunctionalModuleImpl& m, const IValue& norm) {
  if (!norm.isNone())
    m.register_module("norm", module_from_description(norm, "norm"));
}

std::vector<ModulePtr> layers_of(FunctionalModuleImpl& m) {
  return m.named_children()["layers"]->children();
}

// The stack's final norm, or nullptr. (named_children() is a copy: the
// child is taken out of it before it goes.)
ModulePtr final_norm(FunctionalModuleImpl& m) {
  auto children = m.named_children();
  const ModulePtr* norm = children.find("norm");
  return norm == nullptr ? nullptr : *norm;
}

IValue call_child(torch::nn::Module& child, const std::string& name,
                  std::vector<IValue> args) {
  return call_module(child, name, std::move(args), {});
}

IValue optional_value(const MaybeTensor& t) {
  return t ? IValue(*t) : IValue();
}

// TransformerEncoder's "sparsity fast path": the reasons torch 1.13 checks,
// in its order, for running the layers on a nested tensor built from the
// key padding mask. True when none applies.
bool nested_fast_path(FunctionalModuleImpl& m, const at::Tensor& src,
                      const MaybeTensor& mask, const MaybeTensor& kpm) {
  std::vector<ModulePtr> layers = layers_of(m);
  if (layers.empty() || !kpm || mask || src.dim() != 3 || src.is_nested()) {
    return false;
  }
  auto* first = dynamic_cast<FunctionalModuleImpl*>(layers[0].get());
  if (first == nullptr || first->name() != "torch.nn.TransformerEncoderLayer" ||
      first->config("norm_first").toBool() || first->is_training() ||
      !first->config("batch_first").toBool() ||
      !m.config("enable_nested_tensor").toBool()) {
    return false;
  }
  const auto& ln = first->named_children();
  if (ln["norm1"]->as<torch::nn::LayerNormImpl>()->options.eps() !=
          ln["norm2"]->as<torch::nn::LayerNormImpl>()->options.eps() ||
      first->config("nhead").toInt() % 2 == 1) {
    return false;
  }
  if (m.config("mask_check").toBool() &&
      !at::_nested_tensor_from_mask_left_aligned(src, kpm->logical_not())) {
    return false;
  }
  if (at::GradMode::is_enabled()) {
    if (src.requires_grad()) return false;
    for (const at::Tensor& p : first->parameters()) {
      if (p.requires_grad()) return false;
    }
  }
  return true;
}

// TransformerEncoder.forward(src, mask=None, src_key_padding_mask=None)
IValue encoder_forward(FunctionalModuleImpl& m, OpArgs& args) {
  at::Tensor output = args.tensor(0);
  MaybeTensor mask = args.optional_tensor(1), kpm = args.optional_tensor(2);
  if (kpm && kpm->scalar_type() != at::kBool && !kpm->is_floating_point()) {
    throw FxError(
        "only bool and floating types of key_padding_mask are supported");
  }
  bool nested = nested_fast_path(m, output, mask, kpm);
  if (nested) {
    output = at::_nested_tensor_from_mask(output, kpm->logical_not(), false);
    kpm.reset();
  }
  std::vector<ModulePtr> layers = layers_of(m);
  for (size_t i = 0; i < layers.size(); ++i) {
    output = call_child(*layers[i], cat("layers.", i),
                        {output, optional_value(mask), optional_value(kpm)})
                 .toTensor();
  }
  if (nested) output = output.to_padded_tensor(0.0);
  if (ModulePtr norm = final_norm(m)) {
    output = call_child(*norm, "norm", {output}).toTensor();
  }
  return output;
}

// TransformerDecoder.forward(tgt, memory, tgt_mask=None, memory_mask=None,
// tgt_key_padding_mask=None, memory_key_padding_mask=None)
IValue decoder_forward(FunctionalModuleImpl& m, OpArgs& args) {
  IValue output = args[0];
  std::vector<ModulePtr> layers = layers_of(m);
  for (size_t i = 0; i < layers.size(); ++i) {
    output = call_child(*layers[i], cat("layers.", i),
                        {output, args[1], args[2], args[3], args[4], args[5]});
  }
  if (ModulePtr norm = final_norm(m)) {
    output = call_child(*norm, "norm", {output});
  }
  return output;
}

// The description of a Transformer layer or LayerNorm Transformer's
// constructor makes, in the form module_from_config reads.
IValue described(const std::string& type,
                 std::vector<std::pair<std::string, IValue>> config) {
  c10::impl::GenericDict args(c10::StringType::get(), c10::AnyType::get());
  for (auto& [k, v] : config) args.insert(k, std::move(v));
  c10::impl::GenericDict d(c10::StringType::get(), c10::AnyType::get());
  d.insert("type", type);
  d.insert("config", args);
  return d;
}

// The description of Transformer's encoder or decoder: custom, or a stack
// of `n` layers with a LayerNorm after them; `config` reads Transformer's
// constructor arguments by name.
IValue stack_description(const std::function<IValue(const char*)>& config,
                         bool decoder) {
  IValue custom = config(decoder ? "custom_decoder" : "custom_encoder");
  if (!custom.isNone()) return custom;
  std::vector<std::pair<std::string, IValue>> layer;
  for (const char* name :
       {"d_model", "nhead", "dim_feedforward", "dropout", "activation",
        "layer_norm_eps", "batch_first", "norm_first"}) {
    layer.emplace_back(name, config(name));
  }
  IValue norm =
      described("torch.nn.LayerNorm", {{"normalized_shape", config("d_model")},
                                       {"eps", config("layer_norm_eps")}});
  const char* kind = decoder ? "Decoder" : "Encoder";
  return described(
      cat("torch.nn.Transformer", kind),
      {{cat(decoder ? "decoder" : "encoder", "_layer"),
        described(cat("torch.nn.Transformer", kind, "Layer"), layer)},
       {"num_layers",
        config(decoder ? "num_decoder_layers" : "num_encoder_layers")},
       {"norm", norm}});
}

const char* stack_name(bool decoder) {
  return decoder ? "custom_decoder" : "custom_encoder";
}

ModulePtr make_stack(FunctionalModuleImpl& m, bool decoder) {
  return module_from_description(
      stack_description([&m](const char* name) { return m.config(name); },
                        decoder),
      stack_name(decoder));
}

// Transformer's weights: those of its encoder, then its decoder.
void visit_transformer(OpArgs& a, const WeightVisitor& visit) {
  auto config = [&a](const char* name) -> IValue {
    for (size_t i = 0; i < a.size(); ++i) {
      if (a.param_name(i) == name) return a[i];
    }
    throw FxError(cat("Transformer has no constructor argument '", name, "'"));
  };
  for (bool decoder : {false, true}) {
    visit_described_weights(stack_description(config, decoder),
                            stack_name(decoder),
                            decoder ? "decoder." : "encoder.", visit);
  }
}

// Transformer.forward(src, tgt, src_mask=None, tgt_mask=None,
// memory_mask=None, src_key_padding_mask=None, tgt_key_padding_mask=None,
// memory_key_padding_mask=None)
IValue transformer_forward(FunctionalModuleImpl& m, OpArgs& args) {
  at::Tensor src = args.tensor(0), tgt = args.tensor(1);
  bool batched = src.dim() == 3;
  int64_t batch_dim = m.config("batch_first").toBool() ? 0 : 1;
  if (batched && src.size(batch_dim) != tgt.size(batch_dim)) {
    throw FxError("the batch number of src and tgt must be equal");
  }
  int64_t d_model = m.config("d_model").toInt();
  if (src.size(-1) != d_model || tgt.size(-1) != d_model) {
    throw FxError("the feature number of src and tgt must be equal to d_model");
  }
  auto children = m.named_children();
  IValue memory =
      call_child(*children["encoder"], "encoder", {src, args[2], args[5]});
  return call_child(*children["decoder"], "decoder",
                    {tgt, memory, args[3], args[4], args[6], args[7]});
}

// TransformerEncoder's and TransformerDecoder's stack: `num_layers` copies
// of the `layer` given first, then an optional norm; their config rule,
// parameters and weights.
void set_layer_stack(FunctionalModuleSpec& spec, const char* layer) {
  spec.config_rules = {ints_in("num_layers", 0, kMaxRepeatCount)};
  spec.parameters = [layer](FunctionalModuleImpl& m, OpArgs& a) {
    make_layers(m, a[0], a.to_int(1), layer);
    make_norm(m, a[2]);
  };
  spec.visit_weights = [layer](OpArgs& a, const WeightVisitor& visit) {
    visit_stack(a[0], a.to_int(1), a[2], layer, "", visit);
  };
}

}  // namespace

void add_transformer_specs(std::vector<FunctionalModuleSpec>* specs) {
  FunctionalModuleSpec encoder{"TransformerEncoder",
                               "encoder_layer, num_layers, norm=None, "
                               "enable_nested_tensor=True, mask_check=True",
                               "src, mask=None, src_key_padding_mask=None",
                               "",
                               {}};
  set_layer_stack(encoder, "encoder_layer");
  encoder.custom = encoder_forward;
  specs->push_back(std::move(encoder));

  FunctionalModuleSpec decoder{
      "TransformerDecoder",
      "decoder_layer, num_layers, norm=None",
      "tgt, memory, tgt_mask=None, memory_mask=None, "
      "tgt_key_padding_mask=None, memory_key_padding_mask=None",
      "",
      {}};
  set_layer_stack(decoder, "decoder_layer");
  decoder.custom = decoder_forward;
  specs->push_back(std::move(decoder));

  FunctionalModuleSpec transformer{
      "Transformer",
      "d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, "
      "dim_feedforward=2048, dropout=0.1, activation='relu', "
      "custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-05, "
      "batch_first=False, norm_first=False, device=None, dtype=None",
      "src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, "
      "src_key_padding_mask=None, tgt_key_padding_mask=None, "
      "memory_key_padding_mask=None",
      "",
      {}};
  transformer.config_rules = {ints_at_least("d_model", 1),
                              ints_at_least("nhead", 1),
                              ints_in("num_encoder_layers", 0, kMaxRepeatCount),
                              ints_in("num_decoder_layers", 0, kMaxRepeatCount),
                              ints_at_least("dim_feedforward", 0),
                              float_in("dropout", 0, 1)};
  transformer.parameters = [](FunctionalModuleImpl& m, OpArgs&) {
    m.register_module("encoder", make_stack(m, false));
    m.register_module("decoder", make_stack(m, true));
  };
  transformer.visit_weights = visit_transformer;
  transformer.custom = transformer_forward;
  specs->push_back(std::move(transformer));
}

}  // namespace fx
