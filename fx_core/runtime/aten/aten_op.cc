#include "fx_core/runtime/aten/aten_op.h"

#include <ATen/core/function_schema.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <algorithm>
#include <mutex>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using Overload = AtenOp::Overload;

// The spelling sort_overloads compares ("Scalar", "int[]", "Tensor?[]").
std::string order_type(const AtenParam& p, bool names) {
  std::string base;
  switch (p.type) {
    case AtenType::kTensor:
      base = "Tensor";
      break;
    case AtenType::kScalar:
      base = "Scalar";
      break;
    case AtenType::kInt:
      base = "int";
      break;
    case AtenType::kFloat:
      base = "float";
      break;
    case AtenType::kBool:
      base = "bool";
      break;
    case AtenType::kString:
      base = names ? "Dimname" : "str";
      break;
    case AtenType::kIntList:
      base = "int[]";
      break;
    case AtenType::kFloatList:
      base = "float[]";
      break;
    case AtenType::kScalarList:
      base = "Scalar[]";
      break;
    case AtenType::kBoolList:
      base = "bool[]";
      break;
    case AtenType::kTensorList:
      base = "Tensor[]";
      break;
    case AtenType::kOptionalTensorList:
      base = "Tensor?[]";
      break;
    case AtenType::kStringList:
      base = names ? "Dimname[]" : "str[]";
      break;
    case AtenType::kScalarType:
      base = "ScalarType";
      break;
    case AtenType::kLayout:
      base = "Layout";
      break;
    case AtenType::kMemoryFormat:
      base = "MemoryFormat";
      break;
    case AtenType::kDevice:
      base = "Device";
      break;
    case AtenType::kGenerator:
      base = "Generator";
      break;
    case AtenType::kUnsupported:
      base = "?";
      break;
  }
  return p.optional ? cat(base, "?") : base;
}

bool uses_names(const Overload& ov) {
  return ov.overload_name.find("names") != std::string::npos ||
         ov.overload_name.find("Dimname") != std::string::npos;
}

// sort_overloads' is_arg_smaller: t1 is tried after t2.
bool arg_smaller(const std::string& t1, const std::string& t2) {
  return (t1 == "Scalar" && t2 == "Tensor") ||
         (t1 == "Scalar?" && t2 == "Tensor?") ||
         (t1.find("Dimname") != std::string::npos &&
          t2.find("Dimname") == std::string::npos) ||
         (t1 == "int[]" && (t2 == "int" || t2 == "int?")) ||
         (t1 == "Tensor[]" && t2 != t1 && t2.find("[]") != std::string::npos);
}

std::vector<std::string> order_types(const Overload& ov) {
  std::vector<std::string> out;
  for (const AtenParam& p : ov.params) {
    out.push_back(order_type(p, uses_names(ov)));
  }
  return out;
}

// sort_overloads' is_smaller: same arity, each argument equal or smaller,
// not all equal.
bool smaller(const std::vector<std::string>& a,
             const std::vector<std::string>& b) {
  if (a.size() != b.size() || a == b) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && !arg_smaller(a[i], b[i])) return false;
  }
  return true;
}

std::string signature_text(const Overload& ov) {
  std::string out = "(";
  bool star = false;
  for (size_t i = 0; i < ov.params.size(); ++i) {
    const AtenParam& p = ov.params[i];
    if (i > 0) out += ", ";
    if (p.keyword_only && !star) {
      out += "*, ";
      star = true;
    }
    append(&out, p.type_str, " ", p.name);
  }
  return out + ")";
}

// Python's order: by signature text, then a topological sort of the
// "tried after" relation, keeping the text order among unrelated ones.
void sort_python_order(std::vector<Overload>* overloads) {
  std::stable_sort(overloads->begin(), overloads->end(),
                   [](const Overload& a, const Overload& b) {
                     return signature_text(a) < signature_text(b);
                   });
  size_t n = overloads->size();
  std::vector<std::vector<std::string>> types;
  for (const Overload& ov : *overloads) types.push_back(order_types(ov));
  std::vector<bool> placed(n, false);
  std::vector<Overload> sorted;
  while (sorted.size() < n) {
    for (size_t i = 0; i < n; ++i) {
      if (placed[i]) continue;
      bool blocked = false;
      for (size_t j = 0; j < n && !blocked; ++j) {
        blocked = !placed[j] && smaller(types[i], types[j]);
      }
      if (blocked) continue;
      placed[i] = true;
      sorted.push_back(std::move((*overloads)[i]));
      break;
    }
  }
  *overloads = std::move(sorted);
}

// torch.return_types.NAME for a schema whose several returns all have names
// (`max.dim -> (Tensor values, Tensor indices)`), called through Python's
// bindings; nullptr otherwise.
c10::TupleTypePtr python_return_type(const c10::FunctionSchema& schema,
                                     const AtenTarget& t) {
  if (t.ops_namespace || schema.returns().size() < 2) return nullptr;
  for (const c10::Argument& r : schema.returns()) {
    if (r.name().empty()) return nullptr;
  }
  std::string name = schema.name();
  return return_type(name.substr(name.find("::") + 2), schema.returns());
}

std::optional<Overload> callable_overload(
    const std::shared_ptr<torch::jit::Operator>& op, const AtenTarget& t) {
  const c10::FunctionSchema& schema = op->schema();
  if (t.exact_overload && schema.overload_name() != t.overload) {
    return std::nullopt;
  }
  if (schema.is_vararg() || schema.is_varret()) return std::nullopt;
  Overload ov;
  ov.op = op;
  ov.overload_name = schema.overload_name();
  ov.num_returns = schema.returns().size();
  ov.returns_tensor_list =
      ov.num_returns == 1 &&
      schema.returns()[0].type()->kind() == c10::TypeKind::ListType;
  ov.return_type = python_return_type(schema, t);
  const std::vector<c10::Argument>& args = schema.arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_out()) return std::nullopt;
    bool input = i == 0 && !t.method && args[i].name() == "self";
    ov.params.push_back(
        make_aten_param(args[i], input ? "input" : args[i].name()));
    if (ov.params.back().type == AtenType::kUnsupported) return std::nullopt;
    bool receiver = t.method && args[i].name() == "self";
    if (receiver) ov.positional.insert(ov.positional.begin(), i);
    if (!receiver && !args[i].kwarg_only()) ov.positional.push_back(i);
  }
  size_t first = t.method ? 1 : 0;
  if (t.method &&
      (ov.positional.empty() || args[ov.positional[0]].name() != "self")) {
    return std::nullopt;  // a method needs a `self`
  }
  ov.varargs_int_list =
      ov.positional.size() == first + 1 &&
      ov.params[ov.positional[first]].type == AtenType::kIntList;
  return ov;
}

bool is_int_value(const c10::IValue& v) {
  return v.isInt() || (v.isTensor() && v.toTensor().dim() == 0 &&
                       !v.toTensor().is_floating_point());
}

// A Node's value while compiling: not known until the graph runs.
struct UnknownValue : torch::CustomClassHolder {};

const c10::IValue& unknown_value() {
  static const auto* v = new c10::IValue(
      c10::IValue::make_capsule(c10::make_intrusive<UnknownValue>()));
  return *v;
}

bool is_unknown(const c10::IValue& v) {
  if (v.isCapsule()) {
    return v.toCapsule().get() == unknown_value().toCapsule().get();
  }
  if (!is_sequence(v)) return false;
  for (const c10::IValue& item : sequence_elements(v)) {
    if (is_unknown(item)) return true;
  }
  return false;
}

// Which value each of `ov`'s parameters gets, by position and keyword, as
// python_arg_parser's FunctionSignature::parse assigns them (no type
// checks); false when the arity or a keyword does not fit.
struct Assignment {
  std::vector<const c10::IValue*> given;  // per parameter; nullptr: default
  c10::IValue gathered;                   // view(2, 3)'s (2, 3)
  // A factory function's `requires_grad=`, which Python's bindings take
  // beside the schema's TensorOptions (dtype, layout, device, pin_memory).
  const c10::IValue* requires_grad = nullptr;
};

bool is_factory(const Overload& ov) {
  for (const AtenParam& p : ov.params) {
    if (p.name == "pin_memory") return true;
  }
  return false;
}

bool assign(const Overload& ov, size_t first,
            const std::vector<c10::IValue>& args, const AtenOp::Kwargs& kwargs,
            Assignment* out) {
  const std::vector<AtenParam>& params = ov.params;
  out->given.assign(params.size(), nullptr);
  size_t a = 0;
  for (size_t k = 0; k < ov.positional.size() && a < args.size(); ++k) {
    size_t p = ov.positional[k];
    if (ov.varargs_int_list && k == first && args.size() - a >= 1 &&
        (is_int_value(args[a]) || is_unknown(args[a]))) {
      out->gathered =
          make_tuple(std::vector<c10::IValue>(args.begin() + a, args.end()));
      out->given[p] = &out->gathered;
      a = args.size();
      break;
    }
    out->given[p] = &args[a++];
  }
  if (a < args.size()) return false;
  for (const auto& [name, value] : kwargs) {
    size_t p = 0;
    while (p < params.size() && params[p].name != name) ++p;
    if (p == params.size() && name == "requires_grad" && is_factory(ov) &&
        (value.isBool() || is_unknown(value))) {
      out->requires_grad = &value;
      continue;
    }
    // Python's signature folds the out= variant in: out=None is the
    // functional call (F.normalize records torch.div(..., out=None)); a
    // Node's value, unknown while compiling, is checked when it runs.
    if (p == params.size() && name == "out" &&
        (value.isNone() || is_unknown(value))) {
      continue;
    }
    if (p == params.size() || out->given[p] != nullptr) return false;
    out->given[p] = &value;
  }
  return true;
}

// Where an assigned value sits among the call's arguments.
AtenOp::ParamSource param_source(const c10::IValue* given, const Assignment& a,
                                 const std::vector<c10::IValue>& args,
                                 const AtenOp::Kwargs& kwargs, size_t first) {
  using Kind = AtenOp::ParamSource::Kind;
  if (given == nullptr) return {Kind::kDefault, 0};
  // view(2, 3): the ints from the first positional argument on.
  if (given == &a.gathered) return {Kind::kGathered, first};
  if (!args.empty() && given >= &args.front() && given <= &args.back()) {
    return {Kind::kPositional, static_cast<size_t>(given - &args.front())};
  }
  for (size_t k = 0; k < kwargs.size(); ++k) {
    if (given == &kwargs[k].second) return {Kind::kKeyword, k};
  }
  return {Kind::kDefault, 0};
}

// Python's type checks on an assignment. When `compiling`, values that hold
// a Node's (unknown) value pass; at run time there are none, so the hot path
// does not look for them.
bool accepts(const Overload& ov, const Assignment& a, bool numbers_as_tensors,
             bool compiling) {
  for (size_t p = 0; p < ov.params.size(); ++p) {
    const c10::IValue* v = a.given[p];
    if (v == nullptr) {
      if (!ov.params[p].default_value.has_value()) return false;
      continue;
    }
    if (compiling && is_unknown(*v)) continue;
    if (!aten_accepts(ov.params[p], *v, numbers_as_tensors)) return false;
  }
  return true;
}

// Binds the call to `ov` onto `stack`; false when `ov` does not accept it.
bool bind_overload(const Overload& ov, size_t first,
                   const std::vector<c10::IValue>& args,
                   const AtenOp::Kwargs& kwargs, bool numbers_as_tensors,
                   torch::jit::Stack* stack, bool* requires_grad) {
  Assignment a;
  if (!assign(ov, first, args, kwargs, &a) ||
      !accepts(ov, a, numbers_as_tensors, /*compiling=*/false)) {
    return false;
  }
  *requires_grad = a.requires_grad != nullptr && a.requires_grad->toBool();
  stack->clear();
  stack->reserve(ov.params.size());
  for (size_t p = 0; p < ov.params.size(); ++p) {
    stack->push_back(a.given[p] ? aten_convert(ov.params[p], *a.given[p])
                                : *ov.params[p].default_value);
  }
  return true;
}

// A node argument as a value: the constant it is, or unknown where it
// references a Node.
c10::IValue static_value(const Argument& arg) {
  switch (arg.kind()) {
    case Argument::Kind::kNode:
      return unknown_value();
    case Argument::Kind::kList:
    case Argument::Kind::kTuple: {
      std::vector<c10::IValue> items;
      for (const Argument& e : arg.elements()) items.push_back(static_value(e));
      return arg.is_list() ? make_list(std::move(items))
                           : make_tuple(std::move(items));
    }
    default:
      try {
        return constant_value(arg);
      } catch (const FxError&) {
        return unknown_value();
      }
  }
}

std::string got_text(const std::vector<c10::IValue>& args,
                     const AtenOp::Kwargs& kwargs) {
  auto type_of = [](const c10::IValue& v) {
    return is_unknown(v) ? std::string("Node") : value_type_name(v);
  };
  std::vector<std::string> parts;
  for (const c10::IValue& v : args) parts.push_back(type_of(v));
  for (const auto& [name, v] : kwargs) {
    parts.push_back(cat(name, "=", type_of(v)));
  }
  return cat("(", join(parts, ", "), ")");
}

}  // namespace

std::shared_ptr<const AtenOp> AtenOp::load(const AtenTarget& target) {
  std::vector<Overload> overloads;
  for (const auto& op : torch::jit::getAllOperatorsFor(
           c10::Symbol::fromQualString(target.name))) {
    if (std::optional<Overload> ov = callable_overload(op, target)) {
      overloads.push_back(std::move(*ov));
    }
  }
  if (overloads.empty()) return nullptr;
  sort_python_order(&overloads);
  return std::shared_ptr<const AtenOp>(
      new AtenOp(target, std::move(overloads)));
}

std::shared_ptr<const AtenOp> AtenOp::find(const AtenTarget& target) {
  static std::mutex mutex;
  static auto* cache =
      new absl::flat_hash_map<std::string, std::shared_ptr<const AtenOp>>();
  std::string key = cat(target.method ? "method " : "function ", target.name,
                        target.exact_overload ? "." : "", target.overload);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache->find(key);
  if (it == cache->end()) it = cache->emplace(key, load(target)).first;
  return it->second;
}

std::vector<const AtenOp::Overload*> AtenOp::candidates(
    const Node& node) const {
  std::vector<c10::IValue> values;
  for (const Argument& a : node.args()) values.push_back(static_value(a));
  Kwargs named;
  for (const auto& [name, a] : node.kwargs()) {
    named.emplace_back(name, static_value(a));
  }
  std::vector<const Overload*> out;
  for (const Overload& ov : overloads_) {
    Assignment a;
    if (assign(ov, target_.method ? 1 : 0, values, named, &a) &&
        accepts(ov, a, /*numbers_as_tensors=*/true, /*compiling=*/true)) {
      out.push_back(&ov);
    }
  }
  if (out.empty()) throw FxError(invalid_call_message(values, named));
  return out;
}

c10::IValue AtenOp::call(std::vector<c10::IValue> args,
                         const Kwargs& kwargs) const {
  return call(std::move(args), kwargs, all_);
}

c10::IValue AtenOp::call(std::vector<c10::IValue> args, const Kwargs& kwargs,
                         const std::vector<const Overload*>& among) const {
  size_t first = target_.method ? 1 : 0;
  torch::jit::Stack stack;
  for (bool numbers_as_tensors : {false, true}) {
    for (const Overload* candidate : among) {
      const Overload& ov = *candidate;
      bool requires_grad = false;
      if (!bind_overload(ov, first, args, kwargs, numbers_as_tensors, &stack,
                         &requires_grad)) {
        continue;
      }
      ov.op->getOperation()(stack);
      if (requires_grad) stack.back().toTensor().requires_grad_(true);
      if (ov.num_returns == 0) return c10::IValue();
      if (ov.num_returns == 1 && ov.returns_tensor_list) {
        return make_tuple(sequence_elements(stack.back()));
      }
      if (ov.num_returns == 1) return std::move(stack.back());
      // Python wraps every Tensor[] it returns as a tuple, also inside a
      // multi-result tuple (histogramdd's bin_edges).
      std::vector<c10::IValue> results(
          std::make_move_iterator(stack.end() - ov.num_returns),
          std::make_move_iterator(stack.end()));
      for (c10::IValue& r : results) {
        if (r.isTensorList()) r = make_tuple(sequence_elements(r));
      }
      if (ov.return_type) {
        return c10::ivalue::Tuple::createNamed(std::move(results),
                                               ov.return_type);
      }
      return c10::ivalue::Tuple::create(std::move(results));
    }
  }
  throw FxError(invalid_call_message(args, kwargs));
}

std::optional<AtenOp::Binding> AtenOp::bind(
    const std::vector<c10::IValue>& args, const Kwargs& kwargs) const {
  size_t first = target_.method ? 1 : 0;
  for (bool numbers_as_tensors : {false, true}) {
    for (const Overload& ov : overloads_) {
      Assignment a;
      if (!assign(ov, first, args, kwargs, &a) ||
          !accepts(ov, a, numbers_as_tensors, /*compiling=*/false)) {
        continue;
      }
      Binding b{&ov, std::vector<ParamSource>(ov.params.size())};
      for (size_t p = 0; p < ov.params.size(); ++p) {
        b.sources[p] = param_source(a.given[p], a, args, kwargs, first);
      }
      return b;
    }
  }
  return std::nullopt;
}

std::string AtenOp::invalid_call_message(const std::vector<c10::IValue>& args,
                                         const Kwargs& kwargs) const {
  std::string expected;
  for (const Overload& ov : overloads_) {
    append(&expected, "\n * ", signature_text(ov));
  }
  return cat(target_.python_name,
             "() received an invalid combination of arguments - got ",
             got_text(args, kwargs), ", but expected one of:", expected);
}

}  // namespace fx
