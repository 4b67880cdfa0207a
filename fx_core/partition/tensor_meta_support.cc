#include "fx_core/partition/tensor_meta_support.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/torch_names.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

struct Limits {
  absl::flat_hash_set<std::string> dtypes;
  TensorRule rule;
};

// One tensor_meta dict against the limits.
bool tensor_passes(const Argument& meta, const Limits& limits) {
  const Argument* shape = meta.find("shape");
  const Argument* dtype = meta.find("dtype");
  if (shape == nullptr || !shape->is_sequence()) return false;
  if (!limits.dtypes.empty()) {
    if (dtype == nullptr || !dtype->is_torch_enum()) return false;
    if (!limits.dtypes.contains(canonical_dtype(dtype->as_string()))) {
      return false;
    }
  }
  const ArgumentList& dims = shape->elements();
  int64_t rank = static_cast<int64_t>(dims.size());
  if (rank < limits.rule.min_rank) return false;
  if (limits.rule.max_rank >= 0 && rank > limits.rule.max_rank) return false;
  if (limits.rule.max_dim_size < 0) return true;
  for (const Argument& d : dims) {
    if (!d.is_int() || d.as_int() > limits.rule.max_dim_size) return false;
  }
  return true;
}

// A tensor_meta value: a dict, or a sequence of them (all must pass).
bool meta_passes(const Argument* meta, const Limits& limits) {
  if (meta == nullptr) return false;
  if (meta->is_dict()) return tensor_passes(*meta, limits);
  if (!meta->is_sequence() || meta->elements().empty()) return false;
  for (const Argument& item : meta->elements()) {
    if (!meta_passes(&item, limits)) return false;
  }
  return true;
}

bool inputs_pass(const Node& n, const Limits& limits) {
  bool any = false, all = true;
  for (Node* input : n.all_input_nodes()) {
    if (input->op() == Opcode::kGetAttr) continue;
    bool ok = meta_passes(input->meta_value("tensor_meta"), limits);
    any = any || ok;
    all = all && ok;
  }
  return limits.rule.any_input ? any : all;
}

}  // namespace

std::string canonical_dtype(std::string_view name) {
  static const std::pair<std::string_view, std::string_view> kAliases[] = {
      {"torch.float", "torch.float32"},
      {"torch.double", "torch.float64"},
      {"torch.half", "torch.float16"},
      {"torch.int", "torch.int32"},
      {"torch.long", "torch.int64"},
      {"torch.short", "torch.int16"},
      {"torch.cfloat", "torch.complex64"},
      {"torch.cdouble", "torch.complex128"},
      {"torch.chalf", "torch.complex32"},
  };
  for (const auto& [alias, canonical] : kAliases) {
    if (name == alias) return std::string(canonical);
  }
  return std::string(name);
}

OperatorSupport tensor_meta_support(TensorRule rule) {
  Limits limits;
  for (const std::string& d : rule.dtypes) {
    if (!is_dtype_name(d)) {
      throw FxError(cat("tensor_meta_support: '", d,
                        "' is not a torch dtype (torch.float32, ...)"));
    }
    limits.dtypes.insert(canonical_dtype(d));
  }
  limits.rule = std::move(rule);
  return OperatorSupport([limits = std::move(limits)](const Node& n) {
    if (limits.rule.check_output &&
        !meta_passes(n.meta_value("tensor_meta"), limits)) {
      return false;
    }
    return !limits.rule.check_inputs || inputs_pass(n, limits);
  });
}

}  // namespace fx
