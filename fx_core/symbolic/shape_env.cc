#include "fx_core/symbolic/shape_env.h"

#include <algorithm>

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "fx_core/symbolic/sym_parser.h"

namespace fx::sym {

std::string DimSource::str() const {
  return cat("placeholder '", placeholder,
             stride ? "' stride " : "' dimension ", dim);
}

void ShapeEnv::add_input(std::string placeholder, std::vector<Expr> sizes,
                         std::vector<Expr> strides) {
  inputs_.push_back(
      {std::move(placeholder), std::move(sizes), std::move(strides)});
}

void ShapeEnv::set_hint(std::string_view symbol, int64_t value) {
  for (auto& [name, hint] : hints_) {
    if (name == symbol) {
      hint = value;
      return;
    }
  }
  hints_.emplace_back(std::string(symbol), value);
}

void ShapeEnv::add_guard(Relation guard, std::string printed) {
  if (std::optional<bool> decided = guard.decided()) {
    if (!*decided) {
      throw FxError(cat("a guard comparing ", guard.lhs.str(), " and ",
                        guard.rhs.str(), " can never hold"));
    }
    return;
  }
  if (printed.empty()) printed = guard.str();
  for (size_t i = 0; i < guards_.size(); ++i) {
    if (guards_[i] == guard && guard_texts_[i] == printed) return;
  }
  std::vector<std::string> names = guard.lhs.free_symbols();
  for (std::string& n : guard.rhs.free_symbols()) {
    if (std::find(names.begin(), names.end(), n) == names.end()) {
      names.push_back(std::move(n));
    }
  }
  std::sort(names.begin(), names.end());
  guard_symbols_.push_back(std::move(names));
  guards_.push_back(std::move(guard));
  guard_texts_.push_back(std::move(printed));
}

std::vector<std::string> ShapeEnv::symbols() const {
  std::vector<std::string> out;
  auto add = [&](const std::vector<std::string>& names) {
    for (const std::string& n : names) {
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
  };
  for (const Input& input : inputs_) {
    for (const Expr& size : input.sizes) add(size.free_symbols());
    for (const Expr& stride : input.strides) add(stride.free_symbols());
  }
  for (const Relation& guard : guards_) {
    add(guard.lhs.free_symbols());
    add(guard.rhs.free_symbols());
  }
  return out;
}

std::optional<int64_t> ShapeEnv::hint(std::string_view symbol) const {
  for (const auto& [name, value] : hints_) {
    if (name == symbol) return value;
  }
  return std::nullopt;
}

std::optional<DimSource> ShapeEnv::source(std::string_view symbol) const {
  for (const Input& input : inputs_) {
    for (bool stride : {false, true}) {
      const std::vector<Expr>& all = stride ? input.strides : input.sizes;
      for (size_t d = 0; d < all.size(); ++d) {
        if (all[d].kind() == Expr::Kind::kSymbol && all[d].name() == symbol) {
          return DimSource{input.placeholder, d, stride};
        }
      }
    }
  }
  return std::nullopt;
}

namespace {

std::string sizes_text(const std::vector<Expr>& sizes) {
  std::string out = "[";
  for (size_t d = 0; d < sizes.size(); ++d) {
    out += cat(d ? ", " : "", sizes[d].str());
  }
  return out + "]";
}

}  // namespace

absl::Status ShapeEnv::bind_one(const Expr& declared, int64_t actual,
                                DimSource at, Bindings& bindings,
                                std::vector<Deferred>& later) const {
  if (std::optional<int64_t> fixed = declared.as_integer()) {
    if (*fixed == actual) return absl::OkStatus();
    return absl::InvalidArgumentError(cat(at.str(), " is ", actual,
                                          ", but the graph was captured for ",
                                          *fixed, " only (specialised)"));
  }
  if (declared.kind() != Expr::Kind::kSymbol ||
      bindings.find(declared.name()) != bindings.end()) {
    later.push_back({&declared, std::move(at), actual});
    return absl::OkStatus();
  }
  if (actual < 2) {
    return absl::InvalidArgumentError(
        cat(at.str(), " is ", actual, ", but the graph was captured with a ",
            "value that varies there (", declared.name(),
            "), which excludes 0 and 1: the capture specialises 0 and 1 (as "
            "torch 1.13 does); capture again with this shape"));
  }
  bindings.emplace(declared.name(), actual);
  return absl::OkStatus();
}

absl::Status ShapeEnv::bind_input(const Input& input, const TensorShape& shape,
                                  Bindings& bindings,
                                  std::vector<Deferred>& later) const {
  if (shape.sizes.size() != input.sizes.size()) {
    return absl::InvalidArgumentError(
        cat("placeholder '", input.placeholder, "' has ", shape.sizes.size(),
            " dimensions, but the graph was captured for ", input.sizes.size(),
            " (", sizes_text(input.sizes), ")"));
  }
  for (size_t d = 0; d < input.sizes.size(); ++d) {
    absl::Status s = bind_one(input.sizes[d], shape.sizes[d],
                              {input.placeholder, d, false}, bindings, later);
    if (!s.ok()) return s;
  }
  for (size_t d = 0; d < input.strides.size() && d < shape.strides.size();
       ++d) {
    absl::Status s = bind_one(input.strides[d], shape.strides[d],
                              {input.placeholder, d, true}, bindings, later);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ShapeEnv::check_deferred(const Deferred& d,
                                      const Bindings& bindings) const {
  int64_t want = 0;
  try {
    want = d.size->evaluate(bindings);
  } catch (const FxError& e) {
    return absl::InvalidArgumentError(cat(d.at.str(), ": its size ",
                                          d.size->str(),
                                          " cannot be computed: ", e.what()));
  }
  if (want == d.actual) return absl::OkStatus();
  return absl::InvalidArgumentError(
      cat(d.at.str(), " is ", d.actual, ", but the graph needs ", d.size->str(),
          " = ", want, " there (",
          describe_values(d.size->free_symbols(), bindings), ")"));
}

std::string ShapeEnv::describe_values(const std::vector<std::string>& symbols,
                                      const Bindings& bindings) const {
  std::string out;
  for (const std::string& name : symbols) {
    auto it = bindings.find(name);
    out += cat(
        out.empty() ? "" : ", ", name, " = ",
        it == bindings.end() ? std::string("?") : std::to_string(it->second));
    if (std::optional<DimSource> at = source(name))
      out += cat(" (", at->str(), ")");
  }
  return out;
}

absl::Status ShapeEnv::check_guard(size_t i, const Bindings& bindings) const {
  const Relation& guard = guards_[i];
  const std::vector<std::string>& names = guard_symbols_[i];
  for (const std::string& n : names) {
    if (bindings.find(n) == bindings.end()) {
      return absl::InvalidArgumentError(
          cat("the guard ", guard.str(), " names ", n,
              ", which no input dimension gives"));
    }
  }
  bool ok = false;
  try {
    ok = guard.compare(bindings);  // add_guard keeps no decided relation
  } catch (const FxError& e) {
    return absl::InvalidArgumentError(
        cat("the guard ", guard.str(), " cannot be evaluated (",
            describe_values(names, bindings), "): ", e.what()));
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      cat("the guard ", guard.str(),
          " does not hold: ", describe_values(names, bindings)));
}

absl::StatusOr<Bindings> ShapeEnv::bind(const ShapeOf& shape_of) const {
  Bindings bindings;
  std::vector<Deferred> later;
  for (const Input& input : inputs_) {
    std::optional<TensorShape> shape = shape_of(input.placeholder);
    if (!shape) {
      return absl::InvalidArgumentError(cat(
          "placeholder '", input.placeholder, "' must be a tensor of ",
          input.sizes.size(), " dimensions (", sizes_text(input.sizes), ")"));
    }
    absl::Status s = bind_input(input, *shape, bindings, later);
    if (!s.ok()) return s;
  }
  for (const Deferred& d : later) {
    absl::Status s = check_deferred(d, bindings);
    if (!s.ok()) return s;
  }
  for (size_t i = 0; i < guards_.size(); ++i) {
    absl::Status s = check_guard(i, bindings);
    if (!s.ok()) return s;
  }
  return bindings;
}

absl::StatusOr<ShapeEnv> declared_shape_env(
    const std::vector<std::pair<std::string, int64_t>>& hints,
    const std::vector<std::string>& guards,
    const std::vector<std::string>& printed) {
  if (!printed.empty() && printed.size() != guards.size()) {
    return absl::InvalidArgumentError(cat("shape_env has ", guards.size(),
                                          " guards but ", printed.size(),
                                          " printed texts"));
  }
  ShapeEnv env;
  for (const auto& [name, value] : hints) {
    absl::StatusOr<Expr> symbol = parse_sym_expr(name);
    if (!symbol.ok() || symbol->kind() != Expr::Kind::kSymbol) {
      return absl::InvalidArgumentError(
          cat("shape_env hint '", name, "' does not name a symbol"));
    }
    env.set_hint(name, value);
  }
  for (size_t i = 0; i < guards.size(); ++i) {
    absl::StatusOr<Relation> guard = parse_sym_relation(guards[i]);
    if (!guard.ok()) {
      return absl::InvalidArgumentError(
          cat("shape_env guard [", i, "] \"", guards[i],
              "\": ", std::string(guard.status().message())));
    }
    try {
      env.add_guard(*std::move(guard),
                    printed.empty() ? std::string() : printed[i]);
    } catch (const FxError& e) {
      return absl::InvalidArgumentError(
          cat("shape_env guard [", i, "] \"", guards[i], "\": ", e.what()));
    }
  }
  return env;
}

std::string ShapeEnv::format_guards() const {
  std::string out;
  for (const std::string& text : guard_texts_) {
    out += cat(out.empty() ? "" : "\n", " - ", text);
  }
  return out;
}

}  // namespace fx::sym
