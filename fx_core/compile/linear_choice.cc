#include "fx_core/compile/linear_choice.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "fx_core/runtime/parallel.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// The reference kernel is chosen when it takes at most this share of
// oneDNN's time.
constexpr double kAtenMargin = 0.95;
constexpr int kTimedRuns = 3;

LinearPolicy policy_from_env() {
  const char* v = std::getenv("FX_LINEAR_KERNEL");
  if (v == nullptr || *v == '\0') return LinearPolicy::kMeasure;
  const std::string s = v;
  if (s == "measure") return LinearPolicy::kMeasure;
  if (s == "onednn") return LinearPolicy::kOnednn;
  if (s == "aten") return LinearPolicy::kAten;
  throw FxError(
      cat("FX_LINEAR_KERNEL=", s, ": expected measure, onednn or aten"));
}

// What a decision depends on besides the weights' values.
using Key = std::tuple<std::vector<int64_t>, std::vector<int64_t>, bool, bool,
                       std::string, int>;

struct State {
  std::mutex mu;
  std::optional<LinearPolicy> policy;  // unset: from the environment
  std::map<Key, bool> aten_wins;
  size_t measurements = 0, won_by_aten = 0;
};

State& state() {
  static State s;
  return s;
}

Key key_of(const at::Tensor& w, const at::Tensor& bias,
           const FusedLinearParams& p, const std::vector<int64_t>& in) {
  return {w.sizes().vec(), in,           bias.defined(),
          p.has_residual,  p.activation, at::get_num_threads()};
}

using ReferenceLinear = at::Tensor(const at::Tensor&, const at::Tensor&,
                                   const c10::optional<at::Tensor>&,
                                   const c10::optional<at::Tensor>&,
                                   c10::string_view, double, double);

// fx_inference.linear's reference kernel as PyTorch's dispatcher has it
// (the op the plan's registry entry runs); nullopt when the custom op is not
// registered in this process.
std::optional<c10::TypedOperatorHandle<ReferenceLinear>> reference_linear() {
  c10::optional<c10::OperatorHandle> op =
      c10::Dispatcher::singleton().findSchema({"fx_inference::linear", ""});
  if (!op) return std::nullopt;
  return op->typed<ReferenceLinear>();
}

// The best of kTimedRuns wall times of `run`, after a warm-up run.
template <typename Run>
double best_time(Run run) {
  run();
  double best = 1e300;
  for (int i = 0; i < kTimedRuns; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    const std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  return best;
}

// Whether the reference kernel is enough faster than `linear` on zeros.
bool aten_is_faster(OnednnLinear& linear, const at::Tensor& weight,
                    const at::Tensor& bias, const FusedLinearParams& p,
                    const c10::TypedOperatorHandle<ReferenceLinear>& ref) {
  c10::AutoGradMode no_grad(false);  // as the plan runs
  const at::Tensor x = at::zeros(linear.input_sizes());
  const at::Tensor out = at::empty(linear.output_sizes());
  const at::Tensor residual =
      p.has_residual ? at::zeros(linear.output_sizes()) : at::Tensor();
  const double onednn = best_time(
      [&] { linear.run(x, p.has_residual ? &residual : nullptr, out); });
  const c10::optional<at::Tensor> b =
      bias.defined() ? c10::optional<at::Tensor>(bias) : c10::nullopt;
  const c10::optional<at::Tensor> r =
      p.has_residual ? c10::optional<at::Tensor>(residual) : c10::nullopt;
  const double aten = best_time(
      [&] { ref.call(x, weight, b, r, p.activation, p.min_val, p.max_val); });
  return aten <= kAtenMargin * onednn;
}

}  // namespace

LinearPolicy linear_policy() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.policy) s.policy = policy_from_env();
  return *s.policy;
}

void set_linear_policy(LinearPolicy policy) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.policy = policy;
}

size_t linear_measurements() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.measurements;
}

size_t linear_measurements_won_by_aten() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.won_by_aten;
}

std::unique_ptr<OnednnLinear> choose_onednn_linear(
    const at::Tensor& weight, const at::Tensor& bias,
    const FusedLinearParams& params, const std::vector<int64_t>& input_sizes) {
  LinearPolicy policy = linear_policy();
  if (policy == LinearPolicy::kAten) return nullptr;
  if (policy == LinearPolicy::kMeasure && at::get_num_threads() > 1 &&
      blas_has_own_thread_pool()) {
    policy = LinearPolicy::kOnednn;
  }
  const Key key = key_of(weight, bias, params, input_sizes);
  std::optional<bool> decided;
  State& s = state();
  if (policy == LinearPolicy::kMeasure) {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.aten_wins.find(key);
    if (it != s.aten_wins.end()) decided = it->second;
  }
  if (decided == true) return nullptr;
  std::unique_ptr<OnednnLinear> linear =
      OnednnLinear::create(weight, bias, params, input_sizes);
  if (linear == nullptr || policy == LinearPolicy::kOnednn || decided) {
    return linear;
  }
  const auto ref = reference_linear();
  if (!ref) return linear;
  const bool aten_wins = aten_is_faster(*linear, weight, bias, params, *ref);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.aten_wins[key] = aten_wins;
    ++s.measurements;
    if (aten_wins) ++s.won_by_aten;
  }
  return aten_wins ? nullptr : std::move(linear);
}

}  // namespace fx
