#include "fx_core/compile/network_trial.h"

#include <mutex>
#include <optional>

#include "fx_core/support/env_choice.h"

namespace fx {
namespace {

bool from_env() { return env_choice("FX_NETWORK_TRIAL", {"0", "1"}, 1) == 1; }

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
