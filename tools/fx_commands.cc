#include "tools/fx_commands.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include "fx_core/cppgen/cpp_codegen.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/io/regular_file.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/support/error.h"
#include "host/pipeline/pass_registry.h"
#include "tools/command_options.h"
#include "tools/demo.h"
#include "tools/exec_command.h"
#include "tools/minimize_command.h"
#include "tools/pass_isolation_args.h"
#include "tools/pipeline_commands.h"
#include "tools/plugin_check_command.h"
#include "tools/reduce_command.h"

namespace fx::tools {
namespace {

constexpr std::string_view kUsage =
    "usage: fx <command> [options] FILE\n"
    "\n"
    "commands:\n"
    "  print FILE                 graph text, as torch.fx prints it\n"
    "  tabular FILE               the graph as a table (print_tabular)\n"
    "  code [--lang=python|cpp] [--name=NAMESPACE] FILE\n"
    "                             generated code: Python (gm.code, the\n"
    "                             default) or C++ (LibTorch) in NAMESPACE\n"
    "  exec FILE --inputs IN.pt [--inputs IN2.pt]... --outputs OUT.pt\n"
    "      [--pipeline TEXT | --optimize] [--dynamic]\n"
    "      [--engine graph_module|inference_plan|interpreter]\n"
    "      [--threads N] [--repeat N] [--eval] [--plugin PATH]...\n"
    "      [--plugin-dir DIR]...\n"
    "                             runs the bundle on the inputs (a torch.save\n"
    "                             list), without autograd, and writes the\n"
    "                             output with torch.save; each module in the\n"
    "                             training mode the bundle records (--eval:\n"
    "                             all in eval mode); plugins' custom ops\n"
    "                             and module rules are registered first;\n"
    "                             --pipeline runs passes on it in memory\n"
    "                             first (e.g. shape_prop,fold_bn,fuse_conv\n"
    "                             for --engine inference_plan; a named\n"
    "                             pipeline also sets the engine);\n"
    "                             --optimize is --pipeline inference (the\n"
    "                             InferencePlan's fast path);\n"
    "                             --repeat N times N runs after a warm-up and\n"
    "                             prints min and median (--outputs is then\n"
    "                             optional); several --inputs run one after\n"
    "                             the other on one engine (--outputs: a list,\n"
    "                             one output per set); --dynamic builds one\n"
    "                             inference plan for every shape and prints\n"
    "                             its plan builds\n"
    "  plugins [--plugin PATH]... [--plugin-dir DIR]... [--isolate]\n"
    "                             lists plugins, their passes and options;\n"
    "                             --isolate loads each in a worker process\n"
    "                             first (one that crashes is an error)\n"
    "  pipelines                  the named pipelines (O1, O2, inference):\n"
    "                             what each is for, its passes and engine;\n"
    "                             --pipeline NAME runs one wherever a\n"
    "                             pipeline is taken\n"
    "  run FILE (--pipeline TEXT | --config CONF.json) -o OUT.fx.json\n"
    "      [--inputs IN.pt]  (example inputs the passes may use: one\n"
    "                        batch, or a list of batches to calibrate on)\n"
    "      [--plugin PATH]... [--plugin-dir DIR]... [--print-after PASS|all]\n"
    "      [--reproducer-dir DIR] [--on-failure stop|skip]\n"
    "      [--ordering explicit|auto] [--progress] [--time]\n"
    "      [--isolate | --no-isolate] [--pass-timeout SECONDS]\n"
    "      [--pass-memory-limit MIB]\n"
    "                             runs a pipeline of plugin passes on FILE\n"
    "                             and writes the result atomically; exit\n"
    "                             status 3 when failed passes were skipped\n"
    "                             (the result is written without them);\n"
    "                             an isolated plugin is loaded and each of\n"
    "                             its passes run in a worker process that a\n"
    "                             crash, a hang past the timeout or the\n"
    "                             memory limit (MiB beyond the host's) ends\n"
    "                             instead of fx: by default every plugin\n"
    "                             not first-party nor pinned by sha256 in\n"
    "                             the config, --isolate every plugin,\n"
    "                             --no-isolate none\n"
    "  minimize FILE --inputs IN.pt (--pipeline TEXT | --config CONF.json)\n"
    "      [--plugin PATH]... [--plugin-dir DIR]... [--mode "
    "bisect|sequential]\n"
    "      [--atol X] [--rtol X] [--find-all] [--isolate | --no-isolate]\n"
    "      [--pass-timeout SECONDS] [--pass-memory-limit MIB]\n"
    "                             the smallest subgraph whose outputs differ\n"
    "                             beyond tolerance when the pipeline is\n"
    "                             applied to it (torch.fx's net minimizer)\n"
    "  plugin-check LIB.so [--graphs DIR] [--torchvision MODELS]\n"
    "      [--pass NAME]... [--before PIPELINE] [--plugin PATH]...\n"
    "      [--plugin-dir DIR]... [--rtol X] [--atol X]\n"
    "      [--pass-timeout SECONDS] [--pass-memory-limit MIB]\n"
    "                             runs every pass of LIB.so (or each --pass)\n"
    "                             on the graph bundles under DIR\n"
    "                             ($FX_REFERENCE_DIR by default) and\n"
    "                             torchvision MODELS (names, or 'default':\n"
    "                             resnet18,mobilenet_v2,squeezenet1_1;\n"
    "                             exported by Python torch.fx into\n"
    "                             $FX_CACHE_DIR or ~/.cache/fx), after\n"
    "                             PIPELINE (shape_prop by default for a pass\n"
    "                             requiring tensor_meta), and checks that it\n"
    "                             loads, lint, numbers (within a pass's\n"
    "                             declared tolerance), determinism,\n"
    "                             idempotence (where declared), rollback\n"
    "                             and contracts, each in a worker process\n"
    "                             (a crash is that check's FAIL); a table,\n"
    "                             exit status 1 on any FAIL\n"
    "  reduce FILE --pipeline TEXT [-o OUT.fx.json] [--inputs IN.pt]\n"
    "      [--isolate | --no-isolate] [--pass-timeout SECONDS]\n"
    "      [--pass-memory-limit MIB]\n"
    "      [--plugin PATH]... [--plugin-dir DIR]...\n"
    "                             shrinks FILE while the pipeline fails the\n"
    "                             same way (pass and error kind) and writes\n"
    "                             the smallest graph (default\n"
    "                             FILE.reduced.fx.json); --inputs: example\n"
    "                             inputs for the passes (one batch, or a\n"
    "                             list of batches), a placeholder the\n"
    "                             reduction adds fed what its node computed\n"
    "  dot FILE [-o OUT.dot] [--pipeline TEXT]\n"
    "                             the graph as Graphviz DOT (after TEXT's\n"
    "                             passes, e.g. shape_prop for tensor_meta)\n"
    "  demo                       the seed docs' MyModule: traced, printed,\n"
    "                             run, put through first-party plugins\n"
    "\n"
    "Files: none larger than 16 GiB is read (--max-file-bytes N before or\n"
    "after the command, or $FX_MAX_FILE_BYTES, sets another limit); no\n"
    "output may be a file the command reads.\n"
    "\n"
    "Threads: every CPU the process may use ($OMP_NUM_THREADS when set),\n"
    "for LibTorch and OpenBLAS alike; fx exec --threads N sets another count.\n"
    "\n"
    "Plugins are also found in $FX_PLUGIN_PATH (colon-separated directories)\n"
    "and among the first-party plugins shipped with fx\n"
    "(--no-default-plugins turns both off).\n";

// An invocation as parsed: the command, its FILE and every option's values.
struct Invocation {
  std::string command;
  std::vector<std::string> positional;
  OptionValues values;
};

// A command: the options it takes, whether it takes a FILE, and how it runs
// an invocation (its arguments struct filled from it).
struct Command {
  std::vector<std::string_view> values;  // options taking a value
  std::vector<std::string_view> flags;   // options taking none
  bool takes_file = false;
  std::function<int(const Invocation&, std::ostream&, std::ostream&)> run;

  bool takes(std::string_view key) const {
    return std::find(values.begin(), values.end(), key) != values.end();
  }
  bool is_flag(std::string_view key) const {
    return std::find(flags.begin(), flags.end(), key) != flags.end();
  }
};

// The command whose arguments struct is `Args`: `signature` binds its FILE
// and options to a struct's fields, `run` runs it on the filled struct.
template <typename Args>
Command command(CommandSignature (*signature)(Args&),
                int (*run)(const Args&, std::ostream&, std::ostream&)) {
  Command c;
  Args unfilled;
  CommandSignature names = signature(unfilled);
  c.takes_file = names.file != nullptr;
  for (const CommandOption& option : names.options) {
    (option.is_flag() ? c.flags : c.values).push_back(option.name);
  }
  c.run = [signature, run](const Invocation& inv, std::ostream& out,
                           std::ostream& err) {
    Args args;
    CommandSignature bound = signature(args);
    if (bound.file != nullptr) *bound.file = inv.positional[0];
    if (!fill_options(inv.command, bound.options, inv.values, err)) return 2;
    return run(args, out, err);
  };
  return c;
}

// `options`, then each list of `more`.
template <typename... More>
std::vector<CommandOption> with(std::vector<CommandOption> options,
                                const More&... more) {
  (options.insert(options.end(), more.begin(), more.end()), ...);
  return options;
}

// --plugin PATH, --plugin-dir DIR, --no-default-plugins: where plugins come
// from (every command that loads them).
std::vector<CommandOption> plugin_options(host::PluginSources& sources) {
  return {{"plugin", &sources.plugins},
          {"plugin-dir", &sources.plugin_dirs},
          {"no-default-plugins", Cleared{&sources.default_dirs}}};
}

// --isolate, --no-isolate, --pass-timeout, --pass-memory-limit (fx run,
// reduce and minimize).
std::vector<CommandOption> isolation_options(PassIsolationArgs& isolation) {
  return {{"isolate", &isolation.isolate},
          {"no-isolate", &isolation.no_isolate},
          {"pass-timeout", &isolation.pass_timeout},
          {"pass-memory-limit", &isolation.pass_memory_limit}};
}

// fx demo and fx pipelines take nothing.
struct NoArgs {};

CommandSignature no_arguments(NoArgs&) { return {}; }

int demo(const NoArgs&, std::ostream& out, std::ostream& err) {
  return run_demo(out, err);
}

int pipelines(const NoArgs&, std::ostream& out, std::ostream&) {
  return run_pipelines_command(out);
}

// fx plugins [--isolate]
struct PluginsArgs {
  host::PluginSources sources;
  bool isolate = false;
};

CommandSignature plugins_signature(PluginsArgs& a) {
  return {nullptr, with({{"isolate", &a.isolate}}, plugin_options(a.sources))};
}

int plugins(const PluginsArgs& a, std::ostream& out, std::ostream& err) {
  return run_plugins_command(a.sources, out, err, a.isolate);
}

// fx print / tabular / code FILE
struct GraphArgs {
  std::string file;
  std::string lang = "python";        // code --lang
  std::string name = "fx_generated";  // code --name: the C++ namespace
};

CommandSignature graph_signature(GraphArgs& a) { return {&a.file, {}}; }

CommandSignature code_signature(GraphArgs& a) {
  return {&a.file, {{"lang", &a.lang}, {"name", &a.name}}};
}

// Loads FILE or reports why not.
bool load(const std::string& path, GraphFile* file, std::ostream& err) {
  absl::StatusOr<GraphFile> loaded = read_graph_file(path);
  if (!loaded.ok()) {
    err << "fx: " << loaded.status().message() << "\n";
    return false;
  }
  *file = std::move(*loaded);
  return true;
}

// The exit status once everything is written to `out`.
int flushed(std::ostream& out) {
  out.flush();
  return out ? 0 : 1;
}

int print_graph(const GraphArgs& a, std::ostream& out, std::ostream& err) {
  GraphFile file;
  if (!load(a.file, &file, err)) return 1;
  out << file.graph->str() << "\n";
  return flushed(out);
}

int print_tabular(const GraphArgs& a, std::ostream& out, std::ostream& err) {
  GraphFile file;
  if (!load(a.file, &file, err)) return 1;
  out << file.graph->tabular();
  return flushed(out);
}

int print_code(const GraphArgs& a, std::ostream& out, std::ostream& err) {
  if (a.lang != "python" && a.lang != "cpp") {
    err << "fx code: unknown language '" << a.lang
        << "' (expected python or cpp)\n";
    return 2;
  }
  GraphFile file;
  if (!load(a.file, &file, err)) return 1;
  if (a.lang == "python") {
    out << file.graph->python_code("self").src;
    return flushed(out);
  }
  std::vector<CppModule> modules;
  for (const auto& [path, spec] : file.modules) {
    modules.push_back({path, spec.type, spec.config});
  }
  try {
    out << gen_cpp_code(*file.graph, modules, a.name);
  } catch (const FxError& e) {
    err << "fx code: " << a.file << ": " << e.what() << "\n";
    return 1;
  }
  return flushed(out);
}

// fx exec FILE --inputs IN.pt [--outputs OUT.pt] [--pipeline TEXT] ...
CommandSignature exec_signature(ExecArgs& a) {
  return {&a.input, with({{"inputs", &a.inputs},
                          {"outputs", &a.outputs},
                          {"pipeline", &a.pipeline},
                          {"optimize", &a.optimize},
                          {"engine", &a.engine},
                          {"threads", &a.threads},
                          {"repeat", &a.repeat},
                          {"eval", &a.eval},
                          {"dynamic", &a.dynamic}},
                         plugin_options(a.sources))};
}

// fx dot FILE [-o OUT.dot] [--pipeline TEXT]
CommandSignature dot_signature(DotArgs& a) {
  return {&a.input, with({{"output", &a.output}, {"pipeline", &a.pipeline}},
                         plugin_options(a.sources))};
}

// fx run FILE (--pipeline TEXT | --config CONF.json) -o OUT.fx.json ...
CommandSignature run_signature(RunArgs& a) {
  return {&a.input,
          with({{"pipeline", &a.pipeline},
                {"config", &a.config},
                {"output", &a.output},
                {"inputs", &a.inputs},
                {"print-after", &a.print_after},
                {"reproducer-dir", &a.reproducer_dir},
                {"on-failure", &a.on_failure},
                {"ordering", &a.ordering},
                {"progress", &a.progress},
                {"time", &a.timing}},
               isolation_options(a.isolation), plugin_options(a.sources))};
}

// fx plugin-check LIB.so [--graphs DIR] [--torchvision MODELS] ...
CommandSignature plugin_check_signature(PluginCheckArgs& a) {
  return {&a.library, with({{"graphs", &a.graphs},
                            {"torchvision", &a.torchvision},
                            {"rtol", &a.rtol},
                            {"atol", &a.atol},
                            {"pass-timeout", &a.pass_timeout},
                            {"pass-memory-limit", &a.pass_memory_limit},
                            {"pass", &a.passes},
                            {"before", &a.before}},
                           plugin_options(a.sources))};
}

// fx reduce FILE --pipeline TEXT [-o OUT.fx.json] [--inputs IN.pt] ...
CommandSignature reduce_signature(ReduceArgs& a) {
  return {&a.input,
          with({{"pipeline", &a.pipeline},
                {"output", &a.output},
                {"inputs", &a.inputs}},
               isolation_options(a.isolation), plugin_options(a.sources))};
}

// fx minimize FILE --inputs IN.pt (--pipeline TEXT | --config CONF.json) ...
CommandSignature minimize_signature(MinimizeArgs& a) {
  return {&a.input,
          with({{"inputs", &a.inputs},
                {"pipeline", &a.pipeline},
                {"config", &a.config},
                {"mode", &a.mode},
                {"atol", &a.atol},
                {"rtol", &a.rtol},
                {"find-all", &a.find_all}},
               isolation_options(a.isolation), plugin_options(a.sources))};
}

// Every command, by name.
const std::map<std::string_view, Command>& commands() {
  static const auto* table = new std::map<std::string_view, Command>{
      {"print", command(graph_signature, print_graph)},
      {"tabular", command(graph_signature, print_tabular)},
      {"code", command(code_signature, print_code)},
      {"exec", command(exec_signature, run_exec_command)},
      {"demo", command(no_arguments, demo)},
      {"pipelines", command(no_arguments, pipelines)},
      {"plugins", command(plugins_signature, plugins)},
      {"reduce", command(reduce_signature, run_reduce_command)},
      {"plugin-check",
       command(plugin_check_signature, run_plugin_check_command)},
      {"dot", command(dot_signature, run_dot_command)},
      {"run", command(run_signature, run_pipeline_command)},
      {"minimize", command(minimize_signature, run_minimize_command)},
  };
  return *table;
}

// Options every command takes, before or after its name.
bool is_global_option(std::string_view key) { return key == "max-file-bytes"; }

// Parses `--key=value` and `--key value`; false (with a message) on an
// unknown command or option.
bool parse(const std::vector<std::string>& args, Invocation* inv,
           std::ostream& err) {
  // Global options before the command (`fx --max-file-bytes N print F`).
  size_t first = 0;
  while (first < args.size() && args[first].rfind("--", 0) == 0) {
    std::string_view key = std::string_view(args[first]).substr(2);
    size_t eq = key.find('=');
    if (!is_global_option(key.substr(0, eq))) break;
    if (eq != std::string_view::npos) {
      inv->values[std::string(key.substr(0, eq))].push_back(
          std::string(key.substr(eq + 1)));
    } else if (first + 1 < args.size()) {
      inv->values[std::string(key)].push_back(args[++first]);
    }
    ++first;
  }
  if (first >= args.size()) {
    err << kUsage;
    return false;
  }
  inv->command = args[first];
  auto known = commands().find(inv->command);
  if (known == commands().end()) {
    err << "fx: unknown command '" << inv->command << "'\n" << kUsage;
    return false;
  }
  const Command& command = known->second;
  for (size_t i = first + 1; i < args.size(); ++i) {
    std::string_view a = args[i];
    // -o is --output for every command that takes one.
    if (a == "-o" && command.takes("output")) a = "--output";
    if (a.size() < 2 || a.substr(0, 2) != "--") {
      if (a.size() > 1 && a[0] == '-') {
        err << "fx " << inv->command << ": unknown option '" << a << "'\n"
            << kUsage;
        return false;
      }
      inv->positional.push_back(args[i]);
      continue;
    }
    std::string_view key = a.substr(2);
    std::string value;
    size_t eq = key.find('=');
    bool inline_value = eq != std::string_view::npos;
    if (inline_value) {
      value = std::string(key.substr(eq + 1));
      key = key.substr(0, eq);
    }
    if (!inline_value && command.is_flag(key)) {
      inv->values[std::string(key)].push_back("true");
      continue;
    }
    if (!is_global_option(key) && !command.takes(key)) {
      err << "fx " << inv->command << ": unknown option '" << a << "'\n"
          << kUsage;
      return false;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) {
        err << "fx " << inv->command << ": option --" << key
            << " needs a value\n";
        return false;
      }
      value = args[++i];
    }
    inv->values[std::string(key)].push_back(value);
  }
  return true;
}

// Runs a parsed command, once it has the FILE it takes (or none).
int run_invocation(const Invocation& inv, std::ostream& out,
                   std::ostream& err) {
  const Command& command = commands().at(inv.command);
  if (!command.takes_file && !inv.positional.empty()) {
    err << "fx " << inv.command << ": takes no FILE\n" << kUsage;
    return 2;
  }
  if (command.takes_file && inv.positional.size() != 1) {
    err << "fx " << inv.command << ": expected one FILE, got "
        << inv.positional.size() << "\n"
        << kUsage;
    return 2;
  }
  return command.run(inv, out, err);
}

// The largest file the command reads (--max-file-bytes), for as long as
// it runs: the process-wide limit of fx_core/io/regular_file.h, restored
// after (commands also run in process, in tests).
class FileLimit {
 public:
  explicit FileLimit(uint64_t bytes) : saved_(max_file_bytes()) {
    set_max_file_bytes(bytes);
  }
  ~FileLimit() { set_max_file_bytes(saved_); }
  FileLimit(const FileLimit&) = delete;
  FileLimit& operator=(const FileLimit&) = delete;

 private:
  uint64_t saved_;
};

// Sets `limit` from --max-file-bytes; false with a message on a bad value.
bool apply_file_limit(const Invocation& inv, std::optional<FileLimit>* limit,
                      std::ostream& err) {
  auto given = inv.values.find("max-file-bytes");
  if (given == inv.values.end()) return true;
  std::string text = given->second.back();
  char* end = nullptr;
  errno = 0;
  unsigned long long bytes = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno != 0 ||
      bytes == 0) {
    err << "fx: --max-file-bytes needs a positive number of bytes, got '"
        << text << "'\n";
    return false;
  }
  limit->emplace(bytes);
  return true;
}

}  // namespace

int run_fx_command(const std::vector<std::string>& args, std::ostream& out,
                   std::ostream& err) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help" ||
      args[0] == "help") {
    (args.empty() ? err : out) << kUsage;
    return args.empty() ? 2 : 0;
  }
  Invocation inv;
  if (!parse(args, &inv, err)) return 2;
  std::optional<FileLimit> limit;
  if (!apply_file_limit(inv, &limit, err)) return 2;
  return run_invocation(inv, out, err);
}

}  // namespace fx::tools
