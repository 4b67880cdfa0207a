#include "host/plugin_check/plugin_check.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/io/output_rule.h"
#include "fx_core/support/strings.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pipeline.h"
#include "host/pipeline/plugin_load_worker.h"
#include "host/plugin_check/graph_bundle.h"
#include "host/plugin_check/pass_checker.h"

namespace fx::host {
namespace {

using plugin_check_internal::Bundle;
using plugin_check_internal::bundle_files;
using plugin_check_internal::contains;
using plugin_check_internal::failed;
using plugin_check_internal::kShapeProp;
using plugin_check_internal::kTensorMeta;
using plugin_check_internal::limits_of;
using plugin_check_internal::ok;
using plugin_check_internal::PassChecker;
using plugin_check_internal::Prefix;
using plugin_check_internal::Prefixes;
using plugin_check_internal::read_bundles;
using plugin_check_internal::Results;
using plugin_check_internal::skipped;

absl::StatusOr<PassManager> prefix_manager(const PassRegistry& registry,
                                           std::string_view text,
                                           const PluginCheckOptions& options) {
  absl::StatusOr<PipelineSpec> spec = parse_pipeline_text(text);
  if (!spec.ok()) return spec.status();
  spec->isolate = Isolation::kAll;
  spec->pass_timeout_seconds = options.pass_timeout_seconds;
  spec->pass_memory_limit_mib = options.pass_memory_limit_mib;
  return PassManager::create(registry, *std::move(spec));
}

bool is_called(const RegisteredPass& pass, const std::string& name) {
  return name == pass.info->name || name == pass.qualified_name();
}

// The plugin's passes `names` selects (own or qualified names), in the
// plugin's order; all of them when `names` is empty.
absl::StatusOr<std::vector<RegisteredPass>> selected_passes(
    const Plugin& plugin, const std::vector<std::string>& names) {
  std::vector<RegisteredPass> all;
  std::vector<std::string> have;
  for (size_t p = 0; p < plugin.num_passes(); ++p) {
    all.push_back(RegisteredPass{&plugin.pass(p), &plugin});
    have.emplace_back(plugin.pass(p).name);
  }
  if (names.empty()) return all;
  std::vector<RegisteredPass> chosen;
  for (const RegisteredPass& pass : all) {
    for (const std::string& name : names) {
      if (is_called(pass, name)) {
        chosen.push_back(pass);
        break;
      }
    }
  }
  for (const std::string& name : names) {
    auto named = [&](const RegisteredPass& pass) {
      return is_called(pass, name);
    };
    if (std::none_of(all.begin(), all.end(), named)) {
      return absl::InvalidArgumentError(
          cat(plugin.describe(), " has no pass '", name,
              "' (its passes: ", join(have, ", "), ")"));
    }
  }
  return chosen;
}

// Loads the plugins the prefixes may need into `registry` (after the
// checked one, whose own copy in a plugin directory is then skipped) and
// builds the prefixes. Nothing is loaded when no prefix can run.
absl::StatusOr<Prefixes> prepare_prefixes(
    PassRegistry& registry, const std::vector<RegisteredPass>& passes,
    const PluginCheckOptions& options) {
  bool meta = std::any_of(passes.begin(), passes.end(), [](const auto& pass) {
    return contains(pass.info->required, kTensorMeta);
  });
  Prefixes prefixes;
  if (options.before.empty() && !meta) return prefixes;
  absl::Status loaded = load_plugins(options.before_sources, registry,
                                     LoadIsolation{true, limits_of(options)});
  if (!loaded.ok()) {
    return absl::Status(loaded.code(),
                        cat("loading plugins for the passes run before the "
                            "checked ones: ",
                            std::string(loaded.message())));
  }
  if (options.before.empty()) {
    prefixes.shape_prop = Prefix{std::string(kShapeProp),
                                 prefix_manager(registry, kShapeProp, options)};
    return prefixes;
  }
  absl::StatusOr<PassManager> pm =
      prefix_manager(registry, options.before, options);
  if (!pm.ok()) {
    return absl::InvalidArgumentError(
        cat("the pipeline to run before each pass ('", options.before,
            "'): ", std::string(pm.status().message())));
  }
  prefixes.before = Prefix{options.before, *std::move(pm)};
  return prefixes;
}

// Folds one graph's result into the pass's: a failure wins, then ok.
void merge(CheckResult& total, const CheckResult& one,
           const std::string& graph) {
  if (total.outcome == CheckOutcome::kFail) return;
  if (one.outcome == CheckOutcome::kFail) {
    total = failed(cat(graph, ": ", one.reason));
  } else if (one.outcome == CheckOutcome::kOk) {
    total = ok();
  } else if (total.outcome == CheckOutcome::kSkip && total.reason.empty()) {
    total = skipped(cat(graph, ": ", one.reason));
  }
}

}  // namespace

absl::StatusOr<PluginCheckReport> check_plugin(
    const std::string& library, const PluginCheckOptions& options) {
  WorkerLoad trial = load_plugin_in_worker(library, {}, limits_of(options));
  if (trial.worker_failed) {
    PluginCheckReport report;
    report.plugin = cat("plugin file '", library, "'");
    report.load_failure = std::string(trial.status.message());
    return report;
  }
  if (!trial.status.ok()) return trial.status;
  absl::StatusOr<std::shared_ptr<const Plugin>> plugin = load_plugin(library);
  if (!plugin.ok()) return plugin.status();
  PassRegistry registry;
  absl::Status added = registry.add(*plugin);
  if (!added.ok()) return added;
  auto passes = selected_passes(**plugin, options.passes);
  if (!passes.ok()) return passes.status();
  absl::StatusOr<Prefixes> prefixes =
      prepare_prefixes(registry, *passes, options);
  if (!prefixes.ok()) return prefixes.status();
  absl::StatusOr<std::vector<Bundle>> bundles = read_bundles(options.graphs);
  if (!bundles.ok()) return bundles.status();
  // The files of the bundles are what this command reads: a file a pass
  // writes (WriteOutputFile) must not be one of them.
  const FilesRead::Published inputs = bundle_files(options.graphs).publish();
  PluginCheckReport report;
  report.plugin = (*plugin)->describe();
  for (const RegisteredPass& pass : *passes) {
    PassCheckRow row{pass.info->name, {}};
    PassChecker checker(registry, pass, options, *prefixes);
    for (const Bundle& bundle : *bundles) {
      Results results = checker.check(bundle);
      for (size_t c = 0; c < results.size(); ++c) {
        merge(row.results[c], results[c], bundle.name);
      }
    }
    report.rows.push_back(std::move(row));
  }
  return report;
}

}  // namespace fx::host
