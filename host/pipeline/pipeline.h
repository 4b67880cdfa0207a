// Pipelines as users write them: a one-line text form or a JSON config.
//
// Text form (LLVM's -passes= and MLIR's pass options, in one line):
//   shape_prop,decompose{rules=relu,gelu},quantize{dtype=int8}
// Passes are separated by commas; options go in braces as key=value pairs,
// also separated by commas. Inside braces an item without '=' continues the
// previous option's value, so `rules=relu,gelu` gives rules the list
// "relu,gelu". Spaces around names and values are ignored. A named
// pipeline (named_pipelines.h: O1, O2, inference) stands for its passes
// wherever a pass may stand: "O2" and "O1,dot" parse to their passes.
//
// JSON config (every key but "pipeline" optional):
//   {
//     "plugins": ["libfx_passes.so", {"path": "vendor.so", "sha256": "ab.."}],
//     "plugin_dirs": ["plugins/"],
//     "pipeline": "shape_prop,decompose{rules=relu}"      (the text form)
//              or [{"pass": "decompose", "options": {"rules": ["relu"]},
//                   "on_failure": "skip"}, "dce"],
//     "ordering": "explicit" | "auto",
//     "on_failure": "stop" | "skip",
//     "verify_each": true,
//     "print_after": ["decompose"] | "all",
//     "assume": ["tensor_meta"],          (properties the input already has)
//     "reproducer_dir": "repro/",
//     "isolate": true | false | "auto",  (true: each pass in a worker
//                process; false: each in this process; "auto": a pass runs
//                in a worker unless its plugin is trusted, i.e. first-party
//                (shipped beside the program) or pinned by "sha256" here.
//                Unset: the host's default, false for the library
//                (PassManager, fx_sdk.run_pipeline), "auto" for fx run,
//                fx reduce and fx minimize, whose --isolate / --no-isolate
//                win over this key)
//     "pass_timeout": 30,        (seconds; implies isolate)
//     "pass_memory_limit": 2048  (MiB a worker may grow by; implies isolate)
//   }
// Relative plugin paths and directories are resolved against the config
// file's directory. Errors name the key (`pipeline[2].options`) and problem.
#ifndef HOST_PIPELINE_PIPELINE_H_
#define HOST_PIPELINE_PIPELINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "host/options/pass_options.h"

namespace fx::host {

// What happens after a pass fails (and has been rolled back).
enum class FailurePolicy { kStop, kSkip };
// Explicit: run in the order written, checked against the constraints.
// Auto: reorder to satisfy them, keeping the written order where free.
enum class Ordering { kExplicit, kAuto };

// The one reading of "stop" / "skip" and of "explicit" / "auto", shared by
// the JSON config ("on_failure", "ordering", a pass's "on_failure") and the
// command line (--on-failure, --ordering). Anything else is InvalidArgument
// with one message, which callers prefix with where the word came from:
//   expected "stop" or "skip", got "retry"
//   expected "explicit" or "auto", got "random"
// (the word is quoted as a JSON string).
absl::StatusOr<FailurePolicy> parse_failure_policy(std::string_view word);
absl::StatusOr<Ordering> parse_ordering(std::string_view word);
// The words the parsers read: "stop", "skip", "explicit", "auto".
std::string_view failure_policy_name(FailurePolicy policy);
std::string_view ordering_name(Ordering ordering);

// Which passes run in a worker process (pass_call.h): none, all, or those
// of plugins that are not trusted (pass_registry.h trusted_plugin).
enum class Isolation { kNone, kAll, kAuto };
// The config's words: false, true, "auto".
std::string_view isolation_name(Isolation isolation);

struct PassInvocation {
  std::string pass;
  std::vector<std::pair<std::string, OptionInput>> options;
  std::optional<FailurePolicy> on_failure;  // overrides the pipeline's
};

struct PluginReference {
  std::string path;
  std::string sha256;  // empty: not pinned
};

struct PipelineSpec {
  std::vector<PassInvocation> passes;
  Ordering ordering = Ordering::kExplicit;
  FailurePolicy on_failure = FailurePolicy::kStop;
  bool verify_each = true;
  bool print_after_all = false;
  std::vector<std::string> print_after;
  std::vector<std::string> assume;
  std::string reproducer_dir;
  std::vector<PluginReference> plugins;
  std::vector<std::string> plugin_dirs;
  // The named pipelines the text used, in order (each once): a pass of one
  // that no plugin provides is named with its first-party plugin.
  std::vector<std::string> named_pipelines;
  // Isolation (pass_call.h): a pass run in a worker process is ended by
  // a crash, an abort, a timeout or the memory limit instead of the host.
  // Unset ("isolate" not given): the host's default, kNone here. A timeout
  // or a memory limit isolates every pass (see isolation()).
  std::optional<Isolation> isolate;
  double pass_timeout_seconds = 0;     // 0: none
  uint64_t pass_memory_limit_mib = 0;  // 0: none

  // The policy in force.
  Isolation isolation() const {
    if (pass_timeout_seconds > 0 || pass_memory_limit_mib > 0) {
      return Isolation::kAll;
    }
    return isolate.value_or(Isolation::kNone);
  }
  // Whether every pass runs isolated.
  bool isolated() const { return isolation() == Isolation::kAll; }
};

// The largest pass_memory_limit accepted (1 TiB).
inline constexpr uint64_t kMaxMemoryLimitMib = uint64_t{1} << 20;

absl::StatusOr<PipelineSpec> parse_pipeline_text(std::string_view text);
// `source` names the config in messages; `base_dir` resolves relative paths.
absl::StatusOr<PipelineSpec> parse_pipeline_config(std::string_view json,
                                                   std::string_view source,
                                                   std::string_view base_dir);
absl::StatusOr<PipelineSpec> read_pipeline_config(const std::string& path);

// The passes in text form (parse_pipeline_text reads it back).
std::string pipeline_text(const std::vector<PassInvocation>& passes);
// The whole spec as a JSON config (parse_pipeline_config reads it back).
std::string pipeline_config_json(const PipelineSpec& spec);

}  // namespace fx::host

#endif  // HOST_PIPELINE_PIPELINE_H_
