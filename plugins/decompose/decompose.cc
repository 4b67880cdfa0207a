// libfx_decompose.so: rewrites ops into smaller ones by a table of rules,
// written with the proxy API of the C ABI (fxp::Value operators record
// nodes).
//
// Each rule covers the op's call_function targets, its Tensor method and its
// torch.nn module (call_module; the module's parameters are read through
// get_attr of `<module>.weight`, its constructor arguments through
// GraphModuleConfig):
//
//   relu         (x > 0) * x
//   gelu         x * 0.5 * (1 + erf(x / sqrt(2)))   (tanh form for
//                approximate='tanh')
//   silu         x * sigmoid(x)
//   hardswish    x * clamp(x + 3, 0, 6) / 6
//   hardsigmoid  clamp(x + 3, 0, 6) / 6
//   linear       matmul(x, w.t()) + b
//   batch_norm   eval mode: x * scale + shift (scale and shift computed from
//                the module's buffers into new attributes; for the functional
//                form, in the graph from its arguments)
//   layer_norm   (x - mean) * rsqrt(var + eps) * w + b over the normalised
//                dims
//   softmax      exp(x - amax(x)) / sum(exp(x - amax(x)))
//   addmm        beta * input + alpha * (mat1 @ mat2)
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"

namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;
using fxp::Value;

// The node being rewritten: its parameters by position or keyword, and, for
// call_module, the module's name and constructor arguments.
struct Site {
  Graph& g;
  Node n;
  std::vector<std::string> params;  // parameter names after `input`
  std::string module;               // call_module target, else empty
  Arg config;                       // the module's config (call_module)

  // The argument for parameter `name` (position from `params`), or an
  // empty view when not given.
  ArgView param(const std::string& name) const {
    if (ArgView k = n.kwarg(name.c_str())) return k;
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i] == name && i < n.num_args()) return n.arg(i);
    }
    return ArgView();
  }
  Value input() const {
    ArgView x = param(params[0]);
    return x.node();
  }
  ArgView config_value(const char* key) const {
    return fxp::dict_get(config.view(), key);
  }
  double float_param(const std::string& name, const char* config_key,
                     double fallback) const {
    if (!module.empty()) {
      ArgView v = config_value(config_key);
      return v && !v.is_none() ? v.as_float() : fallback;
    }
    ArgView v = param(name);
    return v && !v.is_none() ? v.as_float() : fallback;
  }
  // `<module>.NAME` as a get_attr node, if the module has it.
  std::optional<Value> module_attr(const char* name) const {
    std::string path = module + "." + name;
    if (!g.has_attr(path.c_str())) return std::nullopt;
    return Value(g.get_attr(path.c_str()));
  }
  // A tensor parameter given as a node, or nullopt (None / absent).
  std::optional<Value> tensor_param(const std::string& name) const {
    ArgView v = param(name);
    if (!v || v.is_none()) return std::nullopt;
    return Value(v.node());
  }
  // The input's rank from tensor_meta, or `fallback` (0: unknown).
  int64_t input_rank(int64_t fallback) const {
    ArgView meta = input().node().meta("tensor_meta");
    if (meta && meta.kind() == FX_ARG_DICT) {
      if (ArgView shape = fxp::dict_get(meta, "shape")) return shape.size();
    }
    return fallback;
  }
};

Value erf(const Value& x) { return fxp::op("torch.erf", x); }
Value sigmoid(const Value& x) { return fxp::op("torch.sigmoid", x); }
Value clamp(const Value& x, double lo, double hi) {
  return fxp::op("torch.clamp", x, {Arg(lo), Arg(hi)});
}

using Rule = std::function<std::optional<Value>(Site&)>;

std::optional<Value> relu(Site& s) {
  Value x = s.input();
  return (x > 0) * x;
}

std::optional<Value> gelu(Site& s) {
  std::string approximate = "none";
  if (!s.module.empty()) {
    if (ArgView a = s.config_value("approximate")) approximate = a.as_string();
  } else if (ArgView a = s.param("approximate")) {
    approximate = a.as_string();
  }
  Value x = s.input();
  if (approximate == "tanh") {
    Value inner = (x + x * x * x * 0.044715) * std::sqrt(2.0 / M_PI);
    return x * 0.5 * (fxp::op("torch.tanh", inner) + 1.0);
  }
  return x * 0.5 * (erf(x * M_SQRT1_2) + 1.0);
}

std::optional<Value> silu(Site& s) {
  Value x = s.input();
  return x * sigmoid(x);
}

std::optional<Value> hardswish(Site& s) {
  Value x = s.input();
  return x * clamp(x + 3.0, 0.0, 6.0) / 6.0;
}

std::optional<Value> hardsigmoid(Site& s) {
  Value x = s.input();
  return clamp(x + 3.0, 0.0, 6.0) / 6.0;
}

std::optional<Value> linear(Site& s) {
  Value x = s.input();
  std::optional<Value> w, b;
  if (!s.module.empty()) {
    w = s.module_attr("weight");
    if (!w) return std::nullopt;
    b = s.module_attr("bias");
  } else {
    w = s.tensor_param("weight");
    if (!w) return std::nullopt;
    b = s.tensor_param("bias");
  }
  Value y = fxp::op("torch.matmul", x, {Arg(w->call_method("t"))});
  if (b) y = y + *b;
  return y;
}

// Float data of an attribute, or empty when it is not a contiguous float.
std::vector<double> attr_values(const Graph& g, const std::string& name) {
  std::vector<double> out;
  if (!g.has_attr(name.c_str())) return out;
  fxp::Tensor t(g.get_attr_tensor(name.c_str()));
  if (t.dl().dtype.code != kDLFloat || t.dl().dtype.bits < 32 ||
      !t.is_contiguous()) {
    return out;
  }
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.float_at(i));
  return out;
}

// A name for a new attribute that the module does not have yet.
std::string fresh_attr(const Graph& g, std::string base) {
  for (char& c : base) {
    if (c == '.') c = '_';
  }
  std::string name = base;
  for (int i = 1; g.has_attr(name.c_str()); ++i) {
    name = base + "_" + std::to_string(i);
  }
  return name;
}

// The shape that broadcasts a per-channel vector of `c` against an input of
// `rank` (N, C, ...): (C, 1, ...); (C) when the rank is unknown (0).
std::vector<int64_t> channel_shape(int64_t c, int64_t rank) {
  std::vector<int64_t> shape{c};
  for (int64_t i = 2; i < rank; ++i) shape.push_back(1);
  return shape;
}

// x * scale + shift per channel (dim 1). With the rank known, scale and
// shift broadcast as (C, 1, ...); otherwise the channel dim is moved last
// for the (C) vectors and back.
Value per_channel(const Value& x, const Value& scale, const Value& shift,
                  bool rank_known) {
  if (rank_known) return x * scale + shift;
  Value t = x.call_method("transpose", {Arg(1), Arg(-1)});
  return (t * scale + shift).call_method("transpose", {Arg(1), Arg(-1)});
}

std::optional<Value> batch_norm(Site& s, bool eval) {
  Value x = s.input();
  if (!s.module.empty()) {
    // A module in training mode normalises by the batch's statistics.
    if (!eval || s.g.module_training(s.module.c_str()) == 1) {
      return std::nullopt;
    }
    std::vector<double> mean = attr_values(s.g, s.module + ".running_mean");
    std::vector<double> var = attr_values(s.g, s.module + ".running_var");
    if (mean.empty() || var.size() != mean.size()) return std::nullopt;
    std::vector<double> w = attr_values(s.g, s.module + ".weight");
    std::vector<double> b = attr_values(s.g, s.module + ".bias");
    double eps = s.float_param("eps", "eps", 1e-5);
    int64_t c = static_cast<int64_t>(mean.size());
    std::string type = s.g.module_type(s.module.c_str());
    int64_t rank = type == "torch.nn.BatchNorm2d"   ? 4
                   : type == "torch.nn.BatchNorm3d" ? 5
                                                    : s.input_rank(0);
    std::vector<int64_t> shape = channel_shape(c, rank);
    fxp::Tensor scale = fxp::make_tensor(shape, fxp::kFloat32);
    fxp::Tensor shift = fxp::make_tensor(shape, fxp::kFloat32);
    for (int64_t i = 0; i < c; ++i) {
      double k = (w.empty() ? 1.0 : w[i]) / std::sqrt(var[i] + eps);
      scale.mutable_data<float>()[i] = static_cast<float>(k);
      shift.mutable_data<float>()[i] =
          static_cast<float>((b.empty() ? 0.0 : b[i]) - mean[i] * k);
    }
    std::string scale_name = fresh_attr(s.g, s.module + "_bn_scale");
    s.g.set_attr_tensor(scale_name.c_str(), scale.release());
    std::string shift_name = fresh_attr(s.g, s.module + "_bn_shift");
    s.g.set_attr_tensor(shift_name.c_str(), shift.release());
    return per_channel(x, s.g.get_attr(scale_name.c_str()),
                       s.g.get_attr(shift_name.c_str()), rank > 0);
  }
  ArgView training = s.param("training");
  if (training && training.as_bool()) return std::nullopt;
  std::optional<Value> mean = s.tensor_param("running_mean");
  std::optional<Value> var = s.tensor_param("running_var");
  if (!mean || !var) return std::nullopt;
  std::optional<Value> w = s.tensor_param("weight");
  std::optional<Value> b = s.tensor_param("bias");
  double eps = s.float_param("eps", "eps", 1e-5);
  int64_t rank = s.input_rank(0);
  Value k = fxp::op("torch.rsqrt", *var + eps);
  if (w) k = k * *w;
  Value shift = -(*mean * k);
  if (b) shift = shift + *b;
  if (rank > 0) {
    std::vector<Arg> shape{Arg(int64_t{-1})};
    for (int64_t i = 2; i < rank; ++i) shape.emplace_back(int64_t{1});
    k = k.call_method("reshape", shape);
    shift = shift.call_method("reshape", shape);
  }
  return per_channel(x, k, shift, rank > 0);
}

std::optional<Value> layer_norm(Site& s) {
  Value x = s.input();
  size_t dims = 0;
  std::optional<Value> w, b;
  if (!s.module.empty()) {
    ArgView shape = s.config_value("normalized_shape");
    dims = shape ? (shape.kind() == FX_ARG_INT ? 1 : shape.size()) : 0;
    w = s.module_attr("weight");
    b = s.module_attr("bias");
  } else {
    ArgView shape = s.param("normalized_shape");
    if (!shape) return std::nullopt;
    if (shape.kind() == FX_ARG_INT) {
      dims = 1;
    } else if (shape.kind() == FX_ARG_LIST || shape.kind() == FX_ARG_TUPLE) {
      dims = shape.size();
    } else {
      return std::nullopt;  // computed at run time
    }
    w = s.tensor_param("weight");
    b = s.tensor_param("bias");
  }
  if (dims == 0) return std::nullopt;
  double eps = s.float_param("eps", "eps", 1e-5);
  std::vector<Arg> axes;
  for (size_t i = dims; i > 0; --i) axes.emplace_back(-static_cast<int64_t>(i));
  Arg axis_list = Arg::list(axes);
  fxp::Kwargs keep{{"keepdim", Arg(true)}};
  Value mean = x.call_method("mean", {axis_list}, keep);
  Value d = x - mean;
  Value var = (d * d).call_method("mean", {axis_list}, keep);
  Value y = d * fxp::op("torch.rsqrt", var + eps);
  if (w) y = y * *w;
  if (b) y = y + *b;
  return y;
}

std::optional<Value> softmax(Site& s) {
  Value x = s.input();
  ArgView dim;
  dim = s.module.empty() ? s.param("dim") : s.config_value("dim");
  if (!dim || dim.kind() != FX_ARG_INT) return std::nullopt;
  if (s.module.empty()) {
    ArgView dtype = s.param("dtype");
    if (dtype && !dtype.is_none()) x = x.call_method("to", {Arg(dtype)});
  }
  Arg d(dim.as_int());
  fxp::Kwargs keep{{"keepdim", Arg(true)}};
  Value e = fxp::op("torch.exp", x - x.call_method("amax", {d}, keep));
  return e / e.call_method("sum", {d}, keep);
}

std::optional<Value> addmm(Site& s) {
  Value input = s.input();
  std::optional<Value> m1 = s.tensor_param("mat1");
  std::optional<Value> m2 = s.tensor_param("mat2");
  if (!m1 || !m2) return std::nullopt;
  double beta = s.float_param("beta", "", 1.0);
  double alpha = s.float_param("alpha", "", 1.0);
  Value y = fxp::op("torch.matmul", *m1, {Arg(*m2)});
  if (alpha != 1.0) y = y * alpha;
  if (beta == 0.0) return y;
  return beta == 1.0 ? input + y : input * beta + y;
}

// How a rule is reached: one entry per target / method / module type, with
// the parameter names of its Python signature.
struct Form {
  FxOpcode op;
  const char* target;  // or the module type for call_module
  std::vector<std::string> params;
};

struct RuleEntry {
  const char* name;
  Rule rule;
  std::vector<Form> forms;
};

const std::vector<RuleEntry>& rules() {
  static const std::vector<RuleEntry> kRules = {
      {"relu",
       relu,
       {{FX_OP_CALL_FUNCTION, "torch.relu", {"input"}},
        {FX_OP_CALL_FUNCTION, "torch.nn.functional.relu", {"input", "inplace"}},
        {FX_OP_CALL_METHOD, "relu", {"self"}},
        {FX_OP_CALL_MODULE, "torch.nn.ReLU", {"input"}}}},
      {"gelu",
       gelu,
       {{FX_OP_CALL_FUNCTION,
         "torch.nn.functional.gelu",
         {"input", "approximate"}},
        {FX_OP_CALL_FUNCTION, "torch._C._nn.gelu", {"input", "approximate"}},
        {FX_OP_CALL_MODULE, "torch.nn.GELU", {"input"}}}},
      {"silu",
       silu,
       {{FX_OP_CALL_FUNCTION, "torch.nn.functional.silu", {"input", "inplace"}},
        {FX_OP_CALL_MODULE, "torch.nn.SiLU", {"input"}}}},
      {"hardswish",
       hardswish,
       {{FX_OP_CALL_FUNCTION,
         "torch.nn.functional.hardswish",
         {"input", "inplace"}},
        {FX_OP_CALL_MODULE, "torch.nn.Hardswish", {"input"}}}},
      {"hardsigmoid",
       hardsigmoid,
       {{FX_OP_CALL_FUNCTION,
         "torch.nn.functional.hardsigmoid",
         {"input", "inplace"}},
        {FX_OP_CALL_MODULE, "torch.nn.Hardsigmoid", {"input"}}}},
      {"linear",
       linear,
       {{FX_OP_CALL_FUNCTION,
         "torch.nn.functional.linear",
         {"input", "weight", "bias"}},
        {FX_OP_CALL_FUNCTION,
         "torch._C._nn.linear",
         {"input", "weight", "bias"}},
        {FX_OP_CALL_MODULE, "torch.nn.Linear", {"input"}}}},
      {"batch_norm",
       [](Site& s) { return batch_norm(s, true); },
       {{FX_OP_CALL_FUNCTION,
         "torch.nn.functional.batch_norm",
         {"input", "running_mean", "running_var", "weight", "bias", "training",
          "momentum", "eps"}},
        {FX_OP_CALL_MODULE, "torch.nn.BatchNorm1d", {"input"}},
        {FX_OP_CALL_MODULE, "torch.nn.BatchNorm2d", {"input"}},
        {FX_OP_CALL_MODULE, "torch.nn.BatchNorm3d", {"input"}}}},
      {"layer_norm",
       layer_norm,
       {{FX_OP_CALL_FUNCTION,
         "torch.nn.functional.layer_norm",
         {"input", "normalized_shape", "weight", "bias", "eps"}},
        {FX_OP_CALL_MODULE, "torch.nn.LayerNorm", {"input"}}}},
      {"softmax",
       softmax,
       {{FX_OP_CALL_FUNCTION, "torch.softmax", {"input", "dim", "dtype"}},
        {FX_OP_CALL_FUNCTION,
         "torch.nn.functional.softmax",
         {"input", "dim", "_stacklevel", "dtype"}},
        {FX_OP_CALL_METHOD, "softmax", {"self", "dim", "dtype"}},
        {FX_OP_CALL_MODULE, "torch.nn.Softmax", {"input"}}}},
      {"addmm",
       addmm,
       {{FX_OP_CALL_FUNCTION, "torch.addmm", {"input", "mat1", "mat2"}},
        {FX_OP_CALL_METHOD, "addmm", {"self", "mat1", "mat2"}}}},
  };
  return kRules;
}

bool decompose(Graph& g, const fxp::Options& options) {
  std::vector<std::string> selected = options.get_list("rules");
  std::set<std::string> wanted;
  for (const std::string& r : selected) {
    if (r == "all") {
      for (const RuleEntry& e : rules()) wanted.insert(e.name);
      continue;
    }
    bool known = false;
    for (const RuleEntry& e : rules()) known = known || r == e.name;
    if (!known) {
      std::string names;
      for (const RuleEntry& e : rules()) names += std::string(" ") + e.name;
      throw fxp::Error(
          FX_INVALID_ARGUMENT,
          "decompose: unknown rule '" + r + "' (rules:" + names + ", or all)");
    }
    wanted.insert(r);
  }
  bool changed = false;
  for (Node n : g) {
    FxOpcode op = n.op();
    if (op != FX_OP_CALL_FUNCTION && op != FX_OP_CALL_METHOD &&
        op != FX_OP_CALL_MODULE) {
      continue;
    }
    std::string target(n.target());
    std::string type =
        op == FX_OP_CALL_MODULE ? g.module_type(target.c_str()) : target;
    for (const RuleEntry& e : rules()) {
      if (!wanted.count(e.name)) continue;
      const Form* form = nullptr;
      for (const Form& f : e.forms) {
        if (f.op == op && type == f.target) form = &f;
      }
      if (form == nullptr) continue;
      Site site{g, n, form->params, "", Arg()};
      if (op == FX_OP_CALL_MODULE) {
        site.module = target;
        site.config = fxp::module_config(g, target.c_str());
      }
      std::optional<Value> result;
      {
        auto guard = g.inserting_before(n);
        result = e.rule(site);
      }
      if (!result) break;
      n.replace_all_uses_with(result->node());
      g.erase_node(n);
      changed = true;
      break;
    }
  }
  return changed;
}

}  // namespace

FXP_PLUGIN("fx_decompose", "1.0",
           fxp::pass<decompose>(
               "decompose",
               "rewrites ops into smaller ones by rules (call_function, "
               "call_method and call_module forms)")
               .option("rules", FX_OPTION_STRING_LIST,
                       "relu,gelu,silu,hardswish,hardsigmoid,linear,batch_norm,"
                       "layer_norm,softmax,addmm",
                       "the rules to apply (or all)")
               .invalidates({"tensor_meta"})
               .idempotent())
