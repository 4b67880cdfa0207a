// The inline bodies of the wrapper's graph-building Value: method calls,
// fxp::call and the arithmetic operators that append nodes.
//
// Part of the wrapper declared (and documented) in fx/plugin_api.hpp,
// which includes it through fx/plugin_api_inline.hpp. Include
// fx/plugin_api.hpp, not this file. Every definition here is inline (or a
// template), so the wrapper stays header-only.
#ifndef FX_PLUGIN_API_VALUE_INLINE_HPP_
#define FX_PLUGIN_API_VALUE_INLINE_HPP_

// Makes this header self-contained for tools that parse it alone; when
// plugin_api.hpp is the includer its guard makes this a no-op.
#include "fx/plugin_api.hpp"

namespace fxp {

// -------------------------------------------------------------------- Value

inline Value::operator Arg() const { return Arg(node_); }

inline Value Value::call_method(const char* method, std::vector<Arg> args,
                                const Kwargs& kwargs) const {
  args.insert(args.begin(), Arg(node_));
  return graph().call_method(method, args, kwargs);
}

inline Value Value::relu() const { return call_method("relu"); }
inline Value Value::sigmoid() const { return call_method("sigmoid"); }
inline Value Value::tanh() const { return call_method("tanh"); }

inline Graph Value::graph() const {
  return Graph(api()->NodeGraph(node_.get()));
}

inline Value call(Graph g, const char* target, const std::vector<Arg>& args,
                  const Kwargs& kwargs) {
  return g.call_function(target, args, kwargs);
}

namespace detail {
inline Value binary(const char* op, const Value& a, const Arg& b) {
  return a.graph().call_function(op, {Arg(a.node()), b});
}
inline Value rbinary(const char* op, const Arg& a, const Value& b) {
  return b.graph().call_function(op, {a, Arg(b.node())});
}
}  // namespace detail

#define FXP_DEFINE_BINARY_OPERATOR(OP, TARGET)               \
  inline Value operator OP(const Value& a, const Value& b) { \
    return detail::binary(TARGET, a, Arg(b.node()));         \
  }                                                          \
  inline Value operator OP(const Value& a, double b) {       \
    return detail::binary(TARGET, a, Arg(b));                \
  }                                                          \
  inline Value operator OP(const Value& a, int b) {          \
    return detail::binary(TARGET, a, Arg(b));                \
  }                                                          \
  inline Value operator OP(double a, const Value& b) {       \
    return detail::rbinary(TARGET, Arg(a), b);               \
  }                                                          \
  inline Value operator OP(int a, const Value& b) {          \
    return detail::rbinary(TARGET, Arg(a), b);               \
  }

FXP_DEFINE_BINARY_OPERATOR(+, "operator.add")
FXP_DEFINE_BINARY_OPERATOR(-, "operator.sub")
FXP_DEFINE_BINARY_OPERATOR(*, "operator.mul")
FXP_DEFINE_BINARY_OPERATOR(/, "operator.truediv")
FXP_DEFINE_BINARY_OPERATOR(>, "operator.gt")
FXP_DEFINE_BINARY_OPERATOR(<, "operator.lt")
FXP_DEFINE_BINARY_OPERATOR(>=, "operator.ge")
FXP_DEFINE_BINARY_OPERATOR(<=, "operator.le")
#undef FXP_DEFINE_BINARY_OPERATOR

inline Value operator-(const Value& a) {
  return a.graph().call_function("operator.neg", {Arg(a.node())});
}

}  // namespace fxp

#endif  // FX_PLUGIN_API_VALUE_INLINE_HPP_
