// The Python types torch 1.13's argument normalization reasons with
// (torch.fx.operator_schemas): the type of each argument a call passes
// (NormalizeArgs' get_type and create_type_hint), the annotation an ATen
// schema argument's type becomes (_torchscript_type_to_python_type), and
// type_matches, which picks an overload when a call binds to several.
//
// A node argument's type is a node's meta['type'] (what shape_prop
// records: "torch.Tensor", "int", "tuple"); without one it has none and
// matches no annotation, so a call binding to several overloads is then
// normalized only when every argument it binds is a constant.
#ifndef PLUGINS_OPTIMIZATION_PYTHON_TYPES_H_
#define PLUGINS_OPTIMIZATION_PYTHON_TYPES_H_

#include <functional>
#include <memory>
#include <string>

#include "fx/plugin_api.hpp"

namespace fx_optimization {

struct PyType {
  enum class Kind {
    kUnknown,   // None in torch: a node's type, or a type torch cannot name
    kClass,     // int, float, bool, str, NoneType, Tensor, Number, ...
    kList,      // typing.List[elem]
    kTuple,     // typing.Tuple[elem, ...]
    kOptional,  // typing.Optional[elem]
  };
  Kind kind = Kind::kUnknown;
  std::string cls;                     // kClass: the class's name
  std::shared_ptr<const PyType> elem;  // kList, kTuple, kOptional
};

// The type torch gives a positional argument: map_aggregate(get_type)
// then create_type_hint (a list of ints is List[int], of ints and floats
// List[Any], of nodes no type at all).
// `node_type` gives a node argument's type.
using NodeType = std::function<PyType(const fxp::Node&)>;
PyType positional_type(const fxp::ArgView& arg, const NodeType& node_type);
// The type torch gives a keyword argument: get_type alone (a list is the
// class list).
PyType keyword_type(const fxp::ArgView& arg, const NodeType& node_type);
// A node's meta['type'] as a type; kUnknown without one.
PyType meta_type(const fxp::Node& n);

// The annotation of an ATen schema argument's type, as op_schema.h spells
// it ("Tensor?", "int[]", "Scalar", "ScalarType?").
PyType annotation_of_schema_type(const std::string& type);

// torch.fx.operator_schemas.type_matches(annotation, argument_type).
bool type_matches(const PyType& annotation, const PyType& argument);

}  // namespace fx_optimization

#endif  // PLUGINS_OPTIMIZATION_PYTHON_TYPES_H_
