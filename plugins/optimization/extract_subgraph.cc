// extract_subgraph: torch 1.13's torch.fx.experimental.optimization.
// extract_subgraph(orig_module, nodes, inputs, outputs), as a pass that
// turns the graph into the subgraph's (a pipeline's graph is changed in
// place; torch returns a new GraphModule).
//
// torch builds a new graph: a placeholder per input, named after the input
// node (Graph.placeholder(input.name): its target is the name, its own name
// that name snake-cased); a node_copy of every node of `nodes`, in the order
// given, each reading the copies made so far (inputs included, so a node
// listed twice is copied twice and an input listed among the nodes is
// copied too, the later copy read from then on); and an output returning the
// list of the outputs' copies. Here the same nodes are copied into the
// graph, the old ones erased, and every node given the name torch's new
// graph gives it; the graph's namespace is then a fresh graph's.
//
// Options: `inputs` and `outputs` (node names), `nodes` (node names; by
// default every node an output needs, in graph order, walking back from the
// outputs and stopping at the inputs). A node that reads a node neither an
// input nor copied before it (torch raises KeyError), an unknown name, an
// output node among them: refused, naming the node and the option, before
// anything changes.
//
// The module then keeps only the submodules and tensors the new graph
// uses, in the order it first uses them, as torch's GraphModule(orig_module,
// new_graph) copies them (GraphKeepUsedAttrs).
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/optimization/passes.h"
#include "plugins/optimization/retrace.h"

namespace fx_optimization {
namespace {

using fxp::Arg;
using fxp::Graph;
using fxp::Node;

constexpr const char* kPass = "extract_subgraph";

[[noreturn]] void refuse(const std::string& what) {
  fx_plugins::refuse_in(kPass, FX_INVALID_ARGUMENT, what);
}

using NodesByName = std::unordered_map<std::string, Node>;

// The nodes an option names, in its order.
std::vector<Node> named_nodes(const NodesByName& by_name,
                              const fxp::Options& options, const char* option) {
  std::vector<Node> out;
  for (const std::string& name : options.get_list(option)) {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      refuse("option '" + std::string(option) + "' names '" + name +
             "', which is no node of the graph");
    }
    if (it->second.op() == FX_OP_OUTPUT) {
      refuse("option '" + std::string(option) +
             "' names the output node; name the values it returns");
    }
    out.push_back(it->second);
  }
  return out;
}

// The default `nodes`: what the outputs need, back to the inputs, in graph
// order.
std::vector<Node> needed_nodes(const Graph& g, const std::vector<Node>& inputs,
                               const std::vector<Node>& outputs) {
  std::unordered_set<FxNode*> stop;
  for (const Node& n : inputs) stop.insert(n.get());
  std::unordered_set<FxNode*> needed;
  std::vector<Node> work;
  for (const Node& n : outputs) {
    if (stop.count(n.get()) == 0 && needed.insert(n.get()).second) {
      work.push_back(n);
    }
  }
  while (!work.empty()) {
    Node n = work.back();
    work.pop_back();
    for (const Node& in : n.all_input_nodes()) {
      if (stop.count(in.get()) == 0 && needed.insert(in.get()).second) {
        work.push_back(in);
      }
    }
  }
  std::vector<Node> out;
  for (Node n : g) {
    if (needed.count(n.get()) != 0) out.push_back(n);
  }
  return out;
}

// torch's env, checked before anything changes: every node copied reads
// only inputs and nodes copied before it, and every output is one of them.
void check_copies(const std::vector<Node>& inputs,
                  const std::vector<Node>& nodes,
                  const std::vector<Node>& outputs) {
  std::unordered_set<FxNode*> env;
  for (const Node& n : inputs) env.insert(n.get());
  for (const Node& n : nodes) {
    for (const Node& in : n.all_input_nodes()) {
      if (env.count(in.get()) != 0) continue;
      refuse("node '" + std::string(n.name()) + "' reads '" +
             std::string(in.name()) +
             "', which is neither an input nor a node before it in the "
             "subgraph (torch raises KeyError); add it to 'inputs' or "
             "'nodes'");
    }
    env.insert(n.get());
  }
  for (const Node& n : outputs) {
    if (env.count(n.get()) == 0) {
      refuse("output '" + std::string(n.name()) +
             "' is neither an input nor a node of the subgraph");
    }
  }
}

// The names torch's new graph gives its nodes: a placeholder per input
// (named after it), a copy of each node (asking for its name), the output.
std::vector<std::string> torch_names(const std::vector<Node>& inputs,
                                     const std::vector<Node>& nodes) {
  std::vector<FreshNode> fresh;
  for (const Node& in : inputs) {
    fresh.push_back({FX_OP_PLACEHOLDER, std::string(in.name()), ""});
  }
  for (const Node& n : nodes) {
    fresh.push_back({n.op(), n.target_cstr(), std::string(n.name())});
  }
  return fresh_graph_names(fresh);
}

}  // namespace

bool extract_subgraph(Graph& g, const fxp::Options& options) {
  require_renaming(kPass);
  NodesByName by_name;
  for (Node n : g) by_name.emplace(std::string(n.name()), n);
  const std::vector<Node> inputs = named_nodes(by_name, options, "inputs");
  const std::vector<Node> outputs = named_nodes(by_name, options, "outputs");
  if (outputs.empty()) refuse("option 'outputs' names no node");
  std::vector<Node> nodes = named_nodes(by_name, options, "nodes");
  if (nodes.empty()) nodes = needed_nodes(g, inputs, outputs);
  check_copies(inputs, nodes, outputs);
  const std::vector<std::string> names = torch_names(inputs, nodes);

  const std::vector<Node> old = g.nodes();
  std::vector<Node> made;
  std::unordered_map<FxNode*, Node> env;
  {
    fxp::InsertGuard at = g.inserting_before(old.front());
    for (const Node& in : inputs) {
      std::string target(in.name());
      env[in.get()] =
          made.emplace_back(g.create_node(FX_OP_PLACEHOLDER, target.c_str()));
    }
    for (const Node& n : nodes) {
      Node copy = g.node_copy(n);
      for (const Node& in : n.all_input_nodes()) {
        copy.replace_input_with(in, env.at(in.get()));
      }
      env[n.get()] = made.emplace_back(copy);
    }
    std::vector<Arg> results;
    for (const Node& n : outputs) results.emplace_back(env.at(n.get()));
    made.push_back(g.create_node(FX_OP_OUTPUT, "output", {Arg::list(results)}));
  }
  for (auto it = old.rbegin(); it != old.rend(); ++it) g.erase_node(*it);

  Renames renames;
  for (size_t i = 0; i < made.size(); ++i) {
    if (made[i].name() != names[i]) renames.emplace_back(made[i], names[i]);
  }
  apply_retrace_names(g, renames);
  fxp::keep_used_attrs(g);
  return true;
}

}  // namespace fx_optimization
