#include "fx_core/compile/quantized_steps.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "fx_core/compile/int8_requantization.h"
#include "fx_core/compile/module_config.h"
#include "fx_core/compile/onednn_qconv.h"
#include "fx_core/compile/onednn_qlinear.h"
#include "fx_core/compile/quantized_kernels.h"
#include "fx_core/ir/argument.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/support/env_choice.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// FX_INT8_CONV: "plan" (the default) binds the int8 module steps,
// "registry" leaves the modules to their LibTorch kernels. They are bound
// only where the modules run on LibTorch's onednn engine (the steps compute
// its numbers): $FX_QENGINE unset or onednn, and LibTorch has the engine.
bool int8_steps_wanted() {
  const bool wanted = env_choice("FX_INT8_CONV", {"plan", "registry"}, 0) == 0;
  const char* engine = std::getenv("FX_QENGINE");
  const bool onednn_engine = engine == nullptr || *engine == '\0' ||
                             std::string_view(engine) == "onednn";
  const auto& engines = at::globalContext().supportedQEngines();
  return wanted && onednn_engine &&
         std::find(engines.begin(), engines.end(), at::QEngine::ONEDNN) !=
             engines.end();
}

// Whether LibTorch quantizes one element at a time with quantize_val (the
// numbers quantize_per_tensor_u8 computes): it does unless it was built
// with FBGEMM, whose own kernel rounds large values otherwise.
bool scalar_libtorch_quantize() {
  const auto& engines = at::globalContext().supportedQEngines();
  return std::find(engines.begin(), engines.end(), at::QEngine::FBGEMM) ==
         engines.end();
}

// Whether `type` is a 2-d quantized convolution module, and whether it has
// the ReLU fused.
bool quantized_conv2d(const std::string& type, bool* relu) {
  static const char* const kPlain = "torch.ao.nn.quantized.modules.conv.Conv2d";
  static const char* const kWithRelu[] = {
      "torch.nn.intrinsic.quantized.modules.conv_relu.ConvReLU2d",
      "torch.ao.nn.intrinsic.quantized.modules.conv_relu.ConvReLU2d"};
  *relu = type == kWithRelu[0] || type == kWithRelu[1];
  return *relu || type == kPlain;
}

// Whether `type` is a quantized Linear module, and whether it has the ReLU
// fused.
bool quantized_linear(const std::string& type, bool* relu) {
  static const char* const kPlain =
      "torch.ao.nn.quantized.modules.linear.Linear";
  static const char* const kWithRelu[] = {
      "torch.nn.intrinsic.quantized.modules.linear_relu.LinearReLU",
      "torch.ao.nn.intrinsic.quantized.modules.linear_relu.LinearReLU"};
  *relu = type == kWithRelu[0] || type == kWithRelu[1];
  return *relu || type == kPlain;
}

// The module's parameter or buffer `name` (undefined when it has none).
at::Tensor module_tensor(const torch::nn::Module& m, const std::string& name) {
  if (const at::Tensor* t = m.named_parameters(false).find(name)) return *t;
  if (const at::Tensor* t = m.named_buffers(false).find(name)) return *t;
  return at::Tensor();
}

// The module's output scale and zero point (its 0-dim `scale` and
// `zero_point`); nullopt when it has none.
std::optional<std::pair<double, int64_t>> module_output_qparams(
    const torch::nn::Module& m) {
  const at::Tensor scale = module_tensor(m, "scale");
  const at::Tensor zero_point = module_tensor(m, "zero_point");
  if (!scale.defined() || !zero_point.defined() || scale.numel() != 1 ||
      zero_point.numel() != 1) {
    return std::nullopt;
  }
  return std::pair{scale.item<double>(), zero_point.item<int64_t>()};
}

// The module's stride, padding, dilation, groups and output quantization;
// nullopt when its config is not one the step can read.
std::optional<QuantizedConvParams> module_params(const ModuleKind& kind,
                                                 const torch::nn::Module& m,
                                                 bool relu) {
  if (!kind.describe) return std::nullopt;
  const ArgumentDict config = kind.describe(m);
  auto stride = int_pair(config, "stride", 1);
  auto padding = int_pair(config, "padding", 0);
  auto dilation = int_pair(config, "dilation", 1);
  auto groups = int_item(config, "groups", 1);
  const auto output = module_output_qparams(m);
  if (!stride || !padding || !dilation || !groups || !output) {
    return std::nullopt;
  }
  QuantizedConvParams p;
  p.stride = *stride;
  p.padding = *padding;
  p.dilation = *dilation;
  p.groups = *groups;
  p.output_scale = output->first;
  p.output_zero_point = output->second;
  p.relu = relu;
  return p;
}

// Whether `t` is a per-tensor quint8 CPU tensor of `sizes` with usable
// qparams: what an int8 step planned for `sizes` takes.
bool planned_quint8(const at::Tensor* t, const std::vector<int64_t>& sizes) {
  return t != nullptr && t->defined() && t->scalar_type() == at::kQUInt8 &&
         t->device().is_cpu() && t->qscheme() == at::kPerTensorAffine &&
         t->sizes() == c10::IntArrayRef(sizes) &&
         usable_u8_qparams(t->q_scale(), t->q_zero_point());
}

// A quantized convolution (OnednnQConv) or linear layer (OnednnQLinear) as
// a plan step: its quint8 result in a planned buffer of `format`; the
// primitive rebuilt whenever the input's scale or zero point changes. A
// linear layer takes only row-major inputs; a convolution any layout.
template <typename Layer>
class QuantizedLayerStep : public OnednnStep {
 public:
  QuantizedLayerStep(std::unique_ptr<Layer> layer, int32_t input,
                     at::MemoryFormat format)
      : layer_(std::move(layer)), format_(format) {
    inputs_.push_back(input);
  }
  const std::vector<int64_t>& output_sizes() const override {
    return layer_->output_sizes();
  }
  at::Tensor empty_output() const override {
    return at::_empty_affine_quantized(
        layer_->output_sizes(), at::TensorOptions().dtype(at::kQUInt8),
        layer_->params().output_scale, layer_->params().output_zero_point,
        format_);
  }
  bool fits(const std::vector<const at::Tensor*>& x) const override {
    return planned_quint8(x[0], layer_->input_sizes()) &&
           (std::is_same_v<Layer, OnednnQConv> || x[0]->is_contiguous());
  }
  void run(const std::vector<const at::Tensor*>& x,
           const at::Tensor& out) override {
    const at::Tensor& input = *x[0];
    const auto& now = layer_->params();
    if (input.q_scale() != now.input_scale ||
        input.q_zero_point() != now.input_zero_point) {
      auto p = now;
      p.input_scale = input.q_scale();
      p.input_zero_point = input.q_zero_point();
      // create() accepted these sizes with other usable qparams (fits()).
      TORCH_CHECK(replace(p), "the int8 step refused input qparams ",
                  p.input_scale, ", ", p.input_zero_point);
    }
    layer_->run(input, out);
  }
  const Layer& layer() const { return *layer_; }
  // The layer rebuilt with `p`; false (unchanged) when it cannot be.
  template <typename Params>
  bool replace(const Params& p) {
    std::unique_ptr<Layer> layer = layer_->with_params(p);
    if (layer == nullptr) return false;
    layer_ = std::move(layer);
    return true;
  }

 private:
  std::unique_ptr<Layer> layer_;  // its params: the input's last qparams
  at::MemoryFormat format_;
};

using QuantizedConvStep = QuantizedLayerStep<OnednnQConv>;

std::unique_ptr<OnednnStep> bind_quantized_linear(
    const torch::nn::Module& module, bool relu, int32_t input_slot,
    const std::vector<int64_t>& input_sizes) {
  const auto output = module_output_qparams(module);
  const at::Tensor weight = module_tensor(module, "weight");
  if (!output || !weight.defined()) return nullptr;
  QuantizedLinearParams p;
  p.output_scale = output->first;
  p.output_zero_point = output->second;
  p.relu = relu;
  // Built once here for an input scale and zero point of 1 and 0; the
  // first run builds it for the input's own.
  std::unique_ptr<OnednnQLinear> linear = OnednnQLinear::create(
      weight, module_tensor(module, "bias"), p, input_sizes);
  if (linear == nullptr) return nullptr;
  return std::make_unique<QuantizedLayerStep<OnednnQLinear>>(
      std::move(linear), input_slot, at::MemoryFormat::Contiguous);
}

// ------------------------------------------------ torch.quantize_per_tensor

// torch.quantize_per_tensor(x, scale, zero_point, torch.quint8) of a
// row-major float32 CPU tensor into a row-major quint8 one.
class QuantizeStep : public OnednnStep {
 public:
  QuantizeStep(int32_t input, std::vector<int64_t> sizes, double scale,
               int64_t zero_point)
      : sizes_(std::move(sizes)), scale_(scale), zero_point_(zero_point) {
    inputs_.push_back(input);
  }
  const std::vector<int64_t>& output_sizes() const override { return sizes_; }
  at::Tensor empty_output() const override {
    return at::_empty_affine_quantized(
        sizes_, at::TensorOptions().dtype(at::kQUInt8), scale_, zero_point_);
  }
  bool fits(const std::vector<const at::Tensor*>& x) const override {
    const at::Tensor* t = x[0];
    return t != nullptr && t->defined() && t->scalar_type() == at::kFloat &&
           t->device().is_cpu() && t->sizes() == c10::IntArrayRef(sizes_) &&
           t->is_contiguous();
  }
  void run(const std::vector<const at::Tensor*>& x,
           const at::Tensor& out) override {
    TORCH_CHECK(out.is_contiguous() && out.sizes() == x[0]->sizes(),
                "QuantizeStep: a result buffer of other sizes than planned");
    quantize_per_tensor_u8(x[0]->data_ptr<float>(),
                           static_cast<uint8_t*>(out.data_ptr()), out.numel(),
                           scale_, zero_point_);
  }

 private:
  std::vector<int64_t> sizes_;
  double scale_;
  int64_t zero_point_;
};

// An output's scale and zero point, each a number or a one-element
// attribute tensor (as convert_fx's graphs pass them), read once when the
// plan is built; nullopt unless they are a quint8 pair oneDNN takes (a
// positive finite scale, an integer zero point in 0..255).
struct OutputQParams {
  double scale;
  int64_t zero_point;
};
std::optional<OutputQParams> planned_output_qparams(
    const PlannedParam& scale, const PlannedParam& zero_point) {
  auto value = [](const PlannedParam& p,
                  bool integral) -> std::optional<double> {
    if (is_number(p)) {
      if (integral && !p.constant.isInt()) return std::nullopt;
      return number(p);
    }
    if (p.kind != PlannedParam::Kind::kAttribute || p.attribute->numel() != 1 ||
        p.attribute->is_complex() || p.attribute->scalar_type() == at::kBool ||
        (integral && at::isFloatingType(p.attribute->scalar_type()))) {
      return std::nullopt;
    }
    return p.attribute->item<double>();
  };
  const std::optional<double> s = value(scale, false);
  const std::optional<double> z = value(zero_point, true);
  if (!s || !z || !(*z >= 0 && *z <= 255) ||
      !usable_u8_qparams(*s, static_cast<int64_t>(*z))) {
    return std::nullopt;
  }
  return OutputQParams{*s, static_cast<int64_t>(*z)};
}

std::unique_ptr<OnednnStep> bind_quantize(const std::vector<PlannedParam>& p,
                                          const PlannedParam& out) {
  if (p.size() != 4 || !float_value(p[0]) || !row_major(p[0]) ||
      p[3].kind != PlannedParam::Kind::kConstant || !p[3].constant.isInt() ||
      p[3].constant.toInt() != static_cast<int64_t>(at::kQUInt8) ||
      out.sizes != p[0].sizes || !row_major(out)) {
    return nullptr;
  }
  const std::optional<OutputQParams> q = planned_output_qparams(p[1], p[2]);
  if (!q || !scalar_libtorch_quantize()) return nullptr;
  return std::make_unique<QuantizeStep>(p[0].slot, p[0].sizes, q->scale,
                                        q->zero_point);
}

// ----------------------------------------- quantized::add, quantized::add_relu

// The memory format whose strides `m` has (contiguous or channels_last;
// the strides of size-1 dimensions aside), or nullopt for any other.
std::optional<at::MemoryFormat> dense_format(const PlannedParam& m) {
  if (row_major(m)) return at::MemoryFormat::Contiguous;
  if (m.sizes.size() != 4) return std::nullopt;
  const std::vector<int64_t>& n = m.sizes;
  const int64_t cl[4] = {n[1] * n[2] * n[3], 1, n[3] * n[1], n[1]};
  for (size_t d = 0; d < 4; ++d) {
    if (n[d] != 1 && m.strides[d] != cl[d]) return std::nullopt;
  }
  return at::MemoryFormat::ChannelsLast;
}

// Whether `t` is a per-tensor quint8 CPU tensor of `sizes` laid out in
// `format`.
bool quint8_in(const at::Tensor* t, const std::vector<int64_t>& sizes,
               at::MemoryFormat format) {
  return planned_quint8(t, sizes) && t->is_contiguous(format);
}

// quantized::add(qa, qb, scale, zero_point) and add_relu of two quint8
// tensors of the same sizes and layout, elementwise in memory order into a
// result of that layout (what LibTorch writes: qa's suggested format).
class QuantizedAddStep : public OnednnStep {
 public:
  QuantizedAddStep(int32_t a, int32_t b, std::vector<int64_t> sizes,
                   at::MemoryFormat format, double scale, int64_t zero_point,
                   bool relu)
      : sizes_(std::move(sizes)), format_(format) {
    inputs_ = {a, b};
    params_.scale = scale;
    params_.zero_point = zero_point;
    params_.relu = relu;
  }
  const std::vector<int64_t>& output_sizes() const override { return sizes_; }
  at::Tensor empty_output() const override {
    return at::_empty_affine_quantized(
        sizes_, at::TensorOptions().dtype(at::kQUInt8), params_.scale,
        params_.zero_point, format_);
  }
  bool fits(const std::vector<const at::Tensor*>& x) const override {
    return quint8_in(x[0], sizes_, format_) && quint8_in(x[1], sizes_, format_);
  }
  void run(const std::vector<const at::Tensor*>& x,
           const at::Tensor& out) override {
    TORCH_CHECK(out.sizes() == x[0]->sizes() && out.is_contiguous(format_),
                "QuantizedAddStep: a result buffer of another layout than "
                "planned");
    QuantizedAddParams p = params_;
    p.a_scale = x[0]->q_scale();
    p.a_zero_point = x[0]->q_zero_point();
    p.b_scale = x[1]->q_scale();
    p.b_zero_point = x[1]->q_zero_point();
    quantized_add_u8(static_cast<const uint8_t*>(x[0]->data_ptr()),
                     static_cast<const uint8_t*>(x[1]->data_ptr()),
                     static_cast<uint8_t*>(out.data_ptr()), out.numel(), p);
  }

 private:
  std::vector<int64_t> sizes_;
  at::MemoryFormat format_;
  QuantizedAddParams params_;  // the output's; the inputs' read each run
};

std::unique_ptr<OnednnStep> bind_add(const std::vector<PlannedParam>& p,
                                     const PlannedParam& out, bool relu) {
  using Kind = PlannedParam::Kind;
  if (!quantized_add_is_libtorchs() || p.size() != 4 ||
      p[0].kind != Kind::kValue || p[1].kind != Kind::kValue ||
      p[0].sizes != p[1].sizes || out.sizes != p[0].sizes) {
    return nullptr;
  }
  const std::optional<OutputQParams> q = planned_output_qparams(p[2], p[3]);
  const std::optional<at::MemoryFormat> format = dense_format(p[0]);
  if (!q || !format || dense_format(p[1]) != format ||
      dense_format(out) != format) {
    return nullptr;
  }
  return std::make_unique<QuantizedAddStep>(
      p[0].slot, p[1].slot, p[0].sizes, *format, q->scale, q->zero_point, relu);
}

}  // namespace

std::unique_ptr<OnednnStep> bind_quantized_op_step(
    const std::string& target, const std::vector<PlannedParam>& params,
    const PlannedParam& out) {
  if (target == "torch.quantize_per_tensor" ||
      target == "torch.ops.aten.quantize_per_tensor.default" ||
      target == "torch.ops.aten.quantize_per_tensor.tensor_qparams") {
    return bind_quantize(params, out);
  }
  if (target == "torch.ops.quantized.add") return bind_add(params, out, false);
  if (target == "torch.ops.quantized.add_relu") {
    return bind_add(params, out, true);
  }
  return nullptr;
}

std::optional<std::pair<double, double>> module_clamp(
    const ModuleKind& kind, const torch::nn::Module& module) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (kind.type == "torch.nn.ReLU6") return std::pair{0.0, 6.0};
  if (kind.type == "torch.nn.ReLU") return std::pair{0.0, kInf};
  if (kind.type != "torch.nn.Hardtanh" || !kind.describe) return std::nullopt;
  const ArgumentDict config = kind.describe(module);
  double bounds[2] = {-1.0, 1.0};  // Hardtanh's defaults
  const char* const names[2] = {"min_val", "max_val"};
  for (int i = 0; i < 2; ++i) {
    const Argument* a = find_item(config, names[i]);
    if (a == nullptr) continue;
    if (!a->is_int() && !a->is_float()) return std::nullopt;
    bounds[i] = a->as_float();
  }
  return std::pair{bounds[0], bounds[1]};
}

// The clamp fused into an int8 convolution step; false when the step is
// none, has a ReLU or a clamp already, or oneDNN refuses it.
bool fuse_quantized_clamp(OnednnStep& step, double lo, double hi) {
  auto* conv = dynamic_cast<QuantizedConvStep*>(&step);
  if (conv == nullptr) return false;
  QuantizedConvParams p = conv->layer().params();
  if (p.relu || p.clamp || !(lo <= hi)) return false;
  p.clamp = std::pair{lo, hi};
  return conv->replace(p);
}

std::unique_ptr<OnednnStep> bind_quantized_module_step(
    const ModuleKind& kind, const torch::nn::Module& module, int32_t input_slot,
    const std::vector<int64_t>& input_sizes) {
  bool relu = false;
  if (quantized_linear(kind.type, &relu)) {
    if (!int8_steps_wanted()) return nullptr;
    return bind_quantized_linear(module, relu, input_slot, input_sizes);
  }
  if (!quantized_conv2d(kind.type, &relu) || !int8_steps_wanted()) {
    return nullptr;
  }
  std::optional<QuantizedConvParams> p = module_params(kind, module, relu);
  const at::Tensor weight = module_tensor(module, "weight");
  const at::Tensor bias = module_tensor(module, "bias");
  if (!p || !weight.defined()) return nullptr;
  // Built once here (checking that oneDNN runs it) for an input scale and
  // zero point of 1 and 0; the first run builds it for the input's own.
  std::unique_ptr<OnednnQConv> conv =
      OnednnQConv::create(weight, bias, *p, input_sizes);
  if (conv == nullptr) return nullptr;
  return std::make_unique<QuantizedConvStep>(std::move(conv), input_slot,
                                             at::MemoryFormat::ChannelsLast);
}

}  // namespace fx
