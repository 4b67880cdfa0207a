#include "fx_core/capture/capture_extensions.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Exception.h>

#include <exception>
#include <mutex>
#include <utility>

#include "fx_core/support/error.h"

namespace fx::capture {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, Decomposition> decompositions;
  std::map<std::string, std::string> origins;  // op -> who registered it
  std::vector<std::string> leaf_ops;
};

Registry& registry() {
  static auto* r = new Registry();
  return *r;
}

// `decomposition` with its errors turned into one FxError naming the
// operator and the plugin.
Decomposition naming_errors(const std::string& op, Decomposition decomposition,
                            const std::string& origin) {
  return [op, origin, decomposition = std::move(decomposition)](
             const std::vector<c10::IValue>& args) {
    try {
      return decomposition(args);
    } catch (const c10::Error& e) {
      throw FxError("make_fx: the decomposition of " + op +
                    " registered by plugin '" + origin +
                    "' failed: " + e.what_without_backtrace());
    } catch (const std::exception& e) {
      throw FxError("make_fx: the decomposition of " + op +
                    " registered by plugin '" + origin +
                    "' failed: " + e.what());
    }
  };
}

// Checks `op` is free in `r` (its mutex held).
void check_free(const Registry& r, const std::string& name,
                const std::string& origin) {
  auto taken = r.origins.find(name);
  if (taken != r.origins.end()) {
    throw FxError("plugin '" + origin + "' registers " + name +
                  " for make_fx, but plugin '" + taken->second +
                  "' already registered a decomposition or leaf rule for it");
  }
}

}  // namespace

std::string canonical_op_name(const std::string& op) {
  auto colons = op.find("::");
  auto dot = op.find('.', colons == std::string::npos ? 0 : colons);
  std::string base = op.substr(0, dot);
  std::string overload = dot == std::string::npos ? "" : op.substr(dot + 1);
  if (overload == "default") overload.clear();
  if (colons == std::string::npos ||
      !c10::Dispatcher::singleton().findOp({base, overload}).has_value()) {
    throw FxError("no ATen operator " + op +
                  " (spell it aten::NAME or aten::NAME.OVERLOAD)");
  }
  return overload.empty() ? base : base + "." + overload;
}

void register_capture_extensions(
    const std::vector<CaptureExtension>& extensions,
    const std::string& origin) {
  std::vector<std::string> names;
  for (const CaptureExtension& e : extensions) {
    names.push_back(canonical_op_name(e.op));
    for (size_t i = 0; i + 1 < names.size(); ++i) {
      if (names[i] == names.back()) {
        throw FxError("plugin '" + origin + "' registers " + names.back() +
                      " for make_fx twice");
      }
    }
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const std::string& name : names) check_free(r, name, origin);
  for (size_t i = 0; i < names.size(); ++i) {
    if (extensions[i].decomposition) {
      r.decompositions[names[i]] =
          naming_errors(names[i], extensions[i].decomposition, origin);
    } else {
      r.leaf_ops.push_back(names[i]);
    }
    r.origins[names[i]] = origin;
  }
}

void check_unregistered(const std::string& op, const std::string& origin) {
  std::string name = canonical_op_name(op);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  check_free(r, name, origin);
}

void register_decomposition(const std::string& op, Decomposition decomposition,
                            const std::string& origin) {
  if (!decomposition) {
    throw FxError("plugin '" + origin +
                  "' registers an empty decomposition of " + op);
  }
  register_capture_extensions({{op, std::move(decomposition)}}, origin);
}

void register_leaf_op(const std::string& op, const std::string& origin) {
  register_capture_extensions({{op, nullptr}}, origin);
}

RegisteredExtensions registered_extensions() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return {r.decompositions, r.leaf_ops};
}

std::string registered_origin(const std::string& op) {
  std::string name;
  try {
    name = canonical_op_name(op);
  } catch (const FxError&) {
    return "";
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto found = r.origins.find(name);
  return found == r.origins.end() ? "" : found->second;
}

}  // namespace fx::capture
