// accelerator_partition's torch split_module by partition id: the
// submodules submod_ID in split_module's topological order and the main
// graph calling them, named as torch's new graph.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/optimization/accelerator_partition.h"
#include "plugins/optimization/passes.h"
#include "plugins/optimization/retrace.h"

namespace fx_optimization {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

namespace {

// One partition of torch's split_module, by name (its id as text).
struct SplitPartition {
  std::string name;
  std::vector<int> nodes;
  std::vector<int> inputs, outputs;  // insertion-ordered sets
  std::set<std::string> dependent_on;
  std::vector<std::string> dependents;
};

void add_once(std::vector<int>& list, int v) {
  if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
}

// The node references of `a`, in map_arg's order, repeats kept.
void flatten(ArgView a, std::vector<Node>& out) {
  if (a.kind() == FX_ARG_NODE) {
    out.push_back(a.node());
    return;
  }
  for (size_t i = 0; i < a.size(); ++i) flatten(a[i], out);
}

class SplitPlan {
 public:
  SplitPlan(const GraphInfo& g, const std::map<int, int64_t>& part) : g_(g) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const int v = static_cast<int>(i);
      if (!g.is_call(v)) continue;
      auto it = part.find(v);
      if (it == part.end()) {
        refuse_graph("node '" + g.name(v) +
                     "' is in no partition (option "
                     "'node_to_partition_mapping' misses it; torch raises "
                     "KeyError)");
      }
      place(v, partition(it->second));
    }
  }

  // The output node's uses; then torch's topological order.
  std::vector<SplitPartition*> order(const Node& output) {
    std::vector<Node> used;
    if (output.num_args() > 0) flatten(output.arg(0), used);
    for (const Node& n : used) record(g_.index.at(n.get()), nullptr);
    return sorted();
  }

  SplitPartition* of(int v) const {
    auto it = part_of_.find(v);
    return it == part_of_.end() ? nullptr : it->second;
  }

 private:
  // The partition of id `id`, named by its id (made on first use).
  SplitPartition* partition(int64_t id) {
    SplitPartition*& p = by_id_[id];
    if (p == nullptr) {
      const std::string name = std::to_string(id);
      index_.emplace(name, partitions_.size());
      partitions_.push_back(std::make_unique<SplitPartition>());
      p = partitions_.back().get();
      p->name = name;
    }
    return p;
  }

  void place(int v, SplitPartition* p) {
    p->nodes.push_back(v);
    part_of_[v] = p;
    const Node& n = g_.nodes[v];
    std::vector<Node> used;
    for (size_t i = 0; i < n.num_args(); ++i) flatten(n.arg(i), used);
    for (size_t i = 0; i < n.num_kwargs(); ++i) flatten(n.kwarg_value(i), used);
    for (const Node& x : used) record(g_.index.at(x.get()), p);
  }

  // record_cross_partition_use; `use` null for the output.
  void record(int def, SplitPartition* use) {
    SplitPartition* from = of(def);
    if (from == use) return;
    if (from != nullptr) {
      add_once(from->outputs, def);
      if (use != nullptr &&
          std::find(from->dependents.begin(), from->dependents.end(),
                    use->name) == from->dependents.end()) {
        from->dependents.push_back(use->name);
      }
    }
    if (use != nullptr) {
      add_once(use->inputs, def);
      if (from != nullptr) use->dependent_on.insert(from->name);
    }
  }

  std::vector<SplitPartition*> sorted() {
    std::vector<std::string> roots;
    for (const auto& p : partitions_) {
      if (p->dependent_on.empty()) roots.push_back(p->name);
    }
    std::vector<SplitPartition*> out;
    while (!roots.empty()) {
      SplitPartition* root = partitions_[index_.at(roots.back())].get();
      roots.pop_back();
      out.push_back(root);
      for (const std::string& d : root->dependents) {
        SplitPartition* dep = partitions_[index_.at(d)].get();
        dep->dependent_on.erase(root->name);
        if (dep->dependent_on.empty()) roots.push_back(d);
      }
    }
    if (out.size() != partitions_.size()) {
      refuse_graph("cycle exists between partitions!");
    }
    for (SplitPartition* p : out) {
      if (p->outputs.empty()) {
        refuse_graph("partition " + p->name + " (node '" +
                     g_.name(p->nodes[0]) +
                     "') has no result used outside it; torch's split_module "
                     "fails on it (IndexError)");
      }
    }
    return out;
  }

  const GraphInfo& g_;
  std::vector<std::unique_ptr<SplitPartition>> partitions_;
  std::map<std::string, size_t> index_;
  std::unordered_map<int64_t, SplitPartition*> by_id_;
  std::unordered_map<int, SplitPartition*> part_of_;
};

// Copies every meta item of `from` to `to` (torch's node.meta.copy()); the
// host copies each value from the borrowed one.
void copy_meta(const Node& from, Node& to) {
  const FxApi* api = fxp::api();
  const size_t count = api->NodeNumMeta(from.get());
  for (size_t i = 0; i < count; ++i) {
    const char* key = api->NodeMetaKey(from.get(), i);
    fxp::check(
        api->NodeSetMeta(to.get(), key, api->NodeGetMeta(from.get(), key)));
  }
}

// Fills submodule `p`'s graph as torch's split_module does: a call_module
// of `layer1.0.conv1` calls the shared module as `layer1_0_conv1`.
void build_submodule(Graph& g, const GraphInfo& info, const SplitPartition& p,
                     Graph sub) {
  std::unordered_map<FxNode*, Node> env;
  for (int v : p.inputs) {
    const std::string name = info.name(v);
    Node ph = sub.create_node(FX_OP_PLACEHOLDER, name.c_str());
    copy_meta(info.nodes[v], ph);
    env[info.nodes[v].get()] = ph;
  }
  std::map<std::string, std::string> shared;  // target -> name in `sub`
  const std::function<Node(Node)> value = [&](Node x) {
    return env.at(x.get());
  };
  for (int v : p.nodes) {
    const Node& n = info.nodes[v];
    std::string target(n.target());
    if (n.op() == FX_OP_CALL_MODULE) {
      auto it = shared.find(target);
      if (it == shared.end()) {
        it = shared
                 .emplace(target, fx_plugins::share_as_split_module_attr(
                                      g, sub, target))
                 .first;
      }
      target = it->second;
    }
    const std::vector<Arg> args = fx_plugins::map_args(n, value);
    const fxp::Kwargs kwargs = fx_plugins::map_kwargs(n, value);
    Node copy = sub.create_node(n.op(), target.c_str(), args, kwargs);
    copy_meta(n, copy);
    env[n.get()] = copy;
  }
  std::vector<Arg> outs;
  for (int v : p.outputs) outs.emplace_back(env.at(info.nodes[v].get()));
  sub.create_node(FX_OP_OUTPUT, "output",
                  {outs.size() == 1 ? outs[0] : Arg::tuple(outs)});
}

// The main graph's calls; each original node's value there.
struct MainGraph {
  std::vector<Node> made;
  std::vector<Node> calls;  // one per partition, in order
  std::unordered_map<FxNode*, Node> value_of;
  Node value(const Node& x) const {
    auto it = value_of.find(x.get());
    return it == value_of.end() ? x : it->second;
  }
};

MainGraph build_main(Graph& g, const GraphInfo& info,
                     const std::vector<SplitPartition*>& order) {
  MainGraph main;
  fxp::InsertGuard at = g.inserting_before(g.output_node());
  for (const SplitPartition* p : order) {
    std::vector<Arg> args;
    for (int v : p->inputs) args.emplace_back(main.value(info.nodes[v]));
    const std::string name = "submod_" + p->name;
    Node call = g.call_module(name.c_str(), args);
    main.made.push_back(call);
    main.calls.push_back(call);
    if (p->outputs.size() == 1) {
      main.value_of[info.nodes[p->outputs[0]].get()] = call;
      continue;
    }
    for (size_t i = 0; i < p->outputs.size(); ++i) {
      main.value_of[info.nodes[p->outputs[i]].get()] =
          main.made.emplace_back(g.call_function(
              "operator.getitem", {Arg(call), Arg(static_cast<int64_t>(i))}));
    }
  }
  return main;
}

// The main graph named as torch's new graph names it.
void name_main(Graph& g, const std::vector<Node>& made) {
  std::vector<FreshNode> fresh;
  for (Node n : g) {
    if (n.op() == FX_OP_PLACEHOLDER || n.op() == FX_OP_GET_ATTR) {
      fresh.push_back({n.op(), std::string(n.target()), ""});
    }
  }
  for (const Node& n : made) fresh.push_back({n.op(), n.target_cstr(), ""});
  apply_fresh_graph_names(g, fresh_graph_names(fresh));
}

}  // namespace

// torch's split_module(gm, gm, node -> partition id), in place; returns
// the submodule calls in order with their partitions' names.
std::vector<std::pair<Node, std::string>> split_by_partition(
    Graph& g, const GraphInfo& info, const std::map<int, int64_t>& part) {
  SplitPlan plan(info, part);
  const std::vector<SplitPartition*> order = plan.order(g.output_node());
  for (const SplitPartition* p : order) {
    const std::string name = "submod_" + p->name;
    if (g.has_attr(name.c_str())) {
      refuse_graph("the module already has an attribute '" + name + "'");
    }
  }
  for (const SplitPartition* p : order) {
    const std::string name = "submod_" + p->name;
    build_submodule(g, info, *p, fxp::add_subgraph_module(g, name.c_str()));
  }
  MainGraph main = build_main(g, info, order);
  Node output = g.output_node();
  output.set_type(nullptr);
  if (output.num_args() > 0) {
    output.update_arg(0, fx_plugins::map_arg(output.arg(0), [&](Node x) {
                        return main.value(x);
                      }));
  }
  for (size_t i = info.nodes.size(); i-- > 0;) {
    if (info.is_call(static_cast<int>(i))) g.erase_node(info.nodes[i]);
  }
  for (Node n : g) {
    if (n.op() == FX_OP_GET_ATTR) n.set_type(nullptr);
  }
  name_main(g, main.made);
  std::vector<std::pair<Node, std::string>> calls;
  for (size_t k = 0; k < order.size(); ++k) {
    calls.emplace_back(main.calls[k], order[k]->name);
  }
  return calls;
}

}  // namespace fx_optimization
