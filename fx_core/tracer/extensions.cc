#include "fx_core/tracer/extensions.h"

#include <map>
#include <mutex>

#include "fx_core/runtime/module_registry.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

struct Registries {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<ShapeFunction>, std::less<>> shapes;
  std::map<std::string, TracerFactory, std::less<>> policies;
};

Registries& registries() {
  static Registries* r = new Registries();
  return *r;
}

// The shape a traced value carries in its node's meta "shape", if any.
bool shape_of(const Value& v, std::vector<int64_t>* shape) {
  if (v.is_tensor()) {
    *shape = v.tensor().sizes().vec();
    return true;
  }
  if (!v.is_proxy()) return false;
  const Argument* meta = v.node()->meta_value("shape");
  if (meta == nullptr || !meta->is_sequence()) return false;
  shape->clear();
  for (const Argument& d : meta->elements()) shape->push_back(d.as_int());
  return true;
}

}  // namespace

Value CustomOp::call(CallArgs args) const {
  Tracer* t = find_tracer(args);
  if (t == nullptr) return run_eager(Opcode::kCallFunction, target_, args);
  Value out =
      t->create_proxy(Opcode::kCallFunction, target_, args.args, args.kwargs);
  if (const ShapeFunction* fn = find_shape_function(target_)) {
    ShapeArgs in;
    in.call = &args;
    bool known = true;
    for (const Value& v : args.args) {
      if (!v.is_tensor() && !v.is_proxy()) continue;
      std::vector<int64_t> shape;
      known = known && shape_of(v, &shape);
      in.shapes.push_back(std::move(shape));
    }
    if (known) {
      ArgumentList dims;
      for (int64_t d : (*fn)(in)) dims.push_back(Argument(d));
      out.node()->set_meta("shape", Argument::list(std::move(dims)));
    }
  }
  return out;
}

CustomOp register_custom_op(CustomOpDef def) {
  OpRegistry::global().add(Opcode::kCallFunction, def.target, def.signature,
                           std::move(def.kernel));
  Registries& r = registries();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (def.shape) {
    r.shapes[def.target] =
        std::make_unique<ShapeFunction>(std::move(def.shape));
  } else {
    r.shapes.erase(def.target);
  }
  return CustomOp(def.target);
}

const ShapeFunction* find_shape_function(std::string_view target) {
  Registries& r = registries();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.shapes.find(target);
  return it == r.shapes.end() ? nullptr : it->second.get();
}

namespace detail {

void add_leaf_module_kind(
    std::string python_type, std::type_index cpp_type,
    std::string forward_signature,
    std::function<Value(torch::nn::Module&, const std::vector<Value>&)>
        forward) {
  ModuleKind kind;
  kind.type = std::move(python_type);
  kind.cpp_type = cpp_type;
  kind.forward_schema = OpSchema::parse(forward_signature);
  size_t n = kind.forward_schema.params().size();
  kind.forward = [forward = std::move(forward), n](torch::nn::Module& m,
                                                   OpArgs& a) -> c10::IValue {
    std::vector<Value> args;
    args.reserve(n);
    for (size_t i = 0; i < n; ++i) args.emplace_back(a[i]);
    return forward(m, args).to_ivalue();
  };
  kind.describe = [](const torch::nn::Module&) { return ArgumentDict{}; };
  ModuleRegistry::global().add(std::move(kind));
}

}  // namespace detail

void register_tracer_policy(std::string name, TracerFactory factory) {
  Registries& r = registries();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.policies[std::move(name)] = std::move(factory);
}

std::unique_ptr<Tracer> make_tracer(std::string_view name) {
  if (name == "default") return std::make_unique<Tracer>();
  TracerFactory factory;
  {
    Registries& r = registries();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.policies.find(name);
    if (it != r.policies.end()) factory = it->second;
  }
  if (!factory) {
    throw FxError(cat("unknown tracer policy '", name,
                      "'; known: ", join(tracer_policies(), ", ")));
  }
  return factory();
}

std::vector<std::string> tracer_policies() {
  std::vector<std::string> out = {"default"};
  Registries& r = registries();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& [name, factory] : r.policies) out.push_back(name);
  return out;
}

}  // namespace fx
