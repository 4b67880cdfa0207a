#include "fx_core/compile/onednn_steps.h"

#include <ATen/ATen.h>

#include <functional>
#include <optional>
#include <utility>

#include "fx_core/compile/conv_choice.h"
#include "fx_core/compile/linear_choice.h"
#include "fx_core/compile/onednn_conv.h"
#include "fx_core/compile/onednn_linear.h"
#include "fx_core/compile/onednn_matmul.h"
#include "fx_core/compile/window_attention.h"
#include "fx_core/runtime/ops/inference_op_names.h"

namespace fx {

using Kind = PlannedParam::Kind;

bool is_number(const PlannedParam& p) {
  return p.kind == Kind::kConstant &&
         (p.constant.isDouble() || p.constant.isInt()) && !p.constant.isBool();
}

double number(const PlannedParam& p) {
  return p.constant.isDouble() ? p.constant.toDouble()
                               : static_cast<double>(p.constant.toInt());
}

bool is_none(const PlannedParam& p) {
  return p.kind == Kind::kConstant && p.constant.isNone();
}

bool float_value(const PlannedParam& p) {
  return p.kind == Kind::kValue && p.float_cpu;
}

bool row_major(const PlannedParam& m) {
  int64_t expected = 1;
  for (size_t i = m.sizes.size(); i-- > 0;) {
    if (m.sizes[i] == 1) continue;
    if (m.strides[i] != expected) return false;
    expected *= m.sizes[i];
  }
  return true;
}

namespace {

// A float32 CPU tensor of `sizes`, any strides.
bool has_sizes(const at::Tensor* t, const std::vector<int64_t>& sizes) {
  return t != nullptr && t->defined() && t->scalar_type() == at::kFloat &&
         t->device().is_cpu() && t->layout() == at::kStrided && !t->is_conj() &&
         !t->is_neg() && t->sizes() == c10::IntArrayRef(sizes);
}

// A step's kernel and, while the plan tries two inside the network
// (OnednnStep::kernels), the other: use(i) puts kernel i in front; keep(i)
// drops the other and builds kernel i again through `rebuild` (with the
// SharedWeights then in scope).
template <typename Kernel>
class TrialKernels {
 public:
  using Rebuild = std::function<Kernel(Kernel)>;
  explicit TrialKernels(Kernel only) : front_(std::move(only)) {}
  TrialKernels(Kernel challenger, Kernel fallback, Rebuild rebuild,
               const void* group)
      : front_(std::move(challenger)),
        back_(std::move(fallback)),
        rebuild_(std::move(rebuild)),
        group_(group) {}
  const Kernel& front() const { return front_; }
  int count() const { return rebuild_ ? 2 : 1; }
  const void* group() const { return group_; }
  void use(int i) {
    if (rebuild_ && i != front_index_) {
      std::swap(front_, back_);
      front_index_ = i;
    }
  }
  void keep(int i) {
    if (!rebuild_) return;
    use(i);
    back_ = Kernel();
    front_ = rebuild_(std::move(front_));
    rebuild_ = nullptr;
  }

 private:
  Kernel front_, back_;
  Rebuild rebuild_;  // empty: one kernel
  const void* group_ = nullptr;
  int front_index_ = 0;
};

// ---------------------------------------------------- fx_inference.conv2d

class ConvStep : public OnednnStep {
 public:
  using Kernels = TrialKernels<std::unique_ptr<OnednnConv>>;
  ConvStep(Kernels conv, int32_t input, int32_t residual)
      : conv_(std::move(conv)) {
    inputs_.push_back(input);
    if (residual >= 0) inputs_.push_back(residual);
    residual_ = residual;
    sums_in_place_ = true;
  }
  const std::vector<int64_t>& output_sizes() const override {
    return conv().output_sizes();
  }
  at::Tensor empty_output() const override {
    return at::empty(conv().output_sizes(),
                     at::TensorOptions()
                         .dtype(at::kFloat)
                         .memory_format(at::MemoryFormat::ChannelsLast));
  }
  bool fits(const std::vector<const at::Tensor*>& x) const override {
    return has_sizes(x[0], conv().input_sizes()) &&
           (x.size() < 2 || has_sizes(x[1], conv().output_sizes()));
  }
  void run(const std::vector<const at::Tensor*>& x,
           const at::Tensor& out) override {
    conv_.front()->run(*x[0], x.size() > 1 ? x[1] : nullptr, out);
  }
  bool winograd() const override {
    return conv().algorithm() == ConvAlgorithm::kWinograd;
  }
  int kernels() const override { return conv_.count(); }
  void use_kernel(int i) override { conv_.use(i); }
  void keep_kernel(int i) override { conv_.keep(i); }
  const void* trial_group() const override { return conv_.group(); }

 private:
  const OnednnConv& conv() const { return *conv_.front(); }
  Kernels conv_;
};

// An int or a sequence of one or two ints as two values (conv2d's stride,
// ...).
bool int_pair(const PlannedParam& p, std::vector<int64_t>* out) {
  if (p.kind != Kind::kConstant) return false;
  const c10::IValue& v = p.constant;
  if (v.isInt()) {
    out->assign(2, v.toInt());
    return true;
  }
  std::vector<c10::IValue> items;
  if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) items.push_back(e);
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) items.push_back(e);
  } else {
    return false;
  }
  if (items.size() == 1) items.push_back(items[0]);
  if (items.size() != 2) return false;
  out->clear();
  for (const c10::IValue& e : items) {
    if (!e.isInt()) return false;
    out->push_back(e.toInt());
  }
  return true;
}

// fx_inference.conv2d's non-tensor arguments (parameters 3..6 and 8..10),
// when all are constants of the right types.
bool conv_params(const std::vector<PlannedParam>& p, FusedConvParams* out) {
  if (!int_pair(p[3], &out->stride) || !int_pair(p[4], &out->padding) ||
      !int_pair(p[5], &out->dilation) || p[6].kind != Kind::kConstant ||
      !p[6].constant.isInt() || p[8].kind != Kind::kConstant ||
      !p[8].constant.isString() || !is_number(p[9]) || !is_number(p[10])) {
    return false;
  }
  out->groups = p[6].constant.toInt();
  out->activation = p[8].constant.toStringRef();
  out->min_val = number(p[9]);
  out->max_val = number(p[10]);
  return true;
}

// fx_inference.conv2d's parameters as oneDNN can take them: a float32
// input, attribute weights (and bias, or None), a float32 residual or None,
// constant geometry and tail.
bool onednn_conv_call(const std::vector<PlannedParam>& p,
                      FusedConvParams* params) {
  if (p.size() != 11 || !float_value(p[0]) || p[1].kind != Kind::kAttribute ||
      (p[2].kind != Kind::kAttribute && !is_none(p[2])) ||
      (!float_value(p[7]) && !is_none(p[7])) || !conv_params(p, params)) {
    return false;
  }
  params->has_residual = !is_none(p[7]);
  return true;
}

at::Tensor attribute_or_undefined(const PlannedParam& p) {
  return p.attribute ? *p.attribute : at::Tensor();
}

// fx_inference.conv2d(input, weight, bias, stride, padding, dilation,
// groups, residual, activation, min_val, max_val): attribute weights,
// float32 values, the algorithm as conv_choice.h picks it.
std::unique_ptr<OnednnStep> bind_conv(const std::vector<PlannedParam>& p,
                                      const PlannedParam& out) {
  FusedConvParams params;
  if (!onednn_conv_call(p, &params)) return nullptr;
  if (params.has_residual && p[7].sizes != out.sizes) return nullptr;
  const at::Tensor& weight = *p[1].attribute;
  const at::Tensor bias = attribute_or_undefined(p[2]);
  const int32_t residual = params.has_residual ? p[7].slot : -1;
  if (std::optional<ConvTrial> trial =
          conv_trial(weight, bias, params, p[0].sizes)) {
    if (trial->measured->output_sizes() != out.sizes) return nullptr;
    auto rebuild = [weight, bias, params](std::unique_ptr<OnednnConv> kept) {
      return rebuild_conv(std::move(kept), weight, bias, params);
    };
    return std::make_unique<ConvStep>(
        ConvStep::Kernels(std::move(trial->measured),
                          std::move(trial->first_choice), rebuild,
                          trial->group),
        p[0].slot, residual);
  }
  std::unique_ptr<OnednnConv> conv =
      choose_onednn_conv(weight, bias, params, p[0].sizes);
  if (conv == nullptr || conv->output_sizes() != out.sizes) return nullptr;
  return std::make_unique<ConvStep>(ConvStep::Kernels(std::move(conv)),
                                    p[0].slot, residual);
}

// ---------------------------------------------------- fx_inference.linear

class LinearStep : public OnednnStep {
 public:
  using Kernels = TrialKernels<ChosenLinear>;
  LinearStep(Kernels linear, int32_t input, int32_t residual)
      : linear_(std::move(linear)) {
    inputs_.push_back(input);
    if (residual >= 0) inputs_.push_back(residual);
    residual_ = residual;
  }
  const std::vector<int64_t>& output_sizes() const override {
    return kernel().output_sizes();
  }
  bool fits(const std::vector<const at::Tensor*>& x) const override {
    return has_sizes(x[0], kernel().input_sizes()) &&
           (x.size() < 2 || has_sizes(x[1], output_sizes()));
  }
  void run(const std::vector<const at::Tensor*>& x,
           const at::Tensor& out) override {
    linear_.front().impl->run(*x[0], x.size() > 1 ? x[1] : nullptr, out);
  }
  const char* engine() const override {
    switch (linear_.front().kernel) {
      case LinearKernel::kBlas:
        return "blas";
      case LinearKernel::kPanel:
        return "panel";
      default:
        return "onednn";
    }
  }
  int kernels() const override { return linear_.count(); }
  void use_kernel(int i) override { linear_.use(i); }
  void keep_kernel(int i) override { linear_.keep(i); }
  const void* trial_group() const override { return linear_.group(); }

 private:
  const FusedLinearKernel& kernel() const { return *linear_.front().impl; }
  Kernels linear_;
};

// fx_inference.linear(input, weight, bias, residual, activation, min_val,
// max_val): attribute weights, float32 values, on oneDNN, PanelLinear or the
// BLAS as linear_choice.h picks.
std::unique_ptr<OnednnStep> bind_linear(const std::vector<PlannedParam>& p,
                                        const PlannedParam& out) {
  if (p.size() != 7 || !float_value(p[0]) || p[1].kind != Kind::kAttribute ||
      (p[2].kind != Kind::kAttribute && !is_none(p[2])) ||
      (!float_value(p[3]) && !is_none(p[3])) || p[4].kind != Kind::kConstant ||
      !p[4].constant.isString() || !is_number(p[5]) || !is_number(p[6])) {
    return nullptr;
  }
  FusedLinearParams params;
  params.has_residual = !is_none(p[3]);
  params.activation = p[4].constant.toStringRef();
  params.min_val = number(p[5]);
  params.max_val = number(p[6]);
  if (params.has_residual && p[3].sizes != out.sizes) return nullptr;
  const at::Tensor bias = attribute_or_undefined(p[2]);
  const int32_t residual = params.has_residual ? p[3].slot : -1;
  const at::Tensor& weight = *p[1].attribute;
  const std::vector<int64_t>& in = p[0].sizes;
  std::unique_ptr<LinearStep> step;
  if (std::optional<LinearTrial> trial =
          linear_trial(weight, bias, params, in)) {
    auto rebuild = [weight, bias, params, in](ChosenLinear kept) {
      return rebuild_linear(std::move(kept), weight, bias, params, in);
    };
    step = std::make_unique<LinearStep>(
        LinearStep::Kernels(std::move(trial->measured), std::move(trial->other),
                            rebuild, trial->group),
        p[0].slot, residual);
  } else {
    ChosenLinear linear = choose_linear(weight, bias, params, in);
    if (linear.impl == nullptr) return nullptr;
    step = std::make_unique<LinearStep>(LinearStep::Kernels(std::move(linear)),
                                        p[0].slot, residual);
  }
  // The planned buffer takes the reference's layout: it must be the
  // contiguous one the kernel writes.
  if (step->output_sizes() != out.sizes || !row_major(out)) return nullptr;
  return step;
}

// ---------------------------------------------------- fx_inference.matmul

class MatmulStep : public OnednnStep {
 public:
  MatmulStep(std::unique_ptr<OnednnMatmul> matmul, int32_t a, int32_t b)
      : matmul_(std::move(matmul)) {
    inputs_ = {a, b};
  }
  const std::vector<int64_t>& output_sizes() const override {
    return matmul_->output_sizes();
  }
  bool fits(const std::vector<const at::Tensor*>& x) const override {
    return x[0] != nullptr && x[1] != nullptr && matmul_->fits(*x[0], *x[1]);
  }
  void run(const std::vector<const at::Tensor*>& x,
           const at::Tensor& out) override {
    matmul_->run(*x[0], *x[1], out);
  }

 private:
  std::unique_ptr<OnednnMatmul> matmul_;
};

// fx_inference.matmul(input, other, scale): float32 values of one rank.
std::unique_ptr<OnednnStep> bind_matmul(const std::vector<PlannedParam>& p,
                                        const PlannedParam& out) {
  if (p.size() != 3 || !float_value(p[0]) || !float_value(p[1]) ||
      !is_number(p[2])) {
    return nullptr;
  }
  std::unique_ptr<OnednnMatmul> matmul = OnednnMatmul::create(
      {p[0].sizes, p[0].strides}, {p[1].sizes, p[1].strides}, number(p[2]));
  if (matmul == nullptr || matmul->output_sizes() != out.sizes ||
      !row_major(out)) {
    return nullptr;
  }
  return std::make_unique<MatmulStep>(std::move(matmul), p[0].slot, p[1].slot);
}

// ---------------------------------------- fx_inference.window_attention

class WindowAttentionStep : public OnednnStep {
 public:
  WindowAttentionStep(std::unique_ptr<WindowAttention> attention, int32_t input,
                      int32_t bias)
      : attention_(std::move(attention)) {
    inputs_ = {input, bias};
  }
  const std::vector<int64_t>& output_sizes() const override {
    return attention_->input_sizes();
  }
  bool fits(const std::vector<const at::Tensor*>& x) const override {
    return has_sizes(x[0], attention_->input_sizes()) &&
           has_sizes(x[1], attention_->bias_sizes());
  }
  void run(const std::vector<const at::Tensor*>& x,
           const at::Tensor& out) override {
    attention_->run(*x[0], *x[1], out);
  }

 private:
  std::unique_ptr<WindowAttention> attention_;
};

// A constant list or tuple of exactly two ints.
bool two_ints(const PlannedParam& p, std::vector<int64_t>* out) {
  if (p.kind != Kind::kConstant ||
      !(p.constant.isList() || p.constant.isTuple())) {
    return false;
  }
  const size_t n = p.constant.isList() ? p.constant.toListRef().size()
                                       : p.constant.toTupleRef().size();
  return n == 2 && int_pair(p, out);
}

bool attribute_or_none(const PlannedParam& p) {
  return p.kind == Kind::kAttribute || is_none(p);
}

// fx_inference.window_attention(input, qkv_weight, proj_weight,
// relative_position_bias, window_size, num_heads, shift_size,
// attention_dropout, dropout, qkv_bias, proj_bias, logit_scale): attribute
// weights and biases, float32 values, no dropout, no logit scale.
std::unique_ptr<OnednnStep> bind_window_attention(
    const std::vector<PlannedParam>& p, const PlannedParam& out) {
  WindowAttentionParams params;
  if (p.size() != 12 || !float_value(p[0]) || p[1].kind != Kind::kAttribute ||
      p[2].kind != Kind::kAttribute || !float_value(p[3]) ||
      !two_ints(p[4], &params.window_size) || p[5].kind != Kind::kConstant ||
      !p[5].constant.isInt() || !two_ints(p[6], &params.shift_size) ||
      !is_number(p[7]) || number(p[7]) != 0.0 || !is_number(p[8]) ||
      number(p[8]) != 0.0 || !attribute_or_none(p[9]) ||
      !attribute_or_none(p[10]) || !is_none(p[11]) || !row_major(out)) {
    return nullptr;
  }
  params.num_heads = p[5].constant.toInt();
  std::unique_ptr<WindowAttention> attention = WindowAttention::create(
      *p[1].attribute, attribute_or_undefined(p[9]), *p[2].attribute,
      attribute_or_undefined(p[10]), params, p[0].sizes, p[3].sizes);
  if (attention == nullptr || attention->input_sizes() != out.sizes) {
    return nullptr;
  }
  return std::make_unique<WindowAttentionStep>(std::move(attention), p[0].slot,
                                               p[3].slot);
}

}  // namespace

std::unique_ptr<OnednnStep> bind_depthwise_fusion(
    const std::vector<PlannedParam>& first,
    const std::vector<PlannedParam>& second, const PlannedParam& out) {
  FusedConvParams a, b;
  if (!float_value(out) || !onednn_conv_call(first, &a) ||
      !onednn_conv_call(second, &b) || a.has_residual || b.has_residual) {
    return nullptr;
  }
  const std::vector<int64_t> ones = {1, 1};
  if (b.groups != first[1].attribute->size(0) || b.padding != ones ||
      b.dilation != ones || b.stride[0] != b.stride[1]) {
    return nullptr;
  }
  const DepthwiseTail tail{*second[1].attribute,
                           attribute_or_undefined(second[2]),
                           b.stride[0],
                           b.activation,
                           b.min_val,
                           b.max_val};
  std::unique_ptr<OnednnConv> conv = choose_depthwise_fusion(
      *first[1].attribute, attribute_or_undefined(first[2]), a, first[0].sizes,
      tail);
  if (conv == nullptr || conv->output_sizes() != out.sizes) return nullptr;
  return std::make_unique<ConvStep>(ConvStep::Kernels(std::move(conv)),
                                    first[0].slot, -1);
}

at::Tensor OnednnStep::empty_output() const {
  return at::empty(output_sizes(), at::kFloat);
}

bool onednn_sets_layout(const std::string& target) {
  return inference_op(target) == "conv2d";
}

std::unique_ptr<OnednnStep> bind_onednn_step(
    const std::string& target, const std::vector<PlannedParam>& params,
    const PlannedParam& out) {
  if (!float_value(out)) return nullptr;
  const std::string_view op = inference_op(target);
  if (op == "conv2d") return bind_conv(params, out);
  if (op == "linear") return bind_linear(params, out);
  if (op == "matmul") return bind_matmul(params, out);
  if (op == "window_attention") return bind_window_attention(params, out);
  return nullptr;
}

}  // namespace fx
