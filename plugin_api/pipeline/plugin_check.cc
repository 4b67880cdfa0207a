#include "plugin_api/pipeline/plugin_check.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <boost/filesystem.hpp>
#include <charconv>
#include <memory>
#include <sstream>
#include <utility>

#include "fx_core/format/graph_json.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "plugin_api/loader/plugin_loader.h"
#include "plugin_api/pipeline/pass_call.h"
#include "plugin_api/pipeline/pass_manager.h"
#include "plugin_api/pipeline/pass_registry.h"
#include "plugin_api/pipeline/plugin_load_worker.h"
#include "plugin_api/pipeline/property_checks.h"
#include "plugin_api/pipeline/standard_instrumentations.h"
#include "plugin_api/pipeline/tensor_meta_check.h"

namespace fx::host {
namespace {

namespace fs = boost::filesystem;

constexpr std::string_view kGraphFile = "graph.fx.json";
constexpr std::string_view kInputsFile = "input.pt";

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

CheckResult ok() { return {CheckOutcome::kOk, ""}; }
CheckResult failed(std::string reason) {
  return {CheckOutcome::kFail, std::move(reason)};
}
CheckResult skipped(std::string reason) {
  return {CheckOutcome::kSkip, std::move(reason)};
}

// A graph bundle: where its JSON is, and its example inputs (if any).
struct Bundle {
  std::string name;
  std::string json_path;
  bool has_inputs = false;
  std::vector<c10::IValue> inputs;
};

absl::StatusOr<Bundle> read_bundle(const std::string& directory) {
  Bundle bundle;
  bundle.name = fs::path(directory).filename().string();
  bundle.json_path = (fs::path(directory) / std::string(kGraphFile)).string();
  fs::path inputs = fs::path(directory) / std::string(kInputsFile);
  boost::system::error_code ec;
  if (!fs::exists(inputs, ec)) return bundle;
  absl::StatusOr<c10::IValue> value = read_value_file(inputs.string());
  if (!value.ok()) return value.status();
  bundle.has_inputs = true;
  if (value->isList()) {
    bundle.inputs = value->toListRef().vec();
  } else if (value->isTuple()) {
    const auto& items = value->toTupleRef().elements();
    bundle.inputs.assign(items.begin(), items.end());
  } else {
    bundle.inputs = {*value};
  }
  return bundle;
}

// A fresh GraphModule of the bundle (each check transforms its own).
absl::StatusOr<std::shared_ptr<GraphModule>> load_fresh(const Bundle& bundle) {
  absl::StatusOr<GraphFile> file = read_graph_file(bundle.json_path);
  if (!file.ok()) return file.status();
  return load_graph_module(*std::move(file));
}

std::vector<at::Tensor> example_tensors(const Bundle& bundle) {
  std::vector<at::Tensor> tensors;
  for (const c10::IValue& v : bundle.inputs) {
    if (v.isTensor()) tensors.push_back(v.toTensor().clone());
  }
  return tensors;
}

std::vector<c10::IValue> cloned_inputs(const Bundle& bundle) {
  std::vector<c10::IValue> inputs;
  for (const c10::IValue& v : bundle.inputs) {
    inputs.push_back(v.isTensor() ? c10::IValue(v.toTensor().clone()) : v);
  }
  return inputs;
}

// A module as a bundle in memory, its weights copied.
struct State {
  std::string json;
  TensorList weights;
};

absl::StatusOr<State> state_of(const GraphModule& module) {
  absl::StatusOr<GraphBundle> bundle =
      describe_graph_module(module, "model.weights.pt");
  if (!bundle.ok()) return bundle.status();
  State state{std::move(bundle->json), {}};
  for (const auto& [key, tensor] : bundle->weights) {
    state.weights.emplace_back(key, tensor.detach().clone());
  }
  return state;
}

// Empty when equal; else what differs.
std::string state_difference(const State& a, const State& b) {
  if (a.json != b.json) return "the fx-graph JSON differs";
  if (a.weights.size() != b.weights.size()) return "the weights differ";
  for (size_t i = 0; i < a.weights.size(); ++i) {
    if (a.weights[i].first != b.weights[i].first ||
        !at::equal(a.weights[i].second, b.weights[i].second)) {
      return cat("weight '", a.weights[i].first, "' differs");
    }
  }
  return "";
}

// `value` in its shortest round-trip form ("0.0001", "1e-06", "nan"):
// fx::cat takes no floating-point numbers.
std::string number_text(double value) {
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, res.ptr);
}

// Empty when `got` matches `want` within the tolerances; else where not.
std::string value_difference(const c10::IValue& want, const c10::IValue& got,
                             const FxTolerance& tolerance,
                             const std::string& where) {
  if (want.isTensor() && got.isTensor()) {
    const at::Tensor& w = want.toTensor();
    const at::Tensor& g = got.toTensor();
    if (w.sizes() != g.sizes() || w.scalar_type() != g.scalar_type()) {
      return cat(where, ": expected ", c10::str(w.sizes()), " ",
                 c10::toString(w.scalar_type()), ", got ", c10::str(g.sizes()),
                 " ", c10::toString(g.scalar_type()));
    }
    bool close = w.is_floating_point() || w.is_complex()
                     ? at::allclose(g, w, tolerance.rtol, tolerance.atol, true)
                     : at::equal(g, w);
    return close ? "" : cat(where, ": values differ beyond the tolerance");
  }
  bool want_seq = want.isList() || want.isTuple();
  if (want_seq && (got.isList() || got.isTuple())) {
    std::vector<c10::IValue> w =
        want.isList()
            ? want.toListRef().vec()
            : std::vector<c10::IValue>(want.toTupleRef().elements().begin(),
                                       want.toTupleRef().elements().end());
    std::vector<c10::IValue> g =
        got.isList()
            ? got.toListRef().vec()
            : std::vector<c10::IValue>(got.toTupleRef().elements().begin(),
                                       got.toTupleRef().elements().end());
    if (w.size() != g.size()) {
      return cat(where, ": expected ", w.size(), " items, got ", g.size());
    }
    for (size_t i = 0; i < w.size(); ++i) {
      std::string d =
          value_difference(w[i], g[i], tolerance, cat(where, "[", i, "]"));
      if (!d.empty()) return d;
    }
    return "";
  }
  if (want.tagKind() != got.tagKind()) {
    return cat(where, ": expected a ", want.tagKind(), ", got a ",
               got.tagKind());
  }
  return want == got ? "" : cat(where, ": values differ");
}

// The output of `module` on the bundle's inputs, or the error.
absl::StatusOr<c10::IValue> run_module(GraphModule& module,
                                       const Bundle& bundle) {
  try {
    return module.forward(cloned_inputs(bundle));
  } catch (const std::exception& e) {
    return absl::FailedPreconditionError(e.what());
  }
}

// One pass of one plugin, and how it is called.
class PassChecker {
 public:
  PassChecker(const PassRegistry& registry, const RegisteredPass& pass,
              const PluginCheckOptions& options)
      : registry_(registry),
        pass_(pass),
        options_(options),
        declared_(pass_declaration(pass.plugin->info(), *pass.info)) {}

  Results check(const Bundle& bundle) const {
    Results results;
    auto original = load_fresh(bundle);
    if (!original.ok()) {
      results.fill(skipped(cat("the graph does not load: ",
                               std::string(original.status().message()))));
      return results;
    }
    std::string unmet = unmet_requirement((*original)->graph());
    if (!unmet.empty()) {
      results.fill(skipped(unmet));
      return results;
    }
    results[kRuns] = check_runs(bundle);
    if (results[kRuns].outcome != CheckOutcome::kOk) {
      skip_rest(results, results[kRuns].outcome == CheckOutcome::kFail
                             ? "the pass failed to run"
                             : "the pass declined the graph");
      return results;
    }
    check_in_process(bundle, **original, results);
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

  absl::StatusOr<PassManager> manager(bool isolated) const {
    PipelineSpec spec;
    spec.passes.push_back(PassInvocation{pass_.qualified_name(), {}, {}});
    spec.verify_each = false;
    spec.isolate = isolated;
    if (isolated) {
      spec.pass_timeout_seconds = options_.pass_timeout_seconds;
      spec.pass_memory_limit_mib = options_.pass_memory_limit_mib;
    }
    const FxNameList& required = pass_.info->required;
    for (size_t r = 0; r < required.count; ++r) {
      spec.assume.emplace_back(required.names[r]);
    }
    absl::StatusOr<PassManager> pm = PassManager::create(registry_, spec);
    if (pm.ok() && !isolated) {
      pm->add_instrumentation(
          std::make_unique<FatalSignalInstrumentation>("fx plugin-check"));
    }
    return pm;
  }

  Run run(const Bundle& bundle, bool isolated) const {
    auto module = load_fresh(bundle);
    if (!module.ok()) {
      Run result;
      result.error = std::string(module.status().message());
      return result;
    }
    return run_on(*std::move(module), bundle, isolated);
  }

  // The pass once more on `module` (which it may already have transformed).
  Run run_on(std::shared_ptr<GraphModule> module, const Bundle& bundle,
             bool isolated) const {
    Run result;
    absl::StatusOr<PassManager> pm = manager(isolated);
    if (!pm.ok()) {
      result.error = std::string(pm.status().message());
      return result;
    }
    result.module = std::move(module);
    GraphModuleTarget target(*result.module, example_tensors(bundle));
    PipelineReport report = pm->run(target);
    result.record = report.passes.at(0);
    result.error = result.record.error;
    return result;
  }

  // In a worker: a crash or a hang is the pass's failure, not ours. A graph
  // that does not lint fails there too; that is the lint check's concern.
  CheckResult check_runs(const Bundle& bundle) const {
    Run isolated = run(bundle, /*isolated=*/true);
    if (isolated.error.empty() ||
        isolated.error.find("it left an invalid graph") != std::string::npos) {
      return ok();
    }
    if (declined(isolated.error)) {
      return skipped(cat("the pass declined it: ", isolated.error));
    }
    return failed(isolated.error);
  }

  void check_in_process(const Bundle& bundle, GraphModule& original,
                        Results& results) const {
    Run first = run(bundle, /*isolated=*/false);
    if (!first.error.empty()) {
      results[kRuns] = failed(first.error);
      skip_rest(results, "the pass failed to run");
      return;
    }
    try {
      first.module->graph().lint();
      results[kLint] = ok();
    } catch (const FxError& e) {
      results[kLint] = failed(e.what());
      skip_rest(results, "the graph it left does not lint");
      results[kLint] = failed(e.what());
      return;
    }
    results[kNumbers] = check_numbers(bundle, original, *first.module);
    results[kDeterministic] = check_deterministic(bundle, *first.module);
    results[kIdempotent] = check_idempotent(bundle);
    results[kRollback] = check_rollback(bundle);
    results[kContract] = check_contract(original, first);
  }

  CheckResult check_numbers(const Bundle& bundle, GraphModule& original,
                            GraphModule& transformed) const {
    if (!bundle.has_inputs) {
      return skipped(cat("the bundle has no ", kInputsFile));
    }
    absl::StatusOr<c10::IValue> want = run_module(original, bundle);
    if (!want.ok()) {
      return skipped(cat("the unchanged graph does not run: ",
                         std::string(want.status().message())));
    }
    absl::StatusOr<c10::IValue> got = run_module(transformed, bundle);
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
  CheckResult check_idempotent(const Bundle& bundle) const {
    if (!declared_.idempotent) {
      return skipped("the pass does not declare itself idempotent");
    }
    Run once = run(bundle, /*isolated=*/false);
    if (!once.error.empty()) {
      return failed(cat("the first run failed: ", once.error));
    }
    auto after_once = state_of(*once.module);
    if (!after_once.ok()) {
      return failed(std::string(after_once.status().message()));
    }
    Run twice = run_on(once.module, bundle, /*isolated=*/false);
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

  CheckResult check_deterministic(const Bundle& bundle,
                                  const GraphModule& first) const {
    Run second = run(bundle, /*isolated=*/false);
    if (!second.error.empty()) {
      return failed(cat("the second run failed: ", second.error));
    }
    auto a = state_of(first);
    auto b = state_of(*second.module);
    if (!a.ok() || !b.ok()) {
      return failed(std::string((a.ok() ? b.status() : a.status()).message()));
    }
    std::string d = state_difference(*a, *b);
    return d.empty() ? ok() : failed(cat("two runs differ: ", d));
  }

  // The pass runs in a transaction that is then rolled back, as the pass
  // manager does after a failure.
  CheckResult check_rollback(const Bundle& bundle) const {
    auto module = load_fresh(bundle);
    absl::StatusOr<PassManager> pm = manager(/*isolated=*/false);
    if (!module.ok() || !pm.ok()) {
      return failed(
          std::string((module.ok() ? pm.status() : module.status()).message()));
    }
    auto before = state_of(**module);
    if (!before.ok()) return failed(std::string(before.status().message()));
    GraphModuleTarget target(**module, example_tensors(bundle));
    target.begin();
    call_pass(pm->schedule().at(0), target);
    target.rollback();
    auto after = state_of(**module);
    if (!after.ok()) return failed(std::string(after.status().message()));
    std::string d = state_difference(*before, *after);
    return d.empty() ? ok()
                     : failed(cat("after a forced failure and rollback, ", d));
  }

  CheckResult check_contract(const GraphModule& original,
                             const Run& first) const {
    if (!first.record.warning.empty()) return failed(first.record.warning);
    const FxPassInfo& info = *pass_.info;
    bool keeps_meta = !contains(info.invalidates, "tensor_meta") &&
                      !contains(info.produces, "tensor_meta");
    if (!keeps_meta || !check_property("tensor_meta", original.graph()).ok() ||
        !has_tensor_meta(original.graph())) {
      return ok();
    }
    absl::Status current = check_tensor_meta_current(*first.module);
    if (current.ok()) return ok();
    return failed(
        cat("it changed what a node computes without declaring that it "
            "invalidates 'tensor_meta': ",
            std::string(current.message())));
  }

  static bool contains(const FxNameList& list, std::string_view name) {
    for (size_t i = 0; i < list.count; ++i) {
      if (name == list.names[i]) return true;
    }
    return false;
  }

  static bool has_tensor_meta(const Graph& graph) {
    for (const Node* node : graph.nodes()) {
      if (find_item(node->meta(), "tensor_meta") != nullptr) return true;
    }
    return false;
  }

  const PassRegistry& registry_;
  const RegisteredPass& pass_;
  const PluginCheckOptions& options_;
  const PassDeclaration declared_;
};

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

std::string_view outcome_word(CheckOutcome outcome) {
  switch (outcome) {
    case CheckOutcome::kOk:
      return "ok";
    case CheckOutcome::kFail:
      return "FAIL";
    case CheckOutcome::kSkip:
      return "skip";
  }
  return "?";
}

}  // namespace

bool PluginCheckReport::ok() const {
  if (!load_failure.empty()) return false;
  for (const PassCheckRow& row : rows) {
    for (const CheckResult& r : row.results) {
      if (r.outcome == CheckOutcome::kFail) return false;
    }
  }
  return true;
}

std::string PluginCheckReport::table() const {
  size_t width = load_failure.empty() ? 4 : 8;
  for (const PassCheckRow& row : rows) width = std::max(width, row.pass.size());
  std::ostringstream out;
  auto pad = [](std::string_view s, size_t n) {
    return std::string(s) + std::string(n > s.size() ? n - s.size() : 0, ' ');
  };
  out << pad("pass", width) << "  " << pad("check", 13) << "  result\n";
  if (!load_failure.empty()) {
    out << pad("(plugin)", width) << "  " << pad("loads", 13) << "  "
        << pad(outcome_word(CheckOutcome::kFail), 4) << "  "
        << std::string_view(load_failure).substr(0, load_failure.find('\n'))
        << "\n";
  }
  for (const PassCheckRow& row : rows) {
    for (size_t c = 0; c < row.results.size(); ++c) {
      const CheckResult& r = row.results[c];
      out << pad(row.pass, width) << "  " << pad(kPluginChecks[c], 13) << "  "
          << pad(outcome_word(r.outcome), 4);
      // One line per check: a multi-line reason (lint's) keeps its first.
      if (!r.reason.empty()) {
        out << "  "
            << std::string_view(r.reason).substr(0, r.reason.find('\n'));
      }
      out << "\n";
    }
  }
  return out.str();
}

absl::StatusOr<std::vector<std::string>> find_graph_bundles(
    const std::string& directory) {
  boost::system::error_code ec;
  fs::path dir(directory);
  if (fs::exists(dir / std::string(kGraphFile), ec)) return {{directory}};
  std::vector<std::string> bundles;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        cat(directory, ": cannot read the directory: ", ec.message()));
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (fs::exists(it->path() / std::string(kGraphFile), ec)) {
      bundles.push_back(it->path().string());
    }
  }
  if (bundles.empty()) {
    return absl::InvalidArgumentError(
        cat(directory, ": no graph bundles (directories holding ", kGraphFile,
            ") in it"));
  }
  std::sort(bundles.begin(), bundles.end());
  return bundles;
}

absl::StatusOr<PluginCheckReport> check_plugin(
    const std::string& library, const PluginCheckOptions& options) {
  WorkerLoad trial =
      load_plugin_in_worker(library, {},
                            WorkerLimits{options.pass_timeout_seconds,
                                         options.pass_memory_limit_mib});
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
  std::vector<Bundle> bundles;
  for (const std::string& dir : options.graphs) {
    absl::StatusOr<Bundle> bundle = read_bundle(dir);
    if (!bundle.ok()) return bundle.status();
    bundles.push_back(*std::move(bundle));
  }
  PluginCheckReport report;
  report.plugin = (*plugin)->describe();
  for (const RegisteredPass& pass : registry.passes()) {
    PassCheckRow row{pass.info->name, {}};
    PassChecker checker(registry, pass, options);
    for (const Bundle& bundle : bundles) {
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
