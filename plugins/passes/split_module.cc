// split_module (libfx_passes.so): torch.fx's split_module. The call nodes
// are partitioned by exactly one of the options `partitions`, `split_at` or
// `meta_key`; each partition becomes a child GraphModule (`prefix` and its
// index) called from the parent in dependency order, the attributes it
// uses shared with the parent under torch's flat names.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/passes/passes.h"

namespace fx_passes {
namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t end = text.find(sep, start);
    out.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

void check_one_split_option(const std::vector<std::string>& groups,
                            const std::vector<std::string>& split_at,
                            const std::string& meta_key) {
  int given = !groups.empty() + !split_at.empty() + !meta_key.empty();
  if (given != 1) {
    throw fxp::Error(
        FX_INVALID_ARGUMENT,
        "split_module needs exactly one of partitions (groups of "
        "node names joined by '+'), split_at (nodes that start a "
        "partition) or meta_key (a meta key naming the partition)");
  }
}

// The compute nodes in graph order and their partition labels.
struct LabelledNodes {
  std::vector<Node> compute;
  std::vector<std::string> labels;
};

// Each compute node's partition label, as the option gives it ("" for
// unlabelled nodes).
LabelledNodes label_compute_nodes(Graph& g,
                                  const std::vector<std::string>& groups,
                                  const std::vector<std::string>& split_at,
                                  const std::string& meta_key) {
  std::map<std::string, std::string> label_of_name;
  for (size_t i = 0; i < groups.size(); ++i) {
    for (const std::string& name : split(groups[i], '+')) {
      label_of_name[name] = std::to_string(i);
    }
  }
  std::set<std::string> starts(split_at.begin(), split_at.end());
  LabelledNodes out;
  int boundary = 0;
  for (Node n : g) {
    if (!fx_plugins::is_call_node(n)) continue;
    std::string name(n.name());
    std::string label;
    if (!groups.empty()) {
      auto it = label_of_name.find(name);
      if (it != label_of_name.end()) label = it->second;
    } else if (!split_at.empty()) {
      if (starts.count(name) && !out.compute.empty()) ++boundary;
      starts.erase(name);
      label = std::to_string(boundary);
    } else if (ArgView m = n.meta(meta_key.c_str())) {
      label =
          m.kind() == FX_ARG_INT ? std::to_string(m.as_int()) : m.as_string();
    }
    out.compute.push_back(n);
    out.labels.push_back(label);
  }
  if (!starts.empty()) {
    throw fxp::Error(FX_NOT_FOUND,
                     "split_at names no node '" + *starts.begin() + "'");
  }
  return out;
}

// Unlabelled nodes join the partition of the nearest labelled node before
// them (the first one for leading nodes).
void fill_unlabelled(std::vector<std::string>& labels) {
  std::string current;
  for (const std::string& l : labels) {
    if (!l.empty()) {
      current = l;
      break;
    }
  }
  for (std::string& l : labels) {
    if (l.empty()) l = current;
    current = l;
  }
}

// Partitions in order of first appearance: their number, and each compute
// node's.
size_t number_partitions(const LabelledNodes& nodes,
                         std::unordered_map<FxNode*, size_t>& part) {
  std::vector<std::string> names;
  for (size_t i = 0; i < nodes.compute.size(); ++i) {
    auto it = std::find(names.begin(), names.end(), nodes.labels[i]);
    if (it == names.end()) it = names.insert(names.end(), nodes.labels[i]);
    part[nodes.compute[i].get()] = it - names.begin();
  }
  return names.size();
}

// Dependencies between partitions; topological order (Kahn, stable).
std::vector<size_t> partition_order(const std::vector<Node>& compute,
                                    std::unordered_map<FxNode*, size_t>& part,
                                    size_t num) {
  std::vector<std::set<size_t>> deps(num);
  for (Node n : compute) {
    for (Node i : n.all_input_nodes()) {
      auto it = part.find(i.get());
      if (it != part.end() && it->second != part[n.get()]) {
        deps[part[n.get()]].insert(it->second);
      }
    }
  }
  std::vector<size_t> order;
  std::vector<bool> done(num, false);
  while (order.size() < num) {
    bool progressed = false;
    for (size_t p = 0; p < num; ++p) {
      if (done[p]) continue;
      bool ready = std::all_of(deps[p].begin(), deps[p].end(),
                               [&](size_t d) { return done[d]; });
      if (ready) {
        done[p] = true;
        order.push_back(p);
        progressed = true;
        break;
      }
    }
    if (!progressed) {
      throw fxp::Error(FX_INVALID_ARGUMENT,
                       "the partitions depend on each other in a cycle");
    }
  }
  return order;
}

// Fills a submodule's graph with copies of a partition's nodes as torch's
// split_module does: placeholders named as the values they receive, the
// copies named from their targets and without type annotations, and an
// attribute `layer1.0.conv1` of the parent shared as `layer1_0_conv1`.
class SubgraphBuilder {
 public:
  SubgraphBuilder(Graph& parent, Graph sub) : parent_(parent), sub_(sub) {}

  void add_placeholders(const std::vector<Node>& inputs) {
    for (Node i : inputs) {
      std::string name(i.name());
      env_[i.get()] = sub_.create_node(FX_OP_PLACEHOLDER, name.c_str(), {}, {},
                                       name.c_str());
    }
  }

  void copy_members(const std::vector<Node>& members) {
    std::function<Node(Node)> map = [&](Node n) { return value_of(n); };
    for (Node n : members) {
      std::vector<Arg> args = fx_plugins::map_args(n, map);
      fxp::Kwargs kwargs = fx_plugins::map_kwargs(n, map);
      std::string target(n.target());
      if (n.op() == FX_OP_CALL_MODULE) target = share(target);
      env_[n.get()] = sub_.create_node(n.op(), target.c_str(), args, kwargs);
    }
  }

  void add_output(const std::vector<Node>& outputs) {
    if (outputs.size() == 1) {
      sub_.create_node(FX_OP_OUTPUT, "output", {Arg(env_[outputs[0].get()])});
    } else {
      std::vector<Arg> items;
      for (Node o : outputs) items.emplace_back(env_[o.get()]);
      sub_.create_node(FX_OP_OUTPUT, "output", {Arg::tuple(items)});
    }
  }

 private:
  // The parent's attribute `target` shared with the submodule (once);
  // its name there.
  std::string share(const std::string& target) {
    auto it = shared_.find(target);
    if (it == shared_.end()) {
      it = shared_
               .emplace(target, fx_plugins::share_as_split_module_attr(
                                    parent_, sub_, target))
               .first;
    }
    return it->second;
  }

  // The submodule's value for `n`: a copy made already, or a get_attr
  // recreated inside.
  Node value_of(Node n) {
    auto it = env_.find(n.get());
    if (it != env_.end()) return it->second;
    if (n.op() == FX_OP_GET_ATTR) {
      std::string target = share(std::string(n.target()));
      Node attr = sub_.create_node(FX_OP_GET_ATTR, target.c_str());
      env_[n.get()] = attr;
      return attr;
    }
    throw fxp::Error(FX_INTERNAL, "split_module: no value for '" +
                                      std::string(n.name()) +
                                      "' in its partition");
  }

  Graph& parent_;
  Graph sub_;
  std::unordered_map<FxNode*, Node> env_;
  std::map<std::string, std::string> shared_;  // target -> name in sub_
};

// Moves the partitions, in order, into submodules called from the parent.
class PartitionExtractor {
 public:
  PartitionExtractor(Graph& g, const std::vector<Node>& compute,
                     std::unordered_map<FxNode*, size_t>& part,
                     std::string prefix)
      : g_(g),
        compute_(compute),
        part_(part),
        prefix_(std::move(prefix)),
        output_(g.output_node()) {}

  void extract(size_t index, size_t p) {
    std::vector<Node> members;
    for (Node n : compute_) {
      if (part_[n.get()] == p) members.push_back(n);
    }
    std::vector<Node> inputs, outputs;
    find_boundary(members, inputs, outputs);
    std::string sub_name = prefix_ + std::to_string(index);
    SubgraphBuilder sub(g_, fxp::add_subgraph_module(g_, sub_name.c_str()));
    sub.add_placeholders(inputs);
    sub.copy_members(members);
    sub.add_output(outputs);
    call_submodule(sub_name, inputs, outputs);
  }

  // The uses of the partitioned nodes go to the submodules' values; the
  // partitioned nodes are erased, and get_attr nodes now used only inside
  // the submodules.
  void finish() {
    for (auto& [original, value] : replaced_)
      Node(original).replace_all_uses_with(value);
    for (size_t i = compute_.size(); i-- > 0;) g_.erase_node(compute_[i]);
    for (Node n : g_) {
      if (n.op() == FX_OP_GET_ATTR && n.num_users() == 0) g_.erase_node(n);
    }
  }

 private:
  // Inputs: values defined outside the partition (get_attr nodes are
  // recreated inside); outputs: members used outside.
  static void find_boundary(const std::vector<Node>& members,
                            std::vector<Node>& inputs,
                            std::vector<Node>& outputs) {
    std::unordered_set<FxNode*> member_set, input_set;
    for (Node n : members) member_set.insert(n.get());
    for (Node n : members) {
      for (Node i : n.all_input_nodes()) {
        if (member_set.count(i.get()) || i.op() == FX_OP_GET_ATTR) continue;
        if (input_set.insert(i.get()).second) inputs.push_back(i);
      }
      for (Node u : n.users()) {
        if (!member_set.count(u.get())) {
          outputs.push_back(n);
          break;
        }
      }
    }
  }

  // The call in the parent, before the output node.
  void call_submodule(const std::string& sub_name,
                      const std::vector<Node>& inputs,
                      const std::vector<Node>& outputs) {
    auto guard = g_.inserting_before(output_);
    std::vector<Arg> call_args;
    for (Node i : inputs) call_args.emplace_back(parent_value(i));
    Node call = g_.call_module(sub_name.c_str(), call_args);
    if (outputs.size() == 1) {
      replaced_[outputs[0].get()] = call;
    } else {
      for (size_t k = 0; k < outputs.size(); ++k) {
        replaced_[outputs[k].get()] = g_.call_function(
            "operator.getitem", {Arg(call), Arg(static_cast<int64_t>(k))});
      }
    }
  }

  Node parent_value(Node n) const {
    auto it = replaced_.find(n.get());
    return it == replaced_.end() ? n : it->second;
  }

  Graph& g_;
  const std::vector<Node>& compute_;
  std::unordered_map<FxNode*, size_t>& part_;
  const std::string prefix_;
  std::unordered_map<FxNode*, Node> replaced_;  // original -> parent value
  Node output_;
};

}  // namespace

bool split_module(Graph& g, const fxp::Options& options) {
  std::vector<std::string> groups = options.get_list("partitions");
  std::vector<std::string> split_at = options.get_list("split_at");
  std::string meta_key = options.get_string("meta_key");
  check_one_split_option(groups, split_at, meta_key);
  LabelledNodes nodes = label_compute_nodes(g, groups, split_at, meta_key);
  fill_unlabelled(nodes.labels);
  std::unordered_map<FxNode*, size_t> part;
  size_t num = number_partitions(nodes, part);
  if (num == 0) return false;
  std::vector<size_t> order = partition_order(nodes.compute, part, num);
  PartitionExtractor extractor(g, nodes.compute, part,
                               options.get_string("prefix"));
  for (size_t index = 0; index < order.size(); ++index) {
    extractor.extract(index, order[index]);
  }
  extractor.finish();
  return true;
}

}  // namespace fx_passes
