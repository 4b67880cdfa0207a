// What convert_to_reference_fx leaves in a model (torch 1.13,
// torch/ao/nn/quantized/reference and torch/ao/nn/intrinsic):
//  - the reference quantized Linear and Conv1d/2d/3d: a float module whose
//    weight is quantized and dequantized with its weight_qparams before the
//    float op (the pattern a backend lowers to an int8 kernel); the
//    qparams' scale, zero point and axis are buffers (weight_scale,
//    weight_zero_point, weight_axis), their qscheme and dtype constructor
//    arguments;
//  - the fused containers of torch.ao.nn.intrinsic (ConvReLU2d,
//    LinearReLU, ConvBnReLU2d, ...): a Sequential of the modules their
//    constructor takes, which a file describes as it describes modules.
#include <ATen/ATen.h>

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

// The constructor's weight_qparams (None: per-tensor quint8, scale 1).
struct WeightQParams {
  std::optional<c10::QScheme> qscheme;  // None: the weight is used as is
  c10::ScalarType dtype = c10::kQUInt8;
  std::vector<int64_t> scale_shape;  // [] or [channels]: the buffers' shape
};

std::optional<IValue> dict_entry(const c10::impl::GenericDict& d,
                                 const char* key) {
  auto it = d.find(std::string(key));
  if (it == d.end()) return std::nullopt;
  return it->value();
}

bool quantized_dtype(c10::ScalarType t) {
  return t == c10::kQUInt8 || t == c10::kQInt8 || t == c10::kQUInt4x2 ||
         t == c10::kQInt32;
}

// The qscheme and dtype alone: what each forward needs (the buffers' shape
// was checked when the module was made).
WeightQParams weight_scheme(const IValue& v) {
  WeightQParams q;
  q.qscheme = c10::kPerTensorAffine;
  if (v.isNone()) return q;
  if (!v.isGenericDict()) {
    throw FxError(
        cat("weight_qparams must be a dict, not a ", value_type_name(v)));
  }
  c10::impl::GenericDict d = v.toGenericDict();
  std::optional<IValue> qscheme = dict_entry(d, "qscheme");
  std::optional<IValue> dtype = dict_entry(d, "dtype");
  if (!qscheme || !dtype || !dtype->isInt() ||
      !(qscheme->isNone() || qscheme->isInt())) {
    throw FxError("weight_qparams must give a qscheme (or None) and a dtype");
  }
  if (!qscheme->isNone()) {
    q.qscheme = qscheme_from_int(qscheme->toInt());
    if (!q.qscheme) {
      throw FxError(cat("weight_qparams' qscheme ", qscheme->toInt(),
                        " names no torch.qscheme"));
    }
  }
  std::optional<c10::ScalarType> type = dtype_from_int(dtype->toInt());
  if (!type) {
    throw FxError(
        cat("weight_qparams' dtype ", dtype->toInt(), " names no torch.dtype"));
  }
  q.dtype = *type;
  return q;
}

// weight_qparams checked whole, with the shape of its scale and zero point.
WeightQParams read_qparams(const IValue& v) {
  WeightQParams q = weight_scheme(v);
  if (v.isNone() || !quantized_dtype(q.dtype)) return q;  // 0-dim buffers
  c10::impl::GenericDict d = v.toGenericDict();
  std::optional<IValue> scale = dict_entry(d, "scale");
  std::optional<IValue> zero_point = dict_entry(d, "zero_point");
  if (!scale || !zero_point) {
    throw FxError("weight_qparams must give a scale and a zero_point");
  }
  bool listed = !scale->isDouble() && !scale->isInt();
  size_t n = listed ? sequence_elements(*scale).size() : 0;
  size_t zn = zero_point->isInt() ? 0 : sequence_elements(*zero_point).size();
  if (n != zn || (listed != !zero_point->isInt())) {
    throw FxError("weight_qparams' scale and zero_point differ in length");
  }
  if (listed) q.scale_shape = {static_cast<int64_t>(n)};
  bool per_channel = q.qscheme == c10::kPerChannelAffine ||
                     q.qscheme == c10::kPerChannelAffineFloatQParams;
  if (per_channel && !dict_entry(d, "axis")) {
    throw FxError("weight_qparams of a per-channel qscheme must give an axis");
  }
  return q;
}

// Python's _quantize_and_dequantize_weight (reference/modules/utils.py).
at::Tensor reference_weight(FunctionalModuleImpl& m) {
  WeightQParams q = weight_scheme(m.config("weight_qparams"));
  at::Tensor weight = *m.tensor("weight");
  if (!q.qscheme) return weight;
  bool per_channel = *q.qscheme == c10::kPerChannelAffine ||
                     *q.qscheme == c10::kPerChannelAffineFloatQParams;
  if (*q.qscheme != c10::kPerTensorAffine && !per_channel) return weight;
  if (q.dtype == c10::kHalf) return weight.to(c10::kHalf);
  at::Tensor scale = *m.tensor("weight_scale");
  at::Tensor zero_point = *m.tensor("weight_zero_point");
  if (!per_channel && q.dtype != c10::kQUInt4x2 && quantized_dtype(q.dtype)) {
    return at::quantize_per_tensor(weight, scale, zero_point, q.dtype)
        .dequantize();
  }
  if (per_channel && quantized_dtype(q.dtype)) {
    int64_t axis = m.tensor("weight_axis")->item<int64_t>();
    return at::quantize_per_channel(weight, scale, zero_point, axis, q.dtype)
        .dequantize();
  }
  throw FxError(cat("Unsupported dtype and qscheme: ", dtype_name(q.dtype),
                    ", ", qscheme_name(*q.qscheme)));
}

// The qparams' buffers, shaped as the constructor makes them.
void visit_qparam_buffers(const WeightQParams& q, const WeightVisitor& visit) {
  visit("weight_scale", q.scale_shape);
  visit("weight_zero_point", q.scale_shape);
  visit("weight_axis", {});
}

void register_qparam_buffers(FunctionalModuleImpl& m, const WeightQParams& q) {
  m.register_buffer("weight_scale", at::ones(q.scale_shape));
  m.register_buffer("weight_zero_point", at::zeros(q.scale_shape, at::kLong));
  m.register_buffer("weight_axis", at::zeros({}, at::kInt));
}

// weight_qparams as a config spells it: its qscheme and dtype (held as
// numbers) spelled as such.
Argument typed_qparams(const IValue& v) {
  if (!v.isGenericDict()) return constant_argument(v);
  ArgumentDict items;
  for (const auto& entry : v.toGenericDict()) {
    const std::string& key = entry.key().toStringRef();
    const IValue& value = entry.value();
    std::optional<c10::QScheme> qscheme;
    std::optional<c10::ScalarType> dtype;
    if (key == "qscheme" && value.isInt()) {
      qscheme = qscheme_from_int(value.toInt());
    } else if (key == "dtype" && value.isInt()) {
      dtype = dtype_from_int(value.toInt());
    }
    if (qscheme) {
      items.emplace_back(key, Argument::qscheme(qscheme_name(*qscheme)));
    } else if (dtype) {
      items.emplace_back(key, Argument::dtype(dtype_name(*dtype)));
    } else {
      items.emplace_back(key, constant_argument(value));
    }
  }
  return Argument::dict(std::move(items));
}

ArgumentDict describe_reference(const FunctionalModuleImpl& m) {
  ArgumentDict out = describe_config(m);
  for (auto& [name, value] : out) {
    if (name == "weight_qparams") value = typed_qparams(m.config(name));
  }
  return out;
}

constexpr const char* kReference = "torch.ao.nn.quantized.reference.modules.";

// Reference Linear(in_features, out_features, bias_=True, ...).
FunctionalModuleSpec reference_linear() {
  FunctionalModuleSpec spec{
      cat(kReference, "linear.Linear"),
      "in_features, out_features, bias_=True, device=None, dtype=None, "
      "weight_qparams=None",
      "x",
      "",
      {}};
  spec.config_rules = {ints_at_least("in_features", 0),
                       ints_at_least("out_features", 0)};
  spec.describe = describe_reference;
  spec.visit_weights = [](OpArgs& a, const WeightVisitor& visit) {
    visit("weight", {a.to_int(1), a.to_int(0)});
    if (a.to_bool(2)) visit("bias", {a.to_int(1)});
    visit_qparam_buffers(read_qparams(a[5]), visit);
  };
  spec.parameters = [](FunctionalModuleImpl& m, OpArgs& a) {
    m.register_parameter("weight", at::zeros({a.to_int(1), a.to_int(0)}));
    if (a.to_bool(2)) m.register_parameter("bias", at::zeros({a.to_int(1)}));
    register_qparam_buffers(m, read_qparams(a[5]));
  };
  FunctionTarget linear("torch._C._nn.linear");
  spec.custom = [linear](FunctionalModuleImpl& m, OpArgs& a) -> IValue {
    c10::optional<at::Tensor> bias = m.tensor("bias");
    return linear(
        {a.tensor(0), reference_weight(m), bias ? IValue(*bias) : IValue()});
  };
  return spec;
}

// Reference Conv<n>d(in_channels, out_channels, kernel_size, ...): the float
// conv<n>d on the quantized-dequantized weight (padding_mode is not used,
// as in torch 1.13's reference forward).
FunctionalModuleSpec reference_conv(size_t n) {
  FunctionalModuleSpec spec{
      cat(kReference, "conv.Conv", n, "d"),
      "in_channels, out_channels, kernel_size, stride=1, padding=0, "
      "dilation=1, groups=1, bias=True, padding_mode='zeros', device=None, "
      "dtype=None, weight_qparams=None",
      "x",
      "",
      {}};
  spec.padding_ints = n;
  spec.describe = describe_reference;
  spec.config_rules = {
      ints_at_least("in_channels", 1), ints_at_least("out_channels", 1),
      ints_at_least("kernel_size", 1), ints_at_least("stride", 1),
      ints_at_least("padding", 0),     ints_at_least("dilation", 1),
      ints_at_least("groups", 1)};
  auto weight_shape = [n](OpArgs& a) {
    std::vector<int64_t> shape = {a.to_int(1), a.to_int(0) / a.to_int(6)};
    for (const IValue& k : sequence_elements(ntuple(a[2], n))) {
      shape.push_back(k.toInt());
    }
    return shape;
  };
  spec.check_config = [](OpArgs& a) {
    if (a.to_int(0) % a.to_int(6) != 0 || a.to_int(1) % a.to_int(6) != 0) {
      throw FxError("in_channels and out_channels must be divisible by groups");
    }
  };
  spec.visit_weights = [weight_shape](OpArgs& a, const WeightVisitor& visit) {
    visit("weight", weight_shape(a));
    if (a.to_bool(7)) visit("bias", {a.to_int(1)});
    visit_qparam_buffers(read_qparams(a[11]), visit);
  };
  spec.parameters = [weight_shape](FunctionalModuleImpl& m, OpArgs& a) {
    m.register_parameter("weight", at::zeros(weight_shape(a)));
    if (a.to_bool(7)) m.register_parameter("bias", at::zeros({a.to_int(1)}));
    register_qparam_buffers(m, read_qparams(a[11]));
  };
  FunctionTarget conv(cat("torch.conv", n, "d"));
  spec.custom = [n, conv](FunctionalModuleImpl& m, OpArgs& a) -> IValue {
    c10::optional<at::Tensor> bias = m.tensor("bias");
    const IValue& padding = m.config("padding");
    return conv({a.tensor(0), reference_weight(m),
                 bias ? IValue(*bias) : IValue(), ntuple(m.config("stride"), n),
                 padding.isString() ? padding : ntuple(padding, n),
                 ntuple(m.config("dilation"), n), m.config("groups")});
  };
  return spec;
}

// torch.ao.nn.intrinsic's fused module NAME(parts...): a Sequential of the
// modules its constructor takes, children "0", "1", ...
FunctionalModuleSpec fused(const std::string& name,
                           std::vector<std::string> parts) {
  FunctionalModuleSpec spec{cat("torch.ao.nn.intrinsic.modules.fused.", name),
                            join(parts, ", "),
                            "input",
                            "",
                            {}};
  spec.visit_weights = [parts](OpArgs& a, const WeightVisitor& visit) {
    for (size_t i = 0; i < parts.size(); ++i) {
      visit_described_weights(a[i], parts[i], cat(i, "."), visit);
    }
  };
  spec.parameters = [parts](FunctionalModuleImpl& m, OpArgs& a) {
    for (size_t i = 0; i < parts.size(); ++i) {
      m.register_module(cat(i), module_from_description(a[i], parts[i]));
    }
  };
  // Its parts as they are now (each described by its own kind).
  spec.describe = [parts](const FunctionalModuleImpl& m) {
    ArgumentDict out;
    auto children = m.named_children();
    for (size_t i = 0; i < parts.size(); ++i) {
      out.emplace_back(parts[i], describe_module(*children[cat(i)]));
    }
    return out;
  };
  size_t count = parts.size();
  spec.custom = [count](FunctionalModuleImpl& m, OpArgs& a) -> IValue {
    IValue x = a[0];
    auto children = m.named_children();
    for (size_t i = 0; i < count; ++i) {
      std::string key = cat(i);
      x = call_module(*children[key], key, {x}, {});
    }
    return x;
  };
  return spec;
}

}  // namespace

void add_reference_specs(std::vector<FunctionalModuleSpec>* specs) {
  specs->push_back(reference_linear());
  for (size_t n : {1, 2, 3}) specs->push_back(reference_conv(n));
  for (const char* n : {"1d", "2d", "3d"}) {
    specs->push_back(fused(cat("ConvReLU", n), {"conv", "relu"}));
    specs->push_back(fused(cat("ConvBnReLU", n), {"conv", "bn", "relu"}));
  }
  specs->push_back(fused("ConvBn1d", {"conv", "bn"}));
  specs->push_back(fused("ConvBn2d", {"conv", "bn"}));
  specs->push_back(fused("ConvBn3d", {"conv", "bn"}));
  specs->push_back(fused("LinearReLU", {"linear", "relu"}));
  specs->push_back(fused("LinearBn1d", {"linear", "bn"}));
  specs->push_back(fused("BNReLU2d", {"batch_norm", "relu"}));
  specs->push_back(fused("BNReLU3d", {"batch_norm", "relu"}));
}

}  // namespace fx
