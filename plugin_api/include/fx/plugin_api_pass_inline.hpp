// The inline bodies of the wrapper's pass registration: the Options a pass
// reads, run_pass (the trampoline pass<Fn> installs), PassDef, pass,
// Registrar and PluginDef.
//
// Part of the wrapper declared (and documented) in fx/plugin_api.hpp,
// which includes it through fx/plugin_api_inline.hpp. Include
// fx/plugin_api.hpp, not this file. Every definition here is inline (or a
// template), so the wrapper stays header-only.
#ifndef FX_PLUGIN_API_PASS_INLINE_HPP_
#define FX_PLUGIN_API_PASS_INLINE_HPP_

// Makes this header self-contained for tools that parse it alone; when
// plugin_api.hpp is the includer its guard makes this a no-op.
#include "fx/plugin_api.hpp"

namespace fxp {

// ------------------------------------------------------------------ Options

inline bool Options::get_bool(const char* name) const {
  int v = 0;
  check(api()->OptionsGetBool(options_, name, &v));
  return v != 0;
}

inline int64_t Options::get_int(const char* name) const {
  int64_t v = 0;
  check(api()->OptionsGetInt(options_, name, &v));
  return v;
}

inline double Options::get_float(const char* name) const {
  double v = 0;
  check(api()->OptionsGetFloat(options_, name, &v));
  return v;
}

inline std::string Options::get_string(const char* name) const {
  const char* v = nullptr;
  check(api()->OptionsGetString(options_, name, &v));
  return v;
}

inline std::vector<std::string> Options::get_list(const char* name) const {
  size_t n = 0;
  check(api()->OptionsGetListSize(options_, name, &n));
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    const char* v = nullptr;
    check(api()->OptionsGetListItem(options_, name, i, &v));
    out.emplace_back(v);
  }
  return out;
}

template <PassFn Fn>
FxStatus* run_pass(const FxApi* table, FxGraph* graph, const FxOptions* options,
                   void* /*user_data*/, int* changed) {
  api() = table;
  try {
    Graph g(graph);
    Options o(options);
    bool did = Fn(g, o);
    if (changed) *changed = did ? 1 : 0;
    return nullptr;
  } catch (const Error& e) {
    return table->CreateStatus(e.code(), e.what());
  } catch (const std::exception& e) {
    return table->CreateStatus(FX_INTERNAL, e.what());
  } catch (...) {
    return table->CreateStatus(FX_INTERNAL, "unknown exception in pass");
  }
}

// ------------------------------------------------ PassDef, pass, PluginDef

namespace detail {
// Appends the names a PassDef builder call lists (run_after, run_before,
// requires_property, produces, invalidates) to the PassDef's list of them.
inline void append_names(std::vector<const char*>& list,
                         std::initializer_list<const char*> names) {
  list.insert(list.end(), names);
}
}  // namespace detail

inline PassDef::PassDef(const char* name, const char* description,
                        FxPassRunFn run, void* user_data) {
  info_.name = name;
  info_.description = description;
  info_.run = run;
  info_.user_data = user_data;
}

inline PassDef& PassDef::option(const char* name, FxOptionType type,
                                const char* default_value,
                                const char* description) {
  options_.push_back(FxOptionSpec{name, type, default_value, description});
  return *this;
}

inline PassDef& PassDef::run_after(std::initializer_list<const char*> names) {
  detail::append_names(run_after_, names);
  return *this;
}

inline PassDef& PassDef::run_before(std::initializer_list<const char*> names) {
  detail::append_names(run_before_, names);
  return *this;
}

inline PassDef& PassDef::requires_property(
    std::initializer_list<const char*> names) {
  detail::append_names(required_, names);
  return *this;
}

inline PassDef& PassDef::produces(std::initializer_list<const char*> names) {
  detail::append_names(produces_, names);
  return *this;
}

inline PassDef& PassDef::invalidates(std::initializer_list<const char*> names) {
  detail::append_names(invalidates_, names);
  return *this;
}

inline PassDef& PassDef::tolerance(double rtol, double atol) {
  info_.tolerance = FxTolerance{rtol, atol};
  return *this;
}

inline PassDef& PassDef::idempotent(bool idempotent) {
  info_.idempotent = idempotent ? 1 : 0;
  return *this;
}

inline const FxPassInfo& PassDef::info() {
  info_.options = options_.data();
  info_.num_options = options_.size();
  info_.run_after = list(run_after_);
  info_.run_before = list(run_before_);
  info_.required = list(required_);
  info_.produces = list(produces_);
  info_.invalidates = list(invalidates_);
  return info_;
}

inline FxNameList PassDef::list(const std::vector<const char*>& names) {
  return FxNameList{names.data(), names.size()};
}

template <PassFn Fn>
PassDef pass(const char* name, const char* description) {
  return PassDef(name, description, &run_pass<Fn>);
}

inline void Registrar::custom_op(const FxCustomOp& op) {
  check(api()->RegisterCustomOp(r_, &op));
}

inline void Registrar::leaf_module_rule(FxLeafModuleFn is_leaf,
                                        void* user_data) {
  check(api()->RegisterLeafModuleRule(r_, is_leaf, user_data));
}

inline void Registrar::decomposition(const char* op,
                                     const OwnedGraph& replacement) {
  require_api_version(4, "RegisterDecomposition");
  check(api()->RegisterDecomposition(r_, op, replacement.get()));
}

inline void Registrar::leaf_op(const char* op) {
  require_api_version(4, "RegisterLeafOp");
  check(api()->RegisterLeafOp(r_, op));
}

template <RegisterFn Fn>
FxStatus* registration(const FxApi* table, FxRegistrar* registrar) {
  api() = table;
  try {
    Registrar r(registrar);
    Fn(r);
    return nullptr;
  } catch (const Error& e) {
    return table->CreateStatus(e.code(), e.what());
  } catch (const std::exception& e) {
    return table->CreateStatus(FX_INTERNAL, e.what());
  } catch (...) {
    return table->CreateStatus(FX_INTERNAL, "unknown exception");
  }
}

inline PluginDef::PluginDef(const char* name, const char* version,
                            std::initializer_list<PassDef> passes,
                            FxRegisterFn register_extensions)
    : passes_(passes) {
  info_.register_extensions = register_extensions;
  for (PassDef& p : passes_) infos_.push_back(p.info());
  info_.name = name;
  info_.version = version;
  info_.api_version = FX_API_VERSION;
  info_.min_api_version = FX_API_VERSION;
  info_.struct_size = sizeof(FxPluginInfo);
  info_.pass_info_size = sizeof(FxPassInfo);
  info_.passes = infos_.data();
  info_.num_passes = infos_.size();
}

}  // namespace fxp

#endif  // FX_PLUGIN_API_PASS_INLINE_HPP_
