// Fuzz target: the JSON pipeline config parser (`fx run --config`,
// fx::host::parse_pipeline_config). What it accepts is written back as a
// config (fx::host::pipeline_config_json) and must parse to the same JSON.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "host/pipeline/pipeline.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fx::fuzz::require;
  std::string_view json(reinterpret_cast<const char*>(data), size);
  auto spec = fx::host::parse_pipeline_config(json, "<fuzz>", "/base");
  fx::fuzz::require_message(spec.status());
  if (!spec.ok()) return 0;
  std::string written = fx::host::pipeline_config_json(*spec);
  auto again = fx::host::parse_pipeline_config(written, "<written>", "/base");
  require(again.ok(), "a config written back does not parse");
  require(fx::host::pipeline_config_json(*again) == written,
          "a config parsed back writes differently");
  return 0;
}
