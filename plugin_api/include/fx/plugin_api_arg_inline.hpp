// The inline bodies of the wrapper's graph arguments: ArgView (a borrowed
// view of a node argument) and Arg (an owned one, with its builders).
//
// Part of the wrapper declared (and documented) in fx/plugin_api.hpp,
// which includes it through fx/plugin_api_inline.hpp. Include
// fx/plugin_api.hpp, not this file. Every definition here is inline (or a
// template), so the wrapper stays header-only.
#ifndef FX_PLUGIN_API_ARG_INLINE_HPP_
#define FX_PLUGIN_API_ARG_INLINE_HPP_

// Makes this header self-contained for tools that parse it alone; when
// plugin_api.hpp is the includer its guard makes this a no-op.
#include "fx/plugin_api.hpp"

namespace fxp {

// ------------------------------------------------------------------ ArgView

inline FxArgKind ArgView::kind() const { return api()->ArgKind(arg_); }
inline bool ArgView::is_none() const { return kind() == FX_ARG_NONE; }
inline bool ArgView::is_node() const { return kind() == FX_ARG_NODE; }
inline bool ArgView::is_symint() const {
  require_api_version(8, "ArgIsSymInt");
  return api()->ArgIsSymInt(arg_) != 0;
}

inline bool ArgView::as_bool() const {
  int v = 0;
  check(api()->ArgGetBool(arg_, &v));
  return v != 0;
}

inline int64_t ArgView::as_int() const {
  int64_t v = 0;
  check(api()->ArgGetInt(arg_, &v));
  return v;
}

inline double ArgView::as_float() const {
  double v = 0;
  check(api()->ArgGetFloat(arg_, &v));
  return v;
}

inline std::string ArgView::as_string() const {
  const char* v = nullptr;
  check(api()->ArgGetString(arg_, &v));
  return v;
}

inline Node ArgView::node() const {
  FxNode* n = nullptr;
  check(api()->ArgGetNode(arg_, &n));
  return Node(n);
}

inline size_t ArgView::size() const { return api()->ArgSize(arg_); }

inline ArgView ArgView::operator[](size_t i) const {
  return ArgView(api()->ArgItem(arg_, i));
}

inline std::string ArgView::key(size_t i) const {
  const char* k = api()->ArgKey(arg_, i);
  return k ? k : "";
}

inline bool ArgView::operator==(const ArgView& other) const {
  return api()->ArgEqual(arg_, other.arg_) != 0;
}

// ---------------------------------------------------------------------- Arg

template <typename Seq>
inline Arg Arg::sequence(const Seq& items, bool tuple) {
  std::vector<const FxArg*> raw;
  for (const Arg& a : items) raw.push_back(a.get());
  FxArg* out = nullptr;
  check(tuple ? api()->CreateTuple(raw.data(), raw.size(), &out)
              : api()->CreateList(raw.data(), raw.size(), &out));
  return Arg(out);
}

inline Arg Arg::torch_value(FxArgKind kind, const char* name) {
  FxArg* out = nullptr;
  check(api()->CreateTorchValue(kind, name, &out));
  return Arg(out);
}

inline Arg::Arg() { check(api()->CreateNone(&arg_)); }
inline Arg::Arg(std::nullptr_t) : Arg() {}
inline Arg::Arg(bool v) { check(api()->CreateBool(v ? 1 : 0, &arg_)); }
inline Arg::Arg(int v) { check(api()->CreateInt(v, &arg_)); }
inline Arg::Arg(int64_t v) { check(api()->CreateInt(v, &arg_)); }
inline Arg::Arg(double v) { check(api()->CreateFloat(v, &arg_)); }
inline Arg::Arg(const char* v) { check(api()->CreateString(v, &arg_)); }
inline Arg::Arg(const std::string& v) : Arg(v.c_str()) {}
inline Arg::Arg(const Node& node) {
  check(api()->CreateNodeRef(node.get(), &arg_));
}
inline Arg::Arg(ArgView view) { check(api()->CloneArg(view.get(), &arg_)); }
inline Arg::Arg(std::initializer_list<Arg> items)
    : Arg(sequence(items, false)) {}

inline Arg::Arg(const Arg& other) { check(api()->CloneArg(other.arg_, &arg_)); }

inline Arg& Arg::operator=(Arg other) noexcept {
  std::swap(arg_, other.arg_);
  return *this;
}

inline Arg::~Arg() {
  if (arg_) api()->ReleaseArg(arg_);
}

inline Arg Arg::list(const std::vector<Arg>& items) {
  return sequence(items, false);
}

inline Arg Arg::tuple(const std::vector<Arg>& items) {
  return sequence(items, true);
}

inline Arg Arg::dict(const std::vector<std::pair<std::string, Arg>>& items) {
  std::vector<const char*> keys;
  std::vector<const FxArg*> values;
  for (const auto& kv : items) {
    keys.push_back(kv.first.c_str());
    values.push_back(kv.second.get());
  }
  FxArg* out = nullptr;
  check(api()->CreateDict(keys.data(), values.data(), items.size(), &out));
  return Arg(out);
}

inline Arg Arg::dict_of_views(
    const std::vector<std::pair<const char*, ArgView>>& items) {
  std::vector<const char*> keys;
  std::vector<const FxArg*> values;
  keys.reserve(items.size());
  values.reserve(items.size());
  for (const auto& kv : items) {
    keys.push_back(kv.first);
    values.push_back(kv.second.get());
  }
  FxArg* out = nullptr;
  check(api()->CreateDict(keys.data(), values.data(), items.size(), &out));
  return Arg(out);
}

inline Arg Arg::slice(const Arg& start, const Arg& stop, const Arg& step) {
  FxArg* out = nullptr;
  check(api()->CreateSlice(start.get(), stop.get(), step.get(), &out));
  return Arg(out);
}

inline Arg Arg::ellipsis() {
  FxArg* out = nullptr;
  check(api()->CreateEllipsis(&out));
  return Arg(out);
}

inline Arg Arg::dtype(const char* name) {
  return torch_value(FX_ARG_DTYPE, name);
}

inline Arg Arg::device(const char* name) {
  return torch_value(FX_ARG_DEVICE, name);
}

inline Arg Arg::symint(const char* expression) {
  require_api_version(8, "CreateSymInt");
  FxArg* out = nullptr;
  check(api()->CreateSymInt(expression, &out));
  return Arg(out);
}

}  // namespace fxp

#endif  // FX_PLUGIN_API_ARG_INLINE_HPP_
