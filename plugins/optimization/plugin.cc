// libfx_optimization.so: the graph passes of torch 1.13's torch.fx
// (experimental.optimization, merge_matmul, normalize,
// schema_type_annotation, accelerator_partitioner,
// graph_gradual_typechecker, unify_refinements; passes.graph_manipulation,
// param_fetch, reinplace, split_utils, splitter_base) under their Python
// names, with their options and descriptions (passes.h lists the files
// that hold them).
#include "fx/plugin_api.hpp"
#include "plugins/optimization/passes.h"

FXP_PLUGIN(
    "fx_optimization", "1.0",
    fxp::pass<fx_optimization::fuse>(
        "fuse",
        "folds eval-mode BatchNorm1d/2d/3d into the "
        "Conv1d/2d/3d module before it (torch.fx "
        "experimental.optimization.fuse)")
        .idempotent(),
    fxp::pass<fx_optimization::remove_dropout>(
        "remove_dropout",
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
        "GraphTypeChecker)")
        .option("first_stride_for_both", FX_OPTION_BOOL, "false",
                "divide both spatial sizes of a Conv2d or MaxPool2d by "
                "stride[0], as torch 1.13's calculate_out_dimension does "
                "(a stride of (2, 1) then halves the width too); by "
                "default each is divided by its own stride, as the module "
                "outputs"),
    fxp::pass<fx_optimization::unify_refinements>(
        "unify_refinements",
        "gives each Dyn dimension a variable (~0, ~1, ...) and solves the "
        "equalities between inputs' and outputs' dimensions, as torch.fx "
        "experimental.unify_refinements.infer_symbolic_types_single_pass "
        "(Refine, unify_eq, substitute_all_types); run gradual_typecheck "
        "first")
        .option("rounds", FX_OPTION_INT, "1",
                "how many times: 2 with symbolic_relations is "
                "infer_symbolic_types")
        .option("symbolic_relations", FX_OPTION_BOOL, "false",
                "then Refine.symbolic_relations: variables become sympy "
                "symbols (named in the code), a Conv2d's sizes sympy "
                "expressions over its input's")
        .option("first_stride_for_both", FX_OPTION_BOOL, "false",
                "symbolic_relations divides both spatial sizes of a Conv2d "
                "by stride[0], as torch 1.13's calculate_out_dimension "
                "does (a stride of (2, 1) then halves the width too); by "
                "default each is divided by its own stride, as the module "
                "outputs"),
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
                "replicate the partitions onto idle devices with room")
        .option("kl_as_torch", FX_OPTION_BOOL, "false",
                "kl_based as torch 1.13 does it: the split stays "
                "size_based's (node_to_partition is never updated), a "
                "swap's cost is its last try's and the last improving swap "
                "is applied again for every later node; by default each "
                "node's best improving move is applied and the split "
                "follows the partitions")
        .option("dag_by_list_position", FX_OPTION_BOOL, "false",
                "as torch 1.13's dump_dag, each DAG node's "
                "logical_device_ids and size_bytes come from the partition "
                "at the list position named by its id (another partition's "
                "when aot_based ids are not 0, 1, ... in order; refused "
                "where torch raises IndexError); by default from its own "
                "partition"))
