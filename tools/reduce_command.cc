#include "tools/reduce_command.h"

#include <boost/filesystem.hpp>
#include <exception>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/io/output_rule.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/strings.h"
#include "host/minimizer/graph_reducer.h"
#include "host/minimizer/pipeline_probe.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pass_target.h"
#include "host/pipeline/pipeline.h"
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

// The files fx reduce reads.
FilesRead files_read(const ReduceArgs& args, const GraphFile& file) {
  FilesRead reads;
  reads.add(args.input, "the graph");
  reads.add(weights_path(file), cat("the weights of ", args.input));
  reads.add(args.inputs, "--inputs");
  return reads;
}

// The one output rule (fx_core/io/output_rule.h): OUT, and the weights
// written beside it when the input has weights, are not the files read.
absl::Status check_output(const FilesRead& reads, const GraphFile& file,
                          const std::string& output) {
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

// ------------------------------------------------------------- --inputs

// What each node of FILE computed on one batch of --inputs, by node name
// (an original placeholder also by its target).
using NodeValues = std::map<std::string, at::Tensor>;

GraphFile copy_of(const GraphFile& file) {
  GraphFile copy;
  copy.graph = file.graph->snapshot();
  copy.modules = file.modules;
  copy.weights = file.weights;
  copy.weight_kinds = file.weight_kinds;
  copy.shape_env = file.shape_env;
  copy.directory = file.directory;
  return copy;
}

// The items of a list or tuple value, or the value itself.
std::vector<c10::IValue> items_of(const c10::IValue& v) {
  if (v.isList() || v.isTuple()) return sequence_elements(v);
  return {v};
}

// --inputs as batches (one, or the file's list of them), each item a
// tensor.
absl::StatusOr<std::vector<std::vector<c10::IValue>>> read_batches(
    const std::string& path) {
  absl::StatusOr<c10::IValue> value = read_value_file(path);
  if (!value.ok()) return value.status();
  std::vector<c10::IValue> items = items_of(*value);
  bool several = !items.empty() && (items[0].isList() || items[0].isTuple());
  std::vector<std::vector<c10::IValue>> batches;
  if (!several) batches.push_back(items);
  for (size_t b = 0; several && b < items.size(); ++b) {
    batches.push_back(items_of(items[b]));
  }
  for (size_t b = 0; b < batches.size(); ++b) {
    for (const c10::IValue& v : batches[b]) {
      if (v.isTensor()) continue;
      return absl::InvalidArgumentError(
          cat(path,
              ": example inputs must be tensors (torch.save([x, ...])) or "
              "batches of them (torch.save([[x1, ...], [x2, ...]])); ",
              several ? cat("batch ", b, " holds ") : "it holds ", "a ",
              v.tagKind()));
    }
  }
  return batches;
}

// Runs `module` on `batch`, keeping every node's value.
absl::StatusOr<NodeValues> node_values(GraphModule& module,
                                       std::vector<c10::IValue> batch) {
  Interpreter interpreter(module, /*garbage_collect_values=*/false);
  try {
    interpreter.run(std::move(batch));
  } catch (const std::exception& e) {
    return absl::FailedPreconditionError(e.what());
  }
  NodeValues values;
  for (const auto& [node, value] : interpreter.env()) {
    if (!value.isTensor()) continue;
    values.emplace(node->name(), value.toTensor());
    if (node->op() == Opcode::kPlaceholder) {
      values.emplace(node->target(), value.toTensor());
    }
  }
  return values;
}

// What every node of `file` computes on each batch of --inputs.
absl::StatusOr<std::vector<NodeValues>> example_values(const ReduceArgs& args,
                                                       const GraphFile& file) {
  auto batches = read_batches(args.inputs);
  if (!batches.ok()) return batches.status();
  auto module = load_graph_module(copy_of(file));
  if (!module.ok()) {
    return absl::FailedPreconditionError(
        cat(args.input, ": ", std::string(module.status().message()),
            " (--inputs needs a graph that runs)"));
  }
  std::vector<NodeValues> values;
  for (size_t b = 0; b < batches->size(); ++b) {
    auto one = node_values(**module, (*batches)[b]);
    if (!one.ok()) {
      return absl::FailedPreconditionError(
          cat(args.input, " does not run on ", args.inputs,
              batches->size() > 1 ? cat(" (batch ", b, ")") : "", ": ",
              std::string(one.status().message())));
    }
    values.push_back(*std::move(one));
  }
  return values;
}

// What a candidate's placeholder stands for: the original placeholder of
// its target, else the node N whose place it took (graph_reducer.cc names
// such a placeholder `N_input`); nullptr when no tensor is known.
const at::Tensor* fed(const Node& placeholder, const NodeValues& values) {
  constexpr std::string_view kSuffix = "_input";
  const std::string& target = placeholder.target();
  auto it = values.find(target);
  if (it != values.end()) return &it->second;
  if (target.size() <= kSuffix.size() ||
      target.compare(target.size() - kSuffix.size(), kSuffix.size(), kSuffix) !=
          0) {
    return nullptr;
  }
  it = values.find(target.substr(0, target.size() - kSuffix.size()));
  return it == values.end() ? nullptr : &it->second;
}

// The example batches for `graph`'s placeholders, or what is missing.
absl::StatusOr<std::vector<std::vector<at::Tensor>>> fed_batches(
    const Graph& graph, const std::vector<NodeValues>& values) {
  std::vector<std::vector<at::Tensor>> batches;
  for (const NodeValues& batch_values : values) {
    std::vector<at::Tensor> batch;
    for (const Node* node : graph.nodes()) {
      if (node->op() != Opcode::kPlaceholder) continue;
      const at::Tensor* tensor = fed(*node, batch_values);
      if (tensor == nullptr) {
        return absl::NotFoundError(
            cat("no example input for placeholder '", node->name(), "'"));
      }
      batch.push_back(*tensor);
    }
    batches.push_back(std::move(batch));
  }
  return batches;
}

// probe_pipeline with example inputs: the candidate runs as a GraphModule
// whose placeholders are fed (fed()); one that cannot be fed or loaded
// gets a category of its own, so it is not kept.
std::string probe_with_inputs(const host::PassManager& pm,
                              const GraphFile& file,
                              const std::vector<NodeValues>& values) {
  auto module = load_graph_module(copy_of(file));
  if (!module.ok()) {
    return cat("the graph does not load: ",
               std::string(module.status().message()));
  }
  auto batches = fed_batches((*module)->graph(), values);
  if (!batches.ok()) return std::string(batches.status().message());
  std::vector<at::Tensor> first = std::move(batches->front());
  batches->erase(batches->begin());
  host::GraphModuleTarget target(**module, std::move(first));
  target.add_example_batches(*std::move(batches));
  return host::failure_category(pm.run(target));
}

// The probe reduce_graph calls: with example inputs when --inputs is given.
absl::StatusOr<host::FailureProbe> make_probe(const ReduceArgs& args,
                                              const host::PassManager& pm,
                                              const GraphFile& file) {
  if (args.inputs.empty()) {
    return host::FailureProbe(
        [&pm](const GraphFile& f) { return host::probe_pipeline(pm, f); });
  }
  absl::StatusOr<std::vector<NodeValues>> values = example_values(args, file);
  if (!values.ok()) return values.status();
  return host::FailureProbe(
      [&pm, values = *std::move(values)](const GraphFile& f) {
        return probe_with_inputs(pm, f, values);
      });
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
  std::string wrong = apply_isolation_flags(args.isolation, *spec);
  if (!wrong.empty()) return fail(err, 2, wrong);
  std::string output =
      args.output.empty() ? default_reduce_output(args.input) : args.output;
  host::PassRegistry registry;
  absl::Status loaded = host::load_plugins(*spec, args.sources, registry);
  if (!loaded.ok()) return fail(err, 1, loaded.message());
  absl::StatusOr<host::PassManager> pm =
      host::PassManager::create(registry, *std::move(spec));
  if (!pm.ok()) return fail(err, 2, pm.status().message());
  if (std::string note = auto_isolation_note(*pm); !note.empty()) {
    err << "fx reduce: " << note << "\n";
  }
  absl::StatusOr<GraphFile> file = read_graph_file(args.input);
  if (!file.ok()) return fail(err, 1, file.status().message());
  const FilesRead reads = files_read(args, *file);
  if (absl::Status rule = check_output(reads, *file, output); !rule.ok()) {
    return fail(err, 2, rule.message());
  }
  // A file a pass writes (WriteOutputFile) obeys the same rule.
  const FilesRead::Published published = reads.publish();
  absl::StatusOr<host::FailureProbe> probe = make_probe(args, *pm, *file);
  if (!probe.ok()) return fail(err, 1, probe.status().message());
  absl::StatusOr<host::ReduceResult> reduced =
      host::reduce_graph(*file, *probe);
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
