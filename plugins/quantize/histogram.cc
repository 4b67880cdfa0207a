// The histogram observer (histogram.h).
#include "plugins/quantize/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fx_quant {
namespace {

// The bin of `x` in kBins bins over [lo, lo + kBins * width).
int bin_of(double x, double lo, double width) {
  if (width <= 0) return 0;
  int b = static_cast<int>((x - lo) / width);
  return std::clamp(b, 0, Histogram::kBins - 1);
}

}  // namespace

void Histogram::widen(double lo, double hi) {
  if (counts_.empty()) {
    min_ = lo, max_ = hi;
    counts_.assign(kBins, 0.0);
    return;
  }
  if (lo >= min_ && hi <= max_) return;
  std::vector<double> old = std::move(counts_);
  const double old_lo = min_, old_width = width();
  min_ = std::min(lo, min_), max_ = std::max(hi, max_);
  counts_.assign(kBins, 0.0);
  for (int b = 0; b < kBins; ++b) {
    if (old[b] == 0) continue;
    // Each old bin's count goes to the new bin of its centre.
    counts_[bin_of(old_lo + (b + 0.5) * old_width, min_, width())] += old[b];
  }
}

void Histogram::count(double x) { counts_[bin_of(x, min_, width())] += 1; }

void Histogram::merge(const Histogram& other) {
  if (other.empty()) return;
  widen(other.min_, other.max_);
  for (int b = 0; b < kBins; ++b) {
    double centre = other.min_ + (b + 0.5) * other.width();
    counts_[bin_of(centre, min_, width())] += other.counts_[b];
  }
}

Histogram Histogram::from(double lo, double hi, std::vector<double> counts) {
  Histogram h;
  if (counts.size() != static_cast<size_t>(kBins) || !(lo <= hi) ||
      !std::isfinite(lo) || !std::isfinite(hi)) {
    return h;
  }
  for (double c : counts) {
    if (!(c >= 0) || !std::isfinite(c)) return h;
  }
  h.min_ = lo, h.max_ = hi;
  h.counts_ = std::move(counts);
  return h;
}

std::pair<double, double> Histogram::best_range(int levels) const {
  const double lo0 = std::min(min_, 0.0), hi0 = std::max(max_, 0.0);
  if (counts_.empty() || width() <= 0) return {lo0, hi0};
  // Prefix sums over bins of count, count * centre, count * centre^2.
  std::vector<double> c(kBins + 1, 0), cx(kBins + 1, 0), cxx(kBins + 1, 0);
  for (int b = 0; b < kBins; ++b) {
    double x = min_ + (b + 0.5) * width();
    c[b + 1] = c[b] + counts_[b];
    cx[b + 1] = cx[b] + counts_[b] * x;
    cxx[b + 1] = cxx[b] + counts_[b] * x * x;
  }
  // Squared distance to `edge` of the values in bins [from, to).
  auto clipped = [&](int from, int to, double edge) {
    return (cxx[to] - cxx[from]) - 2 * edge * (cx[to] - cx[from]) +
           edge * edge * (c[to] - c[from]);
  };
  // Candidate edges: bin edges on each side of 0, and 0 itself.
  std::vector<int> lows, highs;  // first and one-past-last bin kept
  for (int b = 0; b <= kBins; ++b) {
    double edge = min_ + b * width();
    if (edge <= 0 || b == 0) lows.push_back(b);
    if (edge >= 0 || b == kBins) highs.push_back(b);
  }
  double best = std::numeric_limits<double>::infinity();
  std::pair<double, double> range{lo0, hi0};
  for (int s : lows) {
    const double a = std::min(min_ + s * width(), 0.0);
    for (int e : highs) {
      if (e < s) continue;
      const double b = std::max(min_ + e * width(), 0.0);
      if (b - a <= 0) continue;
      const double step = (b - a) / (levels - 1);
      double error = (c[e] - c[s]) * step * step / 12 + clipped(0, s, a) +
                     clipped(e, kBins, b);
      if (error < best) best = error, range = {a, b};
    }
  }
  return range;
}

}  // namespace fx_quant
