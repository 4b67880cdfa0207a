#include "fx_core/capture/composite_replay.h"

#include <c10/core/GradMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <atomic>
#include <utility>

#include "fx_core/capture/symbolic_tensor.h"
#include "fx_core/capture/value_identity.h"

namespace fx::capture {

using Kind = CaptureSymNode::Source::Kind;

// A symbolic int of the inner call: one of the call's own, a size of one of
// its tensors, a constant, or arithmetic made by the kernel.
struct Step {
  enum class From { kSlot, kTensor, kConstant, kOperator };
  From from = From::kConstant;
  size_t index = 0;          // kSlot: the call's symbolic int; kTensor
  Kind kind = Kind::kSize;   // kTensor: kSize, kStride or kNumel
  int64_t dim = 0;           // kTensor
  const char* op = nullptr;  // kOperator
  size_t a = 0, b = 0;       // kOperator: operand steps
  sym::Expr expr;            // kOperator
  int64_t hint = 0;          // kConstant, kOperator
};

// One argument of the inner call.
struct Arg {
  enum class From { kValue, kTensor, kSym, kList };
  From from = From::kValue;
  c10::IValue value;          // kValue
  size_t index = 0;           // kTensor: the call's tensor; kSym: the step
  std::vector<Arg> items;     // kList
  c10::TypePtr element_type;  // kList
};

struct CompositeReplay::Recipe {
  c10::OperatorHandle inner;
  std::vector<Arg> args;
  std::vector<Step> steps;
};

CompositeReplay::~CompositeReplay() = default;

namespace {
std::atomic<bool> replay_enabled{true};
std::atomic<uint64_t> replay_count{0};
}  // namespace

void CompositeReplay::set_enabled(bool enabled) { replay_enabled = enabled; }

bool CompositeReplay::enabled() { return replay_enabled; }

uint64_t CompositeReplay::replayed() { return replay_count; }

namespace {

// The tensors and symbolic ints of a call, in the order of its arguments
// (lists flattened); a tensor or int passed twice is there twice.
struct Objects {
  absl::InlinedVector<const c10::IValue*, 4> tensors;
  absl::InlinedVector<CaptureSymNode*, 8> slots;

  // False on a defined tensor that is not symbolic.
  bool collect(const c10::IValue& v) {
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (!t.defined()) return true;
      if (symbolic_impl(t) == nullptr) return false;
      tensors.push_back(&v);
      return true;
    }
    if (v.isSymInt()) {
      if (CaptureSymNode* n = capture_node(v.toSymInt())) slots.push_back(n);
      return true;
    }
    if (v.isList()) {
      for (const c10::IValue& item : v.toListRef()) {
        if (!collect(item)) return false;
      }
    }
    return true;
  }

  std::optional<size_t> tensor_index(const c10::TensorImpl* impl) const {
    for (size_t k = 0; k < tensors.size(); ++k) {
      if (tensors[k]->toTensor().unsafeGetTensorImpl() == impl) return k;
    }
    return std::nullopt;
  }

  std::optional<size_t> slot_index(const CaptureSymNode* n) const {
    for (size_t j = 0; j < slots.size(); ++j) {
      if (slots[j] == n) return j;
    }
    return std::nullopt;
  }

  // A size, stride or numel of one of the call's tensors: its tensor.
  std::optional<size_t> owning_tensor(const CaptureSymNode& n) const {
    const Kind kind = n.source().kind;
    if (kind != Kind::kSize && kind != Kind::kStride && kind != Kind::kNumel) {
      return std::nullopt;
    }
    return tensor_index(n.source().tensor);
  }
};

intptr_t identity(const sym::Expr& e) {
  return reinterpret_cast<intptr_t>(&e.node());
}

// Appends `v` to the key; false for what the key does not cover.
class KeyBuilder {
 public:
  KeyBuilder(const Objects& objects, CompositeReplay::Key* key)
      : objects_(objects), key_(key) {}

  bool append(const c10::IValue& v) {
    return append_value_identity(
        v, key_, [this](const at::Tensor& t) { return append_tensor(t); },
        [this](const CaptureSymNode& n) { return append_node(n); });
  }

 private:
  void push(intptr_t x) { key_->push_back(x); }

  bool append_tensor(const at::Tensor& t) {
    if (!t.defined()) return push(kFirstCallerTag), true;
    const SymbolicTensorImpl* impl = symbolic_impl(t);
    push(kFirstCallerTag + 1);
    push(static_cast<intptr_t>(*objects_.tensor_index(impl)));
    push(static_cast<intptr_t>(t.scalar_type()));
    push(static_cast<intptr_t>(impl->key_set().raw_repr()));
    push(t.requires_grad());
    push(static_cast<intptr_t>(impl->meta().storage_offset()));
    push(static_cast<intptr_t>(impl->size_exprs().size()));
    for (const sym::Expr& e : impl->size_exprs()) push(identity(e));
    for (const sym::Expr& e : impl->stride_exprs()) push(identity(e));
    return true;
  }

  bool append_node(const CaptureSymNode& n) {
    // A constant is recorded as its value, an arithmetic node as a node.
    push(kFirstCallerTag + (n.is_constant() ? 2 : 3));
    push(identity(n.expr()));
    // Which earlier symbolic int is the same node (itself: a new index).
    size_t same = seen_;
    for (size_t j = 0; j < seen_; ++j) {
      if (objects_.slots[j] == &n) {
        same = j;
        break;
      }
    }
    push(static_cast<intptr_t>(same));
    ++seen_;
    std::optional<size_t> tensor = objects_.owning_tensor(n);
    push(tensor ? static_cast<intptr_t>(*tensor) : -1);
    if (tensor) {
      push(static_cast<intptr_t>(n.source().kind));
      push(static_cast<intptr_t>(n.source().dim));
    }
    return true;
  }

  const Objects& objects_;
  CompositeReplay::Key* key_;
  size_t seen_ = 0;
};

// Builds a recipe's steps and arguments from the inner call's arguments.
class RecipeBuilder {
 public:
  RecipeBuilder(const Objects& objects, std::vector<Step>* steps)
      : objects_(objects), steps_(steps) {}

  std::optional<Arg> arg(const c10::IValue& v) {
    Arg out;
    if (v.isTensor()) {
      if (!v.toTensor().defined()) return value(v);
      std::optional<size_t> k =
          objects_.tensor_index(v.toTensor().unsafeGetTensorImpl());
      if (!k) return std::nullopt;
      out.from = Arg::From::kTensor;
      out.index = *k;
      return out;
    }
    if (v.isSymInt()) {
      CaptureSymNode* n = capture_node(v.toSymInt());
      if (n == nullptr) return value(v);
      if (n->is_constant()) return value(c10::IValue(n->hint()));
      std::optional<size_t> step = step_for(*n);
      if (!step) return std::nullopt;
      out.from = Arg::From::kSym;
      out.index = *step;
      return out;
    }
    if (v.isList()) {
      out.from = Arg::From::kList;
      out.element_type = v.toList().elementType();
      for (const c10::IValue& item : v.toListRef()) {
        std::optional<Arg> a = arg(item);
        if (!a) return std::nullopt;
        out.items.push_back(std::move(*a));
      }
      return out;
    }
    if (v.isNone() || v.isInt() || v.isDouble() || v.isBool() || v.isString() ||
        v.isDevice()) {
      return value(v);
    }
    return std::nullopt;
  }

 private:
  static Arg value(const c10::IValue& v) {
    Arg out;
    out.value = v;
    return out;
  }

  std::optional<size_t> step_for(CaptureSymNode& n) {
    auto found = steps_of_.find(&n);
    if (found != steps_of_.end()) return found->second;
    Step step;
    if (n.is_constant()) {
      step.hint = n.hint();
    } else if (std::optional<size_t> j = objects_.slot_index(&n)) {
      step.from = Step::From::kSlot;
      step.index = *j;
    } else if (std::optional<size_t> k = objects_.owning_tensor(n)) {
      step.from = Step::From::kTensor;
      step.index = *k;
      step.kind = n.source().kind;
      step.dim = n.source().dim;
    } else if (n.source().kind == Kind::kOperator) {
      std::optional<size_t> a = operand(n, 0), b = operand(n, 1);
      if (!a || !b) return std::nullopt;
      step.from = Step::From::kOperator;
      step.op = n.source().op;
      step.a = *a;
      step.b = *b;
      step.expr = n.expr();
      step.hint = n.hint();
    } else {
      return std::nullopt;  // a size of a tensor the call does not hold
    }
    steps_->push_back(std::move(step));
    steps_of_.emplace(&n, steps_->size() - 1);
    return steps_->size() - 1;
  }

  std::optional<size_t> operand(const CaptureSymNode& n, size_t i) {
    CaptureSymNode* operand = capture_node(n.source().operands[i]->toSymInt());
    if (operand == nullptr) return std::nullopt;
    return step_for(*operand);
  }

  const Objects& objects_;
  std::vector<Step>* steps_;
  absl::flat_hash_map<const CaptureSymNode*, size_t> steps_of_;
};

}  // namespace

bool CompositeReplay::key_of(const c10::FunctionSchema& schema,
                             c10::ArrayRef<c10::IValue> args, Key* key) const {
  Objects objects;
  for (const c10::IValue& v : args) {
    if (!objects.collect(v)) return false;
  }
  if (objects.slots.empty() && objects.tensors.empty()) return false;
  c10::impl::LocalDispatchKeySet tls = c10::impl::tls_local_dispatch_key_set();
  key->push_back(reinterpret_cast<intptr_t>(&schema));
  key->push_back(c10::GradMode::is_enabled());
  key->push_back(static_cast<intptr_t>(tls.included_.raw_repr()));
  key->push_back(static_cast<intptr_t>(tls.excluded_.raw_repr()));
  KeyBuilder builder(objects, key);
  for (const c10::IValue& v : args) {
    if (!builder.append(v)) return false;
  }
  return true;
}

const CompositeReplay::Recipe* CompositeReplay::find(const Key& key,
                                                     bool* known) const {
  auto found = recipes_.find(key);
  *known = found != recipes_.end();
  return *known ? found->second.recipe.get() : nullptr;
}

namespace {

// The expressions a key of a call with `args` names.
std::vector<sym::Expr> key_expressions(c10::ArrayRef<c10::IValue> args) {
  Objects objects;
  for (const c10::IValue& v : args) objects.collect(v);
  std::vector<sym::Expr> kept;
  for (const c10::IValue* t : objects.tensors) {
    const SymbolicTensorImpl* impl = symbolic_impl(t->toTensor());
    for (const auto* exprs : {&impl->size_exprs(), &impl->stride_exprs()}) {
      kept.insert(kept.end(), exprs->begin(), exprs->end());
    }
  }
  for (const CaptureSymNode* n : objects.slots) kept.push_back(n->expr());
  return kept;
}

}  // namespace

void CompositeReplay::refuse(Key key, c10::ArrayRef<c10::IValue> args) {
  recipes_.emplace(std::move(key), Entry{nullptr, key_expressions(args)});
}

void CompositeReplay::learn(Key key, c10::ArrayRef<c10::IValue> args,
                            const c10::OperatorHandle& inner,
                            c10::ArrayRef<c10::IValue> inner_args) {
  Objects objects;
  for (const c10::IValue& v : args) objects.collect(v);
  auto recipe = std::make_shared<Recipe>(Recipe{inner, {}, {}});
  RecipeBuilder builder(objects, &recipe->steps);
  for (const c10::IValue& v : inner_args) {
    std::optional<Arg> a = builder.arg(v);
    if (!a) return refuse(std::move(key), args);
    recipe->args.push_back(std::move(*a));
  }
  recipes_.emplace(std::move(key),
                   Entry{std::move(recipe), key_expressions(args)});
}

const c10::OperatorHandle& CompositeReplay::inner(const Recipe& recipe) const {
  return recipe.inner;
}

namespace {

c10::SymIntNode symbolic_node(const c10::SymInt& s) {
  TORCH_INTERNAL_ASSERT(s.is_symbolic(), "a replayed size is not symbolic");
  return s.toSymIntNodeImpl();
}

c10::SymIntNode tensor_int(const at::Tensor& t, Kind kind, int64_t dim) {
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  if (kind == Kind::kNumel) return symbolic_node(impl->sym_numel());
  const size_t d = static_cast<size_t>(dim);
  return symbolic_node(kind == Kind::kSize ? impl->sym_sizes()[d]
                                           : impl->sym_strides()[d]);
}

c10::IValue build_arg(const Arg& arg, const Objects& objects,
                      const std::vector<c10::SymIntNode>& made) {
  switch (arg.from) {
    case Arg::From::kValue:
      return arg.value;
    case Arg::From::kTensor:
      return *objects.tensors[arg.index];
    case Arg::From::kSym:
      return c10::IValue(c10::SymInt::toSymInt(made[arg.index]));
    case Arg::From::kList: {
      c10::impl::GenericList list(arg.element_type);
      list.reserve(arg.items.size());
      for (const Arg& item : arg.items) {
        list.push_back(build_arg(item, objects, made));
      }
      return list;
    }
  }
  return c10::IValue();
}

}  // namespace

std::vector<c10::IValue> CompositeReplay::instantiate(
    const Recipe& recipe, c10::ArrayRef<c10::IValue> args) const {
  Objects objects;
  for (const c10::IValue& v : args) objects.collect(v);
  std::shared_ptr<SymNodeOwner> owner = owner_.lock();
  TORCH_CHECK(owner != nullptr, "fx::make_fx: a replay after its capture");
  std::vector<c10::SymIntNode> made;
  made.reserve(recipe.steps.size());
  for (const Step& step : recipe.steps) {
    switch (step.from) {
      case Step::From::kSlot:
        made.push_back(
            c10::SymIntNode::reclaim_copy(objects.slots[step.index]));
        break;
      case Step::From::kTensor:
        made.push_back(tensor_int(objects.tensors[step.index]->toTensor(),
                                  step.kind, step.dim));
        break;
      case Step::From::kConstant: {
        c10::SymIntNode node = owner->constant(step.hint);
        if (!node) {
          node = c10::make_intrusive<CaptureSymNode>(
              owner_, sym::Expr::integer(step.hint), step.hint,
              CaptureSymNode::Source());
        }
        made.push_back(std::move(node));
        break;
      }
      case Step::From::kOperator: {
        CaptureSymNode::Source source;
        source.kind = Kind::kOperator;
        source.op = step.op;
        source.operands = {made[step.a], made[step.b]};
        made.push_back(c10::make_intrusive<CaptureSymNode>(
            owner_, step.expr, step.hint, std::move(source)));
        break;
      }
    }
  }
  replay_count.fetch_add(1, std::memory_order_relaxed);
  std::vector<c10::IValue> out;
  out.reserve(recipe.args.size());
  for (const Arg& arg : recipe.args) {
    out.push_back(build_arg(arg, objects, made));
  }
  return out;
}

}  // namespace fx::capture
