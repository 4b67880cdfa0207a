#include "fx_core/compile/quantized_steps.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "fx_core/compile/onednn_qconv.h"
#include "fx_core/ir/argument.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// FX_INT8_CONV: "plan" (the default) binds the int8 steps, "registry" leaves
// the modules to their LibTorch kernels.
bool int8_steps_wanted() {
  const char* v = std::getenv("FX_INT8_CONV");
  if (v == nullptr || *v == '\0' || std::string_view(v) == "plan") return true;
  if (std::string_view(v) == "registry") return false;
  throw FxError(cat("FX_INT8_CONV=", v, ": expected plan or registry"));
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

// The module's parameter or buffer `name` (undefined when it has none).
at::Tensor module_tensor(const torch::nn::Module& m, const std::string& name) {
  if (const at::Tensor* t = m.named_parameters(false).find(name)) return *t;
  if (const at::Tensor* t = m.named_buffers(false).find(name)) return *t;
  return at::Tensor();
}

// A config entry that is an int or a pair of ints (kernel_size=3 or (3, 3)),
// as two ints; `fallback` twice when absent; nullopt for anything else.
std::optional<std::vector<int64_t>> int_pair(const ArgumentDict& config,
                                             std::string_view key,
                                             int64_t fallback) {
  const Argument* a = find_item(config, key);
  if (a == nullptr) return std::vector<int64_t>{fallback, fallback};
  if (a->is_int()) return std::vector<int64_t>{a->as_int(), a->as_int()};
  if (!a->is_sequence() || a->elements().size() != 2) return std::nullopt;
  std::vector<int64_t> out;
  for (const Argument& e : a->elements()) {
    if (!e.is_int()) return std::nullopt;
    out.push_back(e.as_int());
  }
  return out;
}

// A config entry that is an int; `fallback` when absent; nullopt for
// anything else.
std::optional<int64_t> int_item(const ArgumentDict& config,
                                std::string_view key, int64_t fallback) {
  const Argument* a = find_item(config, key);
  if (a == nullptr) return fallback;
  if (!a->is_int()) return std::nullopt;
  return a->as_int();
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
  const at::Tensor scale = module_tensor(m, "scale");
  const at::Tensor zero_point = module_tensor(m, "zero_point");
  if (!stride || !padding || !dilation || !groups || !scale.defined() ||
      !zero_point.defined() || scale.numel() != 1 || zero_point.numel() != 1) {
    return std::nullopt;
  }
  QuantizedConvParams p;
  p.stride = *stride;
  p.padding = *padding;
  p.dilation = *dilation;
  p.groups = *groups;
  p.output_scale = scale.item<double>();
  p.output_zero_point = zero_point.item<int64_t>();
  p.relu = relu;
  return p;
}

// A scale and zero point OnednnQConv takes for a quint8 input.
bool usable_qparams(double scale, int64_t zero_point) {
  return std::isfinite(scale) && scale > 0 && zero_point >= 0 &&
         zero_point <= 255;
}

class QuantizedConvStep : public OnednnStep {
 public:
  QuantizedConvStep(std::unique_ptr<OnednnQConv> conv, int32_t input)
      : conv_(std::move(conv)) {
    inputs_.push_back(input);
  }
  const std::vector<int64_t>& output_sizes() const override {
    return conv_->output_sizes();
  }
  at::Tensor empty_output() const override {
    return at::_empty_affine_quantized(
        conv_->output_sizes(), at::TensorOptions().dtype(at::kQUInt8),
        conv_->params().output_scale, conv_->params().output_zero_point,
        at::MemoryFormat::ChannelsLast);
  }
  bool fits(const std::vector<const at::Tensor*>& x) const override {
    const at::Tensor* t = x[0];
    return t != nullptr && t->defined() && t->scalar_type() == at::kQUInt8 &&
           t->device().is_cpu() && t->qscheme() == at::kPerTensorAffine &&
           t->sizes() == c10::IntArrayRef(conv_->input_sizes()) &&
           usable_qparams(t->q_scale(), t->q_zero_point());
  }
  // The clamp fused (fuse_quantized_clamp); false when it has a ReLU or a
  // clamp already or oneDNN refuses it.
  bool fuse_clamp(double lo, double hi) {
    const QuantizedConvParams& now = conv_->params();
    if (now.relu || now.clamp || !(lo <= hi)) return false;
    QuantizedConvParams p = now;
    p.clamp = std::pair{lo, hi};
    std::unique_ptr<OnednnQConv> conv = conv_->with_params(p);
    if (conv == nullptr) return false;
    conv_ = std::move(conv);
    return true;
  }
  void run(const std::vector<const at::Tensor*>& x,
           const at::Tensor& out) override {
    const at::Tensor& input = *x[0];
    const double scale = input.q_scale();
    const int64_t zero_point = input.q_zero_point();
    const QuantizedConvParams& now = conv_->params();
    if (scale != now.input_scale || zero_point != now.input_zero_point) {
      QuantizedConvParams p = now;
      p.input_scale = scale;
      p.input_zero_point = zero_point;
      std::unique_ptr<OnednnQConv> conv = conv_->with_params(p);
      // create() accepted these sizes with other usable qparams (fits()).
      TORCH_CHECK(conv != nullptr, "OnednnQConv refused input qparams ", scale,
                  ", ", zero_point);
      conv_ = std::move(conv);
    }
    conv_->run(input, out);
  }

 private:
  std::unique_ptr<OnednnQConv> conv_;  // its params: the input's last qparams
};

}  // namespace

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

bool fuse_quantized_clamp(OnednnStep& step, double lo, double hi) {
  auto* conv = dynamic_cast<QuantizedConvStep*>(&step);
  return conv != nullptr && conv->fuse_clamp(lo, hi);
}

std::unique_ptr<OnednnStep> bind_quantized_module_step(
    const ModuleKind& kind, const torch::nn::Module& module, int32_t input_slot,
    const std::vector<int64_t>& input_sizes) {
  bool relu = false;
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
  return std::make_unique<QuantizedConvStep>(std::move(conv), input_slot);
}

}  // namespace fx
