// Calling one pass's run function on a target, in this process or in a
// worker process (isolation). The pass manager wraps the call in its
// transaction (pass_target.h: begin, then commit or rollback) and its hooks.
//
// In-process, a pass that crashes takes the process with it. Isolated
// (pass_worker.h), the pass runs in a forked worker on the worker's copy of
// the target; the worker sends back the status, the pass's `changed` and,
// when it succeeded, what it made of the target (PassTarget::
// encode_changes), which the host applies to its own target. A crash, an
// abort, a hang past the timeout or an allocation past the memory limit
// ends the worker only: the host's target is untouched and the error says
// what ended the worker ("the worker process was killed by SIGSEGV"). The
// graph travels as fx-graph JSON, which only a valid graph can be: the
// worker lints it first, and a graph that does not lint is the pass's
// failure ("it left an invalid graph: ..."), verify_each or not.
#ifndef HOST_PIPELINE_PASS_CALL_H_
#define HOST_PIPELINE_PASS_CALL_H_

#include <string>

#include "host/pipeline/pass_instrumentation.h"
#include "host/pipeline/pass_target.h"
#include "host/pipeline/pass_worker.h"

namespace fx::host {

struct PassCallResult {
  // Empty on success; else the failure: "STATUS_CODE: message" for a status
  // the pass returned, or what went wrong around it.
  std::string error;
  bool claimed_changed = false;  // what the pass said through `changed`
};

// Calls `pass` on `target` through the C ABI in this process. Exceptions
// that escape the plugin are caught and reported as the error.
PassCallResult call_pass(const ScheduledPass& pass, PassTarget& target);

// The same call in a worker process under `limits`; on success the target
// has become what the pass made of it.
PassCallResult call_pass_isolated(const ScheduledPass& pass, PassTarget& target,
                                  const WorkerLimits& limits);

}  // namespace fx::host

#endif  // HOST_PIPELINE_PASS_CALL_H_
