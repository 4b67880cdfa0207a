#include "fx_core/tracer/tracer.h"

#include <mutex>

#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/strings.h"

namespace fx {

const Value PH = Value::placeholder_marker();

namespace {

thread_local Tracer* g_current_tracer = nullptr;

// ---------------------------------------------------------- signatures

Argument parse_literal(std::string_view text, std::string_view signature) {
  if (text == "None") return Argument();
  if (text == "True") return Argument(true);
  if (text == "False") return Argument(false);
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
      text.back() == text.front()) {
    return Argument(std::string(text.substr(1, text.size() - 2)));
  }
  std::string s(text);
  char* end = nullptr;
  long long i = std::strtoll(s.c_str(), &end, 10);
  if (end != s.c_str() && *end == '\0') return Argument(int64_t{i});
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() && *end == '\0') return Argument(d);
  throw FxError(cat("forward signature '", signature,
                    "': unsupported default value '", text, "'"));
}

}  // namespace

ForwardSignature ForwardSignature::parse(std::string_view text) {
  ForwardSignature sig;
  std::string_view params = text;
  size_t arrow = std::string_view::npos;
  {
    int depth = 0;
    for (size_t i = 0; i + 1 < text.size(); ++i) {
      if (text[i] == '[' || text[i] == '(') ++depth;
      if (text[i] == ']' || text[i] == ')') --depth;
      if (depth == 0 && text[i] == '-' && text[i + 1] == '>') {
        arrow = i;
        break;
      }
    }
  }
  if (arrow != std::string_view::npos) {
    sig.return_type = std::string(strip(text.substr(arrow + 2)));
    params = text.substr(0, arrow);
  }
  for (std::string_view p : split_top_level(params)) {
    if (p.empty()) {
      throw FxError(cat("forward signature '", text, "': empty parameter"));
    }
    ForwardParam param;
    std::string_view rest = p;
    size_t eq = std::string_view::npos;
    {
      int depth = 0;
      for (size_t i = 0; i < rest.size(); ++i) {
        if (rest[i] == '[' || rest[i] == '(') ++depth;
        if (rest[i] == ']' || rest[i] == ')') --depth;
        if (depth == 0 && rest[i] == '=') {
          eq = i;
          break;
        }
      }
    }
    if (eq != std::string_view::npos) {
      param.default_value = parse_literal(strip(rest.substr(eq + 1)), text);
      rest = strip(rest.substr(0, eq));
    }
    size_t colon = rest.find(':');
    if (colon != std::string_view::npos) {
      param.type = std::string(strip(rest.substr(colon + 1)));
      rest = strip(rest.substr(0, colon));
    }
    if (!is_python_identifier(rest)) {
      throw FxError(cat("forward signature '", text, "': '", rest,
                        "' is not a parameter name"));
    }
    param.name = std::string(rest);
    if (param.name == "self" && sig.params.empty() && param.type.empty()) {
      continue;
    }
    sig.params.push_back(std::move(param));
  }
  return sig;
}

// ---------------------------------------------------------------- modules

TraceableModule::TraceableModule(std::string signature)
    : signature_text_(std::move(signature)) {}

TraceableModule::TraceableModule(std::string signature, std::string module_name)
    : torch::nn::Module(std::move(module_name)),
      signature_text_(std::move(signature)) {}

TraceableModule::~TraceableModule() = default;

const ForwardSignature& TraceableModule::signature() const {
  if (!signature_) {
    auto sig = std::make_unique<ForwardSignature>();
    if (!signature_text_.empty()) {
      *sig = ForwardSignature::parse(signature_text_);
    } else if (forward_arity() == 1) {
      sig->params.push_back(ForwardParam{"x", "", std::nullopt});
    } else if (forward_arity() > 1) {
      throw FxError(cat(name(), ".forward takes ", forward_arity(),
                        " parameters: name them in the module's signature, "
                        "e.g. fx::Module<M>(\"x, y\")"));
    }
    signature_ = std::move(sig);
  }
  return *signature_;
}

Value TraceableModule::attr(const at::Tensor& tensor) const {
  if (Tracer* t = Tracer::current()) {
    if (std::optional<Value> p = t->parameter_proxy(tensor)) return *p;
  }
  return Value(tensor);
}

namespace detail {

void wrong_arity(std::string_view module, size_t want, size_t got) {
  throw FxError(cat(module, ".forward() takes ", want,
                    " positional arguments but ", got, " were given"));
}

void traced_concrete_param(const TraceableModule& m, size_t index,
                           const Value& v) {
  const ForwardSignature& sig = m.signature();
  std::string name =
      index < sig.params.size() ? sig.params[index].name : cat("#", index);
  throw TraceError(
      cat("symbolically traced variables cannot be used as inputs to "
          "control flow\n    ",
          m.name(), ".forward's parameter '", name,
          "' is a C++ value, not an fx::Value; specialise it with "
          "concrete_args={{\"",
          name, "\", ...}} (traced value: ", v.node()->name(), ")"));
}

Value forward_erased(torch::nn::Module& m, const std::vector<Value>& args,
                     const std::vector<Kwarg>& kwargs) {
  if (auto* traceable = dynamic_cast<TraceableModule*>(&m)) {
    if (!kwargs.empty()) {
      throw FxError(cat(m.name(),
                        ".forward: keyword arguments are not supported for "
                        "fx::Module calls"));
    }
    return traceable->call_forward(args);
  }
  if (auto* seq = dynamic_cast<torch::nn::SequentialImpl*>(&m)) {
    return call_sequential(*seq, CallArgs{args, kwargs});
  }
  if (dynamic_cast<torch::nn::ModuleListImpl*>(&m) != nullptr ||
      dynamic_cast<torch::nn::ModuleDictImpl*>(&m) != nullptr) {
    throw FxError(cat("Module [", m.name(),
                      "] is missing the required \"forward\" function"));
  }
  CallArgs call{args, kwargs};
  if (Tracer* t = find_tracer(call)) {
    (void)t;
    throw TraceError(cat(
        "cannot trace through module ", m.name(),
        ": its forward is LibTorch C++ code on real tensors, so it must be a "
        "leaf module (Tracer::is_leaf_module returned false for it)"));
  }
  std::vector<c10::IValue> values;
  values.reserve(args.size());
  for (const Value& v : args) values.push_back(v.to_ivalue());
  std::vector<std::pair<std::string, c10::IValue>> kw;
  for (const Kwarg& k : kwargs) {
    kw.emplace_back(std::string(k.name), k.value.to_ivalue());
  }
  return Value(fx::call_module(m, m.name(), std::move(values), kw));
}

Value call_sequential(torch::nn::SequentialImpl& seq, const CallArgs& call) {
  auto chain = [&seq](const std::vector<Value>& args,
                      const std::vector<Kwarg>& kwargs) -> Value {
    if (args.size() != 1 || !kwargs.empty()) {
      throw FxError(cat("Sequential.forward() takes 1 positional argument but ",
                        args.size() + kwargs.size(), " were given"));
    }
    Value v = args[0];
    for (const std::shared_ptr<torch::nn::Module>& child : seq.children()) {
      v = fx::call(child, v);
    }
    return v;
  };
  if (Tracer* t = Tracer::current()) {
    return t->call_module(seq, chain, call.args, call.kwargs);
  }
  if (call.args.size() != 1 || !call.kwargs.empty()) {
    return chain(call.args, call.kwargs);  // raises Python's error
  }
  // Eagerly, LibTorch children run through their own forward.
  Value v = call.args[0];
  for (torch::nn::AnyModule& child : seq) {
    torch::nn::Module& m = *child.ptr();
    if (auto* traceable = dynamic_cast<TraceableModule*>(&m)) {
      v = traceable->call_forward({v});
    } else if (v.is_tensor()) {
      v = child.forward(v.tensor());
    } else {
      v = fx::call(child.ptr(), v);
    }
  }
  return v;
}

}  // namespace detail

Value SequentialImpl::forward(Value x) {
  bool eager = Tracer::current() == nullptr;
  size_t i = 0;
  for (const std::shared_ptr<torch::nn::Module>& child : children()) {
    if (eager && x.is_tensor() && i < eager_.size() && !eager_[i].is_empty()) {
      x = eager_[i].forward(x.tensor());
    } else {
      x = fx::call(child, x);
    }
    ++i;
  }
  return x;
}

// ----------------------------------------------------------------- leaves

namespace {

struct LeafTypes {
  std::mutex mutex;
  absl::flat_hash_set<std::type_index> types;
};

LeafTypes& leaf_types() {
  static LeafTypes* types = new LeafTypes();
  return *types;
}

std::string memory_format_name(int64_t f) {
  switch (static_cast<c10::MemoryFormat>(f)) {
    case c10::MemoryFormat::Contiguous:
      return "torch.contiguous_format";
    case c10::MemoryFormat::ChannelsLast:
      return "torch.channels_last";
    case c10::MemoryFormat::ChannelsLast3d:
      return "torch.channels_last_3d";
    default:
      return "torch.preserve_format";
  }
}

}  // namespace

void register_leaf_module(std::type_index type) {
  LeafTypes& t = leaf_types();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.types.insert(type);
}

bool is_registered_leaf_module(const torch::nn::Module& m) {
  LeafTypes& t = leaf_types();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (t.types.empty()) return false;
  return t.types.contains(std::type_index(typeid(m)));
}

// ----------------------------------------------------------------- Tracer

class ActiveTracer {
 public:
  explicit ActiveTracer(Tracer* t) : saved_(g_current_tracer) {
    g_current_tracer = t;
  }
  ~ActiveTracer() { g_current_tracer = saved_; }

 private:
  Tracer* saved_;
};

Tracer::Tracer() = default;
Tracer::~Tracer() = default;

Tracer* Tracer::current() { return g_current_tracer; }

GraphAppendingTracer::GraphAppendingTracer(Graph& graph) {
  target_graph_ = &graph;
}

bool Tracer::should_autowrap(std::string_view target) const {
  for (const std::string& f : autowrap_functions) {
    if (f == target) return true;
  }
  size_t dot = target.rfind('.');
  if (dot == std::string_view::npos) return false;
  std::string_view module = target.substr(0, dot);
  for (const std::string& m : autowrap_modules) {
    if (m == module) return true;
  }
  return false;
}

namespace {

// forward's signature must name its parameters, and concrete_args only
// those.
void check_forward_args(const TraceableModule& root,
                        const ForwardSignature& sig,
                        const ConcreteArgs& concrete_args) {
  if (sig.params.size() != root.forward_arity()) {
    throw FxError(cat(root.name(), ".forward takes ", root.forward_arity(),
                      " parameters but its signature names ",
                      sig.params.size()));
  }
  for (const auto& [name, value] : concrete_args) {
    bool known = false;
    for (const ForwardParam& p : sig.params) known = known || p.name == name;
    if (!known) {
      throw FxError(cat("concrete_args: ", root.name(),
                        ".forward has no parameter '", name, "'"));
    }
  }
}

}  // namespace

std::unique_ptr<Graph> Tracer::trace(TraceableModule& root,
                                     const ConcreteArgs& concrete_args) {
  graph_ = std::make_unique<Graph>();
  target_graph_ = graph_.get();
  root_ = &root;
  module_paths_.clear();
  tensor_attrs_.clear();
  tensor_constants_.clear();
  // include_self would need root in a shared_ptr; a module on the stack is
  // fine to trace.
  module_paths_.emplace(&root, "");
  for (const auto& item : root.named_modules("", /*include_self=*/false)) {
    module_paths_.emplace(item.value().get(), item.key());
  }
  for (const auto& item : root.named_parameters(/*recurse=*/true)) {
    tensor_attrs_.emplace(item.value().unsafeGetTensorImpl(),
                          TensorAttr{item.key(), true, nullptr});
  }
  for (const auto& item : root.named_buffers(/*recurse=*/true)) {
    tensor_attrs_.emplace(item.value().unsafeGetTensorImpl(),
                          TensorAttr{item.key(), false, nullptr});
  }
  std::string class_name = root.name();
  size_t colon = class_name.rfind("::");
  if (colon != std::string::npos) class_name = class_name.substr(colon + 2);
  module_context_ = cat(class_name, ".forward");

  ActiveTracer active(this);
  const ForwardSignature& sig = root.signature();
  check_forward_args(root, sig, concrete_args);
  std::vector<Value> args;
  args.reserve(sig.params.size());
  for (const ForwardParam& p : sig.params) {
    const Value* concrete = nullptr;
    for (const auto& [name, value] : concrete_args) {
      if (name == p.name) concrete = &value;
    }
    bool substituted = false;
    args.push_back(placeholder_for(p, concrete, &substituted));
  }
  Value out = root.call_forward(args);
  Node::Args output_args;
  output_args.push_back(create_arg(out));
  create_node(Opcode::kOutput, "output", std::move(output_args), {},
              std::nullopt, sig.return_type);
  root_ = nullptr;
  target_graph_ = nullptr;
  return std::move(graph_);
}

Value Tracer::placeholder_for(const ForwardParam& p, const Value* concrete,
                              bool* substituted) {
  Node::Args defaults;
  if (p.default_value) defaults.push_back(*p.default_value);
  if (concrete == nullptr) {
    Node* n = create_node(Opcode::kPlaceholder, p.name, std::move(defaults), {},
                          std::nullopt, p.type);
    for (const auto& [name, shape] : placeholder_shapes) {
      if (name != p.name) continue;
      ArgumentList dims;
      for (int64_t d : shape) dims.push_back(Argument(d));
      n->set_meta("shape", Argument::list(std::move(dims)));
    }
    return Value(Proxy{n, this});
  }
  // torch.fx: a specialised parameter keeps a placeholder `name_1` and
  // asserts at run time that it gets the value it was specialised to.
  std::string name = cat(p.name, "_1");
  Node* n = create_node(Opcode::kPlaceholder, name, std::move(defaults), {},
                        std::nullopt, {});
  Value out(Proxy{n, this});
  if (concrete->kind() == Value::Kind::kPlaceholder) return out;
  *substituted = true;
  if (concrete->is_none()) {
    create_proxy(Opcode::kCallFunction,
                 "torch.fx._symbolic_trace._assert_is_none",
                 {out, Value(cat(p.name,
                                 " has been specialized to have value None "
                                 "but got another value"))},
                 {});
  } else if (!concrete->is_tensor() &&
             (concrete->kind() == Value::Kind::kConstant ||
              concrete->kind() == Value::Kind::kDtype ||
              concrete->kind() == Value::Kind::kMemoryFormat) &&
             !concrete->ivalue().isGenericDict() &&
             !is_sequence(concrete->ivalue())) {
    Value eq = out == *concrete;
    create_proxy(
        Opcode::kCallFunction, "torch._assert",
        {eq, Value(cat(p.name, " has been specialized to have value ",
                       str(create_arg(*concrete)), " but got another value"))},
        {});
  }
  return *concrete;
}

bool Tracer::is_leaf_module(const torch::nn::Module& m,
                            std::string_view module_qualified_name) const {
  (void)module_qualified_name;
  if (is_registered_leaf_module(m)) return true;
  if (dynamic_cast<const TraceableModule*>(&m) != nullptr) return false;
  if (dynamic_cast<const torch::nn::SequentialImpl*>(&m) != nullptr ||
      dynamic_cast<const torch::nn::ModuleListImpl*>(&m) != nullptr ||
      dynamic_cast<const torch::nn::ModuleDictImpl*>(&m) != nullptr) {
    return false;
  }
  return true;
}

std::string Tracer::path_of_module(const torch::nn::Module& m) const {
  auto it = module_paths_.find(&m);
  if (it == module_paths_.end()) {
    throw FxError(
        cat("module is not installed as a submodule (", m.name(), ")"));
  }
  return it->second;
}

Value Tracer::call_module(torch::nn::Module& m, const ModuleForward& forward,
                          const std::vector<Value>& args,
                          const std::vector<Kwarg>& kwargs) {
  std::string path = path_of_module(m);
  if (!is_leaf_module(m, path)) {
    std::string saved = module_context_;
    std::string class_name = m.name();
    size_t colon = class_name.rfind("::");
    if (colon != std::string::npos) class_name = class_name.substr(colon + 2);
    module_context_ = cat("'", path, "' (", class_name, ").forward");
    Value out = forward(args, kwargs);
    module_context_ = std::move(saved);
    return out;
  }
  return create_proxy(Opcode::kCallModule, path, args, kwargs);
}

Node* Tracer::create_node(Opcode op, std::string_view target, Node::Args args,
                          Node::Kwargs kwargs,
                          std::optional<std::string_view> name,
                          std::string_view type) {
  if (target_graph_ == nullptr) {
    throw FxError("Tracer::create_node: the tracer is not tracing");
  }
  return target_graph_->create_node(op, target, std::move(args),
                                    std::move(kwargs), name, type);
}

Value Tracer::create_proxy(Opcode op, std::string_view target,
                           const std::vector<Value>& args,
                           const std::vector<Kwarg>& kwargs,
                           std::optional<std::string_view> name,
                           std::string_view type) {
  Node::Args a;
  a.reserve(args.size());
  for (const Value& v : args) a.push_back(create_arg(v));
  Node::Kwargs k;
  if (!kwargs.empty()) {
    k.reserve(kwargs.size());
    for (const Kwarg& kw : kwargs) {
      k.emplace_back(std::string(kw.name), create_arg(kw.value));
    }
  }
  Node* n = create_node(op, target, std::move(a), std::move(k), name, type);
  return Value(Proxy{n, this});
}

namespace {

// The first _tensor_constantN, N from `first`, that names none of
// `tensor_attrs` (the tracer's tensor -> attribute map).
template <typename TensorAttrs>
std::string tensor_constant_name(const TensorAttrs& tensor_attrs,
                                 size_t first) {
  std::string name;
  for (size_t i = first;; ++i) {
    name = cat("_tensor_constant", i);
    bool taken = false;
    for (const auto& [path, attr] : tensor_attrs) {
      taken = taken || attr.name == name;
    }
    if (!taken) break;
  }
  return name;
}

}  // namespace

Argument Tracer::create_arg(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kProxy:
      return Argument(v.node());
    case Value::Kind::kList:
    case Value::Kind::kTuple: {
      ArgumentList items;
      items.reserve(v.items().size());
      for (const Value& item : v.items()) items.push_back(create_arg(item));
      return v.kind() == Value::Kind::kList ? Argument::list(std::move(items))
                                            : Argument::tuple(std::move(items));
    }
    case Value::Kind::kSlice:
      return Argument::slice(create_arg(v.items()[0]), create_arg(v.items()[1]),
                             create_arg(v.items()[2]));
    case Value::Kind::kEllipsis:
      return Argument::ellipsis();
    case Value::Kind::kDtype:
      return Argument::dtype(
          dtype_name(static_cast<c10::ScalarType>(v.ivalue().toInt())));
    case Value::Kind::kMemoryFormat:
      return Argument::memory_format(memory_format_name(v.ivalue().toInt()));
    case Value::Kind::kPlaceholder:
      throw FxError("fx::PH only stands for a placeholder in concrete_args");
    case Value::Kind::kConstant:
      break;
  }
  const c10::IValue& iv = v.ivalue();
  if (!iv.isTensor()) return constant_argument(iv);
  if (root_ == nullptr) {
    // torch.fx's TracerBase.create_arg: no module to hold a tensor.
    throw FxError("argument of type: Tensor");
  }
  const at::Tensor& t = iv.toTensor();
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  auto it = tensor_attrs_.find(impl);
  if (it != tensor_attrs_.end()) {
    TensorAttr& attr = it->second;
    if (attr.is_parameter) {
      // torch.fx's parameter proxy cache: one get_attr per parameter.
      if (attr.cached == nullptr || attr.cached->erased()) {
        attr.cached = create_node(Opcode::kGetAttr, attr.name, {}, {});
      }
      return Argument(attr.cached);
    }
    return Argument(create_node(Opcode::kGetAttr, attr.name, {}, {}));
  }
  // A tensor that is no attribute of root: stow it away as
  // _tensor_constantN.
  std::string name =
      tensor_constant_name(tensor_attrs_, tensor_constants_.size());
  tensor_constants_.emplace_back(name, t);
  tensor_attrs_.emplace(impl, TensorAttr{name, false, nullptr});
  return Argument(create_node(Opcode::kGetAttr, name, {}, {}));
}

std::optional<Value> Tracer::parameter_proxy(const at::Tensor& tensor) {
  if (!tensor.defined()) return std::nullopt;
  auto it = tensor_attrs_.find(tensor.unsafeGetTensorImpl());
  if (it == tensor_attrs_.end() || !it->second.is_parameter) {
    return std::nullopt;
  }
  return Value(Proxy{create_arg(Value(tensor)).as_node(), this});
}

bool Tracer::to_bool(const Value& proxy) {
  throw TraceError(cat(
      "symbolically traced variables cannot be used as inputs to control "
      "flow\n    the condition: ",
      proxy.node()->format_node(), "\n    while tracing ", module_context_));
}

void Tracer::iter(const Value& proxy, const char* file, int line) {
  throw TraceError(
      cat("Proxy object cannot be iterated. This can be attempted when the "
          "Proxy is used in a loop or as a *args or **kwargs function "
          "argument. See the torch.fx docs on pytorch.org for a more detailed "
          "explanation of what types of control flow can be traced, and "
          "check out the Proxy docstring for help troubleshooting Proxy "
          "iteration errors\n    at ",
          file, ":", line, ", iterating ", proxy.node()->format_node(),
          "\n    while tracing ", module_context_));
}

// ------------------------------------------------------- symbolic_trace

std::shared_ptr<GraphModule> symbolic_trace(TraceableModule& root,
                                            const ConcreteArgs& concrete_args,
                                            Tracer* tracer,
                                            std::string class_name) {
  std::unique_ptr<Tracer> owned;
  if (tracer == nullptr) {
    owned = std::make_unique<Tracer>();
    tracer = owned.get();
  }
  std::unique_ptr<Graph> graph = tracer->trace(root, concrete_args);
  if (class_name.empty()) {
    class_name = root.name();
    size_t colon = class_name.rfind("::");
    if (colon != std::string::npos) class_name = class_name.substr(colon + 2);
  }
  if (tracer->tensor_constants().empty()) {
    return std::make_shared<GraphModule>(root, std::move(graph), class_name);
  }
  GraphModule::AttributeMap attrs;
  absl::flat_hash_set<std::string> seen;
  for (Node* n : graph->nodes()) {
    if (n->op() != Opcode::kGetAttr && n->op() != Opcode::kCallModule) {
      continue;
    }
    if (!seen.insert(n->target()).second) continue;
    GraphModule::Attribute a;
    bool found = false;
    for (const auto& [name, t] : tracer->tensor_constants()) {
      if (name == n->target()) {
        a.tensor = t;
        found = true;
      }
    }
    if (!found) {
      if (n->op() == Opcode::kCallModule) {
        a.module = submodule_at(root, n->target());
      } else if (auto t = tensor_at(root, n->target())) {
        a.tensor = t->tensor;
        a.is_parameter = t->is_parameter;
      } else {
        a.module = submodule_at(root, n->target());
      }
    }
    attrs.emplace_back(n->target(), std::move(a));
  }
  return std::make_shared<GraphModule>(attrs, std::move(graph), class_name);
}

}  // namespace fx
