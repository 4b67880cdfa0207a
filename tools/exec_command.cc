#include "tools/exec_command.h"

#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "fx_core/io/regular_file.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/runtime/parallel.h"
#include "fx_core/runtime/plan/inference_plan.h"
#include "fx_core/support/strings.h"
#include "plugin_api/pipeline/pass_manager.h"
#include "plugin_api/pipeline/pass_registry.h"
#include "plugin_api/pipeline/pass_target.h"
#include "plugin_api/pipeline/pipeline.h"
#include "tools/pipeline_commands.h"

namespace fx::tools {
namespace {

// A status to return, or nothing to go on.
using Stop = std::optional<int>;

Stop fail(std::ostream& err, int status, const std::string& message) {
  err << "fx exec: " << message << "\n";
  return status;
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
  if (args.inputs.empty() || (args.outputs.empty() && args.repeat == 0)) {
    return fail(err, 2,
                "--inputs IN.pt and --outputs OUT.pt are required "
                "(--outputs may be left out with --repeat N)");
  }
  for (const std::string& read : {args.input, args.inputs}) {
    if (!args.outputs.empty() && same_file(args.outputs, read)) {
      return fail(err, 2,
                  cat("--outputs ", args.outputs, " would overwrite ", read,
                      ", which this run reads; write the output elsewhere"));
    }
  }
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
  return std::nullopt;
}

// The chosen engine: `run` runs it once on the inputs.
struct Engine {
  std::unique_ptr<InferencePlan> plan;
  std::unique_ptr<Interpreter> interpreter;
  std::function<c10::IValue()> run;
};

void start_engine(const std::string& name, GraphModule& module,
                  const std::vector<c10::IValue>& inputs, Engine& engine) {
  if (name == "inference_plan") {
    engine.plan = InferencePlan::build(module, inputs);  // runs the graph
    engine.run = [&engine, &inputs] { return engine.plan->run(inputs); };
  } else if (name == "interpreter") {
    engine.interpreter = std::make_unique<Interpreter>(module);
    engine.run = [&engine, &inputs] { return engine.interpreter->run(inputs); };
  } else {
    engine.run = [&module, &inputs] { return module.forward(inputs); };
  }
}

// "ENGINE: N runs, T threads: min X ms, median Y ms".
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

// The first run gives the output (and warms up); --repeat times the others.
Stop execute(const ExecArgs& args, GraphModule& module,
             const std::vector<c10::IValue>& inputs, c10::IValue& result,
             std::vector<double>& times_ms, std::ostream& err) {
  try {
    torch::NoGradGuard no_grad;
    // Each module runs in the training mode the bundle records for it
    // (BatchNorm in training mode normalizes by the batch), unless --eval.
    if (args.eval) module.eval();
    Engine engine;
    start_engine(args.engine, module, inputs, engine);
    result = engine.run();
    for (int i = 0; i < args.repeat; ++i) {
      auto start = std::chrono::steady_clock::now();
      c10::IValue r = engine.run();
      times_ms.push_back(std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - start)
                             .count());
    }
  } catch (const std::exception& e) {
    return fail(err, 1, e.what());
  }
  return std::nullopt;
}

}  // namespace

int run_exec_command(const ExecArgs& args, std::ostream& out,
                     std::ostream& err) {
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
  auto module = read_graph_module(args.input);
  if (!module.ok()) {
    return *fail(
        err, 1,
        naming_file(args.input, std::string(module.status().message())));
  }
  std::vector<c10::IValue> inputs;
  if (Stop s = read_inputs(args.inputs, inputs, err)) return *s;
  if (args.threads > 0) set_num_threads(args.threads);
  if (pm) {
    if (Stop s = run_passes(*pm, **module, inputs, err)) return *s;
  }
  c10::IValue result;
  std::vector<double> times_ms;
  if (Stop s = execute(args, **module, inputs, result, times_ms, err)) {
    return *s;
  }
  if (!args.outputs.empty()) {
    absl::Status written = write_value_file(args.outputs, result);
    if (!written.ok()) return *fail(err, 1, std::string(written.message()));
  }
  if (!times_ms.empty()) out << timing_line(args.engine, times_ms);
  out.flush();
  return 0;
}

}  // namespace fx::tools
