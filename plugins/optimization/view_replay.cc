#include "plugins/optimization/view_replay.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string_view>
#include <utility>

namespace fx_optimization {
namespace {

// Raised where LibTorch's view kernel would raise; replay_view gives nullopt.
struct NotAView {};

// The scatter's arguments bound to the view's parameters: args[2:], then
// kwargs by name, then the defaults (an empty view for None).
class BoundArgs {
 public:
  // `params`: the view's parameters after self, with "" for no default and
  // "None" for a default of None (other defaults are ints).
  BoundArgs(const fxp::Node& scatter,
            const std::vector<std::pair<const char*, const char*>>& params) {
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& [name, fallback] = params[i];
      fxp::ArgView given =
          i + 2 < scatter.num_args() ? scatter.arg(i + 2) : scatter.kwarg(name);
      if (given) {
        values_.emplace(name, given);
      } else if (std::string_view(fallback).empty()) {
        throw NotAView{};  // a required argument is missing
      } else if (std::string_view(fallback) != "None") {
        defaults_.emplace(name, std::stoll(fallback));
      }
    }
    if (scatter.num_args() > params.size() + 2) throw NotAView{};
  }

  // The int argument `name`; nullopt for None.
  std::optional<int64_t> optional_int(const char* name) const {
    if (auto d = defaults_.find(name); d != defaults_.end()) return d->second;
    auto v = values_.find(name);
    if (v == values_.end() || v->second.kind() == FX_ARG_NONE) {
      return std::nullopt;
    }
    if (v->second.kind() != FX_ARG_INT) throw NotAView{};
    return v->second.as_int();
  }
  int64_t get_int(const char* name) const {
    std::optional<int64_t> v = optional_int(name);
    if (!v) throw NotAView{};
    return *v;
  }
  std::vector<int64_t> get_ints(const char* name) const {
    auto v = values_.find(name);
    if (v == values_.end()) throw NotAView{};
    fxp::ArgView list = v->second;
    if (list.kind() != FX_ARG_LIST && list.kind() != FX_ARG_TUPLE) {
      throw NotAView{};
    }
    std::vector<int64_t> out;
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].kind() != FX_ARG_INT) throw NotAView{};
      out.push_back(list[i].as_int());
    }
    return out;
  }

 private:
  std::map<std::string, fxp::ArgView> values_;
  std::map<std::string, int64_t> defaults_;
};

// LibTorch's maybe_wrap_dim: a scalar wraps as if it had one dimension.
size_t wrap_dim(int64_t dim, size_t ndim) {
  const int64_t n = std::max<int64_t>(static_cast<int64_t>(ndim), 1);
  if (dim < -n || dim >= n) throw NotAView{};
  if (dim < 0) dim += n;
  if (static_cast<size_t>(dim) >= ndim) throw NotAView{};
  return static_cast<size_t>(dim);
}

ViewLayout slice(ViewLayout t, const BoundArgs& a) {
  const size_t dim = wrap_dim(a.get_int("dim"), t.sizes.size());
  const int64_t size = t.sizes[dim];
  int64_t start = a.optional_int("start").value_or(0);
  int64_t end =
      a.optional_int("end").value_or(std::numeric_limits<int64_t>::max());
  const int64_t step = a.get_int("step");
  if (step <= 0) throw NotAView{};
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  t.offset += start * t.strides[dim];
  t.sizes[dim] = (end - start + step - 1) / step;
  t.strides[dim] *= step;
  return t;
}

ViewLayout select(ViewLayout t, const BoundArgs& a) {
  if (t.sizes.empty()) throw NotAView{};
  const size_t dim = wrap_dim(a.get_int("dim"), t.sizes.size());
  const int64_t size = t.sizes[dim];
  int64_t index = a.get_int("index");
  if (index < -size || index >= size) throw NotAView{};
  if (index < 0) index += size;
  t.offset += index * t.strides[dim];
  t.sizes.erase(t.sizes.begin() + dim);
  t.strides.erase(t.strides.begin() + dim);
  return t;
}

ViewLayout diagonal(ViewLayout t, const BoundArgs& a) {
  const int64_t offset = a.get_int("offset");
  const size_t d1 = wrap_dim(a.get_int("dim1"), t.sizes.size());
  const size_t d2 = wrap_dim(a.get_int("dim2"), t.sizes.size());
  if (d1 == d2) throw NotAView{};
  int64_t n = offset >= 0 ? std::min(t.sizes[d1], t.sizes[d2] - offset)
                          : std::min(t.sizes[d1] + offset, t.sizes[d2]);
  n = std::max<int64_t>(n, 0);
  if (n > 0) {
    t.offset += offset >= 0 ? offset * t.strides[d2] : -offset * t.strides[d1];
  }
  const int64_t stride = t.strides[d1] + t.strides[d2];
  for (size_t d : {std::max(d1, d2), std::min(d1, d2)}) {
    t.sizes.erase(t.sizes.begin() + d);
    t.strides.erase(t.strides.begin() + d);
  }
  t.sizes.push_back(n);
  t.strides.push_back(stride);
  return t;
}

ViewLayout as_strided(ViewLayout t, const BoundArgs& a) {
  ViewLayout v;
  v.sizes = a.get_ints("size");
  v.strides = a.get_ints("stride");
  if (v.sizes.size() != v.strides.size()) throw NotAView{};
  v.offset = a.optional_int("storage_offset").value_or(t.offset);
  return v;
}

struct ViewKind {
  const char* scatter;
  const char* view;
  std::vector<std::pair<const char*, const char*>> params;
  ViewLayout (*apply)(ViewLayout, const BoundArgs&);
};

const std::vector<ViewKind>& view_kinds() {
  static const std::vector<ViewKind> kinds = {
      {"torch.ops.aten.diagonal_scatter.default",
       "torch.ops.aten.diagonal.default",
       {{"offset", "0"}, {"dim1", "0"}, {"dim2", "1"}},
       diagonal},
      {"torch.ops.aten.select_scatter.default",
       "torch.ops.aten.select.int",
       {{"dim", ""}, {"index", ""}},
       select},
      {"torch.ops.aten.slice_scatter.default",
       "torch.ops.aten.slice.Tensor",
       {{"dim", "0"}, {"start", "None"}, {"end", "None"}, {"step", "1"}},
       slice},
      {"torch.ops.aten.as_strided_scatter.default",
       "torch.ops.aten.as_strided.default",
       {{"size", ""}, {"stride", ""}, {"storage_offset", "None"}},
       as_strided},
  };
  return kinds;
}

}  // namespace

const char* inverted_view(std::string_view scatter_target) {
  for (const ViewKind& k : view_kinds()) {
    if (scatter_target == k.scatter) return k.view;
  }
  return nullptr;
}

std::optional<ViewLayout> replay_view(std::string_view view,
                                      const ViewLayout& base,
                                      const fxp::Node& scatter) {
  for (const ViewKind& k : view_kinds()) {
    if (view != k.view) continue;
    try {
      return k.apply(base, BoundArgs(scatter, k.params));
    } catch (const NotAView&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace fx_optimization
