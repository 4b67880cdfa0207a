#include "fx_core/ir/python_repr.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "fx_core/ir/node.h"
#include "fx_core/support/strings.h"

namespace fx {

namespace {

// A whole number's digits and ".0".
std::string whole_float_repr(double value) {
  char buf[32];
  char* p = buf;
  if (std::signbit(value)) *p++ = '-';
  p = std::to_chars(p, buf + sizeof(buf),
                    static_cast<int64_t>(std::fabs(value)))
          .ptr;
  *p++ = '.';
  *p++ = '0';
  return std::string(buf, p);
}

// Appends d.ddd x 10^exponent (`digits` without the point) as Python's
// float_repr_style 'short' ('r' mode) writes it: scientific when the decimal
// exponent is below -4 or at least 16.
void append_short_repr(std::string& out, const std::string& digits,
                       int exponent) {
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
    return;
  }
  if (exponent < 0) {
    out += "0.";
    out.append(static_cast<size_t>(-exponent - 1), '0');
    out += digits;
    return;
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
}

}  // namespace

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Whole numbers below 1e16 (1.0, -6.0, 1000.0): their digits and ".0".
  if (std::fabs(value) < 1e16 && value == std::trunc(value)) {
    return whole_float_repr(value);
  }
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
  std::string out = negative ? "-" : "";
  append_short_repr(out, digits, exponent);
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

namespace {

// typing's generics, which torch.fx's code names typing_List, ... and the
// graph text prints as typing.List, ...
bool is_typing_generic(std::string_view name) {
  if (name.empty() || name[0] < 'A' || name[0] > 'Z') return false;
  static constexpr std::string_view kTyping[] = {
      "List", "Tuple",    "Dict",     "Optional", "Union",
      "Any",  "Callable", "Sequence", "Set",      "FrozenSet",
      "Type", "Iterable", "Iterator"};
  for (std::string_view t : kTyping) {
    if (name == t) return true;
  }
  return false;
}

std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Appends the text form of the annotation starting at `pos` (up to a
// top-level ',' or ']'), repr() of the typing object it stands for, to
// `out`, in place: a node's type is written and compared at every change,
// so no string is built per argument.
void append_type_text(std::string& out, std::string_view code, size_t& pos) {
  size_t start = pos;
  while (pos < code.size() && code[pos] != '[' && code[pos] != ',' &&
         code[pos] != ']') {
    ++pos;
  }
  std::string_view word = trim_spaces(code.substr(start, pos - start));
  std::string_view generic = word;
  if (generic.substr(0, 7) == "typing_") generic.remove_prefix(7);
  const bool typing = is_typing_generic(generic);
  if (pos >= code.size() || code[pos] != '[') {
    append(&out, typing ? "typing." : "", typing ? generic : word);
    return;
  }
  const size_t head = out.size();
  append(&out, typing ? "typing." : "", typing ? generic : word, "[");
  // Where the first two arguments' texts lie in `out`, for Union.
  size_t count = 0;
  std::pair<size_t, size_t> spans[2];
  ++pos;  // '['
  while (pos < code.size()) {
    if (count > 0) out += ", ";
    const size_t begin = out.size();
    append_type_text(out, code, pos);
    if (count < 2) spans[count] = {begin, out.size() - begin};
    ++count;
    if (pos < code.size() && code[pos] == ',') {
      ++pos;
      continue;
    }
    if (pos < code.size() && code[pos] == ']') ++pos;
    break;
  }
  out += ']';
  // typing prints Union[X, None] as Optional[X].
  if (generic == "Union" && count == 2) {
    const std::string a = out.substr(spans[0].first, spans[0].second);
    const std::string b = out.substr(spans[1].first, spans[1].second);
    if (a == "NoneType" || b == "NoneType") {
      out.resize(head);
      append(&out, "typing.Optional[", a == "NoneType" ? b : a, "]");
    }
  }
}

}  // namespace

std::string type_text_form(std::string_view code_form) {
  size_t pos = 0;
  std::string out;
  out.reserve(code_form.size() + 16);
  append_type_text(out, code_form, pos);
  // Whatever does not parse as an annotation is kept as it is.
  if (pos < code_form.size()) out.append(code_form.substr(pos));
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
    case Argument::Kind::kQScheme:
    case Argument::Kind::kSymInt:  // PySymInt's repr is its expression
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

// A NamedTuple as its class's __repr__ writes it (`Pair(x=a, y=1.2)`), or
// as its _custom_fx_repr_fn does in the graph text (`Pair(x=%a, y=1.2)`):
// `each` formats the items.
void append_fields(std::string& out, const Argument& arg,
                   void (*each)(std::string&, const Argument&)) {
  const NamedTupleType& type = *arg.named_tuple_type();
  const ArgumentList& items = arg.elements();
  append(&out, type.short_name(), "(");
  for (size_t i = 0; i < items.size(); ++i) {
    append(&out, i ? ", " : "", type.fields[i], "=");
    each(out, items[i]);
  }
  out += ")";
}

// A dict's items: `{'a': 1}` (repr), `{a: 1}` (format_arg: keys as str());
// keys that are not all str printed by `key`.
void append_dict(std::string& out, const Argument& arg,
                 void (*key)(std::string&, const Argument&),
                 bool quote_str_keys,
                 void (*each)(std::string&, const Argument&)) {
  const ArgumentList* keys = arg.dict_keys();
  out += "{";
  size_t i = 0;
  for (const auto& kv : arg.items()) {
    if (i) out += ", ";
    if (keys != nullptr) {
      key(out, (*keys)[i]);
    } else if (quote_str_keys) {
      out += python_string_repr(kv.first);
    } else {
      out += kv.first;
    }
    out += ": ";
    each(out, kv.second);
    ++i;
  }
  out += "}";
}

void append_str(std::string& out, const Argument& arg) { out += str(arg); }

}  // namespace

void append_tuple_repr(std::string& out, const Argument& arg) {
  out += "(";
  append_elements(out, arg.elements(), append_repr);
  if (arg.elements().size() == 1) out += ",";
  out += ")";
}

void append_repr(std::string& out, const Argument& arg) {
  if (append_plain_leaf(out, arg)) return;
  if (arg.named_tuple_type() != nullptr) {
    append_fields(out, arg, append_repr);
    return;
  }
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
      append_tuple_repr(out, arg);
      return;
    case Argument::Kind::kDict:
      append_dict(out, arg, append_repr, true, append_repr);
      return;
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
  const NamedTupleType* named = arg.named_tuple_type();
  if (named != nullptr && named->fields_repr) {
    append_fields(out, arg, append_format_arg);
    return;
  }
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
    case Argument::Kind::kDict:
      append_dict(out, arg, append_str, false, append_format_arg);
      return;
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
