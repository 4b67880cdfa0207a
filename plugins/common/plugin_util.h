// Helpers shared by the first-party plugins: a pass's refusal, dtype names,
// torch.fx's TensorMetadata as a meta argument, argument keys, and where
// torch 1.13 defines its torch.nn classes. Header-only,
// built from plugin_api/include alone like the plugins themselves.
#ifndef PLUGINS_COMMON_PLUGIN_UTIL_H_
#define PLUGINS_COMMON_PLUGIN_UTIL_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fx/plugin_api.hpp"

namespace fx_plugins {

// Refuses on behalf of the pass `pass`: an Error of `code` whose message
// names the pass ("PASS: what"), the form the passes' refusals share.
[[noreturn]] inline void refuse_in(const char* pass, FxStatusCode code,
                                   const std::string& what) {
  throw fxp::Error(code, std::string(pass) + ": " + what);
}

// "float32", "torch.float32", "float", "int64", ... -> DLPack dtype.
inline DLDataType parse_dtype(std::string name) {
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  struct Entry {
    const char* name;
    DLDataType type;
  };
  static const Entry kTypes[] = {
      {"float32", {kDLFloat, 32, 1}},   {"float", {kDLFloat, 32, 1}},
      {"float64", {kDLFloat, 64, 1}},   {"double", {kDLFloat, 64, 1}},
      {"float16", {kDLFloat, 16, 1}},   {"half", {kDLFloat, 16, 1}},
      {"bfloat16", {kDLBfloat, 16, 1}}, {"int64", {kDLInt, 64, 1}},
      {"long", {kDLInt, 64, 1}},        {"int32", {kDLInt, 32, 1}},
      {"int", {kDLInt, 32, 1}},         {"int16", {kDLInt, 16, 1}},
      {"int8", {kDLInt, 8, 1}},         {"uint8", {kDLUInt, 8, 1}},
      {"bool", {kDLUInt, 8, 1}},
  };
  for (const Entry& e : kTypes) {
    if (name == e.name) return e.type;
  }
  throw fxp::Error(FX_INVALID_ARGUMENT, "unknown dtype '" + name + "'");
}

// "1x3x224x224" -> {1, 3, 224, 224}; "" -> {} (a scalar).
inline std::vector<int64_t> parse_shape(const std::string& text) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('x', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    try {
      size_t used = 0;
      out.push_back(std::stoll(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw fxp::Error(
          FX_INVALID_ARGUMENT,
          "bad shape '" + text + "': expected sizes like 1x3x224x224");
    }
    start = end + 1;
  }
  return out;
}

inline fxp::Arg int_tuple(const int64_t* values, int32_t n) {
  std::vector<fxp::Arg> items;
  for (int32_t i = 0; i < n; ++i) items.emplace_back(values[i]);
  return fxp::Arg::tuple(items);
}

// Whether sizes/strides are contiguous when the dims are laid out in `order`
// (innermost last), size-1 dims ignored: torch's is_contiguous.
inline bool contiguous_in_order(const int64_t* shape, const int64_t* strides,
                                const std::vector<int>& order) {
  int64_t expected = 1;
  for (size_t k = order.size(); k-- > 0;) {
    int d = order[k];
    if (shape[d] == 0) return true;
    if (shape[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

// The memory format ShapeProp records: the first format the tensor is
// contiguous in. torch.fx 1.13 tries them in the order of a Python set, which
// varies between processes for tensors contiguous in several formats (an
// N x C x 1 x 1 tensor); this picks contiguous_format, then channels_last,
// then channels_last_3d, or "" for none.
inline std::string torch_fx_memory_format(const FxTensorMeta& m) {
  std::vector<int> order;
  for (int i = 0; i < m.ndim; ++i) order.push_back(i);
  if (contiguous_in_order(m.shape, m.strides, order)) {
    return "torch.contiguous_format";
  }
  if (m.ndim == 4 && contiguous_in_order(m.shape, m.strides, {0, 2, 3, 1})) {
    return "torch.channels_last";
  }
  if (m.ndim == 5 && contiguous_in_order(m.shape, m.strides, {0, 2, 3, 4, 1})) {
    return "torch.channels_last_3d";
  }
  return "";
}

// A tensor_meta shape's sizes as text: "3" for an integer, the expression
// for a symbolic size ("2*t0.size(0)"; ArgKind reports it as a string).
// Equal texts are equal sizes for every input; different texts may still
// be equal under the graph's guards (a pass comparing them is then merely
// conservative).
inline std::vector<std::string> size_texts(fxp::ArgView shape) {
  std::vector<std::string> sizes;
  for (size_t i = 0; shape && i < shape.size(); ++i) {
    fxp::ArgView d = shape[i];
    sizes.push_back(d.kind() == FX_ARG_INT ? std::to_string(d.as_int())
                                           : d.as_string());
  }
  return sizes;
}

// torch.fx's TensorMetadata as a dict argument: shape, dtype, requires_grad,
// stride, memory_format, is_quantized, qparams.
inline fxp::Arg tensor_meta_arg(const FxTensorMeta& m) {
  FxArg* memory_format = nullptr;
  std::string format = torch_fx_memory_format(m);
  if (!format.empty()) {
    fxp::check(fxp::api()->CreateTorchValue(FX_ARG_MEMORY_FORMAT,
                                            format.c_str(), &memory_format));
  } else {
    fxp::check(fxp::api()->CreateNone(&memory_format));
  }
  std::vector<std::pair<std::string, fxp::Arg>> qparams;
  if (m.is_quantized) {
    qparams.emplace_back("qscheme", fxp::Arg(m.qscheme));
    if (m.num_channels == 0) {
      qparams.emplace_back("scale", fxp::Arg(m.scale));
      qparams.emplace_back("zero_point", fxp::Arg(m.zero_point));
    } else {
      std::vector<fxp::Arg> scales, zero_points;
      for (size_t i = 0; i < m.num_channels; ++i) {
        scales.emplace_back(m.scales[i]);
        zero_points.emplace_back(m.zero_points[i]);
      }
      qparams.emplace_back("scale", fxp::Arg::list(scales));
      qparams.emplace_back("zero_point", fxp::Arg::list(zero_points));
      qparams.emplace_back("axis", fxp::Arg(m.axis));
    }
  }
  return fxp::Arg::dict({
      {"shape", int_tuple(m.shape, m.ndim)},
      {"dtype", fxp::Arg::dtype(m.dtype_name)},
      {"requires_grad", fxp::Arg(m.requires_grad != 0)},
      {"stride", int_tuple(m.strides, m.ndim)},
      {"memory_format", fxp::Arg::adopt(memory_format)},
      {"is_quantized", fxp::Arg(m.is_quantized != 0)},
      {"qparams", fxp::Arg::dict(qparams)},
  });
}

// An exact text key of an argument (nodes by name, floats bit-exact), so
// equal keys mean ArgEqual arguments.
inline void append_key(fxp::ArgView a, std::string& out) {
  char buf[64];
  switch (a.kind()) {
    case FX_ARG_NONE:
      out += "N";
      return;
    case FX_ARG_BOOL:
      out += a.as_bool() ? "T" : "F";
      return;
    case FX_ARG_INT:
      out += "i" + std::to_string(a.as_int());
      return;
    case FX_ARG_FLOAT:
      std::snprintf(buf, sizeof(buf), "f%a", a.as_float());
      out += buf;
      return;
    case FX_ARG_NODE:
      out += "%";
      out += a.node().name();
      return;
    case FX_ARG_ELLIPSIS:
      out += "...";
      return;
    case FX_ARG_STRING:
    case FX_ARG_DTYPE:
    case FX_ARG_DEVICE:
    case FX_ARG_MEMORY_FORMAT:
    case FX_ARG_LAYOUT: {
      std::string s = a.as_string();
      out += "s" + std::to_string(a.kind()) + ":" + std::to_string(s.size()) +
             ":" + s;
      return;
    }
    case FX_ARG_LIST:
    case FX_ARG_TUPLE:
    case FX_ARG_SLICE:
    case FX_ARG_DICT: {
      out += a.kind() == FX_ARG_LIST    ? "["
             : a.kind() == FX_ARG_TUPLE ? "("
             : a.kind() == FX_ARG_SLICE ? "<"
                                        : "{";
      for (size_t i = 0; i < a.size(); ++i) {
        if (a.kind() == FX_ARG_DICT) {
          std::string k = a.key(i);
          out += std::to_string(k.size()) + ":" + k + "=";
        }
        append_key(a[i], out);
        out += ",";
      }
      out += "]";
      return;
    }
  }
  out += "?";
}

// call_function, call_method or call_module (torch.fx's CALLABLE_NODE_OPS).
inline bool is_call_node(const fxp::Node& n) {
  const FxOpcode op = n.op();
  return op == FX_OP_CALL_FUNCTION || op == FX_OP_CALL_METHOD ||
         op == FX_OP_CALL_MODULE;
}

// A copy of `a` whose node references go through `map` (torch.fx's
// map_arg): lists, tuples, dicts and slices are rebuilt, literals copied.
inline fxp::Arg map_arg(fxp::ArgView a,
                        const std::function<fxp::Node(fxp::Node)>& map) {
  switch (a.kind()) {
    case FX_ARG_NODE:
      return fxp::Arg(map(a.node()));
    case FX_ARG_LIST:
    case FX_ARG_TUPLE: {
      std::vector<fxp::Arg> items;
      for (size_t i = 0; i < a.size(); ++i) items.push_back(map_arg(a[i], map));
      return a.kind() == FX_ARG_LIST ? fxp::Arg::list(items)
                                     : fxp::Arg::tuple(items);
    }
    case FX_ARG_DICT: {
      std::vector<std::pair<std::string, fxp::Arg>> items;
      for (size_t i = 0; i < a.size(); ++i) {
        items.emplace_back(a.key(i), map_arg(a[i], map));
      }
      return fxp::Arg::dict(items);
    }
    case FX_ARG_SLICE:
      return fxp::Arg::slice(map_arg(a[0], map), map_arg(a[1], map),
                             map_arg(a[2], map));
    default:
      return fxp::Arg(a);
  }
}

// `n`'s args, each through map_arg with `map` (copying a node into
// another graph).
inline std::vector<fxp::Arg> map_args(
    const fxp::Node& n, const std::function<fxp::Node(fxp::Node)>& map) {
  std::vector<fxp::Arg> args;
  for (size_t i = 0; i < n.num_args(); ++i) {
    args.push_back(map_arg(n.arg(i), map));
  }
  return args;
}

// `n`'s kwargs, each value through map_arg with `map`.
inline fxp::Kwargs map_kwargs(const fxp::Node& n,
                              const std::function<fxp::Node(fxp::Node)>& map) {
  fxp::Kwargs kwargs;
  for (size_t i = 0; i < n.num_kwargs(); ++i) {
    kwargs.emplace_back(n.kwarg_key(i), map_arg(n.kwarg_value(i), map));
  }
  return kwargs;
}

// Writes `text` to `path` as a whole or not at all. On a host of version 13
// or later the host writes it (fxp::write_output_file, C ABI
// WriteOutputFile): under the host's output rule, so a file the running
// command reads (`fx run`'s graph or its weights) is refused, naming both,
// and left as it was. On an older host: into a fresh temporary beside it
// (mkstemp: O_EXCL, so never through a planted symlink or into a planted
// FIFO), then renamed over it. Error (FX_INVALID_ARGUMENT; FX_INTERNAL when
// the host's write of the bytes fails, a full disk) naming the path and the
// reason; no temporary is left behind.
inline void write_file_atomically(const std::string& path,
                                  const std::string& text) {
  if (fxp::api() != nullptr && fxp::api()->version >= 13) {
    fxp::write_output_file(path, text);
    return;
  }
  auto fail = [&](const std::string& why) {
    throw fxp::Error(FX_INVALID_ARGUMENT,
                     "cannot write '" + path + "': " + why);
  };
  std::string tmp = path + ".XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) fail(std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      close(fd);
      unlink(tmp.c_str());
      fail(why);
    }
    done += static_cast<size_t>(n);
  }
  const bool ok = fchmod(fd, 0644) == 0 && fsync(fd) == 0;
  const std::string why = std::strerror(errno);
  if (close(fd) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    fail(ok ? std::strerror(errno) : why);
  }
}

// The name torch's split_module gives the parent's attribute `target`
// inside a submodule: "_".join(target.split(".")) ("layer1.0.conv1" ->
// "layer1_0_conv1").
inline std::string split_module_attr_name(std::string_view target) {
  std::string out(target);
  std::replace(out.begin(), out.end(), '.', '_');
  return out;
}

// Shares g's attribute or submodule `target` with `sub` under
// split_module_attr_name(target) (the same object, fxp::share_attr) and
// returns that name. Error(FX_FAILED_PRECONDITION) naming `target` when
// `sub` already holds another object under that name ("a.b_c" and "a_b.c"
// both become "a_b_c"; torch's split_module silently keeps the last one).
inline std::string share_as_split_module_attr(fxp::Graph& g, fxp::Graph& sub,
                                              const std::string& target) {
  const std::string flat = split_module_attr_name(target);
  try {
    fxp::share_attr(g, sub, target.c_str(), flat.c_str());
  } catch (const fxp::Error& e) {
    if (e.code() != FX_FAILED_PRECONDITION) throw;
    throw fxp::Error(FX_FAILED_PRECONDITION,
                     "attribute '" + target + "' becomes '" + flat +
                         "' in the submodule, which already holds another "
                         "attribute under that name (" +
                         e.what() + ")");
  }
  return flat;
}

// The Python module of each class torch 1.13 exports as torch.nn.NAME, as
// type(m).__module__ gives it (torch.nn.Linear is defined in
// torch.nn.modules.linear): every torch.nn class that is a torch.nn.Module.
// The host names exactly these classes torch.nn.NAME (the exporter's
// module_type_name; every other class by its own module and qualified
// name), and holds no other record of where they are defined.
struct TorchNnModule {
  const char* module;   // "torch.nn.modules.linear"
  const char* classes;  // the class names, one space between each two
};
inline const std::vector<TorchNnModule>& torch_nn_modules() {
  static const std::vector<TorchNnModule> kModules = {
      {"torch.nn.modules.activation",
       "CELU ELU GELU GLU Hardshrink Hardsigmoid Hardswish Hardtanh LeakyReLU "
       "LogSigmoid LogSoftmax Mish MultiheadAttention PReLU RReLU ReLU ReLU6 "
       "SELU SiLU Sigmoid Softmax Softmax2d Softmin Softplus Softshrink "
       "Softsign Tanh Tanhshrink Threshold"},
      {"torch.nn.modules.adaptive", "AdaptiveLogSoftmaxWithLoss"},
      {"torch.nn.modules.batchnorm",
       "BatchNorm1d BatchNorm2d BatchNorm3d LazyBatchNorm1d LazyBatchNorm2d "
       "LazyBatchNorm3d SyncBatchNorm"},
      {"torch.nn.modules.channelshuffle", "ChannelShuffle"},
      {"torch.nn.modules.container",
       "Container ModuleDict ModuleList ParameterDict ParameterList "
       "Sequential"},
      {"torch.nn.modules.conv",
       "Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d "
       "LazyConv1d LazyConv2d LazyConv3d LazyConvTranspose1d "
       "LazyConvTranspose2d LazyConvTranspose3d"},
      {"torch.nn.modules.distance", "CosineSimilarity PairwiseDistance"},
      {"torch.nn.modules.dropout",
       "AlphaDropout Dropout Dropout1d Dropout2d Dropout3d "
       "FeatureAlphaDropout"},
      {"torch.nn.modules.flatten", "Flatten Unflatten"},
      {"torch.nn.modules.fold", "Fold Unfold"},
      {"torch.nn.modules.instancenorm",
       "InstanceNorm1d InstanceNorm2d InstanceNorm3d LazyInstanceNorm1d "
       "LazyInstanceNorm2d LazyInstanceNorm3d"},
      {"torch.nn.modules.linear", "Bilinear Identity LazyLinear Linear"},
      {"torch.nn.modules.loss",
       "BCELoss BCEWithLogitsLoss CTCLoss CosineEmbeddingLoss "
       "CrossEntropyLoss GaussianNLLLoss HingeEmbeddingLoss HuberLoss "
       "KLDivLoss L1Loss MSELoss MarginRankingLoss MultiLabelMarginLoss "
       "MultiLabelSoftMarginLoss MultiMarginLoss NLLLoss NLLLoss2d "
       "PoissonNLLLoss SmoothL1Loss SoftMarginLoss TripletMarginLoss "
       "TripletMarginWithDistanceLoss"},
      {"torch.nn.modules.module", "Module"},
      {"torch.nn.modules.normalization",
       "CrossMapLRN2d GroupNorm LayerNorm LocalResponseNorm"},
      {"torch.nn.modules.padding",
       "ConstantPad1d ConstantPad2d ConstantPad3d ReflectionPad1d "
       "ReflectionPad2d ReflectionPad3d ReplicationPad1d ReplicationPad2d "
       "ReplicationPad3d ZeroPad2d"},
      {"torch.nn.modules.pixelshuffle", "PixelShuffle PixelUnshuffle"},
      {"torch.nn.modules.pooling",
       "AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d "
       "AdaptiveMaxPool1d AdaptiveMaxPool2d AdaptiveMaxPool3d AvgPool1d "
       "AvgPool2d AvgPool3d FractionalMaxPool2d FractionalMaxPool3d LPPool1d "
       "LPPool2d MaxPool1d MaxPool2d MaxPool3d MaxUnpool1d MaxUnpool2d "
       "MaxUnpool3d"},
      {"torch.nn.modules.rnn",
       "GRU GRUCell LSTM LSTMCell RNN RNNBase RNNCell RNNCellBase"},
      {"torch.nn.modules.sparse", "Embedding EmbeddingBag"},
      {"torch.nn.modules.transformer",
       "Transformer TransformerDecoder TransformerDecoderLayer "
       "TransformerEncoder TransformerEncoderLayer"},
      {"torch.nn.modules.upsampling",
       "Upsample UpsamplingBilinear2d UpsamplingNearest2d"},
      {"torch.nn.parallel.data_parallel", "DataParallel"},
  };
  return kModules;
}

// A module type as the host names it -> the class's path as torch 1.13's
// torch.typename and get_node_target print it: torch.nn.Linear ->
// torch.nn.modules.linear.Linear (torch_nn_modules); any other type, which
// the host already names by its module and qualified name, as it is.
inline std::string torch_class_path(std::string_view type) {
  constexpr std::string_view kNn = "torch.nn.";
  if (type.substr(0, kNn.size()) != kNn) return std::string(type);
  const std::string_view name = type.substr(kNn.size());
  if (name.find('.') != std::string_view::npos) return std::string(type);
  for (const TorchNnModule& m : torch_nn_modules()) {
    std::string_view classes = m.classes;
    while (!classes.empty()) {
      const size_t end = std::min(classes.find(' '), classes.size());
      if (classes.substr(0, end) == name) {
        return std::string(m.module) + "." + std::string(name);
      }
      classes.remove_prefix(std::min(end + 1, classes.size()));
    }
  }
  return std::string(type);
}

// All placeholders, in order.
inline std::vector<fxp::Node> placeholders(const fxp::Graph& g) {
  std::vector<fxp::Node> out;
  for (fxp::Node n : g) {
    if (n.op() == FX_OP_PLACEHOLDER) out.push_back(n);
  }
  return out;
}

}  // namespace fx_plugins

#endif  // PLUGINS_COMMON_PLUGIN_UTIL_H_
