#include "fx_core/io/python_tuples.h"

#include <ATen/core/jit_type.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

c10::TupleTypePtr named_type(const std::string& name,
                             const std::vector<std::string>& fields,
                             const std::vector<c10::TypePtr>& types) {
  return c10::TupleType::createNamed(c10::QualifiedName(name), fields, types);
}

// A named tuple field's type: the element's, or (a named tuple's fields
// cannot hold Any, and a pytree leaf can be anything) its kind's.
c10::TypePtr field_type(const c10::IValue& v) {
  c10::TypePtr type = v.type();
  if (!c10::containsAnyType(type)) return type;
  if (v.isList()) return c10::AnyListType::get();
  if (v.isTuple()) return c10::AnyTupleType::get();
  return c10::AnyClassType::get();
}

// torch.Size of rank n: fields d0 .. d{n-1}, one type per rank.
c10::TupleTypePtr size_type(size_t rank) {
  static std::mutex mutex;
  static auto* types = new std::vector<c10::TupleTypePtr>();
  std::lock_guard<std::mutex> lock(mutex);
  while (types->size() <= rank) {
    std::vector<std::string> fields;
    for (size_t i = 0; i < types->size(); ++i) fields.push_back(cat("d", i));
    std::vector<c10::TypePtr> ints(fields.size(), c10::IntType::get());
    types->push_back(named_type(kTorchSizeName, fields, ints));
  }
  return (*types)[rank];
}

std::string qualified_tuple_name(const c10::ivalue::Tuple& t) {
  // A named tuple carries its type. An unnamed one gets its type inferred
  // from its elements, which LibTorch refuses for an undefined tensor (the
  // output an operator did not compute, None in Python: the attention
  // weights of _native_multi_head_attention without need_weights).
  c10::TupleTypePtr type;
  try {
    type = t.type();
  } catch (const c10::Error&) {
    return "";
  }
  if (!type->name()) return "";
  return type->name()->qualifiedName();
}

}  // namespace

c10::IValue make_torch_size(c10::IntArrayRef dims) {
  std::vector<c10::IValue> items(dims.begin(), dims.end());
  return make_torch_size(std::move(items));
}

c10::IValue make_torch_size(std::vector<c10::IValue> dims) {
  for (const c10::IValue& d : dims) {
    if (!d.isInt()) {
      throw FxError(cat("torch.Size() takes an iterable of 'int' (item is '",
                        d.tagKind(), "')"));
    }
  }
  c10::TupleTypePtr type = size_type(dims.size());
  return c10::ivalue::Tuple::createNamed(std::move(dims), std::move(type));
}

bool is_torch_size(const c10::IValue& v) {
  return v.isTuple() && qualified_tuple_name(v.toTupleRef()) == kTorchSizeName;
}

c10::TupleTypePtr return_type(const std::string& name,
                              const std::vector<c10::Argument>& returns) {
  static std::mutex mutex;
  static auto* types =
      new absl::flat_hash_map<std::string, c10::TupleTypePtr>();
  std::vector<std::string> fields;
  std::vector<c10::TypePtr> field_types;
  std::string key = name;
  for (const c10::Argument& r : returns) {
    fields.push_back(r.name());
    field_types.push_back(r.type());
    append(&key, ",", r.name(), ":", r.type()->annotation_str());
  }
  std::lock_guard<std::mutex> lock(mutex);
  auto it = types->find(key);
  if (it == types->end()) {
    c10::TupleTypePtr type =
        named_type(kReturnTypesPrefix + name, fields, field_types);
    it = types->emplace(key, std::move(type)).first;
  }
  return it->second;
}

c10::TupleTypePtr find_return_type(const std::string& name, size_t count) {
  bool out = name.size() > 4 && name.compare(name.size() - 4, 4, "_out") == 0;
  std::string op = out ? name.substr(0, name.size() - 4) : name;
  for (const auto& candidate : torch::jit::getAllOperatorsFor(
           c10::Symbol::fromQualString("aten::" + op))) {
    const c10::FunctionSchema& schema = candidate->schema();
    bool has_out = false;
    for (const c10::Argument& a : schema.arguments()) has_out |= a.is_out();
    const std::vector<c10::Argument>& returns = schema.returns();
    if (has_out != out || returns.size() != count) continue;
    if (std::all_of(returns.begin(), returns.end(),
                    [](const c10::Argument& r) { return !r.name().empty(); })) {
      return return_type(name, returns);
    }
  }
  return nullptr;
}

c10::IValue make_return_type(const std::string& name,
                             std::vector<c10::IValue> elements) {
  c10::TupleTypePtr type = find_return_type(name, elements.size());
  if (!type) {
    std::vector<c10::Argument> returns;
    for (size_t i = 0; i < elements.size(); ++i) {
      returns.emplace_back(cat("field", i), c10::TensorType::get());
    }
    type = return_type(name, returns);
  }
  return c10::ivalue::Tuple::createNamed(std::move(elements), std::move(type));
}

c10::IValue make_asm_output(const at::Tensor& output, const at::Tensor& loss) {
  static const c10::TupleTypePtr type =
      named_type(kAsmOutputName, {"output", "loss"},
                 {c10::TensorType::get(), c10::TensorType::get()});
  return c10::ivalue::Tuple::createNamed({output, loss}, type);
}

c10::IValue make_named_tuple(const std::string& qualified_name,
                             const std::vector<std::string>& fields,
                             std::vector<c10::IValue> elements) {
  if (fields.size() != elements.size()) {
    throw FxError(cat(qualified_name, " has ", fields.size(), " fields, not ",
                      elements.size()));
  }
  std::vector<c10::TypePtr> types;
  for (const c10::IValue& e : elements) types.push_back(field_type(e));
  return c10::ivalue::Tuple::createNamed(
      std::move(elements), named_type(qualified_name, fields, types));
}

std::string python_tuple_name(const c10::IValue& v) {
  return v.isTuple() ? qualified_tuple_name(v.toTupleRef()) : "";
}

std::optional<c10::IValue> named_tuple_field(const c10::IValue& v,
                                             const std::string& field) {
  if (!v.isTuple() || python_tuple_name(v).empty()) return std::nullopt;
  const c10::ivalue::Tuple& t = v.toTupleRef();
  const c10::TupleTypePtr type = t.type();
  if (!type->schema() || !type->name() ||
      type->name()->qualifiedName() == kTorchSizeName) {
    return std::nullopt;
  }
  const std::vector<c10::Argument>& fields = type->schema()->arguments();
  for (size_t i = 0; i < fields.size() && i < t.elements().size(); ++i) {
    if (fields[i].name() == field) return t.elements()[i];
  }
  return std::nullopt;
}

c10::IValue tuple_like(const c10::IValue& like,
                       std::vector<c10::IValue> items) {
  if (python_tuple_name(like).empty()) {
    return c10::ivalue::Tuple::create(std::move(items));
  }
  return c10::ivalue::Tuple::createNamed(std::move(items),
                                         like.toTupleRef().type());
}

c10::IValue same_tuple_type(const c10::IValue& like,
                            std::vector<c10::IValue> items) {
  if (is_torch_size(like)) return make_torch_size(std::move(items));
  return c10::ivalue::Tuple::create(std::move(items));
}

}  // namespace fx
