#include "host/pipeline/tensor_meta_check.h"

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/meta_execution.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/strings.h"

namespace fx::host {
namespace {

// What a tensor_meta records that this check compares.
struct Recorded {
  std::vector<int64_t> shape;
  c10::ScalarType dtype;
};

// A tensor's tensor_meta (a dict with shape and dtype), else nullopt.
std::optional<Recorded> recorded(const Node& node) {
  const Argument* meta = node.meta_value("tensor_meta");
  if (meta == nullptr || !meta->is_dict()) return std::nullopt;
  const Argument* shape = meta->find("shape");
  const Argument* dtype = meta->find("dtype");
  if (shape == nullptr || dtype == nullptr || !shape->is_sequence()) {
    return std::nullopt;
  }
  std::optional<c10::ScalarType> type = parse_dtype(dtype->as_string());
  if (!type) return std::nullopt;
  Recorded r{{}, *type};
  for (const Argument& d : shape->elements()) {
    // Symbolic sizes are expressions, not checked here (symbolic shape
    // propagation checks them against the kernels at the hints).
    if (!d.is_int()) return std::nullopt;
    r.shape.push_back(d.as_int());
  }
  return r;
}

std::string describe(at::IntArrayRef shape, c10::ScalarType dtype) {
  std::vector<std::string> dims;
  for (int64_t d : shape) dims.push_back(std::to_string(d));
  return cat("[", join(dims, ", "), "] ", dtype_name(dtype));
}

// Meta tensors for the placeholders, from their tensor_meta; nullopt when
// one has none.
std::optional<std::vector<c10::IValue>> placeholder_inputs(const Graph& g) {
  std::vector<c10::IValue> inputs;
  for (const Node* n : g.nodes()) {
    if (n->op() != Opcode::kPlaceholder) continue;
    std::optional<Recorded> r = recorded(*n);
    if (!r) return std::nullopt;
    inputs.emplace_back(at::empty(
        r->shape, at::TensorOptions().dtype(r->dtype).device(at::kMeta)));
  }
  return inputs;
}

}  // namespace

absl::Status check_tensor_meta_current(GraphModule& module) {
  std::optional<std::vector<c10::IValue>> inputs =
      placeholder_inputs(module.graph());
  if (!inputs) return absl::OkStatus();
  std::string mismatch;
  try {
    run_and_report(module, *std::move(inputs), ExecutionMode::kMeta,
                   [&](const Node& n, const c10::IValue& v) {
                     if (!mismatch.empty() || !v.isTensor()) return;
                     std::optional<Recorded> r = recorded(n);
                     const at::Tensor& t = v.toTensor();
                     if (r && (t.sizes() != at::IntArrayRef(r->shape) ||
                               t.scalar_type() != r->dtype)) {
                       mismatch = cat("node '", n.name(), "' computes ",
                                      describe(t.sizes(), t.scalar_type()),
                                      " but its tensor_meta says ",
                                      describe(r->shape, r->dtype));
                     }
                   });
  } catch (const std::exception&) {
    return absl::OkStatus();  // not runnable on meta tensors: not checked
  }
  if (mismatch.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(mismatch);
}

}  // namespace fx::host
