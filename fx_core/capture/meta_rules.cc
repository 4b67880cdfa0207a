#include "fx_core/capture/meta_rules.h"

#include <ATen/ATen.h>
#include <ATen/AccumulateType.h>
#include <ATen/ExpandUtils.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx_core/support/error.h"

namespace fx::capture {

namespace {

using Args = std::vector<c10::IValue>;
using Results = std::vector<c10::IValue>;
using Rule = std::function<Results(const Args&)>;

// v[i], or its last element when shorter (an `int[2]` given as one int).
int64_t at_or_last(const std::vector<int64_t>& v, int64_t i) {
  return v[std::min<size_t>(static_cast<size_t>(i), v.size() - 1)];
}

// An elementwise operator of one tensor (relu, hardtanh, hardswish).
Results relu(const Args& args) { return {at::empty_like(args[0].toTensor())}; }

Results self(const Args& args) { return {args[0]}; }

// ATen's conv_output_size and its transposed form.
Results convolution(const Args& args) {
  const at::Tensor& input = args[0].toTensor();
  const at::Tensor& weight = args[1].toTensor();
  auto stride = args[3].toIntVector();
  auto padding = args[4].toIntVector();
  auto dilation = args[5].toIntVector();
  const bool transposed = args[6].toBool();
  auto output_padding = args[7].toIntVector();
  const int64_t groups = args[8].toInt();
  std::vector<int64_t> sizes = {
      input.size(0), transposed ? weight.size(1) * groups : weight.size(0)};
  for (int64_t d = 0; d < input.dim() - 2; ++d) {
    const int64_t in = input.size(d + 2), k = weight.size(d + 2);
    const int64_t s = at_or_last(stride, d), p = at_or_last(padding, d);
    const int64_t dl = at_or_last(dilation, d);
    sizes.push_back(transposed ? (in - 1) * s - 2 * p + dl * (k - 1) +
                                     at_or_last(output_padding, d) + 1
                               : (in + 2 * p - dl * (k - 1) - 1) / s + 1);
  }
  return {at::empty(sizes, input.options())};
}

Results native_batch_norm(const Args& args) {
  const at::Tensor& input = args[0].toTensor();
  const bool training = args[5].toBool();
  const int64_t channels = input.dim() > 1 ? input.size(1) : 1;
  auto stats = input.options().dtype(
      at::toAccumulateType(input.scalar_type(), /*is_cuda=*/false));
  return {at::empty_like(input), at::empty({training ? channels : 0}, stats),
          at::empty({training ? channels : 0}, stats)};
}

// native_layer_norm(input, normalized_shape, ...): the output, and mean and
// rstd of the leading dimensions (the normalized ones kept as 1s), in the
// input's dtype as the CPU kernel returns them.
Results native_layer_norm(const Args& args) {
  const at::Tensor& input = args[0].toTensor();
  const int64_t normalized = static_cast<int64_t>(args[1].toIntVector().size());
  std::vector<int64_t> stats = input.sizes().vec();
  for (int64_t d = input.dim() - normalized; d < input.dim(); ++d) {
    stats[static_cast<size_t>(d)] = 1;
  }
  return {at::empty_like(input), at::empty(stats, input.options()),
          at::empty(stats, input.options())};
}

// native_group_norm(input, weight, bias, N, C, HxW, group, eps): the
// output, and mean and rstd of shape [N, group].
Results native_group_norm(const Args& args) {
  const at::Tensor& input = args[0].toTensor();
  const int64_t n = args[3].toInt(), group = args[6].toInt();
  return {at::empty_like(input), at::empty({n, group}, input.options()),
          at::empty({n, group}, input.options())};
}

// _adaptive_avg_pool2d(self, output_size): the last two sizes replaced.
Results adaptive_avg_pool2d(const Args& args) {
  const at::Tensor& self = args[0].toTensor();
  std::vector<int64_t> sizes = self.sizes().vec();
  auto output_size = args[1].toIntVector();
  sizes[sizes.size() - 2] = output_size.at(0);
  sizes[sizes.size() - 1] = output_size.at(1);
  return {at::empty(sizes, self.options())};
}

Results index_select(const Args& args) {
  const at::Tensor& self = args[0].toTensor();
  std::vector<int64_t> sizes = self.sizes().vec();
  if (!sizes.empty()) {
    const int64_t dim = c10::maybe_wrap_dim(args[1].toInt(), self.dim());
    sizes[static_cast<size_t>(dim)] = args[2].toTensor().numel();
  }
  return {at::empty(sizes, self.options())};
}

// where.self(condition, self, other): the broadcast shape, the promoted
// dtype.
Results where(const Args& args) {
  const at::Tensor& condition = args[0].toTensor();
  const at::Tensor& self = args[1].toTensor();
  const at::Tensor& other = args[2].toTensor();
  auto sizes = at::infer_size(at::infer_size(condition.sizes(), self.sizes()),
                              other.sizes());
  return {at::empty(sizes, self.options().dtype(at::result_type(self, other)))};
}

// embedding(weight, indices, ...): indices' shape + the embedding size.
Results embedding(const Args& args) {
  const at::Tensor& weight = args[0].toTensor();
  std::vector<int64_t> sizes = args[1].toTensor().sizes().vec();
  sizes.push_back(weight.size(1));
  return {at::empty(sizes, weight.options())};
}

// native_dropout(input, p, train): the output, and the mask (bool), both
// of the input's shape.
Results native_dropout(const Args& args) {
  const at::Tensor& input = args[0].toTensor();
  return {at::empty_like(input), at::empty_like(input, at::kBool)};
}

const absl::flat_hash_map<const c10::FunctionSchema*, Rule>& rules() {
  static const auto* table = [] {
    const std::pair<std::pair<const char*, const char*>, Rule> entries[] = {
        {{"aten::relu", ""}, relu},
        {{"aten::relu_", ""}, self},
        {{"aten::convolution", ""}, convolution},
        {{"aten::native_batch_norm", ""}, native_batch_norm},
        {{"aten::native_layer_norm", ""}, native_layer_norm},
        {{"aten::embedding", ""}, embedding},
        {{"aten::hardtanh", ""}, relu},
        {{"aten::hardswish", ""}, relu},
        {{"aten::native_group_norm", ""}, native_group_norm},
        {{"aten::_adaptive_avg_pool2d", ""}, adaptive_avg_pool2d},
        {{"aten::index_select", ""}, index_select},
        {{"aten::where", "self"}, where},
        {{"aten::native_dropout", ""}, native_dropout},
    };
    auto* map = new absl::flat_hash_map<const c10::FunctionSchema*, Rule>();
    for (const auto& [name, rule] : entries) {
      const auto& handle = c10::Dispatcher::singleton().findSchemaOrThrow(
          name.first, name.second);
      (*map)[&handle.schema()] = rule;
    }
    return map;
  }();
  return *table;
}

}  // namespace

bool run_meta_rule(const c10::FunctionSchema& schema,
                   torch::jit::Stack* stack) {
  if (schema.name() == "aten::_local_scalar_dense") {
    throw FxError(
        "make_fx: aten::_local_scalar_dense (item()) reads a value a meta "
        "tensor does not have: data-dependent code cannot be captured in meta "
        "mode");
  }
  const auto& table = rules();
  auto found = table.find(&schema);
  if (found == table.end()) return false;
  Args args = torch::jit::pop(*stack, schema.arguments().size());
  for (auto& result : found->second(args)) stack->push_back(std::move(result));
  return true;
}

}  // namespace fx::capture
