// torch's Python-level functions over ATen (torch 1.13's torch/functional.py,
// torch/_lowrank.py and the Tensor methods torch/_tensor.py defines in
// Python): cdist, norm, lu, meshgrid, broadcast_shapes, stft, svd_lowrank,
// pca_lowrank; and torch.fx.experimental.merge_matmul's
// split_result_tensors, which graphs that pass made call.
//
// torch.fx records them under their Python names (torch.functional.norm,
// torch._lowrank.svd_lowrank; the methods as call_method "norm", "lu"). Each
// follows its Python source step for step: which ATen overload a given
// argument picks (norm's 'fro' / 'nuc' / number), the centring stft applies,
// the random basis svd_lowrank draws (torch.randn on the default generator,
// so a seeded run draws what Python draws).
#include <ATen/ATen.h>

#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fx_core/runtime/ops/builtin_ops.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::ops {
namespace {

using c10::IValue;
using Dims = c10::optional<std::vector<int64_t>>;

// cdist(x1, x2, p=2., compute_mode='use_mm_for_euclid_dist_if_necessary')
IValue cdist(OpArgs& a) {
  std::string mode = a.to_string(3);
  c10::optional<int64_t> mm;
  if (mode == "use_mm_for_euclid_dist") {
    mm = 1;
  } else if (mode == "donot_use_mm_for_euclid_dist") {
    mm = 2;
  } else if (mode != "use_mm_for_euclid_dist_if_necessary") {
    throw FxError(cat(mode, " is not a valid value for compute_mode"));
  }
  return at::cdist(a.tensor(0), a.tensor(1), a.to_double(2), mm);
}

std::vector<int64_t> all_dims(const at::Tensor& x) {
  std::vector<int64_t> dims(x.dim());
  std::iota(dims.begin(), dims.end(), 0);
  return dims;
}

// torch.functional.norm's choice of operator.
at::Tensor norm(const at::Tensor& x, const IValue& p, const Dims& dim,
                bool keepdim, c10::optional<c10::ScalarType> dtype) {
  if (!p.isString()) {
    c10::optional<at::Scalar> ord;
    if (!p.isNone()) ord = p.toScalar();
    std::vector<int64_t> dims = dim.value_or(all_dims(x));
    if (dtype) return at::norm(x, ord, dims, keepdim, *dtype);
    return at::norm(x, ord, dims, keepdim);
  }
  const std::string& kind = p.toStringRef();
  if (kind != "fro" && kind != "nuc") {
    throw FxError(
        cat("only valid string values are 'fro' and 'nuc', found ", kind));
  }
  if (dtype) {
    throw FxError(cat("dtype argument is not supported in ",
                      kind == "fro" ? "frobenius" : "nuclear", " norm"));
  }
  if (kind == "fro") {
    // Without dim Python passes dim=() (every dimension; out= aside, the
    // only case it spells differently).
    return at::frobenius_norm(x, dim.value_or(std::vector<int64_t>{}), keepdim);
  }
  if (!dim) return at::nuclear_norm(x, keepdim);
  return at::nuclear_norm(x, *dim, keepdim);
}

// norm(input, p='fro', dim=None, keepdim=False, out=None, dtype=None)
IValue norm_function(OpArgs& a) {
  if (!a.is_none(4)) throw FxError("norm: out= cannot be given in a graph");
  const at::Tensor& x = a.tensor(0);
  bool keepdim = a.to_bool(3);
  c10::optional<c10::ScalarType> dtype = a.optional_dtype(5);
  return norm(x, a[1], a.optional_int_list(2), keepdim, dtype);
}

// Tensor.norm(self, p='fro', dim=None, keepdim=False, dtype=None)
IValue norm_method(OpArgs& a) {
  return norm(a.tensor(0), a[1], a.optional_int_list(2), a.to_bool(3),
              a.optional_dtype(4));
}

// torch.functional.lu(A, pivot=True, get_infos=False): (LU, pivots[,
// infos]); Tensor.lu (torch/_tensor.py) unpacks the result and always
// returns a plain tuple.
IValue lu_call(OpArgs& a, bool method) {
  if (a.size() > 3 && !a.is_none(3)) {
    throw FxError("lu: out= cannot be given in a graph");
  }
  bool get_infos = a.to_bool(2);
  auto [factors, pivots, infos] =
      at::_lu_with_info(a.tensor(0), a.to_bool(1), !get_infos);
  // _lu_with_infos returns torch._lu_with_info's named tuple as it is;
  // _lu_no_infos builds a plain tuple of its first two items.
  if (!get_infos) return make_tuple({factors, pivots});
  if (method) return make_tuple({factors, pivots, infos});
  return make_return_type("_lu_with_info", {factors, pivots, infos});
}

IValue lu(OpArgs& a) { return lu_call(a, false); }
IValue lu_method(OpArgs& a) { return lu_call(a, true); }

// meshgrid(*tensors, indexing=None): one list or tuple argument is unpacked.
IValue meshgrid(OpArgs& a) {
  std::vector<IValue> args = sequence_elements(a[0]);
  if (args.size() == 1 && is_sequence(args[0])) {
    args = sequence_elements(args[0]);
  }
  std::vector<at::Tensor> tensors;
  for (const IValue& t : args) tensors.push_back(t.toTensor());
  std::vector<at::Tensor> grids = a.is_none(1)
                                      ? at::meshgrid(tensors)
                                      : at::meshgrid(tensors, a.to_string(1));
  return make_tuple(std::vector<IValue>(grids.begin(), grids.end()));
}

// broadcast_shapes(*shapes): torch.Size.
IValue broadcast_shapes(OpArgs& a) {
  std::vector<std::vector<int64_t>> shapes;
  size_t rank = 0;
  for (const IValue& s : sequence_elements(a[0])) {
    if (s.isInt()) {
      shapes.push_back({s.toInt()});
    } else if (is_sequence(s)) {
      std::vector<int64_t> shape;
      for (const IValue& d : sequence_elements(s)) shape.push_back(d.toInt());
      shapes.push_back(std::move(shape));
    } else {
      throw FxError(
          "Input shapes should be of type ints, a tuple of ints, or a list of "
          "ints");
    }
    rank = std::max(rank, shapes.back().size());
  }
  std::vector<int64_t> result(rank, 1);
  for (const std::vector<int64_t>& shape : shapes) {
    for (size_t i = 1; i <= shape.size(); ++i) {
      int64_t d = shape[shape.size() - i];
      int64_t& r = result[rank - i];
      if (d < 0) {
        throw FxError(cat("Trying to create tensor with negative dimension (",
                          d, "): (", d, ")"));
      }
      if (d == 1 || d == r) continue;
      if (r != 1) {
        throw FxError(
            "Shape mismatch: objects cannot be broadcast to a single shape");
      }
      r = d;
    }
  }
  return make_torch_size(result);
}

// stft(input, n_fft, hop_length=None, win_length=None, window=None,
// center=True, pad_mode='reflect', normalized=False, onesided=None,
// return_complex=None)
IValue stft(OpArgs& a) {
  at::Tensor input = a.tensor(0);
  int64_t n_fft = a.to_int(1);
  if (a.to_bool(5)) {
    int64_t signal_dim = input.dim();
    std::vector<int64_t> extended(3 - signal_dim, 1);
    for (int64_t s : input.sizes()) extended.push_back(s);
    int64_t pad = n_fft / 2;
    input = at::pad(input.view(extended), {pad, pad}, a.to_string(6));
    input = input.view(input.sizes().slice(input.dim() - signal_dim));
  }
  c10::optional<bool> onesided, return_complex;
  if (!a.is_none(8)) onesided = a.to_bool(8);
  if (!a.is_none(9)) return_complex = a.to_bool(9);
  return at::stft(input, n_fft, a.optional_int(2), a.optional_int(3),
                  a.optional_tensor(4), a.to_bool(7), onesided, return_complex);
}

// The tensors of a var-positional parameter (one list or tuple argument is
// the list itself).
std::vector<at::Tensor> tensors_of(const IValue& args) {
  std::vector<IValue> items = sequence_elements(args);
  if (items.size() == 1 && is_sequence(items[0])) {
    items = sequence_elements(items[0]);
  }
  std::vector<at::Tensor> out;
  for (const IValue& t : items) out.push_back(t.toTensor());
  return out;
}

IValue tuple_of(const std::vector<at::Tensor>& tensors) {
  return make_tuple(std::vector<IValue>(tensors.begin(), tensors.end()));
}

// atleast_Nd(*tensors): one tensor gives a tensor, several a tuple.
IValue atleast(OpArgs& a, int n) {
  std::vector<IValue> items = sequence_elements(a[0]);
  auto one = [n](const at::Tensor& t) {
    return n == 1   ? at::atleast_1d(t)
           : n == 2 ? at::atleast_2d(t)
                    : at::atleast_3d(t);
  };
  if (items.size() == 1 && items[0].isTensor()) return one(items[0].toTensor());
  std::vector<at::Tensor> out;
  for (const at::Tensor& t : tensors_of(a[0])) out.push_back(one(t));
  return tuple_of(out);
}

// tensordot(a, b, dims=2, out=None)
IValue tensordot(OpArgs& a) {
  if (!a.is_none(3))
    throw FxError("tensordot: out= cannot be given in a graph");
  std::vector<int64_t> dims_a, dims_b;
  const IValue& dims = a[2];
  if (dims.isInt() || (dims.isTensor() && dims.toTensor().numel() <= 1)) {
    int64_t n = dims.isInt() ? dims.toInt() : dims.toTensor().item<int64_t>();
    if (n < 0) {
      throw FxError(cat("tensordot expects dims >= 0, but got dims=", n));
    }
    for (int64_t i = -n; i < 0; ++i) dims_a.push_back(i);
    for (int64_t i = 0; i < n; ++i) dims_b.push_back(i);
  } else if (dims.isTensor()) {
    const at::Tensor& t = dims.toTensor();
    for (int64_t i = 0; i < t.size(1); ++i) {
      dims_a.push_back(t[0][i].item<int64_t>());
      dims_b.push_back(t[1][i].item<int64_t>());
    }
  } else if (is_sequence(dims) && sequence_elements(dims).size() == 2) {
    std::vector<IValue> pair = sequence_elements(dims);
    auto ints = [](const IValue& v) {
      std::vector<int64_t> out;
      if (v.isInt()) return std::vector<int64_t>{v.toInt()};
      for (const IValue& d : sequence_elements(v)) out.push_back(d.toInt());
      return out;
    };
    dims_a = ints(pair[0]);
    dims_b = ints(pair[1]);
  } else {
    throw FxError(
        "tensordot expects dims to be int or Tuple[List[int], List[int]] or "
        "List[List[int]] containing two lists");
  }
  return at::tensordot(a.tensor(0), a.tensor(1), dims_a, dims_b);
}

// torch/_linalg_utils.py's helpers, for dense tensors.
at::Tensor transpose(const at::Tensor& x) { return x.transpose(-2, -1); }
at::Tensor conjugate(const at::Tensor& x) {
  return x.is_complex() ? x.conj() : x;
}
c10::ScalarType floating_dtype(const at::Tensor& x) {
  return x.is_floating_point() || x.is_complex() ? x.scalar_type() : at::kFloat;
}
at::Tensor qr_q(const at::Tensor& x) { return std::get<0>(at::linalg_qr(x)); }

// A - M, or A when there is no M.
at::Tensor minus(const at::Tensor& a, const c10::optional<at::Tensor>& m,
                 const at::Tensor& by) {
  at::Tensor out = at::matmul(a, by);
  return m ? out - at::matmul(*m, by) : out;
}

// get_approximate_basis(A, q, niter=2, M=None)
at::Tensor approximate_basis(const at::Tensor& A, int64_t q, int64_t niter,
                             const c10::optional<at::Tensor>& M) {
  int64_t n = A.size(-1);
  at::Tensor R = at::randn({n, q}, A.options().dtype(floating_dtype(A)));
  at::Tensor A_H = conjugate(transpose(A));
  c10::optional<at::Tensor> M_H;
  if (M) M_H = conjugate(transpose(*M));
  at::Tensor Q = qr_q(minus(A, M, R));
  for (int64_t i = 0; i < niter; ++i) {
    Q = qr_q(minus(A_H, M_H, Q));
    Q = qr_q(minus(A, M, Q));
  }
  return Q;
}

// _svd_lowrank(A, q=6, niter=2, M=None)
IValue svd_lowrank(const at::Tensor& A, int64_t q, int64_t niter,
                   const c10::optional<at::Tensor>& M) {
  int64_t m = A.size(-2), n = A.size(-1);
  c10::optional<at::Tensor> M_t;
  if (M) M_t = transpose(*M);
  at::Tensor A_t = transpose(A);
  if (m < n || n > q) {
    at::Tensor Q = approximate_basis(A_t, q, niter, M_t);
    at::Tensor B_t = minus(A, M, conjugate(Q));
    auto [U, S, Vh] = at::linalg_svd(B_t, false);
    return make_tuple({U, S, Q.matmul(Vh.mH())});
  }
  at::Tensor Q = approximate_basis(A, q, niter, M);
  at::Tensor B_t = transpose(minus(A_t, M_t, conjugate(Q)));
  auto [U, S, Vh] = at::linalg_svd(B_t, false);
  return make_tuple({Q.matmul(U), S, Vh.mH()});
}

// svd_lowrank(A, q=6, niter=2, M=None)
IValue svd_lowrank_function(OpArgs& a) {
  return svd_lowrank(a.tensor(0), a.optional_int(1).value_or(6),
                     a.optional_int(2).value_or(2), a.optional_tensor(3));
}

// pca_lowrank(A, q=None, center=True, niter=2), for dense A.
IValue pca_lowrank(OpArgs& a) {
  const at::Tensor& A = a.tensor(0);
  int64_t m = A.size(-2), n = A.size(-1);
  int64_t q = std::min<int64_t>({6, m, n});
  if (!a.is_none(1)) {
    q = a.to_int(1);
    if (q < 0 || q > std::min(m, n)) {
      throw FxError(cat("q(=", q,
                        ") must be non-negative integer and not greater than "
                        "min(m, n)=",
                        std::min(m, n)));
    }
  }
  int64_t niter = a.to_int(3);
  if (niter < 0) {
    throw FxError(cat("niter(=", niter, ") must be non-negative integer"));
  }
  if (!a.to_bool(2)) return svd_lowrank(A, q, niter, c10::nullopt);
  at::Tensor C = A.mean({-2}, true);
  return svd_lowrank(A - C, q, niter, c10::nullopt);
}

// merge_matmul's split of a merged product: torch.split(result,
// [x.shape[0] for x in inputs]).
IValue split_result_tensors(OpArgs& a) {
  std::vector<at::Tensor> inputs = tensors_of(a[1]);
  std::vector<int64_t> rows;
  rows.reserve(inputs.size());
  for (const at::Tensor& x : inputs) {
    if (x.dim() == 0) {
      throw FxError(
          "split_result_tensors: an input is a 0-d tensor (it has "
          "no shape[0])");
    }
    rows.push_back(x.size(0));
  }
  return tuple_of(at::split_with_sizes(a.tensor(0), rows));
}

}  // namespace

void register_torch_functional_ops(OpRegistry& r) {
  auto function = [&r](const char* target, const char* signature,
                       OpKernel kernel) {
    r.add(Opcode::kCallFunction, target, signature, std::move(kernel));
  };
  function("torch.functional.cdist",
           "x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary'",
           cdist);
  // torch.norm and torch.broadcast_tensors are these Python functions too
  // (torch/__init__.py imports them from torch.functional), not the ATen
  // operators of the same names: norm's 'fro' / 'nuc', broadcast_tensors'
  // *tensors.
  for (const char* target : {"torch.functional.norm", "torch.norm"}) {
    function(target,
             "input, p='fro', dim=None, keepdim=False, out=None, dtype=None",
             norm_function);
  }
  r.add(Opcode::kCallMethod, "norm",
        "self, p='fro', dim=None, keepdim=False, dtype=None", norm_method);
  function("torch.functional.lu", "A, pivot=True, get_infos=False, out=None",
           lu);
  r.add(Opcode::kCallMethod, "lu", "self, pivot=True, get_infos=False",
        lu_method);
  function("torch.functional.meshgrid", "*tensors, indexing=None", meshgrid);
  function("torch.functional.broadcast_shapes", "*shapes", broadcast_shapes);
  function("torch.functional.stft",
           "input, n_fft, hop_length=None, win_length=None, window=None, "
           "center=True, pad_mode='reflect', normalized=False, onesided=None, "
           "return_complex=None",
           stft);
  r.add(Opcode::kCallMethod, "stft",
        "self, n_fft, hop_length=None, win_length=None, window=None, "
        "center=True, pad_mode='reflect', normalized=False, onesided=None, "
        "return_complex=None",
        stft);
  for (int n : {1, 2, 3}) {
    function(cat("torch.functional.atleast_", n, "d").c_str(), "*tensors",
             [n](OpArgs& a) { return atleast(a, n); });
  }
  function("torch.functional.block_diag", "*tensors", [](OpArgs& a) -> IValue {
    return at::block_diag(tensors_of(a[0]));
  });
  function(
      "torch.functional.cartesian_prod", "*tensors",
      [](OpArgs& a) -> IValue { return at::cartesian_prod(tensors_of(a[0])); });
  for (const char* target :
       {"torch.functional.broadcast_tensors", "torch.broadcast_tensors"}) {
    function(target, "*tensors", [](OpArgs& a) -> IValue {
      return tuple_of(at::broadcast_tensors(tensors_of(a[0])));
    });
  }
  function("torch.functional.tensordot", "a, b, dims=2, out=None", tensordot);
  function("torch._lowrank.svd_lowrank", "A, q=6, niter=2, M=None",
           svd_lowrank_function);
  function("torch._lowrank.pca_lowrank", "A, q=None, center=True, niter=2",
           pca_lowrank);
  function("torch.fx.experimental.merge_matmul.split_result_tensors",
           "result, inputs", split_result_tensors);
}

}  // namespace fx::ops
