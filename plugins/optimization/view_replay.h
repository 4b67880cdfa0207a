// What a view of a tensor looks like without computing it: sizes, strides
// and storage offset of slice, select, diagonal and as_strided applied to a
// tensor's, as LibTorch's kernels compute them (reinplace replays a
// {view}_scatter's view on the base it may invert, as torch 1.13 runs the
// view on FakeTensors).
#ifndef PLUGINS_OPTIMIZATION_VIEW_REPLAY_H_
#define PLUGINS_OPTIMIZATION_VIEW_REPLAY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"

namespace fx_optimization {

// A tensor's layout in its storage.
struct ViewLayout {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t offset = 0;

  bool operator==(const ViewLayout& o) const {
    return sizes == o.sizes && strides == o.strides && offset == o.offset;
  }
};

// The view the scatter operator `scatter_target`
// (torch.ops.aten.slice_scatter.default, ...) inverts, or nullptr for
// another target: torch.ops.aten.slice.Tensor, select.int, diagonal.default,
// as_strided.default (torch 1.13's _VIEW_INVERSE_MAP).
const char* inverted_view(std::string_view scatter_target);

// The layout `view` (one of inverted_view's) gives when applied to `base`
// with the scatter node's arguments after its first two (args[2:], kwargs),
// as torch's original_view(base, *n.args[2:], **n.kwargs) would; nullopt
// where LibTorch would raise (a dimension or index out of range, an argument
// that is not a literal) or for another view.
std::optional<ViewLayout> replay_view(std::string_view view,
                                      const ViewLayout& base,
                                      const fxp::Node& scatter);

}  // namespace fx_optimization

#endif  // PLUGINS_OPTIMIZATION_VIEW_REPLAY_H_
