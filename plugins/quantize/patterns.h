// The node shapes the quantize passes recognise, shared by the observer
// placement (quantize.cc) and the int8 lowering (lower.cc).
#ifndef PLUGINS_QUANTIZE_PATTERNS_H_
#define PLUGINS_QUANTIZE_PATTERNS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "fx/plugin_api.hpp"

namespace fx_quant {

// A per-tensor affine quantization (quint8 here).
struct QParams {
  double scale = 1;
  int64_t zero_point = 0;
};

// Whether n's first argument is a node only n reads (so an in-place op on
// it is the same as its out-of-place form).
inline bool sole_reader(fxp::Node n) {
  return n.num_args() >= 1 && n.arg(0).is_node() &&
         n.arg(0).node().num_users() == 1;
}

// A ReLU in any of torch.fx's spellings: torch.relu, F.relu, x.relu(), a
// torch.nn.ReLU module; in place (F.relu(x, inplace=True), torch.relu_,
// x.relu_()) when nothing else reads x.
inline bool is_relu(const fxp::Graph& g, fxp::Node n) {
  switch (n.op()) {
    case FX_OP_CALL_FUNCTION: {
      std::string_view t = n.target();
      if (t == "torch.relu") return n.num_args() == 1;
      if (t == "torch.relu_") return n.num_args() == 1 && sole_reader(n);
      if (t != "torch.nn.functional.relu") return false;
      fxp::ArgView inplace = n.kwarg("inplace");
      if (n.num_args() == 2) inplace = n.arg(1);
      const bool in_place =
          inplace && inplace.kind() == FX_ARG_BOOL && inplace.as_bool();
      return n.num_args() <= 2 && (!in_place || sole_reader(n));
    }
    case FX_OP_CALL_METHOD:
      return (n.target() == "relu" ||
              (n.target() == "relu_" && sole_reader(n))) &&
             n.num_args() == 1;
    case FX_OP_CALL_MODULE:
      return g.module_type(n.target_cstr()) == "torch.nn.ReLU";
    default:
      return false;
  }
}

// a + b of two nodes (operator.add, torch.add without alpha, x.add(y)).
inline bool is_add(fxp::Node n) {
  std::string_view t = n.target();
  bool add = (n.op() == FX_OP_CALL_FUNCTION &&
              (t == "operator.add" || t == "torch.add")) ||
             (n.op() == FX_OP_CALL_METHOD && t == "add");
  return add && n.num_args() == 2 && n.num_kwargs() == 0 &&
         n.arg(0).is_node() && n.arg(1).is_node();
}

// An op whose output a quantized input's quantization describes, which
// LibTorch runs on quantized tensors: max and adaptive average pooling,
// ReLU6 and Hardtanh (modules or functions), torch.flatten and an eval-mode
// Dropout. PyTorch's
// convert_fx runs them on the quantized tensor and keeps its scale and
// zero point.
inline bool keeps_quantization(const fxp::Graph& g, fxp::Node n) {
  if (n.num_args() < 1 || !n.arg(0).is_node()) return false;
  if (n.op() == FX_OP_CALL_MODULE) {
    std::string type = g.module_type(n.target_cstr());
    return n.num_args() == 1 && n.num_kwargs() == 0 &&
           (type == "torch.nn.MaxPool2d" ||
            type == "torch.nn.AdaptiveAvgPool2d" || type == "torch.nn.ReLU6" ||
            type == "torch.nn.Hardtanh" ||
            // Dropout is the identity in eval mode.
            (type == "torch.nn.Dropout" &&
             g.module_training(n.target_cstr()) == 0));
  }
  if (n.op() != FX_OP_CALL_FUNCTION) return false;
  std::string_view t = n.target();
  return t == "torch.flatten" || t == "torch.nn.functional.max_pool2d" ||
         t == "torch.nn.functional.adaptive_avg_pool2d" ||
         t == "torch.nn.functional.relu6" ||
         t == "torch.nn.functional.hardtanh";
}

// A ReLU6 or Hardtanh (module or function) LibTorch runs on a quint8
// tensor: a clamp of the real values, which quantize_prepare observes after
// (as a ReLU) and quantize_lower leaves on the quantized op's quint8 result.
// A function's bounds and `inplace` must be literals (a bound computed by
// another node would be rewired with the input).
inline bool is_clamp(const fxp::Graph& g, fxp::Node n) {
  if (!keeps_quantization(g, n)) return false;
  if (n.op() == FX_OP_CALL_MODULE) {
    std::string type = g.module_type(n.target_cstr());
    return type == "torch.nn.ReLU6" || type == "torch.nn.Hardtanh";
  }
  if (n.target() != "torch.nn.functional.relu6" &&
      n.target() != "torch.nn.functional.hardtanh") {
    return false;
  }
  auto literal = [](fxp::ArgView a) {
    return a.kind() == FX_ARG_INT || a.kind() == FX_ARG_FLOAT ||
           a.kind() == FX_ARG_BOOL;
  };
  for (size_t i = 1; i < n.num_args(); ++i) {
    if (!literal(n.arg(i))) return false;
  }
  for (size_t i = 0; i < n.num_kwargs(); ++i) {
    if (!literal(n.kwarg_value(i))) return false;
  }
  return true;
}

// Whether `n` is a clamp (is_clamp) of `op`'s value itself.
inline bool is_clamp_of(const fxp::Graph& g, fxp::Node n, fxp::Node op) {
  return is_clamp(g, n) && n.arg(0).node() == op;
}

}  // namespace fx_quant

#endif  // PLUGINS_QUANTIZE_PATTERNS_H_
