// An ATen operator's schema read from its text, as torch prints
// str(op._schema) and the host's OperatorSchemas gives it (C ABI version
// 12): "aten::diagonal(Tensor(a) self, int offset=0, int dim1=0,
// int dim2=1) -> Tensor(a)". Enough for a pass to know which arguments a
// result aliases or an operator writes (torch's alias_info) and how
// arguments bind (names, defaults, keyword-only). Header-only, built from
// plugin_api/include alone like the plugins.
#ifndef PLUGINS_COMMON_OP_SCHEMA_H_
#define PLUGINS_COMMON_OP_SCHEMA_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fx/plugin_api.hpp"

namespace fx_plugins {

struct SchemaArgument {
  // The type as torch compares types: without the alias annotation and
  // without a list's size ("Tensor", "Tensor?", "Tensor[]", "int[]").
  std::string type;
  // The alias annotation's text: "a", "a!", "a -> *", or "" for none.
  std::string alias;
  std::string name;
  std::optional<std::string> default_value;
  bool kwarg_only = false;
  // A fixed-size list's size: 2 for "int[2]" (whose scalar default stands
  // for that many copies: "int[2] stride=1" is [1, 1]); 0 otherwise.
  int list_size = 0;

  // torch's alias_info.is_write.
  bool is_write() const { return alias.find('!') != std::string::npos; }
  // '*' in torch's alias_info.after_set: a list of views (split, unbind).
  bool aliases_many() const {
    const size_t arrow = alias.find("->");
    return arrow != std::string::npos &&
           alias.find('*', arrow) != std::string::npos;
  }
};

struct OperatorSchema {
  std::string name;      // "aten::add" (torch's schema.name)
  std::string overload;  // "Tensor"; "" for the default overload
  std::vector<SchemaArgument> arguments;
  std::string returns;  // the text after "->"
};

namespace schema_detail {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Splits at the commas outside parentheses, brackets and quotes.
inline std::vector<std::string_view> split_top_level(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote != 0) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (!trim(s.substr(start)).empty()) parts.push_back(trim(s.substr(start)));
  return parts;
}

// "Tensor(a!)" -> type "Tensor", alias "a!"; "int[2]" -> "int[]".
inline void split_type(std::string_view text, SchemaArgument& arg) {
  std::string type;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') {
      const size_t close = text.find(')', i);
      if (close == std::string_view::npos) {
        throw fxp::Error(
            FX_INVALID_ARGUMENT,
            "unbalanced alias annotation in '" + std::string(text) + "'");
      }
      arg.alias = std::string(trim(text.substr(i + 1, close - i - 1)));
      i = close;
    } else if (text[i] == '[') {
      const size_t close = text.find(']', i);
      type += "[]";
      for (size_t d = i + 1; d < close && d < text.size(); ++d) {
        if (text[d] < '0' || text[d] > '9') break;
        arg.list_size = arg.list_size * 10 + (text[d] - '0');
      }
      i = close == std::string_view::npos ? text.size() : close;
    } else {
      type += text[i];
    }
  }
  arg.type = type;
}

inline SchemaArgument parse_argument(std::string_view text, bool kwarg_only) {
  SchemaArgument arg;
  arg.kwarg_only = kwarg_only;
  int depth = 0;
  size_t eq = std::string_view::npos;
  for (size_t i = 0; i < text.size() && eq == std::string_view::npos; ++i) {
    if (text[i] == '(' || text[i] == '[') ++depth;
    if (text[i] == ')' || text[i] == ']') --depth;
    if (text[i] == '=' && depth == 0) eq = i;
  }
  if (eq != std::string_view::npos) {
    arg.default_value = std::string(trim(text.substr(eq + 1)));
    text = trim(text.substr(0, eq));
  }
  const size_t space = text.rfind(' ');
  if (space == std::string_view::npos) {
    throw fxp::Error(FX_INVALID_ARGUMENT, "schema argument without a name: '" +
                                              std::string(text) + "'");
  }
  arg.name = std::string(text.substr(space + 1));
  split_type(trim(text.substr(0, space)), arg);
  return arg;
}

}  // namespace schema_detail

// Parses one schema; Error (FX_INVALID_ARGUMENT) naming the text when it is
// not one.
inline OperatorSchema parse_operator_schema(std::string_view text) {
  using schema_detail::trim;
  auto fail = [&](const char* why) {
    return fxp::Error(FX_INVALID_ARGUMENT, std::string("malformed schema (") +
                                               why + "): '" +
                                               std::string(text) + "'");
  };
  const size_t open = text.find('(');
  if (open == std::string_view::npos) throw fail("no argument list");
  OperatorSchema schema;
  std::string_view qualified = trim(text.substr(0, open));
  const size_t colons = qualified.find("::");
  const size_t dot =
      qualified.find('.', colons == std::string_view::npos ? 0 : colons + 2);
  schema.name = std::string(qualified.substr(0, dot));
  if (dot != std::string_view::npos) {
    schema.overload = std::string(qualified.substr(dot + 1));
  }
  int depth = 0;
  size_t close = std::string_view::npos;
  for (size_t i = open; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) {
      close = i;
      break;
    }
  }
  if (close == std::string_view::npos) throw fail("unbalanced parentheses");
  bool kwarg_only = false;
  for (std::string_view part : schema_detail::split_top_level(
           text.substr(open + 1, close - open - 1))) {
    if (part == "*") {
      kwarg_only = true;
      continue;
    }
    schema.arguments.push_back(schema_detail::parse_argument(part, kwarg_only));
  }
  const size_t arrow = text.find("->", close);
  if (arrow != std::string_view::npos) {
    schema.returns = std::string(trim(text.substr(arrow + 2)));
  }
  return schema;
}

// The schemas a call_function target names (OperatorSchemas, version 12),
// parsed; empty when it names no ATen operator.
inline std::vector<OperatorSchema> operator_schemas_of(const char* target) {
  std::vector<OperatorSchema> out;
  for (const std::string& text : fxp::operator_schemas(target)) {
    out.push_back(parse_operator_schema(text));
  }
  return out;
}

}  // namespace fx_plugins

#endif  // PLUGINS_COMMON_OP_SCHEMA_H_
