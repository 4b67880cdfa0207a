#include "host/pipeline/pass_instrumentation.h"

namespace fx::host {

PassInstrumentation::~PassInstrumentation() = default;

}  // namespace fx::host
