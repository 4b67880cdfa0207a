#include "host/options/pass_options.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "fx_core/support/strings.h"

namespace fx::host {
namespace {

std::string_view input_kind_name(OptionInput::Kind kind) {
  switch (kind) {
    case OptionInput::Kind::kText:
      return "text";
    case OptionInput::Kind::kBool:
      return "a JSON boolean";
    case OptionInput::Kind::kInt:
      return "a JSON integer";
    case OptionInput::Kind::kFloat:
      return "a JSON number";
    case OptionInput::Kind::kString:
      return "a JSON string";
    case OptionInput::Kind::kList:
      return "a JSON array";
  }
  return "?";
}

// Whether a JSON value of `kind` may give an option of `type`. A JSON
// string is read as the text form, so it fits every type.
bool json_kind_fits(OptionInput::Kind kind, FxOptionType type) {
  using K = OptionInput::Kind;
  if (kind == K::kString) return true;
  switch (type) {
    case FX_OPTION_BOOL:
      return kind == K::kBool;
    case FX_OPTION_INT:
      return kind == K::kInt;
    case FX_OPTION_FLOAT:
      return kind == K::kInt || kind == K::kFloat;
    case FX_OPTION_STRING:
      return kind == K::kString;
    case FX_OPTION_STRING_LIST:
      return kind == K::kString || kind == K::kList;
  }
  return false;
}

// The whole of `text` as a number (an optional '+' allowed).
template <typename T>
bool parse_number(std::string_view text, T* out) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

// The shortest text that reads back as `value`.
std::string format_double(double value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

}  // namespace

std::string_view option_type_name(FxOptionType type) {
  switch (type) {
    case FX_OPTION_BOOL:
      return "bool";
    case FX_OPTION_INT:
      return "int";
    case FX_OPTION_FLOAT:
      return "float";
    case FX_OPTION_STRING:
      return "string";
    case FX_OPTION_STRING_LIST:
      return "string list";
  }
  return "unknown type";
}

absl::Status parse_option_text(FxOptionType type, std::string_view text,
                               OptionValue* out) {
  out->type = type;
  std::string_view t = strip(text);
  switch (type) {
    case FX_OPTION_BOOL:
      if (t == "true" || t == "1") {
        out->b = true;
      } else if (t == "false" || t == "0") {
        out->b = false;
      } else {
        return absl::InvalidArgumentError(
            cat("expected a bool (true, false, 1 or 0), got '", text, "'"));
      }
      return absl::OkStatus();
    case FX_OPTION_INT:
      if (!parse_number(t, &out->i)) {
        return absl::InvalidArgumentError(
            cat("expected an int, got '", text, "'"));
      }
      return absl::OkStatus();
    case FX_OPTION_FLOAT:
      if (t == "inf") {
        out->f = INFINITY;
      } else if (t == "-inf") {
        out->f = -INFINITY;
      } else if (t == "nan") {
        out->f = NAN;
      } else if (!parse_number(t, &out->f)) {
        return absl::InvalidArgumentError(
            cat("expected a float, got '", text, "'"));
      }
      return absl::OkStatus();
    case FX_OPTION_STRING:
      out->s = std::string(text);
      return absl::OkStatus();
    case FX_OPTION_STRING_LIST:
      out->list.clear();
      if (!t.empty()) {
        for (std::string_view item : split(t, ',')) {
          out->list.emplace_back(strip(item));
        }
      }
      return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      cat("unknown option type ", static_cast<int>(type)));
}

std::string option_value_text(const OptionValue& value) {
  switch (value.type) {
    case FX_OPTION_BOOL:
      return value.b ? "true" : "false";
    case FX_OPTION_INT:
      return cat(value.i);
    case FX_OPTION_FLOAT:
      if (std::isnan(value.f)) return "nan";
      if (std::isinf(value.f)) return value.f > 0 ? "inf" : "-inf";
      return format_double(value.f);
    case FX_OPTION_STRING:
      return value.s;
    case FX_OPTION_STRING_LIST:
      return join(value.list, ",");
  }
  return "";
}

namespace {

// The index of option `name` in the pass's schema; an error listing the
// pass's options when it has none of that name.
absl::StatusOr<size_t> option_index(const FxPassInfo& pass,
                                    const std::string& name) {
  size_t index = pass.num_options;
  for (size_t i = 0; i < pass.num_options; ++i) {
    if (name == pass.options[i].name) index = i;
  }
  if (index < pass.num_options) return index;
  std::vector<std::string> known;
  for (size_t i = 0; i < pass.num_options; ++i) {
    known.emplace_back(pass.options[i].name);
  }
  return absl::InvalidArgumentError(
      cat("pass '", pass.name, "' has no option '", name,
          "' (its options: ", known.empty() ? "none" : join(known, ", "), ")"));
}

// A given value as the option's type; the error says what was expected.
absl::Status parse_option_input(const FxOptionSpec& spec,
                                const OptionInput& input, OptionValue* value) {
  if (input.kind == OptionInput::Kind::kText ||
      input.kind == OptionInput::Kind::kString) {
    return parse_option_text(spec.type, input.text, value);
  }
  if (!json_kind_fits(input.kind, spec.type)) {
    return absl::InvalidArgumentError(
        cat("expected ", option_type_name(spec.type), ", got ",
            input_kind_name(input.kind), " (", input.text, ")"));
  }
  if (input.kind == OptionInput::Kind::kList) {
    value->type = spec.type;
    value->list = input.list;
    return absl::OkStatus();
  }
  return parse_option_text(spec.type, input.text, value);
}

// The schema's default for an option not given.
absl::StatusOr<OptionValue> default_option_value(const FxPassInfo& pass,
                                                 const FxOptionSpec& spec) {
  OptionValue value;
  absl::Status status = parse_option_text(
      spec.type, spec.default_value ? spec.default_value : "", &value);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        cat("the default of option '", spec.name, "' of pass '", pass.name,
            "' is not a valid ", option_type_name(spec.type), ": ",
            std::string(status.message())));
  }
  return value;
}

}  // namespace

absl::StatusOr<FxOptions> bind_pass_options(
    const FxPassInfo& pass,
    const std::vector<std::pair<std::string, OptionInput>>& given) {
  // Values in schema order, whatever order they were given in.
  std::vector<std::optional<OptionValue>> values(pass.num_options);
  for (const auto& [name, input] : given) {
    absl::StatusOr<size_t> index = option_index(pass, name);
    if (!index.ok()) return index.status();
    if (values[*index].has_value()) {
      return absl::InvalidArgumentError(
          cat("option '", name, "' of pass '", pass.name, "' is given twice"));
    }
    const FxOptionSpec& spec = pass.options[*index];
    OptionValue value;
    absl::Status status = parse_option_input(spec, input, &value);
    if (!status.ok()) {
      return absl::InvalidArgumentError(cat(
          "option '", name, "' of pass '", pass.name, "' is a ",
          option_type_name(spec.type), ": ", std::string(status.message())));
    }
    values[*index] = std::move(value);
  }
  FxOptions options;
  options.values.reserve(pass.num_options);
  for (size_t i = 0; i < pass.num_options; ++i) {
    if (!values[i].has_value()) {
      absl::StatusOr<OptionValue> value =
          default_option_value(pass, pass.options[i]);
      if (!value.ok()) return value.status();
      values[i] = *std::move(value);
    }
    options.values.emplace_back(pass.options[i].name, *std::move(values[i]));
  }
  return options;
}

}  // namespace fx::host
