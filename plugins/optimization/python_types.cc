#include "plugins/optimization/python_types.h"

#include <memory>
#include <string>
#include <utility>

namespace fx_optimization {
namespace {

PyType unknown() { return PyType{}; }

PyType class_type(std::string name) {
  PyType t;
  t.kind = PyType::Kind::kClass;
  t.cls = std::move(name);
  return t;
}

PyType wrap(PyType::Kind kind, PyType elem) {
  PyType t;
  t.kind = kind;
  t.elem = std::make_shared<const PyType>(std::move(elem));
  return t;
}

// Python's issubclass on the classes arguments and annotations name.
bool is_subclass(const std::string& derived, const std::string& base) {
  if (derived == base) return true;
  if (derived == "Parameter") return base == "Tensor";
  if (derived == "Size") return base == "tuple";
  if (derived == "bool") return base == "int" || base == "Number";
  return base == "Number" &&
         (derived == "int" || derived == "float" || derived == "complex");
}

// The class of a constant as type(x) names it; kUnknown for a node.
PyType scalar_type(const fxp::ArgView& arg, const NodeType& node_type) {
  switch (arg.kind()) {
    case FX_ARG_NONE:
      return class_type("NoneType");
    case FX_ARG_BOOL:
      return class_type("bool");
    case FX_ARG_INT:
      return class_type("int");
    case FX_ARG_FLOAT:
      return class_type("float");
    case FX_ARG_STRING:
      return arg.is_symint() ? unknown() : class_type("str");
    case FX_ARG_DTYPE:
      return class_type("dtype");
    case FX_ARG_DEVICE:
      return class_type("device");
    case FX_ARG_MEMORY_FORMAT:
      return class_type("memory_format");
    case FX_ARG_LAYOUT:
      return class_type("layout");
    case FX_ARG_SLICE:
      return class_type("slice");
    case FX_ARG_ELLIPSIS:
      return class_type("ellipsis");
    case FX_ARG_DICT:
      return class_type("dict");
    case FX_ARG_LIST:
      return class_type("list");
    case FX_ARG_TUPLE:
      return class_type("tuple");
    case FX_ARG_NODE:
      return node_type(arg.node());
  }
  return unknown();
}

// create_type_hint on a list or tuple of element types: List[T] (Tuple[T,
// ...]) for the most general element class when one class holds them all,
// List[Any] when none does or the sequence is empty; no hint (kUnknown, the
// raw sequence in torch, matching nothing) when an element is not a class.
PyType sequence_hint(const fxp::ArgView& arg, PyType::Kind kind,
                     const NodeType& node_type) {
  std::string base;
  for (size_t i = 0; i < arg.size(); ++i) {
    const PyType t = positional_type(arg[i], node_type);
    if (t.kind != PyType::Kind::kClass) return unknown();
    if (base.empty() || is_subclass(t.cls, base)) {
      if (base.empty()) base = t.cls;
      continue;
    }
    if (is_subclass(base, t.cls)) {
      base = t.cls;
    } else {
      return wrap(kind, class_type("Any"));
    }
  }
  return wrap(kind, class_type(base.empty() ? "Any" : base));
}

// The element class of a List/Tuple hint, or "" when it is not a class
// (issubclass would raise; torch then counts the overload as no match).
std::string element_class(const PyType& t) {
  if (t.elem == nullptr || t.elem->kind != PyType::Kind::kClass) return "";
  return t.elem->cls == "Any" ? "" : t.elem->cls;
}

bool matches_list(const PyType& annotation, const PyType& argument) {
  const std::string wanted = element_class(annotation);
  if (wanted.empty()) return false;  // nested parametric type
  if (argument.kind != PyType::Kind::kList &&
      argument.kind != PyType::Kind::kTuple) {
    return false;
  }
  const std::string given = element_class(argument);
  return !given.empty() && is_subclass(given, wanted);
}

PyType schema_base_type(const std::string& base) {
  for (const char* as_int :
       {"int", "SymInt", "ScalarType", "Layout", "MemoryFormat"}) {
    if (base == as_int) return class_type("int");
  }
  if (base == "Tensor") return class_type("Tensor");
  if (base == "float") return class_type("float");
  if (base == "bool") return class_type("bool");
  if (base == "str" || base == "Dimname") return class_type("str");
  if (base == "Scalar") return class_type("Number");
  if (base == "complex") return class_type("complex");
  if (base == "Device") return class_type("device");
  if (base == "QScheme") return class_type("qscheme");
  return unknown();  // Any, Generator, type variables, script classes
}

}  // namespace

PyType positional_type(const fxp::ArgView& arg, const NodeType& node_type) {
  if (arg.kind() == FX_ARG_LIST) {
    return sequence_hint(arg, PyType::Kind::kList, node_type);
  }
  if (arg.kind() == FX_ARG_TUPLE) {
    return sequence_hint(arg, PyType::Kind::kTuple, node_type);
  }
  return scalar_type(arg, node_type);
}

PyType keyword_type(const fxp::ArgView& arg, const NodeType& node_type) {
  return scalar_type(arg, node_type);
}

PyType meta_type(const fxp::Node& n) {
  const fxp::ArgView t = n.meta("type");
  if (!t || t.kind() != FX_ARG_STRING) return unknown();
  std::string name = t.as_string();
  if (name == "torch.Tensor") return class_type("Tensor");
  if (name == "torch.Size") return class_type("Size");
  if (name == "torch.nn.parameter.Parameter") return class_type("Parameter");
  return class_type(std::move(name));
}

PyType annotation_of_schema_type(const std::string& type) {
  if (!type.empty() && type.back() == '?') {
    return wrap(PyType::Kind::kOptional,
                annotation_of_schema_type(type.substr(0, type.size() - 1)));
  }
  if (type.size() > 2 && type.compare(type.size() - 2, 2, "[]") == 0) {
    return wrap(PyType::Kind::kList,
                annotation_of_schema_type(type.substr(0, type.size() - 2)));
  }
  return schema_base_type(type);
}

bool type_matches(const PyType& annotation, const PyType& argument) {
  using Kind = PyType::Kind;
  if (argument.kind == Kind::kUnknown) return false;
  switch (annotation.kind) {
    case Kind::kOptional:
      return type_matches(*annotation.elem, argument) ||
             (argument.kind == Kind::kClass && argument.cls == "NoneType");
    case Kind::kList:
      if (argument.kind == Kind::kClass && argument.cls == "int" &&
          annotation.elem->kind == Kind::kClass &&
          annotation.elem->cls == "int") {
        return true;  // an int promotes to List[int]
      }
      return matches_list(annotation, argument);
    case Kind::kClass:
      if (argument.kind != Kind::kClass) return false;
      if (annotation.cls == "int" && argument.cls == "dtype") return true;
      return is_subclass(argument.cls, annotation.cls);
    case Kind::kTuple:
    case Kind::kUnknown:
      break;
  }
  return false;
}

}  // namespace fx_optimization
