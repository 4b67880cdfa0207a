// The torch.nn modules rebuilt from their Python definitions (torch 1.13's
// torch/nn/modules/*.py) as fx::nn::FunctionalModuleImpl kinds.
//
// Each row is one class: its constructor signature, the parameters it
// creates, and what forward() calls, written as Python writes it
// (nn.ELU: F.elu(input, self.alpha, self.inplace) is the row
// {"ELU", "alpha=1.0, inplace=False", "input", "torch.nn.functional.elu",
// {"input", "alpha", "inplace"}}). An argument token names a forward
// parameter, a constructor argument, `self.NAME` (a parameter or buffer),
// `training`, or is a Python literal. The call goes through OpRegistry, so a
// module computes exactly what the call_function node of its functional
// does. The few modules whose forward is more than one call (InstanceNorm,
// ConvTranspose's output padding, the recurrent layers) have a forward of
// their own, step for step from Python.
//
// torch.nn modules that LibTorch's C++ frontend has with the same meaning
// and parameters (Linear, ConvNd, BatchNormNd, ...) stay LibTorch classes
// (builtin_modules.cc), which the C++ code generator can name.
#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/modules/functional_module.h"
#include "fx_core/runtime/modules/module_spec.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using c10::IValue;
using nn::FunctionalModuleImpl;

const char* const kF = "torch.nn.functional.";

std::string F(const char* name) { return cat(kF, name); }

void add_activations(std::vector<FunctionalModuleSpec>* specs) {
  auto inplace = [](const char* type, const char* init, const char* fn,
                    std::vector<std::string> args) {
    return FunctionalModuleSpec{type, init, "input", F(fn), std::move(args)};
  };
  specs->push_back(inplace("CELU", "alpha=1.0, inplace=False", "celu",
                           {"input", "alpha", "inplace"}));
  specs->push_back(inplace("ELU", "alpha=1.0, inplace=False", "elu",
                           {"input", "alpha", "inplace"}));
  specs->push_back(
      inplace("SELU", "inplace=False", "selu", {"input", "inplace"}));
  specs->push_back(inplace("GLU", "dim=-1", "glu", {"input", "dim"}));
  specs->push_back(inplace("Hardtanh",
                           "min_val=-1.0, max_val=1.0, inplace=False, "
                           "min_value=None, max_value=None",
                           "hardtanh",
                           {"input", "min_val", "max_val", "inplace"}));
  specs->push_back({"Hardshrink",
                    "lambd=0.5",
                    "input",
                    "torch.hardshrink",
                    {"input", "lambd"}});
  specs->push_back({"Softshrink",
                    "lambd=0.5",
                    "input",
                    "torch._C._nn.softshrink",
                    {"input", "lambd"}});
  specs->push_back(
      {"LogSigmoid", "", "input", "torch._C._nn.log_sigmoid", {"input"}});
  specs->push_back({"Softplus",
                    "beta=1, threshold=20",
                    "input",
                    "torch._C._nn.softplus",
                    {"input", "beta", "threshold"}});
  specs->push_back(
      inplace("LogSoftmax", "dim=None", "log_softmax", {"input", "dim"}));
  specs->push_back(inplace("Softmin", "dim=None", "softmin", {"input", "dim"}));
  specs->push_back({"Softmax2d", "", "input", F("softmax"), {"input", "-3"}});
  specs->push_back(inplace("Softsign", "", "softsign", {"input"}));
  specs->push_back(inplace("Tanhshrink", "", "tanhshrink", {"input"}));
  specs->push_back(inplace("Threshold", "threshold, value, inplace=False",
                           "_threshold",
                           {"input", "threshold", "value", "inplace"}));
  specs->push_back(
      inplace("RReLU", "lower=0.125, upper=0.3333333333333333, inplace=False",
              "rrelu", {"input", "lower", "upper", "training", "inplace"}));
  FunctionalModuleSpec prelu{
      "PReLU",
      "num_parameters=1, init=0.25, device=None, dtype=None",
      "input",
      "torch.prelu",
      {"input", "self.weight"}};
  prelu.config_rules = {ints_at_least("num_parameters", 1)};
  prelu.weight_shapes = [](OpArgs& a) {
    return WeightShapes{{"weight", {a.to_int(0)}}};
  };
  prelu.parameters = [](FunctionalModuleImpl& m, OpArgs& a) {
    m.register_parameter("weight",
                         at::full({a.to_int(0)}, a.scalar(1), at::kFloat));
  };
  specs->push_back(prelu);
}

void add_dropouts(std::vector<FunctionalModuleSpec>* specs) {
  for (const char* n : {"1", "2", "3"}) {
    specs->push_back({cat("Dropout", n, "d"),
                      "p=0.5, inplace=False",
                      "input",
                      cat(kF, "dropout", n, "d"),
                      {"input", "p", "training", "inplace"}});
  }
  specs->push_back({"AlphaDropout",
                    "p=0.5, inplace=False",
                    "input",
                    F("alpha_dropout"),
                    {"input", "p", "training"}});
  specs->push_back({"FeatureAlphaDropout",
                    "p=0.5, inplace=False",
                    "input",
                    F("feature_alpha_dropout"),
                    {"input", "p", "training"}});
}

void add_padding(std::vector<FunctionalModuleSpec>* specs) {
  for (size_t n : {1, 2, 3}) {
    for (const char* mode : {"reflect", "replicate"}) {
      std::string name =
          cat(mode == std::string("reflect") ? "Reflection" : "Replication",
              "Pad", n, "d");
      FunctionalModuleSpec s{name,
                             "padding",
                             "input",
                             F("pad"),
                             {"input", "padding", cat("'", mode, "'")}};
      s.padding_ints = 2 * n;
      specs->push_back(s);
    }
    FunctionalModuleSpec constant{cat("ConstantPad", n, "d"),
                                  "padding, value",
                                  "input",
                                  F("pad"),
                                  {"input", "padding", "'constant'", "value"}};
    constant.padding_ints = 2 * n;
    specs->push_back(constant);
  }
  // ZeroPad2d(padding): ConstantPad2d(padding, 0.) (value is no argument of
  // its own).
  FunctionalModuleSpec zero{"ZeroPad2d",
                            "padding",
                            "input",
                            F("pad"),
                            {"input", "padding", "'constant'", "0.0"}};
  zero.padding_ints = 4;
  specs->push_back(zero);
}

void add_pooling(std::vector<FunctionalModuleSpec>* specs) {
  specs->push_back(
      {"MaxPool3d",
       "kernel_size, stride=None, padding=0, dilation=1, "
       "return_indices=False, ceil_mode=False",
       "input",
       F("max_pool3d"),
       {"input", "kernel_size", "stride", "padding", "dilation"},
       {{"ceil_mode", "ceil_mode"}, {"return_indices", "return_indices"}}});
  specs->push_back({"AvgPool3d",
                    "kernel_size, stride=None, padding=0, ceil_mode=False, "
                    "count_include_pad=True, divisor_override=None",
                    "input",
                    "torch._C._nn.avg_pool3d",
                    {"input", "kernel_size", "stride", "padding", "ceil_mode",
                     "count_include_pad", "divisor_override"}});
  specs->push_back({"AdaptiveAvgPool3d",
                    "output_size",
                    "input",
                    F("adaptive_avg_pool3d"),
                    {"input", "output_size"}});
  for (const char* n : {"1", "2", "3"}) {
    specs->push_back({cat("AdaptiveMaxPool", n, "d"),
                      "output_size, return_indices=False",
                      "input",
                      cat(kF, "adaptive_max_pool", n, "d"),
                      {"input", "output_size", "return_indices"}});
    specs->push_back({cat("MaxUnpool", n, "d"),
                      "kernel_size, stride=None, padding=0",
                      "input, indices, output_size=None",
                      cat(kF, "max_unpool", n, "d"),
                      {"input", "indices", "kernel_size", "stride", "padding",
                       "output_size"}});
  }
  for (const char* n : {"2", "3"}) {
    specs->push_back({cat("FractionalMaxPool", n, "d"),
                      "kernel_size, output_size=None, output_ratio=None, "
                      "return_indices=False, _random_samples=None",
                      "input",
                      cat(kF, "fractional_max_pool", n, "d"),
                      {"input", "kernel_size", "output_size", "output_ratio",
                       "return_indices"},
                      {{"_random_samples", "self._random_samples"}}});
  }
  for (const char* n : {"1", "2"}) {
    specs->push_back(
        {cat("LPPool", n, "d"),
         "norm_type, kernel_size, stride=None, ceil_mode=False",
         "input",
         cat(kF, "lp_pool", n, "d"),
         {"input", "norm_type", "kernel_size", "stride", "ceil_mode"}});
  }
}

void add_shape_ops(std::vector<FunctionalModuleSpec>* specs) {
  const char* upsample =
      "size=None, scale_factor=None, mode='nearest', align_corners=None, "
      "recompute_scale_factor=None";
  specs->push_back({"Upsample",
                    upsample,
                    "input",
                    F("interpolate"),
                    {"input", "size", "scale_factor", "mode", "align_corners"},
                    {{"recompute_scale_factor", "recompute_scale_factor"}}});
  specs->push_back({"UpsamplingNearest2d",
                    "size=None, scale_factor=None",
                    "input",
                    F("interpolate"),
                    {"input", "size", "scale_factor", "'nearest'", "None"}});
  specs->push_back({"UpsamplingBilinear2d",
                    "size=None, scale_factor=None",
                    "input",
                    F("interpolate"),
                    {"input", "size", "scale_factor", "'bilinear'", "True"}});
  specs->push_back({"PixelShuffle",
                    "upscale_factor",
                    "input",
                    "torch.pixel_shuffle",
                    {"input", "upscale_factor"}});
  specs->push_back({"PixelUnshuffle",
                    "downscale_factor",
                    "input",
                    "torch.pixel_unshuffle",
                    {"input", "downscale_factor"}});
  specs->push_back({"ChannelShuffle",
                    "groups",
                    "input",
                    "torch.channel_shuffle",
                    {"input", "groups"}});
  specs->push_back({"Fold",
                    "output_size, kernel_size, dilation=1, padding=0, stride=1",
                    "input",
                    F("fold"),
                    {"input", "output_size", "kernel_size", "dilation",
                     "padding", "stride"}});
  specs->push_back({"Unfold",
                    "kernel_size, dilation=1, padding=0, stride=1",
                    "input",
                    F("unfold"),
                    {"input", "kernel_size", "dilation", "padding", "stride"}});
  specs->push_back({"Unflatten",
                    "dim, unflattened_size",
                    "input",
                    "torch.unflatten",
                    {"input", "dim", "unflattened_size"}});
  specs->push_back({"CosineSimilarity",
                    "dim=1, eps=1e-08",
                    "x1, x2",
                    "torch.cosine_similarity",
                    {"x1", "x2", "dim", "eps"}});
  specs->push_back({"PairwiseDistance",
                    "p=2.0, eps=1e-06, keepdim=False",
                    "x1, x2",
                    "torch.pairwise_distance",
                    {"x1", "x2", "p", "eps", "keepdim"}});
  specs->push_back({"LocalResponseNorm",
                    "size, alpha=0.0001, beta=0.75, k=1.0",
                    "input",
                    F("local_response_norm"),
                    {"input", "size", "alpha", "beta", "k"}});
}

void add_weighted(std::vector<FunctionalModuleSpec>* specs) {
  FunctionalModuleSpec bilinear{
      "Bilinear",
      "in1_features, in2_features, out_features, bias=True, "
      "device=None, dtype=None",
      "input1, input2",
      "torch.bilinear",
      {"input1", "input2", "self.weight", "self.bias"}};
  bilinear.config_rules = {ints_at_least("in1_features", 0),
                           ints_at_least("in2_features", 0),
                           ints_at_least("out_features", 0)};
  bilinear.weight_shapes = [](OpArgs& a) {
    WeightShapes shapes = {{"weight", {a.to_int(2), a.to_int(0), a.to_int(1)}}};
    if (a.to_bool(3)) shapes.push_back({"bias", {a.to_int(2)}});
    return shapes;
  };
  bilinear.parameters = [](FunctionalModuleImpl& m, OpArgs& a) {
    m.register_parameter("weight",
                         at::zeros({a.to_int(2), a.to_int(0), a.to_int(1)}));
    if (a.to_bool(3)) m.register_parameter("bias", at::zeros({a.to_int(2)}));
  };
  specs->push_back(bilinear);
  FunctionalModuleSpec bag{
      "EmbeddingBag",
      "num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, "
      "scale_grad_by_freq=False, mode='mean', sparse=False, "
      "_weight=None, include_last_offset=False, padding_idx=None, "
      "device=None, dtype=None",
      "input, offsets=None, per_sample_weights=None",
      F("embedding_bag"),
      {"input", "self.weight", "offsets", "max_norm", "norm_type",
       "scale_grad_by_freq", "mode", "sparse", "per_sample_weights",
       "include_last_offset", "padding_idx"}};
  bag.config_rules = {ints_at_least("num_embeddings", 0),
                      ints_at_least("embedding_dim", 0)};
  bag.weight_shapes = [](OpArgs& a) {
    if (!a.is_none(7)) return WeightShapes{};  // _weight: given, not made
    return WeightShapes{{"weight", {a.to_int(0), a.to_int(1)}}};
  };
  bag.parameters = [](FunctionalModuleImpl& m, OpArgs& a) {
    m.register_parameter("weight", a.is_none(7)
                                       ? at::zeros({a.to_int(0), a.to_int(1)})
                                       : a.tensor(7));
  };
  specs->push_back(bag);
}

// _InstanceNorm.forward: F.instance_norm on a batch (an unbatched input is
// made one).
c10::IValue instance_norm_forward(FunctionalModuleImpl& m, OpArgs& a,
                                  int64_t n) {
  at::Tensor input = a.tensor(0);
  if (input.dim() != n + 1 && input.dim() != n + 2) {
    throw FxError(cat("expected ", n + 1, "D or ", n + 2, "D input (got ",
                      input.dim(), "D input)"));
  }
  bool unbatched = input.dim() == n + 1;
  if (unbatched) input = input.unsqueeze(0);
  auto tensor = [&m](const char* name) -> IValue {
    c10::optional<at::Tensor> t = m.tensor(name);
    return t ? IValue(*t) : IValue();
  };
  bool track = m.config("track_running_stats").toBool();
  static const FunctionTarget instance_norm(F("instance_norm"));
  at::Tensor out = instance_norm({input, tensor("running_mean"),
                                  tensor("running_var"), tensor("weight"),
                                  tensor("bias"), m.is_training() || !track,
                                  m.config("momentum"), m.config("eps")})
                       .toTensor();
  return unbatched ? out.squeeze(0) : out;
}

void add_instance_norms(std::vector<FunctionalModuleSpec>* specs) {
  for (int64_t n : {1, 2, 3}) {
    FunctionalModuleSpec spec{
        cat("InstanceNorm", n, "d"),
        "num_features, eps=1e-05, momentum=0.1, affine=False, "
        "track_running_stats=False, device=None, dtype=None",
        "input",
        "",
        {}};
    spec.config_rules = {ints_at_least("num_features", 0)};
    spec.weight_shapes = [](OpArgs& a) {
      int64_t c = a.to_int(0);
      WeightShapes shapes;
      if (a.to_bool(3)) shapes = {{"weight", {c}}, {"bias", {c}}};
      if (a.to_bool(4)) {
        shapes.push_back({"running_mean", {c}});
        shapes.push_back({"running_var", {c}});
        shapes.push_back({"num_batches_tracked", {}});
      }
      return shapes;
    };
    spec.parameters = [](FunctionalModuleImpl& m, OpArgs& a) {
      int64_t c = a.to_int(0);
      if (a.to_bool(3)) {
        m.register_parameter("weight", at::ones({c}));
        m.register_parameter("bias", at::zeros({c}));
      }
      if (a.to_bool(4)) {
        m.register_buffer("running_mean", at::zeros({c}));
        m.register_buffer("running_var", at::ones({c}));
        m.register_buffer("num_batches_tracked", at::zeros({}, at::kLong));
      }
    };
    spec.custom = [n](FunctionalModuleImpl& m, OpArgs& a) {
      return instance_norm_forward(m, a, n);
    };
    specs->push_back(std::move(spec));
  }
}

std::vector<int64_t> n_ints(const IValue& v, size_t n) {
  if (v.isInt()) return std::vector<int64_t>(n, v.toInt());
  std::vector<int64_t> out;
  for (const IValue& x : sequence_elements(v)) out.push_back(x.toInt());
  return out;
}

// _ConvTransposeNd._output_padding: the configured output_padding, or what
// makes the result `output_size`.
std::vector<int64_t> output_padding(FunctionalModuleImpl& m,
                                    const at::Tensor& input,
                                    const IValue& output_size, size_t n) {
  if (output_size.isNone()) return n_ints(m.config("output_padding"), n);
  std::vector<int64_t> size = n_ints(output_size, n);
  size_t non_spatial = input.dim() == static_cast<int64_t>(n) + 2 ? 2 : 1;
  if (size.size() == non_spatial + n) {
    size.erase(size.begin(), size.begin() + non_spatial);
  }
  if (size.size() != n) {
    throw FxError(cat("ConvTranspose", n, "D: for ", input.dim(),
                      "D input, output_size must have ", n, " or ",
                      non_spatial + n, " elements (got ", size.size(), ")"));
  }
  std::vector<int64_t> stride = n_ints(m.config("stride"), n);
  std::vector<int64_t> padding = n_ints(m.config("padding"), n);
  std::vector<int64_t> kernel = n_ints(m.config("kernel_size"), n);
  std::vector<int64_t> dilation = n_ints(m.config("dilation"), n);
  std::vector<int64_t> out;
  for (size_t d = 0; d < n; ++d) {
    int64_t min_size = (input.size(d + non_spatial) - 1) * stride[d] -
                       2 * padding[d] + dilation[d] * (kernel[d] - 1) + 1;
    int64_t max_size = min_size + stride[d] - 1;
    if (size[d] < min_size || size[d] > max_size) {
      throw FxError(cat("requested an output size of ", c10::str(size),
                        ", but valid sizes range from ", min_size, " to ",
                        max_size, " (for an input of ",
                        c10::str(input.sizes().slice(non_spatial)), ")"));
    }
    out.push_back(size[d] - min_size);
  }
  return out;
}

void add_conv_transposes(std::vector<FunctionalModuleSpec>* specs) {
  for (size_t n : {1, 2, 3}) {
    FunctionalModuleSpec spec{
        cat("ConvTranspose", n, "d"),
        "in_channels, out_channels, kernel_size, stride=1, "
        "padding=0, output_padding=0, groups=1, bias=True, "
        "dilation=1, padding_mode='zeros', device=None, "
        "dtype=None",
        "input, output_size=None",
        "",
        {}};
    spec.config_rules = {
        ints_at_least("in_channels", 1), ints_at_least("out_channels", 1),
        ints_at_least("kernel_size", 1), ints_at_least("stride", 1),
        ints_at_least("padding", 0),     ints_at_least("output_padding", 0),
        ints_at_least("groups", 1),      ints_at_least("dilation", 1)};
    spec.weight_shapes = [n](OpArgs& a) {
      std::vector<int64_t> shape = {a.to_int(0), a.to_int(1) / a.to_int(6)};
      for (int64_t k : n_ints(a[2], n)) shape.push_back(k);
      WeightShapes shapes = {{"weight", shape}};
      if (a.to_bool(7)) shapes.push_back({"bias", {a.to_int(1)}});
      return shapes;
    };
    spec.parameters = [n](FunctionalModuleImpl& m, OpArgs& a) {
      if (a.to_string(9) != "zeros") {
        throw FxError(cat("Only \"zeros\" padding mode is supported for ",
                          "ConvTranspose", n, "d"));
      }
      std::vector<int64_t> shape = {a.to_int(0), a.to_int(1) / a.to_int(6)};
      for (int64_t k : n_ints(a[2], n)) shape.push_back(k);
      m.register_parameter("weight", at::zeros(shape));
      if (a.to_bool(7)) m.register_parameter("bias", at::zeros({a.to_int(1)}));
    };
    FunctionTarget conv(cat("torch.conv_transpose", n, "d"));
    spec.custom = [n, conv](FunctionalModuleImpl& m, OpArgs& a) -> IValue {
      const at::Tensor& input = a.tensor(0);
      std::vector<int64_t> out_pad = output_padding(m, input, a[1], n);
      c10::optional<at::Tensor> bias = m.tensor("bias");
      return conv({input, *m.tensor("weight"), bias ? IValue(*bias) : IValue(),
                   ntuple(m.config("stride"), n),
                   ntuple(m.config("padding"), n), c10::List<int64_t>(out_pad),
                   m.config("groups"), ntuple(m.config("dilation"), n)});
    };
    specs->push_back(std::move(spec));
  }
}

// The losses: F.<loss>(inputs..., option=self.option, ...). `weight` and
// `pos_weight` are buffers the module holds only when given one.
void add_losses(std::vector<FunctionalModuleSpec>* specs) {
  const std::string legacy = "size_average=None, reduce=None, ";
  struct Loss {
    const char* type;
    std::string init;
    const char* forward;
    const char* function;
    std::vector<const char*> options;  // passed by keyword, same name
    std::vector<const char*> buffers;  // optional tensors, as self.NAME
  };
  const std::vector<Loss> losses = {
      {"L1Loss",
       legacy + "reduction='mean'",
       "input, target",
       "l1_loss",
       {"reduction"},
       {}},
      {"MSELoss",
       legacy + "reduction='mean'",
       "input, target",
       "mse_loss",
       {"reduction"},
       {}},
      {"NLLLoss",
       "weight=None, size_average=None, ignore_index=-100, reduce=None, "
       "reduction='mean'",
       "input, target",
       "nll_loss",
       {"ignore_index", "reduction"},
       {"weight"}},
      {"NLLLoss2d",
       "weight=None, size_average=None, ignore_index=-100, reduce=None, "
       "reduction='mean'",
       "input, target",
       "nll_loss",
       {"ignore_index", "reduction"},
       {"weight"}},
      {"CrossEntropyLoss",
       "weight=None, size_average=None, ignore_index=-100, reduce=None, "
       "reduction='mean', label_smoothing=0.0",
       "input, target",
       "cross_entropy",
       {"ignore_index", "reduction", "label_smoothing"},
       {"weight"}},
      {"PoissonNLLLoss",
       "log_input=True, full=False, size_average=None, eps=1e-08, "
       "reduce=None, reduction='mean'",
       "log_input, target",
       "poisson_nll_loss",
       {"log_input", "full", "eps", "reduction"},
       {}},
      {"GaussianNLLLoss",
       "*, full=False, eps=1e-06, reduction='mean'",
       "input, target, var",
       "gaussian_nll_loss",
       {"full", "eps", "reduction"},
       {}},
      {"KLDivLoss",
       legacy + "reduction='mean', log_target=False",
       "input, target",
       "kl_div",
       {"reduction", "log_target"},
       {}},
      {"BCELoss",
       "weight=None, " + legacy + "reduction='mean'",
       "input, target",
       "binary_cross_entropy",
       {"reduction"},
       {"weight"}},
      {"BCEWithLogitsLoss",
       "weight=None, " + legacy + "reduction='mean', pos_weight=None",
       "input, target",
       "binary_cross_entropy_with_logits",
       {"reduction"},
       {"weight", "pos_weight"}},
      {"HingeEmbeddingLoss",
       "margin=1.0, " + legacy + "reduction='mean'",
       "input, target",
       "hinge_embedding_loss",
       {"margin", "reduction"},
       {}},
      {"MultiLabelMarginLoss",
       legacy + "reduction='mean'",
       "input, target",
       "multilabel_margin_loss",
       {"reduction"},
       {}},
      {"SmoothL1Loss",
       legacy + "reduction='mean', beta=1.0",
       "input, target",
       "smooth_l1_loss",
       {"reduction", "beta"},
       {}},
      {"HuberLoss",
       "reduction='mean', delta=1.0",
       "input, target",
       "huber_loss",
       {"reduction", "delta"},
       {}},
      {"SoftMarginLoss",
       legacy + "reduction='mean'",
       "input, target",
       "soft_margin_loss",
       {"reduction"},
       {}},
      {"MultiLabelSoftMarginLoss",
       "weight=None, " + legacy + "reduction='mean'",
       "input, target",
       "multilabel_soft_margin_loss",
       {"reduction"},
       {"weight"}},
      {"CosineEmbeddingLoss",
       "margin=0.0, " + legacy + "reduction='mean'",
       "input1, input2, target",
       "cosine_embedding_loss",
       {"margin", "reduction"},
       {}},
      {"MarginRankingLoss",
       "margin=0.0, " + legacy + "reduction='mean'",
       "input1, input2, target",
       "margin_ranking_loss",
       {"margin", "reduction"},
       {}},
      {"MultiMarginLoss",
       "p=1, margin=1.0, weight=None, " + legacy + "reduction='mean'",
       "input, target",
       "multi_margin_loss",
       {"p", "margin", "reduction"},
       {"weight"}},
      {"TripletMarginLoss",
       "margin=1.0, p=2.0, eps=1e-06, swap=False, " + legacy +
           "reduction='mean'",
       "anchor, positive, negative",
       "triplet_margin_loss",
       {"margin", "p", "eps", "swap", "reduction"},
       {}},
      {"TripletMarginWithDistanceLoss",
       "*, distance_function=None, margin=1.0, swap=False, reduction='mean'",
       "anchor, positive, negative",
       "triplet_margin_with_distance_loss",
       {"distance_function", "margin", "swap", "reduction"},
       {}},
      {"CTCLoss",
       "blank=0, reduction='mean', zero_infinity=False",
       "log_probs, targets, input_lengths, target_lengths",
       "ctc_loss",
       {"blank", "reduction", "zero_infinity"},
       {}},
  };
  for (const Loss& loss : losses) {
    std::vector<std::string> args;
    OpSchema forward = OpSchema::parse(loss.forward);
    for (const OpParam& p : forward.params()) {
      args.push_back(p.name);
    }
    std::vector<std::pair<std::string, std::string>> kwargs;
    for (const char* b : loss.buffers) kwargs.emplace_back(b, cat("self.", b));
    for (const char* o : loss.options) kwargs.emplace_back(o, cat("init.", o));
    FunctionalModuleSpec spec{loss.type,       loss.init,
                              loss.forward,    F(loss.function),
                              std::move(args), std::move(kwargs)};
    std::vector<std::string> buffers(loss.buffers.begin(), loss.buffers.end());
    if (!buffers.empty()) {
      spec.parameters = [buffers](FunctionalModuleImpl& m, OpArgs&) {
        for (const std::string& b : buffers) m.declare_optional_buffer(b);
      };
    }
    specs->push_back(std::move(spec));
  }
}

}  // namespace

void register_functional_modules(ModuleRegistry& r) {
  std::vector<FunctionalModuleSpec> specs;
  add_activations(&specs);
  add_dropouts(&specs);
  add_padding(&specs);
  add_pooling(&specs);
  add_shape_ops(&specs);
  add_weighted(&specs);
  add_losses(&specs);
  add_instance_norms(&specs);
  add_conv_transposes(&specs);
  add_recurrent_specs(&specs);
  add_attention_specs(&specs);
  add_transformer_specs(&specs);
  add_reference_specs(&specs);
  for (const FunctionalModuleSpec& spec : specs) add_module_spec(r, spec);
}

}  // namespace fx
