#include "fx_core/compile/linear_choice.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fx_core/compile/best_time.h"
#include "fx_core/compile/blas_linear.h"
#include "fx_core/compile/cache_flush.h"
#include "fx_core/compile/huge_pages.h"
#include "fx_core/compile/network_trial.h"
#include "fx_core/compile/onednn_linear.h"
#include "fx_core/compile/panel_linear.h"
#include "fx_core/compile/shared_weights.h"
#include "fx_core/runtime/parallel.h"
#include "fx_core/support/env_choice.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// Another kernel is kept over oneDNN when it takes at most this share of
// oneDNN's time.
constexpr double kMargin = 0.95;
constexpr int kTimedRuns = 3;

LinearPolicy policy_from_env() {
  constexpr LinearPolicy kPolicies[] = {
      LinearPolicy::kMeasure, LinearPolicy::kOnednn, LinearPolicy::kPanel,
      LinearPolicy::kBlas, LinearPolicy::kAten};
  return kPolicies[env_choice(
      "FX_LINEAR_KERNEL", {"measure", "onednn", "panel", "blas", "aten"}, 0)];
}

// What a decision depends on besides the weights' values.
using Key = std::tuple<std::vector<int64_t>, std::vector<int64_t>, bool, bool,
                       std::string, int>;

struct State {
  std::mutex mu;
  std::optional<LinearPolicy> policy;  // unset: from the environment
  std::map<Key, LinearKernel> decisions;
  size_t measurements = 0;
  std::map<LinearKernel, size_t> won;
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

// Zero operands of one linear's planned shape.
struct Operands {
  Operands(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
           bool has_residual)
      : x(at::zeros(in)),
        out(at::empty(out)),
        residual(has_residual ? at::zeros(out) : at::Tensor()) {}
  const at::Tensor* residual_or_null() const {
    return residual.defined() ? &residual : nullptr;
  }
  at::Tensor x, out, residual;
};

// The time of `c` on `o`, its weights evicted from the caches before each
// run (as inside a network): its kernel's, or the reference kernel's for
// kAten.
double time_of(const ChosenLinear& c, const at::Tensor& weight,
               const at::Tensor& bias, const FusedLinearParams& p,
               const Operands& o) {
  if (c.impl) {
    return best_time(
        kTimedRuns, [&] { c.impl->run(o.x, o.residual_or_null(), o.out); },
        [&] { c.impl->evict_weights(); });
  }
  const auto ref = reference_linear();
  if (!ref) return 1e300;
  const c10::optional<at::Tensor> b =
      bias.defined() ? c10::optional<at::Tensor>(bias) : c10::nullopt;
  const c10::optional<at::Tensor> r =
      p.has_residual ? c10::optional<at::Tensor>(o.residual) : c10::nullopt;
  return best_time(
      kTimedRuns,
      [&] { ref->call(o.x, weight, b, r, p.activation, p.min_val, p.max_val); },
      [&] {
        flush_from_caches(weight.storage().data(), weight.storage().nbytes());
      });
}

// The index of the candidate kept: the first (oneDNN where it can run the
// op, the default) unless another takes at most kMargin of its time, then
// the fastest other.
size_t fastest(const std::vector<ChosenLinear>& candidates,
               const at::Tensor& weight, const at::Tensor& bias,
               const FusedLinearParams& p) {
  c10::AutoGradMode no_grad(false);  // as the plan runs
  const FusedLinearKernel& any = *candidates.front().impl;
  const Operands o(any.input_sizes(), any.output_sizes(), p.has_residual);
  const double first = time_of(candidates[0], weight, bias, p, o);
  size_t best = 0;
  double best_time = kMargin * first;
  for (size_t i = 1; i < candidates.size(); ++i) {
    const double t = time_of(candidates[i], weight, bias, p, o);
    if (t <= best_time) {
      best = i;
      best_time = t;
    }
  }
  return best;
}

// `kernel` built for this linear; the reference kernel when it cannot run
// it.
ChosenLinear build(LinearKernel kernel, const at::Tensor& weight,
                   const at::Tensor& bias, const FusedLinearParams& params,
                   const std::vector<int64_t>& in) {
  ChosenLinear c;
  if (kernel == LinearKernel::kOnednn) {
    c.impl = OnednnLinear::create(weight, bias, params, in);
  } else if (kernel == LinearKernel::kBlas) {
    c.impl = BlasLinear::create(weight, bias, params, in);
  } else if (kernel == LinearKernel::kPanel) {
    c.impl = PanelLinear::create(weight, bias, params, in);
  }
  if (c.impl) c.kernel = kernel;
  return c;
}

// What a measurement keeps: the kernel, and whether it timed two or more.
struct Measured {
  LinearKernel kernel = LinearKernel::kAten;
  bool timed = false;
};

// The candidates, oneDNN first when it can run the op, timed (fastest())
// each packing its own weights (no SharedWeights in scope) into memory
// unmapped when it goes (TransientBlocksScope), so that no candidate leaves
// a packed copy behind: the winner is built again as any other step. The
// reference kernel is a candidate only where its BLAS does not keep a
// thread pool of its own at more than one thread (see the header). A lone
// candidate is not timed.
Measured measure(const at::Tensor& weight, const at::Tensor& bias,
                 const FusedLinearParams& params,
                 const std::vector<int64_t>& in) {
  SharedWeightsScope private_packs(nullptr);
  TransientBlocksScope transient;
  const LinearKernel other =
      BlasLinear::available() ? LinearKernel::kBlas : LinearKernel::kAten;
  const bool reference_timed =
      !(at::get_num_threads() > 1 && blas_has_own_thread_pool());
  std::vector<ChosenLinear> candidates;
  for (LinearKernel k : {LinearKernel::kOnednn, LinearKernel::kPanel, other}) {
    if (k == LinearKernel::kAten && !reference_timed) continue;
    ChosenLinear c = build(k, weight, bias, params, in);
    if (c.kernel == k) candidates.push_back(std::move(c));
  }
  if (candidates.empty()) return {};
  if (candidates.size() == 1 || !candidates.front().impl) {
    return {candidates.front().kernel, false};
  }
  return {candidates[fastest(candidates, weight, bias, params)].kernel, true};
}

std::optional<LinearKernel> decided(const Key& key) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.decisions.find(key);
  if (it == s.decisions.end()) return std::nullopt;
  return it->second;
}

void record(const Key& key, LinearKernel kernel) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.decisions[key] = kernel;
  ++s.measurements;
  ++s.won[kernel];
}

// kMeasure's kernel for this linear: the cached decision, measured on first
// request.
LinearKernel measured_kernel(const at::Tensor& weight, const at::Tensor& bias,
                             const FusedLinearParams& params,
                             const std::vector<int64_t>& input_sizes) {
  const Key key = key_of(weight, bias, params, input_sizes);
  if (const std::optional<LinearKernel> known = decided(key)) return *known;
  const Measured m = measure(weight, bias, params, input_sizes);
  if (m.timed) record(key, m.kernel);
  return m.kernel;
}

// The cached decision for `key` (entries are never erased); nullptr when
// none was recorded (a lone candidate, not timed): a LinearTrial's group.
const void* decision_entry(const Key& key) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.decisions.find(key);
  return it == s.decisions.end() ? nullptr : &it->second;
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

size_t linear_measurements_won_by(LinearKernel kernel) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.won.find(kernel);
  return it == s.won.end() ? 0 : it->second;
}

std::optional<LinearTrial> linear_trial(
    const at::Tensor& weight, const at::Tensor& bias,
    const FusedLinearParams& params, const std::vector<int64_t>& input_sizes) {
  if (linear_policy() != LinearPolicy::kMeasure || !network_trial()) {
    return std::nullopt;
  }
  const LinearKernel kernel =
      measured_kernel(weight, bias, params, input_sizes);
  if (kernel != LinearKernel::kOnednn && kernel != LinearKernel::kPanel) {
    return std::nullopt;
  }
  const LinearKernel other = kernel == LinearKernel::kOnednn
                                 ? LinearKernel::kPanel
                                 : LinearKernel::kOnednn;
  const void* group = decision_entry(key_of(weight, bias, params, input_sizes));
  if (group == nullptr) return std::nullopt;
  SharedWeightsScope private_packs(nullptr);
  TransientBlocksScope transient;
  try {
    LinearTrial trial{build(kernel, weight, bias, params, input_sizes),
                      build(other, weight, bias, params, input_sizes), group};
    if (trial.measured.kernel != kernel || trial.other.kernel != other) {
      return std::nullopt;
    }
    return trial;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

ChosenLinear rebuild_linear(ChosenLinear kernel, const at::Tensor& weight,
                            const at::Tensor& bias,
                            const FusedLinearParams& params,
                            const std::vector<int64_t>& input_sizes) {
  ChosenLinear again = build(kernel.kernel, weight, bias, params, input_sizes);
  return again.kernel == kernel.kernel ? std::move(again) : std::move(kernel);
}

ChosenLinear choose_linear(const at::Tensor& weight, const at::Tensor& bias,
                           const FusedLinearParams& params,
                           const std::vector<int64_t>& input_sizes) {
  auto make = [&](LinearKernel kernel) {
    return build(kernel, weight, bias, params, input_sizes);
  };
  switch (linear_policy()) {
    case LinearPolicy::kAten:
      return ChosenLinear();
    case LinearPolicy::kOnednn:
      return make(LinearKernel::kOnednn);
    case LinearPolicy::kBlas:
      return make(LinearKernel::kBlas);
    case LinearPolicy::kPanel:
      return make(LinearKernel::kPanel);
    case LinearPolicy::kMeasure:
      break;
  }
  return make(measured_kernel(weight, bias, params, input_sizes));
}

}  // namespace fx
