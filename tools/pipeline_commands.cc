#include "tools/pipeline_commands.h"

#include <unistd.h>

#include <boost/filesystem.hpp>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "fx_core/format/graph_json.h"
#include "fx_core/io/atomic_file.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/support/strings.h"
#include "plugin_api/capi/pass_options.h"
#include "plugin_api/loader/plugin_loader.h"
#include "plugin_api/pipeline/pass_manager.h"
#include "plugin_api/pipeline/pass_registry.h"
#include "plugin_api/pipeline/pipeline.h"

namespace fx::tools {
namespace {

namespace fs = boost::filesystem;
using host::PassRegistry;
using host::Plugin;

}  // namespace

std::vector<std::string> default_plugin_dirs() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("FX_PLUGIN_PATH")) {
    for (std::string_view d : split(path, ':')) {
      if (!d.empty()) dirs.emplace_back(d);
    }
  }
  // The first-party plugins beside the fx binary (bazel run / bazel-bin) or
  // in a test's runfiles.
  std::vector<std::string> candidates;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    candidates.push_back(std::string(exe, n) + ".runfiles/fx_sdk/plugins");
  }
  if (const char* runfiles = std::getenv("RUNFILES_DIR")) {
    candidates.push_back(std::string(runfiles) + "/fx_sdk/plugins");
  }
  if (const char* srcdir = std::getenv("TEST_SRCDIR")) {
    candidates.push_back(std::string(srcdir) + "/fx_sdk/plugins");
  }
  boost::system::error_code ec;
  for (const std::string& c : candidates) {
    if (fs::is_directory(c, ec)) {
      dirs.push_back(c);
      break;
    }
  }
  return dirs;
}

namespace {

// Loads plugins into `registry`, each file once (by its canonical path).
class Loader {
 public:
  explicit Loader(PassRegistry& registry) : registry_(registry) {}

  absl::Status file(const std::string& path, const std::string& sha256 = "") {
    boost::system::error_code ec;
    std::string key = fs::canonical(path, ec).string();
    if (ec) key = path;
    if (!seen_.insert(key).second) return absl::OkStatus();
    auto plugin = host::load_plugin(path, sha256);
    if (!plugin.ok()) return plugin.status();
    return registry_.add(*std::move(plugin));
  }

  absl::Status directory(const std::string& dir) {
    absl::StatusOr<std::vector<std::string>> files = host::plugin_files(dir);
    if (!files.ok()) return files.status();
    for (const std::string& f : *files) {
      absl::Status s = file(f);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status sources(const PluginSources& sources) {
    for (const std::string& p : sources.plugins) {
      absl::Status s = file(p);
      if (!s.ok()) return s;
    }
    for (const std::string& d : sources.plugin_dirs) {
      absl::Status s = directory(d);
      if (!s.ok()) return s;
    }
    if (sources.default_dirs) {
      for (const std::string& d : default_plugin_dirs()) {
        absl::Status s = directory(d);
        if (!s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

 private:
  PassRegistry& registry_;
  std::set<std::string> seen_;
};

}  // namespace

absl::Status load_plugins(const PluginSources& sources,
                          host::PassRegistry& registry) {
  return Loader(registry).sources(sources);
}

namespace {

std::string names(const FxNameList& list) {
  std::vector<std::string> out;
  for (size_t i = 0; i < list.count; ++i) out.emplace_back(list.names[i]);
  return join(out, ", ");
}

}  // namespace

int run_pipeline_command(const RunArgs& args, std::ostream& out,
                         std::ostream& err, bool write_output);

int run_plugins_command(const PluginSources& sources, std::ostream& out,
                        std::ostream& err) {
  PassRegistry registry;
  Loader loader(registry);
  absl::Status loaded = loader.sources(sources);
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
    const FxPluginInfo& info = plugin->info();
    out << "plugin " << info.name << " " << info.version << " (API "
        << info.api_version << ", runs on API >= " << info.min_api_version
        << ")\n"
        << "  file:   " << plugin->path() << "\n"
        << "  sha256: " << plugin->sha256() << "\n";
    for (size_t p = 0; p < info.num_passes; ++p) {
      const FxPassInfo& pass = info.passes[p];
      out << "  pass " << pass.name << ": "
          << (pass.description ? pass.description : "") << "\n";
      for (size_t o = 0; o < pass.num_options; ++o) {
        const FxOptionSpec& spec = pass.options[o];
        out << "    option " << spec.name << " ("
            << host::option_type_name(spec.type) << ", default '"
            << (spec.default_value ? spec.default_value : "") << "')"
            << (spec.description && *spec.description
                    ? cat(": ", spec.description)
                    : std::string())
            << "\n";
      }
      for (auto [list, what] : {std::pair{&pass.run_after, "run after"},
                                {&pass.run_before, "run before"},
                                {&pass.required, "requires"},
                                {&pass.produces, "produces"},
                                {&pass.invalidates, "invalidates"}}) {
        if (list->count > 0)
          out << "    " << what << ": " << names(*list) << "\n";
      }
    }
  }
  return 0;
}

int run_pipeline_command(const RunArgs& args, std::ostream& out,
                         std::ostream& err) {
  return run_pipeline_command(args, out, err, /*write_output=*/true);
}

int run_pipeline_command(const RunArgs& args, std::ostream& out,
                         std::ostream& err, bool write_output) {
  if (args.pipeline.empty() == args.config.empty()) {
    err << "fx run: give exactly one of --pipeline TEXT and --config "
           "CONF.json\n";
    return 2;
  }
  if (write_output && args.output.empty()) {
    err << "fx run: -o OUT.fx.json is required\n";
    return 2;
  }
  absl::StatusOr<host::PipelineSpec> spec =
      args.config.empty() ? host::parse_pipeline_text(args.pipeline)
                          : host::read_pipeline_config(args.config);
  if (!spec.ok()) {
    err << "fx run: " << spec.status().message() << "\n";
    return 2;
  }
  if (!args.print_after.empty()) {
    if (args.print_after == "all") {
      spec->print_after_all = true;
    } else {
      for (std::string_view p : split(args.print_after, ',')) {
        spec->print_after.emplace_back(p);
      }
    }
  }
  if (!args.reproducer_dir.empty()) spec->reproducer_dir = args.reproducer_dir;
  if (!args.on_failure.empty()) {
    absl::StatusOr<host::FailurePolicy> policy =
        host::parse_failure_policy(args.on_failure);
    if (!policy.ok()) {
      err << "fx run: --on-failure: " << policy.status().message() << "\n";
      return 2;
    }
    spec->on_failure = *policy;
  }
  if (!args.ordering.empty()) {
    absl::StatusOr<host::Ordering> ordering =
        host::parse_ordering(args.ordering);
    if (!ordering.ok()) {
      err << "fx run: --ordering: " << ordering.status().message() << "\n";
      return 2;
    }
    spec->ordering = *ordering;
  }

  PassRegistry registry;
  Loader loader(registry);
  absl::Status loaded = absl::OkStatus();
  for (const host::PluginReference& ref : spec->plugins) {
    if (loaded.ok()) loaded = loader.file(ref.path, ref.sha256);
  }
  for (const std::string& dir : spec->plugin_dirs) {
    if (loaded.ok()) loaded = loader.directory(dir);
  }
  if (loaded.ok()) loaded = loader.sources(args.sources);
  if (!loaded.ok()) {
    err << "fx run: " << loaded.message() << "\n";
    return 1;
  }
  absl::StatusOr<host::PassManager> pm =
      host::PassManager::create(registry, *std::move(spec));
  if (!pm.ok()) {
    err << "fx run: " << pm.status().message() << "\n";
    return 2;
  }

  absl::StatusOr<GraphFile> file = read_graph_file(args.input);
  if (!file.ok()) {
    err << "fx run: " << file.status().message() << "\n";
    return 1;
  }
  std::shared_ptr<GraphModule> module;
  std::unique_ptr<host::PassTarget> target;
  if (!file->weights.empty()) {
    auto gm = load_graph_module(*std::move(file));
    if (!gm.ok()) {
      err << "fx run: " << args.input << ": " << gm.status().message() << "\n";
      return 1;
    }
    module = *std::move(gm);
    std::vector<at::Tensor> examples;
    if (!args.inputs.empty()) {
      auto inputs = read_value_file(args.inputs);
      if (!inputs.ok()) {
        err << "fx run: " << inputs.status().message() << "\n";
        return 1;
      }
      std::vector<c10::IValue> items =
          inputs->isList()    ? inputs->toListRef().vec()
          : inputs->isTuple() ? std::vector<c10::IValue>(
                                    inputs->toTupleRef().elements().begin(),
                                    inputs->toTupleRef().elements().end())
                              : std::vector<c10::IValue>{*inputs};
      for (const c10::IValue& v : items) {
        if (!v.isTensor()) {
          err << "fx run: " << args.inputs
              << ": example inputs must be tensors (torch.save([x, ...]))\n";
          return 1;
        }
        examples.push_back(v.toTensor());
      }
    }
    target =
        std::make_unique<host::GraphModuleTarget>(*module, std::move(examples));
  } else {
    if (!args.inputs.empty()) {
      err << "fx run: --inputs needs a graph file with weights (a bundle)\n";
      return 2;
    }
    target = std::make_unique<host::GraphFileTarget>(*file);
  }

  host::RunHooks hooks;
  hooks.print_after = &out;
  if (args.progress) {
    hooks.progress = [&err](size_t i, size_t n, std::string_view pass) {
      err << "[" << i << "/" << n << "] " << pass << "\n";
    };
  }
  host::PipelineReport report = pm->run(*target, hooks);
  if (args.timing) out << report.summary();
  if (!report.ok()) {
    err << "fx run: " << report.failure << "\n";
    if (!report.reproducer.empty()) {
      err << "fx run: reproducer written to " << report.reproducer << "\n";
    }
    if (report.stopped) {
      err << "fx run: the pipeline stopped; " << args.output
          << " was not written\n";
      return 1;
    }
  }
  if (!write_output) return 0;
  boost::system::error_code ec;
  fs::path parent = fs::path(args.output).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  absl::Status written = target->write(args.output);
  if (!written.ok()) {
    err << "fx run: " << written.message() << "\n";
    return 1;
  }
  return 0;
}

int run_dot_command(const DotArgs& args, std::ostream& out, std::ostream& err) {
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
  run.output = "";
  std::ostringstream ignored;
  int status = run_pipeline_command(run, ignored, err, /*write_output=*/false);
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
