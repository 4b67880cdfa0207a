// A FailureProbe (graph_reducer.h) that runs a built pipeline on a graph
// file as `fx run` would: as a GraphModule when the file loads as one (its
// weights read from beside it), else as a bare graph.
//
// The category of a failure is the first failed pass and the kind of its
// error: the text before the first ':' ("pass 'refuse_target': INTERNAL"
// for a status the pass returned, "pass 'x': the worker process was killed
// by SIGSEGV" under isolation). Empty when every pass succeeded.
#ifndef HOST_MINIMIZER_PIPELINE_PROBE_H_
#define HOST_MINIMIZER_PIPELINE_PROBE_H_

#include <string>

#include "fx_core/format/graph_json.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pipeline_report.h"

namespace fx::host {

// The category of the report's first failed pass, or empty.
std::string failure_category(const PipelineReport& report);

// Runs `pm` on a copy of `file` and returns the failure's category. `pm`
// must outlive the probe's uses.
std::string probe_pipeline(const PassManager& pm, const GraphFile& file);

}  // namespace fx::host

#endif  // HOST_MINIMIZER_PIPELINE_PROBE_H_
