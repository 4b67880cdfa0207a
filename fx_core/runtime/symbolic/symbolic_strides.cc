#include "fx_core/runtime/symbolic/symbolic_strides.h"

#include <algorithm>
#include <numeric>
#include <optional>

namespace fx {

using sym::Expr;

std::vector<Expr> dense_strides(const std::vector<Expr>& sizes,
                                const at::Tensor& hint) {
  size_t n = sizes.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  c10::IntArrayRef st = hint.strides();
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return st[a] > st[b]; });
  std::vector<Expr> strides(n);
  Expr inner = Expr::integer(1);
  int64_t inner_hint = 1;
  for (size_t k = n; k-- > 0;) {
    size_t d = order[k];
    if (st[d] == 0) {
      strides[d] = Expr::integer(0);
      continue;
    }
    if (st[d] != inner_hint) return {};
    strides[d] = inner;
    inner = inner * sizes[d];
    inner_hint *= hint.size(static_cast<int64_t>(d));
  }
  return strides;
}

namespace {

std::vector<Expr> hint_strides(const at::Tensor& hint) {
  std::vector<Expr> out;
  for (int64_t s : hint.strides()) out.push_back(Expr::integer(s));
  return out;
}

// A base's symbolic stride with value `want` at the hints.
std::optional<Expr> base_stride(
    int64_t want, const std::vector<const std::vector<Expr>*>& bases,
    const sym::GuardRecorder& guards) {
  for (const std::vector<Expr>* strides : bases) {
    for (const Expr& s : *strides) {
      if (!s.as_integer() && guards.hint(s) == want) return s;
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<Expr> view_strides(
    const std::vector<Expr>& sizes, const at::Tensor& hint,
    const std::vector<const std::vector<Expr>*>& base_strides,
    const sym::GuardRecorder& guards, bool hint_fallback) {
  bool symbolic = std::any_of(sizes.begin(), sizes.end(), [](const Expr& e) {
    return !e.as_integer().has_value();
  });
  if (!symbolic && base_strides.empty()) return hint_strides(hint);
  std::vector<Expr> dense = dense_strides(sizes, hint);
  std::vector<Expr> out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    int64_t want = hint.stride(static_cast<int64_t>(d));
    std::optional<Expr> found = base_stride(want, base_strides, guards);
    if (!found && !dense.empty()) found = dense[d];
    if (!found && hint_fallback) found = Expr::integer(want);
    if (!found) return {};
    out.push_back(*found);
  }
  return out;
}

}  // namespace fx
