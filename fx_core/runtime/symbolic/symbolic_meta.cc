#include "fx_core/runtime/symbolic/symbolic_meta.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/symbolic/symbolic_shape_prop.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "fx_core/symbolic/sym_parser.h"

namespace fx {
namespace {

Argument size_argument(const sym::Expr& e) {
  if (std::optional<int64_t> i = e.as_integer()) return Argument(*i);
  return Argument::symint(e.str());
}

Argument sizes_argument(const std::vector<sym::Expr>& sizes) {
  ArgumentList items;
  for (const sym::Expr& e : sizes) items.push_back(size_argument(e));
  return Argument::list(std::move(items));
}

// torch.fx's TensorMetadata.memory_format: the first format the tensor is
// contiguous in.
std::string memory_format(const at::Tensor& t) {
  if (t.is_contiguous()) return "torch.contiguous_format";
  if (t.is_contiguous(at::MemoryFormat::ChannelsLast)) {
    return "torch.channels_last";
  }
  if (t.is_contiguous(at::MemoryFormat::ChannelsLast3d)) {
    return "torch.channels_last_3d";
  }
  return "";
}

Argument tensor_meta(const SymbolicValue& v) {
  const at::Tensor& t = v.hint.toTensor();
  ArgumentDict meta{{"shape", sizes_argument(v.sizes)},
                    {"dtype", Argument::dtype(dtype_name(t.scalar_type()))}};
  if (!v.strides.empty() || v.sizes.empty()) {
    meta.emplace_back("stride", sizes_argument(v.strides));
  }
  meta.emplace_back("requires_grad", Argument(false));
  std::string format = memory_format(t);
  meta.emplace_back("memory_format", format.empty()
                                         ? Argument()
                                         : Argument::memory_format(format));
  return Argument::dict(std::move(meta));
}

// meta['tensor_meta'] of a value, or nullopt when it holds no tensor.
std::optional<Argument> value_meta(const SymbolicValue& v) {
  if (v.kind == SymbolicValue::Kind::kTensor) return tensor_meta(v);
  if (v.kind != SymbolicValue::Kind::kSequence) return std::nullopt;
  ArgumentList items;
  bool any = false;
  for (const SymbolicValue& item : v.items) {
    std::optional<Argument> m = value_meta(item);
    any = any || m.has_value();
    items.push_back(m ? *std::move(m) : Argument());
  }
  if (!any) return std::nullopt;
  return Argument::tuple(std::move(items));
}

bool all_hinted(const std::vector<sym::Expr>& exprs, const sym::ShapeEnv& env) {
  for (const sym::Expr& e : exprs) {
    for (const std::string& s : e.free_symbols()) {
      if (!env.hint(s)) return false;
    }
  }
  return true;
}

// The values of a placeholder's declared sizes (or strides) at the hints.
std::vector<int64_t> hint_values(const Node& n,
                                 const std::vector<sym::Expr>& exprs,
                                 const sym::ShapeEnv& env) {
  sym::Bindings hints(env.hints().begin(), env.hints().end());
  std::vector<int64_t> values;
  for (const sym::Expr& e : exprs) {
    for (const std::string& s : e.free_symbols()) {
      if (!env.hint(s)) {
        throw FxError(cat("placeholder '", n.name(), "': the symbol ", s,
                          " has no hint (a value to trace with)"));
      }
    }
    values.push_back(e.evaluate(hints));
  }
  return values;
}

// meta['type'] as ShapeProp records it (type(result)): torch.Tensor, int,
// tuple, torch.Size, ...; a symbolic int is a torch.SymIntNode in 1.13.
std::string type_name(const SymbolicValue& v) {
  if (v.kind == SymbolicValue::Kind::kInt && v.has_symbols()) {
    return "torch.SymIntNode";
  }
  std::string name = value_type_name(v.hint);
  return name == "Tensor" ? "torch.Tensor" : name;
}

// Whether a node computes from a value holding symbols.
bool reads_symbols(const Node& n, const SymbolicShapes& shapes) {
  bool symbolic = false;
  auto visit = [&](const Argument& a) {
    for_each_node(a, [&](Node* input) {
      symbolic = symbolic || shapes.values.at(input).has_symbols();
    });
  };
  for (const Argument& a : n.args()) visit(a);
  for (const auto& [name, a] : n.kwargs()) visit(a);
  return symbolic;
}

// The example a placeholder runs with at the hints.
SymbolicInput example_input(const Node& n, const sym::ShapeEnv& env) {
  const Argument* meta = n.meta_value("tensor_meta");
  const Argument* dtype =
      meta && meta->is_dict() ? meta->find("dtype") : nullptr;
  at::ScalarType type = at::kFloat;
  if (dtype != nullptr) {
    type = parse_dtype(dtype->as_string()).value_or(at::kFloat);
  }
  const Argument* shape =
      meta && meta->is_dict() ? meta->find("shape") : nullptr;
  for (const sym::ShapeEnv::Input& in : env.inputs()) {
    if (in.placeholder != n.name()) continue;
    if (shape != nullptr && shape->is_sequence() &&
        shape->elements().size() != in.sizes.size()) {
      throw FxError(cat("placeholder '", n.name(), "': ", in.sizes.size(),
                        " sizes given for a tensor of rank ",
                        shape->elements().size(), " (its tensor_meta)"));
    }
    std::vector<int64_t> sizes = hint_values(n, in.sizes, env);
    auto options = at::TensorOptions(type).device(at::kMeta);
    if (!in.strides.empty() && all_hinted(in.strides, env)) {
      std::vector<int64_t> strides = hint_values(n, in.strides, env);
      return {at::empty_strided(sizes, strides, options), in.sizes, in.strides};
    }
    return {at::empty(sizes, options), in.sizes, {}};
  }
  if (shape == nullptr || !shape->is_sequence()) {
    throw FxError(cat("placeholder '", n.name(),
                      "': no sizes declared and no tensor_meta"));
  }
  std::vector<int64_t> sizes;
  for (const Argument& s : shape->elements()) sizes.push_back(s.as_int());
  return {at::empty(sizes, at::TensorOptions(type).device(at::kMeta)), {}, {}};
}

}  // namespace

absl::StatusOr<std::vector<sym::Expr>> parse_sizes_text(std::string_view text) {
  std::vector<sym::Expr> sizes;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = std::min(text.find('x', start), text.size());
    std::string_view piece = text.substr(start, end - start);
    absl::StatusOr<sym::Expr> e = sym::parse_sym_expr(piece);
    if (!e.ok()) {
      return absl::InvalidArgumentError(
          cat("size ", sizes.size(), " (\"", piece,
              "\"): ", std::string(e.status().message())));
    }
    sizes.push_back(*std::move(e));
    start = end + 1;
  }
  return sizes;
}

void set_symbol_hint(sym::ShapeEnv& env, std::string_view symbol,
                     int64_t value) {
  std::vector<std::string> known = env.symbols();
  if (std::find(known.begin(), known.end(), symbol) == known.end()) {
    throw FxError(cat("a hint is given for the symbol ", symbol,
                      ", which no size names (symbols: ", join(known, ", "),
                      ")"));
  }
  if (value < 2) {
    throw FxError(cat("the hint of ", symbol, " is ", value,
                      ": a symbol's value is at least 2 (sizes 0 and 1 are "
                      "specialised)"));
  }
  env.set_hint(symbol, value);
}

void assign_default_hints(sym::ShapeEnv& env) {
  int64_t next = 64;
  for (const std::string& s : env.symbols()) {
    if (env.hint(s)) continue;
    env.set_hint(s, next);
    next += 32;
  }
}

std::vector<sym::Relation> symbolic_shape_prop(GraphModule& gm,
                                               const sym::ShapeEnv& env) {
  for (const sym::ShapeEnv::Input& in : env.inputs()) {
    bool found = false;
    for (const Node* n : gm.graph().nodes()) {
      found = found ||
              (n->op() == Opcode::kPlaceholder && n->name() == in.placeholder);
    }
    if (!found) {
      throw FxError(cat("sizes given for '", in.placeholder,
                        "', which is not a placeholder of the graph"));
    }
  }
  std::vector<SymbolicInput> inputs;
  for (const Node* n : gm.graph().nodes()) {
    if (n->op() == Opcode::kPlaceholder) {
      inputs.push_back(example_input(*n, env));
    }
  }
  sym::Bindings hints(env.hints().begin(), env.hints().end());
  SymbolicShapes shapes = propagate_symbolic_shapes(gm, inputs, hints);
  for (Node* n : gm.graph().nodes()) {
    const SymbolicValue& v = shapes.values.at(n);
    n->set_meta("type", Argument(type_name(v)));
    if (std::optional<Argument> meta = value_meta(v)) {
      n->set_meta("tensor_meta", *std::move(meta));
    } else if (v.kind == SymbolicValue::Kind::kInt &&
               (v.has_symbols() || reads_symbols(*n, shapes))) {
      // A SymInt, as make_fx records it (also one that came out constant).
      n->set_meta("val", Argument::symint(v.integer.str()));
    }
  }
  return shapes.guards;
}

}  // namespace fx
