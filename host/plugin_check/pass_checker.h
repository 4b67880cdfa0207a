// PassChecker: the checks `fx plugin-check` makes of one pass of a plugin on
// one graph bundle at a time (it runs, its graph lints, the numbers, the
// same result twice, idempotence, rollback, its declared contract); every
// run of the plugin's code is in a worker process. Private to
// host/plugin_check: check_plugin (plugin_check.cc) selects the passes,
// builds the prefixes and merges the results over the bundles.
#ifndef HOST_PLUGIN_CHECK_PASS_CHECKER_H_
#define HOST_PLUGIN_CHECK_PASS_CHECKER_H_

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "fx/plugin_api.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pass_worker.h"
#include "host/plugin_check/graph_bundle.h"
#include "host/plugin_check/plugin_check.h"

namespace fx::host::plugin_check_internal {

inline constexpr std::string_view kTensorMeta = "tensor_meta";
inline constexpr std::string_view kShapeProp = "shape_prop";

enum Check : size_t {
  kRuns,
  kLint,
  kNumbers,
  kDeterministic,
  kIdempotent,
  kRollback,
  kContract,
};

using Results = std::array<CheckResult, kPluginChecks.size()>;

inline CheckResult ok() { return {CheckOutcome::kOk, ""}; }
inline CheckResult failed(std::string reason) {
  return {CheckOutcome::kFail, std::move(reason)};
}
inline CheckResult skipped(std::string reason) {
  return {CheckOutcome::kSkip, std::move(reason)};
}

// A pipeline run on each graph before the checked pass.
struct Prefix {
  std::string text;  // as given, for messages
  // Its passes, each isolated; or why it cannot be built.
  absl::StatusOr<PassManager> manager;
};

// The prefixes a check may run: `before` (PluginCheckOptions::before) on
// every graph, else `shape_prop` for a pass requiring tensor_meta.
struct Prefixes {
  std::optional<Prefix> before;
  std::optional<Prefix> shape_prop;
};

inline WorkerLimits limits_of(const PluginCheckOptions& options) {
  return WorkerLimits{options.pass_timeout_seconds,
                      options.pass_memory_limit_mib};
}

inline bool contains(const FxNameList& list, std::string_view name) {
  for (size_t i = 0; i < list.count; ++i) {
    if (name == list.names[i]) return true;
  }
  return false;
}

// One pass of one plugin, and how it is called: check() runs every check
// on one bundle (skipping the rest once one cannot go on).
class PassChecker {
 public:
  PassChecker(const PassRegistry& registry, const RegisteredPass& pass,
              const PluginCheckOptions& options, const Prefixes& prefixes);
  ~PassChecker();
  PassChecker(const PassChecker&) = delete;
  PassChecker& operator=(const PassChecker&) = delete;

  Results check(const Bundle& bundle) const;

 private:
  class Impl;
  std::unique_ptr<const Impl> impl_;
};

}  // namespace fx::host::plugin_check_internal

#endif  // HOST_PLUGIN_CHECK_PASS_CHECKER_H_
