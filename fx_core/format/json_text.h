// fx::parse_json_text: nlohmann's parser with the limits every file the SDK
// reads as JSON (graph files, pipeline configs) must keep.
//
// nlohmann accepts what these files must refuse, or stops in ways a loader
// must not: numbers beyond a double (`1e999`) throw out_of_range, integers
// beyond 64 bits silently become doubles, a repeated key keeps one of its
// values, and nesting is unbounded (a reader walking the result recursively
// then overflows the stack). This parse refuses each of them with an
// InvalidArgument status that names the source and the place in the document
// (`nodes[3].args[0]`), and builds the document in the same pass.
#ifndef FX_CORE_FORMAT_JSON_TEXT_H_
#define FX_CORE_FORMAT_JSON_TEXT_H_

#include <nlohmann/json.hpp>
#include <string_view>

#include "absl/status/statusor.h"

namespace fx {

// Arrays and objects nested deeper than this are refused. Python's json
// module (whose recursion stops near 1000 levels) cannot write deeper files.
inline constexpr size_t kMaxJsonDepth = 1000;

// Parses `text`; `source` names it in messages (a path or "<string>").
// Refuses: malformed JSON, numbers out of double range, integers outside
// [-2^63, 2^64), duplicate keys in one object, nesting beyond `max_depth`.
absl::StatusOr<nlohmann::ordered_json> parse_json_text(
    std::string_view text, std::string_view source,
    size_t max_depth = kMaxJsonDepth);

}  // namespace fx

#endif  // FX_CORE_FORMAT_JSON_TEXT_H_
