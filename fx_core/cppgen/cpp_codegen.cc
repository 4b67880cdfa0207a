#include "fx_core/cppgen/cpp_codegen.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

bool is_cpp_keyword(std::string_view name) {
  static const absl::flat_hash_set<std::string_view> kKeywords = {
      "alignas",  "alignof",  "and",       "asm",      "auto",      "bool",
      "break",    "case",     "catch",     "char",     "class",     "const",
      "continue", "default",  "delete",    "do",       "double",    "else",
      "enum",     "explicit", "export",    "extern",   "false",     "float",
      "for",      "friend",   "goto",      "if",       "inline",    "int",
      "long",     "mutable",  "namespace", "new",      "noexcept",  "not",
      "nullptr",  "operator", "or",        "private",  "protected", "public",
      "register", "return",   "short",     "signed",   "sizeof",    "static",
      "struct",   "switch",   "template",  "this",     "throw",     "true",
      "try",      "typedef",  "typeid",    "typename", "union",     "unsigned",
      "using",    "virtual",  "void",      "volatile", "while",     "xor",
      "self",     "at",       "torch",     "fx",       "c10",       "std"};
  return kKeywords.contains(name);
}

// A C++ string literal of `s`: quotes, backslashes and every control
// character escaped (octal, three digits: a hex escape would take the digits
// after it), so no text from a graph file ends the literal or the line.
std::string cpp_string_literal(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (u < 0x20 || u == 0x7f) {
      out += '\\';
      out.push_back(static_cast<char>('0' + (u >> 6)));
      out.push_back(static_cast<char>('0' + ((u >> 3) & 7)));
      out.push_back(static_cast<char>('0' + (u & 7)));
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

std::string cpp_double(double v) {
  if (std::isnan(v)) return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(v)) {
    return v > 0 ? "std::numeric_limits<double>::infinity()"
                 : "-std::numeric_limits<double>::infinity()";
  }
  return python_float_repr(v);
}

// The C++ type of a placeholder of Python type `type`.
std::string_view placeholder_type(std::string_view type) {
  return type == "int"     ? "int64_t"
         : type == "float" ? "double"
         : type == "bool"  ? "bool"
                           : "at::Tensor";
}

class CppEmitter {
 public:
  CppEmitter(const Graph& graph, const std::vector<CppModule>& modules)
      : graph_(graph), modules_(modules) {}

  std::string emit(std::string_view ns);

 private:
  [[noreturn]] void fail(const Node* n, std::string_view what) const {
    throw FxError(cat("cannot generate C++ for node '", n->name(), "' (",
                      opcode_name(n->op()), " ", n->target(), "): ", what));
  }
  std::string var(const Node* n) {
    auto it = names_.find(n);
    if (it != names_.end()) return it->second;
    std::string name(n->name());
    if (is_cpp_keyword(name)) name += "_";
    names_[n] = name;
    return name;
  }
  std::string render(const Argument& a, const Node* n, bool as_ints);
  std::string render(const c10::IValue& v, const Node* n, bool as_ints);
  std::string call_expression(const Node* n);
  // A target without a C++ spelling: a call through the OpRegistry kernel.
  std::string registry_call(const Node* n);
  std::string registry_arguments(const Node* n);
  std::string ivalue(const Argument& a, const Node* n);
  // The statements for a call_function / call_method node, a call_module
  // node and the output node, appended to `body`.
  void emit_call(const Node* n, const std::string& name, std::string& body);
  void emit_module_call(const Node* n, const std::string& name,
                        std::string& body);
  // A module call's arguments in its forward's order: keyword arguments
  // (normalize_args passes every one so) bound to the forward's signature.
  std::vector<Argument> module_call_arguments(const Node* n,
                                              const ModuleKind& kind);
  void emit_registry_module_call(const Node* n, const std::string& name,
                                 std::string& body);
  void emit_return(const Node* n, std::string& body);
  // The file: includes, then forward(self, params) { body } in `ns`.
  std::string source(std::string_view ns,
                     const std::vector<std::string>& params,
                     const std::string& body);

  const Graph& graph_;
  const std::vector<CppModule>& modules_;
  absl::flat_hash_map<const Node*, std::string> names_;
  std::vector<std::string> headers_;
};

std::string CppEmitter::render(const Argument& a, const Node* n, bool as_ints) {
  switch (a.kind()) {
    case Argument::Kind::kNone:
      return "c10::nullopt";
    case Argument::Kind::kBool:
      return a.as_bool() ? "true" : "false";
    case Argument::Kind::kInt:
      return as_ints ? cat("std::vector<int64_t>{", a.as_int(), "}")
                     : cat(a.as_int());
    case Argument::Kind::kFloat:
      return cpp_double(a.as_float());
    case Argument::Kind::kString:
      return cpp_string_literal(a.as_string());
    case Argument::Kind::kNode:
      return var(a.as_node());
    case Argument::Kind::kList:
    case Argument::Kind::kTuple: {
      const ArgumentList& items = a.elements();
      // f(*size) called as f((2, -1)): the one element is the list.
      if (items.size() == 1 && items[0].is_sequence()) {
        return render(items[0], n, as_ints);
      }
      bool ints = std::all_of(items.begin(), items.end(),
                              [](const Argument& x) { return x.is_int(); });
      bool nodes = std::all_of(items.begin(), items.end(),
                               [](const Argument& x) { return x.is_node(); });
      std::vector<std::string> parts;
      for (const Argument& x : items) parts.push_back(render(x, n, false));
      if (ints || (as_ints && !nodes)) {
        return cat("std::vector<int64_t>{", join(parts, ", "), "}");
      }
      if (nodes && !as_ints) {
        return cat("std::vector<at::Tensor>{", join(parts, ", "), "}");
      }
      if (as_ints) {
        // Sizes computed at run time (x.size(0)): ints held by nodes.
        return cat("std::vector<int64_t>{", join(parts, ", "), "}");
      }
      fail(n, cat("a ", kind_name(a.kind()), " of mixed values"));
    }
    case Argument::Kind::kDtype: {
      auto t = parse_dtype(a.as_string());
      if (!t) fail(n, cat("unknown dtype ", a.as_string()));
      return cat("at::ScalarType::", c10::toString(*t));
    }
    case Argument::Kind::kDevice:
      return cat("c10::Device(", cpp_string_literal(a.as_string()), ")");
    default:
      fail(n, cat("an argument of type ", kind_name(a.kind()),
                  " has no C++ spelling here"));
  }
}

std::string CppEmitter::render(const c10::IValue& v, const Node* n,
                               bool as_ints) {
  if (v.isNone()) return "c10::nullopt";
  if (v.isBool()) return v.toBool() ? "true" : "false";
  if (v.isInt()) {
    return as_ints ? cat("std::vector<int64_t>{", v.toInt(), "}")
                   : cat(v.toInt());
  }
  if (v.isDouble()) return cpp_double(v.toDouble());
  if (v.isString()) return cpp_string_literal(v.toStringRef());
  if (v.isIntList() || v.isTuple()) {
    std::vector<std::string> parts;
    for (const c10::IValue& x : sequence_elements(v)) {
      parts.push_back(render(x, n, false));
    }
    return cat("std::vector<int64_t>{", join(parts, ", "), "}");
  }
  fail(n,
       cat("a default of type ", value_type_name(v), " has no C++ spelling"));
}

std::string CppEmitter::ivalue(const Argument& a, const Node* n) {
  switch (a.kind()) {
    case Argument::Kind::kNone:
      return "c10::IValue()";
    case Argument::Kind::kInt:
      return cat("c10::IValue(int64_t{", a.as_int(), "})");
    case Argument::Kind::kNode:
      return cat("c10::IValue(", var(a.as_node()), ")");
    case Argument::Kind::kList:
    case Argument::Kind::kTuple: {
      std::vector<std::string> items;
      for (const Argument& x : a.elements()) items.push_back(ivalue(x, n));
      return cat("fx::cpp::", a.is_list() ? "list" : "tuple", "({",
                 join(items, ", "), "})");
    }
    case Argument::Kind::kDtype:
      return cat("c10::IValue(static_cast<int64_t>(", render(a, n, false),
                 "))");
    case Argument::Kind::kBool:
    case Argument::Kind::kFloat:
    case Argument::Kind::kString:
    case Argument::Kind::kDevice:
      return cat("c10::IValue(", render(a, n, false), ")");
    default:
      fail(n, cat("an argument of type ", kind_name(a.kind()),
                  " has no C++ spelling here"));
  }
}

// "{args...}, {{"key", value}...}": a node's arguments as the registry
// calls (fx::cpp::call_function, call_module) take them.
std::string CppEmitter::registry_arguments(const Node* n) {
  std::vector<std::string> args, kwargs;
  for (const Argument& a : n->args()) args.push_back(ivalue(a, n));
  for (const auto& [key, value] : n->kwargs()) {
    kwargs.push_back(
        cat("{", cpp_string_literal(key), ", ", ivalue(value, n), "}"));
  }
  return cat("{", join(args, ", "), "}, {", join(kwargs, ", "), "}");
}

// A result the graph indexes is kept as a value (a tuple of tensors): the
// registry call's _value form.
const char* value_suffix(const Node* n) {
  bool indexed = std::any_of(
      n->users().begin(), n->users().end(),
      [](const Node* u) { return u->target() == "operator.getitem"; });
  return indexed ? "_value" : "";
}

std::string CppEmitter::registry_call(const Node* n) {
  std::string fn =
      cat(n->op() == Opcode::kCallMethod ? "call_method" : "call_function",
          value_suffix(n));
  return cat("fx::cpp::", fn, "(", cpp_string_literal(n->target()), ", ",
             registry_arguments(n), ")");
}

std::string CppEmitter::call_expression(const Node* n) {
  // resolve(): hand-written entries and the ATen operators bound to their
  // schemas alike (the latter have no C++ spelling: a registry call).
  const OpDef* def = OpRegistry::global().resolve(n->op(), n->target());
  if (def == nullptr) fail(n, "no kernel is registered for this target");
  if (def->cpp.empty()) return registry_call(n);
  std::vector<std::optional<Argument>> bound;
  std::string error;
  if (!bind_node_arguments(def->schema, n->args(), n->kwargs(), &bound,
                           &error)) {
    fail(n, cat(def->target, "() ", error));
  }
  auto param_text = [&](size_t p, bool as_ints) -> std::string {
    if (bound[p]) return render(*bound[p], n, as_ints);
    return render(def->schema.params()[p].default_value, n, as_ints);
  };
  // Substitute {param} and {param:ints}.
  std::string out;
  const std::string& t = def->cpp;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '{') {
      out.push_back(t[i]);
      continue;
    }
    size_t close = t.find('}', i);
    std::string_view field(t.data() + i + 1, close - i - 1);
    // {p:ints}: an int list (an int becomes a one-element list);
    // {p:ints0}: the same, with None as the empty list (at::avg_pool2d's
    // stride, which then defaults to the kernel size).
    bool as_ints = false, none_is_empty = false;
    if (size_t colon = field.find(':'); colon != std::string_view::npos) {
      std::string_view hint = field.substr(colon + 1);
      as_ints = hint == "ints" || hint == "ints0";
      none_is_empty = hint == "ints0";
      field = field.substr(0, colon);
    }
    int p = def->schema.index_of(field);
    if (p < 0 && (field == "input" || field == "self")) p = 0;
    if (p < 0) fail(n, cat("bad C++ template '", t, "'"));
    std::string text = param_text(static_cast<size_t>(p), as_ints);
    out += none_is_empty && text == "c10::nullopt" ? "std::vector<int64_t>{}"
                                                   : text;
    i = close;
  }
  return out;
}

std::string CppEmitter::emit(std::string_view ns) {
  std::vector<std::string> params;
  std::string body = "  (void)self;\n";
  for (Node* n : graph_.nodes()) {
    std::string name = var(n);
    switch (n->op()) {
      case Opcode::kPlaceholder:
        params.push_back(cat(placeholder_type(n->type()), " ", name));
        break;
      case Opcode::kGetAttr:
        append(&body, "  at::Tensor ", name, " = fx::cpp::attr(self, ",
               cpp_string_literal(n->target()), ");\n");
        break;
      case Opcode::kCallFunction:
      case Opcode::kCallMethod:
        emit_call(n, name, body);
        break;
      case Opcode::kCallModule:
        emit_module_call(n, name, body);
        break;
      case Opcode::kOutput:
        emit_return(n, body);
        break;
    }
  }
  return source(ns, params, body);
}

void CppEmitter::emit_call(const Node* n, const std::string& name,
                           std::string& body) {
  std::string expr = call_expression(n);
  bool indexed =
      std::any_of(n->users().begin(), n->users().end(), [](const Node* u) {
        return u->op() == Opcode::kCallFunction &&
               u->target() == "operator.getitem";
      });
  if (indexed) expr = cat("fx::cpp::as_list(", expr, ")");
  append(&body, "  auto ", name, " = ", expr, ";\n");
}

void CppEmitter::emit_module_call(const Node* n, const std::string& name,
                                  std::string& body) {
  auto module =
      std::find_if(modules_.begin(), modules_.end(),
                   [n](const CppModule& m) { return m.path == n->target(); });
  if (module == modules_.end()) fail(n, "the module's type is not known");
  const ModuleKind* kind = nullptr;
  try {
    const ModuleRegistry& registry = ModuleRegistry::global();
    kind = module->config ? registry.find(module->type, *module->config)
                          : registry.find(module->type);
  } catch (const FxError& e) {
    fail(n, e.what());
  }
  if (kind == nullptr) {
    fail(n, cat("module type ", module->type, " is not registered"));
  }
  if (kind->cpp_class.empty()) {
    // A module without a C++ class of its own (a torch.nn module rebuilt
    // from Python, a vendor's): called through the module registry.
    emit_registry_module_call(n, name, body);
    return;
  }
  if (std::find(headers_.begin(), headers_.end(), kind->cpp_header) ==
      headers_.end()) {
    headers_.push_back(kind->cpp_header);
  }
  std::vector<std::string> args;
  for (const Argument& a : module_call_arguments(n, *kind)) {
    args.push_back(render(a, n, false));
  }
  append(&body, "  auto ", name, " = fx::cpp::submodule<", kind->cpp_class,
         ">(self, ", cpp_string_literal(n->target()), ").forward(",
         join(args, ", "), ");\n");
}

std::vector<Argument> CppEmitter::module_call_arguments(
    const Node* n, const ModuleKind& kind) {
  if (n->kwargs().empty()) {
    return std::vector<Argument>(n->args().begin(), n->args().end());
  }
  std::vector<std::optional<Argument>> bound;
  std::string error;
  if (!bind_node_arguments(kind.forward_schema, n->args(), n->kwargs(), &bound,
                           &error)) {
    fail(n, error);
  }
  size_t count = bound.size();
  while (count > 0 && !bound[count - 1]) --count;
  std::vector<Argument> out;
  for (size_t i = 0; i < count; ++i) {
    if (!bound[i]) {
      fail(n, cat("keyword arguments to a module that leave out '",
                  kind.forward_schema.params()[i].name,
                  "' before one given: C++ cannot skip it"));
    }
    out.push_back(*bound[i]);
  }
  return out;
}

void CppEmitter::emit_registry_module_call(const Node* n,
                                           const std::string& name,
                                           std::string& body) {
  // An indexed result (a module returning a tuple) is a list of tensors,
  // as an indexed call_function's is.
  const bool indexed = *value_suffix(n) != '\0';
  std::string call =
      cat("fx::cpp::call_module", value_suffix(n), "(self, ",
          cpp_string_literal(n->target()), ", ", registry_arguments(n), ")");
  if (indexed) call = cat("fx::cpp::as_list(", call, ")");
  append(&body, "  auto ", name, " = ", call, ";\n");
}

void CppEmitter::emit_return(const Node* n, std::string& body) {
  const Argument& result = n->args().at(0);
  if (result.is_sequence()) {
    std::vector<std::string> items;
    for (const Argument& a : result.elements()) {
      items.push_back(cat("c10::IValue(", render(a, n, false), ")"));
    }
    append(&body, "  return c10::ivalue::Tuple::create({", join(items, ", "),
           "});\n");
  } else {
    append(&body, "  return c10::IValue(", render(result, n, false), ");\n");
  }
}

std::string CppEmitter::source(std::string_view ns,
                               const std::vector<std::string>& params,
                               const std::string& body) {
  std::sort(headers_.begin(), headers_.end());
  std::string out =
      "// Generated by fx-sdk (fx code --lang=cpp) from an fx graph.\n"
      "#include <ATen/ATen.h>\n"
      "#include <ATen/core/ivalue.h>\n";
  for (const std::string& h : headers_) {
    if (h.rfind("fx_core/", 0) != 0) append(&out, "#include <", h, ">\n");
  }
  out += "\n#include <cmath>\n#include <limits>\n#include <vector>\n\n";
  out += "#include \"fx_core/cppgen/cpp_codegen_support.h\"\n";
  for (const std::string& h : headers_) {
    if (h.rfind("fx_core/", 0) == 0) append(&out, "#include \"", h, "\"\n");
  }
  append(&out, "\nnamespace ", ns, " {\n\n",
         "c10::IValue forward(torch::nn::Module& self",
         params.empty() ? "" : ", ", join(params, ", "), ") {\n", body,
         "}\n\n}  // namespace ", ns, "\n");
  return out;
}

}  // namespace

std::string gen_cpp_code(const Graph& graph,
                         const std::vector<CppModule>& modules,
                         std::string_view cpp_namespace) {
  CppEmitter emitter(graph, modules);
  return emitter.emit(cpp_namespace);
}

}  // namespace fx
