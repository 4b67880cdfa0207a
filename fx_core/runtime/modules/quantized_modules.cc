// PyTorch's lowered quantized modules (what torch.ao.quantization's
// convert_fx makes): Conv2d, ConvReLU2d, Linear and LinearReLU of
// torch.ao.nn.quantized / torch.nn.intrinsic.quantized, run on LibTorch's
// own int8 kernels (quantized::conv2d, quantized::linear and their _relu
// forms), as their Python forwards call them; the dynamically quantized
// Linear and LinearReLU (quantized::linear_dynamic, float in and out); and
// BatchNorm2d and Hardswish, whose forwards are one quantized op on plain
// tensors and numbers.
//
// In a file each is its constructor's arguments (the config) and four
// tensors: `weight` (the int8 weight, per tensor or per channel), `bias`
// (float, absent with bias=False), `scale` and `zero_point` (the output's
// quantization, 0-dim; not for the dynamic ones). The module adopts them when
// the weights load (FunctionalModuleImpl's optional buffers); on first use it
// prepacks weight and bias for the quantized engine (below) and reads the
// output's scale and zero point, once, doing so again only when one of the four
// tensors is replaced or written to.
//
// The engine: oneDNN (torch's "onednn", the engine torch 1.13's default
// onednn qconfig targets, with VNNI int8 kernels on CPUs that have them)
// when LibTorch has it, else LibTorch's current engine; $FX_QENGINE
// (onednn, fbgemm, qnnpack) chooses another. Prepacking sets LibTorch's
// process-wide engine for the moment it runs and restores it.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/modules/functional_module.h"
#include "fx_core/runtime/modules/module_spec.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using c10::IValue;
using nn::FunctionalModuleImpl;

// The quantized engine weights are prepacked for.
at::QEngine prepack_engine() {
  const auto& supported = at::globalContext().supportedQEngines();
  auto has = [&supported](at::QEngine e) {
    return std::find(supported.begin(), supported.end(), e) != supported.end();
  };
  const char* chosen = std::getenv("FX_QENGINE");
  if (chosen != nullptr && *chosen != '\0') {
    const std::string name = chosen;
    at::QEngine e = name == "onednn"    ? at::QEngine::ONEDNN
                    : name == "fbgemm"  ? at::QEngine::FBGEMM
                    : name == "qnnpack" ? at::QEngine::QNNPACK
                                        : at::QEngine::NoQEngine;
    if (e == at::QEngine::NoQEngine || !has(e)) {
      throw FxError(cat("$FX_QENGINE is '", name,
                        "': not a quantized engine this LibTorch has "
                        "(onednn, fbgemm or qnnpack)"));
    }
    return e;
  }
  return has(at::QEngine::ONEDNN) ? at::QEngine::ONEDNN
                                  : at::globalContext().qEngine();
}

// Runs a registered operator boxed (its packed-weights arguments are
// TorchScript class objects, which the typed API would need their C++
// classes for).
IValue call_boxed(const c10::OperatorHandle& op, std::vector<IValue> stack) {
  op.callBoxed(&stack);
  return std::move(stack.at(0));
}

c10::OperatorHandle find_op(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

// The module's tensor `name`, which its forward needs.
at::Tensor required(const FunctionalModuleImpl& m, const char* name) {
  c10::optional<at::Tensor> t = m.tensor(name);
  if (!t || !t->defined()) {
    throw FxError(cat(m.name(), ": the module has no '", name,
                      "' (a quantized module's weights give it)"));
  }
  return *t;
}

at::Tensor optional_tensor(const FunctionalModuleImpl& m, const char* name) {
  c10::optional<at::Tensor> t = m.tensor(name);
  return t ? *t : at::Tensor();
}

// `weight` must be an int8 tensor of `shape` (-1: any size).
void check_weight(const FunctionalModuleImpl& m, const at::Tensor& weight,
                  const std::vector<int64_t>& shape) {
  bool fits = weight.is_quantized() && weight.scalar_type() == at::kQInt8 &&
              weight.dim() == static_cast<int64_t>(shape.size());
  for (size_t d = 0; fits && d < shape.size(); ++d) {
    fits = shape[d] < 0 || weight.size(static_cast<int64_t>(d)) == shape[d];
  }
  if (!fits) {
    throw FxError(cat(m.name(),
                      ": its weight must be a quantized qint8 "
                      "tensor of shape ",
                      c10::str(at::IntArrayRef(shape)), ", not ",
                      weight.is_quantized() ? "" : "an unquantized ",
                      c10::toString(weight.scalar_type()), " of shape ",
                      c10::str(weight.sizes())));
  }
}

// Sets LibTorch's quantized engine to the prepacking one while it lives
// (under a lock: the engine is process-wide); restores the previous one.
class PrepackEngineScope {
 public:
  PrepackEngineScope() : lock_(mutex()), saved_(at::globalContext().qEngine()) {
    at::globalContext().setQEngine(prepack_engine());
  }
  ~PrepackEngineScope() { at::globalContext().setQEngine(saved_); }
  PrepackEngineScope(const PrepackEngineScope&) = delete;
  PrepackEngineScope& operator=(const PrepackEngineScope&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  std::lock_guard<std::mutex> lock_;
  at::QEngine saved_;
};

// The prepack operator `op` on `args` for the prepacking engine; an
// FxError naming the module when LibTorch refuses the weights.
IValue prepack(const FunctionalModuleImpl& m, const c10::OperatorHandle& op,
               std::vector<IValue> args) {
  PrepackEngineScope engine;
  try {
    return call_boxed(op, std::move(args));
  } catch (const c10::Error& e) {
    throw FxError(cat(m.name(), ": cannot prepack its weights: ",
                      e.what_without_backtrace()));
  }
}

// The output's quantization from the module's 0-dim `scale` and
// `zero_point`.
std::pair<double, int64_t> output_qparams(const FunctionalModuleImpl& m,
                                          const at::Tensor& scale,
                                          const at::Tensor& zero_point) {
  if (scale.numel() != 1 || zero_point.numel() != 1) {
    throw FxError(cat(m.name(),
                      ": scale and zero_point must be one number "
                      "each"));
  }
  double s = scale.item<double>();
  if (!(s > 0) || !std::isfinite(s)) {
    throw FxError(cat(m.name(), ": its output scale is ", c10::str(s),
                      " (a quantization scale is positive and finite)"));
  }
  return {s, zero_point.item<int64_t>()};
}

// The module's config `name` as `n` ints (an int stands for n copies).
std::vector<int64_t> ints_of(const FunctionalModuleImpl& m, const char* name,
                             size_t n) {
  IValue v = ntuple(m.config(name), n);
  std::vector<int64_t> out;
  for (const IValue& x : v.toTupleRef().elements()) out.push_back(x.toInt());
  return out;
}

// One family of packed-weight modules: its prepack operator and the
// operator its forward calls (plain and with ReLU fused). `check` throws
// for a weight that does not fit the module's config and returns the
// prepack arguments after weight and bias.
struct PackedKind {
  std::string prepack;
  std::pair<std::string, std::string> op, op_relu;  // name, overload
  std::function<std::vector<IValue>(const FunctionalModuleImpl&,
                                    const at::Tensor& weight)>
      check;
  std::function<void(const FunctionalModuleImpl&, const at::Tensor& input)>
      check_input;
};

// forward(input) = op(input, packed, scale, zero_point), as the Python
// classes' forwards call ops.quantized.*. Weight and bias are prepacked,
// and the output's qparams read, once for the module (FunctionalModuleImpl::
// derived): again only when one of those four tensors changes.
CustomForward packed_forward(const PackedKind& kind, bool relu) {
  const auto& [name, overload] = relu ? kind.op_relu : kind.op;
  const c10::OperatorHandle prepack_op = find_op(kind.prepack.c_str(), "");
  const c10::OperatorHandle op = find_op(name.c_str(), overload.c_str());
  return [kind, prepack_op, op](FunctionalModuleImpl& m, OpArgs& a) -> IValue {
    const at::Tensor& input = a.tensor(0);
    if (kind.check_input) kind.check_input(m, input);
    at::Tensor weight = required(m, "weight");
    at::Tensor bias = optional_tensor(m, "bias");
    at::Tensor scale = required(m, "scale");
    at::Tensor zero_point = required(m, "zero_point");
    IValue state = m.derived({weight, bias, scale, zero_point}, [&] {
      std::vector<IValue> args = {weight,
                                  bias.defined() ? IValue(bias) : IValue()};
      for (IValue& extra : kind.check(m, weight)) {
        args.push_back(std::move(extra));
      }
      auto [s, z] = output_qparams(m, scale, zero_point);
      return IValue(c10::ivalue::Tuple::create(
          {prepack(m, prepack_op, std::move(args)), s, z}));
    });
    const auto& packed = state.toTupleRef().elements();
    return call_boxed(op, {input, packed[0], packed[1], packed[2]});
  };
}

// Conv1d, Conv2d or Conv3d (`dims` spatial dimensions): weight (out,
// in / groups, kernel...), input (N, C, spatial...). conv1d's operators
// have no .new overload; conv2d's and conv3d's do.
PackedKind conv_kind(size_t dims) {
  const std::string n = std::to_string(dims);
  const std::string overload = dims == 1 ? "" : "new";
  return PackedKind{
      "quantized::conv" + n + "d_prepack",
      {"quantized::conv" + n + "d", overload},
      {"quantized::conv" + n + "d_relu", overload},
      [dims](const FunctionalModuleImpl& m, const at::Tensor& weight) {
        const int64_t groups = m.config("groups").toInt();
        std::vector<int64_t> shape{m.config("out_channels").toInt(),
                                   m.config("in_channels").toInt() / groups};
        for (int64_t k : ints_of(m, "kernel_size", dims)) shape.push_back(k);
        check_weight(m, weight, shape);
        return std::vector<IValue>{ints_of(m, "stride", dims),
                                   ints_of(m, "padding", dims),
                                   ints_of(m, "dilation", dims), groups};
      },
      [dims](const FunctionalModuleImpl& m, const at::Tensor& input) {
        if (input.dim() != static_cast<int64_t>(dims) + 2) {
          throw FxError(cat(m.name(), ": input must have ", dims + 2,
                            " dimensions (N, C and ", dims,
                            " spatial), not shape ", c10::str(input.sizes())));
        }
      }};
}

const PackedKind& linear_kind() {
  static const PackedKind kind{
      "quantized::linear_prepack",
      {"quantized::linear", ""},
      {"quantized::linear_relu", ""},
      [](const FunctionalModuleImpl& m, const at::Tensor& weight) {
        check_weight(m, weight,
                     {m.config("out_features").toInt(),
                      m.config("in_features").toInt()});
        return std::vector<IValue>{};
      },
      nullptr};
  return kind;
}

// torch.ao.nn.quantized.dynamic's Linear and torch.nn.intrinsic's dynamic
// LinearReLU (qint8 weights): the input and output stay float, the input is
// quantized per call. forward(input) = op(input, packed, reduce_range=True)
// .to(input.dtype), as torch 1.13's (version 4) modules call
// quantized::linear_dynamic and quantized::linear_relu_dynamic; weight and
// bias prepacked once for the module, again only when one changes.
CustomForward dynamic_linear_forward(bool relu) {
  const c10::OperatorHandle prepack_op =
      find_op("quantized::linear_prepack", "");
  const c10::OperatorHandle op = find_op(
      relu ? "quantized::linear_relu_dynamic" : "quantized::linear_dynamic",
      "");
  return [prepack_op, op](FunctionalModuleImpl& m, OpArgs& a) -> IValue {
    const at::Tensor& input = a.tensor(0);
    at::Tensor weight = required(m, "weight");
    at::Tensor bias = optional_tensor(m, "bias");
    IValue packed = m.derived({weight, bias}, [&] {
      linear_kind().check(m, weight);
      return prepack(m, prepack_op,
                     {weight, bias.defined() ? IValue(bias) : IValue()});
    });
    if (!input.is_floating_point()) {
      throw FxError(cat(m.name(),
                        ": a dynamically quantized Linear takes a "
                        "float input, not ",
                        c10::toString(input.scalar_type())));
    }
    at::Tensor y = call_boxed(op, {input, packed, true}).toTensor();
    return y.to(input.scalar_type());
  };
}

void declare_tensors(FunctionalModuleImpl& m, OpArgs&) {
  for (const char* name : {"weight", "bias", "scale", "zero_point"}) {
    m.declare_optional_buffer(name);
  }
}

// `forward_signature`: the Python class's forward without self (torch
// 1.13's convolutions take `input`, its Linear and LinearReLU classes `x`).
FunctionalModuleSpec quantized_spec(std::string type, const char* init,
                                    CustomForward forward,
                                    const char* forward_signature = "input") {
  FunctionalModuleSpec spec{std::move(type), init, forward_signature, "", {}};
  spec.parameters = declare_tensors;
  spec.custom = std::move(forward);
  return spec;
}

void check_conv_config(OpArgs& init) {
  const int64_t groups = init.to_int(6);
  if (groups < 1 || init.to_int(0) % groups != 0 ||
      init.to_int(1) % groups != 0) {
    throw FxError(cat("groups ", groups, " must divide in_channels ",
                      init.to_int(0), " and out_channels ", init.to_int(1)));
  }
  if (init.to_string(8) != "zeros") {
    throw FxError(cat("padding_mode '", init.to_string(8),
                      "': the quantized convolutions here take 'zeros'"));
  }
}

// torch.ao.nn.quantized's BatchNorm2d: the float module's parameters and
// buffers plus its output's scale and zero_point (0-dim buffers, as its
// state_dict holds them), forward quantized::batch_norm2d.
FunctionalModuleSpec batch_norm2d_spec() {
  FunctionalModuleSpec spec{
      "torch.ao.nn.quantized.modules.batchnorm.BatchNorm2d",
      "num_features, eps=1e-05, momentum=0.1, device=None, dtype=None",
      "input",
      "torch.ops.quantized.batch_norm2d",
      {"input", "self.weight", "self.bias", "self.running_mean",
       "self.running_var", "eps", "self.scale", "self.zero_point"}};
  spec.parameters = [](FunctionalModuleImpl& m, OpArgs& init) {
    const int64_t c = init.to_int(0);
    m.register_parameter("weight", at::ones({c}));
    m.register_parameter("bias", at::zeros({c}));
    m.register_buffer("running_mean", at::zeros({c}));
    m.register_buffer("running_var", at::ones({c}));
    m.register_buffer("num_batches_tracked", at::zeros({}, at::kLong));
    m.register_buffer("scale", at::ones({}));
    m.register_buffer("zero_point", at::zeros({}, at::kLong));
  };
  spec.config_rules = {ints_in("num_features", 1, kMaxConfigInt)};
  spec.weight_shapes = [](OpArgs& init) {
    const int64_t c = init.to_int(0);
    return WeightShapes{{"weight", {c}},
                        {"bias", {c}},
                        {"running_mean", {c}},
                        {"running_var", {c}},
                        {"num_batches_tracked", {}},
                        {"scale", {}},
                        {"zero_point", {}}};
  };
  return spec;
}

// torch.ao.nn.quantized's Hardswish(scale, zero_point): forward
// quantized::hardswish with the output's quantization.
FunctionalModuleSpec hardswish_spec() {
  FunctionalModuleSpec spec{
      "torch.ao.nn.quantized.modules.activation.Hardswish",
      "scale, zero_point, device=None, dtype=None",
      "input",
      "torch.ops.quantized.hardswish",
      {"input", "scale", "zero_point"}};
  spec.config_rules = {float_in("scale", 0, 1e30),
                       ints_in("zero_point", -kMaxConfigInt, kMaxConfigInt)};
  return spec;
}

// torch.ao.nn.quantized's LeakyReLU(scale, zero_point, negative_slope,
// inplace), scale and zero_point 0-dim buffers: forward
// quantized::leaky_relu; and ELU(scale, zero_point, alpha), plain numbers:
// forward quantized::elu.
FunctionalModuleSpec leaky_relu_spec() {
  FunctionalModuleSpec spec{
      "torch.ao.nn.quantized.modules.activation.LeakyReLU",
      "scale, zero_point, negative_slope=0.01, inplace=False, device=None, "
      "dtype=None",
      "input",
      "torch.ops.quantized.leaky_relu",
      {"input", "negative_slope", "inplace", "self.scale", "self.zero_point"}};
  spec.parameters = [](FunctionalModuleImpl& m, OpArgs& init) {
    m.register_buffer("scale", at::scalar_tensor(init.to_double(0)));
    m.register_buffer("zero_point",
                      at::scalar_tensor(init.to_int(1), at::kLong));
  };
  spec.config_rules = {float_in("scale", 0, 1e30),
                       ints_in("zero_point", -kMaxConfigInt, kMaxConfigInt)};
  spec.weight_shapes = [](OpArgs&) {
    return WeightShapes{{"scale", {}}, {"zero_point", {}}};
  };
  return spec;
}

FunctionalModuleSpec elu_spec() {
  FunctionalModuleSpec spec{"torch.ao.nn.quantized.modules.activation.ELU",
                            "scale, zero_point, alpha=1.0",
                            "input",
                            "torch.ops.quantized.elu",
                            {"input", "scale", "zero_point", "alpha"}};
  spec.config_rules = {float_in("scale", 0, 1e30),
                       ints_in("zero_point", -kMaxConfigInt, kMaxConfigInt)};
  return spec;
}

// torch.ao.nn.quantized's LayerNorm, GroupNorm and InstanceNorm1d/2d/3d:
// the float module's weight and bias (constructor arguments in Python,
// None in a file's config: the weights file gives them; registered here
// when the config says the norm is affine) and the output's scale and
// zero_point (0-dim buffers); forward one quantized norm operator.
struct QuantizedNorm {
  std::string type;
  std::string init;
  const char* affine;  // the config flag saying weight and bias exist
  std::function<std::vector<int64_t>(OpArgs&)> weight_shape;
  // The operator's arguments before weight and bias.
  std::function<std::vector<IValue>(const FunctionalModuleImpl&,
                                    const at::Tensor&)>
      leading;
  const char* op;
};

FunctionalModuleSpec quantized_norm_spec(const QuantizedNorm& norm) {
  const c10::OperatorHandle op = find_op(norm.op, "");
  FunctionalModuleSpec spec{norm.type, norm.init, "input", "", {}};
  spec.parameters = [norm](FunctionalModuleImpl& m, OpArgs& init) {
    if (m.config(norm.affine).toBool()) {
      std::vector<int64_t> shape = norm.weight_shape(init);
      m.register_parameter("weight", at::ones(shape));
      m.register_parameter("bias", at::zeros(shape));
    }
    m.register_buffer(
        "scale", at::scalar_tensor(m.config("scale").toScalar().toDouble()));
    m.register_buffer(
        "zero_point",
        at::scalar_tensor(m.config("zero_point").toInt(), at::kLong));
  };
  spec.config_rules = {float_in("scale", 0, 1e30),
                       ints_in("zero_point", -kMaxConfigInt, kMaxConfigInt)};
  spec.custom = [norm, op](FunctionalModuleImpl& m, OpArgs& a) -> IValue {
    const at::Tensor& input = a.tensor(0);
    std::vector<IValue> args = norm.leading(m, input);
    at::Tensor weight = optional_tensor(m, "weight");
    at::Tensor bias = optional_tensor(m, "bias");
    args.push_back(weight.defined() ? IValue(weight) : IValue());
    args.push_back(bias.defined() ? IValue(bias) : IValue());
    args.push_back(m.config("eps"));
    auto [scale, zero_point] =
        output_qparams(m, required(m, "scale"), required(m, "zero_point"));
    args.push_back(scale);
    args.push_back(zero_point);
    return call_boxed(op, std::move(args));
  };
  return spec;
}

// An int, or a list or tuple of ints, as a vector (normalized_shape).
std::vector<int64_t> int_list(const IValue& v) {
  if (v.isInt()) return {v.toInt()};
  if (v.isTuple()) {
    std::vector<int64_t> out;
    for (const IValue& x : v.toTupleRef().elements()) out.push_back(x.toInt());
    return out;
  }
  return v.toIntVector();
}

std::vector<QuantizedNorm> quantized_norms() {
  const std::string path = "torch.ao.nn.quantized.modules.normalization.";
  auto channels = [](OpArgs& init) {
    return std::vector<int64_t>{init.to_int(0)};
  };
  std::vector<QuantizedNorm> norms = {
      {path + "LayerNorm",
       "normalized_shape, weight, bias, scale, zero_point, eps=1e-05, "
       "elementwise_affine=True, device=None, dtype=None",
       "elementwise_affine", [](OpArgs& init) { return int_list(init[0]); },
       [](const FunctionalModuleImpl& m, const at::Tensor& input) {
         return std::vector<IValue>{
             input, IValue(int_list(m.config("normalized_shape")))};
       },
       "quantized::layer_norm"},
      {path + "GroupNorm",
       "num_groups, num_channels, weight, bias, scale, zero_point, "
       "eps=1e-05, affine=True, device=None, dtype=None",
       "affine",
       [](OpArgs& init) { return std::vector<int64_t>{init.to_int(1)}; },
       [](const FunctionalModuleImpl& m, const at::Tensor& input) {
         return std::vector<IValue>{input, m.config("num_groups")};
       },
       "quantized::group_norm"}};
  for (const char* dims : {"1d", "2d", "3d"}) {
    norms.push_back(
        {path + "InstanceNorm" + dims,
         "num_features, weight, bias, scale, zero_point, eps=1e-05, "
         "momentum=0.1, affine=False, track_running_stats=False, "
         "device=None, dtype=None",
         "affine", channels,
         [](const FunctionalModuleImpl&, const at::Tensor& input) {
           return std::vector<IValue>{input};
         },
         "quantized::instance_norm"});
  }
  return norms;
}

// The eager-mode stubs torch.ao.quantization.convert leaves in a model
// (torch.fx traces them as modules): Quantize(scale, zero_point, dtype),
// whose forward is torch.quantize_per_tensor with its 1-element `scale`
// and `zero_point` buffers; DeQuantize, forward x.dequantize(); and the
// quantized Dropout, the identity.
FunctionalModuleSpec quantize_spec() {
  FunctionalModuleSpec spec{"torch.ao.nn.quantized.modules.Quantize",
                            "scale, zero_point, dtype, factory_kwargs=None",
                            "X",
                            "torch.quantize_per_tensor",
                            {"X", "self.scale", "self.zero_point", "dtype"}};
  spec.parameters = [](FunctionalModuleImpl& m, OpArgs& init) {
    m.register_buffer("scale", at::tensor({init.to_double(0)}));
    m.register_buffer("zero_point", at::tensor({init.to_int(1)}, at::kLong));
  };
  spec.config_rules = {float_in("scale", 0, 1e30),
                       ints_in("zero_point", -kMaxConfigInt, kMaxConfigInt)};
  spec.weight_shapes = [](OpArgs&) {
    return WeightShapes{{"scale", {1}}, {"zero_point", {1}}};
  };
  return spec;
}

FunctionalModuleSpec dequantize_spec() {
  return FunctionalModuleSpec{"torch.ao.nn.quantized.modules.DeQuantize",
                              "",
                              "Xq",
                              "torch.dequantize",
                              {"Xq"}};
}

FunctionalModuleSpec quantized_dropout_spec() {
  FunctionalModuleSpec spec{"torch.ao.nn.quantized.modules.dropout.Dropout",
                            "p=0.5, inplace=False",
                            "input",
                            "",
                            {}};
  spec.custom = [](FunctionalModuleImpl&, OpArgs& a) -> IValue {
    return a.tensor(0);
  };
  return spec;
}

}  // namespace

void register_quantized_modules(ModuleRegistry& registry) {
  add_module_spec(registry, batch_norm2d_spec());
  add_module_spec(registry, hardswish_spec());
  for (const QuantizedNorm& norm : quantized_norms()) {
    add_module_spec(registry, quantized_norm_spec(norm));
  }
  add_module_spec(registry, leaky_relu_spec());
  add_module_spec(registry, elu_spec());
  add_module_spec(registry, quantize_spec());
  add_module_spec(registry, dequantize_spec());
  add_module_spec(registry, quantized_dropout_spec());
  const char* conv_init =
      "in_channels, out_channels, kernel_size, stride=1, padding=0, "
      "dilation=1, groups=1, bias=True, padding_mode='zeros', device=None, "
      "dtype=None";
  // Linear names its flag bias_, LinearReLU bias.
  const char* linear_init = "in_features, out_features, bias_=True, dtype=None";
  const char* linear_relu_init =
      "in_features, out_features, bias=True, dtype=None";
  // torch 1.13's module paths of the classes (type(m).__module__), and the
  // torch.ao ones later versions moved the intrinsic classes to.
  struct Kind {
    std::string type;
    size_t conv_dims;  // 0: Linear
    bool relu;
  };
  std::vector<Kind> kinds = {
      {"torch.ao.nn.quantized.modules.linear.Linear", 0, false},
      {"torch.nn.intrinsic.quantized.modules.linear_relu.LinearReLU", 0, true},
      {"torch.ao.nn.intrinsic.quantized.modules.linear_relu.LinearReLU", 0,
       true},
  };
  for (size_t dims : {1, 2, 3}) {
    const std::string n = std::to_string(dims);
    kinds.push_back(
        {"torch.ao.nn.quantized.modules.conv.Conv" + n + "d", dims, false});
    for (const std::string package : {"torch.nn", "torch.ao.nn"}) {
      kinds.push_back({package +
                           ".intrinsic.quantized.modules.conv_relu.ConvReLU" +
                           n + "d",
                       dims, true});
    }
  }
  for (const auto& [type, relu] : std::vector<std::pair<std::string, bool>>{
           {"torch.ao.nn.quantized.dynamic.modules.linear.Linear", false},
           {"torch.nn.intrinsic.quantized.dynamic.modules.linear_relu."
            "LinearReLU",
            true},
           {"torch.ao.nn.intrinsic.quantized.dynamic.modules.linear_relu."
            "LinearReLU",
            true}}) {
    FunctionalModuleSpec spec =
        quantized_spec(type, relu ? linear_relu_init : linear_init,
                       dynamic_linear_forward(relu), "x");
    spec.config_rules = {ints_in("in_features", 1, kMaxConfigInt),
                         ints_in("out_features", 1, kMaxConfigInt)};
    add_module_spec(registry, spec);
  }
  for (const auto& [type, conv_dims, relu] : kinds) {
    const bool conv = conv_dims > 0;
    FunctionalModuleSpec spec =
        conv ? quantized_spec(type, conv_init,
                              packed_forward(conv_kind(conv_dims), relu))
             : quantized_spec(type, relu ? linear_relu_init : linear_init,
                              packed_forward(linear_kind(), relu), "x");
    if (conv) {
      spec.config_rules = {ints_in("in_channels", 1, kMaxConfigInt),
                           ints_in("out_channels", 1, kMaxConfigInt),
                           ints_in("kernel_size", 1, kMaxConfigInt),
                           ints_in("stride", 1, kMaxConfigInt),
                           ints_in("padding", 0, kMaxConfigInt),
                           ints_in("dilation", 1, kMaxConfigInt)};
      spec.check_config = check_conv_config;
    } else {
      spec.config_rules = {ints_in("in_features", 1, kMaxConfigInt),
                           ints_in("out_features", 1, kMaxConfigInt)};
    }
    add_module_spec(registry, spec);
  }
}

}  // namespace fx
