#include "fx_core/compile/pooling_steps.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "fx_core/compile/max_pool_kernel.h"
#include "fx_core/compile/module_config.h"
#include "fx_core/compile/onednn_pooling.h"
#include "fx_core/ir/argument.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/value.h"

namespace fx {
namespace {

// A config entry that is a bool; `fallback` when absent; nullopt for
// anything else.
std::optional<bool> bool_item(const ArgumentDict& config, std::string_view key,
                              bool fallback) {
  const Argument* a = find_item(config, key);
  if (a == nullptr) return fallback;
  if (!a->is_bool()) return std::nullopt;
  return a->as_bool();
}

// ATen's pooling output size along one dimension (pooling_output_shape):
// with ceil_mode the last window must start inside the input or the left
// padding.
int64_t aten_output_size(int64_t in, int64_t kernel, int64_t pad,
                         int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t span =
      in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  // div_rtn: rounds towards negative infinity.
  int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride));
  out += 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// A max or average module's window, with ATen's output size: the padding
// after the input extended to reach the last window (never negative: the
// windows past the input's end are then dropped by oneDNN's floor as by
// ATen's). nullopt where ATen would raise (padding over half the window,
// an empty output) and the module's kernel must run.
struct Planned {
  PoolingWindow window;
  std::vector<int64_t> out_hw;
};
std::optional<Planned> plan_window(PoolingWindow w,
                                   const std::vector<int64_t>& padding,
                                   const std::vector<int64_t>& in,
                                   bool ceil_mode) {
  Planned p;
  w.pad_begin = padding;
  w.pad_end = {0, 0};
  for (size_t d = 0; d < 2; ++d) {
    if (w.kernel[d] < 1 || w.stride[d] < 1 || w.dilation[d] < 1 ||
        padding[d] < 0 || padding[d] > w.kernel[d] / 2) {
      return std::nullopt;
    }
    const int64_t out = aten_output_size(in[2 + d], w.kernel[d], padding[d],
                                         w.stride[d], w.dilation[d], ceil_mode);
    if (out < 1) return std::nullopt;
    const int64_t extent = (w.kernel[d] - 1) * w.dilation[d] + 1;
    const int64_t reach = (out - 1) * w.stride[d] + extent - in[2 + d];
    w.pad_end[d] = std::max<int64_t>(0, reach - padding[d]);
    // ATen divides an average including padding by the window's part
    // inside input + padding: the whole window only if none reaches past.
    if (w.kind == PoolingWindow::Kind::kAvgIncludePad &&
        w.pad_end[d] > padding[d]) {
      return std::nullopt;
    }
    p.out_hw.push_back(out);
  }
  p.window = std::move(w);
  return p;
}

// MaxPool2d(kernel_size, stride, padding, dilation, return_indices=False,
// ceil_mode).
std::optional<Planned> max_pool(const ArgumentDict& c,
                                const std::vector<int64_t>& in) {
  auto kernel = int_pair(c, "kernel_size", 0);
  auto stride = int_pair(c, "stride", 0);
  auto padding = int_pair(c, "padding", 0);
  auto dilation = int_pair(c, "dilation", 1);
  auto indices = bool_item(c, "return_indices", false);
  auto ceil_mode = bool_item(c, "ceil_mode", false);
  if (!kernel || !stride || !padding || !dilation || !indices || *indices ||
      !ceil_mode) {
    return std::nullopt;
  }
  PoolingWindow w;
  w.kind = PoolingWindow::Kind::kMax;
  w.kernel = *kernel;
  w.stride = *stride;
  w.dilation = *dilation;
  return plan_window(std::move(w), *padding, in, *ceil_mode);
}

// AvgPool2d(kernel_size, stride, padding, ceil_mode, count_include_pad,
// divisor_override=None).
std::optional<Planned> avg_pool(const ArgumentDict& c,
                                const std::vector<int64_t>& in) {
  auto kernel = int_pair(c, "kernel_size", 0);
  auto stride = int_pair(c, "stride", 0);
  auto padding = int_pair(c, "padding", 0);
  auto ceil_mode = bool_item(c, "ceil_mode", false);
  auto include_pad = bool_item(c, "count_include_pad", true);
  const Argument* divisor = find_item(c, "divisor_override");
  if (!kernel || !stride || !padding || !ceil_mode || !include_pad ||
      (divisor != nullptr && !divisor->is_none())) {
    return std::nullopt;
  }
  PoolingWindow w;
  w.kind = *include_pad ? PoolingWindow::Kind::kAvgIncludePad
                        : PoolingWindow::Kind::kAvgExcludePad;
  w.kernel = *kernel;
  w.stride = *stride;
  w.dilation = {1, 1};
  return plan_window(std::move(w), *padding, in, *ceil_mode);
}

// An adaptive average to `dims` (nullopt: the input's size) where each
// output size divides the input's: windows of input / output, no padding.
// With PoolingRounding::kExact: not a global average (one output of several
// inputs: ATen's is a mean, summed in another order), and on an NCHW input
// a window of one row or column (ATen's NCHW kernel divides by its height,
// then by its width: two roundings, where oneDNN divides once).
std::optional<Planned> adaptive_avg_pool(
    const std::vector<std::optional<int64_t>>& dims,
    const std::vector<int64_t>& in, bool channels_last,
    PoolingRounding rounding) {
  if (dims.size() != 2) return std::nullopt;
  Planned p;
  p.window.kind = PoolingWindow::Kind::kAvgExcludePad;
  for (size_t d = 0; d < 2; ++d) {
    const int64_t out = dims[d].value_or(in[2 + d]);
    if (out < 1 || in[2 + d] % out != 0) return std::nullopt;
    const int64_t k = in[2 + d] / out;
    p.window.kernel.push_back(k);
    p.window.stride.push_back(k);
    p.out_hw.push_back(out);
  }
  const bool global =
      p.out_hw == std::vector<int64_t>{1, 1} && in[2] * in[3] > 1;
  const bool one_division =
      channels_last || p.window.kernel[0] == 1 || p.window.kernel[1] == 1;
  if (rounding == PoolingRounding::kExact && (global || !one_division)) {
    return std::nullopt;
  }
  p.window.dilation = {1, 1};
  p.window.pad_begin = {0, 0};
  p.window.pad_end = {0, 0};
  return p;
}

// An adaptive output size (AdaptiveAvgPool2d's output_size, the second
// argument of F.adaptive_avg_pool2d): an int, or a list or tuple of ints
// and Nones.
std::optional<std::vector<std::optional<int64_t>>> adaptive_dims(
    const c10::IValue& size) {
  if (size.isInt()) return std::vector<std::optional<int64_t>>(2, size.toInt());
  if (!is_sequence(size)) return std::nullopt;
  std::vector<std::optional<int64_t>> dims;
  for (const c10::IValue& v : sequence_elements(size)) {
    if (v.isNone()) {
      dims.push_back(std::nullopt);
    } else if (v.isInt()) {
      dims.push_back(v.toInt());
    } else {
      return std::nullopt;
    }
  }
  return dims;
}

// An average on oneDNN's pooling. With `sizes`, a global average written
// as N x C (or N x C x 1 x 1: keepdim): the bytes of oneDNN's N x C x 1 x 1
// result in either layout.
class AveragePoolingStep : public OnednnStep {
 public:
  AveragePoolingStep(std::unique_ptr<OnednnPooling> pooling, int32_t input,
                     std::vector<int64_t> sizes = {})
      : pooling_(std::move(pooling)), sizes_(std::move(sizes)) {
    inputs_.push_back(input);
  }
  const std::vector<int64_t>& output_sizes() const override {
    return sizes_.empty() ? pooling_->output_sizes() : sizes_;
  }
  at::Tensor empty_output() const override {
    if (sizes_.empty()) return pooling_->empty_output();
    return at::empty(sizes_, at::TensorOptions().dtype(at::kFloat));
  }
  bool fits(const std::vector<const at::Tensor*>& x) const override {
    return x[0] != nullptr && pooling_->fits(*x[0]);
  }
  void run(const std::vector<const at::Tensor*>& x,
           const at::Tensor& out) override {
    pooling_->run(*x[0], out);
  }

 private:
  std::unique_ptr<OnednnPooling> pooling_;
  std::vector<int64_t> sizes_;  // empty: the pooling's own
};

// The average step for a planned window over an input of these sizes and
// strides (`sizes`: AveragePoolingStep's), or nullptr when oneDNN cannot
// compute it.
std::unique_ptr<OnednnStep> average_step(const Planned& p,
                                         const std::vector<int64_t>& in_sizes,
                                         const std::vector<int64_t>& in_strides,
                                         int32_t input,
                                         std::vector<int64_t> sizes = {}) {
  std::unique_ptr<OnednnPooling> pooling =
      OnednnPooling::create(p.window, in_sizes, in_strides, p.out_hw);
  if (pooling == nullptr) return nullptr;
  return std::make_unique<AveragePoolingStep>(std::move(pooling), input,
                                              std::move(sizes));
}

// A maximum on channels_last inputs (max_pool_kernel.h).
class MaxPoolingStep : public OnednnStep {
 public:
  MaxPoolingStep(PoolingWindow window, std::vector<int64_t> in,
                 std::vector<int64_t> out, int32_t input)
      : window_(std::move(window)), in_(std::move(in)), out_(std::move(out)) {
    inputs_.push_back(input);
  }
  const std::vector<int64_t>& output_sizes() const override { return out_; }
  at::Tensor empty_output() const override {
    return at::empty(out_, at::TensorOptions()
                               .dtype(at::kFloat)
                               .memory_format(at::MemoryFormat::ChannelsLast));
  }
  bool fits(const std::vector<const at::Tensor*>& x) const override {
    const at::Tensor* t = x[0];
    return t != nullptr && t->defined() && t->scalar_type() == at::kFloat &&
           t->device().is_cpu() && t->layout() == at::kStrided &&
           t->sizes() == c10::IntArrayRef(in_) &&
           t->is_contiguous(at::MemoryFormat::ChannelsLast);
  }
  void run(const std::vector<const at::Tensor*>& x,
           const at::Tensor& out) override {
    max_pool2d_channels_last(window_, *x[0], out);
  }

 private:
  PoolingWindow window_;
  std::vector<int64_t> in_, out_;
};

// Whether a tensor of these sizes and strides is channels_last and not also
// contiguous (ATen then gives channels_last results).
bool only_channels_last(const std::vector<int64_t>& sizes,
                        const std::vector<int64_t>& strides) {
  const at::Tensor t = at::empty_strided(
      sizes, strides, at::device(at::kMeta).dtype(at::kFloat));
  return t.is_contiguous(at::MemoryFormat::ChannelsLast) &&
         !t.is_contiguous() &&
         t.suggest_memory_format() == at::MemoryFormat::ChannelsLast;
}

// Whether a result of `sizes` (N x C, then ones) is laid out as
// N x C row-major: channel c of image n at n * C + c.
bool rows_of_channels(const PlannedParam& out,
                      const std::vector<int64_t>& sizes) {
  if (out.kind != PlannedParam::Kind::kValue || !out.float_cpu ||
      out.sizes != sizes) {
    return false;
  }
  return (sizes[1] == 1 || out.strides[1] == 1) &&
         (sizes[0] == 1 || out.strides[0] == sizes[1]);
}

// input.mean(dim) / torch.mean(input, dim[, keepdim[, dtype=None]]) with
// dim the last two of a 4-d input: its global average (a mean in ATen:
// another order of sums, so only with PoolingRounding::kFloat32).
std::unique_ptr<OnednnStep> bind_global_mean(
    const std::vector<PlannedParam>& args, const PlannedParam& out,
    PoolingRounding rounding) {
  if (rounding != PoolingRounding::kFloat32 || args.size() < 2 ||
      args.size() > 4 || args[1].kind != PlannedParam::Kind::kConstant) {
    return nullptr;
  }
  const PlannedParam& in = args[0];
  if (in.kind != PlannedParam::Kind::kValue || !in.float_cpu ||
      in.sizes.size() != 4) {
    return nullptr;
  }
  if (!is_sequence(args[1].constant)) return nullptr;
  std::vector<int64_t> d;
  for (const c10::IValue& v : sequence_elements(args[1].constant)) {
    if (!v.isInt()) return nullptr;
    d.push_back(v.toInt() < 0 ? v.toInt() + 4 : v.toInt());
  }
  std::sort(d.begin(), d.end());
  if (d != std::vector<int64_t>{2, 3}) return nullptr;
  bool keepdim = false;
  if (args.size() > 2) {
    if (args[2].kind != PlannedParam::Kind::kConstant ||
        !args[2].constant.isBool()) {
      return nullptr;
    }
    keepdim = args[2].constant.toBool();
  }
  if (args.size() > 3 && (args[3].kind != PlannedParam::Kind::kConstant ||
                          !args[3].constant.isNone())) {
    return nullptr;
  }
  std::vector<int64_t> sizes = {in.sizes[0], in.sizes[1]};
  if (keepdim) sizes.insert(sizes.end(), {1, 1});
  if (!rows_of_channels(out, sizes)) return nullptr;
  std::optional<Planned> p = adaptive_avg_pool(
      {1, 1}, in.sizes, only_channels_last(in.sizes, in.strides), rounding);
  if (!p) return nullptr;
  return average_step(*p, in.sizes, in.strides, in.slot, std::move(sizes));
}

// Whether `t` has these sizes and, along every dimension longer than one,
// these strides.
bool same_layout(const std::vector<int64_t>& sizes,
                 const std::vector<int64_t>& strides, const at::Tensor& t) {
  if (t.sizes() != c10::IntArrayRef(sizes)) return false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] > 1 && t.stride(d) != strides[d]) return false;
  }
  return true;
}

// F.adaptive_avg_pool2d(input, output_size): as the module.
std::unique_ptr<OnednnStep> bind_adaptive_call(
    const std::vector<PlannedParam>& args, const PlannedParam& out,
    PoolingRounding rounding) {
  if (args.size() != 2 || args[1].kind != PlannedParam::Kind::kConstant) {
    return nullptr;
  }
  const PlannedParam& in = args[0];
  if (in.kind != PlannedParam::Kind::kValue || !in.float_cpu ||
      in.sizes.size() != 4) {
    return nullptr;
  }
  auto dims = adaptive_dims(args[1].constant);
  if (!dims) return nullptr;
  const bool channels_last = only_channels_last(in.sizes, in.strides);
  std::optional<Planned> p =
      adaptive_avg_pool(*dims, in.sizes, channels_last, rounding);
  if (!p || out.kind != PlannedParam::Kind::kValue) return nullptr;
  std::unique_ptr<OnednnStep> step =
      average_step(*p, in.sizes, in.strides, in.slot);
  if (step == nullptr ||
      !same_layout(out.sizes, out.strides, step->empty_output())) {
    return nullptr;
  }
  return step;
}

}  // namespace

std::unique_ptr<OnednnStep> bind_pooling_module_step(
    const ModuleKind& kind, const torch::nn::Module& module, int32_t input_slot,
    const std::vector<int64_t>& input_sizes,
    const std::vector<int64_t>& input_strides, PoolingRounding rounding) {
  if (!kind.describe || input_sizes.size() != 4) return nullptr;
  const bool channels_last = only_channels_last(input_sizes, input_strides);
  if (kind.type == "torch.nn.MaxPool2d") {
    std::optional<Planned> p = max_pool(kind.describe(module), input_sizes);
    if (!p || !channels_last) return nullptr;
    std::vector<int64_t> out = {input_sizes[0], input_sizes[1], p->out_hw[0],
                                p->out_hw[1]};
    return std::make_unique<MaxPoolingStep>(std::move(p->window), input_sizes,
                                            std::move(out), input_slot);
  }
  std::optional<Planned> p;
  if (kind.type == "torch.nn.AvgPool2d") {
    p = avg_pool(kind.describe(module), input_sizes);
  } else if (kind.type == "torch.nn.AdaptiveAvgPool2d") {
    const ArgumentDict config = kind.describe(module);
    const Argument* size = find_item(config, "output_size");
    auto dims = size ? adaptive_dims(constant_value(*size)) : std::nullopt;
    if (dims) {
      p = adaptive_avg_pool(*dims, input_sizes, channels_last, rounding);
    }
  }
  if (!p) return nullptr;
  return average_step(*p, input_sizes, input_strides, input_slot);
}

bool is_pooling_call(std::string_view target) {
  return target == "mean" || target == "torch.mean" ||
         target == "torch.nn.functional.adaptive_avg_pool2d";
}

std::unique_ptr<OnednnStep> bind_pooling_call_step(
    std::string_view target, const std::vector<PlannedParam>& args,
    const PlannedParam& out, PoolingRounding rounding) {
  if (target == "mean" || target == "torch.mean") {
    return bind_global_mean(args, out, rounding);
  }
  if (target == "torch.nn.functional.adaptive_avg_pool2d") {
    return bind_adaptive_call(args, out, rounding);
  }
  return nullptr;
}

}  // namespace fx
