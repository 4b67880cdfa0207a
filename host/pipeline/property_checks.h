// Checks for the properties passes declare they produce ("tensor_meta"): the
// pass manager runs the check of every property a pass produces after the
// pass, and rolls the pass back when it fails. Properties without a check are
// tracked for ordering only.
//
// Built in:
//   tensor_meta  every node but the output has meta['type'] (the Python
//                type of its value, as torch.fx's ShapeProp records it), and
//                every node whose type is torch.Tensor has
//                meta['tensor_meta'].
#ifndef HOST_PIPELINE_PROPERTY_CHECKS_H_
#define HOST_PIPELINE_PROPERTY_CHECKS_H_

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "fx_core/ir/graph.h"

namespace fx::host {

using PropertyCheck = std::function<absl::Status(const Graph&)>;

// Adds or replaces the check for `property` (process-wide).
void register_property_check(std::string property, PropertyCheck check);
// OK when `property` has no check or the check passes.
absl::Status check_property(std::string_view property, const Graph& graph);

}  // namespace fx::host

#endif  // HOST_PIPELINE_PROPERTY_CHECKS_H_
