// fx::OperatorSupport: which nodes a backend can run (torch.fx's
// OperatorSupportBase, torch/fx/passes/operator_support.py).
//
// A support rule is a predicate over one node. Rules are values (cheap to
// copy: they share their predicate) and compose as torch.fx's helpers do:
// all_of is torch.fx's `chain` (every rule says yes), any_of is the union,
// negation turns a rule around (OpSupports.decline_if_* are negations of
// node_names_support and of a tensor_meta_support on the inputs).
//
// A rule must not change the graph and must give the same answer for the same
// node during one partitioning. It may throw FxError; the partitioner passes
// the error on.
#ifndef FX_CORE_PARTITION_OPERATOR_SUPPORT_H_
#define FX_CORE_PARTITION_OPERATOR_SUPPORT_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fx_core/ir/node.h"

namespace fx {

class OperatorSupport {
 public:
  using Predicate = std::function<bool(const Node&)>;

  // Supports nothing.
  OperatorSupport();
  // torch.fx's create_op_support. An empty predicate supports nothing.
  explicit OperatorSupport(Predicate predicate);

  bool is_node_supported(const Node& node) const { return (*predicate_)(node); }

 private:
  std::shared_ptr<const Predicate> predicate_;
};

// Every rule supports the node (torch.fx's chain); true for no rules.
OperatorSupport all_of(std::vector<OperatorSupport> rules);
// Some rule supports the node; false for no rules.
OperatorSupport any_of(std::vector<OperatorSupport> rules);
// The rule does not support the node.
OperatorSupport negation(OperatorSupport rule);

// Nodes of these opcodes (say, get_attr, whose values a partition may read).
OperatorSupport opcode_support(std::vector<Opcode> opcodes);
// Nodes with these names (torch.fx's decline_if_node_in_names, negated).
OperatorSupport node_names_support(std::vector<std::string> names);

}  // namespace fx

#endif  // FX_CORE_PARTITION_OPERATOR_SUPPORT_H_
