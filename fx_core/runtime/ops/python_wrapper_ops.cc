// Python functions over one ATen operator (torch.nn.functional's *_with_indices
// pools, unfold and fold, max_unpoolNd, gaussian_nll_loss;
// torch.functional.unique, unique_consecutive and einsum; nonzero's
// as_tuple=).
//
// Most are the operator under Python's own parameter names and defaults:
// they are bound by their Python signature and forwarded by keyword to the
// operator's schemas (fx_core/runtime/aten), so all that is written here is
// the signature and the renaming. The others follow their Python source
// (torch 1.13's torch/functional.py and torch/nn/functional.py) step for
// step: which of unique's three results to return, max_unpool's output size,
// gaussian_nll_loss's checks and clamping.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "fx_core/runtime/aten/aten_op.h"
#include "fx_core/runtime/aten/aten_target.h"
#include "fx_core/runtime/ops/builtin_ops.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::ops {
namespace {

using c10::IValue;

// A Python function that is `aten` with `dropped` Python-only parameters.
// Parameters given None are left out, so the operator's default applies.
struct Forward {
  std::string_view target;
  std::string_view signature;
  std::string_view aten;  // "max_pool2d_with_indices"
  std::vector<std::string_view> dropped;
};

void add_forward(OpRegistry& r, const Forward& f) {
  AtenOperator op{std::string(f.aten)};
  std::vector<std::string> dropped(f.dropped.begin(), f.dropped.end());
  r.add(Opcode::kCallFunction, f.target, f.signature,
        [op, dropped](OpArgs& a) -> IValue {
          AtenOp::Kwargs kwargs;
          for (size_t i = 0; i < a.size(); ++i) {
            const std::string& name = a.param_name(i);
            if (a.is_none(i) || std::find(dropped.begin(), dropped.end(),
                                          name) != dropped.end()) {
              continue;
            }
            kwargs.emplace_back(name, a[i]);
          }
          return op->call({}, kwargs);
        });
}

// torch/functional.py's choice among (output, inverse, counts).
IValue select_results(const std::tuple<at::Tensor, at::Tensor, at::Tensor>& r,
                      bool return_inverse, bool return_counts) {
  if (!return_inverse && !return_counts) return std::get<0>(r);
  std::vector<IValue> out = {std::get<0>(r)};
  if (return_inverse) out.emplace_back(std::get<1>(r));
  if (return_counts) out.emplace_back(std::get<2>(r));
  return make_tuple(std::move(out));
}

// unique(input, sorted=True, return_inverse=False, return_counts=False,
// dim=None)
IValue unique(OpArgs& a) {
  const at::Tensor& x = a.tensor(0);
  bool sorted = a.to_bool(1), inverse = a.to_bool(2), counts = a.to_bool(3);
  if (c10::optional<int64_t> dim = a.optional_int(4)) {
    return select_results(at::unique_dim(x, *dim, sorted, inverse, counts),
                          inverse, counts);
  }
  return select_results(at::_unique2(x, sorted, inverse, counts), inverse,
                        counts);
}

// unique_consecutive(input, return_inverse=False, return_counts=False,
// dim=None)
IValue unique_consecutive(OpArgs& a) {
  bool inverse = a.to_bool(1), counts = a.to_bool(2);
  return select_results(
      at::unique_consecutive(a.tensor(0), inverse, counts, a.optional_int(3)),
      inverse, counts);
}

// _single / _pair / _triple: an int repeated n times, or n ints.
std::vector<int64_t> n_tuple(OpArgs& a, size_t i, size_t n) {
  std::vector<int64_t> v = a.int_list(i);
  if (v.size() == 1) v.assign(n, v[0]);
  return v;
}

// torch/nn/functional.py's _unpool_output_size.
std::vector<int64_t> unpool_output_size(
    const at::Tensor& input, const std::vector<int64_t>& kernel,
    const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
    c10::optional<std::vector<int64_t>> given) {
  size_t n = kernel.size();
  std::vector<int64_t> size;
  for (size_t d = 0; d < n; ++d) {
    size.push_back((input.size(-static_cast<int64_t>(n) + d) - 1) * stride[d] +
                   kernel[d] - 2 * padding[d]);
  }
  if (!given) return size;
  std::vector<int64_t> out = *given;
  if (out.size() == n + 2) out.erase(out.begin(), out.begin() + 2);
  if (out.size() != n) {
    throw FxError(cat("output_size should be a sequence containing ", n, " or ",
                      n + 2, " elements, but it has a length of '", out.size(),
                      "'"));
  }
  for (size_t d = 0; d < n; ++d) {
    if (!(size[d] - stride[d] < out[d] && out[d] < size[d] + stride[d])) {
      throw FxError(cat("invalid output_size (dim ", d, " must be between ",
                        size[d] - stride[d], " and ", size[d] + stride[d],
                        ")"));
    }
  }
  return out;
}

// max_unpoolNd(input, indices, kernel_size, stride=None, padding=0,
// output_size=None); 1d runs the 2d operator on a trailing unit dimension.
IValue max_unpool(OpArgs& a, size_t n) {
  const at::Tensor& input = a.tensor(0);
  const at::Tensor& indices = a.tensor(1);
  std::vector<int64_t> kernel = n_tuple(a, 2, n);
  std::vector<int64_t> stride = a.is_none(3) ? kernel : n_tuple(a, 3, n);
  std::vector<int64_t> padding = n_tuple(a, 4, n);
  std::vector<int64_t> size = unpool_output_size(input, kernel, stride, padding,
                                                 a.optional_int_list(5));
  if (n == 1) {
    size.push_back(1);
    return at::max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), size)
        .squeeze(-1);
  }
  if (n == 2) return at::max_unpool2d(input, indices, size);
  return at::max_unpool3d(input, indices, size, stride, padding);
}

// gaussian_nll_loss(input, target, var, full=False, eps=1e-06,
// reduction='mean')
IValue gaussian_nll_loss(OpArgs& a) {
  const at::Tensor& input = a.tensor(0);
  at::Tensor var = a.tensor(2);
  if (var.sizes() != input.sizes()) {
    auto leading =
        input.sizes().slice(0, std::max<int64_t>(input.dim() - 1, 0));
    if (leading == var.sizes()) {
      var = var.unsqueeze(-1);
    } else if (var.dim() == 0 || var.size(-1) != 1 ||
               leading != var.sizes().slice(0, var.dim() - 1)) {
      throw FxError("var is of incorrect size");
    }
  }
  std::string reduction = a.to_string(5);
  if (reduction != "none" && reduction != "mean" && reduction != "sum") {
    throw FxError(cat(reduction, " is not valid"));
  }
  if (at::any(var < 0).item<bool>()) {
    throw FxError("var has negative entry/entries");
  }
  var = var.clone();
  {
    at::NoGradGuard no_grad;
    var.clamp_min_(a.to_double(4));
  }
  at::Tensor loss =
      (at::log(var) + (input - a.tensor(1)).pow(2) / var).mul(0.5);
  if (a.to_bool(3)) loss.add_(0.5 * std::log(2 * M_PI));
  if (reduction == "mean") return loss.mean();
  if (reduction == "sum") return loss.sum();
  return loss;
}

// nonzero(input, *, as_tuple=False): as_tuple is Python's, nonzero_numpy.
IValue nonzero(OpArgs& a) {
  if (a.to_bool(1)) {
    std::vector<at::Tensor> parts = at::nonzero_numpy(a.tensor(0));
    return make_tuple(std::vector<IValue>(parts.begin(), parts.end()));
  }
  return at::nonzero(a.tensor(0));
}

// torch/functional.py's einsum sublist format: operand, subscripts, ...,
// [output subscripts], with 0..51 for A..Z, a..z and Ellipsis for '...'.
std::string subscripts(const IValue& list) {
  std::string out;
  for (const IValue& s : sequence_elements(list)) {
    if (is_ellipsis(s)) {
      out += "...";
      continue;
    }
    int64_t n = s.toInt();
    if (n < 0 || n >= 52) {
      throw FxError(
          "einsum(): subscript in subscript list is not within the valid "
          "range [0, 52)");
    }
    out += static_cast<char>(n < 26 ? 'A' + n : 'a' + n - 26);
  }
  return out;
}

// einsum(*args): (equation, *operands), (equation, [operands]), or the
// sublist format.
IValue einsum(OpArgs& a) {
  std::vector<IValue> args = sequence_elements(a[0]);
  if (args.size() < 2) {
    throw FxError(
        "einsum(): must specify the equation string and at least one "
        "operand, or at least one operand and its subscripts list");
  }
  std::string equation;
  std::vector<at::Tensor> operands;
  if (args[0].isTensor()) {
    std::vector<std::string> inputs;
    for (size_t i = 0; i + 1 < args.size(); i += 2) {
      operands.push_back(args[i].toTensor());
      inputs.push_back(subscripts(args[i + 1]));
    }
    equation = join(inputs, ",");
    if (args.size() % 2 == 1) append(&equation, "->", subscripts(args.back()));
  } else {
    equation = args[0].toStringRef();
    std::vector<IValue> rest(args.begin() + 1, args.end());
    if (rest.size() == 1 && is_sequence(rest[0])) {
      rest = sequence_elements(rest[0]);
    }
    for (const IValue& t : rest) operands.push_back(t.toTensor());
  }
  return at::einsum(equation, operands);
}

}  // namespace

struct AtenOperator::State {
  std::string name;
  std::once_flag once;
  std::shared_ptr<const AtenOp> op;
};

AtenOperator::AtenOperator(std::string name)
    : state_(std::make_shared<State>()) {
  state_->name = std::move(name);
}

const AtenOp& AtenOperator::operator*() const {
  State& s = *state_;
  // A throwing lookup leaves the flag unset: each use says so again.
  std::call_once(s.once, [&s] {
    std::optional<AtenTarget> t =
        aten_target(Opcode::kCallFunction, cat("torch.ops.aten.", s.name));
    std::shared_ptr<const AtenOp> op = t ? AtenOp::find(*t) : nullptr;
    if (op == nullptr) {
      throw FxError(cat("LibTorch has no operator aten::", s.name));
    }
    s.op = std::move(op);
  });
  return *s.op;
}

void register_python_wrapper_ops(OpRegistry& r) {
  const std::string pool =
      "input, kernel_size, stride=None, padding=0, dilation=1, "
      "ceil_mode=False, return_indices=False";
  for (std::string_view n : {"1", "2", "3"}) {
    std::string name = cat("max_pool", n, "d_with_indices");
    add_forward(
        r, {cat("torch.nn.functional.", name), pool, name, {"return_indices"}});
  }
  add_forward(r, {"torch.nn.functional.unfold",
                  "input, kernel_size, dilation=1, padding=0, stride=1",
                  "im2col",
                  {}});
  add_forward(r, {"torch.nn.functional.fold",
                  "input, output_size, kernel_size, dilation=1, padding=0, "
                  "stride=1",
                  "col2im",
                  {}});
  const char* unpool =
      "input, indices, kernel_size, stride=None, padding=0, output_size=None";
  for (size_t n : {1, 2, 3}) {
    r.add(Opcode::kCallFunction, cat("torch.nn.functional.max_unpool", n, "d"),
          unpool, [n](OpArgs& a) { return max_unpool(a, n); });
  }
  r.add(Opcode::kCallFunction, "torch.nn.functional.gaussian_nll_loss",
        "input, target, var, full=False, eps=1e-06, reduction='mean'",
        gaussian_nll_loss);
  // Semantics differ: as_tuple= is Python's binding, not aten::nonzero's
  // schema, so these stay although the ATen operator has the same name.
  r.add(Opcode::kCallFunction, "torch.nonzero", "input, *, as_tuple=False",
        nonzero);
  r.add(Opcode::kCallMethod, "nonzero", "self, *, as_tuple=False", nonzero);
  r.add(Opcode::kCallFunction, "torch.functional.einsum", "*args", einsum);
  const char* unique_args =
      "sorted=True, return_inverse=False, return_counts=False, dim=None";
  r.add(Opcode::kCallFunction, "torch.functional.unique",
        cat("input, ", unique_args), unique);
  r.add(Opcode::kCallMethod, "unique", cat("self, ", unique_args), unique);
  const char* consecutive_args =
      "return_inverse=False, return_counts=False, dim=None";
  r.add(Opcode::kCallFunction, "torch.functional.unique_consecutive",
        cat("input, ", consecutive_args), unique_consecutive);
  r.add(Opcode::kCallMethod, "unique_consecutive",
        cat("self, ", consecutive_args), unique_consecutive);
}

}  // namespace fx::ops
