// Linked into the fuzz targets whose inputs make LibTorch throw: a
// c10::Error captures a backtrace when made (most of the time of a refused
// archive), which no target prints (messages are read without it). An empty
// stack-trace fetcher makes refusals as cheap as the code that finds them,
// so a campaign's executions go to inputs, not to unwinding.
#include <c10/util/Logging.h>

#include <string>

namespace {

const bool kQuiet = [] {
  c10::SetStackTraceFetcher([] { return std::string(); });
  return true;
}();

}  // namespace
