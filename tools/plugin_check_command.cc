#include "tools/plugin_check_command.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <tuple>
#include <vector>

#include "fx_core/support/strings.h"
#include "host/pipeline/pipeline.h"
#include "host/plugin_check/plugin_check.h"
#include "tools/torchvision_graphs.h"

namespace fx::tools {
namespace {

int usage_error(std::ostream& err, const std::string& message) {
  err << "fx plugin-check: " << message << "\n";
  return 2;
}

// A failure that is not a usage error: exit status 1.
int failure(std::ostream& err, const absl::Status& status) {
  err << "fx plugin-check: " << status.message() << "\n";
  return 1;
}

// A number > 0 from `flag`'s value, or nullopt (after saying why).
std::optional<double> positive(const std::string& flag, const std::string& text,
                               std::ostream& err) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value > 0) || value > 1e9) {
    usage_error(err,
                cat("--", flag, " expects a number > 0, got '", text, "'"));
    return std::nullopt;
  }
  return value;
}

// The options from the flags; nullopt on a usage error.
std::optional<host::PluginCheckOptions> read_options(
    const PluginCheckArgs& args, std::ostream& err) {
  host::PluginCheckOptions options;
  for (auto [flag, text, field] :
       {std::tuple{"rtol", &args.rtol, &options.rtol},
        std::tuple{"atol", &args.atol, &options.atol},
        std::tuple{"pass-timeout", &args.pass_timeout,
                   &options.pass_timeout_seconds}}) {
    if (text->empty()) continue;
    std::optional<double> value = positive(flag, *text, err);
    if (!value) return std::nullopt;
    *field = *value;
  }
  if (!args.pass_memory_limit.empty()) {
    std::optional<double> mib =
        positive("pass-memory-limit", args.pass_memory_limit, err);
    if (!mib) return std::nullopt;
    if (*mib != static_cast<double>(static_cast<uint64_t>(*mib)) ||
        *mib > static_cast<double>(host::kMaxMemoryLimitMib)) {
      usage_error(err, cat("--pass-memory-limit expects MiB (an integer from "
                           "1 to ",
                           host::kMaxMemoryLimitMib, "), got '",
                           args.pass_memory_limit, "'"));
      return std::nullopt;
    }
    options.pass_memory_limit_mib = static_cast<uint64_t>(*mib);
  }
  if (!args.before.empty()) {
    absl::StatusOr<host::PipelineSpec> before =
        host::parse_pipeline_text(args.before);
    if (!before.ok()) {
      usage_error(err,
                  cat("--before: ", std::string(before.status().message())));
      return std::nullopt;
    }
  }
  options.passes = args.passes;
  options.before = args.before;
  options.before_sources = args.sources;
  return options;
}

}  // namespace

int run_plugin_check_command(const PluginCheckArgs& args, std::ostream& out,
                             std::ostream& err) {
  std::optional<host::PluginCheckOptions> options = read_options(args, err);
  if (!options) return 2;
  std::optional<std::vector<std::string>> models;
  if (!args.torchvision.empty()) {
    absl::StatusOr<std::vector<std::string>> parsed =
        parse_torchvision_models(args.torchvision);
    if (!parsed.ok()) {
      return usage_error(err, std::string(parsed.status().message()));
    }
    models = *std::move(parsed);
  }
  std::string dir = args.graphs;
  if (dir.empty() && !models) {
    const char* reference = std::getenv("FX_REFERENCE_DIR");
    if (reference == nullptr || *reference == '\0') {
      return usage_error(err,
                         "no graphs: give --graphs DIR (graph bundles), "
                         "--torchvision MODELS or set FX_REFERENCE_DIR");
    }
    dir = reference;
  }
  std::vector<std::string> where;
  if (!dir.empty()) {
    absl::StatusOr<std::vector<std::string>> bundles =
        host::find_graph_bundles(dir);
    if (!bundles.ok()) return failure(err, bundles.status());
    options->graphs = *std::move(bundles);
    where.push_back("under " + dir);
  }
  if (models) {
    absl::StatusOr<std::vector<std::string>> exported =
        torchvision_bundles(*models);
    if (!exported.ok()) return failure(err, exported.status());
    options->graphs.insert(options->graphs.end(), exported->begin(),
                           exported->end());
    where.push_back("torchvision " + join(*models, ","));
  }
  absl::StatusOr<host::PluginCheckReport> report =
      host::check_plugin(args.library, *options);
  if (!report.ok()) return failure(err, report.status());
  out << report->plugin << " on " << options->graphs.size() << " graph"
      << (options->graphs.size() == 1 ? "" : "s") << " " << join(where, " and ")
      << (args.before.empty() ? std::string()
                              : cat(", each first through '", args.before, "'"))
      << "\n"
      << report->table();
  if (report->ok()) return 0;
  err << "fx plugin-check: some checks failed (FAIL above)\n";
  return 1;
}

}  // namespace fx::tools
