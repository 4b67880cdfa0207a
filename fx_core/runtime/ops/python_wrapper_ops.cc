// Python functions over one ATen operator (torch.nn.functional's *_with_indices
// pools, unfold and fold; torch.functional.unique and unique_consecutive).
//
// Most are the operator under Python's own parameter names and defaults:
// they are bound by their Python signature and forwarded by keyword to the
// operator's schemas (fx_core/runtime/aten), so all that is written here is
// the signature and the renaming. unique and unique_consecutive choose which
// of the operator's three results to return, as torch/functional.py does.
#include <ATen/ATen.h>

#include <algorithm>
#include <memory>
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

std::shared_ptr<const AtenOp> aten_op(std::string_view name) {
  std::optional<AtenTarget> t =
      aten_target(Opcode::kCallFunction, cat("torch.ops.aten.", name));
  std::shared_ptr<const AtenOp> op = t ? AtenOp::find(*t) : nullptr;
  if (op == nullptr)
    throw FxError(cat("LibTorch has no operator aten::", name));
  return op;
}

void add_forward(OpRegistry& r, const Forward& f) {
  std::shared_ptr<const AtenOp> op = aten_op(f.aten);
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

}  // namespace

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
