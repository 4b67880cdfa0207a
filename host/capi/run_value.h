// FxValue, what GraphRun and GraphEvaluate lend a plugin's callback: the
// value a node computed, checked like every handle (host/handles/wrap.h)
// while the callback runs (ScopedValue), and the storages a run numbers for
// ValueStorage (RunStorages). Private to host/capi: run_api.cc makes values,
// value_api.cc reads them.
#ifndef HOST_CAPI_RUN_VALUE_H_
#define HOST_CAPI_RUN_VALUE_H_

#include <ATen/core/ivalue.h>
#include <c10/core/Storage.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx/plugin_api.h"
#include "fx_core/ir/node.h"
#include "host/handles/wrap.h"

namespace fx::host::internal {
class RunStorages;
}  // namespace fx::host::internal

// What a node computed, with the metadata a plugin may ask for kept alive
// beside it. Lent to a callback as a checked handle (ScopedValue), as are
// its items.
struct FxValue {
  FxValue(c10::IValue v, const fx::Node* n,
          fx::host::internal::RunStorages* r = nullptr)
      : value(std::move(v)), node(n), run(r) {}
  c10::IValue value;
  const fx::Node* node;  // the node that computed it, if any
  // The storages of the GraphRun it is a value of (ValueStorage), or
  // nullptr (GraphEvaluate).
  fx::host::internal::RunStorages* run;
  mutable std::vector<FxValue> items;
  mutable std::vector<double> scales;
  mutable std::vector<int64_t> zero_points;
  mutable std::string dtype_name;

  // The handle table's slot (HandleTable::handle_of).
  uint32_t external_slot() const { return slot; }
  void set_external_slot(uint32_t s) const { slot = s; }
  mutable uint32_t slot = 0;
};

namespace fx::host::internal {

// The storages a GraphRun has numbered for ValueStorage: 1, 2, 3, ... in
// the order they were first asked about, each kept alive until the run
// returns, so that no later storage takes the address (and the number) of
// one that died.
class RunStorages {
 public:
  uint64_t id_of(const c10::Storage& storage) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, added] =
        ids_.try_emplace(storage.unsafeGetStorageImpl(), kept_.size() + 1);
    if (added) kept_.push_back(storage);
    return it->second;
  }

 private:
  std::mutex mutex_;
  absl::flat_hash_map<const c10::StorageImpl*, uint64_t> ids_;
  std::vector<c10::Storage> kept_;
};

// FxValue <-> its handle, checked like the others (wrap.h).
inline const FxValue* wrap_value(const FxValue* v) {
  return reinterpret_cast<const FxValue*>(handle_of(v, HandleKind::kValue));
}
inline const FxValue* unwrap_value(const FxValue* h) {
  return static_cast<const FxValue*>(checked(h, HandleKind::kValue));
}
inline const FxValue* peek_value(const FxValue* h) {
  return static_cast<const FxValue*>(peeked(h, HandleKind::kValue));
}

// Lends `value` to a callback: handle() is its handle until destruction,
// when it and the handles of its items turn stale.
class ScopedValue {
 public:
  explicit ScopedValue(const FxValue& value) : value_(value) {}
  ~ScopedValue() { forget(value_); }
  ScopedValue(const ScopedValue&) = delete;
  ScopedValue& operator=(const ScopedValue&) = delete;
  const FxValue* handle() const { return wrap_value(&value_); }

 private:
  static void forget(const FxValue& v) {
    for (const FxValue& item : v.items) forget(item);
    HandleTable::instance().forget(&v);
  }
  const FxValue& value_;
};

}  // namespace fx::host::internal

#endif  // HOST_CAPI_RUN_VALUE_H_
