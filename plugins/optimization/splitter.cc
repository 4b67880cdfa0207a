// splitter: torch 1.13's torch.fx.passes.splitter_base._SplitterBase, called
// (`splitter()`): the graph's call nodes split into alternating accelerator
// and CPU submodules, as few as the data flow allows.
//
// As torch does, in order:
//  - the acc nodes: the call nodes the `supported` targets name (torch's
//    OperatorSupport with a support dict of those names and no dtype
//    rules: get_node_target's spelling, a module's class, a function's
//    qualified name, a builtin's or a method's bare name); unless
//    allow_non_tensor, an acc node reading a CPU node's non-tensor result, or
//    giving a non-tensor result to a CPU node, is a CPU node
//    (FxNetAccNodesFinder, transitively);
//  - unless skip_fusion, fusion groups (FxNetAccFusionsFinder): acc nodes
//    linked by non-tensor values (no tensor_meta) stay together, and a
//    group with a CPU node in it is CPU altogether;
//  - the dependencies between call nodes, a fusion group's shared;
//  - put_nodes_into_subgraphs: starting from the users of the placeholders
//    and attributes, with CPU first when a CPU starter depends on nothing,
//    each subgraph takes every node of its kind whose dependencies are met,
//    then the kind flips;
//  - remove_small_acc_subgraphs: an acc subgraph of fewer than
//    min_acc_module_size nodes joins the CPU subgraph before it (or becomes
//    CPU when first), and adjacent CPU subgraphs merge;
//  - the tags `_run_on_acc_K` and `{non_acc_submodule_name}K` (K counting
//    all subgraphs), and split_by_tags on them (split_by_tags.cc).
// Needs meta['type'] and meta['tensor_meta'] as torch's ShapeProp leaves
// them: run shape_prop first. A call node no subgraph reaches (one reading
// no node) is refused as torch's split_by_tags asserts, and torch's
// FxNetSplitterInternalError is refused with its message.
//
// With `report` (a file, or - for standard output), written after the
// split: torch's node_support_preview report (each call target and its
// argument dtypes, supported or not) and the lines its splitter prints
// (small acc subgraphs eliminated, "Got N acc subgraphs and M non-acc
// subgraphs"). Module classes are spelled as torch prints them, by the
// module that defines them (torch.nn.modules.linear.Linear for the host's
// torch.nn.Linear: fx_plugins::torch_class_path), and a target's dtype
// combinations in order of first appearance (torch's come from a set).
#include <algorithm>
#include <cctype>
#include <deque>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/optimization/passes.h"
#include "plugins/optimization/retrace.h"

namespace fx_optimization {
namespace {

using fxp::Node;

constexpr const char* kPass = "splitter";

[[noreturn]] void refuse(FxStatusCode code, const std::string& what) {
  fx_plugins::refuse_in(kPass, code, what);
}

// Whether `prefix` followed by digits is a Python identifier (the CPU
// submodules' names, which split_by_tags requires).
bool is_name_prefix(const std::string& prefix) {
  if (prefix.empty() || std::isdigit(static_cast<unsigned char>(prefix[0]))) {
    return false;
  }
  return std::all_of(prefix.begin(), prefix.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// torch's is_node_output_tensor: meta['type'] a Tensor class.
bool output_is_tensor(const Node& n) {
  fxp::ArgView type = n.meta("type");
  if (!type || type.kind() != FX_ARG_STRING) return false;
  const std::string t = type.as_string();
  return t == "torch.Tensor" || t == "torch.nn.parameter.Parameter";
}

bool has_tensor_meta(const Node& n) { return bool(n.meta("tensor_meta")); }

// Nodes by position in the graph, and sets of them ordered by position
// (torch's sets, iterated here in graph order).
using NodeSet = std::set<size_t>;

class Splitter {
 public:
  Splitter(const fxp::Graph& g, const fxp::Options& options)
      : nodes_(g.nodes()) {
    for (size_t i = 0; i < nodes_.size(); ++i) index_[nodes_[i].get()] = i;
    index_edges();
    check_shapes();
    find_acc_nodes(options);
    if (!options.get_bool("allow_non_tensor")) {
      reduce_non_tensor_inputs();
      reduce_non_tensor_outputs();
    }
    if (!options.get_bool("skip_fusion")) find_fusions();
    find_deps();
  }

  // The subgraphs, each a kind and its nodes, after removing small ones.
  struct Subgraph {
    bool is_acc;
    std::vector<size_t> nodes;
  };
  // `log` gets the lines torch prints on the way.
  std::vector<Subgraph> subgraphs(int64_t min_acc_module_size,
                                  std::string& log) {
    return remove_small_acc_subgraphs(put_nodes_into_subgraphs(),
                                      min_acc_module_size, log);
  }

  size_t index(const Node& n) const { return index_.at(n.get()); }

  // Whether the support list names `n` (torch's is_node_supported, before
  // the non-tensor rules and fusion groups).
  bool listed(const Node& n) const {
    return support_ && support_->is_node_supported(n);
  }

 private:
  // Each node's users, and the call nodes among its inputs, by position:
  // read through the C ABI once, walked many times below.
  void index_edges() {
    users_.resize(nodes_.size());
    callable_inputs_.resize(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) {
      for (const Node& u : nodes_[i].users()) users_[i].push_back(index(u));
      for (const Node& in : nodes_[i].all_input_nodes()) {
        if (fx_plugins::is_call_node(in)) {
          callable_inputs_[i].push_back(index(in));
        }
      }
    }
  }

  void check_shapes() const {
    for (const Node& n : nodes_) {
      if (fx_plugins::is_call_node(n) && !n.meta("type")) {
        refuse(FX_FAILED_PRECONDITION,
               "node '" + std::string(n.name()) +
                   "' has no meta['type']: run shape_prop first (torch's "
                   "splitter runs ShapeProp on its sample input)");
      }
    }
  }

  void find_acc_nodes(const fxp::Options& options) {
    // get_node_target spells a builtin function bare (getattr), like a
    // method; a module's class always has its module path.
    const std::vector<std::string> names = options.get_list("supported");
    if (names.empty()) return;
    std::vector<std::string> dotted;
    for (const std::string& t : names) {
      if (t.find('.') != std::string::npos) dotted.push_back(t);
    }
    std::vector<fxp::Support> rules = {fxp::Support::functions(names),
                                       fxp::Support::methods(names)};
    if (!dotted.empty()) rules.push_back(fxp::Support::module_types(dotted));
    support_ = fxp::Support::any_of(rules);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (fx_plugins::is_call_node(nodes_[i]) &&
          support_->is_node_supported(nodes_[i])) {
        acc_.insert(i);
      }
    }
  }

  const std::vector<size_t>& users(size_t i) const { return users_[i]; }

  // torch's reduce_acc_nodes_non_tensor_input_helper.
  void remove_downstream(std::deque<size_t> work) {
    while (!work.empty()) {
      size_t n = work.front();
      work.pop_front();
      for (size_t u : users(n)) {
        if (acc_.erase(u) && !output_is_tensor(nodes_[u])) work.push_back(u);
      }
    }
  }

  void reduce_non_tensor_inputs() {
    std::deque<size_t> cpu;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (fx_plugins::is_call_node(nodes_[i]) && !acc_.count(i) &&
          !output_is_tensor(nodes_[i])) {
        cpu.push_back(i);
      }
    }
    remove_downstream(std::move(cpu));
  }

  void reduce_non_tensor_outputs() {
    while (true) {
      std::deque<size_t> new_cpu;
      for (size_t n : acc_) {
        if (output_is_tensor(nodes_[n])) continue;
        for (size_t u : users(n)) {
          if (!acc_.count(u)) {
            new_cpu.push_back(n);
            break;
          }
        }
      }
      if (new_cpu.empty()) return;
      for (size_t n : new_cpu) acc_.erase(n);
      remove_downstream(std::move(new_cpu));
    }
  }

  const std::vector<size_t>& callable_inputs(size_t i) const {
    return callable_inputs_[i];
  }

  // torch's FxNetAccFusionsFinder.FusionGroup.
  struct FusionGroup {
    size_t top;
    NodeSet nodes, inputs;
    std::vector<size_t> to_process;
  };

  void add_to_group(FusionGroup& group, size_t n) const {
    if (!group.nodes.insert(n).second) return;
    group.to_process.push_back(n);
    group.inputs.erase(n);
    for (size_t in : callable_inputs(n)) {
      if (!group.nodes.count(in)) group.inputs.insert(in);
    }
  }

  // torch's recursive_add_node: a path from `inputs` back up to the group
  // joins it.
  bool add_paths(FusionGroup& group, const std::vector<size_t>& inputs) const {
    for (size_t arg : inputs) {
      if (!fx_plugins::is_call_node(nodes_[arg]) || arg < group.top) continue;
      if (group.nodes.count(arg)) return true;
      if (add_paths(group, callable_inputs(arg))) {
        add_to_group(group, arg);
        return true;
      }
    }
    return false;
  }

  void add_paths_from_inputs(FusionGroup& group) const {
    const std::vector<size_t> inputs(group.inputs.begin(), group.inputs.end());
    add_paths(group, inputs);
  }

  FusionGroup grow_group(size_t start) const {
    FusionGroup group{start, {start}, {}, {start}};
    for (const Node& in : nodes_[start].all_input_nodes()) {
      group.inputs.insert(index(in));
    }
    while (!group.to_process.empty()) {
      size_t n = group.to_process.back();
      group.to_process.pop_back();
      add_paths_from_inputs(group);
      if (!has_tensor_meta(nodes_[n])) {
        for (size_t u : users(n)) {
          if (!fx_plugins::is_call_node(nodes_[u]) || group.nodes.count(u))
            continue;
          add_to_group(group, u);
          add_paths_from_inputs(group);
        }
      }
      for (size_t arg : callable_inputs(n)) {
        if (has_tensor_meta(nodes_[arg]) || group.nodes.count(arg)) continue;
        add_to_group(group, arg);
        group.top = std::min(group.top, arg);
        add_paths_from_inputs(group);
      }
    }
    return group;
  }

  void find_fusions() {
    const NodeSet candidates = acc_;
    for (size_t n : candidates) {
      if (fusion_of_.count(n) || !acc_.count(n) || has_tensor_meta(nodes_[n])) {
        continue;
      }
      FusionGroup group = grow_group(n);
      const bool all_acc =
          std::all_of(group.nodes.begin(), group.nodes.end(),
                      [&](size_t m) { return acc_.count(m) != 0; });
      if (!all_acc) {
        for (size_t m : group.nodes) acc_.erase(m);
        continue;
      }
      fusions_.push_back(group.nodes);
      for (size_t m : group.nodes) fusion_of_[m] = fusions_.size() - 1;
    }
  }

  // torch's find_deps and update_deps_for_fusions.
  void find_deps() {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!fx_plugins::is_call_node(nodes_[i])) continue;
      for (size_t u : users(i)) {
        if (nodes_[u].op() != FX_OP_OUTPUT) deps_[u].insert(i);
      }
    }
    for (const auto& [node, f] : fusion_of_) {
      const NodeSet& fusion = fusions_[f];
      for (size_t neighbour : fusion) {
        for (size_t d : deps_[neighbour]) {
          if (!fusion.count(d)) deps_[node].insert(d);
        }
        for (size_t u : users(neighbour)) {
          if (!fusion.count(u)) deps_[u].insert(node);
        }
      }
    }
  }

  // torch's put_nodes_into_subgraphs. torch scans its pools for a node
  // whose dependencies are visited; here each node counts its unvisited
  // dependencies, and a pooled node whose count reaches zero waits in its
  // kind's ready queue (lowest position first). Which nodes a subgraph
  // takes does not depend on the order: taking a node only readies others.
  class Traversal {
   public:
    explicit Traversal(Splitter& s) : s_(s) {
      for (auto& [node, deps] : s.deps_) {
        unmet_[node] = deps.size();
        for (size_t d : deps) dependents_[d].push_back(node);
      }
    }

    void pool(size_t n) {
      if (visited_.count(n) || !pooled_.insert(n).second) return;
      ++pooled_count_[kind(n)];
      if (unmet(n) == 0) ready_[kind(n)].push(n);
    }

    bool empty() const { return pooled_count_[0] + pooled_count_[1] == 0; }
    bool any_pooled_without_deps(bool acc) const {
      for (size_t n : pooled_) {
        if (kind(n) == acc && s_.deps_[n].empty()) return true;
      }
      return false;
    }

    // The next ready node of the kind, or nullopt.
    std::optional<size_t> take(bool acc) {
      auto& ready = ready_[acc];
      if (ready.empty()) return std::nullopt;
      const size_t n = ready.top();
      ready.pop();
      pooled_.erase(n);
      --pooled_count_[acc];
      visited_.insert(n);
      for (size_t d : dependents_[n]) {
        if (--unmet_[d] == 0 && pooled_.count(d)) ready_[kind(d)].push(d);
      }
      return n;
    }

    bool visited(size_t n) const { return visited_.count(n) != 0; }

   private:
    bool kind(size_t n) const { return s_.acc_.count(n) != 0; }
    size_t unmet(size_t n) const {
      auto it = unmet_.find(n);
      return it == unmet_.end() ? 0 : it->second;
    }

    Splitter& s_;
    std::unordered_map<size_t, size_t> unmet_;
    std::unordered_map<size_t, std::vector<size_t>> dependents_;
    std::unordered_set<size_t> pooled_, visited_;
    size_t pooled_count_[2] = {0, 0};
    std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>>
        ready_[2];
  };

  std::vector<Subgraph> put_nodes_into_subgraphs() {
    Traversal t(*this);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const FxOpcode op = nodes_[i].op();
      if (op != FX_OP_PLACEHOLDER && op != FX_OP_GET_ATTR) continue;
      for (size_t u : users(i)) t.pool(u);
    }
    bool acc_mode = !t.any_pooled_without_deps(false);
    std::vector<Subgraph> out;
    std::vector<size_t> current;
    while (!t.empty()) {
      const std::optional<size_t> found = t.take(acc_mode);
      if (!found) {
        if (current.empty()) internal_error("Subgraph can't be empty");
        out.push_back({acc_mode, std::move(current)});
        current.clear();
        acc_mode = !acc_mode;
        continue;
      }
      const size_t n = *found;
      current.push_back(n);
      auto fusion = fusion_of_.find(n);
      if (fusion != fusion_of_.end()) {
        for (size_t m : fusions_[fusion->second]) t.pool(m);
      }
      for (size_t u : users(n)) {
        if (fx_plugins::is_call_node(nodes_[u])) t.pool(u);
      }
    }
    if (!current.empty()) out.push_back({acc_mode, std::move(current)});
    if (out.empty()) internal_error("Couldn't create subgraphs");
    return out;
  }

  static std::vector<Subgraph> remove_small_acc_subgraphs(
      std::vector<Subgraph> subgraphs, int64_t min_size, std::string& log) {
    std::vector<Subgraph> result;
    for (Subgraph& s : subgraphs) {
      const bool small =
          s.is_acc && static_cast<int64_t>(s.nodes.size()) < min_size;
      if (small) {
        log +=
            "Eliminating acc subgraph because it's smaller than the "
            "threshold: " +
            std::to_string(s.nodes.size()) + " < " + std::to_string(min_size) +
            "\n";
      }
      if (s.is_acc && !small) {
        result.push_back(std::move(s));
      } else if (small && result.empty()) {
        s.is_acc = false;
        result.push_back(std::move(s));
      } else if (small || (!result.empty() && !result.back().is_acc)) {
        auto& into = result.back().nodes;
        into.insert(into.end(), s.nodes.begin(), s.nodes.end());
      } else {
        result.push_back(std::move(s));
      }
    }
    return result;
  }

  [[noreturn]] static void internal_error(const std::string& what) {
    refuse(FX_INTERNAL, "FxNetSplitterInternalError: " + what);
  }

  const std::vector<Node> nodes_;
  std::optional<fxp::Support> support_;  // none: nothing supported
  std::unordered_map<FxNode*, size_t> index_;
  std::vector<std::vector<size_t>> users_, callable_inputs_;
  NodeSet acc_;
  std::vector<NodeSet> fusions_;
  std::map<size_t, size_t> fusion_of_;  // node -> its fusion
  std::unordered_map<size_t, NodeSet> deps_;
};

// torch's get_node_target for the preview: a module's class by the module
// that defines it (torch.nn.modules.linear.Linear), a function's qualified
// name (operator.* as _operator.*), a method's or builtin's name.
std::string node_target(const fxp::Graph& g, const Node& n) {
  std::string target(n.target());
  if (n.op() == FX_OP_CALL_MODULE) {
    return fx_plugins::torch_class_path(g.module_type(target.c_str()));
  }
  if (n.op() == FX_OP_CALL_FUNCTION && target.rfind("operator.", 0) == 0) {
    return "_" + target;
  }
  return target;
}

// The dtype of a node argument as the preview reads it (tensor_meta's), or
// None.
std::string arg_dtype(fxp::ArgView a) {
  if (!a.is_node()) return "None";
  fxp::ArgView meta = a.node().meta("tensor_meta");
  fxp::ArgView dtype = meta && meta.kind() == FX_ARG_DICT
                           ? fxp::dict_get(meta, "dtype")
                           : fxp::ArgView();
  return dtype ? dtype.as_string() : "None";
}

// "(args' dtypes, {kwargs' dtypes})" as torch's preview prints the pair:
// the args' trailing Nones dropped, a Python tuple; the node-valued kwargs.
std::string dtype_signature(const Node& n) {
  std::vector<std::string> args;
  for (size_t i = 0; i < n.num_args(); ++i) args.push_back(arg_dtype(n.arg(i)));
  while (!args.empty() && args.back() == "None") args.pop_back();
  std::string out = "((";
  for (size_t i = 0; i < args.size(); ++i) {
    out += (i ? ", " : "") + args[i];
  }
  out += args.size() == 1 ? ",), {" : "), {";
  bool first = true;
  for (size_t i = 0; i < n.num_kwargs(); ++i) {
    if (!n.kwarg_value(i).is_node()) continue;
    out += (first ? "'" : ", '") + n.kwarg_key(i) +
           "': " + arg_dtype(n.kwarg_value(i));
    first = false;
  }
  return out + "})";
}

// torch's node_support_preview report: each target with each dtype
// signature its nodes have (in order of first appearance; torch iterates a
// set), supported ones first.
std::string support_preview(const fxp::Graph& g, const Splitter& split) {
  std::vector<std::pair<std::string, std::vector<std::string>>> lists[2];
  for (Node n : g) {
    if (!fx_plugins::is_call_node(n)) continue;
    auto& list = lists[split.listed(n) ? 0 : 1];
    const std::string target = node_target(g, n);
    auto entry = std::find_if(list.begin(), list.end(),
                              [&](const auto& e) { return e.first == target; });
    if (entry == list.end()) entry = list.insert(list.end(), {target, {}});
    const std::string sig = dtype_signature(n);
    if (std::find(entry->second.begin(), entry->second.end(), sig) ==
        entry->second.end()) {
      entry->second.push_back(sig);
    }
  }
  std::string out;
  for (int k = 0; k < 2; ++k) {
    out += k == 0 ? "\nSupported node types in the model:\n"
                  : "\nUnsupported node types in the model:\n";
    for (const auto& [target, sigs] : lists[k]) {
      for (const std::string& sig : sigs) out += target + ": " + sig + "\n";
    }
  }
  return out;
}

}  // namespace

bool splitter(fxp::Graph& g, const fxp::Options& options) {
  require_renaming(kPass);
  const int64_t min_size = options.get_int("min_acc_module_size");
  const std::string cpu_name = options.get_string("non_acc_submodule_name");
  if (!is_name_prefix(cpu_name)) {
    refuse(FX_INVALID_ARGUMENT,
           "option 'non_acc_submodule_name' is '" + cpu_name +
               "': the CPU submodules' names (" + cpu_name +
               "0, ...) must be Python identifiers");
  }
  const std::string report_path = options.get_string("report");
  Splitter split(g, options);
  std::string report = report_path.empty() ? "" : support_preview(g, split);
  std::vector<std::string> tags;
  std::unordered_map<FxNode*, std::string> tag_of;
  const std::vector<Node> nodes = g.nodes();
  size_t acc_count = 0;
  for (const auto& s : split.subgraphs(min_size, report)) {
    const std::string k = std::to_string(tags.size());
    tags.push_back(s.is_acc ? "_run_on_acc_" + k : cpu_name + k);
    acc_count += s.is_acc;
    for (size_t n : s.nodes) tag_of[nodes[n].get()] = tags.back();
  }
  report += "Got " + std::to_string(acc_count) + " acc subgraphs and " +
            std::to_string(tags.size() - acc_count) + " non-acc subgraphs\n";
  split_graph_by_tags(
      g, tags,
      [&](const Node& n) {
        auto found = tag_of.find(n.get());
        if (found != tag_of.end()) return found->second;
        refuse(FX_INVALID_ARGUMENT,
               "node '" + std::string(n.name()) +
                   "' is in no subgraph (it reads no node, so torch's "
                   "traversal never reaches it, and its split_by_tags "
                   "asserts every call node has a tag)");
      },
      "tag");
  if (report_path == "-") {
    std::cout << report << std::flush;
  } else if (!report_path.empty()) {
    try {
      fx_plugins::write_file_atomically(report_path, report);
    } catch (const fxp::Error& e) {
      refuse(e.code(), "option 'report': " + std::string(e.what()));
    }
  }
  return true;
}

}  // namespace fx_optimization
