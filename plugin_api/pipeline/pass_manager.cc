#include "plugin_api/pipeline/pass_manager.h"

#include <unistd.h>

#include <algorithm>
#include <boost/filesystem.hpp>
#include <chrono>
#include <cmath>
#include <ctime>
#include <exception>
#include <iostream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/io/atomic_file.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "plugin_api/pipeline/pass_ordering.h"
#include "plugin_api/pipeline/property_checks.h"

namespace fx::host {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string_view status_code_name(FxStatusCode code) {
  switch (code) {
    case FX_OK:
      return "OK";
    case FX_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case FX_NOT_FOUND:
      return "NOT_FOUND";
    case FX_FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case FX_UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case FX_INTERNAL:
      return "INTERNAL";
  }
  return "UNKNOWN";
}

bool contains(const FxNameList& list, std::string_view name) {
  for (size_t i = 0; i < list.count; ++i) {
    if (name == list.names[i]) return true;
  }
  return false;
}

// A bound option as a typed pipeline input (for reproducer configs).
OptionInput to_input(const OptionValue& value) {
  OptionInput in;
  in.text = option_value_text(value);
  switch (value.type) {
    case FX_OPTION_BOOL:
      in.kind = OptionInput::Kind::kBool;
      break;
    case FX_OPTION_INT:
      in.kind = OptionInput::Kind::kInt;
      break;
    case FX_OPTION_FLOAT:
      // inf and nan are not JSON numbers; the text form reads them.
      in.kind = std::isfinite(value.f) ? OptionInput::Kind::kFloat
                                       : OptionInput::Kind::kString;
      break;
    case FX_OPTION_STRING:
      in.kind = OptionInput::Kind::kString;
      break;
    case FX_OPTION_STRING_LIST:
      in.kind = OptionInput::Kind::kList;
      in.list = value.list;
      break;
  }
  return in;
}

std::string timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y%m%d-%H%M%S", &tm);
  return buffer;
}

}  // namespace

bool PipelineReport::changed() const {
  for (const PassRecord& r : passes) {
    if (r.changed) return true;
  }
  return false;
}

std::string PipelineReport::summary() const {
  std::string out;
  size_t width = 4;
  for (const PassRecord& r : passes) width = std::max(width, r.pass.size());
  append(&out,
         absl::StrFormat("%-*s  %-11s %10s %10s  %s\n", static_cast<int>(width),
                         "pass", "outcome", "run ms", "verify ms", "changed"));
  for (const PassRecord& r : passes) {
    const char* outcome = r.outcome == PassRecord::Outcome::kRan ? "ran"
                          : r.outcome == PassRecord::Outcome::kRolledBack
                              ? "rolled back"
                              : "not run";
    append(&out, absl::StrFormat("%-*s  %-11s %10.3f %10.3f  %s\n",
                                 static_cast<int>(width), r.pass, outcome,
                                 r.run_seconds * 1e3, r.verify_seconds * 1e3,
                                 r.outcome == PassRecord::Outcome::kRan
                                     ? (r.changed ? "yes" : "no")
                                     : "-"));
    if (!r.error.empty()) append(&out, "    ", r.error, "\n");
  }
  return out;
}

absl::StatusOr<PassManager> PassManager::create(const PassRegistry& registry,
                                                PipelineSpec spec) {
  PassManager pm;
  pm.registry_ = &registry;
  std::vector<Scheduled> written;
  for (const PassInvocation& invocation : spec.passes) {
    const RegisteredPass* pass = registry.find(invocation.pass);
    if (pass == nullptr) return registry.unknown_pass_error(invocation.pass);
    absl::StatusOr<FxOptions> options =
        bind_pass_options(*pass->info, invocation.options);
    if (!options.ok()) return options.status();
    written.push_back(
        Scheduled{pass, invocation, *std::move(options),
                  invocation.on_failure.value_or(spec.on_failure)});
  }
  std::vector<const FxPassInfo*> infos, known;
  for (const Scheduled& s : written) infos.push_back(s.pass->info);
  for (const RegisteredPass& p : registry.passes()) known.push_back(p.info);
  if (spec.ordering == Ordering::kExplicit) {
    absl::Status ok = check_pass_order(infos, spec.assume, known);
    if (!ok.ok()) return ok;
    pm.schedule_ = std::move(written);
  } else {
    absl::StatusOr<std::vector<size_t>> order =
        auto_pass_order(infos, spec.assume, known);
    if (!order.ok()) return order.status();
    for (size_t i : *order) pm.schedule_.push_back(std::move(written[i]));
  }
  for (const std::string& name : spec.print_after) {
    bool found = false;
    for (const Scheduled& s : pm.schedule_)
      found = found || s.invocation.pass == name;
    if (!found) {
      return absl::InvalidArgumentError(cat("print_after names pass '", name,
                                            "', which is not in the pipeline"));
    }
  }
  pm.spec_ = std::move(spec);
  return pm;
}

std::string PassManager::text() const {
  std::vector<PassInvocation> passes;
  for (const Scheduled& s : schedule_) passes.push_back(s.invocation);
  return pipeline_text(passes);
}

PipelineReport PassManager::run(PassTarget& target,
                                const RunHooks& hooks) const {
  PipelineReport report;
  absl::flat_hash_set<std::string> holds(spec_.assume.begin(),
                                         spec_.assume.end());
  const size_t total = schedule_.size();
  report.passes.resize(total);
  for (size_t i = 0; i < total; ++i) {
    const Scheduled& s = schedule_[i];
    const FxPassInfo& info = *s.pass->info;
    PassRecord& record = report.passes[i];
    record.pass = info.name;
    record.plugin = std::string(s.pass->plugin->name());
    if (report.stopped) {
      record.error = "not run: the pipeline stopped after the failure above";
      continue;
    }
    // An earlier producer that failed leaves a requirement unmet.
    std::string missing;
    for (size_t r = 0; r < info.required.count && missing.empty(); ++r) {
      if (!holds.contains(info.required.names[r])) {
        missing = info.required.names[r];
      }
    }
    if (!missing.empty()) {
      record.error = cat("not run: it requires '", missing,
                         "', which does not hold because the pass "
                         "that produces it failed");
      if (report.failure.empty()) {
        report.failure = cat("pass '", info.name, "' ", record.error);
      }
      if (s.on_failure == FailurePolicy::kStop) report.stopped = true;
      continue;
    }
    if (hooks.progress) hooks.progress(i + 1, total, info.name);

    target.begin();
    Graph& graph = target.graph();
    std::string error;
    Clock::time_point start = Clock::now();
    {
      std::unique_ptr<ScopedAttributeStore> scope;
      if (target.attributes() != nullptr) {
        scope =
            std::make_unique<ScopedAttributeStore>(&graph, target.attributes());
      }
      int changed = 0;
      FxStatus* status = nullptr;
      try {
        status = info.run(api(), to_handle(&graph), &s.options, info.user_data,
                          &changed);
      } catch (const std::exception& e) {
        error = cat("an exception escaped the plugin: ", e.what());
      } catch (...) {
        error = "an exception escaped the plugin";
      }
      if (status != nullptr) {
        error = cat(status_code_name(status->code), ": ", status->message);
        api()->ReleaseStatus(status);
      }
      record.claimed_changed = changed != 0;
    }
    record.run_seconds = seconds_since(start);
    if (error.empty() && spec_.verify_each) {
      start = Clock::now();
      try {
        target.graph().lint();
      } catch (const FxError& e) {
        error = cat("it left an invalid graph: ", e.what());
      }
      for (size_t p = 0; p < info.produces.count && error.empty(); ++p) {
        absl::Status ok =
            check_property(info.produces.names[p], target.graph());
        if (!ok.ok()) {
          error = cat("it declares it produces '", info.produces.names[p],
                      "', but ", std::string(ok.message()));
        }
      }
      record.verify_seconds = seconds_since(start);
    }
    if (!error.empty()) {
      target.rollback();
      record.outcome = PassRecord::Outcome::kRolledBack;
      record.error = error;
      if (report.failure.empty()) {
        report.failure =
            cat("pass '", info.name, "' of ", s.pass->plugin->describe(),
                " failed and was rolled back: ", error);
        if (!spec_.reproducer_dir.empty()) {
          report.reproducer = write_reproducer(
              target, i, std::vector<std::string>(holds.begin(), holds.end()),
              report.failure);
        }
      }
      if (s.on_failure == FailurePolicy::kStop) report.stopped = true;
      continue;
    }
    record.outcome = PassRecord::Outcome::kRan;
    record.changed = target.changed();
    target.commit();
    for (size_t p = 0; p < info.invalidates.count; ++p) {
      if (!contains(info.produces, info.invalidates.names[p])) {
        holds.erase(info.invalidates.names[p]);
      }
    }
    for (size_t p = 0; p < info.produces.count; ++p) {
      holds.insert(info.produces.names[p]);
    }
    bool print = spec_.print_after_all ||
                 std::find(spec_.print_after.begin(), spec_.print_after.end(),
                           info.name) != spec_.print_after.end();
    if (print) {
      std::ostream& out = hooks.print_after ? *hooks.print_after : std::cout;
      out << "// -----// graph after " << info.name << " //----- //\n"
          << target.graph().str();
    }
  }
  target.finish();
  return report;
}

std::string PassManager::write_reproducer(const PassTarget& target,
                                          size_t failed,
                                          std::vector<std::string> holding,
                                          const std::string& error) const {
  namespace fs = boost::filesystem;
  std::string dir =
      cat(spec_.reproducer_dir, "/", schedule_[failed].invocation.pass, "-",
          timestamp(), "-", getpid());
  boost::system::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "";
  // The config: the rest of the pipeline, with each plugin pinned.
  PipelineSpec repro;
  for (const auto& plugin : registry_->plugins()) {
    if (!plugin->path().empty()) {
      repro.plugins.push_back(
          {fs::absolute(plugin->path()).string(), plugin->sha256()});
    }
  }
  for (size_t i = failed; i < schedule_.size(); ++i) {
    PassInvocation p;
    p.pass = schedule_[i].invocation.pass;
    for (const auto& [name, value] : schedule_[i].options.values) {
      p.options.emplace_back(name, to_input(value));
    }
    repro.passes.push_back(std::move(p));
  }
  repro.verify_each = spec_.verify_each;
  std::sort(holding.begin(), holding.end());
  repro.assume = std::move(holding);
  absl::Status written = target.write(dir + "/graph.fx.json");
  if (written.ok()) {
    written = write_file_atomically(dir + "/pipeline.json",
                                    pipeline_config_json(repro));
  }
  if (written.ok()) {
    written = write_file_atomically(
        dir + "/README.txt",
        cat(error,
            "\n\ngraph.fx.json is the graph the pass received; "
            "pipeline.json runs the rest of the pipeline from that "
            "pass, with every plugin pinned by sha256. Reproduce "
            "with:\n\n  fx run graph.fx.json --config pipeline.json "
            "-o out.fx.json\n"));
  }
  return written.ok() ? dir : "";
}

}  // namespace fx::host
