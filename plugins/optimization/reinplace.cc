// reinplace: torch 1.13's torch.fx.passes.reinplace.reinplace(gm,
// *sample_args) on a functional ATen graph (make_fx(functionalize(f))):
// `b = foo(a)` becomes `foo_(a)` when nothing later reads `a` or a tensor
// sharing its storage, and `y = {view}_scatter(a, v, args)` becomes
// `{view}(a, args).copy_(v)`; later readers of the result read `a`.
//
// As torch does it: the graph runs once on meta tensors (torch's
// FakeTensors) from the sample inputs, which gives every node's result
// sizes, strides, dtype and storage (the host numbers storages, C ABI
// version 12's ValueStorage); views are known from the operators' schemas
// (OperatorSchemas: the first argument's alias annotation), in-place
// variants by name and argument types. A node is skipped when its self
// argument is a graph input (or aliases one), appears twice among the
// arguments, would change numel or dtype, or overlaps itself; it is
// rewritten when no tensor sharing its self's storage is used later, except
// by {view}_scatter operators that undo one of the self's views, which are
// then erased.
//
// Sample inputs: the host's example inputs (fx run --inputs), else the
// placeholders' tensor_meta (shape_prop's). Departures, both on the side of
// changing less:
// - torch keeps one alias set per storage and merges two sets by updating
//   both keys only, so a third storage merged in later is missing from the
//   first's set; here aliasing is an equivalence (union-find), the sets
//   torch would build plus those transitive members;
// - a get_attr tensor (a parameter or buffer) is never written in place,
//   as a graph input is not: torch's pass, whose FakeTensor map misses
//   real parameters, would write into the module's parameter.
// A graph that already mutates (an in-place operator other than the
// write-back copy_ functionalization emits for a mutated input) is refused,
// naming the node.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/op_schema.h"
#include "plugins/common/plugin_util.h"
#include "plugins/optimization/passes.h"
#include "plugins/optimization/view_replay.h"

namespace fx_optimization {
namespace {

using fx_plugins::OperatorSchema;
using fxp::ArgView;
using fxp::Node;

constexpr char kGetitem[] = "operator.getitem";
constexpr char kCopyInPlace[] = "torch.ops.aten.copy_.default";
constexpr char kResize[] = "torch.ops.aten.resize.default";

// One tensor (or other leaf) of a node's result, as its FakeTensor says.
struct Leaf {
  uint64_t storage = 0;  // 0: not a tensor
  ViewLayout layout;
  std::string dtype;

  int64_t numel() const {
    return std::accumulate(layout.sizes.begin(), layout.sizes.end(), int64_t{1},
                           std::multiplies<int64_t>());
  }
  // torch._debug_has_internal_overlap(t) == 1 (MemOverlap::Yes): a
  // dimension of more than one element with stride 0.
  bool overlaps_itself() const {
    for (size_t d = 0; d < layout.sizes.size(); ++d) {
      if (layout.sizes[d] > 1 && layout.strides[d] == 0) return true;
    }
    return false;
  }
};

// What torch's _FunctionalizationMetadataProp records on a node.
struct NodeInfo {
  size_t idx = 0;            // meta['node_idx']
  std::vector<Leaf> leaves;  // tree_flatten(meta['fake_result'])
  bool single_tensor = false;
  Node view_of;  // meta['view_of']: the base this node is a view of
  // The operator's schema (schema_of), looked up once.
  const fx_plugins::OperatorSchema* schema = nullptr;
};

class Schemas {
 public:
  const std::vector<OperatorSchema>& of(const std::string& target) {
    auto it = cache_.find(target);
    if (it == cache_.end()) {
      it = cache_
               .emplace(target, fx_plugins::operator_schemas_of(target.c_str()))
               .first;
    }
    return it->second;
  }

 private:
  std::unordered_map<std::string, std::vector<OperatorSchema>> cache_;
};

// torch.ops.NS.NAME.OVERLOAD (an OpOverload), not a packet.
bool is_overload(std::string_view target) {
  return target.rfind("torch.ops.", 0) == 0 &&
         std::count(target.begin(), target.end(), '.') == 4;
}

// The operator's single schema (an OpOverload has one), or nullptr.
const OperatorSchema* schema_of(Schemas& schemas, const Node& n) {
  if (n.op() != FX_OP_CALL_FUNCTION || !is_overload(n.target())) {
    return nullptr;
  }
  const std::vector<OperatorSchema>& found =
      schemas.of(std::string(n.target()));
  return found.size() == 1 ? &found[0] : nullptr;
}

// torch's _is_view_op: the first argument aliased, not written.
bool is_view(const OperatorSchema& s) {
  return !s.arguments.empty() && !s.arguments[0].alias.empty() &&
         !s.arguments[0].is_write();
}

void flatten(const fxp::RuntimeValue& v, std::vector<Leaf>& out) {
  if (v.is_tensor()) {
    const FxTensorMeta m = v.tensor_meta();
    const fxp::TensorStorage s = v.storage();
    Leaf leaf;
    leaf.storage = s.id;
    leaf.layout.offset = s.offset;
    leaf.layout.sizes.assign(m.shape, m.shape + m.ndim);
    leaf.layout.strides.assign(m.strides, m.strides + m.ndim);
    leaf.dtype = m.dtype_name;
    out.push_back(std::move(leaf));
  } else if (v.kind() == FX_VALUE_SEQUENCE) {
    for (size_t i = 0; i < v.size(); ++i) flatten(v.item(i), out);
  } else {
    out.emplace_back();
  }
}

// The sample inputs, described for a meta run (their data is not read).
struct SampleInputs {
  std::vector<fxp::Tensor> examples;
  std::vector<std::vector<int64_t>> shapes, strides;
  std::vector<DLTensor> described;
};

// A placeholder's tensor_meta as an input description.
void describe_from_meta(const Node& p, SampleInputs& in) {
  ArgView meta = p.meta("tensor_meta");
  ArgView shape = meta ? fxp::dict_get(meta, "shape") : ArgView();
  ArgView stride = meta ? fxp::dict_get(meta, "stride") : ArgView();
  ArgView dtype = meta ? fxp::dict_get(meta, "dtype") : ArgView();
  if (!shape || !stride || !dtype) {
    throw fxp::Error(
        FX_FAILED_PRECONDITION,
        "reinplace needs sample inputs (torch's reinplace(gm, "
        "*sample_args)): example inputs from the host (fx run --inputs "
        "IN.pt) or placeholders' tensor_meta (run shape_prop first); "
        "placeholder '" +
            std::string(p.name()) + "' has neither");
  }
  std::vector<int64_t> sizes, strides;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].kind() != FX_ARG_INT || stride[i].kind() != FX_ARG_INT) {
      throw fxp::Error(FX_FAILED_PRECONDITION,
                       "reinplace: placeholder '" + std::string(p.name()) +
                           "' has a symbolic tensor_meta; give example "
                           "inputs");
    }
    sizes.push_back(shape[i].as_int());
    strides.push_back(stride[i].as_int());
  }
  in.shapes.push_back(std::move(sizes));
  in.strides.push_back(std::move(strides));
  DLTensor t{};
  t.ndim = static_cast<int32_t>(in.shapes.back().size());
  t.dtype = fx_plugins::parse_dtype(dtype.as_string());
  t.device = DLDevice{kDLCPU, 0};
  in.described.push_back(t);
}

SampleInputs sample_inputs(const fxp::Graph& g) {
  SampleInputs in;
  const std::vector<Node> params = fx_plugins::placeholders(g);
  in.examples = fxp::example_inputs(g);
  if (in.examples.size() >= params.size()) {
    for (size_t i = 0; i < params.size(); ++i) {
      in.described.push_back(in.examples[i].dl());
    }
    return in;
  }
  in.examples.clear();
  in.shapes.reserve(params.size());
  in.strides.reserve(params.size());
  for (const Node& p : params) describe_from_meta(p, in);
  for (size_t i = 0; i < in.described.size(); ++i) {
    in.described[i].shape = in.shapes[i].data();
    in.described[i].strides = in.strides[i].data();
  }
  return in;
}

using Infos = std::unordered_map<FxNode*, NodeInfo>;

// torch's _FunctionalizationMetadataProp: the meta run, then views.
Infos propagate(fxp::Graph& g, Schemas& schemas) {
  Infos infos;
  infos.reserve(g.size());
  size_t idx = 0;
  for (Node n : g) {
    NodeInfo& info = infos[n.get()];
    info.idx = idx++;
    info.schema = schema_of(schemas, n);
  }
  SampleInputs in = sample_inputs(g);
  std::vector<const DLTensor*> inputs;
  for (const DLTensor& t : in.described) inputs.push_back(&t);
  // The host reports every node, the output node with what it returns.
  fxp::run_graph(g, inputs, /*meta=*/true, [&](Node n, fxp::RuntimeValue v) {
    NodeInfo& info = infos[n.get()];
    flatten(v, info.leaves);
    info.single_tensor = v.is_tensor();
  });
  std::unordered_map<FxNode*, Node> multi_output_views;
  for (Node n : g) {
    if (n.op() != FX_OP_CALL_FUNCTION || n.num_args() == 0) continue;
    ArgView first = n.arg(0);
    if (first.kind() != FX_ARG_NODE) continue;
    if (const OperatorSchema* s = infos[n.get()].schema; s && is_view(*s)) {
      if (s->arguments[0].aliases_many()) {
        multi_output_views[n.get()] = first.node();
      } else {
        infos[n.get()].view_of = first.node();
      }
    } else if (n.target() == kGetitem) {
      auto base = multi_output_views.find(first.node().get());
      if (base != multi_output_views.end()) {
        infos[n.get()].view_of = base->second;
      }
    }
  }
  return infos;
}

// Storages sharing memory, as classes: the nodes whose results live in
// them, their views, and the (node_idx, node) of every user of those nodes.
class AliasClasses {
 public:
  AliasClasses(const fxp::Graph& g, Infos& infos) : infos_(infos) {
    std::vector<size_t> classes;
    for (Node n : g) {
      const NodeInfo& info = infos_.at(n.get());
      classes.clear();
      for (const Leaf& l : info.leaves) {
        if (l.storage != 0) classes.push_back(class_of(l.storage));
      }
      std::sort(classes.begin(), classes.end());
      classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
      for (size_t c : classes) add_member(c, n);
    }
  }

  // The class of a storage (created on first use).
  size_t class_of(uint64_t storage) {
    auto [it, added] = index_.emplace(storage, parent_.size());
    if (added) {
      parent_.push_back(parent_.size());
      classes_.emplace_back(std::make_unique<Class>());
    }
    return find(it->second);
  }

  bool is_member(const Node& n, size_t c) {
    auto info = infos_.find(n.get());
    if (info == infos_.end()) return false;  // made by the pass
    for (const Leaf& l : info->second.leaves) {
      if (l.storage != 0 && class_of(l.storage) == c) return true;
    }
    return false;
  }

  const std::vector<Node>& views(size_t c) const { return classes_[c]->views; }

  // Users of the class's nodes after `idx`, in order (a user may be stale:
  // check it still reads a member).
  template <typename Fn>
  void for_each_user_after(size_t c, size_t idx, Fn&& fn) const {
    const auto& users = classes_[c]->users;
    for (auto it = users.lower_bound({idx + 1, nullptr}); it != users.end();
         ++it) {
      if (!fn(Node(it->second))) return;
    }
  }

  void add_user(size_t c, const Node& user) {
    classes_[c]->users.emplace(infos_.at(user.get()).idx, user.get());
  }

  void merge(uint64_t a, uint64_t b) {
    size_t x = class_of(a), y = class_of(b);
    if (x == y) return;
    if (size(x) < size(y)) std::swap(x, y);
    Class& big = *classes_[x];
    Class& small = *classes_[y];
    big.users.insert(small.users.begin(), small.users.end());
    big.views.insert(big.views.end(), small.views.begin(), small.views.end());
    classes_[y].reset(new Class());
    parent_[y] = x;
  }

 private:
  struct Class {
    std::set<std::pair<size_t, FxNode*>> users;
    std::vector<Node> views;  // members with a view_of
  };

  size_t find(size_t c) {
    while (parent_[c] != c) c = parent_[c] = parent_[parent_[c]];
    return c;
  }
  size_t size(size_t c) const {
    return classes_[c]->users.size() + classes_[c]->views.size();
  }
  void add_member(size_t c, const Node& n) {
    Class& cls = *classes_[c];
    if (infos_.at(n.get()).view_of) cls.views.push_back(n);
    for (Node u : n.users()) {
      cls.users.emplace(infos_.at(u.get()).idx, u.get());
    }
  }

  Infos& infos_;
  std::unordered_map<uint64_t, size_t> index_;
  std::vector<size_t> parent_;
  std::vector<std::unique_ptr<Class>> classes_;
};

class Reinplacer {
 public:
  Reinplacer(fxp::Graph& g, Schemas& schemas, Infos& infos)
      : g_(g), schemas_(schemas), infos_(infos), classes_(g, infos) {
    for (Node n : g) {
      if (n.op() == FX_OP_PLACEHOLDER || n.op() == FX_OP_GET_ATTR) protect(n);
    }
  }

  bool run() {
    bool changed = false;
    for (Node n : g_) {
      if (infos_.count(n.get()) && try_node(n)) changed = true;
    }
    erase_inverses();
    return changed;
  }

 private:
  void protect(const Node& n) {
    for (const Leaf& l : infos_.at(n.get()).leaves) {
      if (l.storage != 0) inputs_.insert(l.storage);
    }
  }

  // The node's one tensor; nullptr for another result or a node the pass
  // made.
  const Leaf* single_storage(const Node& n) const {
    auto info = infos_.find(n.get());
    if (info == infos_.end() || !info->second.single_tensor) return nullptr;
    return &info->second.leaves[0];
  }

  // Step (1) of torch's algorithm: the self argument may be written.
  const Leaf* writable_self(const Node& n, const OperatorSchema& s) {
    if (s.arguments.empty() || s.arguments[0].type != "Tensor") return nullptr;
    if (n.num_args() == 0 || n.arg(0).kind() != FX_ARG_NODE) return nullptr;
    const Node self = n.arg(0).node();
    if (single_storage(self) == nullptr) return nullptr;
    const NodeInfo& in = infos_.at(self.get());
    const NodeInfo& out = infos_.at(n.get());
    bool wrong = false;
    if (in.leaves.size() == out.leaves.size()) {
      for (size_t i = 0; i < in.leaves.size(); ++i) {
        const Leaf &a = in.leaves[i], &b = out.leaves[i];
        if (a.storage == 0 || b.storage == 0 || a.numel() != b.numel() ||
            a.dtype != b.dtype || a.overlaps_itself()) {
          wrong = true;
        }
      }
    }
    if (wrong && n.target() != kResize) return nullptr;
    if (inputs_.count(in.leaves[0].storage)) return nullptr;
    size_t uses = 0;
    for (size_t i = 0; i < n.num_args(); ++i) {
      ArgView a = n.arg(i);
      if (a.kind() == FX_ARG_NODE && a.node() == self) ++uses;
    }
    return uses > 1 ? nullptr : &in.leaves[0];
  }

  // Step (2): the later users of the self's aliases; false when one of them
  // is not a {view}_scatter, else the scatters in node order.
  bool later_scatters(const Node& n, size_t c, std::vector<Node>& scatters) {
    const size_t idx = infos_.at(n.get()).idx;
    bool ok = true;
    classes_.for_each_user_after(c, idx, [&](Node u) {
      if (!reads_member(u, c)) return true;  // moved to another storage
      if (classes_.is_member(u, c) &&
          (is_overload(u.target()) || u.target() == kGetitem)) {
        return true;  // an alias itself: an intermediate view
      }
      if (inverted_view(u.target()) == nullptr) return ok = false;
      scatters.push_back(u);
      return true;
    });
    return ok;
  }

  bool reads_member(const Node& u, size_t c) {
    for (Node input : u.all_input_nodes()) {
      if (classes_.is_member(input, c)) return true;
    }
    return false;
  }

  // torch's _get_view_inverse_node_usages for one scatter: it undoes a view
  // of the self's storage.
  bool inverts_an_alias(const Node& scatter, size_t c) {
    if (scatter.num_args() < 2 || scatter.arg(0).kind() != FX_ARG_NODE ||
        scatter.arg(1).kind() != FX_ARG_NODE) {
      return false;
    }
    const Leaf* base = single_storage(scatter.arg(0).node());
    if (base == nullptr) return false;
    const char* view = inverted_view(scatter.target());
    for (const Node& alias : classes_.views(c)) {
      const Leaf* alias_base = single_storage(infos_.at(alias.get()).view_of);
      const Leaf* expected = single_storage(alias);
      if (alias_base == nullptr || expected == nullptr) continue;
      std::optional<ViewLayout> replay =
          replay_view(view, alias_base->layout, scatter);
      if (replay && alias_base->layout == base->layout &&
          *replay == expected->layout) {
        return true;
      }
    }
    return false;
  }

  // torch's _maybe_get_inplace_op: NAME_'s one overload whose schema is
  // NAME's with the first argument written.
  std::string inplace_variant(const Node& n, const OperatorSchema& s) {
    if (is_view(s)) return "";
    std::string_view t = n.target();
    const std::string packet = std::string(t.substr(0, t.rfind('.'))) + "_";
    std::string found;
    for (const OperatorSchema& v : schemas_.of(packet)) {
      if (!matches_inplace(s, v)) continue;
      if (!found.empty()) {
        throw fxp::Error(
            FX_FAILED_PRECONDITION,
            "reinplace: '" + std::string(n.name()) + "': " + packet +
                " has several overloads matching " + s.name + "." + s.overload);
      }
      found = packet + "." + (v.overload.empty() ? "default" : v.overload);
    }
    return found;
  }

  static bool matches_inplace(const OperatorSchema& f,
                              const OperatorSchema& v) {
    if (v.name != f.name + "_" || v.arguments.size() != f.arguments.size()) {
      return false;
    }
    if (v.arguments.empty() || !v.arguments[0].is_write()) return false;
    for (size_t i = 0; i < f.arguments.size(); ++i) {
      if (i > 0 && !v.arguments[i].alias.empty()) return false;
      if (f.arguments[i].type != v.arguments[i].type) return false;
    }
    return true;
  }

  bool try_node(Node n) {
    const OperatorSchema* s = infos_.at(n.get()).schema;
    if (s == nullptr) return false;
    const Leaf* self = writable_self(n, *s);
    const Leaf* result = single_storage(n);
    if (self == nullptr || result == nullptr) return false;
    const size_t c = classes_.class_of(self->storage);
    std::vector<Node> scatters;
    if (!later_scatters(n, c, scatters)) return false;
    for (const Node& v : scatters) {
      if (!inverts_an_alias(v, c)) return false;
    }
    if (const char* view = inverted_view(n.target());
        view != nullptr && !to_delete_.count(n.get())) {
      replace_scatter(n, view);
    } else {
      const std::string inplace = inplace_variant(n, *s);
      if (inplace.empty()) return false;
      n.set_target(inplace.c_str());
    }
    classes_.merge(self->storage, result->storage);
    for (const Node& v : scatters) to_delete_.insert(v.get());
    redirect_users(n, n);
    for (const Node& v : scatters) redirect_users(v, n);
    return true;
  }

  // Step (3a): y = {view}_scatter(a, v, args) becomes {view}(a,
  // args).copy_(v); the scatter goes at the end.
  void replace_scatter(Node n, const char* view) {
    fxp::InsertGuard at = g_.inserting_before(n);
    std::vector<fxp::Arg> args = {fxp::Arg(n.arg(0))};
    for (size_t i = 2; i < n.num_args(); ++i) args.emplace_back(n.arg(i));
    fxp::Kwargs kwargs;
    for (size_t i = 0; i < n.num_kwargs(); ++i) {
      kwargs.emplace_back(n.kwarg_key(i), fxp::Arg(n.kwarg_value(i)));
    }
    Node slice = g_.call_function(view, args, kwargs);
    g_.call_function(kCopyInPlace, {fxp::Arg(slice), fxp::Arg(n.arg(1))});
    to_delete_.insert(n.get());
  }

  // Step (4): later users of `old` read its self argument instead.
  void redirect_users(const Node& old, const Node& rewritten) {
    const Node replacement = old.arg(0).node();
    const size_t after = infos_.at(rewritten.get()).idx;
    const Leaf* old_storage = single_storage(old);
    for (Node u : old.users()) {
      auto info = infos_.find(u.get());
      if (info == infos_.end() || info->second.idx <= after) continue;
      u.replace_input_with(old, replacement);
      const Leaf* new_storage = single_storage(replacement);
      if (new_storage != nullptr) {
        classes_.add_user(classes_.class_of(new_storage->storage), u);
      }
      const Leaf* user_storage = single_storage(u);
      if (old_storage && user_storage && new_storage &&
          old_storage->storage == user_storage->storage) {
        classes_.merge(user_storage->storage, new_storage->storage);
      }
    }
  }

  // Step (5), in reverse graph order so that a scatter reading another goes
  // first.
  void erase_inverses() {
    std::vector<Node> doomed;
    for (Node n : g_) {
      if (to_delete_.count(n.get())) doomed.push_back(n);
    }
    for (auto it = doomed.rbegin(); it != doomed.rend(); ++it) {
      g_.erase_node(*it);
    }
  }

  fxp::Graph& g_;
  Schemas& schemas_;
  Infos& infos_;
  AliasClasses classes_;
  std::unordered_set<uint64_t> inputs_;
  std::unordered_set<FxNode*> to_delete_;
};

// A functional graph: no operator writes its inputs, but for the copy_
// write-back functionalization emits.
void check_functional(const fxp::Graph& g) {
  for (Node n : g) {
    if (n.op() != FX_OP_CALL_FUNCTION || n.target() == kCopyInPlace) continue;
    if (n.operator_effects() & FX_EFFECT_MUTATES) {
      throw fxp::Error(
          FX_FAILED_PRECONDITION,
          "reinplace: node '" + std::string(n.name()) + "' calls " +
              std::string(n.target()) +
              ", which writes its input: reinplace takes a functional graph "
              "(make_fx(functionalize(f)))");
    }
  }
}

}  // namespace

bool reinplace(fxp::Graph& g, const fxp::Options&) {
  check_functional(g);
  Schemas schemas;
  Infos infos = propagate(g, schemas);
  return Reinplacer(g, schemas, infos).run();
}

}  // namespace fx_optimization
