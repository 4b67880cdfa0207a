// The options entries of the C function table (OptionsGetBool ..
// OptionsGetListItem): what an FxOptions handle names, the options of the
// pass being called (LentOptions lends them).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/capi/api_internal.h"
#include "host/capi/c_api.h"
#include "host/handles/wrap.h"

namespace fx::host {
namespace internal {

// What an FxOptions handle names: the options of the pass being called.
template <>
struct HostObject<FxOptions> : HandleSlot {
  const FxOptions* options = nullptr;
};

namespace {

const std::pair<std::string, OptionValue>* find_option(const FxOptions* handle,
                                                       const char* name,
                                                       FxOptionType type) {
  const FxOptions& options =
      *require(unwrap_object(handle), "options")->options;
  require(name, "name");
  for (const auto& kv : options.values) {
    if (kv.first == name) {
      if (kv.second.type != type) {
        fail(FX_INVALID_ARGUMENT,
             cat("option '", name, "' has another type than requested"));
      }
      return &kv;
    }
  }
  fail(FX_NOT_FOUND, cat("no option '", name, "' in this pass's schema"));
}

}  // namespace

// OptionsGetBool .. OptionsGetListItem.
void fill_option_entries(FxApi& t) {
  t.OptionsGetBool = [](const FxOptions* o, const char* name, int* out) {
    return guarded("OptionsGetBool", [&] {
      *require(out, "out") = find_option(o, name, FX_OPTION_BOOL)->second.b;
    });
  };
  t.OptionsGetInt = [](const FxOptions* o, const char* name, int64_t* out) {
    return guarded("OptionsGetInt", [&] {
      *require(out, "out") = find_option(o, name, FX_OPTION_INT)->second.i;
    });
  };
  t.OptionsGetFloat = [](const FxOptions* o, const char* name, double* out) {
    return guarded("OptionsGetFloat", [&] {
      *require(out, "out") = find_option(o, name, FX_OPTION_FLOAT)->second.f;
    });
  };
  t.OptionsGetString = [](const FxOptions* o, const char* name,
                          const char** out) {
    return guarded("OptionsGetString", [&] {
      *require(out, "out") =
          find_option(o, name, FX_OPTION_STRING)->second.s.c_str();
    });
  };
  t.OptionsGetListSize = [](const FxOptions* o, const char* name, size_t* out) {
    return guarded("OptionsGetListSize", [&] {
      *require(out, "out") =
          find_option(o, name, FX_OPTION_STRING_LIST)->second.list.size();
    });
  };
  t.OptionsGetListItem = [](const FxOptions* o, const char* name, size_t i,
                            const char** out) {
    return guarded("OptionsGetListItem", [&] {
      const auto& list =
          find_option(o, name, FX_OPTION_STRING_LIST)->second.list;
      if (i >= list.size()) {
        fail(FX_INVALID_ARGUMENT, cat("option '", name, "' has ", list.size(),
                                      " items, no index ", i));
      }
      *require(out, "out") = list[i].c_str();
    });
  };
}

}  // namespace internal

// The scope is destroyed first, so the handle turns stale before the object
// goes.
struct LentOptions::Lent {
  explicit Lent(const FxOptions& options) { object.options = &options; }
  internal::HostObject<FxOptions> object;
  internal::ScopedObject<FxOptions> scope{object};
};

LentOptions::LentOptions(const FxOptions& options)
    : lent_(std::make_unique<Lent>(options)), handle_(lent_->scope.handle()) {}

LentOptions::~LentOptions() = default;

}  // namespace fx::host
