// What torch 1.13's Python declares about the functions and module classes
// a graph names, where LibTorch cannot say it: the facts
// torch.fx.operator_schemas.normalize_function and torch.fx.experimental.
// schema_type_annotation.AnnotateTypesWithSchema read. The table is
// generated from torch (tools/gen_python_declarations.py writes
// python_declarations.inc; a test compares it with torch's).
//
//   python_function_kind("torch.nn.functional.conv2d") == kBuiltin
//       (F.conv2d is torch.conv2d, a C function)
//   python_function_kind("torch.split") == kPythonFunction
//   python_function_kind("torch.functional.unique") == kNotNormalizable
//   python_return_annotation("torch.nn.functional.relu") == "torch.Tensor"
//   python_return_annotation("torch.nn.LSTMCell")
//       == "typing_Tuple[torch.Tensor,torch.Tensor]"
//
// Keys are targets as torch.fx spells them (MODULE.NAME) and, for return
// annotations of forwards, module classes (torch.nn.NAME). Annotations are
// spelled as torch.fx's generated code spells types.
// Threads: safe from any thread.
#ifndef FX_CORE_RUNTIME_PYTHON_DECLARATIONS_H_
#define FX_CORE_RUNTIME_PYTHON_DECLARATIONS_H_

#include <optional>
#include <string_view>

namespace fx {

enum class PythonFunctionKind {
  kUnlisted,        // the table says nothing: decide by the spelling
  kBuiltin,         // a torch.nn.functional name that is a C function
  kPythonFunction,  // a torch.NAME that is a Python function
  // A Python function whose signature normalize_function reads takes
  // *args or **kwargs (a boolean dispatch of dispatches), or whose
  // boolean-dispatched branches differ: torch normalizes none of its calls.
  kNotNormalizable,
};

PythonFunctionKind python_function_kind(std::string_view target);

// The declared return annotation of a torch.nn.functional Python function
// or a torch.nn module class's forward; nothing when it declares none or
// `-> None`, or a boolean-dispatched function's branches declare different
// ones (max_pool2d).
std::optional<std::string_view> python_return_annotation(
    std::string_view target_or_module_type);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_PYTHON_DECLARATIONS_H_
