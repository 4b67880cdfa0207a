// torchvision's classification models as graph bundles, for `fx
// plugin-check --torchvision MODELS`: each model is traced by Python
// torch.fx (the exporter tools/torchfx_export.py, run by /usr/bin/python3
// or $FX_PYTHON) into a bundle directory (graph.fx.json, model.weights.pt,
// input.pt: one 1x3x224x224 input, seed 0) and cached, so later checks
// reuse it.
//
// The cache: $FX_CACHE_DIR, else $XDG_CACHE_HOME/fx, else $HOME/.cache/fx;
// the bundle of model NAME is CACHE/torchvision/NAME. A bundle is written
// in a temporary sibling directory and renamed into place when complete, so
// the cache never holds half an export. The exporter is found at
// $FX_TORCHFX_EXPORT, else next to the running fx: in its Bazel runfiles
// (tools/torchfx_export.py) or in an installed SDK
// (PREFIX/share/fx-sdk/torchfx_export.py).
#ifndef TOOLS_TORCHVISION_GRAPHS_H_
#define TOOLS_TORCHVISION_GRAPHS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fx::tools {

// The models `--torchvision default` names: small classification models of
// three families (a residual net, inverted residuals, fire modules).
inline const std::vector<std::string>& default_torchvision_models() {
  static const std::vector<std::string> models = {"resnet18", "mobilenet_v2",
                                                  "squeezenet1_1"};
  return models;
}

// "resnet18,mobilenet_v2" (or "default") as model names. InvalidArgument
// for an empty list or a name that is not letters, digits and '_'.
absl::StatusOr<std::vector<std::string>> parse_torchvision_models(
    const std::string& text);

// The bundle directory of each model, exported first when not cached.
// Errors name the model and carry the exporter's output (no torchvision,
// an unknown model) or say why the exporter or cache cannot be used.
absl::StatusOr<std::vector<std::string>> torchvision_bundles(
    const std::vector<std::string>& models);

}  // namespace fx::tools

#endif  // TOOLS_TORCHVISION_GRAPHS_H_
