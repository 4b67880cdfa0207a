// What graph_json's reading and writing share inside fx_core/format and no
// dependant sees: the weight kinds' names as a file spells them
// (graph_json.cc).
#ifndef FX_CORE_FORMAT_GRAPH_JSON_INTERNAL_H_
#define FX_CORE_FORMAT_GRAPH_JSON_INTERNAL_H_

#include <optional>
#include <string_view>

#include "fx_core/format/graph_json.h"

namespace fx {

// The weight kind a file's "weight_kinds" names `name`, if any.
std::optional<WeightKind> parse_weight_kind(std::string_view name);

}  // namespace fx

#endif  // FX_CORE_FORMAT_GRAPH_JSON_INTERNAL_H_
