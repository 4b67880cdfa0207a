// Built-in ops, part 3: torch.nn.functional.* with the signatures of torch
// 1.13. Every target here is Python-level: torch.nn.functional's Python
// functions (relu's inplace=, softmax's implicit dim, pad, interpolate, ...),
// and the F.NAME spelling of the C builtins torch.fx records under their own
// names (F.conv2d is torch.conv2d), which nothing binds to ATen. The C
// builtins' own spellings (torch._C._nn.NAME, torch.NAME) resolve to ATen's
// schemas; those kept here have a C++ spelling for fx_core/cppgen
// (torch._C._nn.linear, torch._C._nn.gelu, torch._C._nn.avg_pool2d).
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "fx_core/runtime/ops/builtin_ops.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::ops {
namespace {

using c10::IValue;

constexpr const char* kF = "torch.nn.functional.";

// An int or tuple parameter as a list of `n` ints (Python's _pair, _triple).
std::vector<int64_t> expand_param(OpArgs& a, size_t i, size_t n) {
  std::vector<int64_t> v = a.int_list(i);
  if (v.size() == 1 && n > 1) v.assign(n, v[0]);
  return v;
}

at::Tensor activation(OpArgs& a, at::Tensor (*out_of_place)(const at::Tensor&),
                      at::Tensor& (*in_place)(at::Tensor&), size_t inplace) {
  if (a.to_bool(inplace)) {
    at::Tensor x = a.tensor(0);
    return in_place(x);
  }
  return out_of_place(a.tensor(0));
}

// torch.conv1d/2d/3d: ATen's conv operators, which also take unbatched
// inputs and padding='same' / 'valid'.

// _get_softmax_dim: softmax's implicit dim (0 for 0-, 1- and 3-d inputs).
int64_t softmax_dim(OpArgs& a) {
  if (!a.is_none(1)) return a.to_int(1);
  int64_t n = a.tensor(0).dim();
  return n == 0 || n == 1 || n == 3 ? 0 : 1;
}

IValue conv(OpArgs& a, size_t n) {
  const at::Tensor& x = a.tensor(0);
  const at::Tensor& w = a.tensor(1);
  c10::optional<at::Tensor> bias = a.optional_tensor(2);
  std::vector<int64_t> stride = expand_param(a, 3, n);
  std::vector<int64_t> dilation = expand_param(a, 5, n);
  int64_t groups = a.to_int(6);
  if (a[4].isString()) {
    std::string padding = a.to_string(4);
    if (n == 1)
      return at::conv1d(x, w, bias, stride, padding, dilation, groups);
    if (n == 2)
      return at::conv2d(x, w, bias, stride, padding, dilation, groups);
    return at::conv3d(x, w, bias, stride, padding, dilation, groups);
  }
  std::vector<int64_t> padding = expand_param(a, 4, n);
  if (n == 1) return at::conv1d(x, w, bias, stride, padding, dilation, groups);
  if (n == 2) return at::conv2d(x, w, bias, stride, padding, dilation, groups);
  return at::conv3d(x, w, bias, stride, padding, dilation, groups);
}

IValue max_pool(OpArgs& a, size_t n) {
  std::vector<int64_t> kernel = expand_param(a, 1, n);
  std::vector<int64_t> stride = a.is_none(2) ? kernel : expand_param(a, 2, n);
  std::vector<int64_t> padding = expand_param(a, 3, n);
  std::vector<int64_t> dilation = expand_param(a, 4, n);
  bool ceil_mode = a.to_bool(5);
  if (a.to_bool(6)) {
    auto r = n == 1 ? at::max_pool1d_with_indices(a.tensor(0), kernel, stride,
                                                  padding, dilation, ceil_mode)
             : n == 2
                 ? at::max_pool2d_with_indices(a.tensor(0), kernel, stride,
                                               padding, dilation, ceil_mode)
                 : at::max_pool3d_with_indices(a.tensor(0), kernel, stride,
                                               padding, dilation, ceil_mode);
    return make_tuple({std::get<0>(r), std::get<1>(r)});
  }
  if (n == 1) {
    return at::max_pool1d(a.tensor(0), kernel, stride, padding, dilation,
                          ceil_mode);
  }
  if (n == 2) {
    return at::max_pool2d(a.tensor(0), kernel, stride, padding, dilation,
                          ceil_mode);
  }
  return at::max_pool3d(a.tensor(0), kernel, stride, padding, dilation,
                        ceil_mode);
}

IValue avg_pool(OpArgs& a, size_t n) {
  std::vector<int64_t> kernel = expand_param(a, 1, n);
  std::vector<int64_t> stride = a.is_none(2) ? kernel : expand_param(a, 2, n);
  std::vector<int64_t> padding = expand_param(a, 3, n);
  bool ceil_mode = a.to_bool(4), count_include_pad = a.to_bool(5);
  if (n == 1) {
    return at::avg_pool1d(a.tensor(0), kernel, stride, padding, ceil_mode,
                          count_include_pad);
  }
  c10::optional<int64_t> divisor = a.optional_int(6);
  if (n == 2) {
    return at::avg_pool2d(a.tensor(0), kernel, stride, padding, ceil_mode,
                          count_include_pad, divisor);
  }
  return at::avg_pool3d(a.tensor(0), kernel, stride, padding, ceil_mode,
                        count_include_pad, divisor);
}

// A size given as an int (a 1-element tensor) or as a SymInt, a symbolic
// int during a symbolic capture, which stays symbolic: sizes go to ATen's
// SymInt overloads. std::nullopt for anything else.
c10::optional<c10::SymInt> sym_int(const IValue& v) {
  if (v.isSymInt()) return v.toSymInt();
  if (v.isInt()) return c10::SymInt(v.toInt());
  if (v.isTensor() && v.toTensor().numel() == 1) {
    return c10::SymInt(v.toTensor().item<int64_t>());
  }
  return c10::nullopt;
}

[[noreturn]] void not_sizes(OpArgs& a, size_t i, const IValue& item) {
  throw FxError(cat("argument '", a.param_name(i),
                    "' must be an int or a sequence of ints, not ",
                    value_type_name(item)));
}

// An int or a sequence of ints as `n` SymInts (interpolate's `size`).
std::vector<c10::SymInt> output_size(OpArgs& a, size_t i, size_t n) {
  std::vector<IValue> items =
      is_sequence(a[i]) ? sequence_elements(a[i]) : std::vector<IValue>{a[i]};
  std::vector<c10::SymInt> out;
  for (const IValue& item : items) {
    c10::optional<c10::SymInt> s = sym_int(item);
    if (!s) not_sizes(a, i, item);
    out.push_back(*s);
  }
  if (out.size() == 1 && n > 1) out.assign(n, out[0]);
  return out;
}

// The sizes as ints (a symbolic one specialised, with a guard), for the
// operators without SymInt sizes.
std::vector<int64_t> concrete(const std::vector<c10::SymInt>& sizes) {
  std::vector<int64_t> out;
  for (const c10::SymInt& s : sizes) {
    out.push_back(s.guard_int(__FILE__, __LINE__));
  }
  return out;
}

// adaptive output sizes may hold None (keep that input dimension).
std::vector<c10::SymInt> adaptive_size(OpArgs& a, size_t n) {
  const at::Tensor& x = a.tensor(0);
  std::vector<IValue> items;
  if (is_sequence(a[1])) {
    items = sequence_elements(a[1]);
  } else {
    items.assign(n, a[1]);
  }
  std::vector<c10::SymInt> out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].isNone()) {
      out.push_back(x.sym_size(x.dim() - items.size() + i));
      continue;
    }
    c10::optional<c10::SymInt> s = sym_int(items[i]);
    if (!s) not_sizes(a, 1, items[i]);
    out.push_back(*s);
  }
  return out;
}

IValue batch_norm(OpArgs& a) {
  return at::batch_norm(a.tensor(0), a.optional_tensor(3), a.optional_tensor(4),
                        a.optional_tensor(1), a.optional_tensor(2),
                        a.to_bool(5), a.to_double(6), a.to_double(7),
                        /*cudnn_enabled=*/true);
}

IValue pad(OpArgs& a) {
  std::string mode = a.to_string(2);
  std::vector<int64_t> p = a.int_list(1);
  if (mode == "constant") {
    return at::constant_pad_nd(a.tensor(0), p,
                               a.is_none(3) ? at::Scalar(0) : a.scalar(3));
  }
  return at::pad(a.tensor(0), p, mode, a.optional_double(3));
}

IValue interpolate(OpArgs& a) {
  const at::Tensor& x = a.tensor(0);
  size_t spatial = x.dim() - 2;
  std::string mode = a.to_string(3);
  c10::optional<std::vector<c10::SymInt>> size;
  if (!a.is_none(1)) size = output_size(a, 1, spatial);
  std::vector<double> scales;
  if (!a.is_none(2)) {
    if (a[2].isDouble() || a[2].isInt()) {
      scales.assign(spatial, a.to_double(2));
    } else {
      for (const IValue& v : sequence_elements(a[2])) {
        scales.push_back(v.isDouble() ? v.toDouble()
                                      : static_cast<double>(v.toInt()));
      }
    }
  }
  if (!size) {
    size.emplace();
    for (size_t i = 0; i < spatial; ++i) {
      size->push_back(static_cast<int64_t>(
          std::floor(static_cast<double>(x.size(i + 2)) * scales[i])));
    }
  }
  bool recompute = !a.is_none(5) && a.to_bool(5);
  auto scale = [&](size_t i) -> c10::optional<double> {
    if (scales.empty() || recompute) return c10::nullopt;
    return scales[i];
  };
  c10::optional<bool> align =
      a.is_none(4) ? c10::nullopt : c10::optional<bool>(a.to_bool(4));
  if (mode == "nearest") {
    if (spatial == 1) return at::upsample_nearest1d_symint(x, *size, scale(0));
    if (spatial == 2) {
      return at::upsample_nearest2d_symint(x, *size, scale(0), scale(1));
    }
    return at::upsample_nearest3d_symint(x, *size, scale(0), scale(1),
                                         scale(2));
  }
  if (mode == "nearest-exact") {
    if (spatial == 1) {
      return at::_upsample_nearest_exact1d_symint(x, *size, scale(0));
    }
    if (spatial == 2) {
      return at::_upsample_nearest_exact2d_symint(x, *size, scale(0), scale(1));
    }
    return at::_upsample_nearest_exact3d_symint(x, *size, scale(0), scale(1),
                                                scale(2));
  }
  if (mode == "area") {
    if (spatial == 1) return at::adaptive_avg_pool1d(x, concrete(*size));
    if (spatial == 2) return at::adaptive_avg_pool2d_symint(x, *size);
    return at::adaptive_avg_pool3d(x, concrete(*size));
  }
  bool antialias = a.to_bool(6);
  if (antialias &&
      !((mode == "bilinear" || mode == "bicubic") && x.dim() == 4)) {
    throw FxError(
        "Anti-alias option is only supported for bilinear and bicubic modes");
  }
  bool corners = align.value_or(false);
  if (mode == "bilinear" && antialias) {
    return at::_upsample_bilinear2d_aa_symint(x, *size, corners, scale(0),
                                              scale(1));
  }
  if (mode == "bicubic" && antialias) {
    return at::_upsample_bicubic2d_aa_symint(x, *size, corners, scale(0),
                                             scale(1));
  }
  if (mode == "bilinear") {
    return at::upsample_bilinear2d_symint(x, *size, corners, scale(0),
                                          scale(1));
  }
  if (mode == "trilinear") {
    return at::upsample_trilinear3d_symint(x, *size, corners, scale(0),
                                           scale(1), scale(2));
  }
  if (mode == "linear") {
    return at::upsample_linear1d_symint(x, *size, corners, scale(0));
  }
  if (mode == "bicubic") {
    return at::upsample_bicubic2d_symint(x, *size, corners, scale(0), scale(1));
  }
  throw FxError(cat("interpolate: unsupported mode '", mode, "'"));
}

}  // namespace

void register_functional_ops(OpRegistry& r) {
  // Registers torch.nn.functional.NAME and any alias targets.
  auto f = [&](const std::vector<std::string>& targets,
               std::string_view signature, OpKernel kernel,
               std::string_view cpp = {}) {
    for (const std::string& t : targets) {
      r.add(Opcode::kCallFunction, t, signature, kernel, cpp);
    }
  };
  auto F = [](std::string_view name) { return cat(kF, name); };

  f(
      {F("relu")}, "input, inplace=False",
      [](OpArgs& a) -> IValue { return activation(a, at::relu, at::relu_, 1); },
      "at::relu({input})");
  f({F("relu6")}, "input, inplace=False", [](OpArgs& a) -> IValue {
    at::Tensor x = a.tensor(0);
    return a.to_bool(1) ? at::hardtanh_(x, 0, 6) : at::hardtanh(x, 0, 6);
  });
  f({F("hardtanh")}, "input, min_val=-1.0, max_val=1.0, inplace=False",
    [](OpArgs& a) -> IValue {
      at::Tensor x = a.tensor(0);
      return a.to_bool(3) ? at::hardtanh_(x, a.scalar(1), a.scalar(2))
                          : at::hardtanh(x, a.scalar(1), a.scalar(2));
    });
  f(
      {F("silu")}, "input, inplace=False",
      [](OpArgs& a) -> IValue { return activation(a, at::silu, at::silu_, 1); },
      "at::silu({input})");
  f({F("hardswish")}, "input, inplace=False", [](OpArgs& a) -> IValue {
    return activation(a, at::hardswish, at::hardswish_, 1);
  });
  f({F("hardsigmoid")}, "input, inplace=False", [](OpArgs& a) -> IValue {
    return activation(a, at::hardsigmoid, at::hardsigmoid_, 1);
  });
  f({F("mish")}, "input, inplace=False",
    [](OpArgs& a) -> IValue { return activation(a, at::mish, at::mish_, 1); });
  f(
      {"torch._C._nn.gelu", F("gelu")}, "input, approximate='none'",
      [](OpArgs& a) -> IValue { return at::gelu(a.tensor(0), a.to_string(1)); },
      "at::gelu({input}, {approximate})");
  f({F("elu")}, "input, alpha=1.0, inplace=False", [](OpArgs& a) -> IValue {
    at::Tensor x = a.tensor(0);
    return a.to_bool(2) ? at::elu_(x, a.scalar(1)) : at::elu(x, a.scalar(1));
  });
  f({F("celu")}, "input, alpha=1.0, inplace=False", [](OpArgs& a) -> IValue {
    at::Tensor x = a.tensor(0);
    return a.to_bool(2) ? at::celu_(x, a.scalar(1)) : at::celu(x, a.scalar(1));
  });
  f({F("selu")}, "input, inplace=False",
    [](OpArgs& a) -> IValue { return activation(a, at::selu, at::selu_, 1); });
  f({F("rrelu")},
    "input, lower=0.125, upper=0.3333333333333333, training=False, "
    "inplace=False",
    [](OpArgs& a) -> IValue {
      if (a.to_bool(4)) {
        at::Tensor x = a.tensor(0);
        return at::rrelu_(x, a.scalar(1), a.scalar(2), a.to_bool(3));
      }
      return at::rrelu(a.tensor(0), a.scalar(1), a.scalar(2), a.to_bool(3));
    });
  f({F("_threshold"), F("threshold")}, "input, threshold, value, inplace=False",
    [](OpArgs& a) -> IValue {
      at::Tensor x = a.tensor(0);
      return a.to_bool(3) ? at::threshold_(x, a.scalar(1), a.scalar(2))
                          : at::threshold(x, a.scalar(1), a.scalar(2));
    });
  f({F("softsign")}, "input", [](OpArgs& a) -> IValue {
    const at::Tensor& x = a.tensor(0);
    return x / (x.abs() + 1);
  });
  f({F("tanhshrink")}, "input", [](OpArgs& a) -> IValue {
    const at::Tensor& x = a.tensor(0);
    return x - x.tanh();
  });
  f({F("leaky_relu")}, "input, negative_slope=0.01, inplace=False",
    [](OpArgs& a) -> IValue {
      at::Tensor x = a.tensor(0);
      return a.to_bool(2) ? at::leaky_relu_(x, a.scalar(1))
                          : at::leaky_relu(x, a.scalar(1));
    });
  f({F("softplus")}, "input, beta=1, threshold=20", [](OpArgs& a) -> IValue {
    return at::softplus(a.tensor(0), a.scalar(1), a.scalar(2));
  });
  f({F("logsigmoid")}, "input",
    [](OpArgs& a) -> IValue { return at::log_sigmoid(a.tensor(0)); });
  f({F("sigmoid")}, "input",
    [](OpArgs& a) -> IValue { return at::sigmoid(a.tensor(0)); });
  f({F("tanh")}, "input",
    [](OpArgs& a) -> IValue { return at::tanh(a.tensor(0)); });
  f({F("glu")}, "input, dim=-1",
    [](OpArgs& a) -> IValue { return at::glu(a.tensor(0), a.to_int(1)); });
  f(
      {F("softmax")}, "input, dim=None, _stacklevel=3, dtype=None",
      [](OpArgs& a) -> IValue {
        return at::softmax(a.tensor(0), softmax_dim(a), a.optional_dtype(3));
      },
      "at::softmax({input}, {dim})");
  f({F("log_softmax")}, "input, dim=None, _stacklevel=3, dtype=None",
    [](OpArgs& a) -> IValue {
      return at::log_softmax(a.tensor(0), softmax_dim(a), a.optional_dtype(3));
    });
  f({F("softmin")}, "input, dim=None, _stacklevel=3, dtype=None",
    [](OpArgs& a) -> IValue {
      return at::softmax(-a.tensor(0), softmax_dim(a), a.optional_dtype(3));
    });
  f(
      {F("dropout")}, "input, p=0.5, training=True, inplace=False",
      [](OpArgs& a) -> IValue {
        if (a.to_bool(3)) {
          at::Tensor x = a.tensor(0);
          return at::dropout_(x, a.to_double(1), a.to_bool(2));
        }
        return at::dropout(a.tensor(0), a.to_double(1), a.to_bool(2));
      },
      "at::dropout({input}, {p}, {training})");
  f(
      {"torch._C._nn.linear", F("linear")}, "input, weight, bias=None",
      [](OpArgs& a) -> IValue {
        return at::linear(a.tensor(0), a.tensor(1), a.optional_tensor(2));
      },
      "at::linear({input}, {weight}, {bias})");
  for (int n = 1; n <= 3; ++n) {
    std::string name = cat("conv", n, "d");
    f({F(name)},
      "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1",
      [n](OpArgs& a) { return conv(a, n); });
    std::string mp = cat("max_pool", n, "d");
    f({F(mp)},
      "input, kernel_size, stride=None, padding=0, dilation=1, "
      "ceil_mode=False, return_indices=False",
      [n](OpArgs& a) { return max_pool(a, n); });
    std::string ap = cat("avg_pool", n, "d");
    // avg_pool2d: every spelling shares the C++ one.
    std::vector<std::string> ap_targets = {F(ap)};
    if (n == 2) {
      ap_targets.push_back(cat("torch._C._nn.", ap));
      ap_targets.push_back(cat("torch.", ap));
    }
    f(
        ap_targets,
        n == 1 ? "input, kernel_size, stride=None, padding=0, ceil_mode=False, "
                 "count_include_pad=True"
               : "input, kernel_size, stride=None, padding=0, ceil_mode=False, "
                 "count_include_pad=True, divisor_override=None",
        [n](OpArgs& a) { return avg_pool(a, n); },
        n == 2 ? "at::avg_pool2d({input}, {kernel_size:ints}, {stride:ints0}, "
                 "{padding:ints}, {ceil_mode}, {count_include_pad}, "
                 "{divisor_override})"
               : "");
  }
  f({F("adaptive_avg_pool1d")}, "input, output_size", [](OpArgs& a) -> IValue {
    return at::adaptive_avg_pool1d(a.tensor(0), concrete(adaptive_size(a, 1)));
  });
  f(
      {F("adaptive_avg_pool2d")}, "input, output_size",
      [](OpArgs& a) -> IValue {
        return at::adaptive_avg_pool2d_symint(a.tensor(0), adaptive_size(a, 2));
      },
      "at::adaptive_avg_pool2d({input}, {output_size:ints})");
  f({F("adaptive_avg_pool3d")}, "input, output_size", [](OpArgs& a) -> IValue {
    return at::adaptive_avg_pool3d(a.tensor(0), concrete(adaptive_size(a, 3)));
  });
  f({F("batch_norm")},
    "input, running_mean, running_var, weight=None, bias=None, "
    "training=False, momentum=0.1, eps=1e-05",
    batch_norm);
  f(
      {F("layer_norm")},
      "input, normalized_shape, weight=None, bias=None, "
      "eps=1e-05",
      [](OpArgs& a) -> IValue {
        return at::layer_norm(a.tensor(0), a.int_list(1), a.optional_tensor(2),
                              a.optional_tensor(3), a.to_double(4));
      },
      "at::layer_norm({input}, {normalized_shape:ints}, {weight}, {bias}, "
      "{eps})");
  f({F("group_norm")}, "input, num_groups, weight=None, bias=None, eps=1e-05",
    [](OpArgs& a) -> IValue {
      return at::group_norm(a.tensor(0), a.to_int(1), a.optional_tensor(2),
                            a.optional_tensor(3), a.to_double(4));
    });
  f({F("instance_norm")},
    "input, running_mean=None, running_var=None, weight=None, bias=None, "
    "use_input_stats=True, momentum=0.1, eps=1e-05",
    [](OpArgs& a) -> IValue {
      return at::instance_norm(a.tensor(0), a.optional_tensor(3),
                               a.optional_tensor(4), a.optional_tensor(1),
                               a.optional_tensor(2), a.to_bool(5),
                               a.to_double(6), a.to_double(7), true);
    });
  f({F("pad")}, "input, pad, mode='constant', value=None", pad);
  f({F("interpolate")},
    "input, size=None, scale_factor=None, mode='nearest', "
    "align_corners=None, recompute_scale_factor=None, antialias=False",
    interpolate);
  f({F("normalize")}, "input, p=2.0, dim=1, eps=1e-12, out=None",
    [](OpArgs& a) -> IValue {
      const at::Tensor& x = a.tensor(0);
      at::Tensor denom = at::norm(x, a.scalar(1), {a.to_int(2)}, true)
                             .clamp_min(a.scalar(3))
                             .expand_as(x);
      return x / denom;
    });
  f({F("one_hot")}, "tensor, num_classes=-1",
    [](OpArgs& a) -> IValue { return at::one_hot(a.tensor(0), a.to_int(1)); });
}

}  // namespace fx::ops
