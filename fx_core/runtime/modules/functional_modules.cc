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
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using c10::IValue;
using nn::FunctionalModuleImpl;

// Registers parameters and buffers from the constructor's arguments.
using MakeParameters = std::function<void(FunctionalModuleImpl&, OpArgs&)>;
// A forward that is more than one functional call.
using CustomForward = std::function<IValue(FunctionalModuleImpl&, OpArgs&)>;

struct Spec {
  Spec(std::string type, std::string init, std::string forward,
       std::string target, std::vector<std::string> args,
       std::vector<std::pair<std::string, std::string>> kwargs = {})
      : type(std::move(type)),
        init(std::move(init)),
        forward(std::move(forward)),
        target(std::move(target)),
        args(std::move(args)),
        kwargs(std::move(kwargs)) {}
  std::string type;  // "ELU": torch.nn.ELU
  std::string init;  // the constructor's signature
  std::string forward;
  std::string target;             // the functional the forward calls
  std::vector<std::string> args;  // its arguments, as tokens
  std::vector<std::pair<std::string, std::string>> kwargs;
  MakeParameters parameters;
  CustomForward custom;
  // > 0: an int `padding` means that many copies (_pair, _quadruple, ...).
  size_t padding_ints = 0;
};

// Where one argument of the forward's call comes from.
struct Source {
  enum class Kind { kForward, kConfig, kSelf, kTraining, kLiteral };
  Kind kind = Kind::kLiteral;
  size_t index = 0;  // forward or config parameter
  std::string name;  // kSelf: the parameter or buffer
  IValue literal;
};

Source resolve_token(const OpSchema& forward, const OpSchema& init,
                     const std::string& token) {
  Source s;
  if (int i = forward.index_of(token); i >= 0) {
    s.kind = Source::Kind::kForward;
    s.index = static_cast<size_t>(i);
  } else if (token.rfind("self.", 0) == 0) {
    s.kind = Source::Kind::kSelf;
    s.name = token.substr(5);
  } else if (token == "training") {
    s.kind = Source::Kind::kTraining;
  } else if (int j = init.index_of(token); j >= 0) {
    s.kind = Source::Kind::kConfig;
    s.index = static_cast<size_t>(j);
  } else {
    OpSchema literal = OpSchema::parse(cat("x=", token));
    s.literal = literal.params()[0].default_value;
  }
  return s;
}

IValue source_value(const Source& s, FunctionalModuleImpl& m, OpArgs& a) {
  switch (s.kind) {
    case Source::Kind::kForward:
      return a[s.index];
    case Source::Kind::kConfig:
      return m.config()[s.index].second;
    case Source::Kind::kTraining:
      return m.is_training();
    case Source::Kind::kLiteral:
      return s.literal;
    case Source::Kind::kSelf:
      break;
  }
  if (const at::Tensor* p = m.named_parameters(false).find(s.name)) {
    return p->defined() ? IValue(*p) : IValue();
  }
  if (const at::Tensor* b = m.named_buffers(false).find(s.name)) {
    return b->defined() ? IValue(*b) : IValue();
  }
  return IValue();  // a parameter the module does not have (bias=False)
}

// The forward of a one-call row.
decltype(ModuleKind::forward) call_forward(const Spec& spec,
                                           const OpSchema& forward,
                                           const OpSchema& init) {
  std::vector<Source> args;
  std::vector<std::pair<std::string, Source>> kwargs;
  for (const std::string& t : spec.args) {
    args.push_back(resolve_token(forward, init, t));
  }
  for (const auto& [name, t] : spec.kwargs) {
    kwargs.emplace_back(name, resolve_token(forward, init, t));
  }
  std::string target = spec.target;
  return [args, kwargs, target](torch::nn::Module& module, OpArgs& a) {
    auto& m = dynamic_cast<FunctionalModuleImpl&>(module);
    std::vector<IValue> call_args;
    call_args.reserve(args.size());
    for (const Source& s : args) call_args.push_back(source_value(s, m, a));
    std::vector<std::pair<std::string, IValue>> call_kwargs;
    for (const auto& [name, s] : kwargs) {
      call_kwargs.emplace_back(name, source_value(s, m, a));
    }
    const OpDef& def = OpRegistry::global().get(Opcode::kCallFunction, target);
    return call_op(def, std::move(call_args), call_kwargs);
  };
}

// A Python tuple of `n` copies of an int, or the sequence itself
// (_pair / _quadruple / _ntuple).
IValue ntuple(const IValue& v, size_t n) {
  if (!v.isInt()) return v;
  return make_tuple(std::vector<IValue>(n, v));
}

void add_spec(ModuleRegistry& r, const Spec& spec) {
  ModuleKind kind;
  kind.type = cat("torch.nn.", spec.type);
  kind.forward_schema = OpSchema::parse(spec.forward);
  kind.init_schema = OpSchema::parse(spec.init);
  if (spec.custom) {
    CustomForward custom = spec.custom;
    kind.forward = [custom](torch::nn::Module& m, OpArgs& a) {
      return custom(dynamic_cast<FunctionalModuleImpl&>(m), a);
    };
  } else {
    kind.forward = call_forward(spec, kind.forward_schema, kind.init_schema);
  }
  std::string type = kind.type;
  MakeParameters parameters = spec.parameters;
  size_t padding_ints = spec.padding_ints;
  kind.create = [type, parameters, padding_ints](OpArgs& a) {
    FunctionalModuleImpl::Config config;
    for (size_t i = 0; i < a.size(); ++i) {
      bool expand = padding_ints > 0 && a.param_name(i) == "padding";
      config.emplace_back(a.param_name(i),
                          expand ? ntuple(a[i], padding_ints) : a[i]);
    }
    auto m = std::make_shared<FunctionalModuleImpl>(type, std::move(config));
    if (parameters) parameters(*m, a);
    return m;
  };
  kind.describe = [](const torch::nn::Module& module) {
    ArgumentDict out;
    for (const auto& [name, value] :
         dynamic_cast<const FunctionalModuleImpl&>(module).config()) {
      if (name == "device" || name == "dtype" || value.isTensor()) continue;
      out.emplace_back(name, constant_argument(value));
    }
    return out;
  };
  r.add(std::move(kind));
}

const char* const kF = "torch.nn.functional.";

std::string F(const char* name) { return cat(kF, name); }

void add_activations(std::vector<Spec>* specs) {
  auto inplace = [](const char* type, const char* init, const char* fn,
                    std::vector<std::string> args) {
    return Spec{type, init, "input", F(fn), std::move(args)};
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
  Spec prelu{"PReLU",
             "num_parameters=1, init=0.25, device=None, dtype=None",
             "input",
             "torch.prelu",
             {"input", "self.weight"}};
  prelu.parameters = [](FunctionalModuleImpl& m, OpArgs& a) {
    m.register_parameter("weight",
                         at::full({a.to_int(0)}, a.scalar(1), at::kFloat));
  };
  specs->push_back(prelu);
}

void add_dropouts(std::vector<Spec>* specs) {
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

void add_padding(std::vector<Spec>* specs) {
  for (size_t n : {1, 2, 3}) {
    for (const char* mode : {"reflect", "replicate"}) {
      std::string name =
          cat(mode == std::string("reflect") ? "Reflection" : "Replication",
              "Pad", n, "d");
      Spec s{name,
             "padding",
             "input",
             F("pad"),
             {"input", "padding", cat("'", mode, "'")}};
      s.padding_ints = 2 * n;
      specs->push_back(s);
    }
    Spec constant{cat("ConstantPad", n, "d"),
                  "padding, value",
                  "input",
                  F("pad"),
                  {"input", "padding", "'constant'", "value"}};
    constant.padding_ints = 2 * n;
    specs->push_back(constant);
  }
  Spec zero{"ZeroPad2d",
            "padding, value=0.0",
            "input",
            F("pad"),
            {"input", "padding", "'constant'", "value"}};
  zero.padding_ints = 4;
  specs->push_back(zero);
}

void add_pooling(std::vector<Spec>* specs) {
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

void add_shape_ops(std::vector<Spec>* specs) {
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

void add_weighted(std::vector<Spec>* specs) {
  Spec bilinear{"Bilinear",
                "in1_features, in2_features, out_features, bias=True, "
                "device=None, dtype=None",
                "input1, input2",
                "torch.bilinear",
                {"input1", "input2", "self.weight", "self.bias"}};
  bilinear.parameters = [](FunctionalModuleImpl& m, OpArgs& a) {
    m.register_parameter("weight",
                         at::zeros({a.to_int(2), a.to_int(0), a.to_int(1)}));
    if (a.to_bool(3)) m.register_parameter("bias", at::zeros({a.to_int(2)}));
  };
  specs->push_back(bilinear);
  Spec bag{"EmbeddingBag",
           "num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, "
           "scale_grad_by_freq=False, mode='mean', sparse=False, "
           "_weight=None, include_last_offset=False, padding_idx=None, "
           "device=None, dtype=None",
           "input, offsets=None, per_sample_weights=None",
           F("embedding_bag"),
           {"input", "self.weight", "offsets", "max_norm", "norm_type",
            "scale_grad_by_freq", "mode", "sparse", "per_sample_weights",
            "include_last_offset", "padding_idx"}};
  bag.parameters = [](FunctionalModuleImpl& m, OpArgs& a) {
    m.register_parameter("weight", a.is_none(7)
                                       ? at::zeros({a.to_int(0), a.to_int(1)})
                                       : a.tensor(7));
  };
  specs->push_back(bag);
}

}  // namespace

void register_functional_modules(ModuleRegistry& r) {
  std::vector<Spec> specs;
  add_activations(&specs);
  add_dropouts(&specs);
  add_padding(&specs);
  add_pooling(&specs);
  add_shape_ops(&specs);
  add_weighted(&specs);
  for (const Spec& spec : specs) add_spec(r, spec);
}

}  // namespace fx
