#include "fx_core/compile/conv_choice.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "fx_core/compile/best_time.h"
#include "fx_core/compile/huge_pages.h"
#include "fx_core/compile/shared_weights.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// Winograd is kept when it takes at most this share of the direct time.
constexpr double kWinogradMargin = 0.95;
constexpr int kTimedRuns = 3;

ConvPolicy policy_from_env() {
  const char* v = std::getenv("FX_CONV_ALGORITHM");
  if (v == nullptr || *v == '\0') return ConvPolicy::kMeasure;
  const std::string s = v;
  if (s == "measure") return ConvPolicy::kMeasure;
  if (s == "direct") return ConvPolicy::kDirect;
  if (s == "winograd") return ConvPolicy::kWinograd;
  throw FxError(
      cat("FX_CONV_ALGORITHM=", s, ": expected direct, measure or winograd"));
}

// What a decision depends on besides the weights' values.
using Key = std::tuple<std::vector<int64_t>, std::vector<int64_t>,
                       std::vector<int64_t>, std::string, bool, int>;

struct State {
  std::mutex mu;
  std::optional<ConvPolicy> policy;  // unset: from the environment
  std::map<Key, ConvAlgorithm> decisions;
  size_t measurements = 0;
};

State& state() {
  static State s;
  return s;
}

Key key_of(const at::Tensor& w, const at::Tensor& bias,
           const FusedConvParams& p, const std::vector<int64_t>& in) {
  return {w.sizes().vec(),      in, p.padding, p.activation, bias.defined(),
          at::get_num_threads()};
}

// The best time of `conv` on zeros (best_time.h), each run with its weights
// evicted from the caches first: inside a network a convolution's weights
// come from memory (the layers between its runs stream every other layer's
// weights through the caches), while its input was written by the step
// before it.
double cold_weights_time(OnednnConv& conv) {
  const auto cl = at::TensorOptions().dtype(at::kFloat);
  at::Tensor x = at::zeros(conv.input_sizes(), cl)
                     .contiguous(at::MemoryFormat::ChannelsLast);
  at::Tensor out = at::empty(conv.output_sizes(),
                             cl.memory_format(at::MemoryFormat::ChannelsLast));
  return best_time(
      kTimedRuns, [&] { conv.run(x, nullptr, out); },
      [&] { conv.evict_weights(); });
}

// The algorithm measure() chose, and whether it timed both (oneDNN may
// decline Winograd for the shape, or a candidate may fail to build).
struct Measured {
  ConvAlgorithm algorithm;
  bool timed;
};

// Times both algorithms on candidates that pack their own weights (no
// SharedWeights in scope) into memory unmapped when they go
// (TransientBlocksScope), so that neither leaves a packed copy behind.
// A candidate that throws (oneDNN, the allocator) leaves the direct kernel
// chosen, as without a measurement.
Measured measure(const at::Tensor& weight, const at::Tensor& bias,
                 const FusedConvParams& params,
                 const std::vector<int64_t>& input_sizes) {
  SharedWeightsScope private_packs(nullptr);
  TransientBlocksScope transient;
  try {
    std::unique_ptr<OnednnConv> wino = OnednnConv::create(
        weight, bias, params, input_sizes, ConvAlgorithm::kWinograd);
    if (wino == nullptr) return {ConvAlgorithm::kDirect, false};
    std::unique_ptr<OnednnConv> direct =
        OnednnConv::create(weight, bias, params, input_sizes);
    if (direct == nullptr) return {ConvAlgorithm::kWinograd, false};
    const bool wino_wins = cold_weights_time(*wino) <=
                           kWinogradMargin * cold_weights_time(*direct);
    return {wino_wins ? ConvAlgorithm::kWinograd : ConvAlgorithm::kDirect,
            true};
  } catch (const std::exception&) {
    return {ConvAlgorithm::kDirect, false};
  }
}

// The cached decision for this shape, measured on first request. Plans
// built at once on two threads may both measure a new shape; the first
// decision stored is the one both get.
ConvAlgorithm decision(const at::Tensor& weight, const at::Tensor& bias,
                       const FusedConvParams& params,
                       const std::vector<int64_t>& input_sizes) {
  const Key key = key_of(weight, bias, params, input_sizes);
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.decisions.find(key);
    if (it != s.decisions.end()) return it->second;
  }
  const Measured m = measure(weight, bias, params, input_sizes);
  std::lock_guard<std::mutex> lock(s.mu);
  const auto [it, inserted] = s.decisions.emplace(key, m.algorithm);
  if (inserted && m.timed) ++s.measurements;
  return it->second;
}

}  // namespace

ConvPolicy conv_policy() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.policy) s.policy = policy_from_env();
  return *s.policy;
}

void set_conv_policy(ConvPolicy policy) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.policy = policy;
}

size_t conv_measurements() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.measurements;
}

std::unique_ptr<OnednnConv> choose_onednn_conv(
    const at::Tensor& weight, const at::Tensor& bias,
    const FusedConvParams& params, const std::vector<int64_t>& input_sizes) {
  const ConvPolicy policy = conv_policy();
  ConvAlgorithm algorithm = ConvAlgorithm::kDirect;
  if (policy != ConvPolicy::kDirect &&
      OnednnConv::winograd_applies(weight, params)) {
    algorithm = policy == ConvPolicy::kWinograd
                    ? ConvAlgorithm::kWinograd
                    : decision(weight, bias, params, input_sizes);
  }
  if (algorithm == ConvAlgorithm::kWinograd) {
    std::unique_ptr<OnednnConv> wino = OnednnConv::create(
        weight, bias, params, input_sizes, ConvAlgorithm::kWinograd);
    if (wino != nullptr) return wino;  // else oneDNN declines it here
  }
  return OnednnConv::create(weight, bias, params, input_sizes);
}

}  // namespace fx
