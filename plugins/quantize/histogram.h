// The histogram observer's state and its choice of range. An activation's
// values are counted in kBins equal bins over the range seen so far (the
// bins are re-spread when a later batch widens it); the quantization range
// is then the [lo, hi] (lo <= 0 <= hi, as quint8 affine needs) that
// minimizes the expected squared error of quantizing those values with 256
// levels: inside the range, rounding (step^2 / 12 per value); outside it,
// clipping (the distance to the range's edge, squared). Min/max keeps every
// outlier and spends levels on them; this trades a few clipped outliers
// for finer steps, as torch.ao's HistogramObserver does.
#ifndef PLUGINS_QUANTIZE_HISTOGRAM_H_
#define PLUGINS_QUANTIZE_HISTOGRAM_H_

#include <utility>
#include <vector>

namespace fx_quant {

class Histogram {
 public:
  static constexpr int kBins = 2048;

  bool empty() const { return counts_.empty(); }
  double min() const { return min_; }
  double max() const { return max_; }
  const std::vector<double>& counts() const { return counts_; }

  // Makes the range contain [lo, hi] (re-spreading what was counted);
  // then count() each value of that range.
  void widen(double lo, double hi);
  void count(double x);
  // Adds another histogram's counts (its bins re-spread over the union).
  void merge(const Histogram& other);
  // A histogram from its parts (as meta holds them); empty if they do not
  // fit together.
  static Histogram from(double lo, double hi, std::vector<double> counts);

  // The range of least expected squared quantization error with `levels`
  // levels, containing 0.
  std::pair<double, double> best_range(int levels = 256) const;

 private:
  double width() const { return (max_ - min_) / kBins; }

  double min_ = 0, max_ = 0;
  std::vector<double> counts_;
};

}  // namespace fx_quant

#endif  // PLUGINS_QUANTIZE_HISTOGRAM_H_
