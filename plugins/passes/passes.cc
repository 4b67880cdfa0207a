// libfx_passes.so: the usual graph passes, built from plugin_api/include
// alone.
//
//   dce           torch.fx's Graph.eliminate_dead_code (impure nodes stay,
//                 and so do mutations and random draws nothing uses)
//   cse           common subexpression elimination
//   const_fold    get_attr-only subgraphs folded into new attributes
//   dot           the graph as Graphviz DOT text
//   split_module  torch.fx's split_module by a partition option
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"

namespace {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

// ------------------------------------------------------------------- dce

// ------------------------------------------------------------------- cse

// Whether `n` writes its first argument: an ATen operator whose schema
// marks a positional argument as written (NodeOperatorEffects), Python's
// in-place operators and setitem, an in-place method LibTorch does not
// know, or inplace=True.
bool mutates(const Node& n) {
  if (n.operator_effects() & FX_EFFECT_MUTATES) return true;
  std::string_view t = n.target();
  static const char* const kPythonMutations[] = {
      "operator.setitem",   "operator.delitem", "operator.iadd",
      "operator.isub",      "operator.imul",    "operator.itruediv",
      "operator.ifloordiv", "operator.imod",    "operator.ipow",
      "operator.iand",      "operator.ior",     "operator.ixor",
      "operator.ilshift",   "operator.irshift", "operator.imatmul",
      "operator.iconcat"};
  for (const char* m : kPythonMutations) {
    if (t == m) return true;
  }
  if (n.op() == FX_OP_CALL_METHOD && !t.empty() && t.back() == '_') {
    return true;
  }
  ArgView inplace = n.kwarg("inplace");
  return inplace && inplace.kind() == FX_ARG_BOOL && inplace.as_bool();
}

// Nodes whose value may not be shared (CSE never merges them, const_fold
// never folds them into an attribute): random draws (tag
// nondeterministic_seeded: two calls with the same arguments differ),
// mutations, and values a later node mutates (two equal-looking buffers,
// torch.empty(3) twice, must stay two buffers when one is written).
bool unsafe_to_share(const Node& n) {
  if (n.operator_effects() & FX_EFFECT_NONDETERMINISTIC) return true;
  if (mutates(n)) return true;
  for (const Node& user : n.users()) {
    ArgView first = user.num_args() > 0 ? user.arg(0) : ArgView();
    if (first && first.is_node() && first.node() == n && mutates(user)) {
      return true;
    }
  }
  return false;
}

// torch.fx's Graph.eliminate_dead_code, except that a node a program
// observes stays even when nothing uses its value, where torch.fx 1.13
// drops it: an operator that writes an argument (x.add_(1), operator.iadd,
// setitem) and a random draw (dropping one shifts every later draw).
bool dce(Graph& g, const fxp::Options&) {
  std::vector<Node> order;
  for (Node n : g) order.push_back(n);
  bool changed = false;
  for (size_t i = order.size(); i-- > 0;) {
    Node n = order[i];
    if (n.num_users() > 0 || n.is_impure() || mutates(n) ||
        (n.operator_effects() & FX_EFFECT_NONDETERMINISTIC)) {
      continue;
    }
    g.erase_node(n);
    changed = true;
  }
  return changed;
}

bool cse(Graph& g, const fxp::Options&) {
  std::unordered_map<std::string, Node> seen;
  bool changed = false;
  for (Node n : g) {
    FxOpcode op = n.op();
    // As torch.fx's CSEPass, placeholders, outputs and get_attr nodes are
    // kept as they are.
    if (op == FX_OP_PLACEHOLDER || op == FX_OP_OUTPUT || op == FX_OP_GET_ATTR) {
      continue;
    }
    if (n.is_impure() || unsafe_to_share(n)) continue;
    std::string key = std::to_string(op) + "|" + std::string(n.target()) + "|";
    for (size_t i = 0; i < n.num_args(); ++i) {
      fx_plugins::append_key(n.arg(i), key);
      key += ",";
    }
    key += "|";
    for (size_t i = 0; i < n.num_kwargs(); ++i) {
      std::string k = n.kwarg_key(i);
      key += std::to_string(k.size()) + ":" + k + "=";
      fx_plugins::append_key(n.kwarg_value(i), key);
      key += ",";
    }
    auto [it, inserted] = seen.emplace(key, n);
    if (inserted) continue;
    n.replace_all_uses_with(it->second);
    g.erase_node(n);
    changed = true;
  }
  return changed;
}

// ------------------------------------------------------------ const_fold

// The nodes computed from tensor attributes alone, in graph order.
struct Constants {
  std::unordered_set<FxNode*> nodes;
  std::vector<Node> order;
};

// Tensor attributes only (a get_attr of a submodule is not a value).
bool is_tensor_attr(Graph& g, const Node& n) {
  DLManagedTensor* t = nullptr;
  FxStatus* s =
      fxp::api()->GraphGetAttr(g.get(), std::string(n.target()).c_str(), &t);
  if (s) {
    fxp::api()->ReleaseStatus(s);
    return false;
  }
  fxp::Tensor(t).reset();
  return true;
}

Constants find_constants(Graph& g) {
  Constants constants;
  std::unordered_set<FxNode*>& constant = constants.nodes;
  for (Node n : g) {
    FxOpcode op = n.op();
    if (op == FX_OP_GET_ATTR) {
      if (!is_tensor_attr(g, n)) continue;
      constant.insert(n.get());
      constants.order.push_back(n);
      continue;
    }
    if (op != FX_OP_CALL_FUNCTION && op != FX_OP_CALL_METHOD &&
        op != FX_OP_CALL_MODULE) {
      continue;
    }
    if (n.is_impure() || unsafe_to_share(n)) continue;
    std::vector<Node> inputs = n.all_input_nodes();
    if (inputs.empty()) continue;  // not derived from attributes
    bool all = std::all_of(inputs.begin(), inputs.end(), [&](const Node& i) {
      return constant.count(i.get()) > 0;
    });
    if (all) {
      constant.insert(n.get());
      constants.order.push_back(n);
    }
  }
  return constants;
}

// The frontier: computed constants some non-constant node uses.
std::vector<Node> constant_frontier(const Constants& constants) {
  std::vector<Node> frontier;
  for (Node n : constants.order) {
    if (n.op() == FX_OP_GET_ATTR) continue;
    for (Node u : n.users()) {
      if (!constants.nodes.count(u.get())) {
        frontier.push_back(n);
        break;
      }
    }
  }
  return frontier;
}

// Evaluates each frontier node into a new attribute read by a get_attr node
// its non-constant users use instead.
bool fold_frontier(Graph& g, const std::vector<Node>& frontier,
                   const Constants& constants, const std::string& prefix) {
  int index = 0;
  bool changed = false;
  for (Node n : frontier) {
    fxp::Tensor value;
    fxp::evaluate(g, n, [&](fxp::RuntimeValue v) {
      if (v.is_tensor()) value = v.to_dlpack();
    });
    if (!value) continue;  // a non-tensor constant stays as it is
    std::string name;
    do {
      name = prefix + std::to_string(index++);
    } while (g.has_attr(name.c_str()));
    g.set_attr_tensor(name.c_str(), value.release());
    Node attr;
    {
      auto guard = g.inserting_before(n);
      attr = g.get_attr(name.c_str());
    }
    // Uses by other constants stay with the original until it is erased.
    for (Node u : n.users()) {
      if (!constants.nodes.count(u.get())) u.replace_input_with(n, attr);
    }
    changed = true;
  }
  return changed;
}

// Erase the constants left without users (they had some before).
bool erase_unused_constants(Graph& g, const std::vector<Node>& order,
                            const std::vector<size_t>& users_before) {
  bool changed = false;
  for (size_t i = order.size(); i-- > 0;) {
    Node n = order[i];
    if (users_before[i] > 0 && n.num_users() == 0 && !n.is_impure()) {
      g.erase_node(n);
      changed = true;
    }
  }
  return changed;
}

bool const_fold(Graph& g, const fxp::Options& options) {
  std::string prefix = options.get_string("prefix");
  Constants constants = find_constants(g);
  std::vector<Node> frontier = constant_frontier(constants);
  std::vector<size_t> users_before;
  for (Node n : constants.order) users_before.push_back(n.num_users());
  const bool folded = fold_frontier(g, frontier, constants, prefix);
  const bool erased = erase_unused_constants(g, constants.order, users_before);
  return folded || erased;
}

// ------------------------------------------------------------------- dot

std::string dot_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '{' || c == '}' || c == '|' || c == '<' || c == '>' || c == '"' ||
        c == '\\') {
      out += '\\';
    }
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// "1x3x224x224 torch.float32" for a tensor_meta dict (or each of a tuple's).
std::string describe_tensor_meta(ArgView m) {
  if (!m) return "";
  if (m.kind() == FX_ARG_TUPLE || m.kind() == FX_ARG_LIST) {
    std::string out;
    for (size_t i = 0; i < m.size(); ++i) {
      std::string item = describe_tensor_meta(m[i]);
      if (item.empty()) continue;
      out += (out.empty() ? "" : ", ") + item;
    }
    return out;
  }
  if (m.kind() != FX_ARG_DICT) return "";
  ArgView shape = fxp::dict_get(m, "shape");
  ArgView dtype = fxp::dict_get(m, "dtype");
  std::string out;
  if (shape) {
    out += "[";
    std::vector<std::string> sizes = fx_plugins::size_texts(shape);
    for (size_t i = 0; i < sizes.size(); ++i) out += (i ? "x" : "") + sizes[i];
    out += "]";
  }
  if (dtype) out += " " + dtype.as_string();
  ArgView q = fxp::dict_get(m, "is_quantized");
  if (q && q.as_bool()) out += " quantized";
  return out;
}

const char* op_name(FxOpcode op) {
  static const char* const kNames[] = {"placeholder",   "get_attr",
                                       "call_function", "call_method",
                                       "call_module",   "output"};
  return kNames[op];
}

const char* op_color(FxOpcode op) {
  static const char* const kColors[] = {"#c6e2ff", "#e0e0e0", "#fff2b3",
                                        "#ffd9b3", "#d5f5d5", "#f5c6cb"};
  return kColors[op];
}

// The fill colour of a node: by opcode, or with `color_by` by the int its
// meta holds under that key (a partition index: 12 colours, then again;
// white for nodes without one).
std::string fill_color(const Node& n, const std::string& color_by) {
  if (color_by.empty()) return op_color(n.op());
  static const char* const kPalette[] = {
      "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
      "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
  fxp::ArgView v = n.meta(color_by.c_str());
  if (!v || v.kind() != FX_ARG_INT || v.as_int() < 0) return "#ffffff";
  return kPalette[v.as_int() % 12];
}

std::string to_dot(const Graph& g, const std::string& name,
                   const std::string& color_by) {
  std::ostringstream out;
  out << "digraph \"" << dot_escape(name) << "\" {\n"
      << "  rankdir=TB;\n"
      << "  node [shape=record, style=filled, fontname=\"Helvetica\", "
         "fontsize=10];\n";
  for (Node n : g) {
    std::string label = "{" + dot_escape(n.name()) + "|" + op_name(n.op());
    if (n.op() != FX_OP_OUTPUT && n.op() != FX_OP_PLACEHOLDER) {
      label += "|" + dot_escape(n.target());
    }
    std::string meta = describe_tensor_meta(n.meta("tensor_meta"));
    if (!meta.empty()) label += "|" + dot_escape(meta);
    label += "}";
    out << "  \"" << dot_escape(n.name()) << "\" [label=\"" << label
        << "\", fillcolor=\"" << fill_color(n, color_by) << "\"];\n";
  }
  for (Node n : g) {
    for (Node input : n.all_input_nodes()) {
      out << "  \"" << dot_escape(input.name()) << "\" -> \""
          << dot_escape(n.name()) << "\";\n";
    }
  }
  out << "}\n";
  return out.str();
}

bool dot(Graph& g, const fxp::Options& options) {
  std::string text =
      to_dot(g, options.get_string("name"), options.get_string("color_by"));
  std::string path = options.get_string("path");
  if (path.empty() || path == "-") {
    std::cout << text << std::flush;
    return false;
  }
  fx_plugins::write_file_atomically(path, text);
  return false;
}

// ---------------------------------------------------------- split_module

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

}  // namespace

FXP_PLUGIN(
    "fx_passes", "1.0",
    fxp::pass<dce>("dce",
                   "dead code elimination (torch.fx eliminate_dead_code; "
                   "impure nodes, mutations and random draws stay)")
        .idempotent(),
    fxp::pass<cse>("cse",
                   "common subexpression elimination (torch.fx CSEPass): nodes "
                   "with the same op, target, args and kwargs merge (impure, "
                   "random and in-place ops excepted)")
        .idempotent(),
    fxp::pass<const_fold>("const_fold",
                          "folds get_attr-only subgraphs into new attributes "
                          "read by get_attr")
        .option("prefix", FX_OPTION_STRING, "_folded_constant",
                "name prefix of the folded attributes")
        .idempotent(),
    fxp::pass<dot>("dot",
                   "writes the graph as Graphviz DOT (op, target, tensor_meta)")
        .option("path", FX_OPTION_STRING, "",
                "output file (stdout when empty or '-')")
        .option("name", FX_OPTION_STRING, "GraphModule", "the digraph's name")
        .option("color_by", FX_OPTION_STRING, "",
                "a node meta key holding an int (a partition index) that "
                "picks each node's colour; by opcode when empty"),
    fxp::pass<split_module>(
        "split_module",
        "splits the graph into submodules called in order (torch.fx "
        "split_module)")
        .option("partitions", FX_OPTION_STRING_LIST, "",
                "groups of node names joined by '+'; unlisted nodes join the "
                "group of the nearest listed node before them")
        .option("split_at", FX_OPTION_STRING_LIST, "",
                "nodes that start a new partition")
        .option("meta_key", FX_OPTION_STRING, "",
                "a node meta key whose value names the partition")
        .option("prefix", FX_OPTION_STRING, "submod_",
                "name prefix of the submodules"))
