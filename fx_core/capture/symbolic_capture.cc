#include "fx_core/capture/symbolic_capture.h"

#include <ATen/Functions.h>
#include <ATen/core/function_schema.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "fx_core/capture/symbolic_tensor.h"
#include "fx_core/capture/value_identity.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/symbolic/shape_functions.h"
#include "fx_core/runtime/symbolic/shape_graph_eval.h"
#include "fx_core/runtime/symbolic/symbolic_strides.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"

namespace fx::capture {
namespace {

using sym::Expr;

// Tensors made here (meta copies) are not the captured code's calls.
const c10::DispatchKeySet kCaptureKeys(
    {c10::DispatchKey::Python, c10::DispatchKey::PythonTLSSnapshot,
     c10::DispatchKey::TESTING_ONLY_GenericMode});

std::vector<Expr> integers(c10::IntArrayRef values) {
  std::vector<Expr> out;
  for (int64_t v : values) out.push_back(Expr::integer(v));
  return out;
}

// Every symbolic tensor in `value` (tensor lists included).
template <typename F>
void for_each_symbolic(const c10::IValue& value, const F& f) {
  if (value.isTensor()) {
    if (const SymbolicTensorImpl* impl = symbolic_impl(value.toTensor())) {
      f(*impl);
    }
  } else if (value.isList()) {
    for (const c10::IValue& item : value.toListRef()) {
      for_each_symbolic(item, f);
    }
  }
}

// An argument as its shape function takes it.
SymValue shape_input(const c10::IValue& v) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) return SymValue::none();
    if (const SymbolicTensorImpl* impl = symbolic_impl(t)) {
      return SymValue::int_list(impl->size_exprs());
    }
    return SymValue::int_list(integers(t.sizes()));
  }
  if (v.isSymInt()) {
    if (CaptureSymNode* n = capture_node(v.toSymInt())) {
      return SymValue::of_int(n->expr());
    }
  }
  if (v.isInt()) return SymValue::of_int(Expr::integer(v.toInt()));
  if (v.isDouble()) return SymValue::of_float(v.toDouble());
  if (v.isBool()) return SymValue::of_bool(v.toBool());
  if (v.isString()) return SymValue::of_string(v.toStringRef());
  if (v.isList()) {
    std::vector<SymValue> items;
    for (const c10::IValue& item : v.toListRef()) {
      items.push_back(shape_input(item));
    }
    return SymValue::list(std::move(items));
  }
  return SymValue::none();
}

std::string operator_name(const c10::FunctionSchema& schema) {
  return schema.name() +
         (schema.overload_name().empty() ? "" : "." + schema.overload_name());
}

size_t value_hash(const SymValue& v) {
  size_t h = static_cast<size_t>(v.kind);
  switch (v.kind) {
    case SymValue::Kind::kBool:
      return h * 31 + v.boolean;
    case SymValue::Kind::kInt:
      return h * 31 + v.integer.hash();
    case SymValue::Kind::kFloat:
      return h * 31 + std::hash<double>()(v.number);
    case SymValue::Kind::kString:
      return h * 31 + std::hash<std::string>()(v.text);
    case SymValue::Kind::kList:
    case SymValue::Kind::kTuple:
      for (const SymValue& item : *v.items) h = h * 31 + value_hash(item);
      return h;
    case SymValue::Kind::kNone:
      break;
  }
  return h;
}

bool same_values(const std::vector<SymValue>& a,
                 const std::vector<SymValue>& b);

bool same_value(const SymValue& a, const SymValue& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case SymValue::Kind::kBool:
      return a.boolean == b.boolean;
    case SymValue::Kind::kInt:
      return a.integer == b.integer;
    case SymValue::Kind::kFloat:
      return a.number == b.number;
    case SymValue::Kind::kString:
      return a.text == b.text;
    case SymValue::Kind::kList:
    case SymValue::Kind::kTuple:
      return same_values(*a.items, *b.items);
    case SymValue::Kind::kNone:
      break;
  }
  return true;
}

bool same_values(const std::vector<SymValue>& a,
                 const std::vector<SymValue>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same_value(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace

SymbolicCapture::SymbolicCapture(Graph& graph, NodeOf node_of,
                                 const std::vector<at::Tensor>& examples,
                                 sym::Bindings hints)
    : graph_(graph),
      node_of_tensor_(std::move(node_of)),
      examples_(examples),
      guards_(std::move(hints)) {}

std::shared_ptr<SymbolicCapture> SymbolicCapture::create(
    Graph& graph, NodeOf node_of, const std::vector<at::Tensor>& examples) {
  // 1.13's ShapeEnv.create_symint: 0 and 1 specialised, equal values one
  // symbol, named after the first place they were seen.
  std::map<int64_t, Expr> by_value;
  std::vector<std::pair<std::string, int64_t>> symbols;
  auto symbol = [&](const std::string& name, int64_t value) {
    if (value == 0 || value == 1) return Expr::integer(value);
    auto found = by_value.find(value);
    if (found != by_value.end()) return found->second;
    Expr s = Expr::symbol(name);
    by_value.emplace(value, s);
    symbols.emplace_back(name, value);
    return s;
  };
  std::vector<InputShape> shapes;
  for (size_t k = 0; k < examples.size(); ++k) {
    const at::Tensor& t = examples[k];
    if (!t.defined()) throw FxError("make_fx: an example input is undefined");
    InputShape shape;
    const std::string prefix = "t" + std::to_string(k) + ".";
    for (int64_t d = 0; d < t.dim(); ++d) {
      shape.sizes.push_back(
          symbol(prefix + "size(" + std::to_string(d) + ")", t.size(d)));
    }
    for (int64_t d = 0; d < t.dim(); ++d) {
      shape.strides.push_back(
          symbol(prefix + "stride(" + std::to_string(d) + ")", t.stride(d)));
    }
    shapes.push_back(std::move(shape));
  }
  sym::Bindings hints(symbols.begin(), symbols.end());
  auto capture = std::make_shared<SymbolicCapture>(graph, std::move(node_of),
                                                   examples, std::move(hints));
  capture->shapes_ = std::move(shapes);
  capture->symbols_ = std::move(symbols);
  return capture;
}

namespace {

// `shape` checked against `example` at the hints; its strides filled in
// when not declared.
void complete_declared(SymbolicCapture::InputShape& shape,
                       const at::Tensor& example,
                       const sym::GuardRecorder& guards) {
  if (!example.defined()) throw FxError("an example input is undefined");
  const size_t rank = static_cast<size_t>(example.dim());
  if (shape.sizes.size() != rank) {
    throw FxError("declared " + std::to_string(shape.sizes.size()) +
                  " sizes for a tensor of rank " + std::to_string(rank));
  }
  for (size_t d = 0; d < rank; ++d) {
    if (guards.hint(shape.sizes[d]) != example.size(static_cast<int64_t>(d))) {
      throw FxError("size " + shape.sizes[d].str() +
                    " is not the example's at the hints");
    }
  }
  if (shape.strides.size() == rank) return;
  shape.strides = dense_strides(shape.sizes, example);
  if (shape.strides.empty()) shape.strides = integers(example.strides());
}

}  // namespace

std::shared_ptr<SymbolicCapture> SymbolicCapture::create_declared(
    Graph& graph, NodeOf node_of, const std::vector<at::Tensor>& examples,
    std::vector<InputShape> shapes, const sym::Bindings& hints) {
  if (shapes.size() != examples.size()) {
    throw FxError("make_fx (symbolic): " + std::to_string(shapes.size()) +
                  " declared shapes for " + std::to_string(examples.size()) +
                  " example inputs");
  }
  auto capture = std::make_shared<SymbolicCapture>(graph, std::move(node_of),
                                                   examples, hints);
  for (size_t k = 0; k < shapes.size(); ++k) {
    complete_declared(shapes[k], examples[k], capture->guards_);
  }
  capture->shapes_ = std::move(shapes);
  capture->symbols_.assign(hints.begin(), hints.end());
  return capture;
}

at::Tensor SymbolicCapture::input(size_t i) {
  const at::Tensor& t = examples_.at(i);
  at::Tensor meta;
  {
    c10::impl::ExcludeDispatchKeyGuard below(kCaptureKeys);
    meta = at::empty_strided(t.sizes(), t.strides(),
                             t.options().device(at::kMeta));
  }
  return make_symbolic_tensor(weak_from_this(), meta, shapes_[i].sizes,
                              shapes_[i].strides);
}

namespace {

// A SymInt's value at the hints: a capture node's hint, or the int.
int64_t hint_of(const c10::SymInt& s) {
  const CaptureSymNode* n = capture_node(s);
  return n != nullptr ? n->hint() : s.as_int_unchecked();
}

}  // namespace

c10::IValue SymbolicCapture::hints(const c10::IValue& value) const {
  if (value.isTensor()) {
    const SymbolicTensorImpl* impl = symbolic_impl(value.toTensor());
    return impl != nullptr ? c10::IValue(impl->meta()) : value;
  }
  if (value.isSymInt()) return hint_of(value.toSymInt());
  if (!value.isList() || !is_symbolic(value)) return value;
  if (value.isTensorList()) {
    c10::List<at::Tensor> out;
    for (const at::Tensor& t : value.toTensorList()) {
      out.push_back(hints(t).toTensor());
    }
    return out;
  }
  auto list = value.toList();
  bool ints = std::all_of(list.begin(), list.end(), [](const c10::IValue& v) {
    return v.isInt() || v.isSymInt();
  });
  if (ints) {
    std::vector<int64_t> out;
    out.reserve(list.size());
    for (const c10::IValue& item : list)
      out.push_back(hint_of(item.toSymInt()));
    return out;
  }
  c10::impl::GenericList out(list.elementType());
  for (const c10::IValue& item : list) out.push_back(hints(item));
  return out;
}

bool SymbolicCapture::is_symbolic(const c10::IValue& value) const {
  if (value.isSymInt()) return capture_node(value.toSymInt()) != nullptr;
  if (value.isTensor()) return symbolic_impl(value.toTensor()) != nullptr;
  if (value.isList()) {
    for (const c10::IValue& item : value.toListRef()) {
      if (is_symbolic(item)) return true;
    }
  }
  return false;
}

void SymbolicCapture::wrap_results(const c10::FunctionSchema& schema,
                                   const std::vector<c10::IValue>& args,
                                   torch::jit::Stack* stack) {
  const size_t n = schema.returns().size();
  bool symbolic = false;
  for (const c10::IValue& arg : args) {
    for_each_symbolic(arg, [&](const SymbolicTensorImpl& impl) {
      symbolic |= impl.has_symbolic_size();
    });
    symbolic |= arg.isSymInt() && capture_node(arg.toSymInt()) != nullptr;
    if (arg.isList()) {
      for (const c10::IValue& item : arg.toListRef()) {
        symbolic |= item.isSymInt() && capture_node(item.toSymInt());
      }
    }
  }
  const SymValue* shapes = symbolic ? &result_shapes(schema, args) : nullptr;
  const size_t base = stack->size() - n;
  for (size_t i = 0; i < n; ++i) {
    const SymValue* shape = nullptr;
    if (shapes) shape = n == 1 ? shapes : &(*shapes->items).at(i);
    (*stack)[base + i] = wrap_value((*stack)[base + i], shape, args, schema);
  }
}

namespace {

// Appends the identity of `v` as a shape function input to `key`: the
// nodes of its expressions, its integers' values (value_identity.h). False
// for a kind the identity key does not cover (strings, dicts, ...).
template <typename Key>
bool append_identity(const c10::IValue& v, Key* key) {
  auto tag = [key](intptr_t t) { key->push_back(t); };
  auto tensor = [&](const at::Tensor& t) {
    if (!t.defined()) return tag(kFirstCallerTag), true;
    if (const SymbolicTensorImpl* impl = symbolic_impl(t)) {
      tag(kFirstCallerTag + 1);
      tag(static_cast<intptr_t>(impl->size_exprs().size()));
      for (const Expr& e : impl->size_exprs()) {
        tag(reinterpret_cast<intptr_t>(&e.node()));
      }
      return true;
    }
    tag(kFirstCallerTag + 2);
    tag(t.dim());
    for (int64_t size : t.sizes()) tag(static_cast<intptr_t>(size));
    return true;
  };
  auto sym = [&](const CaptureSymNode& n) {
    tag(kFirstCallerTag + 3);
    tag(reinterpret_cast<intptr_t>(&n.expr().node()));
    return true;
  };
  return append_value_identity(v, key, tensor, sym);
}

}  // namespace

const SymValue& SymbolicCapture::result_shapes(
    const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args) {
  // The same expression nodes: a lookup, without building the inputs.
  IdentityKey identity{reinterpret_cast<intptr_t>(&schema)};
  bool identified = true;
  for (const c10::IValue& arg : args) {
    identified = identified && append_identity(arg, &identity);
  }
  if (identified) {
    auto found = identity_memo_.find(identity);
    if (found != identity_memo_.end()) return *found->second.result;
  }
  std::vector<SymValue> inputs;
  size_t key = std::hash<const void*>()(&schema);
  for (const c10::IValue& arg : args) {
    inputs.push_back(shape_input(arg));
    key = key * 31 + value_hash(inputs.back());
  }
  const SymValue& result = structural_result(schema, inputs, key);
  if (identified) {
    // `inputs` holds the expressions the identity names, keeping them alive.
    identity_memo_.emplace(std::move(identity),
                           IdentityEntry{std::move(inputs), &result});
  }
  return result;
}

const SymValue& SymbolicCapture::structural_result(
    const c10::FunctionSchema& schema, const std::vector<SymValue>& inputs,
    size_t key) {
  // The same expressions give the same result, and their guards are
  // recorded already.
  auto [first, last] = shape_memo_.equal_range(key);
  for (auto it = first; it != last; ++it) {
    if (it->second.schema == &schema &&
        same_values(it->second.inputs, inputs)) {
      return it->second.result;
    }
  }
  std::shared_ptr<const torch::jit::Graph> graph = shape_graph_for(schema);
  if (!graph) {
    throw FxError("make_fx (symbolic): " + operator_name(schema) +
                  " has symbolic arguments and no symbolic shape rule "
                  "(fx_core/runtime/symbolic/shape_functions.cc)");
  }
  std::vector<SymValue> result =
      evaluate_shape_graph(*graph, inputs, guards_, operator_name(schema));
  MemoEntry entry{&schema, inputs,
                  result.size() == 1 ? result[0] : SymValue::tuple(result)};
  return shape_memo_.emplace(key, std::move(entry))->second.result;
}

c10::IValue SymbolicCapture::wrap_value(const c10::IValue& result,
                                        const SymValue* shape,
                                        const std::vector<c10::IValue>& args,
                                        const c10::FunctionSchema& schema) {
  if (result.isTensorList()) {
    c10::List<at::Tensor> out;
    auto list = result.toTensorList();
    if (shape != nullptr &&
        (!shape->items || shape->items->size() != list.size())) {
      throw FxError("make_fx (symbolic): the shape rule of " +
                    operator_name(schema) + " gives " + shape->str() + " for " +
                    std::to_string(list.size()) + " tensors");
    }
    for (size_t i = 0; i < list.size(); ++i) {
      out.push_back(wrap_value(list.get(i),
                               shape ? &(*shape->items)[i] : nullptr, args,
                               schema)
                        .toTensor());
    }
    return out;
  }
  if (!result.isTensor() || !result.toTensor().defined()) return result;
  const at::Tensor& t = result.toTensor();
  c10::IValue self;
  for (const c10::IValue& arg : args) {
    for_each_symbolic(arg, [&](const SymbolicTensorImpl& impl) {
      if (self.isNone() && impl.meta().is_same(t)) {
        self = at::Tensor(c10::intrusive_ptr<c10::TensorImpl>::reclaim_copy(
            const_cast<SymbolicTensorImpl*>(&impl)));
      }
    });
  }
  if (!self.isNone()) return self;
  if (shape == nullptr) {
    return wrap(t,
                std::make_shared<const std::vector<Expr>>(integers(t.sizes())),
                args);
  }
  return wrap(t, result_sizes(*shape, t, schema), args);
}

SymbolicCapture::Exprs SymbolicCapture::result_sizes(
    const SymValue& shape, const at::Tensor& result,
    const c10::FunctionSchema& schema) {
  auto found = sizes_of_.find(&shape);
  if (found == sizes_of_.end()) {
    SizesOf entry;
    std::vector<Expr> sizes;
    std::vector<int64_t> hints;
    bool ints = shape.kind == SymValue::Kind::kList;
    for (size_t d = 0; ints && d < shape.items->size(); ++d) {
      const SymValue& s = (*shape.items)[d];
      ints = s.kind == SymValue::Kind::kInt;
      if (ints) {
        sizes.push_back(s.integer);
        hints.push_back(guards_.hint(s.integer));
      }
    }
    if (ints) entry.hints = std::move(hints);
    entry.sizes = std::make_shared<const std::vector<Expr>>(std::move(sizes));
    found = sizes_of_.emplace(&shape, std::move(entry)).first;
  }
  const std::optional<std::vector<int64_t>>& hints = found->second.hints;
  if (!hints || !std::equal(hints->begin(), hints->end(),
                            result.sizes().begin(), result.sizes().end())) {
    throw FxError("make_fx (symbolic): the shape rule of " +
                  operator_name(schema) + " gives " + shape.str() +
                  " but the kernel's result at the hints has sizes " +
                  c10::str(result.sizes()));
  }
  return found->second.sizes;
}

at::Tensor SymbolicCapture::wrap(const at::Tensor& result, Exprs sizes,
                                 const std::vector<c10::IValue>& args) {
  at::Tensor meta = result;
  if (!meta.is_meta()) {
    c10::impl::ExcludeDispatchKeyGuard below(kCaptureKeys);
    meta = at::empty_strided(result.sizes(), result.strides(),
                             result.options().device(at::kMeta));
  }
  Bases bases;
  for (const c10::IValue& arg : args) {
    for_each_symbolic(arg, [&](const SymbolicTensorImpl& impl) {
      if (impl.meta().is_alias_of(result))
        bases.push_back(&impl.stride_exprs());
    });
  }
  Exprs strides = result_strides(*sizes, meta, bases);
  return make_symbolic_tensor(weak_from_this(), meta, std::move(sizes),
                              std::move(strides));
}

const SymbolicCapture::Exprs& SymbolicCapture::result_strides(
    const std::vector<Expr>& sizes, const at::Tensor& meta,
    const Bases& bases) {
  IdentityKey key;
  auto identities = [&key](const std::vector<Expr>& exprs) {
    key.push_back(static_cast<intptr_t>(exprs.size()));
    for (const Expr& e : exprs) {
      key.push_back(reinterpret_cast<intptr_t>(&e.node()));
    }
  };
  identities(sizes);
  for (int64_t s : meta.strides()) key.push_back(static_cast<intptr_t>(s));
  for (const std::vector<Expr>* base : bases) identities(*base);
  auto found = strides_memo_.find(key);
  if (found != strides_memo_.end()) return found->second.strides;
  StridesOf entry{
      {sizes},
      std::make_shared<const std::vector<Expr>>(view_strides(
          sizes, meta,
          std::vector<const std::vector<Expr>*>(bases.begin(), bases.end()),
          guards_, /*hint_fallback=*/true))};
  for (const std::vector<Expr>* base : bases) entry.kept.push_back(*base);
  return strides_memo_.emplace(std::move(key), std::move(entry))
      .first->second.strides;
}

c10::SymIntNode SymbolicCapture::constant(int64_t value) {
  if (value < kFirstShared || value >= kFirstShared + kShared) return {};
  c10::SymIntNode& node = constants_[value - kFirstShared];
  if (!node) {
    node = c10::make_intrusive<CaptureSymNode>(weak_from_this(),
                                               Expr::integer(value), value,
                                               CaptureSymNode::Source());
  }
  return node;
}

at::Tensor SymbolicCapture::alias(const at::Tensor& tensor) {
  const SymbolicTensorImpl* impl = symbolic_impl(tensor);
  if (impl == nullptr) return tensor;
  return make_symbolic_tensor(weak_from_this(), impl->meta(),
                              impl->shared_size_exprs(),
                              impl->shared_stride_exprs());
}

Node* SymbolicCapture::tensor_node(const c10::TensorImpl* tensor) const {
  Node* node = node_of_tensor_(tensor);
  if (node == nullptr) {
    throw FxError(
        "make_fx (symbolic): a size of a tensor the graph does not hold "
        "was used");
  }
  return node;
}

Node* SymbolicCapture::node_of(CaptureSymNode& n) {
  if (n.node != nullptr) return n.node;
  using Kind = CaptureSymNode::Source::Kind;
  const CaptureSymNode::Source& source = n.source();
  Node::Args args;
  std::string_view target, name;
  std::string op_target;
  switch (source.kind) {
    case Kind::kSize:
    case Kind::kStride:
      name = source.kind == Kind::kSize ? "sym_size" : "sym_stride";
      target = source.kind == Kind::kSize ? "torch.ops.aten.sym_size"
                                          : "torch.ops.aten.sym_stride";
      args.push_back(tensor_node(source.tensor));
      args.push_back(source.dim);
      break;
    case Kind::kNumel:
      name = "sym_numel";
      target = "torch.ops.aten.sym_numel";
      args.push_back(tensor_node(source.tensor));
      break;
    case Kind::kOperator:
      for (const c10::SymIntNode& operand : source.operands) {
        args.push_back(argument(operand->toSymInt()));
      }
      name = source.op;
      op_target = std::string("operator.") + source.op;
      target = op_target;
      break;
    case Kind::kConstant:
      throw FxError("make_fx (symbolic): a constant has no node");
  }
  n.node = graph_.create_node(Opcode::kCallFunction, target, std::move(args),
                              {}, name);
  return n.node;
}

Argument SymbolicCapture::argument(const c10::SymInt& value) {
  CaptureSymNode* n = capture_node(value);
  if (n == nullptr) {
    if (value.is_symbolic()) {
      throw FxError("make_fx (symbolic): a symbolic int of another library");
    }
    return Argument(value.as_int_unchecked());
  }
  if (n->is_constant()) return Argument(n->hint());
  return Argument(node_of(*n));
}

void SymbolicCapture::retrack(const at::Tensor& tensor) {
  if (const SymbolicTensorImpl* impl = symbolic_impl(tensor)) {
    for (CaptureSymNode* n : impl->nodes()) n->node = nullptr;
  }
}

std::shared_ptr<sym::ShapeEnv> SymbolicCapture::shape_env() const {
  auto env = std::make_shared<sym::ShapeEnv>();
  for (const auto& [name, value] : symbols_) env->set_hint(name, value);
  for (const sym::Relation& guard : guards_.guards()) env->add_guard(guard);
  return env;
}

namespace {

Argument size_argument(const Expr& e) {
  if (std::optional<int64_t> i = e.as_integer()) return Argument(*i);
  return Argument::symint(e.str());
}

Argument sizes_argument(const std::vector<Expr>& sizes) {
  ArgumentList items;
  for (const Expr& e : sizes) items.push_back(size_argument(e));
  return Argument::list(std::move(items));
}

}  // namespace

Argument SymbolicCapture::tensor_meta(size_t i) const {
  const at::Tensor& t = examples_.at(i);
  std::string format = t.is_contiguous() ? "torch.contiguous_format"
                       : t.is_contiguous(at::MemoryFormat::ChannelsLast)
                           ? "torch.channels_last"
                           : "";
  ArgumentDict meta{
      {"shape", sizes_argument(shapes_[i].sizes)},
      {"dtype", Argument::dtype(dtype_name(t.scalar_type()))},
      {"stride", sizes_argument(shapes_[i].strides)},
      {"requires_grad", Argument(t.requires_grad())},
      {"memory_format",
       format.empty() ? Argument() : Argument::memory_format(format)}};
  return Argument::dict(std::move(meta));
}

}  // namespace fx::capture
