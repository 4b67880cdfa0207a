// Pass options: the typed values a pass declares in its FxOptionSpec schema,
// parsed from a pipeline's text form or a JSON config and checked against
// that schema before anything runs.
//
// Text forms (pipeline text, defaults in a schema):
//   bool         true | false | 1 | 0
//   int          a decimal integer (optional sign)
//   float        a decimal or scientific number, inf, nan
//   string       any text
//   string list  comma-separated items ("relu,gelu"); empty text is []
// JSON configs use JSON's own types (true, 8, 0.5, "int8", ["relu","gelu"]);
// a JSON string is read as the text form, so "8" gives an int option too.
#ifndef HOST_OPTIONS_PASS_OPTIONS_H_
#define HOST_OPTIONS_PASS_OPTIONS_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fx/plugin_api.h"
#include "host/capi/c_api.h"

namespace fx::host {

// One option as a pipeline gives it, before the schema is known.
struct OptionInput {
  enum class Kind { kText, kBool, kInt, kFloat, kString, kList };
  Kind kind = Kind::kText;
  std::string text;               // the value spelled out (all kinds)
  std::vector<std::string> list;  // kList
};

// "bool", "int", "float", "string", "string list".
std::string_view option_type_name(FxOptionType type);

// Parses `text` as `type` into *out; the error says what was expected.
absl::Status parse_option_text(FxOptionType type, std::string_view text,
                               OptionValue* out);

// The option set of one pass invocation: every option of the schema, given
// values first, defaults for the rest. Unknown option names, values of the
// wrong type and options given twice are errors naming the pass and option.
absl::StatusOr<FxOptions> bind_pass_options(
    const FxPassInfo& pass,
    const std::vector<std::pair<std::string, OptionInput>>& given);

// The value in text form (as the pipeline text would spell it).
std::string option_value_text(const OptionValue& value);

}  // namespace fx::host

#endif  // HOST_OPTIONS_PASS_OPTIONS_H_
