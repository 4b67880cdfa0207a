#include "fx_core/runtime/value.h"

#include <c10/core/Device.h>

#include <utility>

#include "fx_core/ir/node.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// Capsules hold a CustomClassHolder; these wrap the two payloads.
struct SliceCapsule : torch::CustomClassHolder {
  SliceValue slice;
};
struct EllipsisCapsule : torch::CustomClassHolder {};

struct DtypeName {
  const char* name;
  c10::ScalarType type;
};

// Python's spellings of the dtypes (the first one of each type is canonical,
// as repr(dtype) shows it).
constexpr DtypeName kDtypes[] = {
    {"torch.float32", c10::ScalarType::Float},
    {"torch.float64", c10::ScalarType::Double},
    {"torch.float16", c10::ScalarType::Half},
    {"torch.bfloat16", c10::ScalarType::BFloat16},
    {"torch.complex64", c10::ScalarType::ComplexFloat},
    {"torch.complex128", c10::ScalarType::ComplexDouble},
    {"torch.complex32", c10::ScalarType::ComplexHalf},
    {"torch.uint8", c10::ScalarType::Byte},
    {"torch.int8", c10::ScalarType::Char},
    {"torch.int16", c10::ScalarType::Short},
    {"torch.int32", c10::ScalarType::Int},
    {"torch.int64", c10::ScalarType::Long},
    {"torch.bool", c10::ScalarType::Bool},
    {"torch.qint8", c10::ScalarType::QInt8},
    {"torch.quint8", c10::ScalarType::QUInt8},
    {"torch.qint32", c10::ScalarType::QInt32},
    {"torch.float", c10::ScalarType::Float},
    {"torch.double", c10::ScalarType::Double},
    {"torch.half", c10::ScalarType::Half},
    {"torch.cfloat", c10::ScalarType::ComplexFloat},
    {"torch.cdouble", c10::ScalarType::ComplexDouble},
    {"torch.short", c10::ScalarType::Short},
    {"torch.int", c10::ScalarType::Int},
    {"torch.long", c10::ScalarType::Long},
};

}  // namespace

c10::IValue make_slice(c10::IValue start, c10::IValue stop, c10::IValue step) {
  auto capsule = c10::make_intrusive<SliceCapsule>();
  capsule->slice.start = std::move(start);
  capsule->slice.stop = std::move(stop);
  capsule->slice.step = std::move(step);
  return c10::IValue::make_capsule(std::move(capsule));
}

c10::IValue make_ellipsis() {
  return c10::IValue::make_capsule(c10::make_intrusive<EllipsisCapsule>());
}

const SliceValue* as_slice(const c10::IValue& v) {
  if (!v.isCapsule()) return nullptr;
  auto* capsule = dynamic_cast<SliceCapsule*>(v.toCapsule().get());
  return capsule ? &capsule->slice : nullptr;
}

bool is_ellipsis(const c10::IValue& v) {
  return v.isCapsule() &&
         dynamic_cast<EllipsisCapsule*>(v.toCapsule().get()) != nullptr;
}

c10::IValue make_list(std::vector<c10::IValue> items) {
  bool all_int = true, all_double = true, all_bool = true, all_tensor = true;
  for (const c10::IValue& v : items) {
    all_int &= v.isInt();
    all_double &= v.isDouble();
    all_bool &= v.isBool();
    all_tensor &= v.isTensor();
  }
  if (!items.empty()) {
    if (all_int) {
      c10::List<int64_t> list;
      list.reserve(items.size());
      for (const c10::IValue& v : items) list.push_back(v.toInt());
      return list;
    }
    if (all_double) {
      c10::List<double> list;
      list.reserve(items.size());
      for (const c10::IValue& v : items) list.push_back(v.toDouble());
      return list;
    }
    if (all_bool) {
      c10::List<bool> list;
      for (const c10::IValue& v : items) list.push_back(v.toBool());
      return list;
    }
    if (all_tensor) {
      c10::List<at::Tensor> list;
      list.reserve(items.size());
      for (c10::IValue& v : items) list.push_back(std::move(v).toTensor());
      return list;
    }
  }
  c10::impl::GenericList list(c10::AnyType::get());
  list.reserve(items.size());
  for (c10::IValue& v : items) list.push_back(std::move(v));
  return list;
}

c10::IValue make_tuple(std::vector<c10::IValue> items) {
  return c10::ivalue::Tuple::create(std::move(items));
}

c10::IValue make_tuple_of(const NamedTupleType* type,
                          std::vector<c10::IValue> items) {
  if (type == nullptr) return make_tuple(std::move(items));
  return make_named_tuple(type->name, type->fields, std::move(items));
}

std::vector<c10::IValue> dict_key_values(const Argument& dict) {
  std::vector<c10::IValue> keys;
  keys.reserve(dict.items().size());
  if (const ArgumentList* constant_keys = dict.dict_keys()) {
    for (const Argument& key : *constant_keys) {
      keys.push_back(constant_value(key));
    }
  } else {
    for (const auto& kv : dict.items()) keys.emplace_back(kv.first);
  }
  return keys;
}

c10::IValue make_dict_of(std::vector<c10::IValue> keys,
                         std::vector<c10::IValue> values) {
  bool all_str = true;
  bool all_int = !keys.empty();
  for (const c10::IValue& k : keys) {
    all_str &= k.isString();
    all_int &= k.isInt();
  }
  c10::TypePtr key_type = all_str   ? c10::TypePtr(c10::StringType::get())
                          : all_int ? c10::TypePtr(c10::IntType::get())
                                    : c10::TypePtr(c10::AnyType::get());
  c10::impl::GenericDict dict(key_type, c10::AnyType::get());
  for (size_t i = 0; i < keys.size() && i < values.size(); ++i) {
    dict.insert_or_assign(std::move(keys[i]), std::move(values[i]));
  }
  return dict;
}

namespace {

bool is_container(const c10::IValue& v) {
  return v.isList() || v.isTuple() || v.isGenericDict();
}

// Whether `v` nests containers more than `limit` deep (`v` itself counts).
bool deeper_than(const c10::IValue& v, size_t limit) {
  if (!is_container(v)) return false;
  if (limit == 0) return true;
  auto deeper = [&](const c10::IValue& e) { return deeper_than(e, limit - 1); };
  if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) {
      if (deeper(e)) return true;
    }
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) {
      if (deeper(e)) return true;
    }
  } else {
    for (const auto& entry : v.toGenericDict()) {
      if (deeper(entry.value())) return true;
    }
  }
  return false;
}

}  // namespace

void check_value_depth(const c10::IValue& v) {
  if (deeper_than(v, kMaxValueDepth)) {
    throw FxError(cat("a value nested deeper than ", kMaxValueDepth,
                      " levels of lists, tuples and dicts (the depth graph "
                      "files may nest arguments)"));
  }
}

bool is_sequence(const c10::IValue& v) { return v.isList() || v.isTuple(); }

std::vector<c10::IValue> sequence_elements(const c10::IValue& v) {
  if (v.isTuple()) {
    const auto& elems = v.toTupleRef().elements();
    return std::vector<c10::IValue>(elems.begin(), elems.end());
  }
  if (v.isList()) return v.toListRef().vec();
  throw FxError(cat("expected a list or tuple but got ", value_type_name(v)));
}

Argument constant_argument(const c10::IValue& v) {
  if (v.isNone()) return Argument();
  if (v.isBool()) return Argument(v.toBool());
  if (v.isInt()) return Argument(v.toInt());
  if (v.isDouble()) return Argument(v.toDouble());
  if (v.isString()) return Argument(v.toStringRef());
  if (v.isDevice()) return Argument::device(v.toDevice().str());
  if (const SliceValue* s = as_slice(v)) {
    return Argument::slice(constant_argument(s->start),
                           constant_argument(s->stop),
                           constant_argument(s->step));
  }
  if (is_ellipsis(v)) return Argument::ellipsis();
  if (v.isTuple() || v.isList()) {
    ArgumentList items;
    for (const c10::IValue& e : sequence_elements(v)) {
      items.push_back(constant_argument(e));
    }
    return v.isTuple() ? Argument::tuple(std::move(items))
                       : Argument::list(std::move(items));
  }
  if (v.isGenericDict()) {
    KeyedArgumentDict items;
    for (const auto& entry : v.toGenericDict()) {
      const c10::IValue& key = entry.key();
      if (!key.isString() && !key.isInt() && !key.isDouble() && !key.isBool()) {
        throw FxError(cat("a dict key of type ", value_type_name(key),
                          " (only bool, int, float and str keys have a "
                          "constant spelling)"));
      }
      items.emplace_back(constant_argument(key),
                         constant_argument(entry.value()));
    }
    return Argument::keyed_dict(std::move(items));
  }
  throw FxError(cat("argument of type: ", value_type_name(v)));
}

c10::IValue constant_value(const Argument& arg) {
  switch (arg.kind()) {
    case Argument::Kind::kNone:
      return c10::IValue();
    case Argument::Kind::kBool:
      return arg.as_bool();
    case Argument::Kind::kInt:
      return arg.as_int();
    case Argument::Kind::kFloat:
      return arg.as_float();
    case Argument::Kind::kString:
      return arg.as_string();
    case Argument::Kind::kNode:
      throw FxError(
          cat("node '", arg.as_node()->name(), "' is not a constant value"));
    case Argument::Kind::kList:
    case Argument::Kind::kTuple: {
      std::vector<c10::IValue> items;
      items.reserve(arg.elements().size());
      for (const Argument& a : arg.elements()) {
        items.push_back(constant_value(a));
      }
      return arg.is_list()
                 ? make_list(std::move(items))
                 : make_tuple_of(arg.named_tuple_type(), std::move(items));
    }
    case Argument::Kind::kDict: {
      std::vector<c10::IValue> values;
      values.reserve(arg.items().size());
      for (const auto& kv : arg.items()) {
        values.push_back(constant_value(kv.second));
      }
      return make_dict_of(dict_key_values(arg), std::move(values));
    }
    case Argument::Kind::kSlice: {
      const ArgumentList& e = arg.elements();
      return make_slice(constant_value(e[0]), constant_value(e[1]),
                        constant_value(e[2]));
    }
    case Argument::Kind::kEllipsis:
      return make_ellipsis();
    case Argument::Kind::kDtype: {
      std::optional<c10::ScalarType> t = parse_dtype(arg.as_string());
      if (!t) throw FxError(cat("unknown dtype '", arg.as_string(), "'"));
      return static_cast<int64_t>(*t);
    }
    case Argument::Kind::kDevice:
      try {
        return c10::Device(arg.as_string());
      } catch (const std::exception&) {
        throw FxError(cat("unknown device '", arg.as_string(), "'"));
      }
    case Argument::Kind::kMemoryFormat: {
      std::optional<c10::MemoryFormat> f = parse_memory_format(arg.as_string());
      if (!f) {
        throw FxError(cat("unknown memory format '", arg.as_string(), "'"));
      }
      return static_cast<int64_t>(*f);
    }
    case Argument::Kind::kLayout: {
      std::optional<c10::Layout> l = parse_layout(arg.as_string());
      if (!l) throw FxError(cat("unknown layout '", arg.as_string(), "'"));
      return static_cast<int64_t>(*l);
    }
    case Argument::Kind::kQScheme: {
      std::optional<c10::QScheme> q = parse_qscheme(arg.as_string());
      if (!q) throw FxError(cat("unknown qscheme '", arg.as_string(), "'"));
      return static_cast<int64_t>(*q);
    }
    case Argument::Kind::kSymInt:
      throw FxError(cat("the symbolic int ", arg.as_string(),
                        " has no value outside a shape environment"));
  }
  throw FxError("unknown argument kind");
}

std::optional<c10::ScalarType> parse_dtype(std::string_view name) {
  for (const DtypeName& d : kDtypes) {
    if (name == d.name) return d.type;
  }
  return std::nullopt;
}

std::string dtype_name(c10::ScalarType type) {
  for (const DtypeName& d : kDtypes) {
    if (d.type == type) return d.name;
  }
  return cat("torch.", c10::toString(type));
}

std::optional<c10::MemoryFormat> parse_memory_format(std::string_view name) {
  if (name == "torch.contiguous_format") return c10::MemoryFormat::Contiguous;
  if (name == "torch.channels_last") return c10::MemoryFormat::ChannelsLast;
  if (name == "torch.channels_last_3d") {
    return c10::MemoryFormat::ChannelsLast3d;
  }
  if (name == "torch.preserve_format") return c10::MemoryFormat::Preserve;
  return std::nullopt;
}

std::optional<c10::Layout> parse_layout(std::string_view name) {
  if (name == "torch.strided") return c10::Layout::Strided;
  if (name == "torch.sparse_coo") return c10::Layout::Sparse;
  if (name == "torch.sparse_csr") return c10::Layout::SparseCsr;
  if (name == "torch._mkldnn") return c10::Layout::Mkldnn;
  return std::nullopt;
}

// The ints that stand for torch's enums in a graph's values. A dtype,
// layout, memory format or qscheme is held as its enumerator's int, as
// TorchScript holds it; an int read from a file or put in a graph by a user
// can be any int64. c10's enums are 8 bits wide and LibTorch does not check
// a cast: an int naming no enumerator crashed its kernels (a dtype of 100
// reached a noexcept setter and terminated the process, -1 was a segfault)
// or was silently taken for another (263 read as 7, torch.float64). Each
// function returns the enumerator `value` names, std::nullopt for none.
namespace {

// `value` as enumerator E when 0 <= value < end (E's count).
template <typename E>
std::optional<E> below(int64_t value, E end) {
  if (value < 0 || value >= static_cast<int64_t>(end)) return std::nullopt;
  return static_cast<E>(value);
}

}  // namespace

// Every ScalarType but Undefined: torch.uint8 ... torch.bfloat16, the
// quantized and the bit-packed dtypes.
std::optional<c10::ScalarType> dtype_from_int(int64_t value) {
  return below(value, c10::ScalarType::Undefined);
}

std::optional<c10::Layout> layout_from_int(int64_t value) {
  return below(value, c10::Layout::NumOptions);
}

std::optional<c10::MemoryFormat> memory_format_from_int(int64_t value) {
  return below(value, c10::MemoryFormat::NumOptions);
}

std::optional<c10::QScheme> qscheme_from_int(int64_t value) {
  return below(value, c10::QScheme::COMPILE_TIME_NUM_QSCHEMES);
}

namespace {

struct QSchemeName {
  c10::QScheme scheme;
  const char* name;
};
constexpr QSchemeName kQSchemes[] = {
    {c10::kPerTensorAffine, "torch.per_tensor_affine"},
    {c10::kPerChannelAffine, "torch.per_channel_affine"},
    {c10::kPerTensorSymmetric, "torch.per_tensor_symmetric"},
    {c10::kPerChannelSymmetric, "torch.per_channel_symmetric"},
    {c10::kPerChannelAffineFloatQParams,
     "torch.per_channel_affine_float_qparams"},
};

}  // namespace

std::optional<c10::QScheme> parse_qscheme(std::string_view name) {
  for (const QSchemeName& q : kQSchemes) {
    if (name == q.name) return q.scheme;
  }
  return std::nullopt;
}

std::string qscheme_name(c10::QScheme scheme) {
  for (const QSchemeName& q : kQSchemes) {
    if (scheme == q.scheme) return q.name;
  }
  throw FxError(cat("unknown qscheme ", static_cast<int>(scheme)));
}

std::string value_type_name(const c10::IValue& v) {
  if (v.isNone()) return "NoneType";
  if (v.isTensor()) return "Tensor";
  if (v.isBool()) return "bool";
  if (v.isInt()) return "int";
  if (v.isDouble()) return "float";
  if (v.isString()) return "str";
  if (v.isTuple()) {
    std::string name = python_tuple_name(v);
    return name.empty() ? "tuple" : name;
  }
  if (v.isList()) return "list";
  if (v.isGenericDict()) return "dict";
  if (v.isDevice()) return "device";
  if (as_slice(v)) return "slice";
  if (is_ellipsis(v)) return "ellipsis";
  return v.tagKind();
}

}  // namespace fx
