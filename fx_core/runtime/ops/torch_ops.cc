// Built-in ops, part 2: the torch.* functions and Tensor methods that are
// still written by hand. Any other torch.NAME or Tensor method naming an ATen
// operator needs no entry: OpRegistry::resolve() binds it to LibTorch's
// schemas (fx_core/runtime/aten). An entry stays here only for a reason, given
// at each family:
//  - C++ spelling: `cpp` says how fx_core/cppgen writes the call (at::relu,
//    x.view(...)); some are also InferencePlan's direct kernels
//    (fx_core/compile/inference_plan.cc: add, sub, mul, div, relu, clamp,
//    sigmoid, tanh, neg) and torch.relu is on the 1k-op chain benchmark's hot
//    path;
//  - Python-level: Python's callable is a Python function or a hand-written
//    binding with no ATen operator behind its name (torch.split, Tensor.to,
//    Tensor.float, torch.tensor, torch._assert).
// Most are registered twice from one kernel: as `torch.NAME` (first parameter
// `input`) and as the method NAME (first parameter `self`), with the rest of
// the Python signature shared.
#include <ATen/ATen.h>

#include <optional>

#include "fx_core/runtime/ops/builtin_ops.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::ops {
namespace {

using c10::IValue;

IValue tuple_of(std::vector<at::Tensor> tensors) {
  std::vector<IValue> items(tensors.begin(), tensors.end());
  return make_tuple(std::move(items));
}

// Registers `torch.NAME(input, REST)` and, when `method`, `x.NAME(REST)`.
// `cpp` uses {input}/{self} interchangeably: both names map to the first
// parameter.
struct Both {
  OpRegistry& r;
  void operator()(const char* name, std::string_view rest, OpKernel kernel,
                  std::string_view cpp_function = {},
                  std::string_view cpp_method = {}, bool method = true) {
    std::string sep = rest.empty() ? "" : ", ";
    r.add(Opcode::kCallFunction, cat("torch.", name), cat("input", sep, rest),
          kernel, cpp_function);
    if (method) {
      r.add(Opcode::kCallMethod, name, cat("self", sep, rest), kernel,
            cpp_method);
    }
  }
};

// Unary elementwise functions: torch.NAME(input) and x.NAME().
#define FX_UNARY(NAME)                                                      \
  both(                                                                     \
      #NAME, "", [](OpArgs& a) -> IValue { return at::NAME(a.tensor(0)); }, \
      "at::" #NAME "({input})", "{self}." #NAME "()")

// Reductions over optional dims with keepdim and dtype.
IValue reduce(OpArgs& a, bool mean) {
  const at::Tensor& x = a.tensor(0);
  c10::optional<std::vector<int64_t>> dim = a.optional_int_list(1);
  bool keepdim = a.to_bool(2);
  c10::optional<c10::ScalarType> dtype = a.optional_dtype(3);
  if (!dim) {
    return mean ? at::mean(x, dtype) : at::sum(x, dtype);
  }
  return mean ? at::mean(x, *dim, keepdim, dtype)
              : at::sum(x, *dim, keepdim, dtype);
}

at::TensorOptions creation_options(OpArgs& a, size_t dtype, size_t device) {
  at::TensorOptions options;
  if (auto t = a.optional_dtype(dtype)) options = options.dtype(*t);
  if (!a.is_none(device)) {
    options =
        options.device(a[device].isString() ? c10::Device(a.to_string(device))
                                            : a[device].toDevice());
  }
  return options;
}

// x.to(...): dtype, device, another tensor, or keywords.
IValue tensor_to(OpArgs& a) {
  const at::Tensor& x = a.tensor(0);
  c10::optional<c10::ScalarType> dtype = a.optional_dtype(2);
  c10::optional<c10::Device> device;
  if (!a.is_none(3)) {
    device = a[3].isString() ? c10::Device(a.to_string(3)) : a[3].toDevice();
  }
  bool non_blocking = a.to_bool(4), copy = a.to_bool(5);
  // Python's overloads: to(device, dtype, non_blocking, copy),
  // to(dtype, non_blocking, copy), to(tensor, non_blocking, copy).
  int flags = 0;
  bool dtype_given = false;
  for (const IValue& v : sequence_elements(a[1])) {
    if (v.isBool() && flags < 2) {
      (flags++ == 0 ? non_blocking : copy) = v.toBool();
    } else if (v.isInt()) {
      if (dtype_given) {
        throw FxError(
            cat("to() received an invalid combination of arguments:"
                " a second dtype (",
                v.toInt(), "); Python's overloads take one"));
      }
      std::optional<c10::ScalarType> named = dtype_from_int(v.toInt());
      if (!named) {
        throw FxError(
            cat("to() received an invalid combination of arguments:"
                " the int ",
                v.toInt(), " names no dtype"));
      }
      dtype = *named;
      dtype_given = true;
    } else if (v.isDevice()) {
      device = v.toDevice();
    } else if (v.isString()) {
      device = c10::Device(v.toStringRef());
    } else if (v.isTensor()) {
      dtype = v.toTensor().scalar_type();
      device = v.toTensor().device();
    } else if (!v.isNone()) {
      throw FxError(cat("to() received an invalid argument of type ",
                        value_type_name(v)));
    }
  }
  auto memory_format = a.optional_memory_format(6);
  return x.to(x.options()
                  .dtype(dtype.value_or(x.scalar_type()))
                  .device(device.value_or(x.device())),
              non_blocking, copy, memory_format);
}

}  // namespace

void register_torch_ops(OpRegistry& r) {
  Both both{r};
  register_quantize_per_tensor(r);

  // C++ spelling. Elementwise (relu, add, sub, mul, div, clamp, sigmoid, tanh,
  // neg are also InferencePlan's direct kernels, which read these entries'
  // parameters: add's alpha, div's rounding_mode, clamp's bounds).
  FX_UNARY(relu);
  FX_UNARY(sigmoid);
  FX_UNARY(tanh);
  FX_UNARY(neg);
  FX_UNARY(abs);
  FX_UNARY(exp);
  FX_UNARY(log);
  FX_UNARY(sqrt);
  FX_UNARY(rsqrt);
  FX_UNARY(sin);
  FX_UNARY(cos);
  FX_UNARY(erf);
  FX_UNARY(floor);
  FX_UNARY(ceil);
  both(
      "round", "*, decimals=0",
      [](OpArgs& a) -> IValue {
        int64_t decimals = a.to_int(1);
        return decimals == 0 ? at::round(a.tensor(0))
                             : at::round(a.tensor(0), decimals);
      },
      "at::round({input}, {decimals})", "{self}.round({decimals})");
  FX_UNARY(sign);
  FX_UNARY(reciprocal);
  FX_UNARY(logical_not);
  FX_UNARY(isnan);
  FX_UNARY(square);
  FX_UNARY(t);
  both(
      "relu_", "",
      [](OpArgs& a) -> IValue {
        at::Tensor x = a.tensor(0);
        return at::relu_(x);
      },
      "at::relu_({input})", "{self}.relu_()");
  both(
      "add", "other, *, alpha=1",
      [](OpArgs& a) -> IValue {
        if (a[1].isTensor()) {
          return at::add(a.tensor(0), a.tensor(1), a.scalar(2));
        }
        return at::add(a.tensor(0), a.scalar(1), a.scalar(2));
      },
      "at::add({input}, {other}, {alpha})", "{self}.add({other}, {alpha})");
  both(
      "sub", "other, *, alpha=1",
      [](OpArgs& a) -> IValue {
        if (a[1].isTensor()) {
          return at::sub(a.tensor(0), a.tensor(1), a.scalar(2));
        }
        return at::sub(a.tensor(0), a.scalar(1), a.scalar(2));
      },
      "at::sub({input}, {other}, {alpha})", "{self}.sub({other}, {alpha})");
  both(
      "mul", "other",
      [](OpArgs& a) -> IValue {
        if (a[1].isTensor()) return at::mul(a.tensor(0), a.tensor(1));
        return at::mul(a.tensor(0), a.scalar(1));
      },
      "at::mul({input}, {other})", "{self}.mul({other})");
  both(
      "div", "other, *, rounding_mode=None",
      [](OpArgs& a) -> IValue {
        c10::optional<c10::string_view> mode;
        std::string m;
        if (!a.is_none(2)) {
          m = a.to_string(2);
          mode = m;
        }
        if (a[1].isTensor()) return at::div(a.tensor(0), a.tensor(1), mode);
        return at::div(a.tensor(0), a.scalar(1), mode);
      },
      "at::div({input}, {other})", "{self}.div({other})");
  both(
      "pow", "exponent",
      [](OpArgs& a) -> IValue {
        if (a[1].isTensor()) return at::pow(a.tensor(0), a.tensor(1));
        return at::pow(a.tensor(0), a.scalar(1));
      },
      "at::pow({input}, {exponent})", "{self}.pow({exponent})");
  both(
      "matmul", "other",
      [](OpArgs& a) -> IValue { return at::matmul(a.tensor(0), a.tensor(1)); },
      "at::matmul({input}, {other})", "{self}.matmul({other})");
  both(
      "mm", "mat2",
      [](OpArgs& a) -> IValue { return at::mm(a.tensor(0), a.tensor(1)); },
      "at::mm({input}, {mat2})", "{self}.mm({mat2})");
  both(
      "bmm", "mat2",
      [](OpArgs& a) -> IValue { return at::bmm(a.tensor(0), a.tensor(1)); },
      "at::bmm({input}, {mat2})", "{self}.bmm({mat2})");
  both(
      "addmm", "mat1, mat2, *, beta=1, alpha=1",
      [](OpArgs& a) -> IValue {
        return at::addmm(a.tensor(0), a.tensor(1), a.tensor(2), a.scalar(3),
                         a.scalar(4));
      },
      "at::addmm({input}, {mat1}, {mat2}, {beta}, {alpha})", {},
      /*method=*/false);  // Tensor.addmm: ATen
  both(
      "clamp", "min=None, max=None",
      [](OpArgs& a) -> IValue {
        if (a[1].isTensor() || a[2].isTensor()) {
          return at::clamp(a.tensor(0), a.optional_tensor(1),
                           a.optional_tensor(2));
        }
        return at::clamp(a.tensor(0), a.optional_scalar(1),
                         a.optional_scalar(2));
      },
      "at::clamp({input}, {min}, {max})", "{self}.clamp({min}, {max})");

  // C++ spelling. Reductions.
  both(
      "sum", "dim=None, keepdim=False, *, dtype=None",
      [](OpArgs& a) { return reduce(a, false); },
      "at::sum({input}, {dim:ints}, {keepdim})",
      "{self}.sum({dim:ints}, {keepdim})");
  both(
      "mean", "dim=None, keepdim=False, *, dtype=None",
      [](OpArgs& a) { return reduce(a, true); },
      "at::mean({input}, {dim:ints}, {keepdim})",
      "{self}.mean({dim:ints}, {keepdim})");
  both(
      "topk", "k, dim=-1, largest=True, sorted=True",
      [](OpArgs& a) -> IValue {
        auto [values, indices] = at::topk(a.tensor(0), a.to_int(1), a.to_int(2),
                                          a.to_bool(3), a.to_bool(4));
        return make_return_type("topk", {values, indices});
      },
      "at::topk({input}, {k}, {dim}, {largest}, {sorted})",
      "{self}.topk({k}, {dim}, {largest}, {sorted})");
  both(
      "softmax", "dim, dtype=None",
      [](OpArgs& a) -> IValue {
        return at::softmax(a.tensor(0), a.to_int(1), a.optional_dtype(2));
      },
      "at::softmax({input}, {dim})", "{self}.softmax({dim})");
  both(
      "log_softmax", "dim, dtype=None",
      [](OpArgs& a) -> IValue {
        return at::log_softmax(a.tensor(0), a.to_int(1), a.optional_dtype(2));
      },
      "at::log_softmax({input}, {dim})", "{self}.log_softmax({dim})");

  // C++ spelling. Shapes and views.
  both(
      "flatten", "start_dim=0, end_dim=-1",
      [](OpArgs& a) -> IValue {
        return at::flatten(a.tensor(0), a.to_int(1), a.to_int(2));
      },
      "at::flatten({input}, {start_dim}, {end_dim})",
      "{self}.flatten({start_dim}, {end_dim})");
  r.add(
      Opcode::kCallFunction, "torch.reshape", "input, shape",
      [](OpArgs& a) -> IValue {
        return at::reshape(a.tensor(0), a.int_list(1));
      },
      "at::reshape({input}, {shape:ints})");
  r.add(
      Opcode::kCallMethod, "reshape", "self, *shape",
      [](OpArgs& a) -> IValue { return a.tensor(0).reshape(a.int_list(1)); },
      "{self}.reshape({shape:ints})");
  r.add(
      Opcode::kCallMethod, "view", "self, *size",
      [](OpArgs& a) -> IValue {
        const std::vector<IValue> items = sequence_elements(a[1]);
        if (items.size() == 1 && items[0].isInt() == false &&
            !is_sequence(items[0])) {
          // x.view(dtype)
          return a.tensor(0).view(a.optional_dtype(1).value());
        }
        return a.tensor(0).view(a.int_list(1));
      },
      "{self}.view({size:ints})");
  r.add(
      Opcode::kCallFunction, "torch.permute", "input, dims",
      [](OpArgs& a) -> IValue {
        return at::permute(a.tensor(0), a.int_list(1));
      },
      "at::permute({input}, {dims:ints})");
  r.add(
      Opcode::kCallMethod, "permute", "self, *dims",
      [](OpArgs& a) -> IValue { return a.tensor(0).permute(a.int_list(1)); },
      "{self}.permute({dims:ints})");
  both(
      "transpose", "dim0, dim1",
      [](OpArgs& a) -> IValue {
        return at::transpose(a.tensor(0), a.to_int(1), a.to_int(2));
      },
      "at::transpose({input}, {dim0}, {dim1})",
      "{self}.transpose({dim0}, {dim1})");
  both(
      "unsqueeze", "dim",
      [](OpArgs& a) -> IValue {
        return at::unsqueeze(a.tensor(0), a.to_int(1));
      },
      "at::unsqueeze({input}, {dim})", "{self}.unsqueeze({dim})");
  // Python-level: torch.split is torch.functional.split and Tensor.split is
  // defined in torch/_tensor.py (an int or a list of sizes).
  auto split = [](OpArgs& a) -> IValue {
    if (a[1].isInt()) {
      return tuple_of(at::split(a.tensor(0), a.to_int(1), a.to_int(2)));
    }
    return tuple_of(
        at::split_with_sizes(a.tensor(0), a.int_list(1), a.to_int(2)));
  };
  r.add(Opcode::kCallMethod, "split", "self, split_size_or_sections, dim=0",
        split);
  // torch.split is torch.functional.split, whose first parameter is
  // `tensor`; torch.fx records it under that name. Also on the IR
  // benchmark's graph.
  for (const char* target : {"torch.split", "torch.functional.split"}) {
    r.add(Opcode::kCallFunction, target,
          "tensor, split_size_or_sections, dim=0", split);
  }
  // C++ spelling.
  r.add(
      Opcode::kCallFunction, "torch.cat", "tensors, dim=0",
      [](OpArgs& a) -> IValue {
        return at::cat(a.tensor_list(0), a.to_int(1));
      },
      "at::cat({tensors}, {dim})");
  r.add(
      Opcode::kCallFunction, "torch.stack", "tensors, dim=0",
      [](OpArgs& a) -> IValue {
        return at::stack(a.tensor_list(0), a.to_int(1));
      },
      "at::stack({tensors}, {dim})");

  // C++ spelling. Tensor-only methods.
  r.add(
      Opcode::kCallMethod, "size", "self, dim=None",
      [](OpArgs& a) -> IValue {
        if (a.is_none(1)) return make_torch_size(a.tensor(0).sizes());
        return a.tensor(0).size(a.to_int(1));
      },
      "{self}.size({dim})");
  r.add(
      Opcode::kCallMethod, "contiguous",
      "self, memory_format=torch.contiguous_format",
      [](OpArgs& a) -> IValue {
        return a.tensor(0).contiguous(*a.optional_memory_format(1));
      },
      "{self}.contiguous()");
  r.add(
      Opcode::kCallMethod, "clone", "self, *, memory_format=None",
      [](OpArgs& a) -> IValue {
        return a.tensor(0).clone(a.optional_memory_format(1));
      },
      "{self}.clone()");
  r.add(
      Opcode::kCallMethod, "detach", "self",
      [](OpArgs& a) -> IValue { return a.tensor(0).detach(); },
      "{self}.detach()");
  // Python-level: Tensor.to is a hand-written binding
  // (python_variable_methods.cpp: to(device), to(dtype), to(tensor),
  // positional non_blocking/copy, device strings), not ATen's `to` schemas.
  r.add(Opcode::kCallMethod, "to",
        "self, *args, dtype=None, device=None, non_blocking=False, "
        "copy=False, memory_format=None",
        tensor_to);
  // Python-level: Tensor.float() ... and tolist() are bindings with no ATen
  // operator (python_variable_methods.cpp).
  for (auto [name, type] :
       std::initializer_list<std::pair<const char*, c10::ScalarType>>{
           {"float", c10::kFloat},
           {"double", c10::kDouble},
           {"half", c10::kHalf},
           {"bfloat16", c10::kBFloat16},
           {"int", c10::kInt},
           {"long", c10::kLong},
           {"bool", c10::kBool},
           {"byte", c10::kByte},
           {"char", c10::kChar},
           {"short", c10::kShort},
           {"cfloat", c10::kComplexFloat},
           {"cdouble", c10::kComplexDouble}}) {
    r.add(Opcode::kCallMethod, name, "self, memory_format=None",
          [type = type](OpArgs& a) -> IValue {
            return a.tensor(0).to(type, /*non_blocking=*/false,
                                  /*copy=*/false, a.optional_memory_format(1));
          });
  }
  r.add(Opcode::kCallMethod, "tolist", "self", [](OpArgs& a) -> IValue {
    const at::Tensor& x = a.tensor(0);
    if (x.dim() != 1) throw FxError("tolist() supports 1-d tensors here");
    std::vector<IValue> items;
    for (int64_t i = 0; i < x.size(0); ++i) {
      at::Scalar s = x[i].item();
      items.push_back(s.isFloatingPoint() ? IValue(s.toDouble())
                                          : IValue(s.toLong()));
    }
    return make_list(std::move(items));
  });
  // Python-level: torch.tensor reads Python data (no ATen operator).
  r.add(Opcode::kCallFunction, "torch.tensor",
        "data, *, dtype=None, device=None, requires_grad=False",
        [](OpArgs& a) -> IValue {
          at::TensorOptions o = creation_options(a, 1, 2);
          if (a[0].isDouble()) return at::scalar_tensor(a.to_double(0), o);
          if (a[0].isInt()) {
            return at::scalar_tensor(a.to_int(0),
                                     o.has_dtype() ? o : o.dtype(at::kLong));
          }
          if (a[0].isDoubleList()) {
            return at::tensor(a[0].toDoubleVector(), o);
          }
          return at::tensor(a.int_list(0),
                            o.has_dtype() ? o : o.dtype(at::kLong));
        });

  // Python-level: torch._assert is a Python function. Side effects (kept by
  // dead code elimination).
  r.add(Opcode::kCallFunction, "torch._assert", "condition, message",
        [](OpArgs& a) -> IValue {
          bool ok = a[0].isTensor() ? a.tensor(0).item<bool>() : a.to_bool(0);
          if (!ok) throw FxError(a.to_string(1));
          return IValue();
        });
}

}  // namespace fx::ops
