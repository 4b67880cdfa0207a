// The inline bodies of the C++ plugin wrapper, declared (and documented) in
// fx/plugin_api.hpp, which includes this file at its end. Include
// fx/plugin_api.hpp, not this file.
//
// This file holds the host access every other body uses (api(), the version
// check, check() and the lent / taken strings) and includes the rest, one
// concept a header: fx/plugin_api_<concept>_inline.hpp.
//
// Every definition here is inline (or a template), as it was inside the
// class, so the wrapper stays header-only: each plugin compiles its own copy
// and links nothing.
#ifndef FX_PLUGIN_API_INLINE_HPP_
#define FX_PLUGIN_API_INLINE_HPP_

// Makes this header self-contained for tools that parse it alone; when
// plugin_api.hpp is the includer its guard makes this a no-op.
#include "fx/plugin_api.hpp"

namespace fxp {

inline const FxApi*& api() {
  static const FxApi* table = nullptr;
  return table;
}

inline void require_api_version(uint32_t version, const char* entry) {
  uint32_t host = api()->version;
  if (host >= version) return;
  throw Error(FX_UNIMPLEMENTED,
              std::string(entry) + " needs fx plugin API version " +
                  std::to_string(version) +
                  ", but the host's table is version " + std::to_string(host) +
                  " (use a newer fx host)");
}

inline void check(FxStatus* status) {
  if (status == nullptr) return;
  FxStatusCode code = api()->GetStatusCode(status);
  std::string message = api()->GetStatusMessage(status);
  api()->ReleaseStatus(status);
  throw Error(code, message);
}

namespace detail {
// A string the host lent, or "" where it answered NULL: the getters answer
// NULL for a NULL, released or stale handle, and neither std::string nor
// std::string_view may be made from NULL.
inline const char* lent(const char* text) { return text ? text : ""; }
}  // namespace detail

inline std::string take_string(char* text) {
  std::string out = text ? text : "";
  api()->ReleaseString(text);
  return out;
}

}  // namespace fxp

// The rest of the wrapper's bodies, one concept a header; each needs only
// the declarations and the host access above.
#include "fx/plugin_api_arg_inline.hpp"        // IWYU pragma: export
#include "fx/plugin_api_graph_inline.hpp"      // IWYU pragma: export
#include "fx/plugin_api_partition_inline.hpp"  // IWYU pragma: export
#include "fx/plugin_api_pass_inline.hpp"       // IWYU pragma: export
#include "fx/plugin_api_rewrite_inline.hpp"    // IWYU pragma: export
#include "fx/plugin_api_run_inline.hpp"        // IWYU pragma: export
#include "fx/plugin_api_shape_env_inline.hpp"  // IWYU pragma: export
#include "fx/plugin_api_tensor_inline.hpp"     // IWYU pragma: export
#include "fx/plugin_api_value_inline.hpp"      // IWYU pragma: export

#endif  // FX_PLUGIN_API_INLINE_HPP_
