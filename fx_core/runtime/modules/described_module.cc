// Modules described inside a module config (module_spec.h).
#include <torch/nn/module.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fx_core/runtime/modules/module_spec.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

using c10::IValue;
using ModulePtr = std::shared_ptr<torch::nn::Module>;

namespace {

// A module a config argument describes: its type, constructor arguments
// and mode.
struct Described {
  std::string type;
  ArgumentDict config;
  std::optional<bool> training;
};

// Reads the description in config argument `v`; `what` names the argument.
Described parse_description(const IValue& v, const std::string& what) {
  if (!v.isGenericDict()) {
    throw FxError(cat(what,
                      " must describe a module as {\"type\": ..., "
                      "\"config\": {...}}, not a ",
                      value_type_name(v)));
  }
  c10::impl::GenericDict dict = v.toGenericDict();
  auto type = dict.find(std::string("type"));
  auto config = dict.find(std::string("config"));
  if (type == dict.end() || !type->value().isString() || config == dict.end() ||
      !config->value().isGenericDict()) {
    throw FxError(cat(what,
                      " must have a string \"type\" and a dict "
                      "\"config\""));
  }
  Described out;
  out.type = type->value().toStringRef();
  for (const auto& entry : config->value().toGenericDict()) {
    out.config.emplace_back(entry.key().toStringRef(),
                            constant_argument(entry.value()));
  }
  auto training = dict.find(std::string("training"));
  if (training != dict.end() && training->value().isBool()) {
    out.training = training->value().toBool();
  }
  return out;
}

}  // namespace

ModulePtr module_from_description(const IValue& v, const std::string& what) {
  Described d = parse_description(v, what);
  ModulePtr module = ModuleRegistry::global().create(d.type, d.config);
  if (d.training) module->train(*d.training);
  return module;
}

void visit_described_weights(const IValue& v, const std::string& what,
                             const std::string& prefix,
                             const WeightVisitor& visit) {
  Described d = parse_description(v, what);
  ModuleRegistry::global().visit_weights(
      d.type, d.config,
      [&](const std::string& key, const std::vector<int64_t>& shape) {
        visit(cat(prefix, key), shape);
      });
}

}  // namespace fx
