// Measuring a static quantization's quality (report.h).
#include "plugins/quantize/report.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "plugins/quantize/float_values.h"

namespace fx_quant {
namespace {

std::vector<const DLTensor*> views(const std::vector<fxp::Tensor>& inputs) {
  std::vector<const DLTensor*> out;
  for (const fxp::Tensor& t : inputs) out.push_back(&t.dl());
  return out;
}

// The first float tensor of a value (itself, or a sequence's first item).
std::optional<OutputValues> first_tensor(fxp::RuntimeValue v) {
  if (v.kind() == FX_VALUE_SEQUENCE) {
    return v.size() > 0 ? first_tensor(v.item(0)) : std::nullopt;
  }
  if (!v.is_tensor()) return std::nullopt;
  fxp::Tensor t = v.to_dlpack();
  if (t.dl().dtype.code != kDLFloat) return std::nullopt;
  OutputValues out;
  out.shape = t.shape();
  for_each_float(t.dl(), [&](double x) { out.values.push_back(x); });
  return out;
}

double db(double signal, double noise) {
  if (noise == 0) return std::numeric_limits<double>::infinity();
  return 10 * std::log10(signal / noise);
}

}  // namespace

FloatRun measure_float_run(fxp::Graph& g,
                           const std::vector<fxp::Tensor>& inputs,
                           const std::map<FxNode*, QParams>& qparams) {
  FloatRun run;
  fxp::run_graph(
      g, views(inputs), false, [&](fxp::Node n, fxp::RuntimeValue v) {
        if (n.op() == FX_OP_OUTPUT) {
          if (std::optional<OutputValues> o = first_tensor(v)) run.output = *o;
          return;
        }
        auto it = qparams.find(n.get());
        if (it == qparams.end() || !v.is_tensor()) return;
        fxp::Tensor t = v.to_dlpack();
        if (t.dl().dtype.code != kDLFloat) return;
        const QParams q = it->second;
        double signal = 0, noise = 0;
        for_each_float(t.dl(), [&](double x) {
          double level = std::clamp(std::nearbyint(x / q.scale) + q.zero_point,
                                    0.0, 255.0);
          double error = x - (level - q.zero_point) * q.scale;
          signal += x * x;
          noise += error * error;
        });
        run.activation_sqnr[n.get()] = db(signal, noise);
      });
  return run;
}

OutputValues run_output(fxp::Graph& g, const std::vector<fxp::Tensor>& inputs) {
  OutputValues out;
  fxp::run_graph(g, views(inputs), false,
                 [&](fxp::Node n, fxp::RuntimeValue v) {
                   if (n.op() != FX_OP_OUTPUT) return;
                   if (std::optional<OutputValues> o = first_tensor(v))
                     out = *o;
                 });
  return out;
}

double sqnr(const std::vector<double>& reference,
            const std::vector<double>& value) {
  double signal = 0, noise = 0;
  for (size_t i = 0; i < reference.size() && i < value.size(); ++i) {
    signal += reference[i] * reference[i];
    noise += (reference[i] - value[i]) * (reference[i] - value[i]);
  }
  return db(signal, noise);
}

std::optional<double> top1_agreement(const OutputValues& reference,
                                     const OutputValues& value) {
  if (reference.shape.size() != 2 || reference.shape != value.shape ||
      reference.shape[0] < 1 || reference.shape[1] < 1) {
    return std::nullopt;
  }
  const int64_t rows = reference.shape[0], columns = reference.shape[1];
  int64_t agree = 0;
  for (int64_t r = 0; r < rows; ++r) {
    auto first = [&](const std::vector<double>& v) {
      auto row = v.begin() + r * columns;
      return std::max_element(row, row + columns) - row;
    };
    agree += first(reference.values) == first(value.values);
  }
  return static_cast<double>(agree) / rows;
}

}  // namespace fx_quant
