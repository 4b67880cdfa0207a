// check_module_config: a module config against its kind's constructor
// contract, before anything is allocated (module_registry.h).
#include <ATen/ATen.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using c10::IValue;

// Appends the ints of `v` to `out`: itself, or those of the elements of a
// list or tuple, at any depth (OpArgs::int_list unpacks a nested list).
void collect_ints(const IValue& v, std::vector<int64_t>& out, int depth = 0) {
  if (v.isInt()) {
    out.push_back(v.toInt());
  } else if (v.isIntList()) {
    for (int64_t i : v.toIntVector()) out.push_back(i);
  } else if ((v.isTuple() || v.isList()) && depth < 8) {
    c10::ArrayRef<IValue> items =
        v.isTuple() ? c10::ArrayRef<IValue>(v.toTupleRef().elements())
                    : v.toListRef();
    for (const IValue& item : items) collect_ints(item, out, depth + 1);
  }
}

std::vector<int64_t> ints_of(const IValue& v) {
  std::vector<int64_t> out;
  collect_ints(v, out);
  return out;
}

// A config value as Python writes it, for messages: 3, [1, 2], 0.5.
std::string value_repr(const IValue& v) {
  if (v.isDouble()) return python_float_repr(v.toDouble());
  if (v.isInt()) return std::to_string(v.toInt());
  if (v.isBool()) return v.toBool() ? "True" : "False";
  if (v.isString()) return cat("'", v.toStringRef(), "'");
  std::vector<int64_t> ints = ints_of(v);
  std::string out = "[";
  for (size_t i = 0; i < ints.size(); ++i) {
    out += cat(i ? ", " : "", ints[i]);
  }
  return out + "]";
}

[[noreturn]] void refuse(const OpArgs& a, size_t i, const std::string& why) {
  throw FxError(
      cat("config '", a.param_name(i), "' = ", value_repr(a[i]), ": ", why));
}

// Every int within +-kMaxConfigInt, in every kind's config.
void check_int_bound(const OpArgs& a) {
  for (size_t i = 0; i < a.size(); ++i) {
    for (int64_t v : ints_of(a[i])) {
      if (v > kMaxConfigInt || v < -kMaxConfigInt) {
        refuse(a, i,
               cat("every int of a module config must lie within +-",
                   kMaxConfigInt));
      }
    }
  }
}

int index_of(const OpArgs& a, const std::string& name) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.param_name(i) == name) return static_cast<int>(i);
  }
  return -1;
}

void check_rule(const OpArgs& a, const ConfigRule& rule) {
  int found = index_of(a, rule.param);
  if (found < 0) {
    throw FxError(cat("config rule for '", rule.param,
                      "': the constructor has no such parameter"));
  }
  size_t i = static_cast<size_t>(found);
  if (a[i].isDouble()) {
    double v = a[i].toDouble();
    if (!std::isfinite(v) && std::isfinite(rule.min_float)) {
      refuse(a, i, "must be a finite number");
    }
    if (v < rule.min_float || v > rule.max_float) {
      refuse(a, i,
             cat("must lie in [", python_float_repr(rule.min_float), ", ",
                 python_float_repr(rule.max_float), "]"));
    }
    return;
  }
  for (int64_t v : ints_of(a[i])) {
    if (v < rule.min) refuse(a, i, cat("must be at least ", rule.min));
    if (v > rule.max) refuse(a, i, cat("must be at most ", rule.max));
  }
}

std::string shape_repr(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += cat(i ? ", " : "", shape[i]);
  return out + "]";
}

// A shape's element count, refusing a negative size or one whose bytes (at
// 8 per element, the widest dtype a config can ask for) overflow int64.
void check_shape(const std::string& key, const std::vector<int64_t>& shape) {
  int64_t bytes = 8;
  for (int64_t d : shape) {
    if (d < 0) {
      throw FxError(cat("the config gives '", key, "' the shape ",
                        shape_repr(shape), ", with a negative size"));
    }
    if (d != 0 && bytes > std::numeric_limits<int64_t>::max() / d) {
      throw FxError(cat("the config gives '", key, "' the shape ",
                        shape_repr(shape),
                        ", whose size in bytes overflows a 64-bit int"));
    }
    bytes *= d;
  }
}

// A weight the config implies must be in the file, with its shape.
void check_against_weights(const std::string& key,
                           const std::vector<int64_t>& shape,
                           const ModuleWeights& weights) {
  const at::Tensor* t = weights.find(key);
  if (t == nullptr) {
    throw FxError(cat("'", key, "' is missing from the weights (the config ",
                      "makes it ", shape_repr(shape), ")"));
  }
  if (t->sizes() != c10::IntArrayRef(shape)) {
    throw FxError(cat("weight '", weights.path, ".", key,
                      "': shape mismatch: the config makes it ",
                      shape_repr(shape), ", the weights hold ",
                      shape_repr(t->sizes().vec())));
  }
}

}  // namespace

ConfigRule ints_at_least(std::string param, int64_t min) {
  ConfigRule rule;
  rule.param = std::move(param);
  rule.min = min;
  return rule;
}

ConfigRule ints_in(std::string param, int64_t min, int64_t max) {
  ConfigRule rule = ints_at_least(std::move(param), min);
  rule.max = max;
  return rule;
}

ConfigRule float_in(std::string param, double min, double max) {
  ConfigRule rule;
  rule.param = std::move(param);
  rule.min_float = min;
  rule.max_float = max;
  return rule;
}

bool visit_declared_weights(const ModuleKind& kind, OpArgs& args,
                            const WeightVisitor& visit) {
  if (kind.visit_weights) {
    kind.visit_weights(args, visit);
    return true;
  }
  if (!kind.weight_shapes) return false;
  for (const auto& [key, shape] : kind.weight_shapes(args)) visit(key, shape);
  return true;
}

void check_module_config(const ModuleKind& kind, OpArgs& args,
                         const ModuleWeights* weights) {
  check_int_bound(args);
  for (const ConfigRule& rule : kind.config_rules) check_rule(args, rule);
  if (kind.check_config) kind.check_config(args);
  bool against_file = weights != nullptr && weights->find;
  visit_declared_weights(
      kind, args,
      [&](const std::string& key, const std::vector<int64_t>& shape) {
        check_shape(key, shape);
        if (against_file) check_against_weights(key, shape, *weights);
      });
}

}  // namespace fx
