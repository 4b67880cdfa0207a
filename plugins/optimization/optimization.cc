// libfx_optimization.so: the graph passes of torch 1.13's
// torch.fx.experimental.optimization and merge_matmul, under their Python
// names (merge_matmul in merge_matmul.cc).
//
//  - fuse: torch's fuse(model). For the patterns (Conv1d, BatchNorm1d),
//    (Conv2d, BatchNorm2d) and (Conv3d, BatchNorm3d), in that order, every
//    BatchNorm call_module whose first argument is a call_module of the
//    pattern's convolution (exact module types) used by nothing else, and
//    whose module tracks running statistics, is folded into the convolution
//    as torch.nn.utils.fusion.fuse_conv_bn_eval folds it:
//      weight * (gamma * rsqrt(var + eps)),
//      (bias - mean) * rsqrt(var + eps) * gamma + beta,
//    in the weights' own dtype and in torch's order of operations, so the
//    numbers are torch's. The BatchNorm node's users then read the
//    convolution and the node goes; the convolution module keeps its name
//    (a convolution without bias is rebuilt with one). Like torch's fuse
//    (which asserts it), modules in training mode are refused: run it on an
//    eval-mode graph.
//  - remove_dropout: torch's remove_dropout(model), a Transformer that
//    retraces the graph and lets each torch.nn.Dropout call_module (that
//    type exactly: not Dropout2d, not F.dropout) return its input. The
//    retrace keeps the nodes but no type annotation, so every node's type
//    is cleared too (meta is kept), and names each node afresh: where that
//    differs (a name freed by a removed dropout, e.g. F.dropout's node
//    `dropout_1` becomes `dropout` when the module node `dropout` goes, or
//    make_fx's `clone`, which a retrace names `clone_default`) the node is
//    renamed, and new nodes are then named as in the retraced graph.
#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/optimization/passes.h"
#include "plugins/optimization/retrace.h"

namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

// ------------------------------------------------------------------ fuse

struct FusePattern {
  const char* conv;
  const char* batch_norm;
};

constexpr FusePattern kFusePatterns[] = {
    {"torch.nn.Conv1d", "torch.nn.BatchNorm1d"},
    {"torch.nn.Conv2d", "torch.nn.BatchNorm2d"},
    {"torch.nn.Conv3d", "torch.nn.BatchNorm3d"},
};

[[noreturn]] void refuse(const std::string& what) {
  throw fxp::Error(FX_FAILED_PRECONDITION, "fuse: " + what);
}

// The types of the submodules call_module nodes call, asked of the host
// once per node in a pass (a fold rebuilds a module with its own type), and
// kept by node: a table keyed by target strings was a tenth of fuse.
class ModuleTypes {
 public:
  explicit ModuleTypes(const Graph& g) : g_(g) {
    by_node_.reserve(g.size());
    intern("");  // index 0: no module
  }

  // The type of the submodule `n` calls; "" for other nodes and for
  // targets that name no submodule.
  const std::string& called(const Node& n) {
    if (n.op() != FX_OP_CALL_MODULE) return names_[0];
    auto [it, added] = by_node_.try_emplace(n.get(), 0);
    if (added) it->second = intern(asked(n));
    return names_[it->second];
  }
  // Before `n` is erased (its handle may be reused).
  void forget(const Node& n) { by_node_.erase(n.get()); }

 private:
  std::string asked(const Node& n) const {
    try {
      return g_.module_type(std::string(n.target()).c_str());
    } catch (const fxp::Error&) {
      return "";
    }
  }
  size_t intern(std::string type) {
    auto [it, added] = index_.try_emplace(type, names_.size());
    if (added) names_.push_back(std::move(type));
    return it->second;
  }

  const Graph& g_;
  std::unordered_map<FxNode*, size_t> by_node_;
  std::unordered_map<std::string, size_t> index_;  // into names_
  std::vector<std::string> names_;
};

// torch's matches_module_pattern: `bn` calls a module of the pattern's
// BatchNorm type on a call_module of its convolution type.
bool matches(ModuleTypes& types, const FusePattern& p, const Node& bn) {
  if (bn.num_args() == 0 || !bn.arg(0).is_node()) return false;
  return types.called(bn) == p.batch_norm &&
         types.called(bn.arg(0).node()) == p.conv;
}

// Whether BatchNorm `bn`, built from `config`, uses running statistics.
bool tracks_running_stats(const Graph& g, const std::string& bn,
                          const Arg& config) {
  ArgView track = fxp::dict_get(config.view(), "track_running_stats");
  if (track && !track.as_bool()) return false;
  return g.has_attr((bn + ".running_mean").c_str()) &&
         g.has_attr((bn + ".running_var").c_str());
}

// Attribute `name`'s values, `t`, as a contiguous tensor of T's dtype;
// `shape` gets its sizes. Refused when it is of another dtype or not
// contiguous.
template <typename T>
std::vector<T> values_of(const fxp::Tensor& t, const std::string& name,
                         std::vector<int64_t>* shape = nullptr) {
  const DLDataType dt = t.dl().dtype;
  if (dt.code != kDLFloat || dt.bits != sizeof(T) * 8 || dt.lanes != 1 ||
      !t.is_contiguous()) {
    refuse("'" + name + "' is not a contiguous tensor of the convolution " +
           "weight's dtype (float32 or float64)");
  }
  if (shape != nullptr) *shape = t.shape();
  const T* data = t.data<T>();
  return std::vector<T>(data, data + t.numel());
}

// Per-channel values of `name`, or `fill` for each channel when the module
// has no such attribute (no conv bias; an affine-less BatchNorm). `present`:
// the caller knows it has it.
template <typename T>
std::vector<T> channel_values(const Graph& g, const std::string& name,
                              size_t channels, T fill, bool present = false) {
  if (!present && !g.has_attr(name.c_str())) {
    return std::vector<T>(channels, fill);
  }
  std::vector<T> v =
      values_of<T>(fxp::Tensor(g.get_attr_tensor(name.c_str())), name);
  if (v.size() != channels) {
    refuse("'" + name + "' has " + std::to_string(v.size()) +
           " values; the convolution has " + std::to_string(channels) +
           " output channels");
  }
  return v;
}

template <typename T>
fxp::Tensor tensor_of(const std::vector<int64_t>& shape,
                      const std::vector<T>& values) {
  fxp::Tensor t =
      fxp::make_tensor(shape, sizeof(T) == 4 ? fxp::kFloat32 : fxp::kFloat64);
  T* data = t.mutable_data<T>();
  for (size_t i = 0; i < values.size(); ++i) data[i] = values[i];
  return t;
}

// A convolution whose module has no bias parameter gets one: the module is
// rebuilt from its config with bias=True (the host keeps its mode).
void give_bias(Graph& g, const std::string& conv, const std::string& type) {
  Arg config = fxp::module_config(g, conv.c_str());
  std::vector<std::pair<std::string, Arg>> items;
  for (size_t i = 0; i < config.view().size(); ++i) {
    std::string key = config.view().key(i);
    if (key != "bias") items.emplace_back(key, Arg(config.view()[i]));
  }
  items.emplace_back("bias", Arg(true));
  fxp::add_module(g, conv.c_str(), type.c_str(), Arg::dict(items));
}

// What a fold reads of the BatchNorm and writes to the convolution.
struct FoldSite {
  std::string conv;  // the convolution's target
  std::string bn;    // the BatchNorm's target
  std::string conv_type;
  Arg bn_config;  // the BatchNorm's constructor arguments
};

// fuse_conv_bn_weights (torch/nn/utils/fusion.py) in T's arithmetic, then
// the results set as the convolution's weight and bias; `weight` is the
// convolution's.
template <typename T>
void fold_into_conv(Graph& g, const FoldSite& site, const fxp::Tensor& weight) {
  const std::string& conv = site.conv;
  const std::string& bn = site.bn;
  std::vector<int64_t> shape;
  std::vector<T> w = values_of<T>(weight, conv + ".weight", &shape);
  const size_t channels = shape.empty() ? 0 : static_cast<size_t>(shape[0]);
  if (channels == 0) refuse("'" + conv + ".weight' has no output channels");
  // tracks_running_stats found both.
  std::vector<T> mean =
      channel_values<T>(g, bn + ".running_mean", channels, 0, true);
  std::vector<T> var =
      channel_values<T>(g, bn + ".running_var", channels, 0, true);
  std::vector<T> gamma = channel_values<T>(g, bn + ".weight", channels, 1);
  std::vector<T> beta = channel_values<T>(g, bn + ".bias", channels, 0);
  std::vector<T> b = channel_values<T>(g, conv + ".bias", channels, 0);
  ArgView eps_arg = fxp::dict_get(site.bn_config.view(), "eps");
  const T eps = static_cast<T>(eps_arg ? eps_arg.as_float() : 1e-5);
  const size_t per_channel = w.size() / channels;
  for (size_t c = 0; c < channels; ++c) {
    const T var_rsqrt = T(1) / std::sqrt(var[c] + eps);
    const T scale = gamma[c] * var_rsqrt;
    for (size_t i = 0; i < per_channel; ++i) w[c * per_channel + i] *= scale;
    const T centred = (b[c] - mean[c]) * var_rsqrt;
    b[c] = centred * gamma[c] + beta[c];
  }
  if (!g.has_attr((conv + ".bias").c_str())) {
    give_bias(g, conv, site.conv_type);
  }
  g.set_attr_tensor((conv + ".weight").c_str(), tensor_of(shape, w).release());
  g.set_attr_tensor((conv + ".bias").c_str(),
                    tensor_of({static_cast<int64_t>(channels)}, b).release());
}

void fold(Graph& g, const FoldSite& site) {
  if (g.module_training(site.conv.c_str()) == 1 ||
      g.module_training(site.bn.c_str()) == 1) {
    refuse("'" + site.conv + "' and '" + site.bn +
           "' must be in eval mode (torch's fuse_conv_bn_eval asserts "
           "\"Fusion only for eval!\"); call .eval() first");
  }
  fxp::Tensor weight(g.get_attr_tensor((site.conv + ".weight").c_str()));
  if (weight.dl().dtype.bits == 64) {
    fold_into_conv<double>(g, site, weight);
  } else {
    fold_into_conv<float>(g, site, weight);
  }
}

bool fuse(Graph& g, const fxp::Options&) {
  bool changed = false;
  ModuleTypes types(g);
  for (const FusePattern& pattern : kFusePatterns) {
    for (Node bn : g) {
      if (!matches(types, pattern, bn)) continue;
      Node conv = bn.arg(0).node();
      if (conv.num_users() > 1) continue;
      FoldSite site{std::string(conv.target()), std::string(bn.target()),
                    pattern.conv, Arg()};
      site.bn_config = fxp::module_config(g, site.bn.c_str());
      if (!tracks_running_stats(g, site.bn, site.bn_config)) continue;
      fold(g, site);
      bn.replace_all_uses_with(conv);
      types.forget(bn);
      g.erase_node(bn);
      changed = true;
    }
  }
  return changed;
}

// -------------------------------------------------------- remove_dropout

[[noreturn]] void refuse_removal(const std::string& what) {
  throw fxp::Error(FX_FAILED_PRECONDITION, "remove_dropout: " + what);
}

// The nodes torch's DropoutRemover drops: calls of a torch.nn.Dropout with
// one positional argument (the Transformer asserts that), a node.
std::vector<Node> dropouts(const Graph& g) {
  std::vector<Node> out;
  ModuleTypes types(g);
  for (Node n : g) {
    if (types.called(n) != "torch.nn.Dropout") continue;
    if (n.num_args() != 1) {
      refuse_removal("'" + std::string(n.name()) + "' calls a Dropout with " +
                     std::to_string(n.num_args()) +
                     " positional arguments; torch's remove_dropout asserts "
                     "exactly one");
    }
    if (!n.arg(0).is_node()) {
      refuse_removal("'" + std::string(n.name()) +
                     "' calls a Dropout on a constant");
    }
    out.push_back(n);
  }
  return out;
}

bool remove_dropout(Graph& g, const fxp::Options&) {
  std::vector<Node> found = dropouts(g);
  std::unordered_set<FxNode*> removed;
  for (const Node& d : found) removed.insert(d.get());
  const fx_optimization::Renames renames =
      fx_optimization::retrace_names(g, removed, "remove_dropout");
  bool changed = !found.empty() || !renames.empty();
  for (Node d : found) {
    d.replace_all_uses_with(d.arg(0).node());
    g.erase_node(d);
  }
  fx_optimization::apply_retrace_names(g, renames);
  for (Node n : g) {
    if (n.type().empty()) continue;
    n.set_type(nullptr);
    changed = true;
  }
  return changed;
}

}  // namespace

FXP_PLUGIN(
    "fx_optimization", "1.0",
    fxp::pass<fuse>("fuse",
                    "folds eval-mode BatchNorm1d/2d/3d into the "
                    "Conv1d/2d/3d module before it (torch.fx "
                    "experimental.optimization.fuse)")
        .idempotent(),
    fxp::pass<remove_dropout>("remove_dropout",
                              "removes every torch.nn.Dropout call (torch.fx "
                              "experimental.optimization.remove_dropout)")
        .idempotent(),
    fxp::pass<fx_optimization::merge_matmul>(
        "merge_matmul",
        "merges the torch.matmul calls that share a right operand into one "
        "(torch.fx experimental.merge_matmul.merge_matmul)")
        .option("all_groups", FX_OPTION_BOOL, "false",
                "merge every group of matmuls sharing a right operand; "
                "torch 1.13 fails on a second group (KeyError), and so does "
                "this pass by default"),
    fxp::pass<fx_optimization::extract_subgraph>(
        "extract_subgraph",
        "turns the graph into the subgraph from `inputs` to `outputs` "
        "(torch.fx experimental.optimization.extract_subgraph)")
        .invalidates({"signature"})
        .option("inputs", FX_OPTION_STRING_LIST, "",
                "the nodes that become the subgraph's placeholders, in order "
                "(each named after its node)")
        .option("outputs", FX_OPTION_STRING_LIST, "",
                "the nodes whose values the subgraph returns, as a list")
        .option("nodes", FX_OPTION_STRING_LIST, "",
                "the nodes copied, in order (torch's `nodes`); by default "
                "every node the outputs need, back to the inputs, in graph "
                "order"),
    fxp::pass<fx_optimization::replace_target_nodes_with>(
        "replace_target_nodes_with",
        "makes every node of one opcode and target a node of another, same "
        "arguments and name (torch.fx passes.graph_manipulation)")
        .option("old_op", FX_OPTION_STRING, "call_function",
                "the opcode of the nodes replaced")
        .option("old_target", FX_OPTION_STRING, "",
                "their target (torch.relu, a method or module name)")
        .option("new_op", FX_OPTION_STRING, "call_function",
                "the opcode of the new nodes")
        .option("new_target", FX_OPTION_STRING, "", "the new nodes' target"),
    fxp::pass<fx_optimization::get_size_of_all_nodes>(
        "get_size_of_all_nodes",
        "writes each node's torch size_bytes (output, total) into "
        "meta['size_bytes'] (torch.fx passes.graph_manipulation; run "
        "shape_prop first)")
        .run_after({"shape_prop"})
        .idempotent(),
    fxp::pass<fx_optimization::split_by_tags>(
        "split_by_tags",
        "moves each tag's nodes into a submodule named after the tag, "
        "called in the order of `tags` (torch.fx passes.split_utils."
        "split_by_tags)")
        .invalidates({"signature"})
        .option("tags", FX_OPTION_STRING_LIST, "",
                "the tags, in the order their submodules are called")
        .option("meta_key", FX_OPTION_STRING, "tag",
                "the node meta key holding each node's tag (torch's "
                "node.tag)")
        .option("tag_nodes", FX_OPTION_STRING_LIST, "",
                "tags given here instead, as TAG:NODE+NODE... items"),
    fxp::pass<fx_optimization::param_fetch>(
        "param_fetch",
        "writes what a lowering needs of each call_module's module into "
        "meta['attrs_for_lowering'] (torch.fx passes.param_fetch."
        "lift_lowering_attrs_to_nodes)")
        .idempotent(),
    fxp::pass<fx_optimization::reinplace>(
        "reinplace",
        "turns out-of-place ATen calls whose self argument nothing later "
        "reads into their in-place forms, and {view}_scatter calls into a "
        "view and copy_ (torch.fx passes.reinplace; a functional graph, "
        "sample inputs from the host's example inputs or tensor_meta)"),
    fxp::pass<fx_optimization::splitter>(
        "splitter",
        "splits the graph into alternating accelerator (_run_on_acc_K) and "
        "CPU submodules by a support list (torch.fx passes.splitter_base."
        "_SplitterBase; run shape_prop first)")
        .run_after({"shape_prop"})
        .invalidates({"signature"})
        .option("supported", FX_OPTION_STRING_LIST, "",
                "the targets the accelerator runs, as torch's "
                "get_node_target spells them: module classes "
                "(torch.nn.modules.conv.Conv2d), function qualified names "
                "(torch.relu, _operator.add), method names (relu)")
        .option("min_acc_module_size", FX_OPTION_INT, "1",
                "an accelerator subgraph with fewer nodes joins the CPU "
                "subgraph before it")
        .option("skip_fusion", FX_OPTION_BOOL, "false",
                "no fusion groups (acc nodes linked by non-tensor values "
                "kept together)")
        .option("allow_non_tensor", FX_OPTION_BOOL, "false",
                "let non-tensor values flow between accelerator and CPU "
                "subgraphs")
        .option("non_acc_submodule_name", FX_OPTION_STRING, "_run_on_cpu_",
                "name prefix of the CPU submodules")
        .option("report", FX_OPTION_STRING, "",
                "where to write torch's node support preview and the "
                "splitter's summary (a file, or - for standard output)"),
    fxp::pass<fx_optimization::normalize_args>(
        "normalize_args",
        "rewrites each call_function and torch.nn module call with keyword "
        "arguments in its signature's order, defaults filled in (torch.fx "
        "experimental.normalize.NormalizeArgs)")
        .idempotent()
        .option("normalize_to_only_use_kwargs", FX_OPTION_BOOL, "true",
                "every argument as a keyword; false keeps the positional "
                "ones and writes the rest as keywords")
        .option("node_type_for_args", FX_OPTION_BOOL, "false",
                "type node arguments as torch 1.13 does (positional ones "
                "with the normalized node's own meta['type'], keyword ones "
                "as a Proxy, matching nothing); by default each node "
                "argument has its own meta['type']")
        .option("ops_self_as_input", FX_OPTION_BOOL, "false",
                "rename an ATen schema's `self` to `input` for torch.ops "
                "targets too, as torch 1.13 does (the operator then refuses "
                "the call); by default a torch.ops call keeps `self` as "
                "its first positional argument"),
    fxp::pass<fx_optimization::gradual_typecheck>(
        "gradual_typecheck",
        "types every node with a TensorType of Dyn or sized dimensions "
        "from the placeholders' annotations, or fails with torch's type "
        "error (torch.fx experimental.graph_gradual_typechecker."
        "GraphTypeChecker)"),
    fxp::pass<fx_optimization::unify_refinements>(
        "unify_refinements",
        "gives each Dyn dimension a variable (~0, ~1, ...) and solves the "
        "equalities between inputs' and outputs' dimensions, as torch.fx "
        "experimental.unify_refinements.infer_symbolic_types_single_pass "
        "(Refine, unify_eq, substitute_all_types); run gradual_typecheck "
        "first")
        .option("rounds", FX_OPTION_INT, "1",
                "how many times: 2 is infer_symbolic_types without its "
                "sympy step (symbolic_relations)"),
    fxp::pass<fx_optimization::normalize_operators>(
        "normalize_operators",
        "rewrites torch.add, torch.mul, ... calls of two arguments as the "
        "operator.* function and types nodes as annotate_types_with_schema "
        "does (torch.fx experimental.normalize.NormalizeOperators)")
        .idempotent()
        .invalidates({"tensor_meta"})
        .option("drop_kwargs", FX_OPTION_BOOL, "false",
                "rewrite a call with keyword arguments too, dropping them, "
                "as torch 1.13 does (torch.add(a, b, alpha=2) becomes a + "
                "b); by default such a call is kept"),
    fxp::pass<fx_optimization::annotate_types_with_schema>(
        "annotate_types_with_schema",
        "types calls of torch.nn.functional and torch.nn modules with "
        "their declared return annotations and tensor get_attrs as "
        "torch.Tensor (torch.fx experimental.schema_type_annotation."
        "AnnotateTypesWithSchema)")
        .idempotent()
        .invalidates({"tensor_meta"})
        .option("annotate_functionals", FX_OPTION_BOOL, "true",
                "type torch.nn.functional calls")
        .option("annotate_modules", FX_OPTION_BOOL, "true",
                "type calls of torch.nn modules")
        .option("annotate_get_attrs", FX_OPTION_BOOL, "true",
                "type get_attr nodes of tensors"),
    fxp::pass<fx_optimization::accelerator_partition>(
        "accelerator_partition",
        "partitions the graph over the devices by size, sparse_nn, cost or "
        "Kernighan-Lin and splits it into submod_ID submodules, each call's "
        "partition and DAG node in meta['partition'] (torch.fx "
        "experimental.accelerator_partitioner.Partitioner; run shape_prop "
        "first)")
        .run_after({"shape_prop"})
        .invalidates({"signature"})
        .option("devices", FX_OPTION_STRING_LIST, "",
                "the devices, as NAME:AVAILABLE_MEM_BYTES:LOGICAL_ID items "
                "(torch's Device)")
        .option("mode", FX_OPTION_STRING, "size_based",
                "size_based, sparse_nn, cost_aware, kl_based or aot_based "
                "(torch's PartitionMode)")
        .option("transfer_rate_bytes_per_sec", FX_OPTION_FLOAT, "0",
                "bytes per second between devices (cost_aware, kl_based)")
        .option("node_to_latency_mapping", FX_OPTION_STRING_LIST, "",
                "NODE:MEM_LATENCY_SEC:COMPUTER_LATENCY_SEC items (torch's "
                "NodeLatency), for cost_aware and kl_based; given, each "
                "partition's latency goes into meta too")
        .option("node_to_partition_mapping", FX_OPTION_STRING_LIST, "",
                "aot_based: NODE:PARTITION_ID items")
        .option("partition_to_logical_device_mapping", FX_OPTION_STRING_LIST,
                "", "aot_based: PARTITION_ID:LOGICAL_ID+LOGICAL_ID... items")
        .option("saturate_host", FX_OPTION_BOOL, "false",
                "replicate the partitions onto idle devices with room"))
