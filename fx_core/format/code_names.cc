#include "fx_core/format/code_names.h"

#include <string_view>
#include <vector>

#include "fx_core/support/strings.h"

namespace fx {
namespace {

bool is_ascii_letter(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!is_digit(c)) return false;
  }
  return true;
}

bool is_hex_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!is_digit(c) && !((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

// A name made inside a function: no attribute lookup finds it.
bool is_local_atom(std::string_view atom) {
  return atom == "<locals>" || atom == "<lambda>";
}

// An atom of a qualified name (`first`: the leading one; `next`: the one
// after it, when `has_next`): an identifier, a local atom after the first,
// a dunder name only as a leading __main__ or a function before <locals>.
bool is_qualified_atom(std::string_view atom, bool first, bool has_next,
                       std::string_view next) {
  if (is_local_atom(atom)) return !first;
  if (!is_ascii_identifier(atom)) return false;
  if (!is_dunder_name(atom)) return true;
  if (first && atom == "__main__") return true;
  return has_next && next == "<locals>";
}

// An atom of an attribute path: a name torch.nn takes for a module
// (`conv1`, `0`, regnet's `block1-0`) that code can hold in a string
// literal as it is: printable ASCII without quotes or backslashes (torch
// 1.13's own code generator writes `getattr(self, "ATOM")` unescaped), and
// not a dunder name.
bool is_module_name(std::string_view atom) {
  if (atom.empty() || !is_printable_text(atom)) return false;
  if (atom.find_first_of("\"'\\") != std::string_view::npos) return false;
  return !(atom.size() >= 4 && atom.substr(0, 2) == "__" &&
           atom.substr(atom.size() - 2) == "__");
}

// One name of a type expression: a qualified name without local atoms, or
// an integer (`Literal[1]`), or `...`.
bool is_type_atom(std::string_view name) {
  if (name == "..." || is_digits(name)) return true;
  if (name.find('<') != std::string_view::npos) return false;
  return is_qualified_name(name);
}

}  // namespace

bool is_ascii_identifier(std::string_view text) {
  if (text.empty() || !is_ascii_letter(text[0])) return false;
  for (char c : text) {
    if (!is_ascii_letter(c) && !is_digit(c)) return false;
  }
  return true;
}

bool is_dunder_name(std::string_view text) {
  return text.size() > 4 && text.substr(0, 2) == "__" &&
         text.substr(text.size() - 2) == "__" && is_ascii_identifier(text);
}

bool is_plain_name(std::string_view text) {
  return is_ascii_identifier(text) && !is_dunder_name(text);
}

bool is_method_name(std::string_view text) {
  if (is_plain_name(text)) return true;
  if (!is_dunder_name(text)) return false;
  // Operators: their forward, reflected (r) and in-place (i) forms.
  static const char* const kOperators[] = {
      "add",    "sub", "mul",    "matmul", "truediv", "floordiv", "mod",
      "divmod", "pow", "lshift", "rshift", "and",     "xor",      "or"};
  static const char* const kOthers[] = {
      "call",  "getitem",  "setitem", "delitem", "len", "contains", "iter",
      "next",  "reversed", "neg",     "pos",     "abs", "invert",   "round",
      "trunc", "floor",    "ceil",    "bool",    "int", "float",    "complex",
      "index", "eq",       "ne",      "lt",      "le",  "gt",       "ge"};
  std::string_view inner = text.substr(2, text.size() - 4);
  for (const char* name : kOthers) {
    if (inner == name) return true;
  }
  for (const char* name : kOperators) {
    std::string_view op(name);
    if (inner == op) return true;
    if (inner.size() == op.size() + 1 && (inner[0] == 'r' || inner[0] == 'i') &&
        inner.substr(1) == op) {
      return true;
    }
  }
  return false;
}

bool is_parameter_name(std::string_view text) {
  size_t stars = 0;
  while (stars < 2 && stars < text.size() && text[stars] == '*') ++stars;
  return is_plain_name(text.substr(stars));
}

bool is_qualified_name(std::string_view text, bool class_suffix) {
  if (size_t hash = text.find('#');
      class_suffix && hash != std::string_view::npos) {
    if (!is_hex_digits(text.substr(hash + 1))) return false;
    text = text.substr(0, hash);
  }
  // Atom by atom, each seen with the one after it (no list of atoms: a
  // type expression checks every name it holds).
  for (size_t start = 0;;) {
    const size_t dot = text.find('.', start);
    const bool has_next = dot != std::string_view::npos;
    std::string_view atom = text.substr(start, has_next ? dot - start : dot);
    std::string_view next =
        has_next ? text.substr(dot + 1, text.find('.', dot + 1) - dot - 1)
                 : std::string_view();
    if (!is_qualified_atom(atom, start == 0, has_next, next)) return false;
    if (!has_next) return true;
    start = dot + 1;
  }
}

bool is_attribute_path(std::string_view text) {
  for (std::string_view atom : split(text, '.')) {
    if (!is_module_name(atom)) return false;
  }
  return true;
}

bool is_type_expression(std::string_view text) {
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (c != '[' && c != ']' && c != ',' && c != ' ') continue;
    std::string_view name = text.substr(start, i - start);
    start = i + 1;
    if (!name.empty() && !is_type_atom(name)) return false;
    if (c == '[') ++depth;
    if (c == ']' && --depth < 0) return false;
  }
  return depth == 0;
}

bool is_printable_text(std::string_view text) {
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace fx
