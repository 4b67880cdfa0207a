// torch.masked's reductions and normalizations (torch/masked/_ops.py in
// torch 1.13), on strided tensors.
//
// Each is a Python function, so torch.fx records it as one call_function
// node ("torch.masked._ops.sum"). They share one recipe, followed here step
// for step: the mask is broadcast to the input's shape and made boolean
// (_input_mask), masked-out elements are replaced by the operation's identity
// (_reduction_identity: 0 for sum, 1 for prod, -inf for amax, NaN for median,
// ...), and the plain ATen operator runs on the result. mean, var and std
// count the masked-in elements instead, so a fully masked-out row gives NaN
// as in Python. Python's dtype rules are kept, including the surprising ones
// (argmax's indices converted to the input's dtype).
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fx_core/runtime/ops/builtin_ops.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::ops {
namespace {

using c10::IValue;
using Dims = c10::optional<std::vector<int64_t>>;
using MaybeTensor = c10::optional<at::Tensor>;
using MaybeDtype = c10::optional<c10::ScalarType>;

// What a masked-out element is replaced by (_reduction_identity).
enum class Identity { kZero, kOne, kLowest, kHighest, kNan };

bool is_float(const at::Tensor& t) {
  return at::isFloatingType(t.scalar_type()) ||
         at::isComplexType(t.scalar_type());
}

at::Tensor identity_value(Identity kind, const at::Tensor& input) {
  at::TensorOptions options = input.options();
  double inf = std::numeric_limits<double>::infinity();
  switch (kind) {
    case Identity::kZero:
      return at::scalar_tensor(0, options);
    case Identity::kOne:
      return at::scalar_tensor(1, options);
    case Identity::kNan:
      return at::scalar_tensor(std::nan(""), options);
    case Identity::kLowest:
    case Identity::kHighest:
      break;
  }
  bool low = kind == Identity::kLowest;
  if (is_float(input)) return at::scalar_tensor(low ? -inf : inf, options);
  if (input.scalar_type() == at::kBool) {
    throw FxError(cat("masked: no identity of this reduction on ",
                      c10::toString(input.scalar_type()), " input"));
  }
  return AT_DISPATCH_INTEGRAL_TYPES(input.scalar_type(), "identity", [&] {
    return at::scalar_tensor(low ? std::numeric_limits<scalar_t>::lowest()
                                 : std::numeric_limits<scalar_t>::max(),
                             options);
  });
}

// _input_mask: the mask broadcast to the input's shape, as booleans.
at::Tensor input_mask(const at::Tensor& input, const at::Tensor& mask) {
  at::Tensor m = mask;
  if (m.sizes() != input.sizes()) {
    if (m.dim() > input.dim()) {
      throw FxError(
          "_input_mask expected broadcastable mask (got mask dimensionality "
          "higher than of the input)");
    }
    m = m.clone().broadcast_to(input.sizes());
  }
  return m.to(at::kBool);
}

// _combine_input_and_mask: masked-out elements replaced by the identity.
at::Tensor combine(const at::Tensor& input, const MaybeTensor& mask,
                   Identity kind) {
  if (!mask) return input;
  return at::where(input_mask(input, *mask), input,
                   identity_value(kind, input));
}

// _canonical_dim: the reduced dimensions, sorted; None and () mean all.
std::vector<int64_t> canonical_dims(const Dims& dim, int64_t ndim) {
  std::vector<int64_t> out;
  if (!dim || dim->empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  int64_t n = std::max<int64_t>(ndim, 1);
  for (int64_t d : *dim) {
    if (d >= n || d < -n) {
      throw FxError(cat("Dimension out of range (expected to be in range of [",
                        -n, ", ", n - 1, "], but got ", d, ")"));
    }
    int64_t c = ((d % n) + n) % n;
    if (std::find(out.begin(), out.end(), c) != out.end()) {
      throw FxError(
          cat("dim=", d, " appears multiple times in the list of dims"));
    }
    out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int64_t canonical_dim(int64_t dim, int64_t ndim) {
  return canonical_dims(std::vector<int64_t>{dim}, ndim)[0];
}

bool is_small_integral(c10::ScalarType t) {
  return t == at::kByte || t == at::kBool || t == at::kChar ||
         t == at::kShort || t == at::kInt;
}

// sum and prod accumulate small integers in int64.
c10::ScalarType accumulate_dtype(const at::Tensor& input, MaybeDtype dtype) {
  if (dtype) return *dtype;
  return is_small_integral(input.scalar_type()) ? at::kLong
                                                : input.scalar_type();
}

at::Tensor masked_sum(const at::Tensor& input, const Dims& dim, bool keepdim,
                      MaybeDtype dtype, const MaybeTensor& mask) {
  return at::sum(combine(input, mask, Identity::kZero),
                 canonical_dims(dim, input.dim()), keepdim,
                 accumulate_dtype(input, dtype));
}

IValue sum(OpArgs& a) {
  return masked_sum(a.tensor(0), a.optional_int_list(1), a.to_bool(2),
                    a.optional_dtype(3), a.optional_tensor(4));
}

IValue prod(OpArgs& a) {
  const at::Tensor& input = a.tensor(0);
  std::vector<int64_t> dims =
      canonical_dims(a.optional_int_list(1), input.dim());
  at::Tensor result = combine(input, a.optional_tensor(4), Identity::kOne)
                          .to(accumulate_dtype(input, a.optional_dtype(3)));
  for (auto d = dims.rbegin(); d != dims.rend(); ++d) {
    result = result.prod(*d, a.to_bool(2));
  }
  return result;
}

c10::ScalarType dtype_or_input(OpArgs& a, size_t i, const at::Tensor& input) {
  return a.optional_dtype(i).value_or(input.scalar_type());
}

// cumsum / cumprod(input, dim, *, dtype=None, mask=None)
IValue cumulative(OpArgs& a, bool product) {
  const at::Tensor& input = a.tensor(0);
  c10::ScalarType dtype = dtype_or_input(a, 2, input);
  int64_t dim = canonical_dim(a.to_int(1), input.dim());
  at::Tensor x = combine(input, a.optional_tensor(3),
                         product ? Identity::kOne : Identity::kZero);
  return (product ? at::cumprod(x, dim, dtype) : at::cumsum(x, dim, dtype))
      .to(dtype);
}

// amax / amin(input, dim=None, *, keepdim=False, dtype=None, mask=None)
IValue extremum(OpArgs& a, bool max) {
  const at::Tensor& input = a.tensor(0);
  at::Tensor x = combine(input, a.optional_tensor(4),
                         max ? Identity::kLowest : Identity::kHighest);
  std::vector<int64_t> dims =
      canonical_dims(a.optional_int_list(1), input.dim());
  bool keepdim = a.to_bool(2);
  return (max ? at::amax(x, dims, keepdim) : at::amin(x, dims, keepdim))
      .to(dtype_or_input(a, 3, input));
}

// argmax / argmin: the indices come back in `dtype` (the input's by default).
IValue arg_extremum(OpArgs& a, bool max) {
  const at::Tensor& input = a.tensor(0);
  at::Tensor x = combine(input, a.optional_tensor(4),
                         max ? Identity::kLowest : Identity::kHighest);
  c10::optional<int64_t> dim = a.optional_int(1);
  bool keepdim = a.to_bool(2);
  return (max ? at::argmax(x, dim, keepdim) : at::argmin(x, dim, keepdim))
      .to(dtype_or_input(a, 3, input));
}

// The number of masked-in elements reduced into each output element.
at::Tensor count(const at::Tensor& input, const Dims& dim, bool keepdim,
                 const MaybeTensor& mask) {
  at::Tensor ones = at::ones(input.sizes(), input.options().dtype(at::kLong));
  MaybeTensor in_mask;
  if (mask) in_mask = input_mask(input, *mask);
  return masked_sum(ones, dim, keepdim, c10::nullopt, in_mask);
}

IValue mean(OpArgs& a) {
  const at::Tensor& input = a.tensor(0);
  Dims dim = a.optional_int_list(1);
  bool keepdim = a.to_bool(2);
  MaybeTensor mask = a.optional_tensor(4);
  at::Tensor total =
      masked_sum(input, dim, keepdim, dtype_or_input(a, 3, input), mask);
  return at::div(total, count(input, dim, keepdim, mask));
}

// median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
// nanmedian with masked-out elements as NaN.
IValue median(OpArgs& a) {
  at::Tensor input = a.tensor(0);
  c10::ScalarType dtype = dtype_or_input(a, 3, input);
  int64_t dim = canonical_dim(a.to_int(1), input.dim());
  bool floating = is_float(input);
  if (!floating) input = input.to(at::kFloat);
  at::Tensor x = combine(input, a.optional_tensor(4), Identity::kNan);
  at::Tensor out = std::get<0>(at::nanmedian(x, dim, a.to_bool(2)));
  if (floating) return out;
  if (at::isnan(out).any().item<bool>()) {
    throw FxError(
        "masked median expects no fully masked out rows if dtype is not "
        "floating point");
  }
  return out.to(dtype);
}

IValue logsumexp(OpArgs& a) {
  const at::Tensor& input = a.tensor(0);
  at::Tensor x = combine(input, a.optional_tensor(4), Identity::kLowest);
  return at::logsumexp(x, canonical_dims(a.optional_int_list(1), input.dim()),
                       a.to_bool(2))
      .to(dtype_or_input(a, 3, input));
}

// logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None)
IValue logaddexp(OpArgs& a) {
  const at::Tensor& input = a.tensor(0);
  at::Tensor x = combine(input, a.optional_tensor(3), Identity::kLowest);
  at::Tensor y = combine(a.tensor(1), a.optional_tensor(4), Identity::kLowest);
  return at::logaddexp(x, y).to(dtype_or_input(a, 2, input));
}

at::Tensor masked_norm(const at::Tensor& input, const at::Scalar& ord,
                       const Dims& dim, bool keepdim, c10::ScalarType dtype,
                       const MaybeTensor& mask) {
  bool minus_inf = ord.isFloatingPoint() &&
                   ord.toDouble() == -std::numeric_limits<double>::infinity();
  at::Tensor x =
      combine(input, mask, minus_inf ? Identity::kHighest : Identity::kZero);
  return at::linalg_vector_norm(x, ord, canonical_dims(dim, input.dim()),
                                keepdim, dtype);
}

// norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None)
IValue norm(OpArgs& a) {
  const at::Tensor& input = a.tensor(0);
  return masked_norm(input, a.scalar(1), a.optional_int_list(2), a.to_bool(3),
                     dtype_or_input(a, 4, input), a.optional_tensor(5));
}

// var / std(input, dim=None, unbiased=False, *, keepdim=False, dtype=None,
// mask=None): _std_var.
IValue std_var(OpArgs& a, bool take_sqrt) {
  const at::Tensor& input = a.tensor(0);
  Dims dim = a.optional_int_list(1);
  bool unbiased = a.to_bool(2), keepdim = a.to_bool(3);
  MaybeTensor mask = a.optional_tensor(5);
  c10::ScalarType dtype = dtype_or_input(a, 4, input);
  if (!a.optional_dtype(4) && !at::isFloatingType(dtype) &&
      !at::isComplexType(dtype)) {
    dtype = at::kFloat;
  }
  c10::ScalarType compute = dtype;
  if (!at::isFloatingType(compute) && !at::isComplexType(compute)) {
    compute = at::kFloat;
  }
  at::Tensor n = count(input, dim, true, mask);
  at::Tensor mean = at::div(masked_sum(input, dim, true, dtype, mask), n);
  at::Tensor x = at::sub(input, mean);
  at::Tensor total = masked_sum(x * x.conj(), dim, keepdim, compute, mask);
  if (!keepdim) n = n.reshape(total.sizes());
  if (unbiased) n = at::maximum(at::sub(n, 1), n.new_zeros({}));
  at::Tensor out = at::div(total, n).to(dtype);
  return take_sqrt ? at::sqrt(out) : out;
}

// softmax / log_softmax / softmin(input, dim, *, dtype=None, mask=None)
enum class Normalization { kSoftmax, kLogSoftmax, kSoftmin };

IValue softmax(OpArgs& a, Normalization kind) {
  const at::Tensor& input = a.tensor(0);
  c10::ScalarType dtype = dtype_or_input(a, 2, input);
  int64_t dim = canonical_dim(a.to_int(1), input.dim());
  Identity fill =
      kind == Normalization::kSoftmin ? Identity::kHighest : Identity::kLowest;
  at::Tensor x = combine(input, a.optional_tensor(3), fill);
  switch (kind) {
    case Normalization::kSoftmax:
      return at::softmax(x, dim, dtype);
    case Normalization::kLogSoftmax:
      return at::log_softmax(x, dim, dtype);
    case Normalization::kSoftmin:
      break;
  }
  return at::softmax(at::neg(x), dim, dtype);
}

// normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None)
IValue normalize(OpArgs& a) {
  const at::Tensor& input = a.tensor(0);
  c10::ScalarType dtype = dtype_or_input(a, 4, input);
  int64_t dim = a.to_int(2);
  canonical_dim(dim, input.dim());
  MaybeTensor mask = a.optional_tensor(5);
  at::Tensor x = combine(input, mask, Identity::kZero);
  at::Tensor norm = masked_norm(input, a.scalar(1), std::vector<int64_t>{dim},
                                true, dtype, mask);
  at::Tensor denom = at::maximum(norm, norm.new_full({}, a.to_double(3)));
  return at::div(x, denom);
}

}  // namespace

void register_masked_ops(OpRegistry& r) {
  auto add = [&r](std::string_view name, std::string_view signature,
                  OpKernel kernel) {
    r.add(Opcode::kCallFunction, cat("torch.masked._ops.", name), signature,
          std::move(kernel));
  };
  const char* reduction =
      "input, dim=None, *, keepdim=False, dtype=None, mask=None";
  add("sum", reduction, sum);
  add("prod", reduction, prod);
  add("amax", reduction, [](OpArgs& a) { return extremum(a, true); });
  add("amin", reduction, [](OpArgs& a) { return extremum(a, false); });
  add("argmax", reduction, [](OpArgs& a) { return arg_extremum(a, true); });
  add("argmin", reduction, [](OpArgs& a) { return arg_extremum(a, false); });
  add("mean", reduction, mean);
  add("logsumexp", reduction, logsumexp);
  add("median", "input, dim=-1, *, keepdim=False, dtype=None, mask=None",
      median);
  const char* scan = "input, dim, *, dtype=None, mask=None";
  add("cumsum", scan, [](OpArgs& a) { return cumulative(a, false); });
  add("cumprod", scan, [](OpArgs& a) { return cumulative(a, true); });
  add("softmax", scan,
      [](OpArgs& a) { return softmax(a, Normalization::kSoftmax); });
  add("log_softmax", scan,
      [](OpArgs& a) { return softmax(a, Normalization::kLogSoftmax); });
  add("softmin", scan,
      [](OpArgs& a) { return softmax(a, Normalization::kSoftmin); });
  add("logaddexp",
      "input, other, *, dtype=None, input_mask=None, other_mask=None",
      logaddexp);
  add("norm",
      "input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None",
      norm);
  const char* statistic =
      "input, dim=None, unbiased=False, *, keepdim=False, dtype=None, "
      "mask=None";
  add("var", statistic, [](OpArgs& a) { return std_var(a, false); });
  add("std", statistic, [](OpArgs& a) { return std_var(a, true); });
  add("normalize", "input, ord, dim, *, eps=1e-12, dtype=None, mask=None",
      normalize);
}

}  // namespace fx::ops
