// torch.nn.functional's Python functions around ATen operators, part 2
// (torch 1.13's torch/nn/functional.py): the dropouts, LP pools, adaptive and
// fractional max pools (with and without indices), grid_sample,
// local_response_norm, embedding and embedding_bag.
//
// Each follows its Python source step for step: its argument checks and
// messages, how it fills in defaults (fractional_max_pool's random samples
// drawn with torch.rand on the default generator, as Python draws them),
// and which ATen operator it ends in. The boolean-dispatched pairs
// (F.adaptive_max_pool2d and F.adaptive_max_pool2d_with_indices) share one
// kernel that returns (values, indices) when return_indices is true.
#include <ATen/ATen.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/ops/builtin_ops.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::ops {
namespace {

using c10::IValue;

void check_probability(double p) {
  if (p < 0.0 || p > 1.0) {
    throw FxError(cat("dropout probability has to be between 0 and 1, but got ",
                      python_float_repr(p)));
  }
}

enum class Dropout { kFeature, kFeatureAlpha, kAlpha };

// dropout1d / dropout2d / dropout3d / feature_alpha_dropout / alpha_dropout
// (input, p=0.5, training, inplace=False). dropout1d and dropout3d treat an
// input without its batch dimension (any rank but `batched_dim`) as one
// sample; the others take the input as it is (batched_dim 0).
IValue dropout(OpArgs& a, int batched_dim, Dropout kind) {
  double p = a.to_double(1);
  check_probability(p);
  at::Tensor x = a.tensor(0);
  bool training = a.to_bool(2), inplace = a.to_bool(3);
  if (batched_dim == 3 && x.dim() != 2 && x.dim() != 3) {
    throw FxError(cat("dropout1d: Expected 2D or 3D input, but received a ",
                      x.dim(), "D input."));
  }
  bool unsqueeze = batched_dim > 0 && x.dim() != batched_dim;
  if (unsqueeze) x = inplace ? x.unsqueeze_(0) : x.unsqueeze(0);
  at::Tensor out;
  switch (kind) {
    case Dropout::kFeature:
      out = inplace ? at::feature_dropout_(x, p, training)
                    : at::feature_dropout(x, p, training);
      break;
    case Dropout::kFeatureAlpha:
      out = inplace ? at::feature_alpha_dropout_(x, p, training)
                    : at::feature_alpha_dropout(x, p, training);
      break;
    case Dropout::kAlpha:
      out = inplace ? at::alpha_dropout_(x, p, training)
                    : at::alpha_dropout(x, p, training);
      break;
  }
  if (unsqueeze) out = inplace ? out.squeeze_(0) : out.squeeze(0);
  return out;
}

// lp_pool1d / lp_pool2d(input, norm_type, kernel_size, stride=None,
// ceil_mode=False)
IValue lp_pool(OpArgs& a, size_t n) {
  const at::Tensor& x = a.tensor(0);
  at::Scalar norm_type = a.scalar(1);
  std::vector<int64_t> kernel = a.int_list(2);
  if (kernel.size() == 1) kernel.assign(n, kernel[0]);
  std::vector<int64_t> stride = a.is_none(3) ? kernel : a.int_list(3);
  if (stride.size() == 1) stride.assign(n, stride[0]);
  bool ceil_mode = a.to_bool(4);
  at::Tensor powered = x.pow(norm_type);
  at::Tensor out =
      n == 1 ? at::avg_pool1d(powered, kernel, stride, {0}, ceil_mode)
             : at::avg_pool2d(powered, kernel, stride, {0, 0}, ceil_mode);
  int64_t window = 1;
  for (int64_t k : kernel) window *= k;
  return (at::sign(out) * at::relu(at::abs(out)))
      .mul(window)
      .pow(1.0 / norm_type.toDouble());
}

IValue values_or_both(std::tuple<at::Tensor, at::Tensor> r,
                      bool return_indices) {
  if (!return_indices) return std::get<0>(r);
  return make_tuple({std::get<0>(r), std::get<1>(r)});
}

// _list_with_default: None entries of an output size keep the input's size.
std::vector<int64_t> list_with_default(const IValue& size,
                                       const at::Tensor& input, size_t n) {
  if (size.isInt()) return std::vector<int64_t>(n, size.toInt());
  std::vector<IValue> items = sequence_elements(size);
  if (static_cast<size_t>(input.dim()) <= items.size()) {
    throw FxError(cat("Input dimension should be at least ", items.size() + 1));
  }
  std::vector<int64_t> out;
  int64_t first = input.dim() - static_cast<int64_t>(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    out.push_back(items[i].isNone() ? input.size(first + i) : items[i].toInt());
  }
  return out;
}

// adaptive_max_poolNd(input, output_size, return_indices=False)
IValue adaptive_max_pool(OpArgs& a, size_t n, bool return_indices) {
  const at::Tensor& x = a.tensor(0);
  if (n == 1) {
    std::vector<int64_t> size = a.int_list(1);
    return values_or_both(at::adaptive_max_pool1d(x, size), return_indices);
  }
  std::vector<int64_t> size = list_with_default(a[1], x, n);
  if (n == 2) {
    return values_or_both(at::adaptive_max_pool2d(x, size), return_indices);
  }
  return values_or_both(at::adaptive_max_pool3d(x, size), return_indices);
}

// _pair / _triple of a number that may be a float (output_ratio).
std::vector<double> n_doubles(const IValue& v, size_t n) {
  if (!is_sequence(v)) return std::vector<double>(n, v.toScalar().toDouble());
  std::vector<double> out;
  for (const IValue& x : sequence_elements(v)) {
    out.push_back(x.toScalar().toDouble());
  }
  return out;
}

std::vector<int64_t> n_ints(const IValue& v, size_t n) {
  if (v.isInt()) return std::vector<int64_t>(n, v.toInt());
  std::vector<int64_t> out;
  for (const IValue& x : sequence_elements(v)) out.push_back(x.toInt());
  return out;
}

// fractional_max_poolNd(input, kernel_size, output_size=None,
// output_ratio=None, return_indices=False, _random_samples=None)
IValue fractional_max_pool(OpArgs& a, size_t n, bool return_indices) {
  const at::Tensor& x = a.tensor(0);
  if (a.is_none(2) && a.is_none(3)) {
    throw FxError(cat("fractional_max_pool", n,
                      "d requires specifying either an output_size or an "
                      "output_ratio"));
  }
  std::vector<int64_t> kernel = n_ints(a[1], n);
  std::vector<int64_t> size;
  if (!a.is_none(2)) {
    size = n_ints(a[2], n);
  } else {
    std::vector<double> ratio = n_doubles(a[3], n);
    for (size_t d = 0; d < n; ++d) {
      size.push_back(static_cast<int64_t>(
          static_cast<double>(x.size(x.dim() - n + d)) * ratio[d]));
    }
  }
  at::Tensor samples;
  if (!a.is_none(5)) {
    samples = a.tensor(5);
  } else {
    int64_t batch = x.dim() == static_cast<int64_t>(n) + 1 ? 1 : x.size(0);
    samples = at::rand(
        {batch, x.size(x.dim() - n - 1), static_cast<int64_t>(n)}, x.options());
  }
  if (n == 2) {
    return values_or_both(at::fractional_max_pool2d(x, kernel, size, samples),
                          return_indices || a.to_bool(4));
  }
  return values_or_both(at::fractional_max_pool3d(x, kernel, size, samples),
                        return_indices || a.to_bool(4));
}

int64_t grid_enum(const std::string& value, const char* what,
                  const std::vector<std::string>& names,
                  const std::string& expected) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == value) return static_cast<int64_t>(i);
  }
  throw FxError(cat("nn.functional.grid_sample(): expected ", what, " to be ",
                    expected, ", but got: '", value, "'"));
}

// grid_sample(input, grid, mode='bilinear', padding_mode='zeros',
// align_corners=None)
IValue grid_sample(OpArgs& a) {
  int64_t mode =
      grid_enum(a.to_string(2), "mode", {"bilinear", "nearest", "bicubic"},
                "'bilinear', 'nearest' or 'bicubic'");
  int64_t padding = grid_enum(a.to_string(3), "padding_mode",
                              {"zeros", "border", "reflection"},
                              "'zeros', 'border', or 'reflection'");
  bool align_corners = !a.is_none(4) && a.to_bool(4);
  return at::grid_sampler(a.tensor(0), a.tensor(1), mode, padding,
                          align_corners);
}

// local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0)
IValue local_response_norm(OpArgs& a) {
  const at::Tensor& input = a.tensor(0);
  int64_t dim = input.dim(), size = a.to_int(1);
  if (dim < 3) {
    throw FxError(cat("Expected 3D or higher dimensionality input (got ", dim,
                      " dimensions)"));
  }
  if (input.numel() == 0) return input;
  at::Tensor div = input.mul(input).unsqueeze(1);
  if (dim == 3) {
    div = at::constant_pad_nd(div, {0, 0, size / 2, (size - 1) / 2});
    div = at::avg_pool2d(div, {size, 1}, {1, 1}).squeeze(1);
  } else {
    at::IntArrayRef sizes = input.sizes();
    div = div.view({sizes[0], 1, sizes[1], sizes[2], -1});
    div = at::constant_pad_nd(div, {0, 0, 0, 0, size / 2, (size - 1) / 2});
    div = at::avg_pool3d(div, {size, 1, 1}, {1, 1, 1}).squeeze(1);
    div = div.view(sizes);
  }
  div = div.mul(a.scalar(2)).add(a.scalar(4)).pow(a.scalar(3));
  return input / div;
}

// _no_grad_embedding_renorm_: rows of `weight` that `input` reads are
// rescaled in place to max_norm, as Python does.
void renorm(const at::Tensor& weight, const at::Tensor& input, double max_norm,
            double norm_type) {
  at::NoGradGuard no_grad;
  at::Tensor w = weight;
  at::embedding_renorm_(w, input, max_norm, norm_type);
}

// embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
// scale_grad_by_freq=False, sparse=False)
IValue embedding(OpArgs& a) {
  at::Tensor input = a.tensor(0);
  const at::Tensor& weight = a.tensor(1);
  int64_t padding_idx = -1;
  if (!a.is_none(2)) {
    padding_idx = a.to_int(2);
    int64_t rows = weight.size(0);
    if (padding_idx >= rows || padding_idx < -rows) {
      throw FxError("Padding_idx must be within num_embeddings");
    }
    if (padding_idx < 0) padding_idx += rows;
  }
  if (!a.is_none(3)) {
    input = input.contiguous();
    renorm(weight, input, a.to_double(3), a.to_double(4));
  }
  return at::embedding(weight, input, padding_idx, a.to_bool(5), a.to_bool(6));
}

int64_t bag_mode(const std::string& mode, bool scale_grad, bool sparse) {
  if (mode == "sum") return 0;
  if (mode == "mean") return 1;
  if (mode != "max") throw FxError("mode has to be one of sum, mean or max");
  if (scale_grad) {
    throw FxError(
        "max mode does not support scaling the gradient by the frequency");
  }
  if (sparse) throw FxError("max mode does not support sparse weights");
  return 2;
}

// embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
// scale_grad_by_freq=False, mode='mean', sparse=False,
// per_sample_weights=None, include_last_offset=False, padding_idx=None)
IValue embedding_bag(OpArgs& a) {
  at::Tensor input = a.tensor(0), weight = a.tensor(1);
  if (weight.scalar_type() == at::kLong && input.is_floating_point()) {
    std::swap(input, weight);
  }
  c10::optional<at::Tensor> offsets = a.optional_tensor(2);
  c10::optional<at::Tensor> per_sample = a.optional_tensor(8);
  if (per_sample && input.sizes() != per_sample->sizes()) {
    throw FxError(
        "embedding_bag: If per_sample_weights is passed, then it must have "
        "the same shape as the input");
  }
  if (input.dim() == 2) {
    if (offsets) {
      throw FxError(
          "if input is 2D, then offsets has to be None, as input is treated "
          "is a mini-batch of fixed length sequences");
    }
    offsets = at::arange(0, input.numel(), input.size(1), input.options());
    input = input.reshape(-1);
    if (per_sample) per_sample = per_sample->reshape(-1);
  } else if (input.dim() == 1) {
    if (!offsets) throw FxError("offsets has to be a 1D Tensor but got None");
    if (offsets->dim() != 1) throw FxError("offsets has to be a 1D Tensor");
  } else {
    throw FxError(
        cat("input has to be 1D or 2D Tensor, but got Tensor of "
            "dimension ",
            input.dim()));
  }
  std::string mode_name = a.to_string(6);
  int64_t mode = bag_mode(mode_name, a.to_bool(5), a.to_bool(7));
  if (!a.is_none(3)) renorm(weight, input, a.to_double(3), a.to_double(4));
  if (per_sample && mode != 0) {
    throw FxError(
        cat("embedding_bag: per_sample_weights was not None. "
            "per_sample_weights is only supported for mode='sum' "
            "(got mode='",
            mode_name, "'). Please open a feature request on GitHub."));
  }
  return std::get<0>(at::embedding_bag(weight, input, *offsets, a.to_bool(5),
                                       mode, a.to_bool(7), per_sample,
                                       a.to_bool(9), a.optional_int(10)));
}

}  // namespace

void register_nn_functional_wrapper_ops(OpRegistry& r) {
  auto add = [&r](const std::string& name, const std::string& signature,
                  OpKernel kernel) {
    r.add(Opcode::kCallFunction, cat("torch.nn.functional.", name), signature,
          std::move(kernel));
  };
  const char* train = "input, p=0.5, training=True, inplace=False";
  const char* eval = "input, p=0.5, training=False, inplace=False";
  add("dropout1d", train,
      [](OpArgs& a) { return dropout(a, 3, Dropout::kFeature); });
  add("dropout2d", train,
      [](OpArgs& a) { return dropout(a, 0, Dropout::kFeature); });
  add("dropout3d", train,
      [](OpArgs& a) { return dropout(a, 5, Dropout::kFeature); });
  add("feature_alpha_dropout", eval,
      [](OpArgs& a) { return dropout(a, 0, Dropout::kFeatureAlpha); });
  add("alpha_dropout", eval,
      [](OpArgs& a) { return dropout(a, 0, Dropout::kAlpha); });
  for (size_t n : {1, 2}) {
    add(cat("lp_pool", n, "d"),
        "input, norm_type, kernel_size, stride=None, ceil_mode=False",
        [n](OpArgs& a) { return lp_pool(a, n); });
  }
  for (size_t n : {1, 2, 3}) {
    std::string pool = cat("adaptive_max_pool", n, "d");
    add(pool, "input, output_size, return_indices=False",
        [n](OpArgs& a) { return adaptive_max_pool(a, n, a.to_bool(2)); });
    add(cat(pool, "_with_indices"), "input, output_size, return_indices=False",
        [n](OpArgs& a) { return adaptive_max_pool(a, n, true); });
  }
  const char* fractional =
      "input, kernel_size, output_size=None, output_ratio=None, "
      "return_indices=False, _random_samples=None";
  for (size_t n : {2, 3}) {
    std::string pool = cat("fractional_max_pool", n, "d");
    add(pool, fractional,
        [n](OpArgs& a) { return fractional_max_pool(a, n, false); });
    add(cat(pool, "_with_indices"), fractional,
        [n](OpArgs& a) { return fractional_max_pool(a, n, true); });
  }
  add("grid_sample",
      "input, grid, mode='bilinear', padding_mode='zeros', align_corners=None",
      grid_sample);
  add("local_response_norm", "input, size, alpha=0.0001, beta=0.75, k=1.0",
      local_response_norm);
  add("embedding",
      "input, weight, padding_idx=None, max_norm=None, norm_type=2.0, "
      "scale_grad_by_freq=False, sparse=False",
      embedding);
  add("embedding_bag",
      "input, weight, offsets=None, max_norm=None, norm_type=2, "
      "scale_grad_by_freq=False, mode='mean', sparse=False, "
      "per_sample_weights=None, include_last_offset=False, padding_idx=None",
      embedding_bag);
}

}  // namespace fx::ops
