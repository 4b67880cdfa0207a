#include "tools/minimize_command.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/io/output_rule.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/support/strings.h"
#include "host/minimizer/minimizer.h"
#include "host/minimizer/pipeline_backend.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pipeline.h"
#include "tools/pipeline_commands.h"

namespace fx::tools {
namespace {

using Stop = std::optional<int>;

template <typename Message>
int fail(std::ostream& err, int status, const Message& message) {
  err << "fx minimize: " << message << "\n";
  return status;
}

// A tolerance flag: a finite number >= 0.
Stop parse_tolerance(const std::string& flag, const std::string& text,
                     double* value, std::ostream& err) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double x = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(x) ||
      x < 0) {
    return fail(err, 2,
                cat("--", flag, ": expected a number >= 0, got '", text, "'"));
  }
  *value = x;
  return std::nullopt;
}

Stop parse_options(const MinimizeArgs& args, host::MinimizerOptions& options,
                   std::ostream& err) {
  if (args.inputs.empty()) return fail(err, 2, "--inputs IN.pt is required");
  if (args.pipeline.empty() == args.config.empty()) {
    return fail(err, 2,
                "give exactly one of --pipeline TEXT and --config CONF.json");
  }
  if (!args.mode.empty()) {
    auto mode = host::parse_minimize_mode(args.mode);
    if (!mode.ok()) {
      return fail(err, 2,
                  cat("--mode: ", std::string(mode.status().message())));
    }
    options.mode = *mode;
  }
  options.find_all = args.find_all;
  if (Stop s = parse_tolerance("atol", args.atol, &options.atol, err)) return s;
  return parse_tolerance("rtol", args.rtol, &options.rtol, err);
}

// --inputs: a torch.save file of one value or a list or tuple of values.
Stop read_inputs(const std::string& path, std::vector<c10::IValue>& inputs,
                 std::ostream& err) {
  auto value = read_value_file(path);
  if (!value.ok()) return fail(err, 1, value.status().message());
  if (value->isList()) {
    inputs = value->toListRef().vec();
  } else if (value->isTuple()) {
    const auto& items = value->toTupleRef().elements();
    inputs.assign(items.begin(), items.end());
  } else {
    inputs = {*value};
  }
  return std::nullopt;
}

void print_result(const host::MinimizerResult& result, std::ostream& out) {
  for (size_t i = 0; i < result.steps.size(); ++i) {
    out << "check " << i + 1 << ": " << host::describe(result.steps[i]) << "\n";
  }
  if (result.culprits.empty()) {
    out << "no culprit: the backend's outputs are within tolerance, or no "
           "smaller subgraph reproduces the difference (see the checks)\n";
  } else {
    out << "culprits: " << join(result.culprits, ", ") << "\n";
  }
}

}  // namespace

int run_minimize_command(const MinimizeArgs& args, std::ostream& out,
                         std::ostream& err) {
  host::MinimizerOptions options;
  if (Stop s = parse_options(args, options, err)) return *s;
  absl::StatusOr<host::PipelineSpec> spec =
      args.config.empty() ? host::parse_pipeline_text(args.pipeline)
                          : host::read_pipeline_config(args.config);
  if (!spec.ok()) return fail(err, 2, spec.status().message());
  std::string wrong = apply_isolation_flags(args.isolation, *spec);
  if (!wrong.empty()) return fail(err, 2, wrong);
  host::PassRegistry registry;
  absl::Status loaded = host::load_plugins(*spec, args.sources, registry);
  if (!loaded.ok()) return fail(err, 1, loaded.message());
  for (const host::SkippedPlugin& s : registry.skipped()) {
    err << "fx minimize: warning: skipped plugin " << s.path << ": "
        << s.reason.message() << "\n";
  }
  auto pm = host::PassManager::create(registry, *std::move(spec));
  if (!pm.ok()) return fail(err, 2, pm.status().message());
  if (std::string note = auto_isolation_note(*pm); !note.empty()) {
    err << "fx minimize: " << note << "\n";
  }
  absl::StatusOr<GraphFile> file = read_graph_file(args.input);
  if (!file.ok()) return fail(err, 1, file.status().message());
  // fx minimize writes no file; one a pass writes (WriteOutputFile) obeys
  // the one output rule (fx_core/io/output_rule.h).
  FilesRead reads;
  reads.add(args.input, "the graph");
  reads.add(weights_path(*file), cat("the weights of ", args.input));
  reads.add(args.inputs, "--inputs");
  reads.add(args.config, "--config");
  const FilesRead::Published published = reads.publish();
  auto gm = load_graph_module(*std::move(file));
  if (!gm.ok()) return fail(err, 1, gm.status().message());
  std::vector<c10::IValue> inputs;
  if (Stop s = read_inputs(args.inputs, inputs, err)) return *s;
  auto result =
      host::minimize(**gm, inputs, host::pipeline_backend(*pm), options);
  if (!result.ok()) return fail(err, 1, result.status().message());
  print_result(*result, out);
  out.flush();
  return out ? 0 : 1;
}

}  // namespace fx::tools
