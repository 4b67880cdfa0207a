// A recursive-descent parser with a depth bound; FxError from the
// arithmetic becomes an error at the operator's offset.
#include "fx_core/symbolic/sym_parser.h"

#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::sym {
namespace {

// Thrown inside the parser, turned into a status at its entry points.
struct ParseError {
  size_t offset;
  std::string message;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Expr whole_expr() {
    return at_offset_reached([&] {
      Expr e = sum();
      expect_end();
      return e;
    });
  }

  Relation whole_relation() {
    return at_offset_reached([&] {
      Relation r = relation();
      expect_end();
      return r;
    });
  }

 private:
  // --- tokens ---
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }
  bool peek(std::string_view token) {
    skip_space();
    return text_.substr(pos_, token.size()) == token;
  }
  bool accept(std::string_view token) {
    if (!peek(token)) return false;
    pos_ += token.size();
    return true;
  }
  [[noreturn]] void fail(std::string message) {
    throw ParseError{pos_, std::move(message)};
  }
  void expect(std::string_view token, std::string_view context) {
    if (!accept(token)) fail(cat("expected '", token, "' ", context));
  }
  void expect_end() {
    skip_space();
    if (pos_ != text_.size()) fail("expected an operator or the end");
  }
  bool at_identifier_start() {
    skip_space();
    return pos_ < text_.size() &&
           (std::isalpha(static_cast<unsigned char>(text_[pos_])) ||
            text_[pos_] == '_');
  }
  std::string_view identifier() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
            text_[pos_] == '_')) {
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }
  // A non-negative decimal integer, or nullopt when none is here.
  std::optional<int64_t> integer_literal() {
    skip_space();
    if (pos_ >= text_.size() ||
        !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      return std::nullopt;
    }
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() &&
           std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      int digit = text_[pos_] - '0';
      if (value > (INT64_MAX - digit) / 10) {
        pos_ = start;
        fail("integer literal out of range");
      }
      value = value * 10 + digit;
      ++pos_;
    }
    return value;
  }

  // --- depth: every operand passes through unary(), so its frames count
  // the nesting of parentheses, calls, unary operators and exponents ---
  struct Nested {
    explicit Nested(Parser* p) : parser(p) {
      if (++parser->depth_ > kMaxParseDepth) {
        parser->fail(cat("nesting deeper than ", kMaxParseDepth));
      }
    }
    ~Nested() { --parser->depth_; }
    Parser* parser;
  };

  // Runs an arithmetic step, its FxError an error at `offset`.
  template <typename F>
  Expr checked(size_t offset, F&& step) {
    try {
      return step();
    } catch (const FxError& e) {
      throw ParseError{offset, e.what()};
    }
  }
  // `read`, an FxError no step turned into a ParseError reported at the
  // offset reached: the work budget (work_budget.h) can run out in any
  // step that makes a node, a literal's or a symbol's included.
  template <typename F>
  std::invoke_result_t<F&> at_offset_reached(F&& read) {
    try {
      return read();
    } catch (const FxError& e) {
      throw ParseError{pos_, e.what()};
    }
  }

  // --- grammar ---
  Relation relation() {
    size_t start = pos_;
    if (at_identifier_start()) {
      size_t name_at = pos_;
      std::string_view name = identifier();
      if ((name == "Eq" || name == "Ne") && accept("(")) {
        Relation r{name == "Eq" ? Relation::Op::kEq : Relation::Op::kNe, sum(),
                   Expr()};
        expect(",", cat("between the arguments of ", name));
        r.rhs = sum();
        expect(")", cat("after the arguments of ", name));
        return r;
      }
      pos_ = name_at;
    }
    pos_ = start;
    Expr lhs = sum();
    static constexpr std::pair<std::string_view, Relation::Op> kOps[] = {
        {"==", Relation::Op::kEq}, {"!=", Relation::Op::kNe},
        {"<=", Relation::Op::kLe}, {">=", Relation::Op::kGe},
        {"<", Relation::Op::kLt},  {">", Relation::Op::kGt}};
    for (const auto& [token, op] : kOps) {
      if (accept(token)) return Relation{op, lhs, sum()};
    }
    fail("expected a comparison (==, !=, <, <=, >, >=)");
  }

  // The terms are added once, at the end (sym::sum), so a long sum reads in
  // n log n, not n**2 (a fuzzed 42-byte input expanding to thousands of
  // terms took 43 s).
  Expr sum() {
    std::vector<Expr> terms = {product()};
    std::vector<size_t> operators;  // where each later term's + or - is
    while (true) {
      size_t at = (skip_space(), pos_);
      if (accept("+")) {
        terms.push_back(product());
      } else if (accept("-")) {
        Expr rhs = product();
        terms.push_back(checked(at, [&] { return -rhs; }));
      } else {
        break;
      }
      operators.push_back(at);
    }
    if (terms.size() == 1) return terms[0];
    try {
      return fx::sym::sum(terms);
    } catch (const FxError&) {
      // Refused (an overflow, too many terms): added one at a time again
      // to name the operator where it happens.
      Expr e = terms[0];
      for (size_t i = 1; i < terms.size(); ++i) {
        e = checked(operators[i - 1], [&] { return e + terms[i]; });
      }
      return checked(operators[0], [&] { return fx::sym::sum(terms); });
    }
  }

  Expr product() {
    Expr e = unary();
    while (true) {
      size_t at = (skip_space(), pos_);
      if (accept("**")) fail("expected an operand before '**'");
      if (accept("//")) {
        Expr rhs = unary();
        e = checked(at, [&] { return floordiv(e, rhs); });
      } else if (accept("*")) {
        Expr rhs = unary();
        e = checked(at, [&] { return e * rhs; });
      } else if (accept("%")) {
        Expr rhs = unary();
        e = checked(at, [&] { return mod(e, rhs); });
      } else {
        return e;
      }
    }
  }

  Expr unary() {
    Nested nested(this);
    size_t at = (skip_space(), pos_);
    if (accept("-")) {
      Expr e = unary();
      return checked(at, [&] { return -e; });
    }
    if (accept("+")) return unary();
    return power();
  }

  Expr power() {
    Expr base = primary();
    size_t at = (skip_space(), pos_);
    if (!accept("**")) return base;
    Expr exponent = unary();
    auto n = exponent.as_integer();
    if (!n || *n < 0) {
      pos_ = at;
      fail("expected a non-negative integer exponent after '**'");
    }
    return checked(at, [&] { return sym::pow(base, *n); });
  }

  Expr primary() {
    if (auto n = integer_literal()) return Expr::integer(*n);
    if (accept("(")) {
      Expr e = sum();
      expect(")", "to close '('");
      return e;
    }
    if (!at_identifier_start()) fail("expected an integer, a symbol or '('");
    size_t start = pos_;
    std::string_view name = identifier();
    if (peek("(")) return call(name, start);
    return symbol(name, start);
  }

  Expr call(std::string_view name, size_t start) {
    if (name != "FloorDiv" && name != "Mod") {
      pos_ = start;
      fail(cat("unknown function '", name, "' (FloorDiv or Mod expected)"));
    }
    accept("(");
    Expr a = sum();
    expect(",", cat("between the arguments of ", name));
    Expr b = sum();
    expect(")", cat("after the arguments of ", name));
    return checked(
        start, [&] { return name == "FloorDiv" ? floordiv(a, b) : mod(a, b); });
  }

  // name, name.size(N), name.stride(N), name.storage_offset()
  Expr symbol(std::string_view name, size_t start) {
    if (pos_ >= text_.size() || text_[pos_] != '.') return named(name);
    ++pos_;
    std::string_view method = identifier();
    if (method == "storage_offset") {
      expect_exact("()", "after storage_offset");
    } else if (method == "size" || method == "stride") {
      expect_exact("(", cat("after ", method));
      if (!integer_literal_exact()) {
        fail(cat("expected a dimension after ", method, "("));
      }
      expect_exact(")", cat("after the dimension of ", method));
    } else {
      fail("expected size(N), stride(N) or storage_offset() after '.'");
    }
    return named(text_.substr(start, pos_ - start));
  }

  // One node per name in an expression: its sort key is computed once, and
  // comparing two occurrences is comparing two pointers.
  Expr named(std::string_view name) {
    auto [it, added] = symbols_.try_emplace(name);
    if (added) it->second = Expr::symbol(name);
    return it->second;
  }

  // Symbol names are taken verbatim, so no spaces inside them.
  void expect_exact(std::string_view token, std::string_view context) {
    if (text_.substr(pos_, token.size()) != token) {
      fail(cat("expected '", token, "' ", context));
    }
    pos_ += token.size();
  }
  bool integer_literal_exact() {
    if (pos_ >= text_.size() ||
        !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      return false;
    }
    return integer_literal().has_value();
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::unordered_map<std::string_view, Expr> symbols_;  // views of text_
};

absl::Status error_status(const ParseError& e) {
  return absl::InvalidArgumentError(
      cat("at offset ", e.offset, ": ", e.message));
}

}  // namespace

absl::StatusOr<Expr> parse_sym_expr(std::string_view text) {
  WorkBudget budget(parse_work_limit(text.size()));
  try {
    return Parser(text).whole_expr();
  } catch (const ParseError& e) {
    return error_status(e);
  }
}

absl::StatusOr<Relation> parse_sym_relation(std::string_view text) {
  WorkBudget budget(parse_work_limit(text.size()));
  try {
    return Parser(text).whole_relation();
  } catch (const ParseError& e) {
    return error_status(e);
  }
}

}  // namespace fx::sym
