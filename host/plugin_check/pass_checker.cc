#include "host/plugin_check/pass_checker.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "fx_core/format/graph_json.h"
#include "fx_core/io/output_rule.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_call.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pass_worker.h"
#include "host/pipeline/pipeline.h"
#include "host/pipeline/plugin_load_worker.h"
#include "host/pipeline/property_checks.h"
#include "host/pipeline/tensor_meta_check.h"
#include "host/plugin_check/graph_bundle.h"
#include "host/plugin_check/module_comparison.h"

namespace fx::host::plugin_check_internal {
namespace {

// What a pass is checked on: a bundle's graph as its file has it or, after
// a prefix pipeline, as the prefix left it (`prepared`).
struct Subject {
  const Bundle* bundle = nullptr;
  std::optional<GraphBundle> prepared;
};

// A fresh GraphModule of the subject, with weights of its own (each check
// transforms its own).
absl::StatusOr<std::shared_ptr<GraphModule>> load_fresh(
    const Subject& subject) {
  if (!subject.prepared) return load_fresh(*subject.bundle);
  absl::StatusOr<GraphFile> file =
      parse_graph_json(subject.prepared->json, subject.bundle->json_path);
  if (!file.ok()) return file.status();
  TensorList weights;
  for (const auto& [key, tensor] : subject.prepared->weights) {
    weights.emplace_back(key, tensor.detach().clone());
  }
  return load_graph_module_shared(*std::move(file), weights);
}

// A worker's results as bytes: per check, its outcome (one byte), the size
// of its reason and the reason.
std::string encode_results(const Results& results) {
  std::string bytes;
  for (const CheckResult& r : results) {
    uint64_t size = r.reason.size();
    bytes.push_back(static_cast<char>(r.outcome));
    bytes.append(reinterpret_cast<const char*>(&size), sizeof size);
    bytes += r.reason;
  }
  return bytes;
}

// Reads encode_results's bytes; false when they are not whole.
bool decode_results(std::string_view bytes, Results* results) {
  for (CheckResult& r : *results) {
    uint64_t size = 0;
    if (bytes.size() < 1 + sizeof size) return false;
    auto outcome = static_cast<CheckOutcome>(bytes[0]);
    if (outcome != CheckOutcome::kOk && outcome != CheckOutcome::kFail &&
        outcome != CheckOutcome::kSkip) {
      return false;
    }
    std::memcpy(&size, bytes.data() + 1, sizeof size);
    bytes.remove_prefix(1 + sizeof size);
    if (bytes.size() < size) return false;
    r = CheckResult{outcome, std::string(bytes.substr(0, size))};
    bytes.remove_prefix(size);
  }
  return bytes.empty();
}

}  // namespace

// One pass of one plugin, and how it is called. Everything that runs the
// plugin's code runs in a worker process (in_worker); the host only loads
// graphs, runs the prefix (its passes isolated) and collects results.
class PassChecker::Impl {
 public:
  Impl(const PassRegistry& registry, const RegisteredPass& pass,
       const PluginCheckOptions& options, const Prefixes& prefixes)
      : registry_(registry),
        pass_(pass),
        options_(options),
        prefixes_(prefixes),
        declared_(pass_declaration(pass.plugin->info(), *pass.info)) {}

  Results check(const Bundle& bundle) const {
    Results results;
    absl::StatusOr<Subject> subject = prepare(bundle);
    if (!subject.ok()) {
      results.fill(skipped(std::string(subject.status().message())));
      return results;
    }
    Results first =
        in_worker(kRuns, [&](Results& r) { runs_and_lint(*subject, r); });
    results[kRuns] = first[kRuns];
    if (results[kRuns].outcome != CheckOutcome::kOk) {
      skip_rest(results, results[kRuns].outcome == CheckOutcome::kFail
                             ? "the pass failed to run"
                             : "the pass declined the graph");
      return results;
    }
    if (first[kLint].outcome != CheckOutcome::kOk) {
      skip_rest(results, "the graph it left does not lint");
      results[kLint] = first[kLint];
      return results;
    }
    results[kLint] = first[kLint];
    check_the_rest(*subject, results);
    return results;
  }

 private:
  struct Run {
    std::shared_ptr<GraphModule> module;
    PassRecord record;
    std::string error;  // loading or running failed
  };

  static void skip_rest(Results& results, const std::string& why) {
    for (size_t c = kLint; c < results.size(); ++c) results[c] = skipped(why);
  }

  // A status the pass returned saying it does not apply (to this graph or
  // with its default options) declines the graph rather than failing.
  static bool declined(const std::string& error) {
    for (std::string_view code :
         {"INVALID_ARGUMENT: ", "FAILED_PRECONDITION: ", "UNIMPLEMENTED: "}) {
      if (error.rfind(code, 0) == 0) return true;
    }
    return false;
  }

  // ------------------------------------------------ in the host: the graph

  // The subject of the checks on `bundle`, or (as the status's message) why
  // its checks are skipped.
  absl::StatusOr<Subject> prepare(const Bundle& bundle) const {
    auto module = load_fresh(bundle);
    if (!module.ok()) {
      return skip_because(cat("the graph does not load: ",
                              std::string(module.status().message())));
    }
    Subject subject{&bundle, std::nullopt};
    absl::StatusOr<const Prefix*> prefix = prefix_for(bundle, **module);
    if (!prefix.ok()) return prefix.status();
    if (*prefix != nullptr) {
      absl::StatusOr<GraphBundle> prepared =
          run_prefix(**prefix, bundle, **module);
      if (!prepared.ok()) return prepared.status();
      subject.prepared = *std::move(prepared);
      auto again = load_fresh(subject);
      if (!again.ok()) {
        return skip_because(
            cat("the graph the passes run before it left "
                "does not load again: ",
                std::string(again.status().message())));
      }
    }
    std::string unmet = unmet_requirement((*module)->graph());
    if (!unmet.empty()) return skip_because(unmet);
    return subject;
  }

  static absl::Status skip_because(const std::string& why) {
    return absl::FailedPreconditionError(why);
  }

  // The prefix to run on `module` first (nullptr: none), or why its checks
  // are skipped.
  absl::StatusOr<const Prefix*> prefix_for(const Bundle& bundle,
                                           const GraphModule& module) const {
    if (prefixes_.before) return &*prefixes_.before;
    if (!contains(pass_.info->required, kTensorMeta) ||
        check_property(kTensorMeta, module.graph()).ok()) {
      return static_cast<const Prefix*>(nullptr);
    }
    if (!bundle.has_inputs || !prefixes_.shape_prop) {
      return skip_because(
          cat("it requires '", kTensorMeta,
              "', which this graph lacks, and the bundle has no ", kInputsFile,
              " to run ", kShapeProp,
              " on (a prefix pipeline such as "
              "shape_prop{shapes=1x3x224x224} gives shapes instead)"));
    }
    return &*prefixes_.shape_prop;
  }

  // Runs `prefix` on `module` with the bundle's inputs; the graph and
  // weights it left, or why the checks are skipped.
  absl::StatusOr<GraphBundle> run_prefix(const Prefix& prefix,
                                         const Bundle& bundle,
                                         GraphModule& module) const {
    std::string what = cat("the passes run before it ('", prefix.text, "')");
    if (!prefix.manager.ok()) {
      return skip_because(cat(what, " cannot run: ",
                              std::string(prefix.manager.status().message())));
    }
    GraphModuleTarget target(module, example_tensors(bundle));
    PipelineReport report = prefix.manager->run(target);
    if (!report.ok()) {
      return skip_because(cat(what, " failed on this graph: ", report.failure));
    }
    absl::StatusOr<GraphBundle> left =
        describe_graph_module(module, "model.weights.pt");
    if (!left.ok()) {
      return skip_because(cat("the graph ", what, " left cannot be copied: ",
                              std::string(left.status().message())));
    }
    return left;
  }

  std::string unmet_requirement(const Graph& graph) const {
    const FxNameList& required = pass_.info->required;
    for (size_t r = 0; r < required.count; ++r) {
      if (!check_property(required.names[r], graph).ok()) {
        return cat("it requires '", required.names[r],
                   "', which does not hold on this graph");
      }
    }
    return "";
  }

  // ------------------------------------------------------------ the worker

  // Runs `work` in a worker process under the options' limits and returns
  // the results it filled. Whatever the plugin's code does there (a crash,
  // an exit, a hang, memory past the limit) ends the worker only: then
  // `check` is FAIL, naming what ended it.
  Results in_worker(Check check,
                    const std::function<void(Results&)>& work) const {
    WorkerOutcome outcome = run_in_worker(
        [&] {
          Results results;
          try {
            work(results);
          } catch (const std::exception& e) {
            results[check] = failed(cat("an exception: ", e.what()));
          }
          return encode_results(results);
        },
        limits_of(options_));
    Results results;
    if (!outcome.ok) {
      results[check] = failed(outcome.failure);
    } else if (!decode_results(outcome.result, &results)) {
      results = Results();
      results[check] = failed("the worker process sent an unreadable result");
    }
    return results;
  }

  CheckResult isolated(Check check,
                       const std::function<CheckResult()>& work) const {
    return in_worker(check, [&](Results& r) { r[check] = work(); })[check];
  }

  // ------------------------------------------ in a worker: the pass's runs

  absl::StatusOr<PassManager> manager() const {
    PipelineSpec spec;
    spec.passes.push_back(PassInvocation{pass_.qualified_name(), {}, {}});
    spec.verify_each = false;
    const FxNameList& required = pass_.info->required;
    for (size_t r = 0; r < required.count; ++r) {
      spec.assume.emplace_back(required.names[r]);
    }
    return PassManager::create(registry_, spec);
  }

  Run run(const Subject& subject) const {
    auto module = load_fresh(subject);
    if (!module.ok()) {
      Run result;
      result.error = std::string(module.status().message());
      return result;
    }
    return run_on(*std::move(module), subject);
  }

  // The pass once more on `module` (which it may already have transformed).
  Run run_on(std::shared_ptr<GraphModule> module,
             const Subject& subject) const {
    Run result;
    absl::StatusOr<PassManager> pm = manager();
    if (!pm.ok()) {
      result.error = std::string(pm.status().message());
      return result;
    }
    result.module = std::move(module);
    GraphModuleTarget target(*result.module, example_tensors(*subject.bundle));
    PipelineReport report = pm->run(target);
    result.record = report.passes.at(0);
    result.error = result.record.error;
    return result;
  }

  // `runs` and `lint` from one run (lint only reads what it left).
  void runs_and_lint(const Subject& subject, Results& results) const {
    Run first = run(subject);
    if (!first.error.empty()) {
      results[kRuns] = declined(first.error)
                           ? skipped(cat("the pass declined it: ", first.error))
                           : failed(first.error);
      return;
    }
    results[kRuns] = ok();
    try {
      first.module->graph().lint();
      results[kLint] = ok();
    } catch (const FxError& e) {
      results[kLint] = failed(e.what());
    }
  }

  void check_the_rest(const Subject& subject, Results& results) const {
    results[kNumbers] =
        subject.bundle->has_inputs
            ? isolated(kNumbers, [&] { return check_numbers(subject); })
            : skipped(cat("the bundle has no ", kInputsFile));
    results[kDeterministic] =
        isolated(kDeterministic, [&] { return check_deterministic(subject); });
    results[kIdempotent] =
        declared_.idempotent
            ? isolated(kIdempotent, [&] { return check_idempotent(subject); })
            : skipped("the pass does not declare itself idempotent");
    results[kRollback] =
        isolated(kRollback, [&] { return check_rollback(subject); });
    results[kContract] =
        isolated(kContract, [&] { return check_contract(subject); });
  }

  // A run that failed after `runs` succeeded: the pass is flaky.
  static CheckResult failed_again(std::string_view which,
                                  const std::string& error) {
    return failed(cat(which, " failed (it ran before): ", error));
  }

  CheckResult check_numbers(const Subject& subject) const {
    auto original = load_fresh(subject);
    if (!original.ok()) return failed(std::string(original.status().message()));
    Run transformed = run(subject);
    if (!transformed.error.empty()) {
      return failed_again("the run", transformed.error);
    }
    absl::StatusOr<c10::IValue> want = run_module(**original, *subject.bundle);
    if (!want.ok()) {
      return skipped(cat("the unchanged graph does not run: ",
                         std::string(want.status().message())));
    }
    absl::StatusOr<c10::IValue> got =
        run_module(*transformed.module, *subject.bundle);
    if (!got.ok()) {
      return failed(cat("the transformed graph does not run: ",
                        std::string(got.status().message())));
    }
    std::string d = value_difference(*want, *got, tolerance(), "output");
    if (d.empty()) return ok();
    return failed(
        declared_.declares_tolerance()
            ? cat(d, " (the pass declares rtol=", number_text(tolerance().rtol),
                  ", atol=", number_text(tolerance().atol), ")")
            : d);
  }

  // The pass's declared tolerance, or the options' when it declares none.
  FxTolerance tolerance() const {
    if (declared_.declares_tolerance()) return declared_.tolerance;
    return FxTolerance{options_.rtol, options_.atol};
  }

  // Only for a pass that declares it: the pass run again on its own output
  // leaves the graph and weights exactly as its first run left them.
  CheckResult check_idempotent(const Subject& subject) const {
    Run once = run(subject);
    if (!once.error.empty()) return failed_again("the first run", once.error);
    auto after_once = state_of(*once.module);
    if (!after_once.ok()) {
      return failed(std::string(after_once.status().message()));
    }
    Run twice = run_on(once.module, subject);
    if (!twice.error.empty()) {
      return failed(cat("running it on its own output failed: ", twice.error));
    }
    auto after_twice = state_of(*twice.module);
    if (!after_twice.ok()) {
      return failed(std::string(after_twice.status().message()));
    }
    std::string d = state_difference(*after_once, *after_twice);
    return d.empty() ? ok()
                     : failed(cat("declared idempotent, but a second run "
                                  "changed its output: ",
                                  d));
  }

  // Two runs on fresh copies, one after the other in this process.
  CheckResult check_deterministic(const Subject& subject) const {
    Run first = run(subject);
    if (!first.error.empty()) return failed_again("the first run", first.error);
    Run second = run(subject);
    if (!second.error.empty()) {
      return failed(cat("the second run failed: ", second.error));
    }
    auto a = state_of(*first.module);
    auto b = state_of(*second.module);
    if (!a.ok() || !b.ok()) {
      return failed(std::string((a.ok() ? b.status() : a.status()).message()));
    }
    std::string d = state_difference(*a, *b);
    return d.empty() ? ok() : failed(cat("two runs differ: ", d));
  }

  // The pass runs in a transaction that is then rolled back, as the pass
  // manager does after a failure.
  CheckResult check_rollback(const Subject& subject) const {
    auto module = load_fresh(subject);
    absl::StatusOr<PassManager> pm = manager();
    if (!module.ok() || !pm.ok()) {
      return failed(
          std::string((module.ok() ? pm.status() : module.status()).message()));
    }
    auto before = state_of(**module);
    if (!before.ok()) return failed(std::string(before.status().message()));
    GraphModuleTarget target(**module, example_tensors(*subject.bundle));
    target.begin();
    call_pass(pm->schedule().at(0), target);
    target.rollback();
    auto after = state_of(**module);
    if (!after.ok()) return failed(std::string(after.status().message()));
    std::string d = state_difference(*before, *after);
    return d.empty() ? ok()
                     : failed(cat("after a forced failure and rollback, ", d));
  }

  CheckResult check_contract(const Subject& subject) const {
    auto original = load_fresh(subject);
    if (!original.ok()) return failed(std::string(original.status().message()));
    Run first = run(subject);
    if (!first.error.empty()) return failed_again("the run", first.error);
    if (!first.record.warning.empty()) return failed(first.record.warning);
    const FxPassInfo& info = *pass_.info;
    bool keeps_meta = !contains(info.invalidates, kTensorMeta) &&
                      !contains(info.produces, kTensorMeta);
    const Graph& graph = (*original)->graph();
    if (!keeps_meta || !check_property(kTensorMeta, graph).ok() ||
        !has_tensor_meta(graph)) {
      return ok();
    }
    absl::Status current = check_tensor_meta_current(*first.module);
    if (current.ok()) return ok();
    return failed(
        cat("it changed what a node computes without declaring that it "
            "invalidates 'tensor_meta': ",
            std::string(current.message())));
  }

  static bool has_tensor_meta(const Graph& graph) {
    for (const Node* node : graph.nodes()) {
      if (find_item(node->meta(), kTensorMeta) != nullptr) return true;
    }
    return false;
  }

  const PassRegistry& registry_;
  const RegisteredPass pass_;
  const PluginCheckOptions& options_;
  const Prefixes& prefixes_;
  const PassDeclaration declared_;
};

PassChecker::PassChecker(const PassRegistry& registry,
                         const RegisteredPass& pass,
                         const PluginCheckOptions& options,
                         const Prefixes& prefixes)
    : impl_(std::make_unique<const Impl>(registry, pass, options, prefixes)) {}

PassChecker::~PassChecker() = default;

Results PassChecker::check(const Bundle& bundle) const {
  return impl_->check(bundle);
}

}  // namespace fx::host::plugin_check_internal
