// String building for fx_core: cat(), append(), join(), split().
//
// Debian's Abseil is built with its own absl::string_view (not
// std::string_view), so absl::StrCat does not take the std::string_view this
// SDK uses everywhere; these helpers do, without streams.
#ifndef FX_CORE_SUPPORT_STRINGS_H_
#define FX_CORE_SUPPORT_STRINGS_H_

#include <charconv>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace fx {
namespace strings_internal {

inline void append_one(std::string& out, std::string_view s) { out.append(s); }
inline void append_one(std::string& out, const char* s) { out.append(s); }
inline void append_one(std::string& out, const std::string& s) {
  out.append(s);
}
inline void append_one(std::string& out, char c) { out.push_back(c); }

template <typename T, typename = std::enable_if_t<std::is_integral_v<T> &&
                                                  !std::is_same_v<T, char> &&
                                                  !std::is_same_v<T, bool>>>
void append_one(std::string& out, T value) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, res.ptr);
}

// No floating-point or bool pieces: they would convert to char. Format a
// float as the context needs it (e.g. Python's repr, fx_core/ir/python_repr.h).
template <typename T, typename = std::enable_if_t<std::is_floating_point_v<T> ||
                                                  std::is_same_v<T, bool>>>
void append_one(std::string& out, const T& value) = delete;

inline size_t size_one(std::string_view s) { return s.size(); }
inline size_t size_one(const char* s) {
  return std::char_traits<char>::length(s);
}
inline size_t size_one(const std::string& s) { return s.size(); }
template <typename T>
size_t size_one(const T&) {
  return 20;
}

}  // namespace strings_internal

// Appends every piece (strings, string_views, chars, integers) to *out.
template <typename... Pieces>
void append(std::string* out, const Pieces&... pieces) {
  out->reserve(out->size() + (strings_internal::size_one(pieces) + ... + 0));
  (strings_internal::append_one(*out, pieces), ...);
}

// Concatenates every piece into a new string.
template <typename... Pieces>
std::string cat(const Pieces&... pieces) {
  std::string out;
  append(&out, pieces...);
  return out;
}

template <typename Range>
std::string join(const Range& parts, std::string_view sep) {
  std::string out;
  bool first = true;
  for (const auto& p : parts) {
    if (!first) out.append(sep);
    first = false;
    strings_internal::append_one(out, p);
  }
  return out;
}

// Splits on every `sep` (empty pieces kept, as Python's str.split(sep)).
// `text` without leading and trailing ASCII whitespace.
inline std::string_view strip(std::string_view text) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
           c == '\v';
  };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

// Splits on commas outside brackets ((), [], {}) and quotes, each part
// stripped: "a, b=(1, 2), c='x,y'" -> {"a", "b=(1, 2)", "c='x,y'"}. Python
// signatures and literals; "" gives no parts.
inline std::vector<std::string_view> split_top_level(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(strip(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  std::string_view last = strip(text.substr(start));
  if (!last.empty() || !parts.empty()) parts.push_back(last);
  return parts;
}

inline std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = text.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(text.substr(start));
      return out;
    }
    out.push_back(text.substr(start, pos - start));
    start = pos + 1;
  }
}

}  // namespace fx

#endif  // FX_CORE_SUPPORT_STRINGS_H_
