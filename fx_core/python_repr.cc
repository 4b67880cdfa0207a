#include "fx_core/python_repr.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "fx_core/node.h"
#include "fx_core/strings.h"

namespace fx {

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Shortest round-trip digits in scientific form: "d.ddde[+-]XX".
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), value,
                           std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool negative = !sci.empty() && sci[0] == '-';
  if (negative) sci.erase(0, 1);
  size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  int exponent = std::stoi(sci.substr(e + 1));
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits.push_back(c);
  }
  // Python's float_repr_style 'short' ('r' mode): scientific when the decimal
  // exponent is below -4 or at least 16.
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) {
      out += ".";
      out += digits.substr(1);
    }
    char ebuf[16];
    std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exponent < 0 ? '-' : '+',
                  exponent < 0 ? -exponent : exponent);
    out += ebuf;
    return out;
  }
  if (exponent < 0) {
    out += "0.";
    out.append(static_cast<size_t>(-exponent - 1), '0');
    out += digits;
    return out;
  }
  size_t int_len = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= int_len) {
    out += digits;
    out.append(int_len - digits.size(), '0');
    out += ".0";
  } else {
    out += digits.substr(0, int_len);
    out += ".";
    out += digits.substr(int_len);
  }
  return out;
}

std::string python_string_repr(std::string_view text) {
  bool has_single = text.find('\'') != std::string_view::npos;
  bool has_double = text.find('"') != std::string_view::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back(quote);
  for (unsigned char c : text) {
    if (c == static_cast<unsigned char>(quote) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      // Printable ASCII and UTF-8 bytes (Python keeps printable non-ASCII).
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back(quote);
  return out;
}

bool is_python_identifier(std::string_view text) {
  if (text.empty()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (i > 0 && c >= '0' && c <= '9') || c >= 0x80;
    if (!ok) return false;
  }
  return true;
}

std::string type_text_form(std::string_view code_form) {
  static constexpr std::string_view kTyping[] = {
      "List", "Tuple",    "Dict",     "Optional", "Union",
      "Any",  "Callable", "Sequence", "Set",      "FrozenSet",
      "Type", "Iterable", "Iterator"};
  std::string out;
  size_t i = 0;
  while (i < code_form.size()) {
    char c = code_form[i];
    bool ident_start =
        c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (ident_start) {
      size_t j = i;
      while (j < code_form.size() &&
             (code_form[j] == '_' || code_form[j] == '.' ||
              (code_form[j] >= 'a' && code_form[j] <= 'z') ||
              (code_form[j] >= 'A' && code_form[j] <= 'Z') ||
              (code_form[j] >= '0' && code_form[j] <= '9'))) {
        ++j;
      }
      std::string_view word = code_form.substr(i, j - i);
      for (std::string_view t : kTyping) {
        if (word == t) {
          out += "typing.";
          break;
        }
      }
      out += word;
      i = j;
    } else if (c == ',') {
      out += ", ";
      ++i;
      while (i < code_form.size() && code_form[i] == ' ') ++i;
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

namespace {

void append_elements(std::string& out, const ArgumentList& items,
                     void (*each)(std::string&, const Argument&)) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    each(out, items[i]);
  }
}

void append_device_repr(std::string& out, const std::string& device) {
  size_t colon = device.find(':');
  if (colon == std::string::npos) {
    append(&out, "device(type=", python_string_repr(device), ")");
  } else {
    append(&out, "device(type=", python_string_repr(device.substr(0, colon)),
           ", index=", device.substr(colon + 1), ")");
  }
}

// Leaves that print the same under repr() and str() (and _format_arg).
bool append_plain_leaf(std::string& out, const Argument& arg) {
  switch (arg.kind()) {
    case Argument::Kind::kNone:
      out += "None";
      return true;
    case Argument::Kind::kBool:
      out += arg.as_bool() ? "True" : "False";
      return true;
    case Argument::Kind::kInt:
      append(&out, arg.as_int());
      return true;
    case Argument::Kind::kFloat:
      out += python_float_repr(arg.as_float());
      return true;
    case Argument::Kind::kNode:
      out += arg.as_node()->name();
      return true;
    case Argument::Kind::kEllipsis:
      out += "Ellipsis";
      return true;
    case Argument::Kind::kDtype:
    case Argument::Kind::kMemoryFormat:
    case Argument::Kind::kLayout:
      out += arg.as_string();
      return true;
    case Argument::Kind::kSlice: {
      // slice.__str__ is its repr: components in repr form.
      out += "slice(";
      append_elements(out, arg.elements(), append_repr);
      out += ")";
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

void append_repr(std::string& out, const Argument& arg) {
  if (append_plain_leaf(out, arg)) return;
  switch (arg.kind()) {
    case Argument::Kind::kString:
      out += python_string_repr(arg.as_string());
      return;
    case Argument::Kind::kDevice:
      append_device_repr(out, arg.as_string());
      return;
    case Argument::Kind::kList:
      out += "[";
      append_elements(out, arg.elements(), append_repr);
      out += "]";
      return;
    case Argument::Kind::kTuple:
      out += "(";
      append_elements(out, arg.elements(), append_repr);
      if (arg.elements().size() == 1) out += ",";
      out += ")";
      return;
    case Argument::Kind::kDict: {
      out += "{";
      bool first = true;
      for (const auto& kv : arg.items()) {
        if (!first) out += ", ";
        first = false;
        out += python_string_repr(kv.first);
        out += ": ";
        append_repr(out, kv.second);
      }
      out += "}";
      return;
    }
    default:
      return;
  }
}

std::string repr(const Argument& arg) {
  std::string out;
  append_repr(out, arg);
  return out;
}

std::string str(const Argument& arg) {
  if (arg.is_string()) return arg.as_string();
  if (arg.kind() == Argument::Kind::kDevice) return arg.as_string();
  return repr(arg);
}

void append_format_arg(std::string& out, const Argument& arg) {
  switch (arg.kind()) {
    case Argument::Kind::kList:
      out += "[";
      append_elements(out, arg.elements(), append_format_arg);
      out += "]";
      return;
    case Argument::Kind::kTuple:
      out += "(";
      append_elements(out, arg.elements(), append_format_arg);
      if (arg.elements().size() == 1) out += ",";
      out += ")";
      return;
    case Argument::Kind::kDict: {
      out += "{";
      bool first = true;
      for (const auto& kv : arg.items()) {
        if (!first) out += ", ";
        first = false;
        out += kv.first;
        out += ": ";
        append_format_arg(out, kv.second);
      }
      out += "}";
      return;
    }
    case Argument::Kind::kNode:
      out += "%";
      out += arg.as_node()->name();
      return;
    default:
      out += str(arg);
      return;
  }
}

std::string format_arg(const Argument& arg) {
  std::string out;
  append_format_arg(out, arg);
  return out;
}

}  // namespace fx
