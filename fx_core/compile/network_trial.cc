#include "fx_core/compile/network_trial.h"

#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

bool from_env() {
  const char* v = std::getenv("FX_NETWORK_TRIAL");
  if (v == nullptr || *v == '\0') return true;
  const std::string s = v;
  if (s == "1") return true;
  if (s == "0") return false;
  throw FxError(cat("FX_NETWORK_TRIAL=", s, ": expected 0 or 1"));
}

struct State {
  std::mutex mu;
  std::optional<bool> on;  // unset: from the environment
};

State& state() {
  static State s;
  return s;
}

}  // namespace

bool network_trial() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.on) s.on = from_env();
  return *s.on;
}

void set_network_trial(bool on) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.on = on;
}

}  // namespace fx
