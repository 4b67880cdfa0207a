#include "tools/reduce_command.h"

#include <boost/filesystem.hpp>
#include <memory>
#include <utility>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/io/output_rule.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/support/strings.h"
#include "plugin_api/pipeline/graph_reducer.h"
#include "plugin_api/pipeline/pass_manager.h"
#include "plugin_api/pipeline/pass_registry.h"
#include "plugin_api/pipeline/pipeline.h"
#include "plugin_api/pipeline/pipeline_probe.h"
#include "tools/pipeline_commands.h"

namespace fx::tools {
namespace {

template <typename Message>
int fail(std::ostream& err, int status, const Message& message) {
  err << "fx reduce: " << message << "\n";
  return status;
}

// The reduced graph, with the weights it references when it has any.
absl::Status write_reduced(const GraphFile& file, const std::string& path) {
  boost::system::error_code ec;
  boost::filesystem::path parent = boost::filesystem::path(path).parent_path();
  if (!parent.empty()) boost::filesystem::create_directories(parent, ec);
  GraphFile copy;
  copy.graph = file.graph->snapshot();
  copy.modules = file.modules;
  copy.directory = file.directory;
  if (file.weights.empty()) return write_graph_file(path, copy);
  copy.weights = file.weights;
  absl::StatusOr<std::shared_ptr<GraphModule>> module =
      load_graph_module(std::move(copy));
  if (!module.ok()) return module.status();
  return write_graph_module(**module, path);
}

// The one output rule (fx_core/io/output_rule.h): OUT, and the weights
// written beside it when the input has weights, are not the input's files.
absl::Status check_output(const std::string& input, const GraphFile& file,
                          const std::string& output) {
  FilesRead reads;
  reads.add(input, "the graph");
  reads.add(weights_path(file), cat("the weights of ", input));
  std::vector<std::pair<std::string, std::string>> outputs = {{"-o", output}};
  if (!file.weights.empty()) {
    boost::filesystem::path out(output);
    const std::string weights = weights_file_for(output);
    for (const std::string& name : {weights, alternate_weights_name(weights)}) {
      outputs.emplace_back("-o's weights file",
                           (out.parent_path() / name).string());
    }
  }
  return reads.check_outputs(outputs);
}

}  // namespace

std::string default_reduce_output(const std::string& input) {
  std::string base = input;
  for (std::string_view suffix : {".fx.json", ".json"}) {
    if (base.size() > suffix.size() &&
        base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0) {
      base.resize(base.size() - suffix.size());
      break;
    }
  }
  return base + ".reduced.fx.json";
}

int run_reduce_command(const ReduceArgs& args, std::ostream& out,
                       std::ostream& err) {
  if (args.pipeline.empty()) return fail(err, 2, "--pipeline TEXT is required");
  absl::StatusOr<host::PipelineSpec> spec =
      host::parse_pipeline_text(args.pipeline);
  if (!spec.ok()) return fail(err, 2, spec.status().message());
  std::string wrong = apply_isolation_flags(args.isolate, args.pass_timeout,
                                            args.pass_memory_limit, *spec);
  if (!wrong.empty()) return fail(err, 2, wrong);
  std::string output =
      args.output.empty() ? default_reduce_output(args.input) : args.output;
  host::PassRegistry registry;
  absl::Status loaded = host::load_plugins(*spec, args.sources, registry);
  if (!loaded.ok()) return fail(err, 1, loaded.message());
  absl::StatusOr<host::PassManager> pm =
      host::PassManager::create(registry, *std::move(spec));
  if (!pm.ok()) return fail(err, 2, pm.status().message());
  absl::StatusOr<GraphFile> file = read_graph_file(args.input);
  if (!file.ok()) return fail(err, 1, file.status().message());
  if (absl::Status rule = check_output(args.input, *file, output); !rule.ok()) {
    return fail(err, 2, rule.message());
  }
  absl::StatusOr<host::ReduceResult> reduced = host::reduce_graph(
      *file, [&](const GraphFile& f) { return host::probe_pipeline(*pm, f); });
  if (!reduced.ok()) {
    return fail(err, 1,
                cat(args.input, ": ", std::string(reduced.status().message())));
  }
  absl::Status written = write_reduced(reduced->file, output);
  if (!written.ok()) return fail(err, 1, written.message());
  out << "reduced " << args.input << " from " << reduced->nodes_before << " to "
      << reduced->nodes_after << " nodes (" << reduced->attempts
      << " candidates tried); the failure: " << reduced->failure << "\n"
      << "written to " << output << "\n";
  return 0;
}

}  // namespace fx::tools
