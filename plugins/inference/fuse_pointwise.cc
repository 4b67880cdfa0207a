#include "plugins/inference/fuse_pointwise.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "plugins/common/plugin_util.h"
#include "plugins/common/rewrite_util.h"
#include "plugins/inference/batch_norm.h"

namespace fx_inference {
namespace {

using fx_plugins::call_param;
using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

// An operand of an elementwise node: a node, or a number.
struct Operand {
  Node node;  // empty for a number
  double value = 0.0;
};

// One elementwise node as a program instruction: its op and operands
// (clamp: the input and its bounds, clamp_min / clamp_max one bound).
struct Elementwise {
  Elementwise(std::string op_name, std::vector<Operand> inputs, bool binds)
      : op(std::move(op_name)),
        operands(std::move(inputs)),
        plan_binds_alone(binds) {}

  std::string op;
  std::vector<Operand> operands;
  bool plan_binds_alone;  // the InferencePlan binds it directly
  // A BatchNorm2d module (op "batch_norm"): two instructions, x * scale +
  // shift, on new attributes named after the module.
  std::string module;
  std::optional<BatchNormAffine> affine;
};

bool is_number(const ArgView& v) {
  return v && (v.kind() == FX_ARG_INT || v.kind() == FX_ARG_FLOAT);
}

Operand operand(const ArgView& v) {
  return v.is_node() ? Operand{v.node(), 0.0} : Operand{Node(), v.as_float()};
}

// a OP b with tensors or numbers (at least one node; no number / tensor).
std::optional<Elementwise> binary(const Node& n, const char* op) {
  if (n.num_args() != 2 || n.num_kwargs() != 0) return std::nullopt;
  ArgView a = n.arg(0), b = n.arg(1);
  if (!(a.is_node() || is_number(a)) || !(b.is_node() || is_number(b))) {
    return std::nullopt;
  }
  if (!a.is_node() && (!b.is_node() || std::string_view(op) == "div")) {
    return std::nullopt;
  }
  return Elementwise{op, {operand(a), operand(b)}, true};
}

// f(x[, inplace]): the input, with `inplace` (positional index 1 or kwarg)
// false, or true while x has no other user.
std::optional<Elementwise> unary(const Node& n, const char* op,
                                 bool plan_binds) {
  if (n.num_args() == 0 || !n.arg(0).is_node() || n.num_args() > 2) {
    return std::nullopt;
  }
  for (size_t i = 0; i < n.num_kwargs(); ++i) {
    if (n.kwarg_key(i) != "inplace") return std::nullopt;
  }
  ArgView inplace = call_param(n, 1, "inplace");
  if (inplace && inplace.kind() != FX_ARG_BOOL) return std::nullopt;
  if (inplace && inplace.as_bool() && n.arg(0).node().num_users() != 1) {
    return std::nullopt;
  }
  return Elementwise{op, {operand(n.arg(0))}, plan_binds};
}

// clamp(x, lo, hi) with number bounds (None for no bound, not both).
std::optional<Elementwise> clamp(const Node& x, const ArgView& lo,
                                 const ArgView& hi, bool plan_binds) {
  const bool has_lo = lo && !lo.is_none(), has_hi = hi && !hi.is_none();
  if ((has_lo && !is_number(lo)) || (has_hi && !is_number(hi))) {
    return std::nullopt;
  }
  if (!has_lo && !has_hi) return std::nullopt;
  Elementwise e{has_lo ? (has_hi ? "clamp" : "clamp_min") : "clamp_max",
                {Operand{x, 0.0}},
                plan_binds};
  if (has_lo) e.operands.push_back(Operand{Node(), lo.as_float()});
  if (has_hi) e.operands.push_back(Operand{Node(), hi.as_float()});
  return e;
}

std::optional<Elementwise> clamp_call(const Node& n, size_t first_bound,
                                      const char* lo_name,
                                      const char* hi_name) {
  if (n.num_args() == 0 || !n.arg(0).is_node()) return std::nullopt;
  for (size_t i = 0; i < n.num_kwargs(); ++i) {
    const std::string k = n.kwarg_key(i);
    if (k != lo_name && k != hi_name) return std::nullopt;
  }
  if (n.num_args() > first_bound + 2) return std::nullopt;
  return clamp(n.arg(0).node(), call_param(n, first_bound, lo_name),
               call_param(n, first_bound + 1, hi_name), true);
}

std::optional<Elementwise> function_elementwise(const Node& n) {
  const std::string_view t = n.target();
  if (t == "operator.add" || t == "torch.add") return binary(n, "add");
  if (t == "operator.sub" || t == "torch.sub") return binary(n, "sub");
  if (t == "operator.mul" || t == "torch.mul") return binary(n, "mul");
  if (t == "operator.truediv" || t == "torch.div") return binary(n, "div");
  if (n.num_args() == 1 && n.num_kwargs() == 0) {
    if (t == "operator.neg" || t == "torch.neg") return unary(n, "neg", true);
    if (t == "torch.relu") return unary(n, "relu", true);
    if (t == "torch.sigmoid") return unary(n, "sigmoid", true);
    if (t == "torch.tanh") return unary(n, "tanh", true);
  }
  if (t == "torch.nn.functional.relu") return unary(n, "relu", true);
  if (t == "torch.nn.functional.silu") return unary(n, "silu", false);
  if (t == "torch.nn.functional.hardswish") return unary(n, "hardswish", false);
  if (t == "torch.nn.functional.hardsigmoid") {
    return unary(n, "hardsigmoid", false);
  }
  if (t == "torch.nn.functional.relu6") {
    auto e = unary(n, "clamp", false);
    if (e)
      e->operands.insert(e->operands.end(), {{Node(), 0.0}, {Node(), 6.0}});
    return e;
  }
  if (t == "torch.nn.functional.gelu") {
    ArgView approximate = call_param(n, 1, "approximate");
    if (n.num_args() != 1 || n.num_kwargs() > 1 || !n.arg(0).is_node() ||
        (approximate && approximate.as_string() != "none")) {
      return std::nullopt;
    }
    return Elementwise{"gelu", {operand(n.arg(0))}, false};
  }
  if (t == "torch.nn.functional.hardtanh") {
    ArgView inplace = call_param(n, 3, "inplace");
    if (inplace && (inplace.kind() != FX_ARG_BOOL || inplace.as_bool())) {
      return std::nullopt;
    }
    if (n.num_args() == 0 || !n.arg(0).is_node() || n.num_args() > 4) {
      return std::nullopt;
    }
    Arg lo = call_param(n, 1, "min_val") ? Arg(call_param(n, 1, "min_val"))
                                         : Arg(-1.0);
    Arg hi = call_param(n, 2, "max_val") ? Arg(call_param(n, 2, "max_val"))
                                         : Arg(1.0);
    return clamp(n.arg(0).node(), lo.view(), hi.view(), false);
  }
  if (t == "torch.clamp") return clamp_call(n, 1, "min", "max");
  return std::nullopt;
}

std::optional<Elementwise> method_elementwise(const Node& n) {
  const std::string_view t = n.target();
  if (n.num_args() == 0 || !n.arg(0).is_node()) return std::nullopt;
  if (t == "add") return binary(n, "add");
  if (t == "sub") return binary(n, "sub");
  if (t == "mul") return binary(n, "mul");
  if (t == "div") return binary(n, "div");
  if (t == "clamp") return clamp_call(n, 1, "min", "max");
  if (n.num_args() != 1 || n.num_kwargs() != 0) return std::nullopt;
  for (const char* op : {"neg", "relu", "sigmoid", "tanh"}) {
    if (t == op) return unary(n, op, true);
  }
  return std::nullopt;
}

std::optional<Elementwise> module_elementwise(Graph& g, const Node& n) {
  if (n.num_args() != 1 || n.num_kwargs() != 0 || !n.arg(0).is_node()) {
    return std::nullopt;
  }
  const std::string target(n.target());
  const std::string type = g.module_type(target.c_str());
  Arg config = fxp::module_config(g, target.c_str());
  ArgView inplace = fxp::dict_get(config.view(), "inplace");
  if (inplace && inplace.kind() == FX_ARG_BOOL && inplace.as_bool() &&
      n.arg(0).node().num_users() != 1) {
    return std::nullopt;
  }
  const Node x = n.arg(0).node();
  auto one = [&](const char* op) {
    return Elementwise{op, {Operand{x, 0.0}}, false};
  };
  if (type == "torch.nn.ReLU") return one("relu");
  if (type == "torch.nn.Sigmoid") return one("sigmoid");
  if (type == "torch.nn.Tanh") return one("tanh");
  if (type == "torch.nn.SiLU") return one("silu");
  if (type == "torch.nn.Hardswish") return one("hardswish");
  if (type == "torch.nn.Hardsigmoid") return one("hardsigmoid");
  if (type == "torch.nn.GELU") {
    ArgView approximate = fxp::dict_get(config.view(), "approximate");
    if (approximate && approximate.as_string() != "none") return std::nullopt;
    return one("gelu");
  }
  if (type == "torch.nn.ReLU6")
    return clamp(x, Arg(0.0).view(), Arg(6.0).view(), false);
  if (is_batch_norm(g, n)) {
    std::optional<BatchNormAffine> affine = batch_norm_affine(g, target);
    if (!affine) return std::nullopt;
    Elementwise e = one("batch_norm");
    e.module = target;
    e.affine = std::move(affine);
    return e;
  }
  if (type == "torch.nn.Hardtanh") {
    return clamp(x, fxp::dict_get(config.view(), "min_val"),
                 fxp::dict_get(config.view(), "max_val"), false);
  }
  return std::nullopt;
}

// meta['tensor_meta']'s shape (sizes as text: symbolic ones too) and dtype
// ("" when absent).
struct Meta {
  std::vector<std::string> shape;
  std::string dtype;
};

Meta meta_of(const Node& n) {
  Meta m;
  ArgView t = n.meta("tensor_meta");
  if (!t || t.kind() != FX_ARG_DICT) return m;
  ArgView s = fxp::dict_get(t, "shape");
  ArgView d = fxp::dict_get(t, "dtype");
  if (!s || !d) return m;
  m.shape = fx_plugins::size_texts(s);
  m.dtype = d.as_string();
  return m;
}

bool float_dtype(const std::string& d) {
  return d == "torch.float32" || d == "torch.float64" || d == "torch.float16" ||
         d == "torch.bfloat16";
}

std::optional<Elementwise> elementwise_of(Graph& g, const Node& n) {
  std::optional<Elementwise> e;
  if (n.op() == FX_OP_CALL_FUNCTION) e = function_elementwise(n);
  if (n.op() == FX_OP_CALL_METHOD) e = method_elementwise(n);
  if (n.op() == FX_OP_CALL_MODULE) e = module_elementwise(g, n);
  if (!e) return std::nullopt;
  // A float result, and tensor operands of its dtype.
  const Meta m = meta_of(n);
  if (!float_dtype(m.dtype)) return std::nullopt;
  for (const Operand& o : e->operands) {
    if (!o.node) continue;
    const Meta om = meta_of(o.node);
    if (om.dtype != m.dtype || om.shape.size() > m.shape.size()) {
      return std::nullopt;
    }
  }
  if (n.op() != FX_OP_CALL_FUNCTION && n.op() != FX_OP_CALL_METHOD) {
    e->plan_binds_alone = false;
  }
  // BatchNorm2d: float32 (its statistics' dtype), 4-d, one statistic a
  // channel (else LibTorch's error stays the node's).
  if (e->affine && (m.dtype != "torch.float32" || m.shape.size() != 4 ||
                    m.shape[1] != std::to_string(e->affine->scale.size()))) {
    return std::nullopt;
  }
  return e;
}

using NodeMap = std::unordered_map<FxNode*, Elementwise>;
using NodeSet = std::unordered_set<FxNode*>;

// The group grown from `root` (see the header), in no particular order.
std::vector<Node> grow(const Node& root, const NodeMap& elementwise,
                       const NodeSet& taken) {
  const Meta root_meta = meta_of(root);
  std::vector<Node> group{root};
  NodeSet in_group{root.get()};
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < group.size(); ++i) {
      for (const Operand& o : elementwise.at(group[i].get()).operands) {
        if (!o.node || in_group.count(o.node.get()) ||
            taken.count(o.node.get()) || !elementwise.count(o.node.get())) {
          continue;
        }
        const Meta m = meta_of(o.node);
        if (m.shape != root_meta.shape || m.dtype != root_meta.dtype) continue;
        const std::vector<Node> users = o.node.users();
        if (!std::all_of(users.begin(), users.end(), [&](const Node& u) {
              return in_group.count(u.get()) != 0;
            })) {
          continue;
        }
        group.push_back(o.node);
        in_group.insert(o.node.get());
        grew = true;
      }
    }
  }
  return group;
}

// The fx_inference.pointwise node computing `group` (in graph order, the
// root last), inserted before the root, with the attributes its
// BatchNorm2d members need.
class FusedProgram {
 public:
  explicit FusedProgram(Graph& g) : g_(g) {}

  void add(const Node& member, const Elementwise& e) {
    if (e.affine) {
      const int64_t channels = static_cast<int64_t>(e.affine->scale.size());
      const std::vector<int64_t> shape{channels, 1, 1};
      const std::string base = fx_plugins::flat(e.module);
      // One statement each: the inputs are numbered in this order.
      const std::string x = ref(e.operands[0]);
      const std::string scale =
          attribute(store_float(g_, base + "_scale", shape, e.affine->scale));
      const std::string shift =
          attribute(store_float(g_, base + "_shift", shape, e.affine->shift));
      instruction("mul " + x + " " + scale);
      instruction("add t" + std::to_string(program_.size() - 1) + " " + shift);
    } else {
      std::string text = e.op;
      for (const Operand& o : e.operands) text += " " + ref(o);
      instruction(text);
    }
    temp_[member.get()] = program_.size() - 1;
  }

  Node node() {
    return g_.call_function(
        "torch.ops.fx_inference.pointwise",
        {Arg::list(inputs_), Arg::list(program_), Arg::list(scalars_)});
  }

 private:
  void instruction(std::string text) { program_.emplace_back(std::move(text)); }

  // How the program names an operand: s<k>, t<k> or i<k>.
  std::string ref(const Operand& o) {
    if (!o.node) {
      scalars_.emplace_back(o.value);
      return "s" + std::to_string(scalars_.size() - 1);
    }
    if (auto t = temp_.find(o.node.get()); t != temp_.end()) {
      return "t" + std::to_string(t->second);
    }
    return input(o.node);
  }

  std::string input(const Node& n) {
    auto it = std::find(input_nodes_.begin(), input_nodes_.end(), n.get());
    if (it == input_nodes_.end()) {
      input_nodes_.push_back(n.get());
      inputs_.emplace_back(n);
      it = input_nodes_.end() - 1;
    }
    return "i" + std::to_string(it - input_nodes_.begin());
  }

  std::string attribute(const std::string& name) {
    return input(g_.get_attr(name.c_str()));
  }

  Graph& g_;
  std::vector<Arg> inputs_, program_, scalars_;
  std::vector<FxNode*> input_nodes_;
  std::unordered_map<FxNode*, size_t> temp_;
};

Node fused_node(Graph& g, const std::vector<Node>& group,
                const NodeMap& elementwise) {
  auto guard = g.inserting_before(group.back());
  FusedProgram program(g);
  for (const Node& member : group) {
    program.add(member, elementwise.at(member.get()));
  }
  return program.node();
}

}  // namespace

bool fuse_pointwise(Graph& g, const fxp::Options&) {
  const std::vector<Node> nodes = g.nodes();
  std::unordered_map<FxNode*, size_t> position;
  NodeMap elementwise;
  for (size_t i = 0; i < nodes.size(); ++i) {
    position[nodes[i].get()] = i;
    if (auto e = elementwise_of(g, nodes[i])) {
      elementwise.emplace(nodes[i].get(), std::move(*e));
    }
  }
  NodeSet taken;
  bool changed = false;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    // Erased members leave `elementwise`: a stale handle is skipped.
    if (!elementwise.count(it->get()) || taken.count(it->get())) continue;
    std::vector<Node> group = grow(*it, elementwise, taken);
    if (group.size() == 1 && elementwise.at(it->get()).plan_binds_alone) {
      continue;
    }
    std::sort(group.begin(), group.end(), [&](const Node& a, const Node& b) {
      return position.at(a.get()) < position.at(b.get());
    });
    Node fused = fused_node(g, group, elementwise);
    fx_plugins::copy_tensor_meta(group.back(), fused);
    group.back().replace_all_uses_with(fused);
    for (auto m = group.rbegin(); m != group.rend(); ++m) {
      taken.insert(m->get());
      elementwise.erase(m->get());
      g.erase_node(*m);
    }
    changed = true;
  }
  return changed;
}

}  // namespace fx_inference
