// split_by_tags: torch 1.13's torch.fx.passes.split_utils.split_by_tags(gm,
// tags), as a pass that turns the graph into the split's main graph (a
// pipeline's graph changes in place; torch returns a new GraphModule).
//
// What torch does, and so this pass:
//  - one component per tag, in the order of `tags`, each a GraphModule
//    child named after its tag;
//  - in graph order, every call_function, call_method and call_module node
//    is copied (its name kept) into its tag's component, whose graph gets,
//    as the copy's arguments need them and in that order, a get_attr copy
//    of each get_attr node it reads (named from the target) and a
//    placeholder (named after the node) for each value from outside: an
//    input of the graph or another component's node. A node may not read
//    a node of a later tag (torch asserts it);
//  - a component returns its nodes used outside it (by later components
//    or by the output), in the order they were first so used, one value
//    bare and several as a tuple;
//  - the main graph: the placeholders (targets their names, defaults
//    dropped), a get_attr (target: the node's name) for each get_attr
//    node the output returns, then each component's call_module (and an
//    operator.getitem per result when it returns several), the output.
//    Every node is named as in torch's new graph, whose namespace it then
//    has; the output has no type annotation (no return annotation).
// A node's tag is its meta[meta_key] (torch reads `node.tag`), or given by
// the `tag_nodes` option. An untagged node, a tag not in `tags`, a node
// reading a later tag, a tag that is also the name of a get_attr node the
// output returns: refused before anything changes, naming the node or the
// tag.
//
// The module then holds only what the main graph uses: the returned
// attributes and the components, as torch's new root module
// (GraphKeepUsedAttrs). A tag may name an attribute the module has (tags
// `block` and `head` for the nodes of modules `block` and `head`): that
// component is built under a free name and moves to its tag once the old
// attribute is gone.
// The copies keep meta['tensor_meta'] and get meta[meta_key] (torch's
// node_copy copies all meta; the C ABI cannot list a node's meta keys).
#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <memory>
#include <set>
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
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

constexpr const char* kPass = "split_by_tags";

[[noreturn]] void refuse(const std::string& what) {
  fx_plugins::refuse_in(kPass, FX_INVALID_ARGUMENT, what);
}

// The node references in `a`, in map_arg's order, repeats kept.
void flatten(ArgView a, std::vector<Node>& out) {
  if (a.kind() == FX_ARG_NODE) {
    out.push_back(a.node());
    return;
  }
  for (size_t i = 0; i < a.size(); ++i) flatten(a[i], out);
}

std::vector<Node> flat_inputs(const Node& n) {
  std::vector<Node> out;
  for (size_t i = 0; i < n.num_args(); ++i) flatten(n.arg(i), out);
  for (size_t i = 0; i < n.num_kwargs(); ++i) flatten(n.kwarg_value(i), out);
  return out;
}

// A component's graph, as torch fills it: the steps in order.
struct Step {
  enum Kind { kGetAttr, kPlaceholder, kCopy } kind;
  Node node;  // the original node copied, read or taken as input
};

// Component i is tag i of `tags` (torch's order).
struct Component {
  std::string tag;
  std::vector<Step> steps;
  std::vector<Node> inputs;   // torch's orig_inputs
  std::vector<Node> outputs;  // torch's orig_outputs
  // While planning: the get_attr nodes copied, the inputs taken.
  std::unordered_set<FxNode*> attrs_seen, inputs_seen;
};

// The plan: components, each node's, and the output's get_attr reads.
struct Split {
  std::vector<Component> components;
  std::unordered_map<FxNode*, size_t> component_of;
  std::vector<Node> output_attrs;  // get_attr nodes the output returns
};

// Each tag of `tags` once, in order.
std::map<std::string, size_t> tag_orders(const std::vector<std::string>& tags) {
  std::map<std::string, size_t> order;
  for (const std::string& t : tags) {
    const bool identifier =
        !t.empty() && !std::isdigit(static_cast<unsigned char>(t[0])) &&
        std::all_of(t.begin(), t.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        });
    if (!identifier) {
      refuse("option 'tags' holds '" + t +
             "', which is no Python identifier (each tag names a submodule)");
    }
    if (!order.emplace(t, order.size()).second) {
      refuse("option 'tags' lists '" + t + "' twice");
    }
  }
  if (order.empty()) refuse("option 'tags' names no tag");
  return order;
}

// The tag_nodes option, `TAG:NODE+NODE...` items: node name -> tag.
std::map<std::string, std::string> given_tags(const fxp::Options& options) {
  std::map<std::string, std::string> out;
  for (const std::string& item : options.get_list("tag_nodes")) {
    size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0) {
      refuse("option 'tag_nodes' item '" + item + "' is not TAG:NODE+NODE...");
    }
    std::string tag = item.substr(0, colon);
    size_t start = colon + 1;
    while (start <= item.size()) {
      size_t end = std::min(item.find('+', start), item.size());
      std::string name = item.substr(start, end - start);
      if (name.empty())
        refuse("option 'tag_nodes' item '" + item + "' has an empty node name");
      if (!out.emplace(name, tag).second && out[name] != tag) {
        refuse("option 'tag_nodes' gives node '" + name + "' two tags");
      }
      start = end + 1;
    }
  }
  return out;
}

// The pass's tags: tag_nodes' where it names the node, else meta[meta_key];
// refuses a tag_nodes name that is no node of `g`.
TagOf tags_from_options(const Graph& g, const fxp::Options& options) {
  auto given = std::make_shared<const std::map<std::string, std::string>>(
      given_tags(options));
  std::set<std::string> unknown;
  for (const auto& entry : *given) unknown.insert(entry.first);
  for (Node n : g) unknown.erase(std::string(n.name()));
  if (!unknown.empty()) {
    refuse("option 'tag_nodes' names '" + *unknown.begin() +
           "', which is no node of the graph");
  }
  const std::string meta_key = options.get_string("meta_key");
  return [given, meta_key](const Node& n) {
    const std::string name(n.name());
    auto found = given->find(name);
    if (found != given->end()) return found->second;
    ArgView m = n.meta(meta_key.c_str());
    if (m && m.kind() == FX_ARG_STRING) return m.as_string();
    refuse("node '" + name + "' has no tag (meta['" + meta_key +
           "'] or the option tag_nodes); torch's split_by_tags needs one on "
           "every call_function, call_method and call_module node");
  };
}

class Planner {
 public:
  Planner(const std::vector<std::string>& tags, TagOf tag_of)
      : orders_(tag_orders(tags)), tag_of_(std::move(tag_of)) {
    for (const std::string& t : tags) {
      split_.components.push_back({t, {}, {}, {}, {}, {}});
    }
  }

  Split plan(const Graph& g) {
    Node output;
    for (Node n : g) {
      if (n.op() == FX_OP_OUTPUT) output = n;
      if (fx_plugins::is_call_node(n)) place(n);
    }
    std::vector<Node> returned;
    if (output.num_args() > 0) flatten(output.arg(0), returned);
    for (const Node& x : returned) {
      if (x.op() == FX_OP_GET_ATTR) {
        split_.output_attrs.push_back(x);
      } else {
        use_in_main(x);
      }
    }
    for (const Node& n : used_in_main_) {
      if (n.op() == FX_OP_PLACEHOLDER) continue;
      split_.components[split_.component_of.at(n.get())].outputs.push_back(n);
    }
    return std::move(split_);
  }

 private:
  void place(const Node& n) {
    const std::string tag = tag_of_(n);
    auto found = orders_.find(tag);
    if (found == orders_.end()) {
      refuse("node '" + std::string(n.name()) + "' has tag '" + tag +
             "', which is not in option 'tags'");
    }
    const size_t index = found->second;
    Component& comp = split_.components[index];
    const std::vector<Node> inputs = flat_inputs(n);
    for (const Node& x : inputs) {
      if (x.op() == FX_OP_PLACEHOLDER || x.op() == FX_OP_GET_ATTR) continue;
      const size_t up = split_.component_of.at(x.get());
      if (up > index) {
        refuse("node '" + std::string(n.name()) + "' (tag '" + tag +
               "') reads '" + std::string(x.name()) + "' (tag '" +
               split_.components[up].tag +
               "'), a later tag in option 'tags' (torch asserts a node's "
               "tag comes no earlier than its inputs')");
      }
    }
    for (const Node& x : inputs) {
      if (x.op() == FX_OP_GET_ATTR) {
        if (comp.attrs_seen.insert(x.get()).second) {
          comp.steps.push_back({Step::kGetAttr, x});
        }
        continue;
      }
      if (x.op() != FX_OP_PLACEHOLDER &&
          split_.component_of.at(x.get()) == index) {
        continue;
      }
      if (comp.inputs_seen.insert(x.get()).second) {
        comp.inputs.push_back(x);
        comp.steps.push_back({Step::kPlaceholder, x});
        use_in_main(x);
      }
    }
    comp.steps.push_back({Step::kCopy, n});
    split_.component_of[n.get()] = index;
  }

  void use_in_main(const Node& x) {
    if (used_set_.insert(x.get()).second) used_in_main_.push_back(x);
  }

  const std::map<std::string, size_t> orders_;
  const TagOf tag_of_;
  Split split_;
  std::vector<Node> used_in_main_;  // torch's used_in_main, in order
  std::unordered_set<FxNode*> used_set_;
};

// A copy of call node `n` in `sub`, as torch's node_copy makes it: its
// name, type and arguments (each node through `value`), its tensor_meta,
// and `tag` under meta_key.
Node copy_call(Graph& sub, const Node& n,
               const std::function<Node(Node)>& value,
               const std::string& meta_key, const Arg& tag) {
  const std::string target(n.target()), name(n.name()), type(n.type());
  Node copy =
      sub.create_node(n.op(), target.c_str(), fx_plugins::map_args(n, value),
                      fx_plugins::map_kwargs(n, value), name.c_str(),
                      type.empty() ? nullptr : type.c_str());
  // The host copies the value from the borrowed one.
  if (ArgView m = n.meta("tensor_meta")) {
    fxp::check(fxp::api()->NodeSetMeta(copy.get(), "tensor_meta", m.get()));
  }
  copy.set_meta(meta_key.c_str(), tag);
  return copy;
}

// Fills component `comp`'s graph `sub` as torch's loop does.
void build_component(Graph& g, const Component& comp, Graph sub,
                     const std::string& meta_key) {
  std::unordered_map<FxNode*, Node> env;
  std::set<std::string> shared;
  auto share = [&](const Node& n) {
    std::string target(n.target());
    if (shared.insert(target).second) {
      fxp::share_attr(g, sub, target.c_str());
    }
  };
  const std::function<Node(Node)> value = [&](Node x) {
    return env.at(x.get());
  };
  const Arg tag(comp.tag);
  for (const Step& step : comp.steps) {
    const Node& n = step.node;
    std::string target(n.target()), name(n.name()), type(n.type());
    const char* type_or_null = type.empty() ? nullptr : type.c_str();
    if (step.kind == Step::kGetAttr) {
      share(n);
      env[n.get()] = sub.create_node(FX_OP_GET_ATTR, target.c_str(), {}, {},
                                     nullptr, type_or_null);
    } else if (step.kind == Step::kPlaceholder) {
      env[n.get()] = sub.create_node(FX_OP_PLACEHOLDER, name.c_str(), {}, {},
                                     nullptr, type_or_null);
    } else {
      if (n.op() == FX_OP_CALL_MODULE) share(n);
      env[n.get()] = copy_call(sub, n, value, meta_key, tag);
    }
  }
  std::vector<Arg> outs;
  for (const Node& o : comp.outputs) outs.emplace_back(env.at(o.get()));
  sub.create_node(FX_OP_OUTPUT, "output",
                  {outs.size() == 1 ? outs[0] : Arg::tuple(outs)});
}

// The main graph's new nodes, made before the output in torch's order:
// returned attributes, then each component's call and getitems.
struct MainNodes {
  std::vector<Node> made;                      // in order
  std::vector<Node> calls;                     // each component's call
  std::unordered_map<FxNode*, Node> value_of;  // original -> main value

  // The main graph's value for original node `x` (a placeholder: itself).
  Node value(const Node& x) const {
    auto it = value_of.find(x.get());
    return it == value_of.end() ? x : it->second;
  }
};

MainNodes build_main(Graph& g, const Split& split,
                     const std::vector<std::string>& held_as) {
  MainNodes main;
  fxp::InsertGuard at = g.inserting_before(g.output_node());
  for (const Node& x : split.output_attrs) {
    std::string name(x.name()), target(x.target());
    if (name != target) {
      g.set_attr_tensor(name.c_str(), g.get_attr_tensor(target.c_str()));
    }
    std::string type(x.type());
    main.value_of[x.get()] = main.made.emplace_back(
        g.create_node(FX_OP_GET_ATTR, name.c_str(), {}, {}, nullptr,
                      type.empty() ? nullptr : type.c_str()));
  }
  for (size_t c = 0; c < split.components.size(); ++c) {
    const Component& comp = split.components[c];
    std::vector<Arg> args;
    for (const Node& x : comp.inputs) args.emplace_back(main.value(x));
    Node call = main.made.emplace_back(g.call_module(held_as[c].c_str(), args));
    main.calls.push_back(call);
    if (comp.outputs.size() == 1) {
      main.value_of[comp.outputs[0].get()] = call;
      continue;
    }
    for (size_t i = 0; i < comp.outputs.size(); ++i) {
      main.value_of[comp.outputs[i].get()] =
          main.made.emplace_back(g.call_function(
              "operator.getitem", {Arg(call), Arg(static_cast<int64_t>(i))}));
    }
  }
  return main;
}

// The names torch's new main graph gives its nodes: the placeholders
// (targets their names), the made nodes, the output.
std::vector<std::string> main_names(const std::vector<Node>& placeholders,
                                    const std::vector<Node>& made) {
  std::vector<FreshNode> fresh;
  for (const Node& p : placeholders) {
    fresh.push_back({FX_OP_PLACEHOLDER, std::string(p.name()), ""});
  }
  for (const Node& n : made) fresh.push_back({n.op(), n.target_cstr(), ""});
  return fresh_graph_names(fresh);
}

// Whether `g`'s module has an attribute or submodule `name`.
bool attribute_taken(const Graph& g, const std::string& name) {
  if (g.has_attr(name.c_str())) return true;
  try {
    (void)g.module_type(name.c_str());
    return true;
  } catch (const fxp::Error&) {
    return false;
  }
}

// The module names the components are built under: each tag, or, for a
// tag the module still holds as an attribute (torch's new root holds the
// components alone: a tag may name a submodule the split reads, as
// `block` for the nodes of module `block`), a free name the component
// moves from to its tag once the old attribute is gone. A tag that is also
// the name of a get_attr node the output returns is refused, as torch
// raises TypeError setting that attribute where the component is.
std::vector<std::string> names_to_build_under(const Graph& g,
                                              const Split& split) {
  std::set<std::string> returned;
  for (const Node& x : split.output_attrs) returned.emplace(x.name());
  std::set<std::string> names;
  for (const Component& comp : split.components) names.insert(comp.tag);
  std::vector<std::string> out;
  for (const Component& comp : split.components) {
    if (returned.count(comp.tag) != 0) {
      refuse("tag '" + comp.tag +
             "' is also the name of a get_attr node the output returns "
             "(torch raises TypeError setting that attribute where the "
             "component is)");
    }
    std::string name = comp.tag;
    for (int k = 0; attribute_taken(g, name) || returned.count(name) != 0 ||
                    (name != comp.tag && names.count(name) != 0);
         ++k) {
      name = comp.tag + "_split_" + std::to_string(k);
    }
    names.insert(name);
    out.push_back(std::move(name));
  }
  return out;
}

// Copies component graph `from`, built under module name `held_as`, into
// `to`, the component at its tag: the same nodes, names and types (the
// calls as build_component made them), attributes shared from `held_as`'s.
void move_component(Graph& g, const std::string& held_as, const Graph& from,
                    Graph to, const std::string& meta_key, const Arg& tag) {
  std::unordered_map<FxNode*, Node> env;
  std::set<std::string> shared;
  const std::function<Node(Node)> value = [&](Node x) {
    return env.at(x.get());
  };
  for (Node n : from) {
    const std::string target(n.target()), name(n.name()), type(n.type());
    if ((n.op() == FX_OP_GET_ATTR || n.op() == FX_OP_CALL_MODULE) &&
        shared.insert(target).second) {
      fxp::share_attr(g, to, (held_as + "." + target).c_str(), target.c_str());
    }
    env[n.get()] =
        fx_plugins::is_call_node(n)
            ? copy_call(to, n, value, meta_key, tag)
            : to.create_node(n.op(), target.c_str(),
                             fx_plugins::map_args(n, value), {}, name.c_str(),
                             type.empty() ? nullptr : type.c_str());
  }
}

}  // namespace

bool split_by_tags(Graph& g, const fxp::Options& options) {
  require_renaming(kPass);
  split_graph_by_tags(g, options.get_list("tags"),
                      tags_from_options(g, options),
                      options.get_string("meta_key"));
  return true;
}

void split_graph_by_tags(Graph& g, const std::vector<std::string>& tags,
                         const TagOf& tag_of, const std::string& meta_key) {
  Split split = Planner(tags, tag_of).plan(g);
  const std::vector<std::string> held_as = names_to_build_under(g, split);

  std::vector<Graph> built;
  for (size_t c = 0; c < split.components.size(); ++c) {
    built.push_back(fxp::add_subgraph_module(g, held_as[c].c_str()));
    build_component(g, split.components[c], built.back(), meta_key);
  }
  const std::vector<Node> old = g.nodes();
  const MainNodes main = build_main(g, split, held_as);
  Node output = g.output_node();
  output.set_type(nullptr);  // torch's new output carries no annotation
  if (output.num_args() > 0) {
    output.update_arg(0, fx_plugins::map_arg(output.arg(0), [&](Node x) {
                        return main.value(x);
                      }));
  }
  for (auto it = old.rbegin(); it != old.rend(); ++it) {
    if (fx_plugins::is_call_node(*it) || it->op() == FX_OP_GET_ATTR) {
      g.erase_node(*it);
    }
  }
  std::vector<Node> placeholders = fx_plugins::placeholders(g);
  for (Node p : placeholders) {
    if (p.target() != p.name()) p.set_target(std::string(p.name()).c_str());
    if (p.num_args() > 0) p.set_args({});
  }
  // The module keeps only what the main graph uses; then a component built
  // under another name moves to its tag, free now.
  fxp::keep_used_attrs(g);
  for (size_t c = 0; c < split.components.size(); ++c) {
    const std::string& tag = split.components[c].tag;
    if (held_as[c] == tag) continue;
    move_component(g, held_as[c], built[c],
                   fxp::add_subgraph_module(g, tag.c_str()), meta_key,
                   Arg(tag));
    Node call = main.calls[c];
    call.set_target(tag.c_str());
  }
  apply_fresh_graph_names(g, main_names(placeholders, main.made));
  fxp::keep_used_attrs(g);
}

}  // namespace fx_optimization
