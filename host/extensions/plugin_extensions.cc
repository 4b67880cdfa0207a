#include "host/extensions/plugin_extensions.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "fx_core/support/strings.h"
#include "host/capi/c_api.h"
#include "host/capi/extensions.h"

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "the version-1 slot wrappers are written for x86-64 and AArch64"
#endif

namespace fx::host {
namespace {

// One plugin's registration: its declaration with register_extensions
// wrapped (record_registration), the table handed to it, what it registered.
struct Record {
  FxPluginInfo info{};
  FxRegisterFn registers = nullptr;  // the plugin's own register_extensions
  FxApi table{};                     // the host's, its Register* recording
  FxRegistrar* registrar = nullptr;  // while the plugin registers
  PluginExtensions extensions;
};

struct Records {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<Record>> by_key;  // never erased
};

Records& records() {
  static auto* r = new Records();
  return *r;
}

// The registration running on this thread (register_plugin_extensions).
thread_local Record* current = nullptr;

// Library content, or the declaration of a plugin compiled into the host:
// what the host's registries register once (extensions.h).
std::string key_of(const Plugin& plugin) {
  if (!plugin.sha256().empty()) return plugin.sha256();
  return cat("built in ", reinterpret_cast<uintptr_t>(&plugin.info()));
}

// Adds to the record of the registration in progress when `registrar` is
// its registrar and the host accepted the call (`status` NULL).
template <typename Add>
void record(const void* registrar, const FxStatus* status, Add add) {
  Record* r = current;
  if (status != nullptr || r == nullptr || r->registrar != registrar) return;
  std::lock_guard<std::mutex> lock(records().mutex);
  add(r->extensions);
}

void record_custom_op(const void* registrar, const FxStatus* status,
                      const FxCustomOp* op) {
  record(registrar, status, [op](PluginExtensions& e) {
    e.custom_ops.push_back(
        {op->target, op->signature ? op->signature : "", op->shape != nullptr});
  });
}

void record_leaf_module_rule(const void* registrar, const FxStatus* status) {
  record(registrar, status, [](PluginExtensions& e) { ++e.leaf_module_rules; });
}

// The recording entries: each calls the host's and records what it took.
FxStatus* custom_op(FxRegistrar* registrar, const FxCustomOp* op) {
  FxStatus* status = api()->RegisterCustomOp(registrar, op);
  record_custom_op(registrar, status, op);
  return status;
}

FxStatus* leaf_module_rule(FxRegistrar* registrar, FxLeafModuleFn is_leaf,
                           void* user_data) {
  FxStatus* status =
      api()->RegisterLeafModuleRule(registrar, is_leaf, user_data);
  record_leaf_module_rule(registrar, status);
  return status;
}

FxStatus* decomposition(FxRegistrar* registrar, const char* op,
                        const FxGraph* replacement) {
  FxStatus* status = api()->RegisterDecomposition(registrar, op, replacement);
  record(registrar, status,
         [op](PluginExtensions& e) { e.decompositions.emplace_back(op); });
  return status;
}

FxStatus* leaf_op(FxRegistrar* registrar, const char* op) {
  FxStatus* status = api()->RegisterLeafOp(registrar, op);
  record(registrar, status,
         [op](PluginExtensions& e) { e.leaf_ops.emplace_back(op); });
  return status;
}

FxStatus* backend(FxRegistrar* registrar, const FxBackendInfo* info) {
  FxStatus* status = api()->RegisterBackend(registrar, info);
  record(registrar, status,
         [info](PluginExtensions& e) { e.backends.emplace_back(info->name); });
  return status;
}

// Slots 99 and 100 of the version-1 table hold the host's forwarders
// (first_release_forwarding.cc): the first release's RegisterCustomOp and
// RegisterLeafModuleRule, or the second release's GraphNumExampleInputs and
// GraphExampleInput. These call the host's forwarder through its own type
// and record a call whose first argument is the registrar in progress
// (then it was the first release's registration, returning a status).
using Word = std::uintptr_t;
using Slot99 = Word (*)(void*, void*);
using Slot100 = Word (*)(void*, void*, void*);

template <typename To, typename From>
To retype(From entry) {
  using Generic = void (*)(void);
  return reinterpret_cast<To>(reinterpret_cast<Generic>(entry));
}

Word v1_slot99(void* a0, void* a1) {
  Word result = retype<Slot99>(api(1)->GraphNumExampleInputs)(a0, a1);
  if (current != nullptr && current->registrar == a0) {
    record_custom_op(a0, reinterpret_cast<FxStatus*>(result),
                     static_cast<const FxCustomOp*>(a1));
  }
  return result;
}

Word v1_slot100(void* a0, void* a1, void* a2) {
  Word result = retype<Slot100>(api(1)->GraphExampleInput)(a0, a1, a2);
  if (current != nullptr && current->registrar == a0) {
    record_leaf_module_rule(a0, reinterpret_cast<FxStatus*>(result));
  }
  return result;
}

// `host` (a table api() hands out) with its registration entries recording;
// entries the host's version lacks stay NULL.
FxApi recording_table(const FxApi& host) {
  FxApi t = host;
  if (t.RegisterCustomOp) t.RegisterCustomOp = custom_op;
  if (t.RegisterLeafModuleRule) t.RegisterLeafModuleRule = leaf_module_rule;
  if (t.RegisterDecomposition) t.RegisterDecomposition = decomposition;
  if (t.RegisterLeafOp) t.RegisterLeafOp = leaf_op;
  if (t.RegisterBackend) t.RegisterBackend = backend;
  if (t.version == 1) {
    t.GraphNumExampleInputs =
        retype<decltype(t.GraphNumExampleInputs)>(&v1_slot99);
    t.GraphExampleInput = retype<decltype(t.GraphExampleInput)>(&v1_slot100);
  }
  return t;
}

// Clears the registrar in progress however the plugin's function ends.
class Registering {
 public:
  Registering(Record& r, FxRegistrar* registrar) : r_(r) {
    r_.registrar = registrar;
  }
  ~Registering() { r_.registrar = nullptr; }
  Registering(const Registering&) = delete;
  Registering& operator=(const Registering&) = delete;

 private:
  Record& r_;
};

// Record::info's register_extensions: hands the plugin's own function the
// recording copy of the host's table.
FxStatus* record_registration(const FxApi* host, FxRegistrar* registrar) {
  Record& r = *current;
  r.table = recording_table(*host);
  Registering registering(r, registrar);
  return r.registers(&r.table, registrar);
}

// The record of `plugin`'s content, made on first use. Only the version-1
// fields of its declaration are copied (all register_extensions reads): an
// older plugin's FxPluginInfo may end there.
Record& record_of(const Plugin& plugin) {
  Records& all = records();
  std::lock_guard<std::mutex> lock(all.mutex);
  std::unique_ptr<Record>& r = all.by_key[key_of(plugin)];
  if (r) return *r;
  r = std::make_unique<Record>();
  const FxPluginInfo& info = plugin.info();
  r->info.name = info.name;
  r->info.version = info.version;
  r->info.api_version = info.api_version;
  r->info.min_api_version = info.min_api_version;
  r->info.passes = info.passes;
  r->info.num_passes = info.num_passes;
  r->info.register_extensions = record_registration;
  r->registers = info.register_extensions;
  return *r;
}

// Sets the registration in progress on this thread for a scope.
class Current {
 public:
  explicit Current(Record& r) : saved_(current) { current = &r; }
  ~Current() { current = saved_; }
  Current(const Current&) = delete;
  Current& operator=(const Current&) = delete;

 private:
  Record* saved_;
};

}  // namespace

absl::Status register_plugin_extensions(std::shared_ptr<const Plugin> plugin) {
  std::string origin = plugin->path().empty() ? "built in" : plugin->path();
  std::string sha256 = plugin->sha256();
  const FxPluginInfo& info = plugin->info();  // before plugin moves
  if (info.register_extensions == nullptr) {
    return register_extensions(info, origin, sha256, std::move(plugin));
  }
  Record& r = record_of(*plugin);
  Current registering(r);
  return register_extensions(r.info, origin, sha256, std::move(plugin));
}

PluginExtensions plugin_extensions(const Plugin& plugin) {
  Records& all = records();
  std::lock_guard<std::mutex> lock(all.mutex);
  auto it = all.by_key.find(key_of(plugin));
  return it == all.by_key.end() ? PluginExtensions() : it->second->extensions;
}

}  // namespace fx::host
