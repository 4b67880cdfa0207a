// The built-in ModuleKinds: torch.nn's standard modules mapped to LibTorch's
// C++ frontend, with the Python constructor signatures of torch 1.13 (the
// `config` of an fx-graph file binds to them by keyword).
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/adaptive.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/modules/pooling.h>

#include <type_traits>
#include <utility>

#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/modules/activation.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using c10::IValue;

// The C++ spelling of each built-in kind, for the C++ code generator.
struct CppName {
  const char* type;
  const char* cpp_class;
  const char* header;
};
constexpr CppName kCppNames[] = {
    {"torch.nn.Linear", "torch::nn::LinearImpl", "torch/nn/modules/linear.h"},
    {"torch.nn.Flatten", "torch::nn::FlattenImpl", "torch/nn/modules/linear.h"},
    {"torch.nn.Conv1d", "torch::nn::Conv1dImpl", "torch/nn/modules/conv.h"},
    {"torch.nn.Conv2d", "torch::nn::Conv2dImpl", "torch/nn/modules/conv.h"},
    {"torch.nn.Conv3d", "torch::nn::Conv3dImpl", "torch/nn/modules/conv.h"},
    {"torch.nn.BatchNorm1d", "torch::nn::BatchNorm1dImpl",
     "torch/nn/modules/batchnorm.h"},
    {"torch.nn.BatchNorm2d", "torch::nn::BatchNorm2dImpl",
     "torch/nn/modules/batchnorm.h"},
    {"torch.nn.BatchNorm3d", "torch::nn::BatchNorm3dImpl",
     "torch/nn/modules/batchnorm.h"},
    {"torch.nn.MaxPool1d", "torch::nn::MaxPool1dImpl",
     "torch/nn/modules/pooling.h"},
    {"torch.nn.MaxPool2d", "torch::nn::MaxPool2dImpl",
     "torch/nn/modules/pooling.h"},
    {"torch.nn.AvgPool1d", "torch::nn::AvgPool1dImpl",
     "torch/nn/modules/pooling.h"},
    {"torch.nn.AvgPool2d", "torch::nn::AvgPool2dImpl",
     "torch/nn/modules/pooling.h"},
    {"torch.nn.AdaptiveAvgPool1d", "torch::nn::AdaptiveAvgPool1dImpl",
     "torch/nn/modules/pooling.h"},
    {"torch.nn.AdaptiveAvgPool2d", "torch::nn::AdaptiveAvgPool2dImpl",
     "torch/nn/modules/pooling.h"},
    {"torch.nn.LayerNorm", "torch::nn::LayerNormImpl",
     "torch/nn/modules/normalization.h"},
    {"torch.nn.GroupNorm", "torch::nn::GroupNormImpl",
     "torch/nn/modules/normalization.h"},
    {"torch.nn.Dropout", "torch::nn::DropoutImpl",
     "torch/nn/modules/dropout.h"},
    {"torch.nn.Embedding", "torch::nn::EmbeddingImpl",
     "torch/nn/modules/embedding.h"},
    {"torch.nn.ReLU", "torch::nn::ReLUImpl", "torch/nn/modules/activation.h"},
    {"torch.nn.ReLU6", "torch::nn::ReLU6Impl", "torch/nn/modules/activation.h"},
    {"torch.nn.GELU", "torch::nn::GELUImpl", "torch/nn/modules/activation.h"},
    {"torch.nn.SiLU", "torch::nn::SiLUImpl", "torch/nn/modules/activation.h"},
    {"torch.nn.Sigmoid", "torch::nn::SigmoidImpl",
     "torch/nn/modules/activation.h"},
    {"torch.nn.Tanh", "torch::nn::TanhImpl", "torch/nn/modules/activation.h"},
    {"torch.nn.Mish", "torch::nn::MishImpl", "torch/nn/modules/activation.h"},
    {"torch.nn.LeakyReLU", "torch::nn::LeakyReLUImpl",
     "torch/nn/modules/activation.h"},
    {"torch.nn.Softmax", "torch::nn::SoftmaxImpl",
     "torch/nn/modules/activation.h"},
    {"torch.nn.Identity", "torch::nn::IdentityImpl",
     "torch/nn/modules/linear.h"},
    {"torch.nn.Hardswish", "fx::nn::HardswishImpl",
     "fx_core/runtime/modules/activation.h"},
    {"torch.nn.Hardsigmoid", "fx::nn::HardsigmoidImpl",
     "fx_core/runtime/modules/activation.h"},
};

// Whether Impl has forward(Tensor) (the default forward of a kind).
template <typename Impl, typename = void>
struct HasTensorForward : std::false_type {};
template <typename Impl>
struct HasTensorForward<Impl,
                        std::void_t<decltype(std::declval<Impl&>().forward(
                            std::declval<at::Tensor>()))>> : std::true_type {};

template <typename Impl>
struct KindBuilder {
  ModuleRegistry& r;
  ModuleKind kind;

  KindBuilder(ModuleRegistry& registry, std::string type,
              std::string_view init_signature)
      : r(registry) {
    kind.type = std::move(type);
    kind.cpp_type = typeid(Impl);
    kind.forward_schema = OpSchema::parse("input");
    if constexpr (HasTensorForward<Impl>::value) {
      kind.forward = [](torch::nn::Module& m, OpArgs& a) -> IValue {
        return dynamic_cast<Impl&>(m).forward(a.tensor(0));
      };
    }
    kind.init_schema = OpSchema::parse(init_signature);
    for (const CppName& name : kCppNames) {
      if (kind.type == name.type) {
        kind.cpp_class = name.cpp_class;
        kind.cpp_header = name.header;
      }
    }
  }
  KindBuilder& create(std::function<std::shared_ptr<Impl>(OpArgs&)> make) {
    kind.create = [make](OpArgs& a) -> std::shared_ptr<torch::nn::Module> {
      return make(a);
    };
    return *this;
  }
  KindBuilder& describe(std::function<ArgumentDict(const Impl&)> fn) {
    kind.describe = [fn](const torch::nn::Module& m) {
      return fn(dynamic_cast<const Impl&>(m));
    };
    return *this;
  }
  KindBuilder& forward(std::string_view signature,
                       std::function<IValue(Impl&, OpArgs&)> fn) {
    kind.forward_schema = OpSchema::parse(signature);
    kind.forward = [fn](torch::nn::Module& m, OpArgs& a) {
      return fn(dynamic_cast<Impl&>(m), a);
    };
    return *this;
  }
  ~KindBuilder() { r.add(std::move(kind)); }
};

template <size_t N>
Argument int_tuple(const torch::ExpandingArray<N>& a) {
  ArgumentList items;
  for (int64_t v : *a) items.emplace_back(v);
  return Argument::tuple(std::move(items));
}

// An ExpandingArray from an int or a sequence of N ints.
template <size_t N>
torch::ExpandingArray<N> expanding(OpArgs& a, size_t i) {
  std::vector<int64_t> v = a.int_list(i);
  if (v.size() == 1) return torch::ExpandingArray<N>(v[0]);
  if (v.size() != N) {
    throw FxError(cat("argument '", a.param_name(i), "' must have ", N,
                      " elements, not ", v.size()));
  }
  return torch::ExpandingArray<N>(v);
}

// The padding of a convolution: ints, or 'same' / 'valid'.
template <size_t N>
torch::nn::detail::conv_padding_t<N> conv_padding(OpArgs& a, size_t i) {
  if (a[i].isString()) {
    std::string s = a.to_string(i);
    if (s == "same") return torch::kSame;
    if (s == "valid") return torch::kValid;
    throw FxError(cat("padding must be 'same' or 'valid', not '", s, "'"));
  }
  return expanding<N>(a, i);
}

torch::nn::detail::conv_padding_mode_t padding_mode(const std::string& mode) {
  if (mode == "zeros") return torch::kZeros;
  if (mode == "reflect") return torch::kReflect;
  if (mode == "replicate") return torch::kReplicate;
  if (mode == "circular") return torch::kCircular;
  throw FxError(cat("unknown padding_mode '", mode, "'"));
}

std::string padding_mode_name(
    const torch::nn::detail::conv_padding_mode_t& mode) {
  // get_enum_name gives "kZeros"; Python spells it "zeros".
  if (c10::get_if<torch::enumtype::kReflect>(&mode)) return "reflect";
  if (c10::get_if<torch::enumtype::kReplicate>(&mode)) return "replicate";
  if (c10::get_if<torch::enumtype::kCircular>(&mode)) return "circular";
  return "zeros";
}

template <size_t N, typename Impl, typename Options>
void add_conv(ModuleRegistry& r) {
  KindBuilder<Impl>(r, cat("torch.nn.Conv", N, "d"),
                    "in_channels, out_channels, kernel_size, stride=1, "
                    "padding=0, dilation=1, groups=1, bias=True, "
                    "padding_mode='zeros', device=None, dtype=None")
      .create([](OpArgs& a) {
        Options o(a.to_int(0), a.to_int(1), expanding<N>(a, 2));
        o.stride(expanding<N>(a, 3))
            .padding(conv_padding<N>(a, 4))
            .dilation(expanding<N>(a, 5))
            .groups(a.to_int(6))
            .bias(a.to_bool(7))
            .padding_mode(padding_mode(a.to_string(8)));
        return std::make_shared<Impl>(o);
      })
      .describe([](const Impl& m) {
        const auto& o = m.options;
        Argument padding;
        if (auto* ints = c10::get_if<torch::ExpandingArray<N>>(&o.padding())) {
          padding = int_tuple<N>(*ints);
        } else {
          padding = Argument(std::string(
              c10::holds_alternative<torch::enumtype::kSame>(o.padding())
                  ? "same"
                  : "valid"));
        }
        return ArgumentDict{
            {"in_channels", o.in_channels()},
            {"out_channels", o.out_channels()},
            {"kernel_size", int_tuple<N>(o.kernel_size())},
            {"stride", int_tuple<N>(o.stride())},
            {"padding", padding},
            {"dilation", int_tuple<N>(o.dilation())},
            {"groups", o.groups()},
            {"bias", o.bias()},
            {"padding_mode", padding_mode_name(o.padding_mode())}};
      });
}

template <size_t N, typename Impl>
void add_batch_norm(ModuleRegistry& r) {
  KindBuilder<Impl>(r, cat("torch.nn.BatchNorm", N, "d"),
                    "num_features, eps=1e-05, momentum=0.1, affine=True, "
                    "track_running_stats=True, device=None, dtype=None")
      .create([](OpArgs& a) {
        torch::nn::BatchNormOptions o(a.to_int(0));
        o.eps(a.to_double(1))
            .momentum(a.optional_double(2))
            .affine(a.to_bool(3))
            .track_running_stats(a.to_bool(4));
        return std::make_shared<Impl>(o);
      })
      .describe([](const Impl& m) {
        const auto& o = m.options;
        return ArgumentDict{
            {"num_features", o.num_features()},
            {"eps", o.eps()},
            {"momentum", o.momentum() ? Argument(*o.momentum()) : Argument()},
            {"affine", o.affine()},
            {"track_running_stats", o.track_running_stats()}};
      });
}

template <size_t N, typename Impl>
void add_max_pool(ModuleRegistry& r) {
  KindBuilder<Impl>(r, cat("torch.nn.MaxPool", N, "d"),
                    "kernel_size, stride=None, padding=0, dilation=1, "
                    "return_indices=False, ceil_mode=False")
      .create([](OpArgs& a) {
        torch::nn::MaxPoolOptions<N> o(expanding<N>(a, 0));
        o.stride(a.is_none(1) ? expanding<N>(a, 0) : expanding<N>(a, 1))
            .padding(expanding<N>(a, 2))
            .dilation(expanding<N>(a, 3))
            .ceil_mode(a.to_bool(5));
        if (a.to_bool(4)) {
          throw FxError("return_indices=True is not supported");
        }
        return std::make_shared<Impl>(o);
      })
      .describe([](const Impl& m) {
        const auto& o = m.options;
        return ArgumentDict{{"kernel_size", int_tuple<N>(o.kernel_size())},
                            {"stride", int_tuple<N>(o.stride())},
                            {"padding", int_tuple<N>(o.padding())},
                            {"dilation", int_tuple<N>(o.dilation())},
                            {"return_indices", false},
                            {"ceil_mode", o.ceil_mode()}};
      });
}

template <size_t N, typename Impl>
void add_avg_pool(ModuleRegistry& r) {
  KindBuilder<Impl>(r, cat("torch.nn.AvgPool", N, "d"),
                    "kernel_size, stride=None, padding=0, ceil_mode=False, "
                    "count_include_pad=True, divisor_override=None")
      .create([](OpArgs& a) {
        torch::nn::AvgPoolOptions<N> o(expanding<N>(a, 0));
        o.stride(a.is_none(1) ? expanding<N>(a, 0) : expanding<N>(a, 1))
            .padding(expanding<N>(a, 2))
            .ceil_mode(a.to_bool(3))
            .count_include_pad(a.to_bool(4))
            .divisor_override(a.optional_int(5));
        return std::make_shared<Impl>(o);
      })
      .describe([](const Impl& m) {
        const auto& o = m.options;
        return ArgumentDict{
            {"kernel_size", int_tuple<N>(o.kernel_size())},
            {"stride", int_tuple<N>(o.stride())},
            {"padding", int_tuple<N>(o.padding())},
            {"ceil_mode", o.ceil_mode()},
            {"count_include_pad", o.count_include_pad()},
            {"divisor_override", o.divisor_override()
                                     ? Argument(*o.divisor_override())
                                     : Argument()}};
      });
}

// Activations without options: ReLU(inplace=False), Sigmoid(), ...
template <typename Impl>
void add_simple(ModuleRegistry& r, const char* type, const char* signature) {
  KindBuilder<Impl>(r, type, signature)
      .create([](OpArgs&) { return std::make_shared<Impl>(); })
      .describe([](const Impl&) { return ArgumentDict{}; });
}

}  // namespace

namespace {

// nn.CrossMapLRN2d(size, alpha=1e-4, beta=0.75, k=1): LibTorch's class
// computes what Python's _cross_map_lrn2d does; its k is an integer.
void add_cross_map_lrn2d(ModuleRegistry& r) {
  KindBuilder<torch::nn::CrossMapLRN2dImpl>(
      r, "torch.nn.CrossMapLRN2d", "size, alpha=0.0001, beta=0.75, k=1")
      .create([](OpArgs& a) {
        double k = a.to_double(3);
        if (k != static_cast<double>(static_cast<int64_t>(k))) {
          throw FxError(cat("k=", python_float_repr(k),
                            ": LibTorch's CrossMapLRN2d takes an integer k"));
        }
        return std::make_shared<torch::nn::CrossMapLRN2dImpl>(
            torch::nn::CrossMapLRN2dOptions(a.to_int(0))
                .alpha(a.to_double(1))
                .beta(a.to_double(2))
                .k(static_cast<int64_t>(k)));
      });
}

// nn.AdaptiveLogSoftmaxWithLoss: LibTorch's class (head, tail.N.M under
// Python's names); forward(input, target) gives Python's _ASMoutput.
void add_adaptive_log_softmax(ModuleRegistry& r) {
  using Impl = torch::nn::AdaptiveLogSoftmaxWithLossImpl;
  KindBuilder<Impl>(r, "torch.nn.AdaptiveLogSoftmaxWithLoss",
                    "in_features, n_classes, cutoffs, div_value=4.0, "
                    "head_bias=False, device=None, dtype=None")
      .create([](OpArgs& a) {
        return std::make_shared<Impl>(
            torch::nn::AdaptiveLogSoftmaxWithLossOptions(
                a.to_int(0), a.to_int(1), a.int_list(2))
                .div_value(a.to_double(3))
                .head_bias(a.to_bool(4)));
      })
      .forward("input, target", [](Impl& m, OpArgs& a) -> IValue {
        torch::nn::ASMoutput out = m.forward(a.tensor(0), a.tensor(1));
        return make_asm_output(
            out.output, at::scalar_tensor(out.loss, out.output.options()));
      });
}

}  // namespace

void register_builtin_modules(ModuleRegistry& r) {
  add_cross_map_lrn2d(r);
  add_adaptive_log_softmax(r);
  KindBuilder<torch::nn::LinearImpl>(
      r, "torch.nn.Linear",
      "in_features, out_features, bias=True, device=None, dtype=None")
      .create([](OpArgs& a) {
        return std::make_shared<torch::nn::LinearImpl>(
            torch::nn::LinearOptions(a.to_int(0), a.to_int(1))
                .bias(a.to_bool(2)));
      })
      .describe([](const torch::nn::LinearImpl& m) {
        return ArgumentDict{{"in_features", m.options.in_features()},
                            {"out_features", m.options.out_features()},
                            {"bias", m.options.bias()}};
      });
  add_conv<1, torch::nn::Conv1dImpl, torch::nn::Conv1dOptions>(r);
  add_conv<2, torch::nn::Conv2dImpl, torch::nn::Conv2dOptions>(r);
  add_conv<3, torch::nn::Conv3dImpl, torch::nn::Conv3dOptions>(r);
  add_batch_norm<1, torch::nn::BatchNorm1dImpl>(r);
  add_batch_norm<2, torch::nn::BatchNorm2dImpl>(r);
  add_batch_norm<3, torch::nn::BatchNorm3dImpl>(r);
  add_max_pool<1, torch::nn::MaxPool1dImpl>(r);
  add_max_pool<2, torch::nn::MaxPool2dImpl>(r);
  add_avg_pool<1, torch::nn::AvgPool1dImpl>(r);
  add_avg_pool<2, torch::nn::AvgPool2dImpl>(r);

  KindBuilder<torch::nn::LayerNormImpl>(
      r, "torch.nn.LayerNorm",
      "normalized_shape, eps=1e-05, elementwise_affine=True, device=None, "
      "dtype=None")
      .create([](OpArgs& a) {
        return std::make_shared<torch::nn::LayerNormImpl>(
            torch::nn::LayerNormOptions(a.int_list(0))
                .eps(a.to_double(1))
                .elementwise_affine(a.to_bool(2)));
      })
      .describe([](const torch::nn::LayerNormImpl& m) {
        ArgumentList shape;
        for (int64_t d : m.options.normalized_shape()) shape.emplace_back(d);
        return ArgumentDict{
            {"normalized_shape", Argument::tuple(std::move(shape))},
            {"eps", m.options.eps()},
            {"elementwise_affine", m.options.elementwise_affine()}};
      });
  KindBuilder<torch::nn::GroupNormImpl>(
      r, "torch.nn.GroupNorm",
      "num_groups, num_channels, eps=1e-05, affine=True, device=None, "
      "dtype=None")
      .create([](OpArgs& a) {
        return std::make_shared<torch::nn::GroupNormImpl>(
            torch::nn::GroupNormOptions(a.to_int(0), a.to_int(1))
                .eps(a.to_double(2))
                .affine(a.to_bool(3)));
      })
      .describe([](const torch::nn::GroupNormImpl& m) {
        return ArgumentDict{{"num_groups", m.options.num_groups()},
                            {"num_channels", m.options.num_channels()},
                            {"eps", m.options.eps()},
                            {"affine", m.options.affine()}};
      });
  KindBuilder<torch::nn::DropoutImpl>(r, "torch.nn.Dropout",
                                      "p=0.5, inplace=False")
      .create([](OpArgs& a) {
        return std::make_shared<torch::nn::DropoutImpl>(
            torch::nn::DropoutOptions(a.to_double(0)).inplace(a.to_bool(1)));
      })
      .describe([](const torch::nn::DropoutImpl& m) {
        return ArgumentDict{{"p", m.options.p()},
                            {"inplace", m.options.inplace()}};
      });
  KindBuilder<torch::nn::ReLUImpl>(r, "torch.nn.ReLU", "inplace=False")
      .create([](OpArgs& a) {
        return std::make_shared<torch::nn::ReLUImpl>(
            torch::nn::ReLUOptions(a.to_bool(0)));
      })
      .describe([](const torch::nn::ReLUImpl& m) {
        return ArgumentDict{{"inplace", m.options.inplace()}};
      });
  KindBuilder<torch::nn::ReLU6Impl>(r, "torch.nn.ReLU6", "inplace=False")
      .create([](OpArgs& a) {
        return std::make_shared<torch::nn::ReLU6Impl>(
            torch::nn::ReLU6Options(a.to_bool(0)));
      })
      .describe([](const torch::nn::ReLU6Impl& m) {
        return ArgumentDict{{"inplace", m.options.inplace()}};
      });
  KindBuilder<torch::nn::GELUImpl>(r, "torch.nn.GELU", "approximate='none'")
      .create([](OpArgs& a) {
        return std::make_shared<torch::nn::GELUImpl>(
            torch::nn::GELUOptions().approximate(a.to_string(0)));
      })
      .describe([](const torch::nn::GELUImpl& m) {
        return ArgumentDict{{"approximate", m.options.approximate()}};
      });
  KindBuilder<torch::nn::LeakyReLUImpl>(r, "torch.nn.LeakyReLU",
                                        "negative_slope=0.01, inplace=False")
      .create([](OpArgs& a) {
        return std::make_shared<torch::nn::LeakyReLUImpl>(
            torch::nn::LeakyReLUOptions()
                .negative_slope(a.to_double(0))
                .inplace(a.to_bool(1)));
      })
      .describe([](const torch::nn::LeakyReLUImpl& m) {
        return ArgumentDict{{"negative_slope", m.options.negative_slope()},
                            {"inplace", m.options.inplace()}};
      });
  KindBuilder<torch::nn::SoftmaxImpl>(r, "torch.nn.Softmax", "dim=None")
      .create([](OpArgs& a) {
        return std::make_shared<torch::nn::SoftmaxImpl>(a.to_int(0));
      })
      .describe([](const torch::nn::SoftmaxImpl& m) {
        return ArgumentDict{{"dim", m.options.dim()}};
      });
  KindBuilder<torch::nn::FlattenImpl>(r, "torch.nn.Flatten",
                                      "start_dim=1, end_dim=-1")
      .create([](OpArgs& a) {
        return std::make_shared<torch::nn::FlattenImpl>(
            torch::nn::FlattenOptions()
                .start_dim(a.to_int(0))
                .end_dim(a.to_int(1)));
      })
      .describe([](const torch::nn::FlattenImpl& m) {
        return ArgumentDict{{"start_dim", m.options.start_dim()},
                            {"end_dim", m.options.end_dim()}};
      });
  KindBuilder<torch::nn::AdaptiveAvgPool2dImpl>(r, "torch.nn.AdaptiveAvgPool2d",
                                                "output_size")
      .create([](OpArgs& a) {
        std::vector<int64_t> size = a.int_list(0);
        if (size.size() == 1) size.push_back(size[0]);
        return std::make_shared<torch::nn::AdaptiveAvgPool2dImpl>(
            torch::nn::AdaptiveAvgPool2dOptions({size[0], size[1]}));
      })
      .describe([](const torch::nn::AdaptiveAvgPool2dImpl& m) {
        ArgumentList size;
        for (const auto& d : *m.options.output_size()) {
          size.push_back(d ? Argument(*d) : Argument());
        }
        return ArgumentDict{{"output_size", Argument::tuple(std::move(size))}};
      });
  KindBuilder<torch::nn::AdaptiveAvgPool1dImpl>(r, "torch.nn.AdaptiveAvgPool1d",
                                                "output_size")
      .create([](OpArgs& a) {
        return std::make_shared<torch::nn::AdaptiveAvgPool1dImpl>(a.to_int(0));
      })
      .describe([](const torch::nn::AdaptiveAvgPool1dImpl& m) {
        return ArgumentDict{{"output_size", (*m.options.output_size())[0]}};
      });
  KindBuilder<torch::nn::EmbeddingImpl>(
      r, "torch.nn.Embedding",
      "num_embeddings, embedding_dim, padding_idx=None, max_norm=None, "
      "norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None, "
      "device=None, dtype=None")
      .create([](OpArgs& a) {
        torch::nn::EmbeddingOptions o(a.to_int(0), a.to_int(1));
        o.padding_idx(a.optional_int(2))
            .max_norm(a.optional_double(3))
            .norm_type(a.to_double(4))
            .scale_grad_by_freq(a.to_bool(5))
            .sparse(a.to_bool(6));
        return std::make_shared<torch::nn::EmbeddingImpl>(o);
      })
      .describe([](const torch::nn::EmbeddingImpl& m) {
        const auto& o = m.options;
        return ArgumentDict{
            {"num_embeddings", o.num_embeddings()},
            {"embedding_dim", o.embedding_dim()},
            {"padding_idx",
             o.padding_idx() ? Argument(*o.padding_idx()) : Argument()}};
      });
  add_simple<torch::nn::SiLUImpl>(r, "torch.nn.SiLU", "inplace=False");
  add_simple<torch::nn::SigmoidImpl>(r, "torch.nn.Sigmoid", "");
  add_simple<torch::nn::TanhImpl>(r, "torch.nn.Tanh", "");
  add_simple<torch::nn::MishImpl>(r, "torch.nn.Mish", "inplace=False");
  add_simple<torch::nn::IdentityImpl>(r, "torch.nn.Identity", "*args");
  KindBuilder<nn::HardswishImpl>(r, "torch.nn.Hardswish", "inplace=False")
      .create([](OpArgs& a) {
        return std::make_shared<nn::HardswishImpl>(a.to_bool(0));
      })
      .describe([](const nn::HardswishImpl& m) {
        return ArgumentDict{{"inplace", m.inplace()}};
      });
  KindBuilder<nn::HardsigmoidImpl>(r, "torch.nn.Hardsigmoid", "inplace=False")
      .create([](OpArgs& a) {
        return std::make_shared<nn::HardsigmoidImpl>(a.to_bool(0));
      })
      .describe([](const nn::HardsigmoidImpl& m) {
        return ArgumentDict{{"inplace", m.inplace()}};
      });
}

}  // namespace fx
