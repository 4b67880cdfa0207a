#include "fx_core/runtime/op_registry.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <utility>

#include "fx_core/runtime/aten/aten_op.h"
#include "fx_core/runtime/aten/aten_target.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

namespace {

// A default value written as a Python literal.
c10::IValue parse_literal(std::string_view text, std::string_view signature) {
  text = strip(text);
  auto bad = [&]() -> FxError {
    return FxError(cat("signature '", signature,
                       "': cannot read default value '", text, "'"));
  };
  if (text == "None") return c10::IValue();
  if (text == "True") return true;
  if (text == "False") return false;
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"')) {
    return std::string(text.substr(1, text.size() - 2));
  }
  if (text.size() >= 2 && (text.front() == '(' || text.front() == '[')) {
    std::vector<c10::IValue> items;
    for (std::string_view part :
         split_top_level(text.substr(1, text.size() - 2))) {
      if (!part.empty()) items.push_back(parse_literal(part, signature));
    }
    return text.front() == '(' ? make_tuple(std::move(items))
                               : make_list(std::move(items));
  }
  if (text.substr(0, 6) == "torch.") {
    if (auto t = parse_dtype(text)) return static_cast<int64_t>(*t);
    if (auto f = parse_memory_format(text)) return static_cast<int64_t>(*f);
    if (auto l = parse_layout(text)) return static_cast<int64_t>(*l);
    throw bad();
  }
  std::string s(text);
  char* end = nullptr;
  if (s.find_first_of(".eE") == std::string::npos && s != "inf" &&
      s != "-inf") {
    long long i = std::strtoll(s.c_str(), &end, 10);
    if (end != s.c_str() && *end == '\0') return static_cast<int64_t>(i);
    throw bad();
  }
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() && *end == '\0') return d;
  throw bad();
}

// Whether a named parameter (not *args or **kwargs) takes keyword `name`.
bool takes_keyword(const OpSchema& schema, std::string_view name) {
  int p = schema.index_of(name);
  return p >= 0 && (schema.params()[p].kind == OpParam::Kind::kPositional ||
                    schema.params()[p].kind == OpParam::Kind::kKeywordOnly);
}

}  // namespace

OpSchema OpSchema::parse(std::string_view signature) {
  OpSchema schema;
  schema.text_ = std::string(signature);
  bool keyword_only = false;
  bool seen_default = false;
  for (std::string_view part : split_top_level(signature)) {
    if (part.empty()) {
      throw FxError(cat("signature '", signature, "': empty parameter"));
    }
    if (part == "*") {
      keyword_only = true;
      continue;
    }
    OpParam p;
    if (schema.params_.size() > 0 &&
        schema.params_.back().kind == OpParam::Kind::kVarKeyword) {
      throw FxError(
          cat("signature '", signature, "': a parameter follows **kwargs"));
    }
    if (part.substr(0, 2) == "**") {
      p.kind = OpParam::Kind::kVarKeyword;
      p.name = std::string(strip(part.substr(2)));
    } else if (part.front() == '*') {
      if (keyword_only) {
        throw FxError(
            cat("signature '", signature, "': more than one * parameter"));
      }
      p.kind = OpParam::Kind::kVarPositional;
      p.name = std::string(strip(part.substr(1)));
      keyword_only = true;
    } else {
      size_t eq = part.find('=');
      p.name = std::string(strip(part.substr(0, eq)));
      p.kind = keyword_only ? OpParam::Kind::kKeywordOnly
                            : OpParam::Kind::kPositional;
      if (eq != std::string_view::npos) {
        p.has_default = true;
        p.default_value = parse_literal(part.substr(eq + 1), signature);
      } else if (seen_default && !keyword_only) {
        throw FxError(cat("signature '", signature, "': parameter '", p.name,
                          "' without a default follows one with a default"));
      }
      seen_default |= p.has_default;
    }
    if (p.name.empty() || schema.index_of(p.name) >= 0) {
      throw FxError(cat("signature '", signature, "': bad or repeated name '",
                        p.name, "'"));
    }
    schema.params_.push_back(std::move(p));
  }
  return schema;
}

int OpSchema::index_of(std::string_view name) const {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

bool bind_call(const OpSchema& schema, size_t num_args,
               const std::vector<std::string_view>& kwarg_names,
               std::vector<ParamSource>* sources, std::string* error) {
  const std::vector<OpParam>& params = schema.params();
  sources->assign(params.size(), ParamSource{});
  std::vector<bool> bound(params.size(), false);
  size_t next_arg = 0;
  size_t num_positional = 0;
  bool has_var = false;
  bool has_var_keyword = false;
  for (size_t p = 0; p < params.size(); ++p) {
    if (params[p].kind == OpParam::Kind::kVarKeyword) {
      has_var_keyword = true;
      (*sources)[p] = {ParamSource::Kind::kVarKwargs, 0, 0};
      bound[p] = true;
      continue;
    }
    if (params[p].kind == OpParam::Kind::kPositional) {
      ++num_positional;
      if (next_arg < num_args) {
        (*sources)[p] = {ParamSource::Kind::kArg,
                         static_cast<uint32_t>(next_arg++), 0};
        bound[p] = true;
      }
    } else if (params[p].kind == OpParam::Kind::kVarPositional) {
      has_var = true;
      (*sources)[p] = {ParamSource::Kind::kVarArgs,
                       static_cast<uint32_t>(next_arg),
                       static_cast<uint32_t>(num_args - next_arg)};
      next_arg = num_args;
      bound[p] = true;
    }
  }
  // Keyword errors come first, then too many positionals, as in CPython.
  size_t kwonly_given = 0;
  for (size_t k = 0; k < kwarg_names.size(); ++k) {
    int p = schema.index_of(kwarg_names[k]);
    if (p < 0 || params[p].kind == OpParam::Kind::kVarPositional ||
        params[p].kind == OpParam::Kind::kVarKeyword) {
      if (has_var_keyword) continue;  // collected by **kwargs
      *error = cat("got an unexpected keyword argument '", kwarg_names[k], "'");
      return false;
    }
    if (bound[p]) {
      *error = cat("got multiple values for argument '", kwarg_names[k], "'");
      return false;
    }
    (*sources)[p] = {ParamSource::Kind::kKwarg, static_cast<uint32_t>(k), 0};
    bound[p] = true;
    if (params[p].kind == OpParam::Kind::kKeywordOnly) ++kwonly_given;
  }
  if (next_arg < num_args && !has_var) {
    // CPython's too_many_positional().
    size_t num_defaults = 0;
    for (const OpParam& p : params) {
      if (p.kind == OpParam::Kind::kPositional && p.has_default) {
        ++num_defaults;
      }
    }
    std::string takes =
        num_defaults > 0 ? cat("from ", num_positional - num_defaults, " to ",
                               num_positional, " positional arguments")
                         : cat(num_positional, " positional argument",
                               num_positional == 1 ? "" : "s");
    std::string kwonly =
        kwonly_given == 0
            ? std::string()
            : cat(" positional argument", num_args == 1 ? "" : "s", " (and ",
                  kwonly_given, " keyword-only argument",
                  kwonly_given == 1 ? "" : "s", ")");
    *error =
        cat("takes ", takes, " but ", num_args, kwonly,
            num_args == 1 && kwonly_given == 0 ? " was" : " were", " given");
    return false;
  }
  for (size_t p = 0; p < params.size(); ++p) {
    if (!bound[p] && !params[p].has_default) {
      *error = cat("missing a required argument: '", params[p].name, "'");
      return false;
    }
  }
  return true;
}

// ------------------------------------------------------------------ OpArgs

void OpArgs::wrong_type(size_t i, std::string_view wanted) const {
  throw FxError(cat("argument '", param_name(i), "' must be ", wanted, ", not ",
                    value_type_name(values_[i])));
}

namespace {

// Argument `i`, an int standing for an enumerator (value.cc), names none.
[[noreturn]] void wrong_enum_int(const OpArgs& a, size_t i,
                                 std::string_view wanted) {
  throw FxError(cat("argument '", a.param_name(i), "' must be ", wanted,
                    ", not the int ", a[i].toInt(), ", which names none"));
}

}  // namespace

const at::Tensor& OpArgs::tensor(size_t i) const {
  if (!values_[i].isTensor()) wrong_type(i, "Tensor");
  return values_[i].toTensor();
}

c10::optional<at::Tensor> OpArgs::optional_tensor(size_t i) const {
  if (values_[i].isNone()) return c10::nullopt;
  return tensor(i);
}

namespace {

// A symbolic int (a SymInt, during a symbolic capture) asked for as an int
// is specialised to its value, a guard of the capture (torch's guard_int).
int64_t specialize(const c10::IValue& v) {
  return v.toSymInt().guard_int(__FILE__, __LINE__);
}

}  // namespace

int64_t OpArgs::to_int(size_t i) const {
  const c10::IValue& v = values_[i];
  if (v.isInt()) return v.toInt();
  if (v.isSymInt()) return specialize(v);
  if (v.isBool()) return v.toBool() ? 1 : 0;
  if (v.isTensor() && v.toTensor().numel() == 1 &&
      !v.toTensor().is_floating_point()) {
    return v.toTensor().item<int64_t>();
  }
  wrong_type(i, "int");
}

c10::optional<int64_t> OpArgs::optional_int(size_t i) const {
  if (values_[i].isNone()) return c10::nullopt;
  return to_int(i);
}

double OpArgs::to_double(size_t i) const {
  const c10::IValue& v = values_[i];
  if (v.isDouble()) return v.toDouble();
  if (v.isInt()) return static_cast<double>(v.toInt());
  if (v.isBool()) return v.toBool() ? 1.0 : 0.0;
  if (v.isTensor() && v.toTensor().numel() == 1) {
    return v.toTensor().item<double>();
  }
  wrong_type(i, "float");
}

c10::optional<double> OpArgs::optional_double(size_t i) const {
  if (values_[i].isNone()) return c10::nullopt;
  return to_double(i);
}

bool OpArgs::to_bool(size_t i) const {
  const c10::IValue& v = values_[i];
  if (v.isBool()) return v.toBool();
  if (v.isInt()) return v.toInt() != 0;
  wrong_type(i, "bool");
}

std::string OpArgs::to_string(size_t i) const {
  if (!values_[i].isString()) wrong_type(i, "str");
  return values_[i].toStringRef();
}

at::Scalar OpArgs::scalar(size_t i) const {
  const c10::IValue& v = values_[i];
  if (v.isInt()) return v.toInt();
  if (v.isDouble()) return v.toDouble();
  if (v.isBool()) return v.toBool();
  if (v.isTensor() && v.toTensor().dim() == 0) return v.toTensor().item();
  wrong_type(i, "a number");
}

c10::optional<at::Scalar> OpArgs::optional_scalar(size_t i) const {
  if (values_[i].isNone()) return c10::nullopt;
  return scalar(i);
}

std::vector<int64_t> OpArgs::int_list(size_t i) const {
  const c10::IValue& v = values_[i];
  if (v.isInt()) return {v.toInt()};
  if (v.isSymInt()) return {specialize(v)};
  if (v.isIntList()) return v.toIntVector();
  if (is_sequence(v)) {
    std::vector<c10::IValue> items = sequence_elements(v);
    // f(*size) called as f((1, 2)): the one element is the list.
    if (items.size() == 1 && is_sequence(items[0])) {
      items = sequence_elements(items[0]);
    }
    std::vector<int64_t> out;
    out.reserve(items.size());
    for (const c10::IValue& item : items) {
      if (item.isInt()) {
        out.push_back(item.toInt());
      } else if (item.isSymInt()) {
        out.push_back(specialize(item));
      } else if (item.isTensor() && item.toTensor().numel() == 1) {
        out.push_back(item.toTensor().item<int64_t>());
      } else {
        wrong_type(i, "a sequence of ints");
      }
    }
    return out;
  }
  wrong_type(i, "an int or a sequence of ints");
}

c10::optional<std::vector<int64_t>> OpArgs::optional_int_list(size_t i) const {
  if (values_[i].isNone()) return c10::nullopt;
  return int_list(i);
}

std::vector<at::Tensor> OpArgs::tensor_list(size_t i) const {
  const c10::IValue& v = values_[i];
  if (v.isTensorList()) return v.toTensorVector();
  if (!is_sequence(v)) wrong_type(i, "a sequence of Tensors");
  std::vector<c10::IValue> items = sequence_elements(v);
  if (items.size() == 1 && is_sequence(items[0])) {
    items = sequence_elements(items[0]);
  }
  std::vector<at::Tensor> out;
  out.reserve(items.size());
  for (const c10::IValue& item : items) {
    if (!item.isTensor()) wrong_type(i, "a sequence of Tensors");
    out.push_back(item.toTensor());
  }
  return out;
}

c10::optional<c10::ScalarType> OpArgs::optional_dtype(size_t i) const {
  if (values_[i].isNone()) return c10::nullopt;
  if (!values_[i].isInt()) wrong_type(i, "a torch.dtype");
  std::optional<c10::ScalarType> dtype = dtype_from_int(values_[i].toInt());
  if (!dtype) wrong_enum_int(*this, i, "a torch.dtype");
  return *dtype;
}

c10::optional<c10::MemoryFormat> OpArgs::optional_memory_format(
    size_t i) const {
  if (values_[i].isNone()) return c10::nullopt;
  if (!values_[i].isInt()) wrong_type(i, "a torch.memory_format");
  std::optional<c10::MemoryFormat> format =
      memory_format_from_int(values_[i].toInt());
  if (!format) wrong_enum_int(*this, i, "a torch.memory_format");
  return *format;
}

// ---------------------------------------------------------------- registry

const OpDef& OpRegistry::add(Opcode op, std::string_view target,
                             std::string_view signature, OpKernel kernel,
                             std::string_view cpp) {
  if (op != Opcode::kCallFunction && op != Opcode::kCallMethod) {
    throw FxError(cat("OpRegistry::add: '", target,
                      "': only call_function and call_method targets are "
                      "registered, not ",
                      opcode_name(op)));
  }
  if (!kernel) {
    throw FxError(cat("OpRegistry::add: '", target, "' has no kernel"));
  }
  auto def = std::make_unique<OpDef>();
  def->op = op;
  def->target = std::string(target);
  def->schema = OpSchema::parse(signature);
  def->kernel = std::move(kernel);
  def->cpp = std::string(cpp);
  std::lock_guard<std::mutex> lock(mutex_);
  OpDef* raw = def.get();
  defs_.push_back(std::move(def));
  (op == Opcode::kCallFunction ? functions_ : methods_)[raw->target] = raw;
  return *raw;
}

const OpDef* OpRegistry::find(Opcode op, std::string_view target) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto& map = op == Opcode::kCallFunction ? functions_ : methods_;
  auto it = map.find(std::string(target));
  return it == map.end() ? nullptr : it->second;
}

namespace {

using Candidates = std::vector<const AtenOp::Overload*>;

// An ATen operator as a registry entry: `*args, **kwargs`, bound per call,
// among `candidates` when a plan specialised it for a node.
std::unique_ptr<OpDef> aten_def(Opcode op, std::string_view target,
                                std::shared_ptr<const AtenOp> aten,
                                std::shared_ptr<const Candidates> candidates) {
  auto def = std::make_unique<OpDef>();
  def->op = op;
  def->target = std::string(target);
  def->schema = OpSchema::parse("*args, **kwargs");
  def->call_values = [aten, candidates](std::vector<c10::IValue> args,
                                        const AtenOp::Kwargs& kwargs) {
    return candidates ? aten->call(std::move(args), kwargs, *candidates)
                      : aten->call(std::move(args), kwargs);
  };
  def->kernel = [call = def->call_values](OpArgs& a) {
    AtenOp::Kwargs kwargs;
    for (const auto& e : a[1].toGenericDict()) {
      kwargs.emplace_back(e.key().toStringRef(), e.value());
    }
    return call(sequence_elements(a[0]), kwargs);
  };
  if (!candidates) {
    def->specialize = [op, target = def->target, aten](const Node& node) {
      return aten_def(op, target, aten,
                      std::make_shared<Candidates>(aten->candidates(node)));
    };
  }
  def->keeps_args = true;  // call() copies what it passes on
  return def;
}

}  // namespace

const OpDef* OpRegistry::resolve(Opcode op, std::string_view target) {
  if (const OpDef* def = find(op, target)) return def;
  return resolve_aten(op, target);
}

const OpDef* OpRegistry::resolve_aten(Opcode op, std::string_view target) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& cache = op == Opcode::kCallMethod ? aten_methods_ : aten_functions_;
  auto it = cache.find(std::string(target));
  if (it != cache.end()) return it->second;
  const OpDef* resolved = nullptr;
  if (std::optional<AtenTarget> t = aten_target(op, target)) {
    if (std::shared_ptr<const AtenOp> aten = AtenOp::find(*t)) {
      defs_.push_back(aten_def(op, target, std::move(aten), nullptr));
      resolved = defs_.back().get();
    }
  }
  cache.emplace(std::string(target), resolved);
  return resolved;
}

const OpDef& OpRegistry::get(Opcode op, std::string_view target) {
  if (const OpDef* def = resolve(op, target)) return *def;
  throw FxError(no_kernel_message(op, target));
}

std::string no_kernel_message(Opcode op, std::string_view target) {
  if (op == Opcode::kCallFunction) {
    // Most often a plugin's custom op whose plugin was not loaded.
    return cat("no kernel for call_function target '", target,
               "': if a plugin defines it, load that plugin (fx: --plugin "
               "PATH or --plugin-dir DIR; fx_sdk: plugins=[PATH]); in C++, "
               "register one with fx::OpRegistry::global().add()");
  }
  return cat("no kernel for ", opcode_name(op), " target '", target,
             "': register one with fx::OpRegistry::global().add()");
}

std::vector<std::string> OpRegistry::targets(Opcode op) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto& map = op == Opcode::kCallFunction ? functions_ : methods_;
  std::vector<std::string> out;
  out.reserve(map.size());
  for (const auto& entry : map) out.push_back(entry.first);
  std::sort(out.begin(), out.end());
  return out;
}

bool bind_node_arguments(const OpSchema& schema, const Node::Args& args,
                         const Node::Kwargs& kwargs,
                         std::vector<std::optional<Argument>>* bound,
                         std::string* error) {
  std::vector<std::string_view> names;
  names.reserve(kwargs.size());
  for (const auto& kw : kwargs) names.push_back(kw.first);
  std::vector<ParamSource> sources;
  if (!bind_call(schema, args.size(), names, &sources, error)) return false;
  bound->assign(sources.size(), std::nullopt);
  for (size_t p = 0; p < sources.size(); ++p) {
    const ParamSource& s = sources[p];
    switch (s.kind) {
      case ParamSource::Kind::kArg:
        (*bound)[p] = args[s.index];
        break;
      case ParamSource::Kind::kKwarg:
        (*bound)[p] = kwargs[s.index].second;
        break;
      case ParamSource::Kind::kDefault:
        break;
      case ParamSource::Kind::kVarArgs:
        (*bound)[p] = Argument::tuple(ArgumentList(
            args.begin() + s.index, args.begin() + s.index + s.count));
        break;
      case ParamSource::Kind::kVarKwargs: {
        ArgumentDict rest;
        for (const auto& [name, value] : kwargs) {
          if (takes_keyword(schema, name)) continue;
          rest.emplace_back(name, value);
        }
        (*bound)[p] = Argument::dict(std::move(rest));
        break;
      }
    }
  }
  return true;
}

bool bind_values(const OpSchema& schema, std::vector<c10::IValue> args,
                 const std::vector<std::pair<std::string, c10::IValue>>& kwargs,
                 std::vector<c10::IValue>* values, std::string* error) {
  std::vector<std::string_view> names;
  names.reserve(kwargs.size());
  for (const auto& kw : kwargs) names.push_back(kw.first);
  std::vector<ParamSource> sources;
  if (!bind_call(schema, args.size(), names, &sources, error)) return false;
  const std::vector<OpParam>& params = schema.params();
  values->assign(params.size(), c10::IValue());
  for (size_t p = 0; p < params.size(); ++p) {
    const ParamSource& s = sources[p];
    switch (s.kind) {
      case ParamSource::Kind::kArg:
        (*values)[p] = std::move(args[s.index]);
        break;
      case ParamSource::Kind::kKwarg:
        (*values)[p] = kwargs[s.index].second;
        break;
      case ParamSource::Kind::kDefault:
        (*values)[p] = params[p].default_value;
        break;
      case ParamSource::Kind::kVarArgs:
        (*values)[p] = make_tuple(std::vector<c10::IValue>(
            std::make_move_iterator(args.begin() + s.index),
            std::make_move_iterator(args.begin() + s.index + s.count)));
        break;
      case ParamSource::Kind::kVarKwargs: {
        c10::impl::GenericDict rest(c10::StringType::get(),
                                    c10::AnyType::get());
        for (const auto& [name, value] : kwargs) {
          if (!takes_keyword(schema, name)) rest.insert_or_assign(name, value);
        }
        (*values)[p] = rest;
        break;
      }
    }
  }
  return true;
}

c10::IValue call_op(
    const OpDef& def, std::vector<c10::IValue> args,
    const std::vector<std::pair<std::string, c10::IValue>>& kwargs) {
  if (def.call_values) return def.call_values(std::move(args), kwargs);
  if (!def.specialize && !kwargs.empty()) {
    // A keyword the hand-written signature leaves out may be the ATen
    // operator's (torch.div(x, y, out=None)): as compiled plans do.
    std::vector<std::string_view> names;
    for (const auto& kv : kwargs) names.push_back(kv.first);
    std::vector<ParamSource> sources;
    std::string unbound;
    if (!bind_call(def.schema, args.size(), names, &sources, &unbound)) {
      const OpDef* aten = OpRegistry::global().resolve_aten(def.op, def.target);
      try {
        if (aten != nullptr) return call_op(*aten, args, kwargs);
      } catch (const FxError&) {
        // ATen's overloads do not take it either: the signature's message.
      }
      throw FxError(cat(def.target, "() ", unbound));
    }
  }
  std::vector<c10::IValue> values;
  std::string error;
  if (!bind_values(def.schema, std::move(args), kwargs, &values, &error)) {
    throw FxError(cat(def.target, "() ", error));
  }
  OpArgs op_args(def.schema, values.data());
  return def.kernel(op_args);
}

}  // namespace fx
