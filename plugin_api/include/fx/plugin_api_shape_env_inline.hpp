// The inline bodies of the wrapper's ShapeEnv: the symbols and guards of a
// graph's symbolic shapes.
//
// Part of the wrapper declared (and documented) in fx/plugin_api.hpp,
// which includes it through fx/plugin_api_inline.hpp. Include
// fx/plugin_api.hpp, not this file. Every definition here is inline (or a
// template), so the wrapper stays header-only.
#ifndef FX_PLUGIN_API_SHAPE_ENV_INLINE_HPP_
#define FX_PLUGIN_API_SHAPE_ENV_INLINE_HPP_

// Makes this header self-contained for tools that parse it alone; when
// plugin_api.hpp is the includer its guard makes this a no-op.
#include "fx/plugin_api.hpp"

namespace fxp {

// ----------------------------------------------------------------- ShapeEnv

inline ShapeEnv& ShapeEnv::operator=(ShapeEnv&& o) noexcept {
  if (this != &o) {
    if (env_ != nullptr) api()->ReleaseShapeEnv(env_);
    env_ = std::exchange(o.env_, nullptr);
  }
  return *this;
}

inline ShapeEnv::~ShapeEnv() {
  if (env_ != nullptr) api()->ReleaseShapeEnv(env_);
}

inline std::vector<ShapeEnv::Symbol> ShapeEnv::symbols() const {
  std::vector<Symbol> out;
  size_t n = env_ ? api()->ShapeEnvNumSymbols(env_) : 0;
  for (size_t i = 0; i < n; ++i) {
    Symbol s;
    s.name = detail::lent(api()->ShapeEnvSymbolName(env_, i));
    int64_t hint = 0;
    FxStatus* status = api()->ShapeEnvSymbolHint(env_, i, &hint);
    if (status == nullptr) s.hint = hint;
    api()->ReleaseStatus(status);
    Source at;
    const char* placeholder = nullptr;
    int stride = 0;
    status =
        api()->ShapeEnvSymbolSource(env_, i, &placeholder, &at.dim, &stride);
    if (status == nullptr) {
      at.placeholder = placeholder;
      at.stride = stride != 0;
      s.source = std::move(at);
    }
    api()->ReleaseStatus(status);
    out.push_back(std::move(s));
  }
  return out;
}

inline std::vector<ShapeEnv::Guard> ShapeEnv::guards() const {
  std::vector<Guard> out;
  size_t n = env_ ? api()->ShapeEnvNumGuards(env_) : 0;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(
        {api()->ShapeEnvGuard(env_, i), api()->ShapeEnvGuardRelation(env_, i)});
  }
  return out;
}

inline std::string ShapeEnv::format_guards() const {
  std::string out;
  for (const Guard& g : guards()) {
    out += (out.empty() ? " - " : "\n - ") + g.text;
  }
  return out;
}

inline void ShapeEnv::check(const std::vector<const DLTensor*>& inputs) const {
  if (env_ == nullptr) return;
  fxp::check(api()->ShapeEnvCheck(env_, inputs.data(), inputs.size()));
}

}  // namespace fxp

#endif  // FX_PLUGIN_API_SHAPE_ENV_INLINE_HPP_
