// torch.fx's own passes as first-party plugins (issue 36) on graphs of about
// 100k nodes: each must run in linear or near-linear time, none above 1 s.
//
//   bazel run --config=opt //tools/bench:torch_passes_benchmark
//
// Under valgrind, one iteration of one pass, timed part only (one command):
//   FX_TORCH_PASSES_ITERATIONS=1 valgrind --tool=callgrind
//     --toggle-collect='fx::host::PassManager::run*'
//     torch_passes_benchmark --benchmark_filter=reinplace
//
// Each iteration builds a fresh GraphModule (not timed) and runs one pass
// through the PassManager as `fx run` does (snapshot, the pass, lint,
// change detection, commit; no recompile), on graphs where the pass has the
// most to do:
//  - fuse: 25k Conv2d -> BatchNorm2d -> relu triples, every pair folded;
//  - remove_dropout: 50k calls of one Dropout, each removed;
//  - merge_matmul: 33k torch.matmul calls sharing one weight, one group
//    merged (one cat, one matmul, 33k getitems) and the graph sorted;
//  - merge_matmul{all_groups=true}: 20k groups of two matmuls sharing a
//    node, all merged, the graph sorted once;
//  - extract_subgraph: the matmul graph from its first add to its last (33k
//    iterations), every node but one copied, the old ones erased and all
//    renamed;
//  - split_by_tags: the matmul graph's nodes tagged t0 .. t9 by position in
//    meta['tag'] (ten components in a chain), every node moved into its
//    component and the main graph rebuilt;
//  - accelerator_partition: a 100k relu / sin chain of float32[4] values
//    (tensor_meta on every node), size_based over twelve devices of 180k
//    bytes: ten partitions, the graph split into ten submodules;
//  - normalize_args, normalize_operators, annotate_types_with_schema: 25k
//    blocks of F.relu, torch.flatten, torch.add, F.dropout: every call
//    rewritten (normalize_args), every torch.add made operator.add and
//    every F call typed (normalize_operators), every F call typed;
//  - gradual_typecheck: 20k blocks of one Conv2d, BatchNorm2d and ReLU
//    module, torch.add and torch.transpose on an input typed
//    TensorType((Dyn, 3, 32, 32)): every node typed (and its graph text);
//    gradual_typecheck,unify_refinements: then a variable for each Dyn
//    (the batch of every node), about 260k constraints unified, every type
//    rewritten; unify_refinements alone, and with rounds=2 and
//    symbolic_relations (infer_symbolic_types), on the type-checked graph;
//  - accelerator_partition's sparse_nn (a dense chain with ten embedding
//    calls) and aot_based (every call node's partition given) on 100k
//    nodes; cost_aware and kl_based (as by default and as torch 1.13 does
//    it) on 25 to 256 / 400 nodes (below);
//  - param_fetch on the 50k modules of the conv / bn chain;
//    get_size_of_all_nodes and replace_target_nodes_with (relu -> sigmoid)
//    on the relu / sin chain.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module_file.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pipeline.h"

namespace {

using Build = std::function<fx::GraphFile(int64_t, fx::TensorList*)>;

const fx::host::PassRegistry& registry() {
  static fx::host::PassRegistry* r = [] {
    auto* out = new fx::host::PassRegistry();
    auto plugin = fx::host::load_plugin("plugins/libfx_optimization.so");
    absl::Status added =
        plugin.ok() ? out->add(*plugin) : absl::Status(plugin.status());
    if (!added.ok()) {
      fprintf(stderr, "%s\n", std::string(added.message()).c_str());
      std::abort();
    }
    return out;
  }();
  return *r;
}

fx::ModuleSpec module(const char* type, fx::ArgumentDict config) {
  fx::ModuleSpec spec;
  spec.type = type;
  spec.config = std::move(config);
  return spec;
}

// x -> conv_i -> bn_i -> relu -> ... (3 nodes per triple), the modules in
// stages of 128 pairs ("s3.conv5", "s3.bn5") as a model nests them. (A
// flat root with tens of thousands of children would measure LibTorch's
// child lookup instead: Module::named_children() copies every child, so
// fx::child_named is linear in the number of siblings.)
fx::GraphFile conv_bn_chain(int64_t nodes, fx::TensorList* weights) {
  fx::GraphFile file;
  file.graph = std::make_unique<fx::Graph>();
  fx::Graph& g = *file.graph;
  fx::Node* x = g.placeholder("x");
  for (int64_t i = 0; 3 * i + 2 < nodes; ++i) {
    std::string stage = "s" + std::to_string(i / 128) + ".";
    std::string conv = stage + "conv" + std::to_string(i % 128);
    std::string bn = stage + "bn" + std::to_string(i % 128);
    file.modules.emplace_back(
        conv, module("torch.nn.Conv2d", {{"in_channels", fx::Argument(1)},
                                         {"out_channels", fx::Argument(1)},
                                         {"kernel_size", fx::Argument(1)}}));
    file.modules.emplace_back(
        bn, module("torch.nn.BatchNorm2d", {{"num_features", 1}}));
    weights->emplace_back(conv + ".weight", at::full({1, 1, 1, 1}, 0.5));
    weights->emplace_back(conv + ".bias", at::full({1}, 0.1));
    weights->emplace_back(bn + ".weight", at::full({1}, 1.5));
    weights->emplace_back(bn + ".bias", at::full({1}, 0.2));
    weights->emplace_back(bn + ".running_mean", at::full({1}, 0.3));
    weights->emplace_back(bn + ".running_var", at::full({1}, 2.0));
    weights->emplace_back(bn + ".num_batches_tracked",
                          at::zeros({}, at::kLong));
    x = g.call_module(conv, {x});
    x = g.call_module(bn, {x});
    x = g.call_method("relu", {x});
  }
  g.output(x);
  return file;
}

// x -> drop -> relu -> drop -> ... (one Dropout module, called each time).
fx::GraphFile dropout_chain(int64_t nodes, fx::TensorList*) {
  fx::GraphFile file;
  file.graph = std::make_unique<fx::Graph>();
  file.modules.emplace_back("drop", module("torch.nn.Dropout", {{"p", 0.5}}));
  fx::Graph& g = *file.graph;
  fx::Node* x = g.placeholder("x");
  for (int64_t i = 0; 2 * i + 2 < nodes; ++i) {
    x = g.call_module("drop", {x});
    x = g.call_method("relu", {x});
  }
  g.output(x);
  return file;
}

// acc = acc + torch.matmul(x.relu(), w), each matmul on the weight w.
fx::GraphFile shared_weight_matmuls(int64_t nodes, fx::TensorList* weights) {
  fx::GraphFile file;
  file.graph = std::make_unique<fx::Graph>();
  weights->emplace_back("w", at::ones({4, 4}));
  fx::Graph& g = *file.graph;
  fx::Node* x = g.placeholder("x");
  fx::Node* w = g.get_attr("w");
  fx::Node* acc = x;
  for (int64_t i = 0; 3 * i + 3 < nodes; ++i) {
    fx::Node* lhs = g.call_method("relu", {x});
    fx::Node* mm = g.call_function("torch.matmul", {lhs, w});
    acc = g.call_function("operator.add", {acc, mm});
  }
  g.output(acc);
  return file;
}

// Groups of two: t = x.t(); torch.matmul(x.relu(), t) + torch.matmul(
// x.sin(), t), summed into acc.
fx::GraphFile node_sharing_pairs(int64_t nodes, fx::TensorList*) {
  fx::GraphFile file;
  file.graph = std::make_unique<fx::Graph>();
  fx::Graph& g = *file.graph;
  fx::Node* x = g.placeholder("x");
  fx::Node* acc = x;
  for (int64_t i = 0; 7 * i + 2 < nodes; ++i) {
    fx::Node* t = g.call_method("t", {x});
    fx::Node* a = g.call_function(
        "torch.matmul", {g.call_method("relu", {x}), fx::Argument(t)});
    fx::Node* b = g.call_function("torch.matmul",
                                  {g.call_method("sin", {x}), fx::Argument(t)});
    acc = g.call_function("operator.add",
                          {g.call_function("operator.add", {acc, a}), b});
  }
  g.output(acc);
  return file;
}

// shared_weight_matmuls with each call node's meta['tag'] t0 .. t9 by its
// position: ten components, each reading the one before.
fx::GraphFile tagged_matmuls(int64_t nodes, fx::TensorList* weights) {
  fx::GraphFile file = shared_weight_matmuls(nodes, weights);
  std::vector<fx::Node*> calls;
  for (fx::Node* n : file.graph->nodes()) {
    if (n->op() == fx::Opcode::kCallFunction ||
        n->op() == fx::Opcode::kCallMethod) {
      calls.push_back(n);
    }
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    calls[i]->set_meta(
        "tag", fx::Argument("t" + std::to_string(i * 10 / calls.size())));
  }
  return file;
}

// x.relu() and x.sin() in alternating blocks of 1000 calls, each with the
// meta['type'] and meta['tensor_meta'] shape_prop writes.
fx::GraphFile relu_sin_blocks(int64_t nodes, fx::TensorList*) {
  fx::GraphFile file;
  file.graph = std::make_unique<fx::Graph>();
  fx::Graph& g = *file.graph;
  fx::Node* x = g.placeholder("x");
  fx::ArgumentDict fields;
  fields.emplace_back("shape", fx::Argument::tuple({fx::Argument(4)}));
  const fx::Argument meta = fx::Argument::dict(fields);
  for (int64_t i = 0; i + 2 < nodes; ++i) {
    x = g.call_method((i / 1000) % 2 == 0 ? "relu" : "sin", {x});
    x->set_meta("type", fx::Argument(std::string("torch.Tensor")));
    x->set_meta("tensor_meta", meta);
  }
  g.output(x);
  return file;
}

// relu_sin_blocks with the tensor_meta shape_prop writes (shape and dtype)
// on the placeholder too: accelerator_partition sizes every node.
fx::GraphFile sized_relu_sin_chain(int64_t nodes, fx::TensorList* weights) {
  fx::GraphFile file = relu_sin_blocks(nodes, weights);
  fx::ArgumentDict fields;
  fields.emplace_back("shape", fx::Argument::tuple({fx::Argument(4)}));
  fields.emplace_back("dtype", fx::Argument::dtype("torch.float32"));
  const fx::Argument meta = fx::Argument::dict(fields);
  for (fx::Node* n : file.graph->nodes()) {
    if (n->op() != fx::Opcode::kOutput) n->set_meta("tensor_meta", meta);
  }
  return file;
}

// The tensor_meta shape_prop writes for a float32[4] result.
fx::Argument float4_meta() {
  fx::ArgumentDict fields;
  fields.emplace_back("shape", fx::Argument::tuple({fx::Argument(4)}));
  fields.emplace_back("dtype", fx::Argument::dtype("torch.float32"));
  return fx::Argument::dict(fields);
}

// A model for accelerator_partition's sparse_nn mode: a relu / sin chain
// with an EmbeddingBag call after each tenth of it (every node
// float32[4]). Ten embedding partitions, each a BFS level of its own, so
// torch's sparse_nn keeps them apart and places each with the whole dense
// part (sparse_nn_devices: devices that hold the dense part and one).
fx::GraphFile dense_chain_with_embeddings(int64_t nodes,
                                          fx::TensorList* weights) {
  fx::GraphFile file;
  file.graph = std::make_unique<fx::Graph>();
  file.modules.emplace_back(
      "emb", module("torch.nn.EmbeddingBag",
                    {{"num_embeddings", 1000}, {"embedding_dim", 4}}));
  weights->emplace_back("emb.weight", at::ones({1000, 4}));
  fx::Graph& g = *file.graph;
  fx::Node* x = g.placeholder("x");
  const int64_t tenth = std::max<int64_t>(1, (nodes - 2) / 10);
  for (int64_t i = 1; i + 2 < nodes; ++i) {
    x = i % tenth == 0
            ? g.call_module("emb", {x})
            : g.call_method((i / 1000) % 2 == 0 ? "relu" : "sin", {x});
  }
  g.output(x);
  const fx::Argument meta = float4_meta();
  for (fx::Node* n : g.nodes()) {
    if (n->op() != fx::Opcode::kOutput) n->set_meta("tensor_meta", meta);
  }
  return file;
}

// accelerator_partition's options naming every call node of `g`: each
// call's latency (NODE:MEM:COMPUTE, a microsecond each) and, for
// aot_based, its partition (ten partitions in graph order, partition K on
// device K).
std::string latencies_of(const fx::Graph& g) {
  std::string out = "node_to_latency_mapping=";
  const char* sep = "";
  for (const fx::Node* n : g.nodes()) {
    if (n->op() == fx::Opcode::kPlaceholder || n->op() == fx::Opcode::kOutput) {
      continue;
    }
    out.append(sep).append(n->name()).append(":0.000001:0.000001");
    sep = ",";
  }
  return out;
}
std::string aot_partitions_of(const fx::Graph& g) {
  std::vector<const fx::Node*> calls;
  for (const fx::Node* n : g.nodes()) {
    if (n->op() != fx::Opcode::kPlaceholder && n->op() != fx::Opcode::kOutput) {
      calls.push_back(n);
    }
  }
  std::string out = "node_to_partition_mapping=";
  for (size_t i = 0; i < calls.size(); ++i) {
    out.append(i == 0 ? "" : ",")
        .append(calls[i]->name())
        .append(":")
        .append(std::to_string(i * 10 / calls.size()));
  }
  out.append(",partition_to_logical_device_mapping=");
  for (int k = 0; k < 10; ++k) {
    out.append(k == 0 ? "" : ",").append(std::to_string(k)).append(":");
    out.append(std::to_string(k));
  }
  return out;
}

// Twelve devices of `bytes` each, as accelerator_partition spells them
// (a float32[4] chain of n nodes needs 16n bytes: devices of 2n bytes hold
// it on eight of them, not on one).
std::string devices_of(int64_t bytes) {
  std::string out = "devices=";
  for (int k = 0; k < 12; ++k) {
    out.append(k == 0 ? "" : ",").append("d").append(std::to_string(k));
    out.append(":").append(std::to_string(bytes)).append(":");
    out.append(std::to_string(k));
  }
  return out;
}

// Devices for dense_chain_with_embeddings: each holds the dense part (16
// bytes a node, the inputs partitions read from others on top) and one
// embedding call (16 kB of weight and its result), not the whole graph.
std::string sparse_nn_devices(const fx::Graph& g) {
  return devices_of(16 * static_cast<int64_t>(g.size()) + 16016 + 65536);
}

// A functional ATen graph as make_fx(functionalize(f)) writes one, in blocks
// of five: a = add(y, 1); v = slice(a, 0, 0, 2); m = mul(v, 2);
// s = slice_scatter(a, m, 0, 0, 2); y = relu(s). reinplace writes every add,
// mul and relu in place and erases every slice_scatter. The placeholder
// carries the tensor_meta shape_prop writes (the pass's sample input).
fx::GraphFile functional_blocks(int64_t nodes, fx::TensorList*) {
  fx::GraphFile file;
  file.graph = std::make_unique<fx::Graph>();
  fx::Graph& g = *file.graph;
  fx::Node* x = g.placeholder("x_1");
  fx::ArgumentDict fields;
  fields.emplace_back("shape", fx::Argument::tuple({fx::Argument(4)}));
  fields.emplace_back("dtype", fx::Argument::dtype("torch.float32"));
  fields.emplace_back("stride", fx::Argument::tuple({fx::Argument(1)}));
  x->set_meta("tensor_meta", fx::Argument::dict(fields));
  fx::Node* y = g.call_function("torch.ops.aten.clone.default", {x});
  for (int64_t i = 0; 5 * i + 8 < nodes; ++i) {
    fx::Node* a = g.call_function("torch.ops.aten.add.Tensor", {y, 1});
    fx::Node* v = g.call_function("torch.ops.aten.slice.Tensor", {a, 0, 0, 2});
    fx::Node* m = g.call_function("torch.ops.aten.mul.Tensor", {v, 2});
    fx::Node* s = g.call_function("torch.ops.aten.slice_scatter.default",
                                  {a, m, 0, 0, 2});
    y = g.call_function("torch.ops.aten.relu.default", {s});
  }
  g.output(y);
  return file;
}

// Blocks of four calls normalize_args rewrites, each with the meta['type']
// shape_prop writes: F.relu(x) (a Python signature), torch.flatten(x, 0)
// (one ATen overload binds), torch.add(x, 1.5) (several bind: told apart
// by the arguments' types) and F.dropout(x, 0.1, False); normalize_operators
// and annotate_types_with_schema type every F call and normalize_operators
// rewrites every torch.add.
fx::GraphFile functional_calls(int64_t nodes, fx::TensorList*) {
  fx::GraphFile file;
  file.graph = std::make_unique<fx::Graph>();
  fx::Graph& g = *file.graph;
  fx::Node* x = g.placeholder("x");
  const fx::Argument tensor(std::string("torch.Tensor"));
  for (int64_t i = 0; 4 * i + 5 < nodes; ++i) {
    x = g.call_function("torch.nn.functional.relu", {x});
    x->set_meta("type", tensor);
    x = g.call_function("torch.flatten", {x, 0});
    x->set_meta("type", tensor);
    x = g.call_function("torch.add", {x, 1.5});
    x->set_meta("type", tensor);
    x = g.call_function("torch.nn.functional.dropout", {x, 0.1, false});
    x->set_meta("type", tensor);
  }
  g.output(x);
  return file;
}

// x : TensorType((Dyn, 3, 32, 32)) -> conv -> bn -> relu -> add(., x) ->
// transpose(., 2, 3) -> ..., one module of each kind called every time
// (a 3x3 convolution padded by 1 keeps the shape).
fx::GraphFile typed_conv_blocks(int64_t nodes, fx::TensorList* weights) {
  fx::GraphFile file;
  file.graph = std::make_unique<fx::Graph>();
  const fx::Argument pair = fx::Argument::tuple({fx::Argument(1), 1});
  file.modules.emplace_back(
      "conv",
      module("torch.nn.Conv2d",
             {{"in_channels", fx::Argument(3)},
              {"out_channels", fx::Argument(3)},
              {"kernel_size", fx::Argument::tuple({fx::Argument(3), 3})},
              {"stride", pair},
              {"padding", pair},
              {"dilation", pair},
              {"groups", fx::Argument(1)}}));
  file.modules.emplace_back(
      "bn", module("torch.nn.BatchNorm2d", {{"num_features", 3}}));
  file.modules.emplace_back("relu", module("torch.nn.ReLU", {}));
  weights->emplace_back("conv.weight", at::full({3, 3, 3, 3}, 0.1));
  weights->emplace_back("conv.bias", at::zeros({3}));
  weights->emplace_back("bn.weight", at::ones({3}));
  weights->emplace_back("bn.bias", at::zeros({3}));
  weights->emplace_back("bn.running_mean", at::zeros({3}));
  weights->emplace_back("bn.running_var", at::ones({3}));
  weights->emplace_back("bn.num_batches_tracked", at::zeros({}, at::kLong));
  fx::Graph& g = *file.graph;
  fx::Node* x = g.placeholder("x");
  x->set_type(
      "torch.fx.tensor_type.TensorType[torch.fx.tensor_type._DynType,_3,_32,"
      "_32]",
      "TensorType[(Dyn, 3, 32, 32)]");
  for (int64_t i = 0; 5 * i + 7 < nodes; ++i) {
    fx::Node* y = g.call_module("conv", {x});
    y = g.call_module("bn", {y});
    y = g.call_module("relu", {y});
    y = g.call_function("torch.add", {y, x});
    x = g.call_function("torch.transpose", {y, 2, 3});
  }
  g.output(x);
  return file;
}

int64_t env_int(const char* name, int64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoll(value) : fallback;
}

// The graphs' size and the iterations, 100k and 3 unless the environment
// says otherwise (FX_TORCH_PASSES_NODES, FX_TORCH_PASSES_ITERATIONS: a
// smaller or single run under valgrind; extract_subgraph's pipeline names
// nodes of the 100k graph).
const int64_t kNodes = env_int("FX_TORCH_PASSES_NODES", 100000);
const int64_t kIterations = env_int("FX_TORCH_PASSES_ITERATIONS", 3);

// The pass manager of `pipeline`, or the error.
absl::StatusOr<fx::host::PassManager> pass_manager(
    const std::string& pipeline) {
  auto spec = fx::host::parse_pipeline_text(pipeline);
  if (!spec.ok()) return spec.status();
  return fx::host::PassManager::create(registry(), *spec);
}

// A pipeline's text, fixed or written from the graph it runs on (options
// that name every node: a latency per node, a partition per node).
struct PipelineText {
  PipelineText(const char* text) : text(text) {}  // NOLINT: implicit
  explicit PipelineText(std::function<std::string(const fx::Graph&)> f)
      : from_graph(std::move(f)) {}
  std::string of(const fx::Graph& g) const {
    return from_graph ? from_graph(g) : std::string(text);
  }
  const char* text = nullptr;
  std::function<std::string(const fx::Graph&)> from_graph;
};

// `pipeline` timed on the graph `build` makes, after `setup` (when not
// null: passes that make the pipeline's input, run untimed). A pipeline
// written from the graph is parsed, untimed, in each iteration.
void BM_TorchPass(benchmark::State& state, const PipelineText& pipeline,
                  const Build& build, const char* setup = nullptr) {
  std::optional<absl::StatusOr<fx::host::PassManager>> pm;
  if (!pipeline.from_graph) pm.emplace(pass_manager(pipeline.text));
  std::optional<absl::StatusOr<fx::host::PassManager>> before;
  if (setup != nullptr) before.emplace(pass_manager(setup));
  for (const auto* built : {pm ? &*pm : nullptr, before ? &*before : nullptr}) {
    if (built != nullptr && !built->ok()) {
      state.SkipWithError(std::string(built->status().message()).c_str());
      return;
    }
  }
  size_t nodes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fx::TensorList weights;
    fx::GraphFile file = build(state.range(0), &weights);
    nodes = file.graph->size();
    if (pipeline.from_graph) {
      pm.emplace(pass_manager(pipeline.of(*file.graph)));
      if (!pm->ok()) {
        state.SkipWithError(std::string(pm->status().message()).c_str());
        return;
      }
    }
    auto gm = fx::load_graph_module_shared(std::move(file), weights);
    if (!gm.ok()) {
      state.SkipWithError(std::string(gm.status().message()).c_str());
      return;
    }
    auto target = std::make_unique<fx::host::GraphModuleTarget>(
        **gm, std::vector<at::Tensor>{}, false);
    if (before && !(*before)->run(*target).ok()) {
      state.SkipWithError("the setup passes failed");
      return;
    }
    state.ResumeTiming();
    fx::host::PipelineReport report = (*pm)->run(*target);
    if (!report.ok() || !report.passes.at(0).changed) {
      state.SkipWithError(
          ("the pass did not change the graph: " + report.failure).c_str());
      return;
    }
    // Timed: the pass as `fx run` runs it, its commit and the target's
    // finish() (the end of PassManager::run) included. Not timed:
    // freeing the GraphModule the iteration built (a 50k-module model for
    // fuse took a third of the time to destroy).
    state.PauseTiming();
    target.reset();
    gm->reset();
    weights.clear();
    state.ResumeTiming();
  }
  state.counters["nodes"] = static_cast<double>(nodes);
}

BENCHMARK_CAPTURE(BM_TorchPass, fuse, "fuse", conv_bn_chain)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TorchPass, remove_dropout, "remove_dropout", dropout_chain)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TorchPass, merge_matmul, "merge_matmul",
                  shared_weight_matmuls)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TorchPass, merge_matmul_all_groups,
                  "merge_matmul{all_groups=true}", node_sharing_pairs)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

// shared_weight_matmuls(100000) has 33332 adds: add .. add_33331.
BENCHMARK_CAPTURE(BM_TorchPass, extract_subgraph,
                  "extract_subgraph{inputs=add,outputs=add_33331}",
                  shared_weight_matmuls)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_TorchPass, split_by_tags,
                  "split_by_tags{tags=t0,t1,t2,t3,t4,t5,t6,t7,t8,t9}",
                  tagged_matmuls)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_TorchPass, splitter, "splitter{supported=relu}",
                  relu_sin_blocks)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_TorchPass, accelerator_partition,
                  "accelerator_partition{devices=d0:180000:0,d1:180000:1,"
                  "d2:180000:2,d3:180000:3,d4:180000:4,d5:180000:5,"
                  "d6:180000:6,d7:180000:7,d8:180000:8,d9:180000:9,"
                  "d10:180000:10,d11:180000:11}",
                  sized_relu_sin_chain)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

// accelerator_partition's other modes. sparse_nn on a sparse model;
// aot_based with every call node's partition given; cost_aware and
// kl_based are torch's searches, polynomial by definition (cost_aware
// tries every pair of partitions per merge, kl_based every swap of two
// nodes across every pair of partitions, each try costing the critical
// path): they are timed on chains of 25 to 256 (cost_aware) and to 400
// nodes (kl_based); at 100k nodes the searches themselves would run for
// days, however they were implemented.
std::string partition_pipeline(std::string options) {
  return "accelerator_partition{" + options + "}";
}
BENCHMARK_CAPTURE(BM_TorchPass, accelerator_partition_sparse_nn,
                  PipelineText([](const fx::Graph& g) {
                    return partition_pipeline(sparse_nn_devices(g) +
                                              ",mode=sparse_nn");
                  }),
                  dense_chain_with_embeddings)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TorchPass, accelerator_partition_aot_based,
                  PipelineText([](const fx::Graph& g) {
                    return partition_pipeline(devices_of(400000) +
                                              ",mode=aot_based," +
                                              aot_partitions_of(g));
                  }),
                  sized_relu_sin_chain)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TorchPass, accelerator_partition_cost_aware,
                  PipelineText([](const fx::Graph& g) {
                    return partition_pipeline(
                        devices_of(16 * g.size() / 8) +
                        ",mode=cost_aware,transfer_rate_bytes_per_sec=1e9," +
                        latencies_of(g));
                  }),
                  sized_relu_sin_chain)
    ->RangeMultiplier(2)
    ->Range(25, 256)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);
// kl_based as the pass does it by default (each node's cheapest move,
// applied once) and as torch 1.13 does it (kl_as_torch: the swaps that
// torch's timings below are for).
PipelineText kl_based_pipeline(const char* extra) {
  return PipelineText([extra](const fx::Graph& g) {
    return partition_pipeline(
        devices_of(16 * g.size() / 8) +
        ",mode=kl_based,transfer_rate_bytes_per_sec=1e9," + latencies_of(g) +
        extra);
  });
}
BENCHMARK_CAPTURE(BM_TorchPass, accelerator_partition_kl_based,
                  kl_based_pipeline(""), sized_relu_sin_chain)
    ->RangeMultiplier(2)
    ->Range(25, 400)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TorchPass, accelerator_partition_kl_based_as_torch,
                  kl_based_pipeline(",kl_as_torch=true"), sized_relu_sin_chain)
    ->RangeMultiplier(2)
    ->Range(25, 400)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

// torch.fx.passes.param_fetch on 50k leaf modules (conv / bn pairs);
// graph_manipulation's two passes on the relu / sin chain: every node's
// size, and every relu made a sigmoid.
BENCHMARK_CAPTURE(BM_TorchPass, param_fetch, "param_fetch", conv_bn_chain)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TorchPass, get_size_of_all_nodes, "get_size_of_all_nodes",
                  sized_relu_sin_chain)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TorchPass, replace_target_nodes_with,
                  "replace_target_nodes_with{old_op=call_method,"
                  "old_target=relu,new_op=call_method,new_target=sigmoid}",
                  relu_sin_blocks)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_TorchPass, reinplace, "reinplace", functional_blocks)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_TorchPass, normalize_args, "normalize_args",
                  functional_calls)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_TorchPass, normalize_operators, "normalize_operators",
                  functional_calls)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_TorchPass, annotate_types_with_schema,
                  "annotate_types_with_schema", functional_calls)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_TorchPass, gradual_typecheck, "gradual_typecheck",
                  typed_conv_blocks)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_TorchPass, gradual_typecheck_unify_refinements,
                  "gradual_typecheck,unify_refinements", typed_conv_blocks)
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_TorchPass, unify_refinements, "unify_refinements",
                  typed_conv_blocks, "gradual_typecheck")
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_TorchPass, infer_symbolic_types,
                  "unify_refinements{rounds=2,symbolic_relations=true}",
                  typed_conv_blocks, "gradual_typecheck")
    ->Arg(kNodes)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
