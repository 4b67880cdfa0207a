// Ordering a pipeline by what its passes declare (FxPassInfo):
//  - run_after B:  when both are in the pipeline, every B runs before A;
//  - run_before B: when both are in the pipeline, every B runs after A;
//  - required P:   property P holds when A starts: it was assumed or produced
//                  by an earlier pass, and no pass in between invalidated it.
// Properties are names ("tensor_meta"); `produces` establishes one,
// `invalidates` destroys it (a pass that does both keeps it).
//
// check_pass_order validates an explicit order; auto_pass_order finds one,
// keeping the written order wherever the constraints leave it free. A cycle
// and an unmet requirement are errors naming the passes involved.
#ifndef HOST_PIPELINE_PASS_ORDERING_H_
#define HOST_PIPELINE_PASS_ORDERING_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fx/plugin_api.h"

namespace fx::host {

// `known` lists every pass the host could run, for "passes that produce it"
// hints in messages (may be empty).
absl::Status check_pass_order(const std::vector<const FxPassInfo*>& order,
                              const std::vector<std::string>& assumed,
                              const std::vector<const FxPassInfo*>& known = {});

// A permutation of `passes` (indices) that satisfies the constraints.
absl::StatusOr<std::vector<size_t>> auto_pass_order(
    const std::vector<const FxPassInfo*>& passes,
    const std::vector<std::string>& assumed,
    const std::vector<const FxPassInfo*>& known = {});

}  // namespace fx::host

#endif  // HOST_PIPELINE_PASS_ORDERING_H_
