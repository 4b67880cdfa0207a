// Python's int and float arithmetic on the runtime's int64 and double, for
// the `operator` and `math` kernels (python_ops.cc). Each function gives
// CPython 3.11's result or raises FxError with CPython's exception name and
// message ("ZeroDivisionError: integer division or modulo by zero",
// "ValueError: negative shift count", "ValueError: math domain error").
// Python's int has no bound, the runtime's has 64 bits: a result beyond
// them is "OverflowError: ... does not fit in 64 bits" instead of a value
// wrapped around (or, for -2**63 // -1, a SIGFPE that killed the process).
//
// Internal to //fx_core/runtime:op_registry.
#ifndef FX_CORE_RUNTIME_OPS_PYTHON_NUMBERS_H_
#define FX_CORE_RUNTIME_OPS_PYTHON_NUMBERS_H_

#include <cstdint>
#include <string_view>

namespace fx::ops {

int64_t py_add(int64_t a, int64_t b);
int64_t py_sub(int64_t a, int64_t b);
int64_t py_mul(int64_t a, int64_t b);
int64_t py_floordiv(int64_t a, int64_t b);
int64_t py_mod(int64_t a, int64_t b);
int64_t py_neg(int64_t a);
int64_t py_abs(int64_t a);
int64_t py_lshift(int64_t a, int64_t count);
int64_t py_rshift(int64_t a, int64_t count);
// a ** b for b >= 0, by squaring (1 ** 10**18 at once).
int64_t py_pow(int64_t a, int64_t b);
// a / b, correctly rounded as CPython's int true division is (exact for
// any int64 operands, not only those below 2**53).
double py_truediv(int64_t a, int64_t b);

// Python's exact comparison of an int with a float: -1, 0 or 1; 2 when
// `b` is NaN (every ordering and == false). 2**53 + 1 != float(2**53).
int compare_int_float(int64_t a, double b);

// int(x), math.floor(x), math.ceil(x) of a float: its integer part, or
// "ValueError: cannot convert float NaN to integer", "OverflowError: cannot
// convert float infinity to integer", or the 64-bit bound.
int64_t float_to_int(double x);

// fn(x) for math.NAME(x) with CPython's checks (its math_1): a NaN result
// of a number, or an infinite one of a finite argument, is "ValueError:
// math domain error" (sqrt(-1), log(0), sin(inf)); for a function that can
// overflow (exp) the infinite one is "OverflowError: math range error".
double math_function(double (*fn)(double), double x, bool can_overflow);

// int(text) and float(text) of a str: Python's decimal literals (spaces
// around, a sign, digits with single underscores between them; for float a
// point, an exponent, "inf", "infinity" and "nan" in any case), else
// "ValueError: invalid literal for int() with base 10: '...'" or "could not
// convert string to float: '...'".
int64_t parse_int(std::string_view text);
double parse_float(std::string_view text);

}  // namespace fx::ops

#endif  // FX_CORE_RUNTIME_OPS_PYTHON_NUMBERS_H_
