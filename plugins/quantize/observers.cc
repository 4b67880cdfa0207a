// The observers (observers.h).
#include "plugins/quantize/observers.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "plugins/common/plugin_util.h"
#include "plugins/quantize/float_values.h"
#include "plugins/quantize/histogram.h"

namespace fx_quant {

using fxp::Arg;
using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

namespace {

struct Range {
  double min = 0, max = 0;
  bool seen = false;
  Histogram histogram;  // what a histogram observer uses
};

std::mutex& ranges_mutex() {
  static std::mutex m;
  return m;
}
std::map<int64_t, Range>& ranges() {
  static std::map<int64_t, Range> r;
  return r;
}

// Records a float tensor's range in `r` and, with `histogram`, counts its
// values in r.histogram (a second pass over the tensor, nothing copied).
// False for another dtype or no elements.
bool record(Range& r, const DLTensor& t, bool histogram) {
  if (t.dtype.code != kDLFloat || (t.dtype.bits != 32 && t.dtype.bits != 64)) {
    return false;
  }
  double lo = INFINITY, hi = -INFINITY;
  for_each_float(t, [&](double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  });
  if (!(lo <= hi)) return false;
  r.min = r.seen ? std::min(r.min, lo) : lo;
  r.max = r.seen ? std::max(r.max, hi) : hi;
  r.seen = true;
  if (histogram) {
    r.histogram.widen(lo, hi);
    for_each_float(t, [&](double v) { r.histogram.count(v); });
  }
  return true;
}

// fx_quant.observe(input, id): records input's min, max and histogram under
// `id` and returns input.
FxStatus* observe_kernel(const FxApi* api, const FxOpCall* call, void*,
                         DLManagedTensor** out) {
  DLManagedTensor* x = nullptr;
  int64_t id = 0;
  FxStatus* s = api->CallTensorArg(call, "input", &x);
  if (!s) s = api->CallIntArg(call, "id", &id);
  if (s) {
    if (x && x->deleter) x->deleter(x);
    return s;
  }
  {
    // Whether the observer is a histogram one is in its node's meta, which
    // the kernel cannot see: it keeps both.
    std::lock_guard<std::mutex> lock(ranges_mutex());
    record(ranges()[id], x->dl_tensor, /*histogram=*/true);
  }
  *out = x;  // the input itself, passed through
  return nullptr;
}

FxStatus* observe_shape(const FxApi* api, const FxOpCall* call, void*,
                        FxTensorSpec* out) {
  FxTensorMeta m;
  FxStatus* s = api->CallTensorMeta(call, "input", &m);
  if (s) return s;
  out->ndim = m.ndim;
  for (int32_t i = 0; i < m.ndim && i < FX_MAX_DIMS; ++i) {
    out->shape[i] = m.shape[i];
  }
  out->dtype = m.dtype;
  return nullptr;
}

}  // namespace

FxStatus* register_observer_op(const FxApi* api, FxRegistrar* registrar) {
  static const FxCustomOp observe = {kObserve, "input, id", observe_kernel,
                                     observe_shape, nullptr};
  return api->RegisterCustomOp(registrar, &observe);
}

bool is_observer(Node n) {
  return n.op() == FX_OP_CALL_FUNCTION && n.target() == kObserve;
}

void forget_observations(int64_t end) {
  std::lock_guard<std::mutex> lock(ranges_mutex());
  for (int64_t id = 0; id < end; ++id) ranges().erase(id);
}

namespace {

bool is_histogram(Node obs) {
  ArgView kind = obs.meta("observer");
  return kind && kind.kind() == FX_ARG_STRING &&
         kind.as_string() == "histogram";
}

// What meta['observed'] held before (min, max and, for a histogram
// observer, its bins), merged into `r`.
void merge_meta(Node obs, Range& r) {
  ArgView old = obs.meta("observed");
  if (!old) return;
  const double lo = fxp::dict_get(old, "min").as_float();
  const double hi = fxp::dict_get(old, "max").as_float();
  r.min = std::min(r.min, lo), r.max = std::max(r.max, hi);
  if (ArgView bins = fxp::dict_get(old, "histogram")) {
    std::vector<double> counts;
    for (size_t i = 0; i < bins.size(); ++i)
      counts.push_back(bins[i].as_float());
    r.histogram.merge(fx_quant::Histogram::from(lo, hi, std::move(counts)));
  }
}

Arg observed_meta(Node obs, const Range& r) {
  fxp::Kwargs fields = {{"min", Arg(r.min)}, {"max", Arg(r.max)}};
  if (is_histogram(obs) && !r.histogram.empty()) {
    std::vector<Arg> bins;
    for (double c : r.histogram.counts()) bins.emplace_back(c);
    fields = {{"min", Arg(r.histogram.min())},
              {"max", Arg(r.histogram.max())},
              {"histogram", Arg::list(bins)}};
  }
  return Arg::dict(fields);
}

}  // namespace

bool calibrate(Graph& g) {
  std::vector<std::vector<fxp::Tensor>> batches = fxp::example_batches(g);
  size_t num_inputs = fx_plugins::placeholders(g).size();
  if (batches.empty() || batches[0].size() < num_inputs) {
    throw fxp::Error(FX_FAILED_PRECONDITION,
                     "quantize_calibrate needs the host's example inputs "
                     "(fx run --inputs IN.pt: one batch, or a list of "
                     "batches)");
  }
  std::map<FxNode*, Range> seen;
  for (const std::vector<fxp::Tensor>& batch : batches) {
    std::vector<const DLTensor*> inputs;
    for (size_t i = 0; i < num_inputs; ++i) inputs.push_back(&batch[i].dl());
    fxp::run_graph(g, inputs, false, [&](Node n, fxp::RuntimeValue v) {
      if (!is_observer(n) || !v.is_tensor()) return;
      fxp::Tensor t = v.to_dlpack();
      Range& r = seen[n.get()];
      if (!record(r, t.dl(), is_histogram(n)) && !r.seen) seen.erase(n.get());
    });
  }
  for (auto& [node, range] : seen) {
    Node n(node);
    merge_meta(n, range);
    n.set_meta("observed", observed_meta(n, range));
  }
  return !seen.empty();
}

// The quint8 quantization of what an observer saw: per tensor affine over
// a range that includes 0.
QParams observed_qparams(Node obs) {
  double lo, hi;
  Histogram histogram;
  if (ArgView m = obs.meta("observed")) {
    Range r;
    r.min = r.max = fxp::dict_get(m, "min").as_float();
    merge_meta(obs, r);
    lo = r.min, hi = r.max;
    histogram = r.histogram;
  } else {
    std::lock_guard<std::mutex> lock(ranges_mutex());
    auto it = ranges().find(obs.arg(1).as_int());
    if (it == ranges().end() || !it->second.seen) {
      throw fxp::Error(FX_FAILED_PRECONDITION,
                       "observer '" + std::string(obs.name()) +
                           "' saw no data: calibrate first "
                           "(quantize_calibrate, or run the prepared "
                           "module)");
    }
    lo = it->second.min;
    hi = it->second.max;
    histogram = it->second.histogram;
  }
  if (is_histogram(obs) && !histogram.empty()) {
    std::tie(lo, hi) = histogram.best_range();
  }
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  // At least float32's epsilon, as torch.ao's observers clamp it.
  double scale = std::max((hi - lo) / 255.0, 1.1920928955078125e-07);
  int64_t zero_point = std::clamp<int64_t>(
      static_cast<int64_t>(std::nearbyint(-lo / scale)), 0, 255);
  return {scale, zero_point};
}

}  // namespace fx_quant
