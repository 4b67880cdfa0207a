// What each plugin registered when it was loaded (FxPluginInfo.
// register_extensions): custom ops, leaf-module rules, make_fx's
// decompositions and leaf operators, backends. The host's registries
// (host/capi/extensions.h) keep what was registered but not who
// registered it; `fx plugins` shows it per plugin.
//
// How it is recorded. register_plugin_extensions calls the host's
// register_extensions with the plugin's declaration, but with its
// register_extensions function wrapped: the plugin is handed a copy of the
// host's table in which the Register* entries forward to the host's and,
// when the host accepts a registration, record it. The copy lives as long
// as the process (as the host's tables do), so a plugin that keeps the
// table it was handed keeps a valid one; outside registration its entries
// behave as the host's. Version-1 tables get the same for the first
// release's registration slots (first_release_forwarding.cc): a call whose
// first argument is the registrar of the registration in progress is
// recorded there too.
//
// Registration happens once per plugin (per library content, as the host's
// registries count them; per declaration for a plugin compiled into the
// host), and so does recording: every Plugin object of that content reads
// the same record.
#ifndef HOST_EXTENSIONS_PLUGIN_EXTENSIONS_H_
#define HOST_EXTENSIONS_PLUGIN_EXTENSIONS_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "host/loader/plugin_loader.h"

namespace fx::host {

// A custom op (RegisterCustomOp): its call_function target, its Python-style
// signature and whether it has a shape function (runs on meta tensors
// need one).
struct RegisteredCustomOp {
  std::string target;
  std::string signature;
  bool has_shape_function = false;
};

// Everything one plugin registered, in registration order.
struct PluginExtensions {
  std::vector<RegisteredCustomOp> custom_ops;
  size_t leaf_module_rules = 0;             // RegisterLeafModuleRule calls
  std::vector<std::string> decompositions;  // make_fx: "aten::silu"
  std::vector<std::string> leaf_ops;        // make_fx: "aten::layer_norm"
  std::vector<std::string> backends;        // RegisterBackend names

  bool empty() const {
    return custom_ops.empty() && leaf_module_rules == 0 &&
           decompositions.empty() && leaf_ops.empty() && backends.empty();
  }
};

// register_extensions (host/capi/extensions.h) for `plugin`, which
// keeps its library loaded, recording what it registers. Errors are the
// host's.
absl::Status register_plugin_extensions(std::shared_ptr<const Plugin> plugin);

// What `plugin` (or an earlier plugin of the same content) registered
// through register_plugin_extensions; empty when nothing (or nothing
// recorded).
PluginExtensions plugin_extensions(const Plugin& plugin);

}  // namespace fx::host

#endif  // HOST_EXTENSIONS_PLUGIN_EXTENSIONS_H_
