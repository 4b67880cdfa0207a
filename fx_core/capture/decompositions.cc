#include "fx_core/capture/decompositions.h"

#include <ATen/ATen.h>

#include <cmath>
#include <functional>
#include <utility>

#include "fx_core/support/error.h"

namespace fx {

namespace {

using Values = std::vector<c10::IValue>;

// pw_cast_for_opmath (torch._decomp): a decomposition computing half and
// bfloat16 in float. Every tensor argument, in order, is converted with
// `x.to(torch.float32)` (recorded as _to_copy), `body` runs, and its results
// go back to the arguments' dtype; float and double run `body` as they are.
// Other dtypes decline (the operator is recorded whole).
Values with_opmath(const Values& args,
                   const std::function<Values(const Values&)>& body) {
  at::ScalarType dtype = at::ScalarType::Undefined;
  for (const c10::IValue& arg : args) {
    if (arg.isTensor()) {
      dtype = arg.toTensor().scalar_type();
      break;
    }
  }
  if (dtype == at::kFloat || dtype == at::kDouble) return body(args);
  if (dtype != at::kHalf && dtype != at::kBFloat16) return {};
  Values in = args;
  for (c10::IValue& arg : in) {
    if (arg.isTensor()) arg = arg.toTensor().to(at::kFloat);
  }
  Values out = body(in);
  for (c10::IValue& result : out) result = result.toTensor().to(dtype);
  return out;
}

// Python's ports of these compute half and bfloat16 in float through
// prims.convert_element_type, which LibTorch's C++ build does not have:
// they decline those dtypes (the operator is recorded whole).
bool needs_prims(const at::Tensor& t) {
  return t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16;
}

// Python's number arithmetic on two Scalars (int * int stays int).
c10::Scalar multiply(const c10::Scalar& a, const c10::Scalar& b) {
  if (a.isIntegral(false) && b.isIntegral(false))
    return a.toLong() * b.toLong();
  return a.toDouble() * b.toDouble();
}

Values addmm_opmath(const Values& args) {
  const at::Tensor& self = args[0].toTensor();
  c10::Scalar beta = args[3].toScalar(), alpha = args[4].toScalar();
  at::Tensor out = at::mul(at::mm(args[1].toTensor(), args[2].toTensor()),
                           alpha);  // alpha * torch.mm(mat1, mat2)
  if (beta.toDouble() == 0) return {out};
  return {at::add(at::mul(self, beta), out)};
}

Values addmm(const Values& args) { return with_opmath(args, addmm_opmath); }

Values gelu(const Values& args) {
  const at::Tensor& a = args[0].toTensor();
  if (needs_prims(a)) return {};
  const std::string approximate = args[1].toStringRef();
  if (approximate == "tanh") {
    const double k_beta = 1.41421356237309504880 * 1.12837916709551257390 * 0.5;
    at::Tensor a_cube = at::mul(at::mul(a, a), a);
    at::Tensor inner = at::mul(at::add(a, at::mul(a_cube, 0.044715)), k_beta);
    at::Tensor half = at::mul(a, 0.5);
    return {at::mul(half, at::add(at::tanh(inner), 1))};
  }
  const double k_alpha = 0.70710678118654752440;
  at::Tensor half = at::mul(a, 0.5);
  return {at::mul(half, at::add(at::erf(at::mul(a, k_alpha)), 1))};
}

Values silu_opmath(const Values& args) {
  const at::Tensor& self = args[0].toTensor();
  at::Tensor sigmoid = at::sigmoid(self);
  return {at::mul(self, sigmoid)};
}

Values hardtanh(const Values& args) {
  const at::Tensor& a = args[0].toTensor();
  if (needs_prims(a)) return {};
  c10::Scalar min_val = args[1].toScalar(), max_val = args[2].toScalar();
  if (at::isIntegralType(a.scalar_type(), /*includeBool=*/false)) {
    min_val = min_val.toLong();
    max_val = max_val.toLong();
  }
  return {at::clamp(a, min_val, max_val)};
}

// torch.clamp(torch.clamp(self + 3, min=0), max=6)
at::Tensor relu6_of_plus3(const at::Tensor& self) {
  at::Tensor low = at::clamp(at::add(self, 3), 0);
  return at::clamp(low, c10::nullopt, 6);
}

Values hardswish_opmath(const Values& args) {
  const at::Tensor& self = args[0].toTensor();
  at::Tensor clamped = relu6_of_plus3(self);
  return {at::div(at::mul(self, clamped), 6)};
}

Values hardsigmoid_opmath(const Values& args) {
  const at::Tensor& self = args[0].toTensor();
  return {at::div(relu6_of_plus3(self), 6)};
}

Values leaky_relu(const Values& args) {
  const at::Tensor& a = args[0].toTensor();
  if (needs_prims(a)) return {};
  at::Tensor positive = at::gt(a, 0);
  at::Tensor scaled = at::mul(a, args[1].toScalar());
  return {at::where(positive, a, scaled)};
}

Values elu_opmath(const Values& args) {
  const at::Tensor& self = args[0].toTensor();
  const c10::Scalar alpha = args[1].toScalar(), scale = args[2].toScalar(),
                    input_scale = args[3].toScalar();
  const c10::Scalar negcoef = multiply(alpha, scale);
  at::Tensor positive = at::gt(self, 0);
  at::Tensor pos = at::mul(self, scale);
  at::Tensor neg =
      at::mul(at::sub(at::exp(at::mul(self, input_scale)), 1), negcoef);
  return {at::where(positive, pos, neg)};
}

// _softmax / _log_softmax's dtypes: computed in float for reduced
// precision floats, returned in the input's dtype unless half_to_float.
at::ScalarType computation_dtype(const at::Tensor& x) {
  const auto t = x.scalar_type();
  return (t == at::kHalf || t == at::kBFloat16) ? at::kFloat : t;
}

Values softmax(const Values& args, bool log) {
  at::Tensor x = args[0].toTensor().contiguous();
  const int64_t dim = args[1].toInt();
  const bool half_to_float = args[2].toBool();
  const at::ScalarType result_dtype = x.scalar_type();
  x = x.to(computation_dtype(x));
  at::Tensor x_max = at::amax(x, {dim}, /*keepdim=*/true);
  at::Tensor result;
  if (log) {
    at::Tensor shifted = at::sub(x, x_max);
    at::Tensor logsumexp =
        at::log(at::sum(at::exp(shifted), {dim}, /*keepdim=*/true));
    result = at::sub(shifted, logsumexp);
  } else {
    at::Tensor unnormalized = at::exp(at::sub(x, x_max));
    result =
        at::div(unnormalized, at::sum(unnormalized, {dim}, /*keepdim=*/true));
  }
  if (!half_to_float) result = result.to(result_dtype);
  return {result};
}

Values t(const Values& args) {
  const at::Tensor& a = args[0].toTensor();
  if (a.dim() > 2) {
    throw FxError("t() expects a tensor with <= 2 dimensions, but self is " +
                  std::to_string(a.dim()) + "D");
  }
  return {at::transpose(a, 0, a.dim() < 2 ? 0 : 1)};
}

Values mish(const Values& args) {
  const at::Tensor& a = args[0].toTensor();
  if (needs_prims(a)) return {};
  at::Tensor softplus = at::softplus(a);
  return {at::mul(a, at::tanh(softplus))};
}

Values softplus(const Values& args) {
  const at::Tensor& a = args[0].toTensor();
  if (needs_prims(a)) return {};
  const c10::Scalar beta = args[1].toScalar(), threshold = args[2].toScalar();
  // Python's decomposition sees beta only when the call passed it: not
  // when it and threshold are trailing defaults (1, 20).
  const bool beta_given = !(beta.equal(1) && threshold.equal(20));
  at::Tensor scaled_input = a;
  at::Tensor rhs;
  if (beta_given) {
    scaled_input = at::mul(a, beta);
    rhs = at::div(at::log1p(at::exp(scaled_input)), beta);
  } else {
    rhs = at::log1p(at::exp(scaled_input));
  }
  return {at::where(at::gt(scaled_input, threshold), a, rhs)};
}

Values relu(const Values& args) {
  const at::Tensor& a = args[0].toTensor();
  if (needs_prims(a)) return {};
  at::Tensor negative = at::le(a, 0);
  return {at::where(negative, c10::Scalar(0), a)};
}

}  // namespace

DecompositionTable core_aten_decompositions() {
  return {
      {"aten::addmm", addmm},
      {"aten::gelu", gelu},
      {"aten::silu",
       [](const Values& a) { return with_opmath(a, silu_opmath); }},
      {"aten::hardtanh", hardtanh},
      {"aten::hardswish",
       [](const Values& a) { return with_opmath(a, hardswish_opmath); }},
      {"aten::hardsigmoid",
       [](const Values& a) { return with_opmath(a, hardsigmoid_opmath); }},
      {"aten::leaky_relu", leaky_relu},
      {"aten::elu", [](const Values& a) { return with_opmath(a, elu_opmath); }},
      {"aten::_softmax", [](const Values& a) { return softmax(a, false); }},
      {"aten::_log_softmax", [](const Values& a) { return softmax(a, true); }},
      {"aten::t", t},
      {"aten::mish", mish},
      {"aten::softplus", softplus},
      {"aten::relu", relu},
  };
}

DecompositionTable get_decompositions(const std::vector<std::string>& ops) {
  const DecompositionTable all = core_aten_decompositions();
  DecompositionTable table;
  for (const std::string& op : ops) {
    auto found = all.find(op);
    if (found == all.end()) {
      std::string names;
      for (const auto& [name, _] : all) names += " " + name;
      throw FxError("get_decompositions: no built-in decomposition of " + op +
                    "; the table has:" + names);
    }
    table.insert(*found);
  }
  return table;
}

}  // namespace fx
