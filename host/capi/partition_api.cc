// The FxApi entries of version 3 that partition graphs: support rules
// (FxSupport over fx::OperatorSupport), propose_partitions (FxPartitions) and
// fusion into child GraphModules (fx_core/partition behind the table).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/partition/capability_partitioner.h"
#include "fx_core/partition/fuse_partitions.h"
#include "fx_core/partition/operator_support.h"
#include "fx_core/partition/target_support.h"
#include "fx_core/partition/tensor_meta_support.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/module_registry.h"
#include "host/capi/api_internal.h"
#include "host/handles/wrap.h"

namespace fx::host::internal {

template <>
struct HostObject<FxSupport> : HandleSlot {
  OperatorSupport rule;
};

// Each partition's nodes, in graph order, as node handles, never addresses:
// partitions kept after their graph was rolled back, replaced or released
// name nodes that are refused, not followed.
template <>
struct HostObject<FxPartitions> : HandleSlot {
  std::vector<std::vector<FxNode*>> nodes;
};

namespace {

FxSupport* new_support(OperatorSupport rule) {
  auto object = std::make_unique<HostObject<FxSupport>>();
  object->rule = std::move(rule);
  return give_object<FxSupport>(std::move(object));
}

const OperatorSupport& rule_of(const FxSupport* rule, const char* what) {
  return require(unwrap_object(rule), what)->rule;
}

std::vector<std::string> string_list(const char* const* items, size_t count,
                                     const char* what) {
  if (count > 0) require(items, what);
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    if (items[i] == nullptr) {
      fail(FX_INVALID_ARGUMENT, cat(what, "[", i, "] is NULL"));
    }
    out.emplace_back(items[i]);
  }
  return out;
}

std::vector<OperatorSupport> rule_list(const FxSupport* const* rules,
                                       size_t count) {
  if (count > 0) require(rules, "rules");
  std::vector<OperatorSupport> out;
  for (size_t i = 0; i < count; ++i) {
    if (rules[i] == nullptr) {
      fail(FX_INVALID_ARGUMENT, cat("rules[", i, "] is NULL"));
    }
    out.push_back(rule_of(rules[i], "rules[i]"));
  }
  return out;
}

// The Python type of the module a call_module node calls, from the module
// owning its graph (an attribute store, else a GraphModule); "" if none.
std::string module_type_of(const Node& call) {
  if (AttributeStore* store = store_for(call.graph())) {
    std::string type, error;
    return store->module_type(call.target(), &type, &error) ? type : "";
  }
  auto* gm = dynamic_cast<const GraphModule*>(call.graph()->owning_module());
  if (gm == nullptr) return "";
  std::shared_ptr<torch::nn::Module> m = gm->get_submodule(call.target());
  const ModuleKind* kind = m ? ModuleRegistry::global().find(*m) : nullptr;
  return kind ? kind->type : "";
}

void support_targets(FxOpcode op, const char* const* targets, size_t count,
                     FxSupport** out) {
  require(out, "out");
  SupportedTargets t;
  std::vector<std::string> list = string_list(targets, count, "targets");
  switch (op) {
    case FX_OP_CALL_FUNCTION:
      t.functions = std::move(list);
      break;
    case FX_OP_CALL_METHOD:
      t.methods = std::move(list);
      break;
    case FX_OP_CALL_MODULE:
      t.module_types = std::move(list);
      break;
    default:
      fail(FX_INVALID_ARGUMENT,
           cat("op ", static_cast<int>(op),
               " is not call_function, call_method or call_module"));
  }
  *out = new_support(target_support(t, module_type_of));
}

void support_tensor_meta(const FxTensorRule* rule, FxSupport** out) {
  require(rule, "rule");
  require(out, "out");
  if (rule->struct_size < sizeof(FxTensorRule)) {
    fail(FX_INVALID_ARGUMENT,
         cat("rule->struct_size is ", rule->struct_size, ", expected ",
             sizeof(FxTensorRule), " (sizeof(FxTensorRule))"));
  }
  TensorRule r;
  r.dtypes = string_list(rule->dtypes, rule->num_dtypes, "rule->dtypes");
  r.min_rank = rule->min_rank;
  r.max_rank = rule->max_rank;
  r.max_dim_size = rule->max_dim_size;
  uint32_t flags = rule->flags == 0 ? FX_TENSOR_RULE_OUTPUT : rule->flags;
  r.check_output = (flags & FX_TENSOR_RULE_OUTPUT) != 0;
  r.check_inputs = (flags & FX_TENSOR_RULE_INPUTS) != 0;
  r.any_input = (flags & FX_TENSOR_RULE_ANY_INPUT) != 0;
  *out = new_support(tensor_meta_support(std::move(r)));
}

void support_callback(FxIsNodeSupportedFn fn, void* user_data,
                      FxSupport** out) {
  require(fn, "fn");
  require(out, "out");
  *out = new_support(OperatorSupport([fn, user_data](const Node& n) {
    int answer = fn(wrap(&n), user_data);
    if (answer < 0) {
      fail(FX_INTERNAL,
           cat("the support callback failed on node '", n.name(), "'"));
    }
    return answer != 0;
  }));
}

void support_opcodes(const FxOpcode* ops, size_t count, FxSupport** out) {
  require(out, "out");
  if (count > 0) require(ops, "ops");
  std::vector<Opcode> opcodes;
  for (size_t i = 0; i < count; ++i) {
    if (ops[i] < FX_OP_PLACEHOLDER || ops[i] > FX_OP_OUTPUT) {
      fail(FX_INVALID_ARGUMENT, cat("ops[", i, "] is not an opcode"));
    }
    opcodes.push_back(static_cast<Opcode>(ops[i]));
  }
  *out = new_support(opcode_support(std::move(opcodes)));
}

PartitionOptions partition_options(const FxPartitionOptions* options) {
  PartitionOptions o;
  if (options == nullptr) return o;
  if (options->struct_size < sizeof(FxPartitionOptions)) {
    fail(FX_INVALID_ARGUMENT,
         cat("options->struct_size is ", options->struct_size, ", expected ",
             sizeof(FxPartitionOptions), " (sizeof(FxPartitionOptions))"));
  }
  o.allows_single_node_partition = options->allows_single_node_partition != 0;
  o.min_partition_size = options->min_partition_size;
  return o;
}

void propose(const FxGraph* g, const FxSupport* rule,
             const FxPartitionOptions* options, FxPartitions** out) {
  const Graph& graph = *require(unwrap(g), "graph");
  const OperatorSupport& support = rule_of(rule, "rule");
  require(out, "out");
  auto result = std::make_unique<HostObject<FxPartitions>>();
  for (const Partition& part :
       propose_partitions(graph, support, partition_options(options))) {
    std::vector<FxNode*>& nodes = result->nodes.emplace_back();
    for (Node* n : part.nodes) nodes.push_back(wrap(n));
  }
  *out = give_object<FxPartitions>(std::move(result));
}

// Every name PREFIX k is free in `gm`.
void check_names_free(GraphModule& gm, const std::string& prefix,
                      size_t count) {
  for (size_t k = 0; k < count; ++k) {
    std::string name = cat(prefix, k);
    if (gm.get_submodule(name) != nullptr || gm.get_attr(name).defined()) {
      fail(FX_FAILED_PRECONDITION,
           cat("the module already has an attribute '", name, "'"));
    }
  }
}

// A get_attr or call_module node's target exists in `gm` (the child
// GraphModule will share it).
void check_attribute(const GraphModule& gm, const Node& n) {
  if (n.op() != Opcode::kGetAttr && n.op() != Opcode::kCallModule) return;
  if (gm.resolve_attr(n.target()) == GraphOwner::AttrKind::kMissing) {
    fail(FX_NOT_FOUND, cat("node '", n.name(), "' reads '", n.target(),
                           "', which the module does not have"));
  }
}

void fuse(FxGraph* g, const FxPartitions* partitions, const char* prefix) {
  Graph& graph = *require(unwrap(g), "graph");
  GraphModule& gm = owning_module(&graph);
  std::string p = prefix ? prefix : "fused_";
  std::vector<std::vector<Node*>> lists =
      checked_partition_lists(gm, partitions, p);
  std::vector<FusedSubgraph> fused = fuse_by_partitions(graph, lists, p);
  for (FusedSubgraph& f : fused) {
    // torch.fx's lift_subgraph_as_module: the child shares what it reads.
    auto child = std::make_shared<GraphModule>(gm, std::move(f.graph), f.name);
    gm.add_submodule(f.name, std::move(child));
  }
}

}  // namespace

std::vector<std::vector<Node*>> checked_partition_lists(
    GraphModule& gm, const FxPartitions* partitions,
    const std::string& prefix) {
  const auto& handles = require(unwrap_object(partitions), "partitions")->nodes;
  check_names_free(gm, prefix, handles.size());
  std::vector<std::vector<Node*>> lists;
  for (size_t k = 0; k < handles.size(); ++k) {
    std::vector<Node*>& nodes = lists.emplace_back();
    for (FxNode* handle : handles[k]) {
      const Node* n = peek(handle);
      if (n == nullptr) {
        fail(FX_FAILED_PRECONDITION,
             cat("partition ", k,
                 " names a node that no longer exists (its graph was rolled "
                 "back, replaced or released since the partitions were "
                 "proposed): propose them again"));
      }
      check_attribute(gm, *n);
      nodes.push_back(const_cast<Node*>(n));
    }
  }
  return lists;
}

void fill_partition_entries(FxApi& t) {
  t.SupportTargets = [](FxOpcode op, const char* const* targets, size_t count,
                        FxSupport** out) {
    return guarded("SupportTargets",
                   [&] { support_targets(op, targets, count, out); });
  };
  t.SupportTensorMeta = [](const FxTensorRule* rule, FxSupport** out) {
    return guarded("SupportTensorMeta",
                   [&] { support_tensor_meta(rule, out); });
  };
  t.SupportCallback = [](FxIsNodeSupportedFn fn, void* data, FxSupport** out) {
    return guarded("SupportCallback", [&] { support_callback(fn, data, out); });
  };
  t.SupportOpcodes = [](const FxOpcode* ops, size_t count, FxSupport** out) {
    return guarded("SupportOpcodes", [&] { support_opcodes(ops, count, out); });
  };
  t.SupportNodeNames = [](const char* const* names, size_t count,
                          FxSupport** out) {
    return guarded("SupportNodeNames", [&] {
      *require(out, "out") =
          new_support(node_names_support(string_list(names, count, "names")));
    });
  };
  t.SupportAllOf = [](const FxSupport* const* rules, size_t count,
                      FxSupport** out) {
    return guarded("SupportAllOf", [&] {
      *require(out, "out") = new_support(all_of(rule_list(rules, count)));
    });
  };
  t.SupportAnyOf = [](const FxSupport* const* rules, size_t count,
                      FxSupport** out) {
    return guarded("SupportAnyOf", [&] {
      *require(out, "out") = new_support(any_of(rule_list(rules, count)));
    });
  };
  t.SupportNot = [](const FxSupport* rule, FxSupport** out) {
    return guarded("SupportNot", [&] {
      *require(out, "out") = new_support(negation(rule_of(rule, "rule")));
    });
  };
  t.ReleaseSupport = [](FxSupport* rule) { release_object(rule); };
  t.SupportIsNodeSupported = [](const FxSupport* rule, const FxNode* node,
                                int* out) {
    return guarded("SupportIsNodeSupported", [&] {
      *require(out, "out") =
          rule_of(rule, "rule")
              .is_node_supported(*require(unwrap(node), "node"));
    });
  };
  t.GraphProposePartitions = [](const FxGraph* g, const FxSupport* rule,
                                const FxPartitionOptions* options,
                                FxPartitions** out) {
    return guarded("GraphProposePartitions",
                   [&] { propose(g, rule, options, out); });
  };
  t.PartitionsCount = [](const FxPartitions* p) -> size_t {
    const HostObject<FxPartitions>* object = peek_object(p);
    return object ? object->nodes.size() : 0;
  };
  t.PartitionSize = [](const FxPartitions* p, size_t i) -> size_t {
    const HostObject<FxPartitions>* object = peek_object(p);
    return object && i < object->nodes.size() ? object->nodes[i].size() : 0;
  };
  // NULL for a node that no longer exists, as for one out of range.
  t.PartitionNode = [](const FxPartitions* p, size_t i, size_t j) -> FxNode* {
    const HostObject<FxPartitions>* object = peek_object(p);
    if (object == nullptr || i >= object->nodes.size()) return nullptr;
    const std::vector<FxNode*>& nodes = object->nodes[i];
    return j < nodes.size() && peek(nodes[j]) ? nodes[j] : nullptr;
  };
  t.ReleasePartitions = [](FxPartitions* p) { release_object(p); };
  t.GraphFusePartitions = [](FxGraph* g, const FxPartitions* partitions,
                             const char* prefix) {
    return guarded("GraphFusePartitions", [&] { fuse(g, partitions, prefix); });
  };
}

}  // namespace fx::host::internal
