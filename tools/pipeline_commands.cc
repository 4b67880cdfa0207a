#include "tools/pipeline_commands.h"

#include <algorithm>
#include <boost/filesystem.hpp>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/io/atomic_file.h"
#include "fx_core/io/output_rule.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/strings.h"
#include "host/extensions/plugin_extensions.h"
#include "host/loader/plugin_loader.h"
#include "host/options/pass_options.h"
#include "host/pipeline/named_pipelines.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pipeline.h"
#include "host/pipeline/standard_instrumentations.h"

namespace fx::tools {
namespace {

namespace fs = boost::filesystem;

// ---------------------------------------------------------------- fx plugins

std::string names(const FxNameList& list) {
  std::vector<std::string> out;
  for (size_t i = 0; i < list.count; ++i) out.emplace_back(list.names[i]);
  return join(out, ", ");
}

// What a pass declares besides its options: ordering constraints,
// properties (pass_ordering.h), and API version 6's tolerance and
// idempotence (only when declared).
void print_declarations(const FxPassInfo& pass, const host::PassDeclaration& d,
                        std::ostream& out) {
  for (auto [list, what] : {std::pair{&pass.run_after, "run after"},
                            {&pass.run_before, "run before"},
                            {&pass.required, "requires"},
                            {&pass.produces, "produces"},
                            {&pass.invalidates, "invalidates"}}) {
    if (list->count > 0) out << "    " << what << ": " << names(*list) << "\n";
  }
  if (d.declares_tolerance()) {
    out << "    tolerance: rtol " << d.tolerance.rtol << ", atol "
        << d.tolerance.atol << "\n";
  }
  if (d.idempotent) out << "    idempotent: yes\n";
}

// A pass by its own name, or by its qualified name when another plugin's
// pass has the same name (pass_registry.h).
void print_pass(const host::Plugin& plugin, size_t index,
                const host::PassRegistry& registry, std::ostream& out) {
  const FxPassInfo& pass = plugin.pass(index);
  out << "  pass "
      << (registry.ambiguous(pass.name) ? cat(plugin.name(), ".", pass.name)
                                        : std::string(pass.name))
      << ": " << (pass.description ? pass.description : "") << "\n";
  for (size_t o = 0; o < pass.num_options; ++o) {
    const FxOptionSpec& spec = pass.options[o];
    out << "    option " << spec.name << " ("
        << host::option_type_name(spec.type) << ", default '"
        << (spec.default_value ? spec.default_value : "") << "')"
        << (spec.description && *spec.description ? cat(": ", spec.description)
                                                  : std::string())
        << "\n";
  }
  print_declarations(pass, plugin.declaration(index), out);
}

// What the plugin registered when it was loaded (plugin_extensions.h).
void print_extensions(const host::PluginExtensions& e, std::ostream& out) {
  for (const host::RegisteredCustomOp& op : e.custom_ops) {
    out << "  custom op " << op.target << "(" << op.signature << ")"
        << (op.has_shape_function
                ? ""
                : ", no shape function (it cannot run on meta tensors)")
        << "\n";
  }
  if (e.leaf_module_rules > 0) {
    out << "  leaf-module rules: " << e.leaf_module_rules << "\n";
  }
  for (const std::string& op : e.decompositions) {
    out << "  make_fx decomposition: " << op << "\n";
  }
  for (const std::string& op : e.leaf_ops) {
    out << "  make_fx leaf operator: " << op << "\n";
  }
  for (const std::string& name : e.backends) {
    out << "  backend: " << name << "\n";
  }
}

void print_plugin(const host::Plugin& plugin,
                  const host::PassRegistry& registry, std::ostream& out) {
  const FxPluginInfo& info = plugin.info();
  out << "plugin " << info.name << " " << info.version << " (API "
      << info.api_version << ", runs on API >= " << info.min_api_version
      << ")\n"
      << "  file:   " << plugin.path() << "\n"
      << "  sha256: " << plugin.sha256() << "\n";
  print_extensions(host::plugin_extensions(plugin), out);
  for (size_t p = 0; p < plugin.num_passes(); ++p) {
    print_pass(plugin, p, registry, out);
  }
}

// Broken libraries of plugin directories, skipped (pass_registry.h).
void warn_skipped(std::string_view command, const host::PassRegistry& registry,
                  std::ostream& err) {
  for (const host::SkippedPlugin& s : registry.skipped()) {
    err << "fx " << command << ": warning: skipped plugin " << s.path << ": "
        << s.reason.message() << "\n";
  }
}

// -------------------------------------------------------------------- fx run

// The exit status when a step of fx run stops the command (after saying why
// on stderr), or nullopt to go on.
using Stop = std::optional<int>;

template <typename Message>
int fail(std::ostream& err, int status, const Message& message) {
  err << "fx run: " << message << "\n";
  return status;
}

Stop check_args(const RunArgs& args, bool write_output, std::ostream& err) {
  if (args.pipeline.empty() == args.config.empty()) {
    return fail(err, 2,
                "give exactly one of --pipeline TEXT and --config CONF.json");
  }
  if (write_output && args.output.empty()) {
    return fail(err, 2, "-o OUT.fx.json is required");
  }
  return std::nullopt;
}

// --on-failure and --ordering over the pipeline's own settings.
Stop apply_policies(const RunArgs& args, host::PipelineSpec& spec,
                    std::ostream& err) {
  if (!args.on_failure.empty()) {
    absl::StatusOr<host::FailurePolicy> policy =
        host::parse_failure_policy(args.on_failure);
    if (!policy.ok()) {
      return fail(
          err, 2,
          cat("--on-failure: ", std::string(policy.status().message())));
    }
    spec.on_failure = *policy;
  }
  if (!args.ordering.empty()) {
    absl::StatusOr<host::Ordering> ordering =
        host::parse_ordering(args.ordering);
    if (!ordering.ok()) {
      return fail(
          err, 2,
          cat("--ordering: ", std::string(ordering.status().message())));
    }
    spec.ordering = *ordering;
  }
  return std::nullopt;
}

// --isolate, --pass-timeout, --pass-memory-limit (apply_isolation_flags).
Stop apply_isolation(const RunArgs& args, host::PipelineSpec& spec,
                     std::ostream& err) {
  std::string wrong = apply_isolation_flags(args.isolation, spec);
  if (!wrong.empty()) return fail(err, 2, wrong);
  return std::nullopt;
}

// The pipeline (--pipeline or --config), with the flags that override it.
Stop read_spec(const RunArgs& args, host::PipelineSpec& spec,
               std::ostream& err) {
  absl::StatusOr<host::PipelineSpec> read =
      args.config.empty() ? host::parse_pipeline_text(args.pipeline)
                          : host::read_pipeline_config(args.config);
  if (!read.ok()) return fail(err, 2, read.status().message());
  spec = *std::move(read);
  if (args.print_after == "all") {
    spec.print_after_all = true;
  } else if (!args.print_after.empty()) {
    for (std::string_view p : split(args.print_after, ',')) {
      spec.print_after.emplace_back(p);
    }
  }
  if (!args.reproducer_dir.empty()) spec.reproducer_dir = args.reproducer_dir;
  if (Stop s = apply_isolation(args, spec, err)) return s;
  return apply_policies(args, spec, err);
}

// What the passes run on: a bundle's GraphModule or a bare graph file.
struct Input {
  FilesRead reads;  // every file fx run reads
  GraphFile file;
  std::shared_ptr<GraphModule> module;
  std::unique_ptr<host::PassTarget> target;  // refers to file or module
};

// The items of a list or tuple value, or the value itself.
std::vector<c10::IValue> items_of(const c10::IValue& v) {
  if (v.isList() || v.isTuple()) return sequence_elements(v);
  return {v};
}

// --inputs: a torch.save file of a tensor, a list or tuple of tensors (one
// batch, one tensor per placeholder), or a list of such lists (batches:
// calibration data, the first also the passes' example inputs).
Stop read_example_inputs(const std::string& path,
                         std::vector<std::vector<at::Tensor>>& batches,
                         std::ostream& err) {
  auto inputs = read_value_file(path);
  if (!inputs.ok()) return fail(err, 1, inputs.status().message());
  std::vector<c10::IValue> items = items_of(*inputs);
  bool several = !items.empty() && (items[0].isList() || items[0].isTuple());
  std::vector<std::vector<c10::IValue>> groups;
  if (several) {
    for (const c10::IValue& batch : items) groups.push_back(items_of(batch));
  } else {
    groups.push_back(items);
  }
  for (size_t b = 0; b < groups.size(); ++b) {
    std::vector<at::Tensor> batch;
    for (const c10::IValue& v : groups[b]) {
      if (!v.isTensor()) {
        return fail(err, 1,
                    cat(path,
                        ": example inputs must be tensors (torch.save([x, "
                        "...])) or batches of them (torch.save([[x1, ...], "
                        "[x2, ...]])); ",
                        several ? cat("batch ", b, " holds ") : "it holds ",
                        "a ", v.tagKind()));
      }
      batch.push_back(v.toTensor());
    }
    if (b > 0 && batch.size() != batches[0].size()) {
      return fail(err, 1,
                  cat(path, ": batch ", b, " has ", batch.size(),
                      " inputs, batch 0 has ", batches[0].size()));
    }
    batches.push_back(std::move(batch));
  }
  return std::nullopt;
}

// A graph file as a GraphModule, as `fx exec` runs it: with its weights,
// or without any when it has no parameters. A file without weights that
// does not load (a target without a kernel, a parameter it lacks) is still
// a graph to transform: then `graph` keeps it and the status says why.
absl::StatusOr<std::shared_ptr<GraphModule>> load_module(GraphFile& file) {
  if (!file.weights.empty()) return load_graph_module(std::move(file));
  GraphFile copy;
  copy.graph = file.graph->snapshot();
  copy.modules = file.modules;
  copy.directory = file.directory;
  return load_graph_module(std::move(copy));
}

Stop open_input(const RunArgs& args, Input& input, std::ostream& err) {
  absl::StatusOr<GraphFile> file = read_graph_file(args.input);
  if (!file.ok()) return fail(err, 1, file.status().message());
  input.reads.add(args.input, "the graph");
  input.reads.add(weights_path(*file), cat("the weights of ", args.input));
  input.reads.add(args.inputs, "--inputs");
  input.reads.add(args.config, "--config");
  bool bare = file->weights.empty();
  auto gm = load_module(*file);
  if (!gm.ok() && bare && args.inputs.empty()) {
    input.file = *std::move(file);
    input.target = std::make_unique<host::GraphFileTarget>(input.file);
    return std::nullopt;
  }
  if (!gm.ok()) {
    return fail(err, 1,
                cat(args.input, ": ", std::string(gm.status().message()),
                    bare ? " (--inputs needs a graph that runs)" : ""));
  }
  input.module = *std::move(gm);
  std::vector<std::vector<at::Tensor>> batches;
  if (!args.inputs.empty()) {
    if (Stop s = read_example_inputs(args.inputs, batches, err)) return s;
  }
  std::vector<at::Tensor> first;
  if (!batches.empty()) {
    first = std::move(batches.front());
    batches.erase(batches.begin());
  }
  auto target = std::make_unique<host::GraphModuleTarget>(*input.module,
                                                          std::move(first));
  target->add_example_batches(std::move(batches));
  input.target = std::move(target);
  return std::nullopt;
}

host::RunHooks run_hooks(const RunArgs& args, std::ostream& out,
                         std::ostream& err) {
  host::RunHooks hooks;
  hooks.print_after = &out;
  if (args.progress) {
    hooks.progress = [&err](size_t i, size_t n, std::string_view pass) {
      err << "[" << i << "/" << n << "] " << pass << "\n";
    };
  }
  return hooks;
}

// --time's table, then each failure with its reproducer; a stopped
// pipeline stops fx run.
Stop print_report(const RunArgs& args, const host::PipelineReport& report,
                  std::ostream& out, std::ostream& err) {
  if (args.timing) out << report.summary();
  for (const std::string& warning : report.warnings()) {
    err << "fx run: warning: " << warning << "\n";
  }
  if (report.ok()) return std::nullopt;
  for (const host::PassRecord& record : report.passes) {
    if (record.failure.empty()) continue;
    fail(err, 1, record.failure);
    if (!record.reproducer.empty()) {
      fail(err, 1, cat("reproducer written to ", record.reproducer));
    }
  }
  if (!report.stopped) return std::nullopt;
  return fail(err, 1,
              cat("the pipeline stopped; ", args.output, " was not written"));
}

// After a run that went on past failed passes: names them and says what was
// written; kSkippedPassesStatus (0 when none failed).
int report_skipped(const RunArgs& args, const host::PipelineReport& report,
                   std::ostream& err) {
  std::vector<std::string> skipped;
  for (const host::PassRecord& record : report.passes) {
    if (record.outcome == host::PassRecord::Outcome::kRolledBack) {
      skipped.push_back(cat("'", record.pass, "'"));
    }
  }
  if (skipped.empty()) return 0;
  fail(err, kSkippedPassesStatus,
       cat(skipped.size(), skipped.size() == 1 ? " pass" : " passes",
           " failed and skipped (rolled back): ", join(skipped, ", "), "; ",
           args.output.empty() ? std::string("the result")
                               : cat(args.output, " was written"),
           " without ", skipped.size() == 1 ? "its" : "their",
           " changes (exit status ", kSkippedPassesStatus, ")"));
  return kSkippedPassesStatus;
}

// OUT and the weights beside it must not be any file fx run reads (the one
// output rule, fx_core/io/output_rule.h).
Stop check_output(const std::string& path, const Input& input,
                  std::ostream& err) {
  fs::path out(path);
  const std::string weights = weights_file_for(path);
  absl::Status rule = input.reads.check_outputs(
      {{"-o", path},
       {"-o's weights file", (out.parent_path() / weights).string()},
       {"-o's weights file",
        (out.parent_path() / alternate_weights_name(weights)).string()}});
  if (!rule.ok()) return fail(err, 2, rule.message());
  absl::Status replaceable = check_replaceable(path);
  if (!replaceable.ok()) return fail(err, 2, replaceable.message());
  return std::nullopt;
}

int write_output(const std::string& path, const host::PassTarget& target,
                 std::ostream& err) {
  boost::system::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  absl::Status written = target.write(path);
  if (!written.ok()) return fail(err, 1, written.message());
  return 0;
}

// fx run, and fx dot's pipeline (which writes no output file).
int run_pipeline(const RunArgs& args, std::ostream& out, std::ostream& err,
                 bool write_result) {
  if (Stop s = check_args(args, write_result, err)) return *s;
  host::PipelineSpec spec;
  if (Stop s = read_spec(args, spec, err)) return *s;
  host::PassRegistry registry;
  absl::Status loaded = host::load_plugins(spec, args.sources, registry);
  if (!loaded.ok()) return fail(err, 1, loaded.message());
  warn_skipped("run", registry, err);
  absl::StatusOr<host::PassManager> pm =
      host::PassManager::create(registry, std::move(spec));
  if (!pm.ok()) return fail(err, 2, pm.status().message());
  if (std::string note = auto_isolation_note(*pm); !note.empty()) {
    err << "fx run: " << note << "\n";
  }
  // A plugin that crashes the process is named before it dies.
  pm->add_instrumentation(
      std::make_unique<host::FatalSignalInstrumentation>("fx run"));
  Input input;
  if (Stop s = open_input(args, input, err)) return *s;
  if (write_result) {
    if (Stop s = check_output(args.output, input, err)) return *s;
  }
  // A file a pass writes (WriteOutputFile) obeys the same rule.
  const FilesRead::Published published = input.reads.publish();
  host::PipelineReport report =
      pm->run(*input.target, run_hooks(args, out, err));
  if (std::string ran = named_pipeline_note(*pm, report); !ran.empty()) {
    err << "fx run: " << ran << "\n";
  }
  if (Stop s = print_report(args, report, out, err)) return *s;
  if (write_result) {
    if (int status = write_output(args.output, *input.target, err)) {
      return status;
    }
  }
  return report_skipped(args, report, err);
}

// The names of the passes in `report` with `outcome`.
std::vector<std::string> passes_with(const host::PipelineReport& report,
                                     host::PassRecord::Outcome outcome) {
  std::vector<std::string> names;
  for (const host::PassRecord& record : report.passes) {
    if (record.outcome == outcome) names.push_back(record.pass);
  }
  return names;
}

}  // namespace

std::string named_pipeline_note(const host::PassManager& pm,
                                const host::PipelineReport& report) {
  const std::vector<std::string>& named = pm.spec().named_pipelines;
  if (named.empty()) return {};
  std::vector<std::string> ran =
      passes_with(report, host::PassRecord::Outcome::kRan);
  std::vector<std::string> rolled_back =
      passes_with(report, host::PassRecord::Outcome::kRolledBack);
  std::string note =
      cat(named.size() == 1 ? "named pipeline " : "named pipelines ",
          join(named, ", "), ": ran ",
          ran.empty() ? std::string("no pass") : join(ran, ", "));
  if (!rolled_back.empty()) {
    append(&note, "; rolled back: ", join(rolled_back, ", "));
  }
  return note;
}

int run_pipelines_command(std::ostream& out) {
  for (const host::NamedPipeline& p : host::named_pipelines()) {
    out << p.name << ": " << p.description << "\n"
        << "  passes: " << p.passes << "\n"
        << "  engine: " << p.engine << "\n";
  }
  out.flush();
  return out ? 0 : 1;
}

std::string apply_isolation_flags(const PassIsolationArgs& flags,
                                  host::PipelineSpec& spec) {
  if (flags.no_isolate && (flags.isolate || !flags.pass_timeout.empty() ||
                           !flags.pass_memory_limit.empty())) {
    return cat("--no-isolate contradicts ",
               flags.isolate                 ? "--isolate"
               : !flags.pass_timeout.empty() ? "--pass-timeout"
                                             : "--pass-memory-limit",
               ", which runs the passes in worker processes");
  }
  if (flags.no_isolate && spec.isolation() == host::Isolation::kAll &&
      spec.isolate != host::Isolation::kAll) {
    return "--no-isolate: the config's pass_timeout or pass_memory_limit "
           "needs the passes in worker processes";
  }
  if (flags.isolate) {
    spec.isolate = host::Isolation::kAll;
  } else if (flags.no_isolate) {
    spec.isolate = host::Isolation::kNone;
  } else if (!spec.isolate) {
    spec.isolate = host::Isolation::kAuto;  // the fx command's default
  }
  if (!flags.pass_timeout.empty()) {
    char* end = nullptr;
    double seconds = std::strtod(flags.pass_timeout.c_str(), &end);
    if (*end != '\0' || !(seconds > 0) || seconds > 1e9) {
      return cat("--pass-timeout expects seconds (a number > 0), got '",
                 flags.pass_timeout, "'");
    }
    spec.pass_timeout_seconds = seconds;
  }
  if (!flags.pass_memory_limit.empty()) {
    char* end = nullptr;
    unsigned long long mib =
        std::strtoull(flags.pass_memory_limit.c_str(), &end, 10);
    if (*end != '\0' || flags.pass_memory_limit[0] == '-' || mib == 0 ||
        mib > host::kMaxMemoryLimitMib) {
      return cat("--pass-memory-limit expects MiB (an integer from 1 to ",
                 host::kMaxMemoryLimitMib, "), got '", flags.pass_memory_limit,
                 "'");
    }
    spec.pass_memory_limit_mib = mib;
  }
  return {};
}

std::string auto_isolation_note(const host::PassManager& pm) {
  if (pm.spec().isolation() != host::Isolation::kAuto) return {};
  std::vector<std::string> names;
  for (const host::ScheduledPass& s : pm.schedule()) {
    const std::string& name = s.invocation.pass;
    if (s.isolated &&
        std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  if (names.empty()) return {};
  return cat("isolated (not pinned): ", join(names, ", "));
}

absl::Status load_plugins_for(std::string_view command,
                              const host::PluginSources& sources,
                              host::PassRegistry& registry, std::ostream& err,
                              const host::LoadIsolation& isolation) {
  absl::Status loaded = host::load_plugins(sources, registry, isolation);
  if (loaded.ok()) warn_skipped(command, registry, err);
  return loaded;
}

int run_plugins_command(const host::PluginSources& sources, std::ostream& out,
                        std::ostream& err, bool isolate) {
  host::PassRegistry registry;
  host::LoadIsolation isolation;
  isolation.isolated = isolate;
  absl::Status loaded =
      load_plugins_for("plugins", sources, registry, err, isolation);
  if (!loaded.ok()) {
    err << "fx plugins: " << loaded.message() << "\n";
    return 1;
  }
  if (registry.plugins().empty()) {
    out << "no plugins found (give --plugin PATH or --plugin-dir DIR, or set "
           "FX_PLUGIN_PATH)\n";
    return 0;
  }
  for (const auto& plugin : registry.plugins()) {
    print_plugin(*plugin, registry, out);
  }
  out << "named pipelines (fx pipelines lists their passes): "
      << host::named_pipeline_names() << "\n";
  return 0;
}

int run_pipeline_command(const RunArgs& args, std::ostream& out,
                         std::ostream& err) {
  return run_pipeline(args, out, err, /*write_result=*/true);
}

int run_dot_command(const DotArgs& args, std::ostream& out, std::ostream& err) {
  if (!args.output.empty()) {
    FilesRead reads;
    reads.add(args.input, "the graph");
    absl::StatusOr<GraphFile> file = read_graph_file(args.input);
    if (file.ok()) {
      reads.add(weights_path(*file), cat("the weights of ", args.input));
    }
    absl::Status rule = reads.check_outputs({{"-o", args.output}});
    if (!rule.ok()) {
      err << "fx dot: " << rule.message() << "\n";
      return 2;
    }
  }
  // The dot pass writes a file; draw into a temporary one beside OUT (or in
  // the temp directory) and hand it over whole.
  boost::system::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec) /
                 fs::unique_path("fx-dot-%%%%-%%%%-%%%%.dot", ec);
  RunArgs run;
  run.input = args.input;
  run.pipeline = (args.pipeline.empty() ? "" : args.pipeline + ",") +
                 "dot{path=" + tmp.string() + "}";
  run.sources = args.sources;
  run.isolation.no_isolate = true;  // fx dot draws in process, as it always has
  run.output = "";
  std::ostringstream ignored;
  int status = run_pipeline(run, ignored, err, /*write_result=*/false);
  if (status != 0) {
    fs::remove(tmp, ec);
    return status;
  }
  std::ifstream in(tmp.string(), std::ios::binary);
  std::stringstream dot;
  dot << in.rdbuf();
  fs::remove(tmp, ec);
  if (args.output.empty()) {
    out << dot.str();
    return out ? 0 : 1;
  }
  fs::path parent = fs::path(args.output).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  absl::Status written = write_file_atomically(args.output, dot.str());
  if (!written.ok()) {
    err << "fx dot: " << written.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace fx::tools
