// repr(module) of the torch.nn modules whose repr the gradual type
// checker's TypeError messages print (gradual_typecheck.cc), from the
// module's config as the host holds it, formatted as torch's extra_repr
// formats it.
#include "plugins/optimization/module_repr.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fx/plugin_api.hpp"

namespace fx_optimization {
namespace {

using fxp::ArgView;

// str() of a config value as torch's extra_repr formats it.
std::string py_str(const ArgView& v) {
  switch (v.kind()) {
    case FX_ARG_NONE:
      return "None";
    case FX_ARG_BOOL:
      return v.as_bool() ? "True" : "False";
    case FX_ARG_INT:
      return std::to_string(v.as_int());
    case FX_ARG_FLOAT: {
      // Python's repr: the shortest text that reads back the same.
      char buf[32];
      for (int precision = 1; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof(buf), "%.*g", precision, v.as_float());
        if (std::strtod(buf, nullptr) == v.as_float()) break;
      }
      std::string text(buf);
      if (text.find_first_of(".en") == std::string::npos) text += ".0";
      return text;
    }
    case FX_ARG_TUPLE:
    case FX_ARG_LIST: {
      const bool tuple = v.kind() == FX_ARG_TUPLE;
      std::string out = tuple ? "(" : "[";
      for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += ", ";
        out += py_str(v[i]);
      }
      if (tuple && v.size() == 1) out += ",";
      return out + (tuple ? ")" : "]");
    }
    default:
      return v.as_string();
  }
}

std::string config_str(const fxp::Arg& config, const char* key) {
  ArgView v = fxp::dict_get(config.view(), key);
  return v ? py_str(v) : "?";
}

// `key` differs from a tuple of `value`s.
bool differs(const fxp::Arg& config, const char* key, int64_t value) {
  ArgView v = fxp::dict_get(config.view(), key);
  if (!v || v.kind() == FX_ARG_INT) return v && v.as_int() != value;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].kind() != FX_ARG_INT || v[i].as_int() != value) return true;
  }
  return false;
}

}  // namespace

std::string module_repr(const std::string& cls, const fxp::Arg& c) {
  if (cls == "BatchNorm2d") {
    return "BatchNorm2d(" + config_str(c, "num_features") +
           ", eps=" + config_str(c, "eps") +
           ", momentum=" + config_str(c, "momentum") +
           ", affine=" + config_str(c, "affine") +
           ", track_running_stats=" + config_str(c, "track_running_stats") +
           ")";
  }
  if (cls == "Linear") {
    return "Linear(in_features=" + config_str(c, "in_features") +
           ", out_features=" + config_str(c, "out_features") +
           ", bias=" + config_str(c, "bias") + ")";
  }
  if (cls == "MaxPool2d") {
    return "MaxPool2d(kernel_size=" + config_str(c, "kernel_size") +
           ", stride=" + config_str(c, "stride") +
           ", padding=" + config_str(c, "padding") +
           ", dilation=" + config_str(c, "dilation") +
           ", ceil_mode=" + config_str(c, "ceil_mode") + ")";
  }
  std::string out = "Conv2d(" + config_str(c, "in_channels") + ", " +
                    config_str(c, "out_channels") +
                    ", kernel_size=" + config_str(c, "kernel_size") +
                    ", stride=" + config_str(c, "stride");
  if (differs(c, "padding", 0)) out += ", padding=" + config_str(c, "padding");
  if (differs(c, "dilation", 1)) {
    out += ", dilation=" + config_str(c, "dilation");
  }
  if (differs(c, "groups", 1)) out += ", groups=" + config_str(c, "groups");
  ArgView bias = fxp::dict_get(c.view(), "bias");
  if (bias && bias.kind() == FX_ARG_BOOL && !bias.as_bool()) {
    out += ", bias=False";
  }
  ArgView mode = fxp::dict_get(c.view(), "padding_mode");
  if (mode && mode.as_string() != "zeros") {
    out += ", padding_mode=" + mode.as_string();
  }
  return out + ")";
}

}  // namespace fx_optimization
