#include "fx_core/tracer/proxy.h"

#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/strings.h"
#include "fx_core/tracer/tracer.h"

namespace fx {

Value Value::list(std::vector<Value> items) {
  Value v;
  v.kind_ = Kind::kList;
  v.items_ = std::make_shared<const std::vector<Value>>(std::move(items));
  return v;
}

Value Value::tuple(std::vector<Value> items) {
  Value v;
  v.kind_ = Kind::kTuple;
  v.items_ = std::make_shared<const std::vector<Value>>(std::move(items));
  return v;
}

Value Value::slice(Value start, Value stop, Value step) {
  Value v;
  v.kind_ = Kind::kSlice;
  v.items_ = std::make_shared<const std::vector<Value>>(
      std::vector<Value>{std::move(start), std::move(stop), std::move(step)});
  return v;
}

Value Value::ellipsis() {
  Value v;
  v.kind_ = Kind::kEllipsis;
  return v;
}

Value Value::placeholder_marker() {
  Value v;
  v.kind_ = Kind::kPlaceholder;
  return v;
}

const std::vector<Value>& Value::items() const {
  static const std::vector<Value> kEmpty;
  return items_ ? *items_ : kEmpty;
}

void Value::not_a_tensor() const {
  if (is_proxy()) {
    throw TraceError(
        cat("a traced value (", node_->name(),
            ") cannot be used as a real at::Tensor: symbolically traced "
            "variables only record operations. Call LibTorch code that needs "
            "real tensors from a leaf module or a function registered with "
            "fx::wrap"));
  }
  throw FxError(cat("fx::Value: expected a Tensor, got ",
                    kind_ == Kind::kConstant ? value_type_name(value_)
                                             : std::string("a Python value")));
}

c10::IValue Value::to_ivalue() const {
  switch (kind_) {
    case Kind::kConstant:
    case Kind::kDtype:
    case Kind::kMemoryFormat:
      return value_;
    case Kind::kProxy:
      not_a_tensor();
    case Kind::kList:
    case Kind::kTuple: {
      std::vector<c10::IValue> items;
      items.reserve(items_->size());
      for (const Value& v : *items_) items.push_back(v.to_ivalue());
      return kind_ == Kind::kList ? make_list(std::move(items))
                                  : make_tuple(std::move(items));
    }
    case Kind::kSlice:
      return make_slice((*items_)[0].to_ivalue(), (*items_)[1].to_ivalue(),
                        (*items_)[2].to_ivalue());
    case Kind::kEllipsis:
      return make_ellipsis();
    case Kind::kPlaceholder:
      break;
  }
  throw FxError("fx::PH only stands for a placeholder in concrete_args");
}

int64_t Value::to_int() const {
  c10::IValue v = to_ivalue();
  if (v.isInt()) return v.toInt();
  if (v.isBool()) return v.toBool();
  if (v.isTensor()) return v.toTensor().item<int64_t>();
  throw FxError(cat("fx::Value: expected an int, got ", value_type_name(v)));
}

double Value::to_double() const {
  c10::IValue v = to_ivalue();
  if (v.isDouble()) return v.toDouble();
  if (v.isInt()) return static_cast<double>(v.toInt());
  if (v.isTensor()) return v.toTensor().item<double>();
  throw FxError(cat("fx::Value: expected a float, got ", value_type_name(v)));
}

std::string Value::to_string() const {
  c10::IValue v = to_ivalue();
  if (v.isString()) return v.toStringRef();
  throw FxError(cat("fx::Value: expected a str, got ", value_type_name(v)));
}

Value::operator bool() const {
  switch (kind_) {
    case Kind::kProxy:
      return tracer_->to_bool(*this);
    case Kind::kList:
    case Kind::kTuple:
      return !items_->empty();
    case Kind::kConstant:
      break;
    default:
      return true;
  }
  const c10::IValue& v = value_;
  if (v.isNone()) return false;
  if (v.isBool()) return v.toBool();
  if (v.isInt()) return v.toInt() != 0;
  if (v.isDouble()) return v.toDouble() != 0;
  if (v.isString()) return !v.toStringRef().empty();
  if (v.isTensor()) return v.toTensor().is_nonzero();
  if (is_sequence(v)) return !sequence_elements(v).empty();
  return true;
}

Value Value::operator[](const Value& index) const {
  if (is_tensor() && index.kind_ == Kind::kConstant && index.value_.isInt()) {
    return tensor()[index.value_.toInt()];
  }
  if ((kind_ == Kind::kList || kind_ == Kind::kTuple) &&
      index.kind_ == Kind::kConstant && index.value_.isInt()) {
    int64_t i = index.value_.toInt();
    int64_t n = static_cast<int64_t>(items_->size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) {
      throw FxError(
          cat(kind_ == Kind::kList ? "list" : "tuple", " index out of range"));
    }
    return (*items_)[i];
  }
  return call_function("operator.getitem", pack(*this, index));
}

Value Value::operator[](std::initializer_list<Value> index) const {
  return (*this)[Value::tuple(std::vector<Value>(index))];
}

std::vector<Value> Value::unpack(size_t n) const {
  std::vector<Value> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i)
    out.push_back((*this)[static_cast<int64_t>(i)]);
  return out;
}

Value Value::Iterator::operator*() const { return (*v_)[i_]; }

Value::Iterator Value::begin(const char* file, int line) const {
  if (is_proxy()) {
    tracer_->iter(*this, file, line);
    throw TraceError("Proxy object cannot be iterated");
  }
  return Iterator(this, 0);
}

Value::Iterator Value::end() const {
  int64_t n = 0;
  if (kind_ == Kind::kList || kind_ == Kind::kTuple) {
    n = static_cast<int64_t>(items_->size());
  } else if (is_tensor()) {
    n = tensor().dim() == 0 ? 0 : tensor().size(0);
    if (tensor().dim() == 0) throw FxError("iteration over a 0-d tensor");
  } else if (kind_ == Kind::kConstant && is_sequence(value_)) {
    n = static_cast<int64_t>(sequence_elements(value_).size());
  } else if (!is_proxy()) {
    throw FxError(
        cat("'", value_type_name(to_ivalue()), "' object is not iterable"));
  }
  return Iterator(this, n);
}

Value Value::getattr(std::string_view name) const {
  if (is_tensor() && name == "shape") {
    return Value(c10::IValue(tensor().sizes().vec()));
  }
  return call_function("builtins.getattr", pack(*this, std::string(name)));
}

Value Value::method0(std::string_view name) const {
  return fx::call_method(name, pack(*this));
}

std::ostream& operator<<(std::ostream& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kProxy:
      return out << "Proxy(" << v.node()->name() << ")";
    case Value::Kind::kPlaceholder:
      return out << "PH";
    case Value::Kind::kList:
    case Value::Kind::kTuple: {
      bool list = v.kind() == Value::Kind::kList;
      out << (list ? "[" : "(");
      for (size_t i = 0; i < v.items().size(); ++i) {
        out << (i ? ", " : "") << v.items()[i];
      }
      if (!list && v.items().size() == 1) out << ",";
      return out << (list ? "]" : ")");
    }
    default:
      return out << v.to_ivalue();
  }
}

// ---------------------------------------------------------------- calls

namespace {

void note_tracer(const Value& v, Tracer** found) {
  switch (v.kind()) {
    case Value::Kind::kProxy:
      if (*found != nullptr && *found != v.tracer()) {
        throw FxError(
            "Found multiple different tracers while trying to trace "
            "operations");
      }
      *found = v.tracer();
      return;
    case Value::Kind::kList:
    case Value::Kind::kTuple:
    case Value::Kind::kSlice:
      for (const Value& item : v.items()) note_tracer(item, found);
      return;
    default:
      return;
  }
}

}  // namespace

Tracer* find_tracer(const Value& v) {
  Tracer* t = nullptr;
  note_tracer(v, &t);
  return t;
}

Tracer* find_tracer(const CallArgs& call) {
  Tracer* t = nullptr;
  for (const Value& v : call.args) note_tracer(v, &t);
  for (const Kwarg& k : call.kwargs) note_tracer(k.value, &t);
  return t;
}

Value run_eager(Opcode op, std::string_view target, const CallArgs& call) {
  const OpDef* def = OpRegistry::global().resolve(op, target);
  if (def == nullptr) {
    throw FxError(cat("fx: no kernel for ", opcode_name(op), " '", target,
                      "' to run it eagerly; register one with "
                      "fx::OpRegistry::global().add(...)"));
  }
  std::vector<c10::IValue> args;
  args.reserve(call.args.size());
  for (const Value& v : call.args) args.push_back(v.to_ivalue());
  std::vector<std::pair<std::string, c10::IValue>> kwargs;
  kwargs.reserve(call.kwargs.size());
  for (const Kwarg& k : call.kwargs) {
    kwargs.emplace_back(std::string(k.name), k.value.to_ivalue());
  }
  return Value(call_op(*def, std::move(args), kwargs));
}

Value call_function(std::string_view target, CallArgs call) {
  if (Tracer* t = find_tracer(call)) {
    return t->create_proxy(Opcode::kCallFunction, target, call.args,
                           call.kwargs);
  }
  return run_eager(Opcode::kCallFunction, target, call);
}

Value call_method(std::string_view name, CallArgs call) {
  if (Tracer* t = find_tracer(call)) {
    return t->create_proxy(Opcode::kCallMethod, name, call.args, call.kwargs);
  }
  return run_eager(Opcode::kCallMethod, name, call);
}

namespace detail {

Value binary(std::string_view target, const Value& a, const Value& b) {
  return call_function(target, pack(a, b));
}

Value unary(std::string_view target, const Value& a) {
  return call_function(target, pack(a));
}

}  // namespace detail
}  // namespace fx
