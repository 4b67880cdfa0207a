// Eval-mode BatchNorm2d as libfx_inference's passes see it: a module call
// normalising by its running statistics, which fold_bn folds into the
// convolution before it and fuse_pointwise turns into x * scale + shift
// (one multiply and one add per element, per-channel scale and shift) where
// no convolution precedes it. Also the float32 attribute reading and
// writing both need.
#ifndef PLUGINS_INFERENCE_BATCH_NORM_H_
#define PLUGINS_INFERENCE_BATCH_NORM_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"

namespace fx_inference {

// Whether `bn` is a call of a BatchNorm2d in eval mode (or of unknown mode,
// on an older host) with running statistics, on one input alone.
bool is_batch_norm(fxp::Graph& g, const fxp::Node& bn);

// The values of a contiguous float32 attribute (its shape in *shape when
// given); nullopt for any other attribute.
std::optional<std::vector<double>> float_values(const fxp::Graph& g,
                                                const std::string& name,
                                                std::vector<int64_t>* shape);

// Stores `values` as a new float32 attribute of `shape` named `base` (or
// base_1, ...: fresh_attr_name) and returns its name.
std::string store_float(fxp::Graph& g, const std::string& base,
                        const std::vector<int64_t>& shape,
                        const std::vector<double>& values);

// A BatchNorm2d module's running statistics, affine parameters (1 and 0
// when affine=False) and eps, one value a channel.
struct BatchNormStatistics {
  std::vector<double> mean, var, weight, bias;
  double eps = 1e-5;
  size_t channels() const { return mean.size(); }
};

// The statistics of the BatchNorm2d module `target` (is_batch_norm);
// nullopt when one is not contiguous float32 or their counts differ.
std::optional<BatchNormStatistics> batch_norm_statistics(
    fxp::Graph& g, const std::string& target);

// BatchNorm2d(x) = x * scale + shift per channel, with scale and shift
// computed in float32 as LibTorch 1.13's CPU kernel computes them
// (batch_norm_cpu_collect_linear_and_constant_terms: invstd = 1 / sqrt(var +
// eps), scale = invstd * weight, shift = bias - mean * scale), so that the
// two roundings per element are the kernel's own.
struct BatchNormAffine {
  std::vector<double> scale, shift;  // float32 values, one per channel
};

// The affine form of the BatchNorm2d module `target` (is_batch_norm);
// nullopt when a statistic or parameter is not contiguous float32 or their
// counts differ.
std::optional<BatchNormAffine> batch_norm_affine(fxp::Graph& g,
                                                 const std::string& target);

}  // namespace fx_inference

#endif  // PLUGINS_INFERENCE_BATCH_NORM_H_
