#include "tools/fx_commands.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include "fx_core/cppgen/cpp_codegen.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/io/regular_file.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/support/error.h"
#include "plugin_api/pipeline/pass_registry.h"
#include "tools/demo.h"
#include "tools/exec_command.h"
#include "tools/minimize_command.h"
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

// Options that take a value, per command.
const std::map<std::string_view, std::vector<std::string_view>>& options() {
  static const auto* table =
      new std::map<std::string_view, std::vector<std::string_view>>{
          {"print", {}},
          {"tabular", {}},
          {"code", {"lang", "name"}},
          {"exec",
           {"inputs", "outputs", "pipeline", "plugin", "plugin-dir", "engine",
            "threads", "repeat"}},
          {"demo", {}},
          {"pipelines", {}},
          {"plugins", {"plugin", "plugin-dir"}},
          {"reduce",
           {"pipeline", "output", "inputs", "plugin", "plugin-dir",
            "pass-timeout", "pass-memory-limit"}},
          {"plugin-check",
           {"graphs", "torchvision", "rtol", "atol", "pass-timeout",
            "pass-memory-limit", "pass", "before", "plugin", "plugin-dir"}},
          {"dot", {"output", "pipeline", "plugin", "plugin-dir"}},
          {"run",
           {"pipeline", "config", "output", "inputs", "plugin", "plugin-dir",
            "print-after", "reproducer-dir", "on-failure", "ordering",
            "pass-timeout", "pass-memory-limit"}},
          {"minimize",
           {"inputs", "pipeline", "config", "plugin", "plugin-dir", "mode",
            "atol", "rtol", "pass-timeout", "pass-memory-limit"}},
      };
  return *table;
}

// Options that take no value, per command.
const std::map<std::string_view, std::vector<std::string_view>>& flags() {
  static const auto* table =
      new std::map<std::string_view, std::vector<std::string_view>>{
          {"plugins", {"no-default-plugins", "isolate"}},
          {"reduce", {"no-default-plugins", "isolate", "no-isolate"}},
          {"plugin-check", {"no-default-plugins"}},
          {"exec", {"no-default-plugins", "eval", "dynamic", "optimize"}},
          {"dot", {"no-default-plugins"}},
          {"run",
           {"progress", "time", "no-default-plugins", "isolate", "no-isolate"}},
          {"minimize",
           {"find-all", "no-default-plugins", "isolate", "no-isolate"}},
      };
  return *table;
}

// Options every command takes, before or after its name.
bool is_global_option(std::string_view key) { return key == "max-file-bytes"; }

bool is_flag(std::string_view command, std::string_view key) {
  auto it = flags().find(command);
  return it != flags().end() && std::find(it->second.begin(), it->second.end(),
                                          key) != it->second.end();
}

struct Invocation {
  std::string command;
  std::vector<std::string> positional;
  // Every value given for an option, in order (--plugin may repeat).
  std::map<std::string, std::vector<std::string>> values;
  std::string value(const std::string& key, const std::string& fallback) {
    auto it = values.find(key);
    return it == values.end() ? fallback : it->second.back();
  }
  std::vector<std::string> all(const std::string& key) {
    auto it = values.find(key);
    return it == values.end() ? std::vector<std::string>() : it->second;
  }
  bool flag(const std::string& key) { return values.count(key) > 0; }
};

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
  auto known = options().find(inv->command);
  if (known == options().end()) {
    err << "fx: unknown command '" << inv->command << "'\n" << kUsage;
    return false;
  }
  for (size_t i = first + 1; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a == "-o" && (inv->command == "run" || inv->command == "dot" ||
                      inv->command == "reduce")) {
      a = "--output";
    }
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
    if (!inline_value && is_flag(inv->command, key)) {
      inv->values[std::string(key)].push_back("true");
      continue;
    }
    const auto& allowed = known->second;
    if (!is_global_option(key) &&
        std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
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

// A positive integer option, or false with a message.
bool positive_int(Invocation& inv, const std::string& key, int* value,
                  std::ostream& err) {
  if (!inv.values.count(key)) return true;
  std::string text = inv.value(key, "");
  char* end = nullptr;
  long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n < 1 || n > 1000000) {
    err << "fx " << inv.command << ": --" << key
        << " expects a positive integer, got '" << text << "'\n";
    return false;
  }
  *value = static_cast<int>(n);
  return true;
}

// fx exec FILE --inputs IN.pt [--outputs OUT.pt] [--pipeline TEXT] ...
int run_exec(Invocation& inv, const host::PluginSources& sources,
             std::ostream& out, std::ostream& err) {
  ExecArgs e;
  e.input = inv.positional[0];
  e.inputs = inv.all("inputs");
  e.outputs = inv.value("outputs", "");
  e.pipeline = inv.value("pipeline", "");
  e.optimize = inv.flag("optimize");
  e.engine = inv.value("engine", "");
  e.eval = inv.flag("eval");
  e.dynamic = inv.flag("dynamic");
  if (!positive_int(inv, "threads", &e.threads, err) ||
      !positive_int(inv, "repeat", &e.repeat, err)) {
    return 2;
  }
  e.sources = sources;
  return run_exec_command(e, out, err);
}

// fx dot FILE [-o OUT.dot] [--pipeline TEXT]
int run_dot(Invocation& inv, const host::PluginSources& sources,
            std::ostream& out, std::ostream& err) {
  DotArgs dot;
  dot.input = inv.positional[0];
  dot.output = inv.value("output", "");
  dot.pipeline = inv.value("pipeline", "");
  dot.sources = sources;
  return run_dot_command(dot, out, err);
}

// fx run FILE (--pipeline TEXT | --config CONF.json) -o OUT.fx.json ...
int run_run(Invocation& inv, const host::PluginSources& sources,
            std::ostream& out, std::ostream& err) {
  RunArgs run;
  run.input = inv.positional[0];
  run.pipeline = inv.value("pipeline", "");
  run.config = inv.value("config", "");
  run.output = inv.value("output", "");
  run.inputs = inv.value("inputs", "");
  run.print_after = inv.value("print-after", "");
  run.reproducer_dir = inv.value("reproducer-dir", "");
  run.on_failure = inv.value("on-failure", "");
  run.ordering = inv.value("ordering", "");
  run.isolate = inv.flag("isolate");
  run.no_isolate = inv.flag("no-isolate");
  run.pass_timeout = inv.value("pass-timeout", "");
  run.pass_memory_limit = inv.value("pass-memory-limit", "");
  run.progress = inv.flag("progress");
  run.timing = inv.flag("time");
  run.sources = sources;
  return run_pipeline_command(run, out, err);
}

// fx plugin-check LIB.so
int run_plugin_check(Invocation& inv, const host::PluginSources& sources,
                     std::ostream& out, std::ostream& err) {
  PluginCheckArgs args;
  args.library = inv.positional[0];
  args.graphs = inv.value("graphs", "");
  args.torchvision = inv.value("torchvision", "");
  args.rtol = inv.value("rtol", "");
  args.atol = inv.value("atol", "");
  args.pass_timeout = inv.value("pass-timeout", "");
  args.pass_memory_limit = inv.value("pass-memory-limit", "");
  args.passes = inv.all("pass");
  args.before = inv.value("before", "");
  args.sources = sources;
  return run_plugin_check_command(args, out, err);
}

// fx reduce FILE --pipeline TEXT
int run_reduce(Invocation& inv, const host::PluginSources& sources,
               std::ostream& out, std::ostream& err) {
  ReduceArgs args;
  args.input = inv.positional[0];
  args.pipeline = inv.value("pipeline", "");
  args.output = inv.value("output", "");
  args.inputs = inv.value("inputs", "");
  args.isolate = inv.flag("isolate");
  args.no_isolate = inv.flag("no-isolate");
  args.pass_timeout = inv.value("pass-timeout", "");
  args.pass_memory_limit = inv.value("pass-memory-limit", "");
  args.sources = sources;
  return run_reduce_command(args, out, err);
}

// fx print / tabular / code FILE
int run_graph_command(Invocation& inv, std::ostream& out, std::ostream& err) {
  const std::string& command = inv.command;
  std::string lang = inv.value("lang", "python");
  if (command == "code" && lang != "python" && lang != "cpp") {
    err << "fx code: unknown language '" << lang
        << "' (expected python or cpp)\n";
    return 2;
  }
  GraphFile file;
  if (!load(inv.positional[0], &file, err)) return 1;
  if (command == "print") {
    out << file.graph->str() << "\n";
  } else if (command == "tabular") {
    out << file.graph->tabular();
  } else if (lang == "python") {
    out << file.graph->python_code("self").src;
  } else {
    std::vector<CppModule> modules;
    for (const auto& [path, spec] : file.modules) {
      modules.push_back({path, spec.type, spec.config});
    }
    try {
      out << gen_cpp_code(*file.graph, modules,
                          inv.value("name", "fx_generated"));
    } catch (const FxError& e) {
      err << "fx code: " << inv.positional[0] << ": " << e.what() << "\n";
      return 1;
    }
  }
  out.flush();
  return out ? 0 : 1;
}

// fx minimize FILE --inputs IN.pt (--pipeline TEXT | --config CONF.json) ...
int run_minimize(Invocation& inv, const host::PluginSources& sources,
                 std::ostream& out, std::ostream& err) {
  MinimizeArgs m;
  m.input = inv.positional[0];
  m.inputs = inv.value("inputs", "");
  m.pipeline = inv.value("pipeline", "");
  m.config = inv.value("config", "");
  m.mode = inv.value("mode", "");
  m.atol = inv.value("atol", "");
  m.rtol = inv.value("rtol", "");
  m.find_all = inv.flag("find-all");
  m.isolate = inv.flag("isolate");
  m.no_isolate = inv.flag("no-isolate");
  m.pass_timeout = inv.value("pass-timeout", "");
  m.pass_memory_limit = inv.value("pass-memory-limit", "");
  m.sources = sources;
  return run_minimize_command(m, out, err);
}

// Runs a parsed command.
int run_invocation(Invocation& inv, std::ostream& out, std::ostream& err) {
  const std::string& command = inv.command;
  if ((command == "demo" || command == "plugins" || command == "pipelines") &&
      !inv.positional.empty()) {
    err << "fx " << command << ": takes no FILE\n" << kUsage;
    return 2;
  }
  if (command == "demo") return run_demo(out, err);
  if (command == "pipelines") return run_pipelines_command(out);
  host::PluginSources sources;
  sources.plugins = inv.all("plugin");
  sources.plugin_dirs = inv.all("plugin-dir");
  sources.default_dirs = !inv.flag("no-default-plugins");
  if (command == "plugins") {
    return run_plugins_command(sources, out, err, inv.flag("isolate"));
  }
  if (inv.positional.size() != 1) {
    err << "fx " << command << ": expected one FILE, got "
        << inv.positional.size() << "\n"
        << kUsage;
    return 2;
  }
  if (command == "exec") return run_exec(inv, sources, out, err);
  if (command == "dot") return run_dot(inv, sources, out, err);
  if (command == "run") return run_run(inv, sources, out, err);
  if (command == "minimize") return run_minimize(inv, sources, out, err);
  if (command == "plugin-check") {
    return run_plugin_check(inv, sources, out, err);
  }
  if (command == "reduce") return run_reduce(inv, sources, out, err);
  return run_graph_command(inv, out, err);
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
bool apply_file_limit(Invocation& inv, std::optional<FileLimit>* limit,
                      std::ostream& err) {
  if (!inv.values.count("max-file-bytes")) return true;
  std::string text = inv.value("max-file-bytes", "");
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
