// A toy "accelerator" backend as a plugin, built against plugin_api/include
// only: it runs float32 conv2d, linear, relu and add. Its support rule goes
// through the C ABI's support entries (fxp::Support); the host proposes the
// largest partitions of supported nodes that fuse without a cycle (torch.fx's
// CapabilityBasedPartitioner) and fuses each into a call_module of a child
// GraphModule ("accelerator_0", ...). The host runs the rest; the toy's
// "kernels" are the host's ATen running the child modules.
//
// Passes (both need tensor_meta: run shape_prop first):
//   accelerator_mark      meta['partition'] = index of each partition's nodes
//                         (draw it with dot{color_by=partition})
//   accelerator_delegate  fuses each partition into a child GraphModule
// Option of both: allows_single (bool, true): torch.fx's
// allows_single_node_partition. On by default: torch.fx 1.13 counts only
// call_function nodes as compute nodes, so without it every partition of
// call_module nodes alone (conv -> relu in a traced resnet18) is dropped.
#include <cstdint>

#include "fx/plugin_api.hpp"

namespace {

// What the accelerator runs, in every spelling a graph may hold.
fxp::Support supported_ops() {
  return fxp::Support::any_of({
      fxp::Support::module_types(
          {"torch.nn.Conv2d", "torch.nn.Linear", "torch.nn.ReLU"}),
      fxp::Support::functions({"torch.conv2d", "torch.nn.functional.conv2d",
                               "torch.nn.functional.linear", "torch.relu",
                               "torch.nn.functional.relu", "operator.add",
                               "torch.add"}),
      fxp::Support::methods({"relu", "add"}),
  });
}

// ... producing float32 tensors only.
fxp::Support accelerator_support() {
  static const char* const kFloat32[] = {"torch.float32"};
  FxTensorRule float32{};
  float32.flags = FX_TENSOR_RULE_OUTPUT;
  float32.dtypes = kFloat32;
  float32.num_dtypes = 1;
  float32.min_rank = 0;
  float32.max_rank = -1;
  float32.max_dim_size = -1;
  return fxp::Support::all_of(
      {supported_ops(), fxp::Support::tensor_meta(float32)});
}

fxp::Partitions propose(const fxp::Graph& g, const fxp::Options& options) {
  fxp::PartitionOptions o;
  o.allows_single_node_partition = options.get_bool("allows_single");
  return fxp::propose_partitions(g, accelerator_support(), o);
}

bool accelerator_mark(fxp::Graph& g, const fxp::Options& options) {
  fxp::Partitions partitions = propose(g, options);
  for (size_t i = 0; i < partitions.size(); ++i) {
    for (fxp::Node n : partitions[i]) {
      n.set_meta("partition", fxp::Arg(static_cast<int64_t>(i)));
    }
  }
  return partitions.size() > 0;
}

bool accelerator_delegate(fxp::Graph& g, const fxp::Options& options) {
  fxp::Partitions partitions = propose(g, options);
  if (partitions.size() == 0) return false;
  fxp::fuse_partitions(g, partitions, "accelerator_");
  return true;
}

}  // namespace

FXP_PLUGIN("accelerator", "0.1",
           fxp::pass<accelerator_mark>(
               "accelerator_mark",
               "meta['partition'] = index of the accelerator's partitions")
               .option("allows_single", FX_OPTION_BOOL, "true",
                       "keep partitions of a single compute node")
               .requires_property({"tensor_meta"}),
           fxp::pass<accelerator_delegate>(
               "accelerator_delegate",
               "fuses the accelerator's partitions into child GraphModules")
               .option("allows_single", FX_OPTION_BOOL, "true",
                       "keep partitions of a single compute node")
               .requires_property({"tensor_meta"}))
