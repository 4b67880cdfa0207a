#include "host/pipeline/pass_call.h"

#include <cstring>
#include <exception>
#include <memory>

#include "absl/status/status.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/capi/c_api.h"

namespace fx::host {
namespace {

std::string_view status_code_name(FxStatusCode code) {
  switch (code) {
    case FX_OK:
      return "OK";
    case FX_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case FX_NOT_FOUND:
      return "NOT_FOUND";
    case FX_FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case FX_UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case FX_INTERNAL:
      return "INTERNAL";
  }
  return "UNKNOWN";
}

// The worker's bytes: `changed` (one byte), the error's size, the error,
// then (on success) the target's changes.
std::string encode_result(const PassCallResult& result,
                          const std::string& changes) {
  uint64_t size = result.error.size();
  std::string bytes(1, result.claimed_changed ? '\1' : '\0');
  bytes.append(reinterpret_cast<const char*>(&size), sizeof size);
  return bytes + result.error + changes;
}

// Reads encode_result's bytes; the changes are left in `changes`.
bool decode_result(std::string_view bytes, PassCallResult* result,
                   std::string_view* changes) {
  uint64_t size = 0;
  if (bytes.size() < 1 + sizeof size) return false;
  std::memcpy(&size, bytes.data() + 1, sizeof size);
  if (bytes.size() - 1 - sizeof size < size) return false;
  result->claimed_changed = bytes[0] != '\0';
  result->error = std::string(bytes.substr(1 + sizeof size, size));
  *changes = bytes.substr(1 + sizeof size + size);
  return true;
}

// What the worker does: the call, then its result and the target's
// changes. A graph that does not lint cannot be written as a file, so the
// worker says so as the host's verification would.
std::string work_in_worker(const ScheduledPass& pass, PassTarget& target) {
  PassCallResult result = call_pass(pass, target);
  std::string changes;
  if (result.error.empty()) {
    try {
      target.lint();
    } catch (const FxError& e) {
      result.error = cat("it left an invalid graph: ", e.what());
      return encode_result(result, changes);
    }
    try {
      changes = target.encode_changes();
    } catch (const std::exception& e) {
      result.error = cat("the worker cannot send its result: ", e.what());
    }
  }
  return encode_result(result, changes);
}

}  // namespace

PassCallResult call_pass(const ScheduledPass& pass, PassTarget& target) {
  const FxPassInfo& info = *pass.pass->info;
  Graph& graph = target.graph();
  std::unique_ptr<ScopedAttributeStore> scope;
  if (target.attributes() != nullptr) {
    scope = std::make_unique<ScopedAttributeStore>(&graph, target.attributes());
  }
  PassCallResult result;
  int changed = 0;
  FxStatus* status = nullptr;
  const FxApi* table = api(pass.pass->plugin->info().api_version);
  try {
    LentOptions options(pass.options);
    status = info.run(table, to_handle(&graph), options.handle(),
                      info.user_data, &changed);
  } catch (const std::exception& e) {
    result.error = cat("an exception escaped the plugin: ", e.what());
  } catch (...) {
    result.error = "an exception escaped the plugin";
  }
  if (status != nullptr) {
    StatusText text = take_status(status);
    result.error = cat(status_code_name(text.code), ": ", text.message);
  }
  free_released_graphs();
  result.claimed_changed = changed != 0;
  return result;
}

PassCallResult call_pass_isolated(const ScheduledPass& pass, PassTarget& target,
                                  const WorkerLimits& limits) {
  WorkerOutcome outcome = run_in_worker(
      [&pass, &target] { return work_in_worker(pass, target); }, limits);
  PassCallResult result;
  if (!outcome.ok) {
    result.error = outcome.failure;
    return result;
  }
  std::string_view changes;
  if (!decode_result(outcome.result, &result, &changes)) {
    result.error = "the worker process sent an unreadable result";
    return result;
  }
  if (!result.error.empty()) return result;
  absl::Status applied = target.apply_changes(changes);
  if (!applied.ok()) {
    result.error = cat("the worker's result could not be applied: ",
                       std::string(applied.message()));
  }
  return result;
}

}  // namespace fx::host
