// Fuzz target: the bundle loader, as `fx exec` and `fx run` load a bundle:
// the graph file, its modules built through the ModuleRegistry, the weights
// placed into them, the graph compiled (fx::load_graph_module_shared).
//
// An input is the graph file's JSON text, then optionally a NUL byte and the
// weights file's bytes (a torch.save archive of a dict of str -> Tensor), as
// make_seeds.py joins a bundle's two files. What it
// accepts is written back as a bundle (fx::describe_graph_module, as `fx run
// -o` writes) and that JSON must read back.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fx_core/format/graph_json.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module_file.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fx::fuzz::require;
  using fx::fuzz::require_message;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t nul = input.find('\0');
  std::string_view json = input.substr(0, nul);
  std::string_view weight_bytes = nul == std::string_view::npos
                                      ? std::string_view()
                                      : input.substr(nul + 1);

  absl::StatusOr<fx::GraphFile> file = fx::parse_graph_json(json, "<fuzz>");
  require_message(file.status());
  if (!file.ok()) return 0;
  fx::TensorList weights;
  if (!weight_bytes.empty()) {
    auto read = fx::parse_tensor_dict(weight_bytes, "<fuzz weights>");
    require_message(read.status());
    if (!read.ok()) return 0;
    weights = *std::move(read);
  }
  auto module = fx::load_graph_module_shared(*std::move(file), weights);
  require_message(module.status());
  if (!module.ok()) return 0;

  absl::StatusOr<fx::GraphBundle> bundle =
      fx::describe_graph_module(**module, "model.weights.pt");
  require_message(bundle.status());
  if (!bundle.ok()) return 0;
  require(fx::parse_graph_json(bundle->json, "<written>").ok(),
          "the JSON of a loaded bundle written again does not read back");
  return 0;
}
