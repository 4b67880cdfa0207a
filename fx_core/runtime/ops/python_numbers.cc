#include "fx_core/runtime/ops/python_numbers.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "fx_core/ir/python_repr.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::ops {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr double kTwo63 = 9223372036854775808.0;  // 2**63

// Python would hold the exact int; the runtime's ints have 64 bits.
[[noreturn]] void beyond_64_bits(std::string_view expression) {
  throw FxError(cat("OverflowError: ", expression,
                    " does not fit in 64 bits (the runtime's ints are int64; "
                    "Python's int would hold it)"));
}

[[noreturn]] void overflow(int64_t a, std::string_view op, int64_t b) {
  beyond_64_bits(cat(a, " ", op, " ", b));
}

[[noreturn]] void zero_division(const char* message) {
  throw FxError(cat("ZeroDivisionError: ", message));
}

int bit_length(unsigned __int128 x) {
  int n = 0;
  while (x != 0) {
    x >>= 1;
    ++n;
  }
  return n;
}

unsigned __int128 magnitude(int64_t x) {
  return x < 0 ? static_cast<unsigned __int128>(-(x + 1)) + 1
               : static_cast<unsigned __int128>(x);
}

std::string_view strip_spaces(std::string_view s) {
  const char* kSpaces = " \t\n\r\f\v";
  const size_t first = s.find_first_not_of(kSpaces);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpaces) - first + 1);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// `s` without its underscores, when each one sits between two digits (as
// Python's literals allow); std::nullopt otherwise.
std::optional<std::string> without_underscores(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '_') {
      out += s[i];
    } else if (i == 0 || i + 1 == s.size() || !is_digit(s[i - 1]) ||
               !is_digit(s[i + 1])) {
      return std::nullopt;
    }
  }
  return out;
}

bool equals_lower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != lower[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace

int64_t parse_int(std::string_view text) {
  auto invalid = [&] {
    return FxError(cat("ValueError: invalid literal for int() with base 10: '",
                       text, "'"));
  };
  std::string_view s = strip_spaces(text);
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  std::optional<std::string> digits = without_underscores(s);
  if (!digits || digits->empty()) throw invalid();
  int64_t value = 0;
  for (char c : *digits) {
    if (!is_digit(c)) throw invalid();
    if (__builtin_mul_overflow(value, 10, &value) ||
        __builtin_sub_overflow(value, c - '0', &value)) {
      beyond_64_bits(cat("int('", text, "')"));
    }
  }
  // Accumulated as a negative number: -2**63 fits, 2**63 does not.
  if (!negative && value == kMin) {
    beyond_64_bits(cat("int('", text, "')"));
  }
  return negative ? value : -value;
}

double parse_float(std::string_view text) {
  auto invalid = [&] {
    return FxError(
        cat("ValueError: could not convert string to float: '", text, "'"));
  };
  std::string_view s = strip_spaces(text);
  std::string_view body = s;
  const bool negative = !body.empty() && body[0] == '-';
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    body.remove_prefix(1);
  }
  if (equals_lower(body, "inf") || equals_lower(body, "infinity")) {
    return negative ? -HUGE_VAL : HUGE_VAL;
  }
  if (equals_lower(body, "nan")) return negative ? -NAN : NAN;
  // Digits, one point, one exponent: nothing strtod would read beyond
  // Python's syntax (hexadecimal floats, "infinity" spelled otherwise).
  bool digit = false, point = false, exponent = false;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (is_digit(c) || c == '_') {
      digit = digit || is_digit(c);
    } else if (c == '.' && !point && !exponent) {
      point = true;
    } else if ((c == 'e' || c == 'E') && digit && !exponent) {
      exponent = true;
      if (i + 1 < body.size() && (body[i + 1] == '+' || body[i + 1] == '-')) {
        ++i;
      }
      if (i + 1 >= body.size()) throw invalid();
    } else {
      throw invalid();
    }
  }
  std::optional<std::string> clean = without_underscores(s);
  if (!digit || !clean) throw invalid();
  char* end = nullptr;
  const double value = std::strtod(clean->c_str(), &end);
  if (end != clean->c_str() + clean->size()) throw invalid();
  return value;
}

int64_t py_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) overflow(a, "+", b);
  return r;
}

int64_t py_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) overflow(a, "-", b);
  return r;
}

int64_t py_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) overflow(a, "*", b);
  return r;
}

int64_t py_floordiv(int64_t a, int64_t b) {
  if (b == 0) zero_division("integer division or modulo by zero");
  if (a == kMin && b == -1) overflow(a, "//", b);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t py_mod(int64_t a, int64_t b) {
  if (b == 0) zero_division("integer modulo by zero");
  if (b == -1) return 0;  // also for -2**63, whose quotient overflows
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

int64_t py_neg(int64_t a) {
  if (a == kMin) beyond_64_bits(cat("-(", a, ")"));
  return -a;
}

int64_t py_abs(int64_t a) { return a < 0 ? py_neg(a) : a; }

int64_t py_lshift(int64_t a, int64_t count) {
  if (count < 0) throw FxError("ValueError: negative shift count");
  if (a == 0) return 0;
  if (count >= 64) overflow(a, "<<", count);
  const int64_t r = static_cast<int64_t>(static_cast<uint64_t>(a) << count);
  if ((r >> count) != a) overflow(a, "<<", count);
  return r;
}

int64_t py_rshift(int64_t a, int64_t count) {
  if (count < 0) throw FxError("ValueError: negative shift count");
  if (count >= 64) return a < 0 ? -1 : 0;
  return a >> count;  // arithmetic: rounds toward -inf, as Python's
}

int64_t py_pow(int64_t a, int64_t b) {
  int64_t result = 1, base = a;
  for (int64_t e = b; e > 0; e >>= 1) {
    if (e & 1) {
      if (__builtin_mul_overflow(result, base, &result)) overflow(a, "**", b);
    }
    if (e > 1 && __builtin_mul_overflow(base, base, &base)) {
      overflow(a, "**", b);
    }
  }
  return result;
}

double py_truediv(int64_t a, int64_t b) {
  if (b == 0) zero_division("division by zero");
  constexpr int64_t kExact = int64_t{1} << 53;
  if (a > -kExact && a < kExact && b > -kExact && b < kExact) {
    return static_cast<double>(a) / static_cast<double>(b);  // both exact
  }
  const bool negative = (a < 0) != (b < 0);
  const unsigned __int128 num = magnitude(a), den = magnitude(b);
  if (num == 0) return negative ? -0.0 : 0.0;
  // Scale the numerator so the integer quotient has at least 55 bits: 53
  // for the double, one to round on and more for the remainder's sticky bit.
  const int shift = std::max(0, 56 - (bit_length(num) - bit_length(den)));
  const unsigned __int128 scaled = num << shift;
  unsigned __int128 q = scaled / den;
  const bool inexact = scaled % den != 0;
  const int drop = bit_length(q) - 53;
  const unsigned __int128 half = static_cast<unsigned __int128>(1)
                                 << (drop - 1);
  const unsigned __int128 rest = q & ((half << 1) - 1);
  q >>= drop;
  if (rest > half || (rest == half && (inexact || (q & 1) != 0))) ++q;
  const double r = std::ldexp(static_cast<double>(q), drop - shift);
  return negative ? -r : r;
}

int compare_int_float(int64_t a, double b) {
  if (std::isnan(b)) return 2;
  if (b >= kTwo63) return -1;
  if (b < -kTwo63) return 1;
  const double whole = std::trunc(b);
  const int64_t w = static_cast<int64_t>(whole);  // -2**63 <= whole < 2**63
  if (a != w) return a < w ? -1 : 1;
  const double fraction = b - whole;
  return fraction > 0 ? -1 : fraction < 0 ? 1 : 0;
}

int64_t float_to_int(double x) {
  if (std::isnan(x))
    throw FxError("ValueError: cannot convert float NaN to integer");
  if (std::isinf(x)) {
    throw FxError("OverflowError: cannot convert float infinity to integer");
  }
  const double whole = std::trunc(x);
  if (whole >= kTwo63 || whole < -kTwo63) {
    beyond_64_bits(cat("int(", python_float_repr(x), ")"));
  }
  return static_cast<int64_t>(whole);
}

double math_function(double (*fn)(double), double x, bool can_overflow) {
  const double r = fn(x);
  if (std::isnan(r) && !std::isnan(x)) {
    throw FxError("ValueError: math domain error");
  }
  if (std::isinf(r) && std::isfinite(x)) {
    throw FxError(can_overflow ? "OverflowError: math range error"
                               : "ValueError: math domain error");
  }
  return r;
}

}  // namespace fx::ops
