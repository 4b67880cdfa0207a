// Tracer and runtime extensions that plugins register when they are loaded
// (FxPluginInfo.register_extensions): custom ops go into the process-wide
// OpRegistry (a kernel for real tensors, a shape function for meta tensors),
// leaf-module rules into a list the tracer consults.
//
// Registered extensions stay for the life of the process, and so does the
// plugin that provided them (`keep_alive` holds its library).
#ifndef HOST_CAPI_EXTENSIONS_H_
#define HOST_CAPI_EXTENSIONS_H_

#include <memory>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "fx/plugin_api.h"

namespace fx::host {

// Calls info.register_extensions (when set) once per plugin: per library
// content (`sha256` of its file) when given, so a copy of a library loaded
// from another path (a reproducer's plugins/) does not register its custom
// ops twice; per declaration (a plugin compiled into the host) otherwise.
// Errors name the plugin (`origin`) and what it tried to register.
absl::Status register_extensions(const FxPluginInfo& info,
                                 std::string_view origin,
                                 std::string_view sha256,
                                 std::shared_ptr<const void> keep_alive);

// The registered leaf-module rules, in registration order: the first that
// has an opinion decides; std::nullopt when none has.
std::optional<bool> leaf_module_rule(std::string_view module_type,
                                     std::string_view qualified_name);

}  // namespace fx::host

#endif  // HOST_CAPI_EXTENSIONS_H_
