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

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/modules/activation.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using c10::IValue;

constexpr double kInf = std::numeric_limits<double>::infinity();

// [1, 2] as Python writes a list of ints.
std::string python_int_list(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += cat(i ? ", " : "", v[i]);
  return out + "]";
}

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
  // `make` returns a std::shared_ptr<Impl> (or of another module class the
  // config asks for: MaxPool2d's return_indices=True).
  template <typename Make>
  KindBuilder& create(Make make) {
    kind.create = [make](OpArgs& a) -> std::shared_ptr<torch::nn::Module> {
      return make(a);
    };
    return *this;
  }
  // The constructor's contract (module_registry.h), checked before create.
  KindBuilder& rules(std::vector<ConfigRule> rules) {
    kind.config_rules = std::move(rules);
    return *this;
  }
  KindBuilder& check(std::function<void(OpArgs&)> fn) {
    kind.check_config = std::move(fn);
    return *this;
  }
  KindBuilder& weights(std::function<WeightShapes(OpArgs&)> fn) {
    kind.weight_shapes = std::move(fn);
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
  // Generated C++ cannot name the class (it is internal to this file).
  KindBuilder& no_cpp_class() {
    kind.cpp_class.clear();
    kind.cpp_header.clear();
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

// The int list of argument `i` as N values (an int is N copies); zeros for
// a string ('same' / 'valid' padding, sized by the input).
template <size_t N>
std::vector<int64_t> n_ints(OpArgs& a, size_t i) {
  if (a[i].isString()) return std::vector<int64_t>(N, 0);
  torch::ExpandingArray<N> v = expanding<N>(a, i);
  return std::vector<int64_t>(v->begin(), v->end());
}

// A sliding window's reach over the input in each dimension (padding on
// both sides plus the dilated kernel), times `channels`: the least output a
// convolution or pooling can make must be a tensor whose bytes fit an
// int64, else LibTorch's size arithmetic overflows (a crash in oneDNN).
template <size_t N>
void check_window(OpArgs& a, size_t kernel, size_t padding, int dilation,
                  int64_t channels) {
  std::vector<int64_t> k = n_ints<N>(a, kernel), p = n_ints<N>(a, padding);
  std::vector<int64_t> d =
      dilation < 0 ? std::vector<int64_t>(N, 1) : n_ints<N>(a, dilation);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t bytes = 8 * std::max<int64_t>(channels, 1);
  for (size_t i = 0; i < N; ++i) {
    // Each factor is below 2^33 (the ints are bounded by kMaxConfigInt).
    int64_t reach = 2 * p[i] + d[i] * (k[i] - 1) + 1;
    if (reach > 0 && bytes > kMax / reach) {
      throw FxError(cat("config 'padding' = ", python_int_list(p),
                        " with 'kernel_size' = ", python_int_list(k),
                        ": the window spans more elements than a tensor can "
                        "hold"));
    }
    bytes *= std::max<int64_t>(reach, 1);
  }
}

// `value` is a multiple of config argument `groups`.
void check_divisible(OpArgs& a, size_t value, size_t groups) {
  if (a.to_int(value) % a.to_int(groups) != 0) {
    throw FxError(cat("config '", a.param_name(value), "' = ", a.to_int(value),
                      ": must be divisible by '", a.param_name(groups),
                      "' = ", a.to_int(groups)));
  }
}

template <size_t N, typename Impl, typename Options>
void add_conv(ModuleRegistry& r) {
  KindBuilder<Impl>(r, cat("torch.nn.Conv", N, "d"),
                    "in_channels, out_channels, kernel_size, stride=1, "
                    "padding=0, dilation=1, groups=1, bias=True, "
                    "padding_mode='zeros', device=None, dtype=None")
      .rules({ints_at_least("in_channels", 1), ints_at_least("out_channels", 1),
              ints_at_least("kernel_size", 1), ints_at_least("stride", 1),
              ints_at_least("padding", 0), ints_at_least("dilation", 1),
              ints_at_least("groups", 1)})
      .check([](OpArgs& a) {
        check_divisible(a, 0, 6);
        check_divisible(a, 1, 6);
        check_window<N>(a, 2, 4, 5, a.to_int(1));
      })
      .weights([](OpArgs& a) {
        std::vector<int64_t> weight = {a.to_int(1), a.to_int(0) / a.to_int(6)};
        for (int64_t k : n_ints<N>(a, 2)) weight.push_back(k);
        WeightShapes shapes = {{"weight", weight}};
        if (a.to_bool(7)) shapes.push_back({"bias", {a.to_int(1)}});
        return shapes;
      })
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
      .rules({ints_at_least("num_features", 0), float_in("eps", 0, kInf)})
      .weights([](OpArgs& a) {
        int64_t c = a.to_int(0);
        WeightShapes shapes;
        if (a.to_bool(3)) {
          shapes = {{"weight", {c}}, {"bias", {c}}};
        }
        if (a.to_bool(4)) {
          shapes.push_back({"running_mean", {c}});
          shapes.push_back({"running_var", {c}});
          shapes.push_back({"num_batches_tracked", {}});
        }
        return shapes;
      })
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

// nn.MaxPool1d/2d(..., return_indices=True), whose forward returns
// (values, indices) as torch's does (max_pool{1,2}d_with_indices, the ATen
// operators torch.nn.functional calls). LibTorch's MaxPoolNdImpl has no
// such option (forward() gives the values), so a module built with it is
// this class instead. It is not a MaxPoolNdImpl: C++ generated for a graph
// (cpp_codegen, which calls a torch.nn.MaxPoolNd through LibTorch's class)
// fails on it with std::bad_cast rather than drop the indices.
template <size_t N>
class MaxPoolWithIndicesImpl
    : public torch::nn::Cloneable<MaxPoolWithIndicesImpl<N>> {
 public:
  explicit MaxPoolWithIndicesImpl(torch::nn::MaxPoolOptions<N> o)
      : options(std::move(o)) {}
  void reset() override {}
  std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& input) {
    if constexpr (N == 1) {
      return at::max_pool1d_with_indices(
          input, *options.kernel_size(), *options.stride(), *options.padding(),
          *options.dilation(), options.ceil_mode());
    } else {
      return at::max_pool2d_with_indices(
          input, *options.kernel_size(), *options.stride(), *options.padding(),
          *options.dilation(), options.ceil_mode());
    }
  }
  torch::nn::MaxPoolOptions<N> options;
};

// nn.Softmax(dim=None), whose forward picks the dimension from the input's
// rank as torch's F.softmax does for an implicit dim (_get_softmax_dim: 0
// for ranks 0, 1 and 3, else 1; torch also warns that this is deprecated).
// LibTorch's SoftmaxImpl needs an int, so a module built without one is
// this class, which C++ generated code calls through the module registry.
class SoftmaxImplicitDimImpl
    : public torch::nn::Cloneable<SoftmaxImplicitDimImpl> {
 public:
  void reset() override {}
  at::Tensor forward(const at::Tensor& input) {
    const int64_t rank = input.dim();
    return at::softmax(input, rank == 0 || rank == 1 || rank == 3 ? 0 : 1);
  }
};

// Both classes of a torch.nn.Softmax, added as add_max_pool adds its two.
void add_softmax(ModuleRegistry& r) {
  auto create = [](OpArgs& a) -> std::shared_ptr<torch::nn::Module> {
    if (a.is_none(0)) return std::make_shared<SoftmaxImplicitDimImpl>();
    return std::make_shared<torch::nn::SoftmaxImpl>(a.to_int(0));
  };
  KindBuilder<SoftmaxImplicitDimImpl>(r, "torch.nn.Softmax", "dim=None")
      .create(create)
      .describe([](const SoftmaxImplicitDimImpl&) {
        return ArgumentDict{{"dim", Argument()}};
      })
      .no_cpp_class();
  KindBuilder<torch::nn::SoftmaxImpl>(r, "torch.nn.Softmax", "dim=None")
      .create(create)
      .describe([](const torch::nn::SoftmaxImpl& m) {
        return ArgumentDict{{"dim", m.options.dim()}};
      });
}

// Both classes of a torch.nn.MaxPoolNd: LibTorch's (return_indices=False)
// and MaxPoolWithIndicesImpl<N>. The latter's kind is added first, so the
// type name resolves to LibTorch's (whose create builds either) and only
// lookup by C++ type reaches it.
template <size_t N, typename Impl>
void add_max_pool(ModuleRegistry& r) {
  using WithIndices = MaxPoolWithIndicesImpl<N>;
  auto create = [](OpArgs& a) -> std::shared_ptr<torch::nn::Module> {
    torch::nn::MaxPoolOptions<N> o(expanding<N>(a, 0));
    o.stride(a.is_none(1) ? expanding<N>(a, 0) : expanding<N>(a, 1))
        .padding(expanding<N>(a, 2))
        .dilation(expanding<N>(a, 3))
        .ceil_mode(a.to_bool(5));
    if (a.to_bool(4)) return std::make_shared<WithIndices>(o);
    return std::make_shared<Impl>(o);
  };
  auto describe = [](const torch::nn::MaxPoolOptions<N>& o,
                     bool return_indices) {
    return ArgumentDict{{"kernel_size", int_tuple<N>(o.kernel_size())},
                        {"stride", int_tuple<N>(o.stride())},
                        {"padding", int_tuple<N>(o.padding())},
                        {"dilation", int_tuple<N>(o.dilation())},
                        {"return_indices", return_indices},
                        {"ceil_mode", o.ceil_mode()}};
  };
  const char* signature =
      "kernel_size, stride=None, padding=0, dilation=1, "
      "return_indices=False, ceil_mode=False";
  std::vector<ConfigRule> rules = {
      ints_at_least("kernel_size", 1), ints_at_least("stride", 1),
      ints_at_least("padding", 0), ints_at_least("dilation", 1)};
  auto check = [](OpArgs& a) { check_window<N>(a, 0, 2, 3, 1); };
  KindBuilder<WithIndices>(r, cat("torch.nn.MaxPool", N, "d"), signature)
      .rules(rules)
      .check(check)
      .create(create)
      .forward("input",
               [](WithIndices& m, OpArgs& a) -> IValue {
                 auto [values, indices] = m.forward(a.tensor(0));
                 return make_tuple({values, indices});
               })
      .describe([describe](const WithIndices& m) {
        return describe(m.options, true);
      })
      .no_cpp_class();
  KindBuilder<Impl>(r, cat("torch.nn.MaxPool", N, "d"), signature)
      .rules(rules)
      .check(check)
      .create(create)
      .describe(
          [describe](const Impl& m) { return describe(m.options, false); });
}

// nn.AvgPool1d(kernel_size, stride=None, padding=0, ceil_mode=False,
// count_include_pad=True) and AvgPool2d(..., divisor_override=None): torch
// 1.13's AvgPool1d has no divisor_override (LibTorch's options do).
template <size_t N, typename Impl>
void add_avg_pool(ModuleRegistry& r) {
  constexpr bool kDivisor = N > 1;
  std::vector<ConfigRule> rules = {ints_at_least("kernel_size", 1),
                                   ints_at_least("stride", 1),
                                   ints_at_least("padding", 0)};
  if (kDivisor) rules.push_back(ints_at_least("divisor_override", 1));
  KindBuilder<Impl>(r, cat("torch.nn.AvgPool", N, "d"),
                    kDivisor ? "kernel_size, stride=None, padding=0, "
                               "ceil_mode=False, count_include_pad=True, "
                               "divisor_override=None"
                             : "kernel_size, stride=None, padding=0, "
                               "ceil_mode=False, count_include_pad=True")
      .rules(std::move(rules))
      .check([](OpArgs& a) { check_window<N>(a, 0, 2, -1, 1); })
      .create([](OpArgs& a) {
        torch::nn::AvgPoolOptions<N> o(expanding<N>(a, 0));
        o.stride(a.is_none(1) ? expanding<N>(a, 0) : expanding<N>(a, 1))
            .padding(expanding<N>(a, 2))
            .ceil_mode(a.to_bool(3))
            .count_include_pad(a.to_bool(4));
        if (kDivisor) o.divisor_override(a.optional_int(5));
        return std::make_shared<Impl>(o);
      })
      .describe([](const Impl& m) {
        const auto& o = m.options;
        ArgumentDict out{{"kernel_size", int_tuple<N>(o.kernel_size())},
                         {"stride", int_tuple<N>(o.stride())},
                         {"padding", int_tuple<N>(o.padding())},
                         {"ceil_mode", o.ceil_mode()},
                         {"count_include_pad", o.count_include_pad()}};
        if (kDivisor) {
          out.emplace_back("divisor_override",
                           o.divisor_override()
                               ? Argument(*o.divisor_override())
                               : Argument());
        }
        return out;
      });
}

// An output_size of an adaptive pooling: an int (N copies) or N ints or
// Nones (None keeps that size of the input, as torch's _list_with_default).
template <size_t N>
torch::ExpandingArrayWithOptionalElem<N> optional_sizes(OpArgs& a, size_t i) {
  const IValue& v = a[i];
  if (v.isInt()) return torch::ExpandingArrayWithOptionalElem<N>(v.toInt());
  std::vector<IValue> items;
  if (v.isTuple()) {
    items = v.toTupleRef().elements().vec();
  } else if (v.isList()) {
    items = v.toListRef().vec();
  } else {
    throw FxError(cat("argument '", a.param_name(i),
                      "' must be an int or a sequence of ints or Nones"));
  }
  if (items.size() != N) {
    throw FxError(cat("argument '", a.param_name(i), "' must have ", N,
                      " elements, not ", items.size()));
  }
  std::vector<c10::optional<int64_t>> sizes;
  for (const IValue& item : items) {
    if (item.isNone()) {
      sizes.emplace_back(c10::nullopt);
    } else if (item.isInt()) {
      sizes.emplace_back(item.toInt());
    } else {
      throw FxError(cat("argument '", a.param_name(i),
                        "' must be an int or a sequence of ints or Nones"));
    }
  }
  return torch::ExpandingArrayWithOptionalElem<N>(sizes);
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
      .rules({ints_at_least("size", 1)})
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
      })
      // k an int, as torch's default (1) is; a module built from a config
      // says it as given (k=2.0 stays a float).
      .describe([](const torch::nn::CrossMapLRN2dImpl& m) {
        const auto& o = m.options;
        return ArgumentDict{{"size", o.size()},
                            {"alpha", o.alpha()},
                            {"beta", o.beta()},
                            {"k", o.k()}};
      });
}

// Python's float floor division a // b, for a >= 0 and b > 0 (CPython's
// float_floor_div).
double python_floordiv(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  double floor = std::floor(div);
  return div - floor > 0.5 ? floor + 1.0 : floor;
}

// The width of tail cluster `i`'s hidden layer. LibTorch's constructor
// computes in_features / int64(div_value^(i+1)), torch's Python class
// in_features // div_value^(i+1) (on floats): they agree for whole powers
// (the default 4.0), differ for others, and LibTorch divides by zero for a
// div_value below 1 (a SIGFPE, found by tests/fuzz:module_config). Only
// configs where both agree are built; others are refused, naming both.
int64_t adaptive_hidden_size(int64_t in_features, double div_value, size_t i) {
  double power = std::pow(div_value, static_cast<double>(i + 1));
  if (!(power >= 1 && power <= 0x1p62)) {
    throw FxError(cat("config 'div_value' = ", python_float_repr(div_value),
                      ": div_value**", i + 1, " is ", python_float_repr(power),
                      "; LibTorch's AdaptiveLogSoftmaxWithLoss needs it "
                      "between 1 and 2**62"));
  }
  int64_t libtorch = in_features / static_cast<int64_t>(power);
  double python = python_floordiv(static_cast<double>(in_features), power);
  if (static_cast<double>(libtorch) != python) {
    throw FxError(cat("config 'div_value' = ", python_float_repr(div_value),
                      ": tail cluster ", i, " would have ", libtorch,
                      " hidden features in LibTorch's "
                      "AdaptiveLogSoftmaxWithLoss but ",
                      python_float_repr(python),
                      " in torch's Python class (they agree for whole "
                      "div_values)"));
  }
  return libtorch;
}

// The constructor's checks (torch.nn.AdaptiveLogSoftmaxWithLoss's): cutoffs
// strictly increasing and below n_classes, a positive div_value.
void check_adaptive_log_softmax(OpArgs& a) {
  std::vector<int64_t> cutoffs = a.int_list(2);
  if (cutoffs.empty()) throw FxError("config 'cutoffs' must not be empty");
  for (size_t i = 0; i < cutoffs.size(); ++i) {
    if ((i > 0 && cutoffs[i] <= cutoffs[i - 1]) ||
        cutoffs[i] > a.to_int(1) - 1) {
      throw FxError(cat("config 'cutoffs': ", cutoffs[i], " at index ", i,
                        ": the cutoffs must be strictly increasing, each "
                        "between 1 and n_classes - 1 (",
                        a.to_int(1) - 1, ")"));
    }
  }
  if (!(a.to_double(3) > 0)) {
    throw FxError(cat("config 'div_value' = ",
                      python_float_repr(a.to_double(3)), ": must be positive"));
  }
  for (size_t i = 0; i < cutoffs.size(); ++i) {
    adaptive_hidden_size(a.to_int(0), a.to_double(3), i);
  }
}

// head.weight/bias and each cluster's tail.N.0 / tail.N.1 projections.
WeightShapes adaptive_log_softmax_weights(OpArgs& a) {
  int64_t in = a.to_int(0);
  std::vector<int64_t> cutoffs = a.int_list(2);
  cutoffs.push_back(a.to_int(1));
  int64_t head = cutoffs[0] + static_cast<int64_t>(cutoffs.size()) - 1;
  WeightShapes w = {{"head.weight", {head, in}}};
  if (a.to_bool(4)) w.push_back({"head.bias", {head}});
  for (size_t i = 0; i + 1 < cutoffs.size(); ++i) {
    int64_t hidden = adaptive_hidden_size(in, a.to_double(3), i);
    w.push_back({cat("tail.", i, ".0.weight"), {hidden, in}});
    w.push_back(
        {cat("tail.", i, ".1.weight"), {cutoffs[i + 1] - cutoffs[i], hidden}});
  }
  return w;
}

// nn.AdaptiveLogSoftmaxWithLoss: LibTorch's class (head, tail.N.M under
// Python's names); forward(input_, target_) (torch 1.13's parameter names)
// gives Python's _ASMoutput.
void add_adaptive_log_softmax(ModuleRegistry& r) {
  using Impl = torch::nn::AdaptiveLogSoftmaxWithLossImpl;
  KindBuilder<Impl>(r, "torch.nn.AdaptiveLogSoftmaxWithLoss",
                    "in_features, n_classes, cutoffs, div_value=4.0, "
                    "head_bias=False, device=None, dtype=None")
      .rules({ints_at_least("in_features", 1), ints_at_least("n_classes", 2),
              ints_at_least("cutoffs", 1), float_in("div_value", 0, kInf)})
      .check(check_adaptive_log_softmax)
      .weights(adaptive_log_softmax_weights)
      .create([](OpArgs& a) {
        return std::make_shared<Impl>(
            torch::nn::AdaptiveLogSoftmaxWithLossOptions(
                a.to_int(0), a.to_int(1), a.int_list(2))
                .div_value(a.to_double(3))
                .head_bias(a.to_bool(4)));
      })
      .forward("input_, target_", [](Impl& m, OpArgs& a) -> IValue {
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
      .rules(
          {ints_at_least("in_features", 0), ints_at_least("out_features", 0)})
      .weights([](OpArgs& a) {
        WeightShapes shapes = {{"weight", {a.to_int(1), a.to_int(0)}}};
        if (a.to_bool(2)) shapes.push_back({"bias", {a.to_int(1)}});
        return shapes;
      })
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
      .rules({ints_at_least("normalized_shape", 0), float_in("eps", 0, kInf)})
      .weights([](OpArgs& a) {
        std::vector<int64_t> shape = a.int_list(0);
        if (!a.to_bool(2)) return WeightShapes{};
        return WeightShapes{{"weight", shape}, {"bias", shape}};
      })
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
      .rules({ints_at_least("num_groups", 1), ints_at_least("num_channels", 0),
              float_in("eps", 0, kInf)})
      .check([](OpArgs& a) { check_divisible(a, 1, 0); })
      .weights([](OpArgs& a) {
        if (!a.to_bool(3)) return WeightShapes{};
        return WeightShapes{{"weight", {a.to_int(1)}}, {"bias", {a.to_int(1)}}};
      })
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
      .rules({float_in("p", 0, 1)})
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
  add_softmax(r);
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
      .rules({ints_at_least("output_size", 0)})
      .create([](OpArgs& a) {
        return std::make_shared<torch::nn::AdaptiveAvgPool2dImpl>(
            torch::nn::AdaptiveAvgPool2dOptions(optional_sizes<2>(a, 0)));
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
      .rules({ints_at_least("output_size", 0)})
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
      .rules({ints_at_least("num_embeddings", 0),
              ints_at_least("embedding_dim", 0)})
      .check([](OpArgs& a) {
        if (a.is_none(2)) return;
        int64_t n = a.to_int(0), i = a.to_int(2);
        if (i < -n || i >= n) {
          throw FxError(cat("config 'padding_idx' = ", i,
                            ": must lie within num_embeddings (", n, ")"));
        }
      })
      .weights([](OpArgs& a) {
        return WeightShapes{{"weight", {a.to_int(0), a.to_int(1)}}};
      })
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
