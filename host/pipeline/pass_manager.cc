#include "host/pipeline/pass_manager.h"

#include <fcntl.h>
#include <unistd.h>

#include <exception>
#include <iostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/options/pass_options.h"
#include "host/pipeline/named_pipelines.h"
#include "host/pipeline/pass_call.h"
#include "host/pipeline/pass_ordering.h"
#include "host/pipeline/property_checks.h"
#include "host/pipeline/standard_instrumentations.h"
#include "host/pipeline/tensor_meta_check.h"

namespace fx::host {
namespace {

// The process's working directory, put back when this goes: a plugin that
// calls chdir() must not move where the host's relative paths (its output)
// point (issue 39).
class WorkingDirectoryGuard {
 public:
  WorkingDirectoryGuard()
      : fd_(::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {}
  ~WorkingDirectoryGuard() {
    if (fd_ < 0) return;
    if (::fchdir(fd_) != 0) {
      std::cerr << "fx: cannot return to the working directory a pass "
                   "left\n";
    }
    ::close(fd_);
  }
  WorkingDirectoryGuard(const WorkingDirectoryGuard&) = delete;
  WorkingDirectoryGuard& operator=(const WorkingDirectoryGuard&) = delete;

 private:
  int fd_;
};

bool contains(const FxNameList& list, std::string_view name) {
  for (size_t i = 0; i < list.count; ++i) {
    if (name == list.names[i]) return true;
  }
  return false;
}

// The property a pass that changes the placeholders declares it invalidates.
constexpr std::string_view kSignature = "signature";

// The graph's placeholder targets, in order: its signature.
std::vector<std::string> placeholder_targets(const Graph& graph) {
  std::vector<std::string> out;
  for (const Node* n : graph.nodes()) {
    if (n->op() == Opcode::kPlaceholder) out.push_back(n->target());
  }
  return out;
}

// What every pass keeps, checked after each one, in process as in a worker
// (where reading the worker's file back checks the first part too): exactly
// one output node, the last; and the placeholders it found (their targets,
// in order: the signature callers use) unless it declares it invalidates
// "signature". The error, or empty.
std::string check_outline(const Graph& graph,
                          const std::vector<std::string>& signature,
                          const FxPassInfo& pass) {
  size_t outputs = 0;
  const Node* last = nullptr;
  for (const Node* n : graph.nodes()) {
    if (n->op() == Opcode::kOutput) ++outputs;
    last = n;
  }
  if (outputs != 1) {
    return cat("it left an invalid graph: ", outputs,
               " output nodes (exactly one, the last node, is required)");
  }
  if (last->op() != Opcode::kOutput) {
    return cat("it left an invalid graph: node '", last->name(),
               "' follows the output node (the output must be last)");
  }
  std::vector<std::string> now = placeholder_targets(graph);
  if (now != signature && !contains(pass.invalidates, kSignature)) {
    return cat("it changed the graph's placeholders (its signature) from (",
               join(signature, ", "), ") to (", join(now, ", "), ")");
  }
  return {};
}

// ---------------------------------------------------------------- building

// `status`, the registry's error for a pass it lacks, saying which plugin a
// named pipeline of `spec` needs for it, or, for a one-word pipeline, that
// the word is no named pipeline either.
absl::Status unknown_pass(const absl::Status& status, const PipelineSpec& spec,
                          std::string_view pass) {
  if (!absl::IsNotFound(status)) return status;
  const std::string why(status.message());
  for (const std::string& name : spec.named_pipelines) {
    const NamedPipeline* named = find_named_pipeline(name);
    if (named == nullptr || !uses_pass(*named, pass)) continue;
    return absl::NotFoundError(cat(
        "the named pipeline '", name, "' needs pass '", pass, "' of plugin ",
        first_party_plugin_of(pass), ", which is not loaded: ", why));
  }
  if (spec.passes.size() != 1 || !spec.named_pipelines.empty()) return status;
  return absl::NotFoundError(cat(why, "; '", pass,
                                 "' is no named pipeline either (named "
                                 "pipelines: ",
                                 named_pipeline_names(), ")"));
}

// Each pass of `spec` resolved in `registry`, its options bound.
absl::StatusOr<std::vector<ScheduledPass>> bind_passes(
    const PassRegistry& registry, const PipelineSpec& spec) {
  std::vector<ScheduledPass> bound;
  for (const PassInvocation& invocation : spec.passes) {
    absl::StatusOr<const RegisteredPass*> found =
        registry.lookup(invocation.pass);
    if (!found.ok()) {
      return unknown_pass(found.status(), spec, invocation.pass);
    }
    const RegisteredPass* pass = *found;
    absl::StatusOr<FxOptions> options =
        bind_pass_options(*pass->info, invocation.options);
    if (!options.ok()) return options.status();
    bound.push_back(
        ScheduledPass{pass, invocation, *std::move(options),
                      invocation.on_failure.value_or(spec.on_failure)});
  }
  return bound;
}

// Ordering: the passes as written, checked against their constraints, or
// reordered to satisfy them (Ordering::kAuto).
absl::StatusOr<std::vector<ScheduledPass>> order_passes(
    std::vector<ScheduledPass> written, const PassRegistry& registry,
    const PipelineSpec& spec) {
  std::vector<const FxPassInfo*> infos, known;
  for (const ScheduledPass& s : written) infos.push_back(s.pass->info);
  for (const RegisteredPass& p : registry.passes()) known.push_back(p.info);
  if (spec.ordering == Ordering::kExplicit) {
    absl::Status ok = check_pass_order(infos, spec.assume, known);
    if (!ok.ok()) return ok;
    return written;
  }
  absl::StatusOr<std::vector<size_t>> order =
      auto_pass_order(infos, spec.assume, known);
  if (!order.ok()) return order.status();
  std::vector<ScheduledPass> ordered;
  for (size_t i : *order) ordered.push_back(std::move(written[i]));
  return ordered;
}

absl::Status check_print_after(const PipelineSpec& spec,
                               const std::vector<ScheduledPass>& schedule) {
  for (const std::string& name : spec.print_after) {
    bool found = false;
    for (const ScheduledPass& s : schedule) {
      found = found || s.invocation.pass == name;
    }
    if (!found) {
      return absl::InvalidArgumentError(cat("print_after names pass '", name,
                                            "', which is not in the pipeline"));
    }
  }
  return absl::OkStatus();
}

// ----------------------------------------------------------------- running

// The instrumentations of one run, outermost first: "before" hooks are
// called in that order, "after" hooks in the reverse order.
class Instrumentor {
 public:
  explicit Instrumentor(std::vector<PassInstrumentation*> all)
      : all_(std::move(all)) {}

  template <typename Event>
  void before(void (PassInstrumentation::*hook)(const Event&),
              const Event& event) const {
    for (PassInstrumentation* i : all_) (i->*hook)(event);
  }
  template <typename Event>
  void after(void (PassInstrumentation::*hook)(const Event&),
             const Event& event) const {
    for (auto i = all_.rbegin(); i != all_.rend(); ++i) ((*i)->*hook)(event);
  }

 private:
  std::vector<PassInstrumentation*> all_;
};

// The standard instrumentations a run's settings ask for, outermost first
// (timing, always innermost, is not among them).
std::vector<std::unique_ptr<PassInstrumentation>> standard_instrumentations(
    const PipelineSpec& spec, const RunHooks& hooks) {
  std::vector<std::unique_ptr<PassInstrumentation>> out;
  if (hooks.progress) {
    out.push_back(std::make_unique<ProgressInstrumentation>(hooks.progress));
  }
  if (spec.print_after_all || !spec.print_after.empty()) {
    out.push_back(std::make_unique<IrPrintingInstrumentation>(
        hooks.print_after ? *hooks.print_after : std::cout,
        spec.print_after_all, spec.print_after));
  }
  if (!spec.reproducer_dir.empty()) {
    out.push_back(
        std::make_unique<ReproducerInstrumentation>(spec.reproducer_dir));
  }
  return out;
}

// One run of a pipeline: the loop's state and its phases.
class PipelineRun {
 public:
  PipelineRun(const PassManager& pm, PassTarget& target,
              std::vector<PassInstrumentation*> instrumentations)
      : pm_(pm),
        target_(target),
        hooks_(std::move(instrumentations)),
        holds_(pm.spec().assume.begin(), pm.spec().assume.end()) {
    for (const ScheduledPass& s : pm.schedule()) {
      PassRecord& record = report_.passes.emplace_back();
      record.pass = s.pass->info->name;
      record.plugin = std::string(s.pass->plugin->name());
      record.isolated = s.isolated;
    }
  }

  PipelineReport run() {
    hooks_.before(&PassInstrumentation::run_before_pipeline, event());
    for (size_t i = 0; i < pm_.schedule().size(); ++i) {
      if (admit(i)) run_pass(i);
    }
    target_.finish();
    hooks_.after(&PassInstrumentation::run_after_pipeline, event());
    return std::move(report_);
  }

 private:
  PipelineEvent event() {
    return PipelineEvent{pm_.spec(), pm_.schedule(), pm_.registry(), target_,
                         report_};
  }

  // One pass as a transaction, with its hooks.
  void run_pass(size_t i) {
    const PassEvent event{this->event(), i, holds_};
    target_.begin();
    const std::vector<std::string> signature =
        placeholder_targets(target_.graph());
    hooks_.before(&PassInstrumentation::run_before_pass, event);
    std::string error;
    {
      WorkingDirectoryGuard cwd;
      error = call(event);
    }
    hooks_.after(&PassInstrumentation::run_after_pass_call, event);
    if (error.empty() && pm_.spec().verify_each) {
      hooks_.before(&PassInstrumentation::run_before_verification, event);
      error = verify(event, signature);
      hooks_.after(&PassInstrumentation::run_after_verification, event);
    } else if (error.empty()) {  // even unverified, never an unwritable graph
      error = check_outline(target_.graph(), signature, event.info());
      if (error.empty()) error = check_lent_graphs();
    }
    if (error.empty()) {
      // The example inputs were the old placeholders'.
      if (placeholder_targets(target_.graph()) != signature) {
        target_.forget_example_inputs();
      }
      commit(event);
      hooks_.after(&PassInstrumentation::run_after_pass, event);
    } else {
      roll_back(event, std::move(error));
      hooks_.after(&PassInstrumentation::run_after_pass_failed, event);
    }
  }

  // Admission: whether pass `i` runs. One that does not is recorded as not
  // run; an unmet requirement is also a failure.
  bool admit(size_t i) {
    PassRecord& record = report_.passes[i];
    if (report_.stopped) {
      record.error = "not run: the pipeline stopped after the failure above";
      return false;
    }
    const FxPassInfo& info = *pm_.schedule()[i].pass->info;
    for (size_t r = 0; r < info.required.count; ++r) {
      if (holds_.count(info.required.names[r]) > 0) continue;
      // An earlier producer that failed leaves a requirement unmet.
      record.error = cat("not run: it requires '", info.required.names[r],
                         "', which does not hold because the pass "
                         "that produces it failed");
      fail(i, cat("pass '", info.name, "' ", record.error));
      return false;
    }
    return true;
  }

  // The call through the C ABI, in this process or (isolation) in a worker;
  // the error, or empty.
  std::string call(const PassEvent& event) {
    const PipelineSpec& spec = pm_.spec();
    PassCallResult result =
        event.pass().isolated
            ? call_pass_isolated(event.pass(), target_,
                                 WorkerLimits{spec.pass_timeout_seconds,
                                              spec.pass_memory_limit_mib})
            : call_pass(event.pass(), target_);
    event.record().claimed_changed = result.claimed_changed;
    return result.error;
  }

  // The child graphs the pass borrowed, linted ("" when they are valid).
  std::string check_lent_graphs() {
    try {
      target_.lint_lent_graphs();
    } catch (const FxError& e) {
      return cat("it left an invalid graph: ", e.what());
    }
    return {};
  }

  // Validation: lint, the outline (check_outline), then every property the
  // pass declares it produces.
  std::string verify(const PassEvent& event,
                     const std::vector<std::string>& signature) {
    try {
      target_.lint();
    } catch (const FxError& e) {
      return cat("it left an invalid graph: ", e.what());
    }
    std::string outline =
        check_outline(target_.graph(), signature, event.info());
    if (!outline.empty()) return outline;
    const FxNameList& produces = event.info().produces;
    for (size_t p = 0; p < produces.count; ++p) {
      absl::Status ok = check_property(produces.names[p], target_.graph());
      if (!ok.ok()) {
        return cat("it declares it produces '", produces.names[p], "', but ",
                   std::string(ok.message()));
      }
    }
    return check_kept_tensor_meta(event);
  }

  // A pass that neither invalidates nor produces tensor_meta, run while it
  // holds, must leave every node computing what its tensor_meta says
  // (checked on a GraphModule by shape propagation run again).
  std::string check_kept_tensor_meta(const PassEvent& event) {
    constexpr std::string_view kTensorMeta = "tensor_meta";
    const FxPassInfo& info = event.info();
    GraphModule* module = target_.module();
    if (module == nullptr ||
        event.holding.count(std::string(kTensorMeta)) == 0 ||
        contains(info.invalidates, kTensorMeta) ||
        contains(info.produces, kTensorMeta)) {
      return "";
    }
    absl::Status ok = check_tensor_meta_current(*module);
    if (ok.ok()) return "";
    return cat(
        "it changed what a node computes without declaring that it "
        "invalidates 'tensor_meta': ",
        std::string(ok.message()));
  }

  void roll_back(const PassEvent& event, std::string error) {
    target_.rollback();
    PassRecord& record = event.record();
    record.outcome = PassRecord::Outcome::kRolledBack;
    record.error = error;
    fail(event.index, cat("pass '", event.name(), "' of ",
                          event.pass().pass->plugin->describe(),
                          " failed and was rolled back: ", error));
  }

  void commit(const PassEvent& event) {
    PassRecord& record = event.record();
    record.outcome = PassRecord::Outcome::kRan;
    record.changed = target_.changed();
    if (record.changed && !record.claimed_changed) {
      record.warning =
          "it reported changed=0 but changed the graph or its attributes";
    }
    target_.commit();
    const FxPassInfo& info = event.info();
    for (size_t p = 0; p < info.invalidates.count; ++p) {
      if (!contains(info.produces, info.invalidates.names[p])) {
        holds_.erase(info.invalidates.names[p]);
      }
    }
    for (size_t p = 0; p < info.produces.count; ++p) {
      holds_.insert(info.produces.names[p]);
    }
  }

  // Reporting a failure of pass `i`: its record keeps it, the report its
  // first, and the pass's policy decides whether the pipeline stops.
  void fail(size_t i, std::string failure) {
    report_.passes[i].failure = failure;
    if (report_.failure.empty()) report_.failure = std::move(failure);
    if (pm_.schedule()[i].on_failure == FailurePolicy::kStop) {
      report_.stopped = true;
    }
  }

  const PassManager& pm_;
  PassTarget& target_;
  const Instrumentor hooks_;
  PipelineReport report_;
  std::set<std::string> holds_;  // the properties that hold now
};

}  // namespace

absl::StatusOr<PassManager> PassManager::create(const PassRegistry& registry,
                                                PipelineSpec spec) {
  absl::StatusOr<std::vector<ScheduledPass>> bound =
      bind_passes(registry, spec);
  if (!bound.ok()) return bound.status();
  absl::StatusOr<std::vector<ScheduledPass>> ordered =
      order_passes(*std::move(bound), registry, spec);
  if (!ordered.ok()) return ordered.status();
  absl::Status printable = check_print_after(spec, *ordered);
  if (!printable.ok()) return printable;
  for (ScheduledPass& s : *ordered) {
    s.isolated = isolates(spec, *s.pass->plugin);
  }
  PassManager pm;
  pm.registry_ = &registry;
  pm.schedule_ = *std::move(ordered);
  pm.spec_ = std::move(spec);
  return pm;
}

void PassManager::add_instrumentation(
    std::unique_ptr<PassInstrumentation> instrumentation) {
  instrumentations_.push_back(std::move(instrumentation));
}

std::string PassManager::text() const {
  std::vector<PassInvocation> passes;
  for (const ScheduledPass& s : schedule_) passes.push_back(s.invocation);
  return pipeline_text(passes);
}

PipelineReport PassManager::run(PassTarget& target,
                                const RunHooks& hooks) const {
  std::vector<std::unique_ptr<PassInstrumentation>> standard =
      standard_instrumentations(spec_, hooks);
  PassTimingInstrumentation timing;
  std::vector<PassInstrumentation*> all;
  for (const auto& i : standard) all.push_back(i.get());
  for (const auto& i : instrumentations_) all.push_back(i.get());
  all.push_back(&timing);
  return PipelineRun(*this, target, std::move(all)).run();
}

}  // namespace fx::host
