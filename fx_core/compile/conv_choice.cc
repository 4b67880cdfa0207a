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
#include "fx_core/compile/network_trial.h"
#include "fx_core/compile/shared_weights.h"
#include "fx_core/support/env_choice.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// A kernel other than oneDNN's first choice is kept when it takes at most
// this share of that one's time.
constexpr double kMargin = 0.95;
constexpr int kTimedRuns = 3;
// Rounds of fused_time_share (one timed run of each way a round).
constexpr int kFusionRounds = 5;

ConvPolicy policy_from_env() {
  constexpr ConvPolicy kPolicies[] = {ConvPolicy::kDirect, ConvPolicy::kMeasure,
                                      ConvPolicy::kWinograd};
  return kPolicies[env_choice("FX_CONV_ALGORITHM",
                              {"direct", "measure", "winograd"}, 1)];
}

FusionPolicy fusion_policy_from_env() {
  constexpr FusionPolicy kPolicies[] = {
      FusionPolicy::kMeasure, FusionPolicy::kAlways, FusionPolicy::kNever};
  return kPolicies[env_choice("FX_DEPTHWISE_FUSION",
                              {"measure", "always", "never"}, 0)];
}

// What a decision depends on besides the weights' values.
using Key = std::tuple<std::vector<int64_t>, std::vector<int64_t>,
                       std::vector<int64_t>, std::vector<int64_t>,
                       std::vector<int64_t>, std::string, bool, bool, int>;

// A kernel: an algorithm and oneDNN's name for the implementation (empty:
// oneDNN's first choice).
struct Kernel {
  ConvAlgorithm algorithm = ConvAlgorithm::kDirect;
  std::string implementation;
};

// A fusion decision's key: the 1x1 convolution's, then the tail's stride,
// activation and whether it has a bias.
using FusionKey = std::tuple<Key, int64_t, std::string, bool>;

struct State {
  std::mutex mu;
  std::optional<ConvPolicy> policy;           // unset: from the environment
  std::optional<FusionPolicy> fusion_policy;  // likewise
  std::map<Key, Kernel> decisions;
  std::map<FusionKey, bool> fusions;
  size_t measurements = 0;
};

State& state() {
  static State s;
  return s;
}

Key key_of(const at::Tensor& w, const at::Tensor& bias,
           const FusedConvParams& p, const std::vector<int64_t>& in) {
  return {w.sizes().vec(),      in,           p.padding,      p.stride,
          p.dilation,           p.activation, bias.defined(), p.has_residual,
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
  // A residual summed in place: `out` itself (nothing copied).
  return best_time(
      kTimedRuns, [&] { conv.run(x, &out, out); },
      [&] { conv.evict_weights(); });
}

// The kernel measure() chose, and whether it timed two or more (oneDNN may
// offer one kernel only, or a candidate may fail to build).
struct Measured {
  Kernel kernel;
  bool timed;
};

// The candidates: oneDNN's direct kernels of its first choice's
// instruction set (OnednnConv::implementations), then its Winograd kernels
// where Winograd applies (at batch 1 it offers F(2x2, 3x3) first, whose
// transformed weights are 1.8x the direct ones, and F(4x4, 3x3), 4x: which
// is faster depends on the shape).
std::vector<Kernel> candidates(const at::Tensor& weight, const at::Tensor& bias,
                               const FusedConvParams& params,
                               const std::vector<int64_t>& input_sizes) {
  std::vector<Kernel> out;
  for (ConvAlgorithm algorithm :
       {ConvAlgorithm::kDirect, ConvAlgorithm::kWinograd}) {
    for (std::string& name : OnednnConv::implementations(
             weight, bias, params, input_sizes, algorithm)) {
      out.push_back({algorithm, std::move(name)});
    }
  }
  return out;
}

// Times every candidate, each packing its own weights (no SharedWeights in
// scope) into memory unmapped when it goes (TransientBlocksScope), so that
// none leaves a packed copy behind. The first candidate (oneDNN's first
// choice) stays unless another is at least 5% faster; a lone candidate is
// not timed. A candidate that oneDNN declines is skipped; one that throws
// (oneDNN, the allocator) leaves oneDNN's first choice, as without a
// measurement.
Measured measure(const at::Tensor& weight, const at::Tensor& bias,
                 const FusedConvParams& params,
                 const std::vector<int64_t>& input_sizes) {
  SharedWeightsScope private_packs(nullptr);
  TransientBlocksScope transient;
  try {
    const std::vector<Kernel> all =
        candidates(weight, bias, params, input_sizes);
    if (all.size() < 2) return {Kernel{}, false};
    std::optional<Kernel> chosen;
    double chosen_time = 0.0, first_time = 0.0;
    int timed = 0;
    for (const Kernel& k : all) {
      std::unique_ptr<OnednnConv> conv = OnednnConv::create(
          weight, bias, params, input_sizes, k.algorithm, k.implementation);
      if (conv == nullptr) continue;
      const double t = cold_weights_time(*conv);
      if (timed++ == 0) {
        first_time = t;
        chosen = k;
        chosen_time = t;
      } else if (t <= kMargin * first_time && t < chosen_time) {
        chosen = k;
        chosen_time = t;
      }
    }
    if (!chosen) return {Kernel{}, false};
    return {*chosen, timed > 1};
  } catch (const std::exception&) {
    return {Kernel{}, false};
  }
}

// The cached decision for this shape, measured on first request. Plans
// built at once on two threads may both measure a new shape; the first
// decision stored is the one both get.
Kernel decision(const at::Tensor& weight, const at::Tensor& bias,
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
  const auto [it, inserted] = s.decisions.emplace(key, m.kernel);
  if (inserted && m.timed) ++s.measurements;
  return it->second;
}

// The cached decision for `key` (decision() made it; entries are never
// erased): a ConvTrial's group.
const void* decision_entry(const Key& key) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return &s.decisions.at(key);
}

// The fused kernel's best time over the two convolutions' apart, on zeros
// with the weights evicted before each run. They are timed in turns, after
// a warm-up run of each: on a shared VM a slow stretch then slows both
// alike (best-of runs of one and then the other let such a stretch decide
// the call: 1,979 against 1,478 us once for a pair whose network times are
// 1,429 and 1,515).
double fused_time_share(OnednnConv& first, OnednnConv& second,
                        OnednnConv& fused) {
  const auto cl = at::TensorOptions()
                      .dtype(at::kFloat)
                      .memory_format(at::MemoryFormat::ChannelsLast);
  at::Tensor x = at::zeros(first.input_sizes(), cl);
  at::Tensor mid = at::empty(first.output_sizes(), cl);
  at::Tensor out = at::empty(fused.output_sizes(), cl);
  auto apart = [&] {
    first.run(x, nullptr, mid);
    second.run(mid, nullptr, out);
  };
  auto together = [&] { fused.run(x, nullptr, out); };
  apart();
  together();
  double best_apart = 1e300, best_together = 1e300;
  for (int round = 0; round < kFusionRounds; ++round) {
    first.evict_weights();
    second.evict_weights();
    best_apart = std::min(best_apart, wall_time(apart));
    fused.evict_weights();
    best_together = std::min(best_together, wall_time(together));
  }
  return best_together / best_apart;
}

// Whether oneDNN's fused kernel for the pair takes at most kMargin of the
// two convolutions' time apart (as choose_onednn_conv builds them); false
// when it has no fused kernel of its own or a build fails.
bool fusion_pays(const at::Tensor& weight, const at::Tensor& bias,
                 const FusedConvParams& params,
                 const std::vector<int64_t>& input_sizes,
                 const DepthwiseTail& tail) {
  SharedWeightsScope private_packs(nullptr);
  TransientBlocksScope transient;
  try {
    std::unique_ptr<OnednnConv> fused = OnednnConv::create_with_depthwise(
        weight, bias, params, input_sizes, tail);
    if (fused == nullptr) return false;
    std::unique_ptr<OnednnConv> first =
        choose_onednn_conv(weight, bias, params, input_sizes);
    if (first == nullptr) return false;
    std::unique_ptr<OnednnConv> second = choose_onednn_conv(
        tail.weight, tail.bias, depthwise_params(tail, weight.size(0)),
        first->output_sizes());
    if (second == nullptr || second->output_sizes() != fused->output_sizes()) {
      return false;
    }
    return fused_time_share(*first, *second, *fused) <= kMargin;
  } catch (const std::exception&) {
    return false;
  }
}

// The cached fusion decision for this shape, measured on first request.
bool fusion_decision(const at::Tensor& weight, const at::Tensor& bias,
                     const FusedConvParams& params,
                     const std::vector<int64_t>& input_sizes,
                     const DepthwiseTail& tail) {
  const FusionKey key{key_of(weight, bias, params, input_sizes), tail.stride,
                      tail.activation, tail.bias.defined()};
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.fusions.find(key);
    if (it != s.fusions.end()) return it->second;
  }
  const bool pays = fusion_pays(weight, bias, params, input_sizes, tail);
  std::lock_guard<std::mutex> lock(s.mu);
  return s.fusions.emplace(key, pays).first->second;
}

}  // namespace

FusedConvParams depthwise_params(const DepthwiseTail& tail, int64_t channels) {
  FusedConvParams p;
  p.stride = {tail.stride, tail.stride};
  p.padding = {1, 1};
  p.dilation = {1, 1};
  p.groups = channels;
  p.activation = tail.activation;
  p.min_val = tail.min_val;
  p.max_val = tail.max_val;
  return p;
}

FusionPolicy depthwise_fusion_policy() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.fusion_policy) s.fusion_policy = fusion_policy_from_env();
  return *s.fusion_policy;
}

void set_depthwise_fusion_policy(FusionPolicy policy) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.fusion_policy = policy;
}

std::unique_ptr<OnednnConv> choose_depthwise_fusion(
    const at::Tensor& weight, const at::Tensor& bias,
    const FusedConvParams& params, const std::vector<int64_t>& input_sizes,
    const DepthwiseTail& tail) {
  const FusionPolicy policy = depthwise_fusion_policy();
  if (policy == FusionPolicy::kNever ||
      (policy == FusionPolicy::kMeasure &&
       (conv_policy() != ConvPolicy::kMeasure ||
        !fusion_decision(weight, bias, params, input_sizes, tail)))) {
    return nullptr;
  }
  return OnednnConv::create_with_depthwise(weight, bias, params, input_sizes,
                                           tail);
}

void record_conv_decision(const at::Tensor& weight, const at::Tensor& bias,
                          const FusedConvParams& params,
                          const std::vector<int64_t>& input_sizes,
                          ConvAlgorithm algorithm,
                          const std::string& implementation) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.decisions[key_of(weight, bias, params, input_sizes)] =
      Kernel{algorithm, implementation};
}

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

std::optional<ConvTrial> conv_trial(const at::Tensor& weight,
                                    const at::Tensor& bias,
                                    const FusedConvParams& params,
                                    const std::vector<int64_t>& input_sizes) {
  if (conv_policy() != ConvPolicy::kMeasure || !network_trial()) {
    return std::nullopt;
  }
  const Kernel kernel = decision(weight, bias, params, input_sizes);
  if (kernel.algorithm == ConvAlgorithm::kDirect) {
    if (kernel.implementation.empty()) return std::nullopt;
    const std::vector<std::string> direct = OnednnConv::implementations(
        weight, bias, params, input_sizes, ConvAlgorithm::kDirect);
    if (direct.empty() || direct.front() == kernel.implementation) {
      return std::nullopt;
    }
  }
  SharedWeightsScope private_packs(nullptr);
  TransientBlocksScope transient;
  try {
    ConvTrial trial;
    trial.measured =
        OnednnConv::create(weight, bias, params, input_sizes, kernel.algorithm,
                           kernel.implementation);
    trial.first_choice = OnednnConv::create(weight, bias, params, input_sizes);
    if (trial.measured == nullptr || trial.first_choice == nullptr ||
        trial.measured->implementation() ==
            trial.first_choice->implementation()) {
      return std::nullopt;
    }
    trial.group = decision_entry(key_of(weight, bias, params, input_sizes));
    return trial;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::unique_ptr<OnednnConv> rebuild_conv(std::unique_ptr<OnednnConv> kernel,
                                         const at::Tensor& weight,
                                         const at::Tensor& bias,
                                         const FusedConvParams& params) {
  std::unique_ptr<OnednnConv> again =
      OnednnConv::create(weight, bias, params, kernel->input_sizes(),
                         kernel->algorithm(), kernel->implementation());
  return again != nullptr ? std::move(again) : std::move(kernel);
}

std::unique_ptr<OnednnConv> choose_onednn_conv(
    const at::Tensor& weight, const at::Tensor& bias,
    const FusedConvParams& params, const std::vector<int64_t>& input_sizes) {
  Kernel kernel;
  switch (conv_policy()) {
    case ConvPolicy::kDirect:
      break;
    case ConvPolicy::kWinograd:
      if (OnednnConv::winograd_applies(weight, params)) {
        kernel.algorithm = ConvAlgorithm::kWinograd;
      }
      break;
    case ConvPolicy::kMeasure:
      kernel = decision(weight, bias, params, input_sizes);
      break;
  }
  if (kernel.algorithm != ConvAlgorithm::kDirect ||
      !kernel.implementation.empty()) {
    std::unique_ptr<OnednnConv> conv =
        OnednnConv::create(weight, bias, params, input_sizes, kernel.algorithm,
                           kernel.implementation);
    if (conv != nullptr) return conv;  // else oneDNN declines it here
  }
  return OnednnConv::create(weight, bias, params, input_sizes);
}

}  // namespace fx
