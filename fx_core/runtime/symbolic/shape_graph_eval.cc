#include "fx_core/runtime/symbolic/shape_graph_eval.h"

#include <torch/csrc/jit/ir/ir.h>

#include <cmath>
#include <functional>
#include <unordered_map>
#include <utility>

#include "fx_core/ir/python_repr.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

using sym::Expr;
using sym::Relation;

SymValue SymValue::of_bool(bool b) {
  SymValue v;
  v.kind = Kind::kBool;
  v.boolean = b;
  return v;
}

SymValue SymValue::of_int(Expr e) {
  SymValue v;
  v.kind = Kind::kInt;
  v.integer = std::move(e);
  return v;
}

SymValue SymValue::of_float(double d) {
  SymValue v;
  v.kind = Kind::kFloat;
  v.number = d;
  return v;
}

SymValue SymValue::of_string(std::string s) {
  SymValue v;
  v.kind = Kind::kString;
  v.text = std::move(s);
  return v;
}

SymValue SymValue::list(std::vector<SymValue> items) {
  SymValue v;
  v.kind = Kind::kList;
  v.items = std::make_shared<std::vector<SymValue>>(std::move(items));
  return v;
}

SymValue SymValue::tuple(std::vector<SymValue> items) {
  SymValue v = list(std::move(items));
  v.kind = Kind::kTuple;
  return v;
}

SymValue SymValue::int_list(const std::vector<Expr>& sizes) {
  std::vector<SymValue> items;
  for (const Expr& e : sizes) items.push_back(of_int(e));
  return list(std::move(items));
}

std::string SymValue::str() const {
  switch (kind) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return boolean ? "True" : "False";
    case Kind::kInt:
      return integer.str();
    case Kind::kFloat:
      return python_float_repr(number);
    case Kind::kString:
      return cat("'", text, "'");
    case Kind::kList:
    case Kind::kTuple: {
      std::string out = kind == Kind::kList ? "[" : "(";
      for (size_t i = 0; i < items->size(); ++i) {
        append(&out, i ? ", " : "", (*items)[i].str());
      }
      return out + (kind == Kind::kList ? "]" : ")");
    }
  }
  return "?";
}

namespace {

using torch::jit::Block;
using torch::jit::Node;
using Args = std::vector<SymValue>;

// The operator a graph node calls, as "aten::add.int" ("aten::ge" for the
// unnamed overload and for nodes without a schema).
std::string node_key(const Node* n) {
  std::string key = n->kind().toQualString();
  const c10::FunctionSchema* s = n->maybeSchema();
  if (s != nullptr && !s->overload_name().empty()) {
    append(&key, ".", s->overload_name());
  }
  return key;
}

SymValue from_ivalue(const c10::IValue& v, const std::string& where) {
  if (v.isNone()) return SymValue::none();
  if (v.isBool()) return SymValue::of_bool(v.toBool());
  if (v.isInt()) return SymValue::of_int(Expr::integer(v.toInt()));
  if (v.isDouble()) return SymValue::of_float(v.toDouble());
  if (v.isString()) return SymValue::of_string(v.toStringRef());
  if (v.isList() || v.isTuple()) {
    std::vector<SymValue> items;
    for (const c10::IValue& item :
         v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec()) {
      items.push_back(from_ivalue(item, where));
    }
    return v.isList() ? SymValue::list(std::move(items))
                      : SymValue::tuple(std::move(items));
  }
  throw FxError(cat(where, ": unsupported constant ", v.tagKind()));
}

// Evaluates one shape graph; holds the values of its SSA names.
class Evaluator {
 public:
  Evaluator(sym::GuardRecorder& guards, std::string op_name)
      : guards_(guards), op_(std::move(op_name)) {}

  std::vector<SymValue> run(const torch::jit::Graph& graph, Args inputs) {
    const Block* block = graph.block();
    if (inputs.size() < block->inputs().size()) {
      fail(cat("the shape function takes ", block->inputs().size(),
               " arguments, got ", inputs.size()));
    }
    inputs.resize(block->inputs().size());
    return run_block(block, std::move(inputs));
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw FxError(cat("symbolic shape of ", op_, ": ", what));
  }

  std::vector<SymValue> run_block(const Block* block, Args inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      env_[block->inputs()[i]] = std::move(inputs[i]);
    }
    for (const Node* n : block->nodes()) run_node(n);
    std::vector<SymValue> out;
    for (const torch::jit::Value* v : block->outputs()) out.push_back(get(v));
    return out;
  }

  const SymValue& get(const torch::jit::Value* v) const {
    auto it = env_.find(v);
    if (it == env_.end()) fail(cat("value %", v->debugName(), " not set"));
    return it->second;
  }

  void run_node(const Node* n) {
    auto kind = n->kind();
    std::vector<SymValue> out;
    if (kind == c10::prim::If) {
      out = run_if(n);
    } else if (kind == c10::prim::Loop) {
      out = run_loop(n);
    } else if (kind == c10::prim::Constant) {
      // A function constant (left by inlining) has no value.
      std::optional<c10::IValue> v = torch::jit::toIValue(n->output());
      out.push_back(v ? from_ivalue(*v, op_) : SymValue::none());
    } else {
      Args args;
      for (const torch::jit::Value* v : n->inputs()) args.push_back(get(v));
      out = call(n, args);
    }
    if (out.size() != n->outputs().size()) {
      fail(cat(node_key(n), " gave ", out.size(), " values for ",
               n->outputs().size(), " outputs"));
    }
    for (size_t i = 0; i < out.size(); ++i) {
      env_[n->outputs()[i]] = std::move(out[i]);
    }
  }

  std::vector<SymValue> run_if(const Node* n) {
    bool cond = as_bool(get(n->input(0)));
    return run_block(n->blocks()[cond ? 0 : 1], {});
  }

  // prim::Loop(max_trips, cond, carried...): the body takes (i, carried...)
  // and gives (cond, carried...).
  std::vector<SymValue> run_loop(const Node* n) {
    int64_t trips = as_index(get(n->input(0)));
    bool cond = as_bool(get(n->input(1)));
    Args carried;
    for (size_t i = 2; i < n->inputs().size(); ++i) {
      carried.push_back(get(n->input(i)));
    }
    const Block* body = n->blocks()[0];
    for (int64_t i = 0; i < trips && cond; ++i) {
      Args in{SymValue::of_int(Expr::integer(i))};
      in.insert(in.end(), carried.begin(), carried.end());
      std::vector<SymValue> out = run_block(body, std::move(in));
      cond = as_bool(out[0]);
      carried.assign(out.begin() + 1, out.end());
    }
    return carried;
  }

  bool as_bool(const SymValue& v) const {
    if (v.kind != SymValue::Kind::kBool)
      fail(cat("expected a bool: ", v.str()));
    return v.boolean;
  }

  // An integer used as a count or an index: concrete, or specialised.
  int64_t as_index(const SymValue& v) {
    if (v.kind != SymValue::Kind::kInt) {
      fail(cat("expected an int: ", v.str()));
    }
    return guards_.specialize(v.integer);
  }

  const Expr& as_int(const SymValue& v) const {
    if (v.kind != SymValue::Kind::kInt) {
      fail(cat("expected an int: ", v.str()));
    }
    return v.integer;
  }

  // A number as a double: floats, and integers without symbols.
  double as_double(const SymValue& v) const {
    if (v.kind == SymValue::Kind::kFloat) return v.number;
    if (v.kind == SymValue::Kind::kBool) return v.boolean;
    std::optional<int64_t> i =
        v.kind == SymValue::Kind::kInt ? v.integer.as_integer() : std::nullopt;
    if (!i) fail(cat("a float computed from a symbolic size: ", v.str()));
    return static_cast<double>(*i);
  }

  std::vector<SymValue>& as_list(const SymValue& v) const {
    if (v.kind != SymValue::Kind::kList && v.kind != SymValue::Kind::kTuple) {
      fail(cat("expected a list: ", v.str()));
    }
    return *v.items;
  }

  // Compares two numbers: expressions through the guards, floats directly.
  bool compare(Relation::Op op, const SymValue& a, const SymValue& b) {
    if (a.kind == SymValue::Kind::kInt && b.kind == SymValue::Kind::kInt) {
      return guards_.decide(Relation{op, a.integer, b.integer});
    }
    double x = as_double(a), y = as_double(b);
    switch (op) {
      case Relation::Op::kEq:
        return x == y;
      case Relation::Op::kNe:
        return x != y;
      case Relation::Op::kLt:
        return x < y;
      case Relation::Op::kLe:
        return x <= y;
      case Relation::Op::kGt:
        return x > y;
      case Relation::Op::kGe:
        return x >= y;
    }
    return false;
  }

  // Arithmetic on two numbers: integers as expressions, else floats.
  SymValue arith(char op, const SymValue& a, const SymValue& b) {
    bool ints =
        a.kind == SymValue::Kind::kInt && b.kind == SymValue::Kind::kInt;
    if (ints) {
      const Expr &x = a.integer, &y = b.integer;
      switch (op) {
        case '+':
          return SymValue::of_int(x + y);
        case '-':
          return SymValue::of_int(x - y);
        case '*':
          return SymValue::of_int(x * y);
        case '/':
          return SymValue::of_int(sym::floordiv(x, y));
        case '%':
          return SymValue::of_int(sym::mod(x, y));
      }
    }
    double x = as_double(a), y = as_double(b);
    switch (op) {
      case '+':
        return SymValue::of_float(x + y);
      case '-':
        return SymValue::of_float(x - y);
      case '*':
        return SymValue::of_float(x * y);
      case '/':
        return SymValue::of_float(std::floor(x / y));
    }
    fail(cat("unsupported float operation ", op));
  }

  SymValue min_max(bool max, const SymValue& a, const SymValue& b) {
    bool a_less = compare(Relation::Op::kLt, a, b);
    return (a_less == max) ? b : a;
  }

  int64_t list_index(const std::vector<SymValue>& list, const SymValue& i) {
    int64_t index = as_index(i);
    int64_t n = static_cast<int64_t>(list.size());
    if (index < 0) index += n;
    if (index < 0 || index >= n) {
      fail(cat("list index ", as_index(i), " out of range for ", n));
    }
    return index;
  }

  SymValue raise(const Args& args) const {
    std::string message =
        !args.empty() && args[0].kind == SymValue::Kind::kString
            ? args[0].text
            : std::string("a shape check failed");
    fail(message);
  }

  std::vector<SymValue> call(const Node* n, const Args& a);
  SymValue call_one(const std::string& key, const Node* n, const Args& a);
  bool is_instance(const Node* n, const SymValue& v) const;

  sym::GuardRecorder& guards_;
  std::string op_;
  std::unordered_map<const torch::jit::Value*, SymValue> env_;
};

bool Evaluator::is_instance(const Node* n, const SymValue& v) const {
  for (const c10::TypePtr& t : n->tys(c10::attr::types)) {
    switch (t->kind()) {
      case c10::TypeKind::IntType:
        if (v.kind == SymValue::Kind::kInt) return true;
        break;
      case c10::TypeKind::FloatType:
        if (v.kind == SymValue::Kind::kFloat) return true;
        break;
      case c10::TypeKind::BoolType:
        if (v.kind == SymValue::Kind::kBool) return true;
        break;
      case c10::TypeKind::NoneType:
        if (v.is_none()) return true;
        break;
      case c10::TypeKind::ListType:
        if (v.kind == SymValue::Kind::kList) return true;
        break;
      case c10::TypeKind::TupleType:
        if (v.kind == SymValue::Kind::kTuple) return true;
        break;
      default:
        fail(cat("isinstance of ", t->str()));
    }
  }
  return false;
}

std::vector<SymValue> Evaluator::call(const Node* n, const Args& a) {
  std::string key = node_key(n);
  if (key == "prim::TupleUnpack" || key == "prim::ListUnpack") {
    return as_list(a[0]);
  }
  if (key == "prim::RaiseException") raise(a);
  if (n->outputs().empty()) {
    call_one(key, n, a);
    return {};
  }
  return {call_one(key, n, a)};
}

SymValue Evaluator::call_one(const std::string& key, const Node* n,
                             const Args& a) {
  using Op = Relation::Op;
  static const std::unordered_map<std::string, Op> kCompare = {
      {"aten::eq.int", Op::kEq},   {"aten::ne.int", Op::kNe},
      {"aten::lt.int", Op::kLt},   {"aten::le.int", Op::kLe},
      {"aten::gt.int", Op::kGt},   {"aten::ge.int", Op::kGe},
      {"aten::eq", Op::kEq},       {"aten::ne", Op::kNe},
      {"aten::lt", Op::kLt},       {"aten::le", Op::kLe},
      {"aten::gt", Op::kGt},       {"aten::ge", Op::kGe},
      {"aten::eq.float", Op::kEq}, {"aten::ne.float", Op::kNe},
      {"aten::lt.float", Op::kLt}, {"aten::le.float", Op::kLe},
      {"aten::gt.float", Op::kGt}, {"aten::ge.float", Op::kGe}};
  static const std::unordered_map<std::string, char> kArith = {
      {"aten::add.int", '+'},       {"aten::sub.int", '-'},
      {"aten::mul.int", '*'},       {"aten::floordiv.int", '/'},
      {"aten::remainder.int", '%'}, {"aten::add", '+'},
      {"aten::sub", '-'},           {"aten::mul", '*'},
      {"aten::mul.int_float", '*'}, {"aten::mul.float", '*'},
      {"aten::add.float", '+'},     {"aten::sub.float", '-'}};
  if (auto c = kCompare.find(key); c != kCompare.end()) {
    return SymValue::of_bool(compare(c->second, a[0], a[1]));
  }
  if (auto c = kArith.find(key); c != kArith.end()) {
    return arith(c->second, a[0], a[1]);
  }
  if (key == "aten::neg.int") return SymValue::of_int(-as_int(a[0]));
  if (key == "prim::max.int") return min_max(true, a[0], a[1]);
  if (key == "prim::min.int") return min_max(false, a[0], a[1]);
  if (key == "prim::min.self_int" || key == "prim::max.self_int") {
    std::vector<SymValue>& items = as_list(a[0]);
    if (items.empty()) fail("min/max of an empty list");
    SymValue best = items[0];
    for (size_t i = 1; i < items.size(); ++i) {
      best = min_max(key == "prim::max.self_int", best, items[i]);
    }
    return best;
  }
  if (key == "aten::div" || key == "aten::div.float") {
    return SymValue::of_float(as_double(a[0]) / as_double(a[1]));
  }
  if (key == "aten::ceil.Scalar" || key == "aten::ceil.float" ||
      key == "aten::Int.Scalar" || key == "aten::Int.float") {
    if (a[0].kind == SymValue::Kind::kInt) return a[0];
    double d = as_double(a[0]);
    d = key.rfind("aten::ceil", 0) == 0 ? std::ceil(d) : std::trunc(d);
    return key.rfind("aten::Int", 0) == 0 || key == "aten::ceil.float"
               ? SymValue::of_int(Expr::integer(static_cast<int64_t>(d)))
               : SymValue::of_float(d);
  }
  if (key == "aten::len.t") {
    return SymValue::of_int(
        Expr::integer(static_cast<int64_t>(as_list(a[0]).size())));
  }
  if (key == "aten::__getitem__.t") {
    std::vector<SymValue>& list = as_list(a[0]);
    return list[list_index(list, a[1])];
  }
  if (key == "aten::append.t") {
    as_list(a[0]).push_back(a[1]);
    return a[0];
  }
  if (key == "aten::_set_item.t") {
    std::vector<SymValue>& list = as_list(a[0]);
    list[list_index(list, a[1])] = a[2];
    return a[0];
  }
  if (key == "aten::insert.t") {
    std::vector<SymValue>& list = as_list(a[0]);
    int64_t n = static_cast<int64_t>(list.size());
    int64_t i = as_index(a[1]);
    if (i < 0) i = std::max<int64_t>(0, i + n);
    list.insert(list.begin() + std::min(i, n), a[2]);
    return SymValue::none();
  }
  if (key == "aten::eq.int_list") {
    std::vector<SymValue>&x = as_list(a[0]), &y = as_list(a[1]);
    if (x.size() != y.size()) return SymValue::of_bool(false);
    for (size_t i = 0; i < x.size(); ++i) {
      if (!compare(Relation::Op::kEq, x[i], y[i])) {
        return SymValue::of_bool(false);
      }
    }
    return SymValue::of_bool(true);
  }
  if (key == "aten::__contains__.int_list") {
    for (const SymValue& item : as_list(a[0])) {
      if (compare(Relation::Op::kEq, item, a[1]))
        return SymValue::of_bool(true);
    }
    return SymValue::of_bool(false);
  }
  if (key == "prim::ListConstruct") return SymValue::list(a);
  if (key == "prim::TupleConstruct") return SymValue::tuple(a);
  if (key == "aten::list.t") return SymValue::list(as_list(a[0]));
  if (key == "aten::__is__")
    return SymValue::of_bool(a[0].is_none() && a[1].is_none());
  if (key == "aten::__isnot__") {
    return SymValue::of_bool(!(a[0].is_none() && a[1].is_none()));
  }
  if (key == "aten::__not__") return SymValue::of_bool(!as_bool(a[0]));
  if (key == "prim::unchecked_cast") return a[0];
  if (key == "prim::Uninitialized") return SymValue::none();
  if (key == "prim::isinstance") return SymValue::of_bool(is_instance(n, a[0]));
  if (key == "aten::__derive_index") {
    return SymValue::of_int(as_int(a[1]) + as_int(a[0]) * as_int(a[2]));
  }
  if (key == "aten::__range_length") {
    int64_t lo = as_index(a[0]), hi = as_index(a[1]), step = as_index(a[2]);
    if (step == 0) fail("range() step 0");
    int64_t n = step > 0 ? (hi > lo ? (hi - lo + step - 1) / step : 0)
                         : (lo > hi ? (lo - hi - step - 1) / -step : 0);
    return SymValue::of_int(Expr::integer(n));
  }
  if (key == "aten::format" || key == "aten::add.str") {
    return SymValue::of_string(
        !a.empty() && a[0].kind == SymValue::Kind::kString ? a[0].text : "");
  }
  fail(cat("unsupported shape graph node ", key));
}

}  // namespace

std::vector<SymValue> evaluate_shape_graph(const torch::jit::Graph& graph,
                                           std::vector<SymValue> inputs,
                                           sym::GuardRecorder& guards,
                                           const std::string& op_name) {
  Evaluator e(guards, op_name);
  return e.run(graph, std::move(inputs));
}

}  // namespace fx
