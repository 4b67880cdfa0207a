#include "tools/exec_command.h"

#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "fx_core/compile/inference_plan.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/io/output_rule.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/runtime/parallel.h"
#include "fx_core/support/strings.h"
#include "host/pipeline/named_pipelines.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pass_target.h"
#include "host/pipeline/pipeline.h"
#include "tools/pipeline_commands.h"

namespace fx::tools {
namespace {

// A status to return, or nothing to go on.
using Stop = std::optional<int>;

Stop fail(std::ostream& err, int status, const std::string& message) {
  err << "fx exec: " << message << "\n";
  return status;
}

// --optimize as the inference pipeline, and the engine a named pipeline
// chooses when --engine does not.
Stop resolve_pipeline(const ExecArgs& given, ExecArgs& args,
                      std::ostream& err) {
  args = given;
  if (args.optimize && !args.pipeline.empty()) {
    return fail(err, 2,
                "--optimize runs the named pipeline 'inference'; give it or "
                "--pipeline, not both");
  }
  if (args.optimize) args.pipeline = "inference";
  if (args.engine.empty()) {
    const host::NamedPipeline* named =
        host::find_named_pipeline(strip(args.pipeline));
    args.engine = named ? std::string(named->engine) : "graph_module";
  }
  return std::nullopt;
}

// Usage errors, found before anything is read.
Stop check_args(const ExecArgs& args, std::ostream& err) {
  if (args.engine != "graph_module" && args.engine != "inference_plan" &&
      args.engine != "interpreter") {
    return fail(err, 2,
                cat("unknown engine '", args.engine,
                    "' (expected graph_module, inference_plan or "
                    "interpreter)"));
  }
  if (args.dynamic && args.engine != "inference_plan") {
    return fail(err, 2, "--dynamic needs --engine inference_plan");
  }
  if (args.inputs.empty() || (args.outputs.empty() && args.repeat == 0)) {
    return fail(err, 2,
                "--inputs IN.pt and --outputs OUT.pt are required "
                "(--outputs may be left out with --repeat N)");
  }
  return std::nullopt;
}

// The files this run reads, the bundle's weights included.
FilesRead files_read(const ExecArgs& args, const GraphFile& file) {
  FilesRead reads;
  reads.add(args.input, "the graph");
  reads.add(weights_path(file), cat("the weights of ", args.input));
  for (const std::string& in : args.inputs) reads.add(in, "--inputs");
  return reads;
}

// The one output rule (fx_core/io/output_rule.h): --outputs is none of the
// files this run reads.
Stop check_output(const ExecArgs& args, const FilesRead& reads,
                  std::ostream& err) {
  if (args.outputs.empty()) return std::nullopt;
  absl::Status s = reads.check_outputs({{"--outputs", args.outputs}});
  if (!s.ok()) return fail(err, 2, std::string(s.message()));
  return std::nullopt;
}

// `message` naming `path` once: the graph reader's messages start with the
// path already, those about what the graph refers to (its weights) do not.
std::string naming_file(const std::string& path, const std::string& message) {
  const std::string prefix = path + ": ";
  if (message.compare(0, prefix.size(), prefix) == 0) return message;
  return prefix + message;
}

// IN.pt's list (or tuple) of inputs.
Stop read_inputs(const std::string& path, std::vector<c10::IValue>& inputs,
                 std::ostream& err) {
  auto value = read_value_file(path);
  if (!value.ok()) return fail(err, 1, std::string(value.status().message()));
  if (value->isList()) {
    inputs = value->toListRef().vec();
  } else if (value->isTuple()) {
    const auto& elements = value->toTupleRef().elements();
    inputs.assign(elements.begin(), elements.end());
  } else {
    return fail(
        err, 1,
        cat(path, ": expected a list of inputs (torch.save([x, ...]))"));
  }
  return std::nullopt;
}

// --pipeline: the pass manager for TEXT over the loaded plugins; a bad
// pipeline is a usage error, found before any file is read.
Stop make_pass_manager(const ExecArgs& args, const host::PassRegistry& plugins,
                       std::optional<host::PassManager>& pm,
                       std::ostream& err) {
  absl::StatusOr<host::PipelineSpec> spec =
      host::parse_pipeline_text(args.pipeline);
  if (!spec.ok()) return fail(err, 2, std::string(spec.status().message()));
  absl::StatusOr<host::PassManager> made =
      host::PassManager::create(plugins, *std::move(spec));
  if (!made.ok()) return fail(err, 2, std::string(made.status().message()));
  pm.emplace(*std::move(made));
  return std::nullopt;
}

// Runs the passes on `module` in place; the tensor inputs are the passes'
// example inputs.
Stop run_passes(const host::PassManager& pm, GraphModule& module,
                const std::vector<c10::IValue>& inputs, std::ostream& err) {
  std::vector<at::Tensor> examples;
  for (const c10::IValue& v : inputs) {
    if (v.isTensor()) examples.push_back(v.toTensor());
  }
  host::GraphModuleTarget target(module, std::move(examples));
  host::PipelineReport report = pm.run(target);
  for (const std::string& warning : report.warnings()) {
    err << "fx exec: warning: " << warning << "\n";
  }
  if (!report.ok()) {
    return fail(err, 1, cat(report.failure, "; nothing was run"));
  }
  if (std::string ran = named_pipeline_note(pm, report); !ran.empty()) {
    err << "fx exec: " << ran << "\n";
  }
  return std::nullopt;
}

using InputSet = std::vector<c10::IValue>;

// The chosen engine: `run` runs it once on an input set.
struct Engine {
  std::unique_ptr<InferencePlan> plan;
  std::unique_ptr<Interpreter> interpreter;
  std::function<c10::IValue(const InputSet&)> run;
};

// The engine, an InferencePlan built on `first`.
void start_engine(const ExecArgs& args, GraphModule& module,
                  const InputSet& first, Engine& engine) {
  if (args.engine == "inference_plan") {
    engine.plan = InferencePlan::build(  // runs the graph
        module, first,
        args.dynamic ? PlanShapes::kDynamic : PlanShapes::kStatic);
    engine.run = [&engine](const InputSet& in) { return engine.plan->run(in); };
  } else if (args.engine == "interpreter") {
    engine.interpreter = std::make_unique<Interpreter>(module);
    engine.run = [&engine](const InputSet& in) {
      return engine.interpreter->run(in);
    };
  } else {
    engine.run = [&module](const InputSet& in) { return module.forward(in); };
  }
}

// "ENGINE: N runs, T threads: min X ms, median Y ms" (`engine` may name
// the input set).
std::string timing_line(const std::string& engine,
                        std::vector<double> times_ms) {
  std::sort(times_ms.begin(), times_ms.end());
  size_t n = times_ms.size();
  double median =
      n % 2 ? times_ms[n / 2] : (times_ms[n / 2 - 1] + times_ms[n / 2]) / 2;
  char line[256];
  std::snprintf(line, sizeof(line),
                "%s: %zu runs, %d threads: min %.3f ms, median %.3f ms\n",
                engine.c_str(), n, num_threads(), times_ms.front(), median);
  return line;
}

// What running the sets gave: one output per set, and per set the times
// of the --repeat runs.
struct Runs {
  std::vector<c10::IValue> outputs;
  std::vector<std::vector<double>> times_ms;
  std::string plan_counts;  // "plan builds: N\n...", when printed
};

// Each set's first run gives its output (and warms up); --repeat times the
// others.
void run_set(const ExecArgs& args, Engine& engine, const InputSet& in,
             Runs& runs) {
  runs.outputs.push_back(engine.run(in));
  std::vector<double>& times = runs.times_ms.emplace_back();
  for (int i = 0; i < args.repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    c10::IValue r = engine.run(in);
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
}

// How many plans the inference plan built and for how many shapes.
std::string plan_counts(const InferencePlan& plan) {
  InferencePlan::Stats s = plan.stats();
  return cat("plan builds: ", s.plan_builds,
             "\nshape specialisations: ", s.shape_specialisations, "\n");
}

Stop execute(const ExecArgs& args, GraphModule& module,
             const std::vector<InputSet>& sets, Runs& runs, std::ostream& err) {
  try {
    torch::NoGradGuard no_grad;
    // Each module runs in the training mode the bundle records for it
    // (BatchNorm in training mode normalizes by the batch), unless --eval.
    if (args.eval) module.eval();
    Engine engine;
    start_engine(args, module, sets[0], engine);
    for (const InputSet& in : sets) run_set(args, engine, in, runs);
    if (engine.plan && (args.dynamic || sets.size() > 1)) {
      runs.plan_counts = plan_counts(*engine.plan);
    }
  } catch (const std::exception& e) {
    return fail(err, 1, e.what());
  }
  return std::nullopt;
}

// The output file's value: the one output, or a list of one per set.
c10::IValue output_value(const Runs& runs) {
  if (runs.outputs.size() == 1) return runs.outputs[0];
  c10::impl::GenericList list(c10::AnyType::get());
  for (const c10::IValue& v : runs.outputs) list.push_back(v);
  return list;
}

// The timing lines and the plan's counts.
void report(const ExecArgs& args, const Runs& runs, std::ostream& out) {
  for (size_t i = 0; i < runs.times_ms.size(); ++i) {
    if (runs.times_ms[i].empty()) continue;
    const std::string name = runs.times_ms.size() == 1
                                 ? args.engine
                                 : cat(args.engine, " [", args.inputs[i], "]");
    out << timing_line(name, runs.times_ms[i]);
  }
  out << runs.plan_counts;
}

}  // namespace

int run_exec_command(const ExecArgs& given, std::ostream& out,
                     std::ostream& err) {
  ExecArgs args;
  if (Stop s = resolve_pipeline(given, args, err)) return *s;
  if (Stop s = check_args(args, err)) return *s;
  // Custom ops stay registered (and their plugins loaded) for the life of
  // the process; the registry only has to outlive the run.
  host::PassRegistry plugins;
  absl::Status loaded = load_plugins_for("exec", args.sources, plugins, err);
  if (!loaded.ok()) return *fail(err, 1, std::string(loaded.message()));
  std::optional<host::PassManager> pm;
  if (!args.pipeline.empty()) {
    if (Stop s = make_pass_manager(args, plugins, pm, err)) return *s;
  }
  absl::StatusOr<GraphFile> file = read_graph_file(args.input);
  if (!file.ok()) return *fail(err, 1, std::string(file.status().message()));
  const FilesRead reads = files_read(args, *file);
  if (Stop s = check_output(args, reads, err)) return *s;
  // A file a pass writes (WriteOutputFile) obeys the same rule.
  const FilesRead::Published published = reads.publish();
  auto module = load_graph_module(*std::move(file));
  if (!module.ok()) {
    return *fail(
        err, 1,
        naming_file(args.input, std::string(module.status().message())));
  }
  std::vector<InputSet> sets(args.inputs.size());
  for (size_t i = 0; i < sets.size(); ++i) {
    if (Stop s = read_inputs(args.inputs[i], sets[i], err)) return *s;
  }
  if (args.threads > 0) set_num_threads(args.threads);
  if (pm) {
    if (Stop s = run_passes(*pm, **module, sets[0], err)) return *s;
  }
  Runs runs;
  if (Stop s = execute(args, **module, sets, runs, err)) return *s;
  if (!args.outputs.empty()) {
    absl::Status written = write_value_file(args.outputs, output_value(runs));
    if (!written.ok()) return *fail(err, 1, std::string(written.message()));
  }
  report(args, runs, out);
  out.flush();
  return 0;
}

}  // namespace fx::tools
