// The FxApi entries that read the declarations a call binds to:
// OperatorSchemas (version 12: an operator's schemas as torch prints them,
// for a target resolved as NodeOperatorEffects resolves it; fx_core/runtime/
// aten/aten_schemas.h), TargetSignature (version 14: the Python signature
// of a Python-level call_function target or of a submodule's forward, as the
// host's registries bind them) and TargetReturnType (version 14: the type
// torch's AnnotateTypesWithSchema gives such a call or a get_attr). Version
// 12's ValueStorage is with the other Value* entries (value_api.cc).
#include <torch/nn/module.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "fx_core/runtime/aten/aten_schemas.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/python_declarations.h"
#include "fx_core/runtime/value.h"
#include "host/capi/api_internal.h"

namespace fx::host::internal {
namespace {

// A default value as a signature spells it (a Python literal: None, True,
// 'text', 3, 1e-05, (1, 2), [], torch.float32) as the value Python holds.
Argument literal(std::string_view text, std::string_view signature) {
  text = strip(text);
  if (text == "None") return Argument();
  if (text == "True") return Argument(true);
  if (text == "False") return Argument(false);
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
      text.back() == text.front()) {
    return Argument(std::string(text.substr(1, text.size() - 2)));
  }
  if (text.size() >= 2 && (text.front() == '(' || text.front() == '[')) {
    ArgumentList items;
    for (std::string_view part :
         split_top_level(text.substr(1, text.size() - 2))) {
      if (!part.empty()) items.push_back(literal(part, signature));
    }
    return text.front() == '(' ? Argument::tuple(std::move(items))
                               : Argument::list(std::move(items));
  }
  if (text.substr(0, 6) == "torch.") {
    const std::string name(text);
    if (parse_dtype(name)) return Argument::dtype(name);
    if (parse_memory_format(name)) return Argument::memory_format(name);
    if (parse_layout(name)) return Argument::layout(name);
  }
  const std::string s(text);
  char* end = nullptr;
  if (s.find_first_of(".eEn") == std::string::npos) {
    const long long i = std::strtoll(s.c_str(), &end, 10);
    if (end != s.c_str() && *end == '\0') return Argument(int64_t{i});
  }
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() && *end == '\0') return Argument(d);
  fail(FX_INTERNAL, cat("signature '", signature,
                        "': cannot read the default value '", text, "'"));
}

const char* kind_name(OpParam::Kind kind) {
  switch (kind) {
    case OpParam::Kind::kPositional:
      return "POSITIONAL_OR_KEYWORD";
    case OpParam::Kind::kKeywordOnly:
      return "KEYWORD_ONLY";
    case OpParam::Kind::kVarPositional:
      return "VAR_POSITIONAL";
    case OpParam::Kind::kVarKeyword:
      return "VAR_KEYWORD";
  }
  return "POSITIONAL_OR_KEYWORD";
}

// `schema` as TargetSignature's list of parameter dicts. The defaults are
// read from the signature's text, so a dtype stays a dtype.
Argument signature_argument(const OpSchema& schema) {
  ArgumentList params;
  size_t p = 0;
  for (std::string_view part : split_top_level(schema.text())) {
    if (part == "*") continue;
    const OpParam& param = schema.params().at(p++);
    ArgumentDict d;
    d.emplace_back("name", Argument(param.name));
    d.emplace_back("kind", Argument(std::string(kind_name(param.kind))));
    if (param.has_default) {
      d.emplace_back("default",
                     literal(part.substr(part.find('=') + 1), schema.text()));
    }
    params.push_back(Argument::dict(std::move(d)));
  }
  return Argument::list(std::move(params));
}

// Whether torch 1.13 holds `target` as a builtin (a C function, which
// inspect cannot read and NormalizeArgs binds to its ATen schemas): what
// python_declarations.h lists (F.conv2d is torch.conv2d; torch.split is
// Python's), else the C modules' functions and torch.NAME where aten::NAME
// exists (torch's _VariableFunctions).
bool is_builtin_function(std::string_view target) {
  switch (python_function_kind(target)) {
    case PythonFunctionKind::kBuiltin:
      return true;
    case PythonFunctionKind::kPythonFunction:
    case PythonFunctionKind::kNotNormalizable:
      return false;
    case PythonFunctionKind::kUnlisted:
      break;
  }
  for (std::string_view module : {"operator.", "math.", "cmath.", "builtins.",
                                  "torch._C.", "torch.ops."}) {
    if (target.rfind(module, 0) == 0) return true;
  }
  if (target.rfind("torch.", 0) == 0 &&
      target.find('.', 6) == std::string_view::npos) {
    return !operator_schemas(Opcode::kCallFunction, target).empty();
  }
  return false;
}

const OpSchema* function_signature(std::string_view target) {
  if (is_builtin_function(target)) return nullptr;
  const OpDef* def = OpRegistry::global().find(Opcode::kCallFunction, target);
  return def == nullptr ? nullptr : &def->schema;
}

// The kind of the submodule `target` of g's owning GraphModule (nullptr for
// a class the registry does not know); FX_NOT_FOUND when there is none.
const ModuleKind* submodule_kind(const FxGraph* g, const char* target) {
  GraphModule& gm = owning_module(unwrap(require(g, "graph")));
  std::shared_ptr<torch::nn::Module> m = gm.get_submodule(target);
  if (m == nullptr) {
    fail(FX_NOT_FOUND, cat("the module has no submodule '", target, "'"));
  }
  return ModuleRegistry::global().find(*m);
}

const OpSchema* forward_signature(const FxGraph* g, const char* target) {
  const ModuleKind* kind = submodule_kind(g, target);
  return kind == nullptr ? nullptr : &kind->forward_schema;
}

// A function torch defines as a boolean dispatch of boolean dispatches
// (torch.functional.unique): inspect sees the dispatcher's (*args,
// **kwargs), though the host binds calls to the implementation's.
bool dispatches_on_booleans(std::string_view target, const OpSchema& schema) {
  if (python_function_kind(target) != PythonFunctionKind::kNotNormalizable) {
    return false;
  }
  for (const OpParam& p : schema.params()) {
    if (p.kind == OpParam::Kind::kVarPositional ||
        p.kind == OpParam::Kind::kVarKeyword) {
      return false;
    }
  }
  return true;
}

void target_signature(const FxGraph* g, FxOpcode op, const char* target,
                      FxArg** out) {
  require(target, "target");
  require(out, "out");
  const OpSchema* schema = nullptr;
  if (op == FX_OP_CALL_FUNCTION) {
    schema = function_signature(target);
  } else if (op == FX_OP_CALL_MODULE) {
    schema = forward_signature(g, target);
  } else {
    fail(FX_INVALID_ARGUMENT,
         "op must be FX_OP_CALL_FUNCTION or FX_OP_CALL_MODULE");
  }
  if (schema == nullptr) {
    fail(FX_NOT_FOUND,
         cat("'", target,
             op == FX_OP_CALL_FUNCTION
                 ? "' has no Python signature the host knows (a builtin "
                   "binds to its ATen schemas)"
                 : "': the host knows no forward signature for its class"));
  }
  if (op == FX_OP_CALL_FUNCTION && dispatches_on_booleans(target, *schema)) {
    static const OpSchema kVariadic = OpSchema::parse("*args, **kwargs");
    schema = &kVariadic;
  }
  *out = give(signature_argument(*schema));
}

void target_return_type(const FxGraph* g, FxOpcode op, const char* target,
                        char** out) {
  require(target, "target");
  require(out, "out");
  std::optional<std::string_view> type;
  if (op == FX_OP_CALL_FUNCTION) {
    type = python_return_annotation(target);
  } else if (op == FX_OP_CALL_MODULE) {
    const ModuleKind* kind = submodule_kind(g, target);
    if (kind != nullptr) type = python_return_annotation(kind->type);
  } else if (op == FX_OP_GET_ATTR) {
    GraphModule& gm = owning_module(unwrap(require(g, "graph")));
    if (gm.get_attr(target).defined()) type = "torch.Tensor";
  } else {
    fail(FX_INVALID_ARGUMENT,
         "op must be FX_OP_CALL_FUNCTION, FX_OP_CALL_MODULE or FX_OP_GET_ATTR");
  }
  if (!type) {
    fail(FX_NOT_FOUND, cat("'", target, "' has no type annotation"));
  }
  *out = c_string(*type);
}

}  // namespace

void fill_schema_entries(FxApi& t) {
  t.OperatorSchemas = [](const char* target, FxArg** out) {
    return guarded("OperatorSchemas", [&] {
      require(target, "target");
      require(out, "out");
      // A call_function target is qualified (torch.add, operator.add,
      // builtins.getattr); a call_method target is a bare method name.
      const std::string_view spelling = target;
      const Opcode op = spelling.find('.') == std::string_view::npos
                            ? Opcode::kCallMethod
                            : Opcode::kCallFunction;
      ArgumentList schemas;
      for (std::string& s : operator_schemas(op, spelling)) {
        schemas.emplace_back(std::move(s));
      }
      *out = give(Argument::list(std::move(schemas)));
    });
  };
  t.TargetSignature = [](const FxGraph* g, FxOpcode op, const char* target,
                         FxArg** out) {
    return guarded("TargetSignature",
                   [&] { target_signature(g, op, target, out); });
  };
  t.TargetReturnType = [](const FxGraph* g, FxOpcode op, const char* target,
                          char** out) {
    return guarded("TargetReturnType",
                   [&] { target_return_type(g, op, target, out); });
  };
}

}  // namespace fx::host::internal
