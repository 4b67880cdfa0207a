#include "fx_core/runtime/modules/module_spec.h"

#include <ATen/ATen.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

namespace {

using c10::IValue;
using nn::FunctionalModuleImpl;

// Where one argument of the forward's call comes from.
struct Source {
  enum class Kind { kForward, kConfig, kSelf, kTraining, kLiteral };
  Kind kind = Kind::kLiteral;
  size_t index = 0;  // forward or config parameter
  std::string name;  // kSelf: the parameter or buffer
  IValue literal;
};

Source resolve_token(const OpSchema& forward, const OpSchema& init,
                     const std::string& token) {
  Source s;
  if (int i = forward.index_of(token); i >= 0) {
    s.kind = Source::Kind::kForward;
    s.index = static_cast<size_t>(i);
  } else if (token.rfind("self.", 0) == 0) {
    s.kind = Source::Kind::kSelf;
    s.name = token.substr(5);
  } else if (token.rfind("init.", 0) == 0) {
    s.kind = Source::Kind::kConfig;
    int j = init.index_of(token.substr(5));
    if (j < 0) throw FxError(cat("no constructor argument '", token, "'"));
    s.index = static_cast<size_t>(j);
  } else if (token == "training") {
    s.kind = Source::Kind::kTraining;
  } else if (int j = init.index_of(token); j >= 0) {
    s.kind = Source::Kind::kConfig;
    s.index = static_cast<size_t>(j);
  } else {
    OpSchema literal = OpSchema::parse(cat("x=", token));
    s.literal = literal.params()[0].default_value;
  }
  return s;
}

IValue source_value(const Source& s, FunctionalModuleImpl& m, OpArgs& a) {
  switch (s.kind) {
    case Source::Kind::kForward:
      return a[s.index];
    case Source::Kind::kConfig:
      return m.config()[s.index].second;
    case Source::Kind::kTraining:
      return m.is_training();
    case Source::Kind::kLiteral:
      return s.literal;
    case Source::Kind::kSelf:
      break;
  }
  c10::optional<at::Tensor> t = m.tensor(s.name);
  if (t && t->defined()) return *t;
  return IValue();  // a parameter the module does not have (bias=False)
}

// The forward of a one-call row.
decltype(ModuleKind::forward) call_forward(const FunctionalModuleSpec& spec,
                                           const OpSchema& forward,
                                           const OpSchema& init) {
  std::vector<Source> args;
  std::vector<std::pair<std::string, Source>> kwargs;
  for (const std::string& t : spec.args) {
    args.push_back(resolve_token(forward, init, t));
  }
  for (const auto& [name, t] : spec.kwargs) {
    kwargs.emplace_back(name, resolve_token(forward, init, t));
  }
  FunctionTarget call(spec.target);
  return [args, kwargs, call](torch::nn::Module& module, OpArgs& a) {
    auto& m = dynamic_cast<FunctionalModuleImpl&>(module);
    std::vector<IValue> call_args;
    call_args.reserve(args.size());
    for (const Source& s : args) call_args.push_back(source_value(s, m, a));
    std::vector<std::pair<std::string, IValue>> call_kwargs;
    for (const auto& [name, s] : kwargs) {
      call_kwargs.emplace_back(name, source_value(s, m, a));
    }
    return call(std::move(call_args), call_kwargs);
  };
}

}  // namespace

IValue ntuple(const IValue& v, size_t n) {
  if (!v.isInt()) return v;
  return make_tuple(std::vector<IValue>(n, v));
}

struct FunctionTarget::State {
  std::string target;
  std::once_flag once;
  const OpDef* def = nullptr;
};

FunctionTarget::FunctionTarget(std::string target)
    : state_(std::make_shared<State>()) {
  state_->target = std::move(target);
}

c10::IValue FunctionTarget::operator()(
    std::vector<c10::IValue> args,
    const std::vector<std::pair<std::string, c10::IValue>>& kwargs) const {
  State& s = *state_;
  // A throwing lookup leaves the flag unset: the next call tries again.
  std::call_once(s.once, [&s] {
    s.def = &OpRegistry::global().get(Opcode::kCallFunction, s.target);
  });
  return call_op(*s.def, std::move(args), kwargs);
}

void add_module_spec(ModuleRegistry& r, const FunctionalModuleSpec& spec) {
  ModuleKind kind;
  kind.type = spec.type.find('.') == std::string::npos
                  ? cat("torch.nn.", spec.type)
                  : spec.type;
  kind.forward_schema = OpSchema::parse(spec.forward);
  kind.init_schema = OpSchema::parse(spec.init);
  kind.config_rules = spec.config_rules;
  kind.check_config = spec.check_config;
  kind.weight_shapes = spec.weight_shapes;
  kind.visit_weights = spec.visit_weights;
  if (spec.custom) {
    CustomForward custom = spec.custom;
    kind.forward = [custom](torch::nn::Module& m, OpArgs& a) {
      return custom(dynamic_cast<FunctionalModuleImpl&>(m), a);
    };
  } else {
    kind.forward = call_forward(spec, kind.forward_schema, kind.init_schema);
  }
  std::string type = kind.type;
  MakeParameters parameters = spec.parameters;
  size_t padding_ints = spec.padding_ints;
  kind.create = [type, parameters, padding_ints](OpArgs& a) {
    FunctionalModuleImpl::Config config;
    for (size_t i = 0; i < a.size(); ++i) {
      bool expand = padding_ints > 0 && a.param_name(i) == "padding";
      config.emplace_back(a.param_name(i),
                          expand ? ntuple(a[i], padding_ints) : a[i]);
    }
    auto m = std::make_shared<FunctionalModuleImpl>(type, std::move(config));
    if (parameters) parameters(*m, a);
    return m;
  };
  auto describe = spec.describe ? spec.describe : describe_config;
  kind.describe = [describe](const torch::nn::Module& module) {
    return describe(dynamic_cast<const FunctionalModuleImpl&>(module));
  };
  r.add(std::move(kind));
}

ArgumentDict describe_config(const FunctionalModuleImpl& module) {
  ArgumentDict out;
  for (const auto& [name, value] : module.config()) {
    // Factory arguments stay out unless given (Quantize's dtype is its
    // output's); a dtype is held as its ScalarType number (an int naming
    // none is described as the int it is).
    if (value.isTensor() ||
        ((name == "device" || name == "dtype") && value.isNone())) {
      continue;
    }
    std::optional<c10::ScalarType> dtype;
    if (name == "dtype" && value.isInt()) dtype = dtype_from_int(value.toInt());
    out.emplace_back(name, dtype ? Argument::dtype(dtype_name(*dtype))
                                 : constant_argument(value));
  }
  return out;
}

Argument describe_module(const torch::nn::Module& module) {
  const ModuleKind* kind = ModuleRegistry::global().find(module);
  if (kind == nullptr || !kind->describe) {
    throw FxError(
        cat("a module of C++ type ", module.name(), " has no description"));
  }
  return Argument::dict({{"type", Argument(kind->type)},
                         {"config", Argument::dict(kind->describe(module))},
                         {"training", Argument(module.is_training())}});
}

}  // namespace fx
