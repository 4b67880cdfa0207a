// Fuzz target: the pipeline text parser (`fx run --pipeline`,
// fx::host::parse_pipeline_text). What it accepts is printed back in text
// form (fx::host::pipeline_text) and must parse to the same text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "host/pipeline/pipeline.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fx::fuzz::require;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto spec = fx::host::parse_pipeline_text(text);
  fx::fuzz::require_message(spec.status());
  if (!spec.ok()) return 0;
  std::string printed = fx::host::pipeline_text(spec->passes);
  auto again = fx::host::parse_pipeline_text(printed);
  require(again.ok(), "a pipeline printed as text does not parse back");
  require(fx::host::pipeline_text(again->passes) == printed,
          "a pipeline parsed back prints differently");
  return 0;
}
