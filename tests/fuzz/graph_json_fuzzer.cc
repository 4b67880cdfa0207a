// Fuzz target: the fx-graph JSON reader (fx::parse_graph_json), what `fx
// print`, `fx tabular` and `fx code` do with a graph it accepts, and the
// writer: a graph read and written reads back, and writes the same text
// again. Run with -dict=tests/fuzz/dict/graph_json.dict (tools/fuzz.sh does)
// so mutations speak the format's keys, opcodes and argument kinds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fx_core/format/graph_json.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fx::fuzz::require;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<fx::GraphFile> file = fx::parse_graph_json(text, "<fuzz>");
  fx::fuzz::require_message(file.status());
  if (!file.ok()) return 0;
  require(file->graph != nullptr, "an accepted file without a graph");
  file->graph->str();
  file->graph->tabular();
  file->graph->python_code("self");

  std::string written = fx::to_graph_json(*file);
  absl::StatusOr<fx::GraphFile> again =
      fx::parse_graph_json(written, "<written>");
  if (!again.ok()) {
    std::fprintf(stderr, "%s\n", std::string(again.status().message()).c_str());
  }
  require(again.ok(), "what the writer wrote does not read back");
  require(fx::to_graph_json(*again) == written,
          "a graph read back writes different text");
  return 0;
}
