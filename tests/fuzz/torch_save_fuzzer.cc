// Fuzz target: the torch.save reader (fx::parse_value: the zip archive, the
// pickle checked and rewritten, storages against their records, tensors
// against their storages), as `fx exec` reads inputs and weights. What it
// accepts must be safe to use: every tensor is copied element by element (a
// tensor reaching outside its storage would read out of bounds), and the
// value written back by the SDK's writer (fx::torch_save_bytes, what fx
// writes) reads back.
#include <ATen/ATen.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "fx_core/io/torch_pickler.h"
#include "fx_core/io/torch_save.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// Copies every tensor inside `root` (iteratively: the reader bounds the
// nesting, this must not trust that).
void touch_tensors(const c10::IValue& root) {
  std::vector<c10::IValue> todo{root};
  size_t visited = 0;
  while (!todo.empty() && ++visited < 100000) {
    c10::IValue v = std::move(todo.back());
    todo.pop_back();
    if (v.isTensor()) {
      if (v.toTensor().defined()) v.toTensor().clone();
    } else if (v.isList()) {
      for (const c10::IValue& item : v.toListRef()) todo.push_back(item);
    } else if (v.isTuple()) {
      for (const c10::IValue& item : v.toTupleRef().elements()) {
        todo.push_back(item);
      }
    } else if (v.isGenericDict()) {
      for (const auto& item : v.toGenericDict()) {
        todo.push_back(item.key());
        todo.push_back(item.value());
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fx::fuzz::require;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<c10::IValue> value = fx::parse_value(bytes, "<fuzz>");
  fx::fuzz::require_message(value.status());
  fx::fuzz::require_message(fx::parse_tensor_dict(bytes, "<fuzz>").status());
  if (!value.ok()) return 0;
  touch_tensors(*value);

  std::string written;
  try {
    written = fx::torch_save_bytes(*value);
  } catch (const std::exception&) {
    return 0;  // a value with no Python spelling (sparse, quantized) is refused
  }
  absl::StatusOr<c10::IValue> again = fx::parse_value(written, "<written>");
  if (!again.ok()) {
    std::fprintf(stderr, "%s\n", std::string(again.status().message()).c_str());
  }
  require(again.ok(), "a value read and written again does not read back");
  return 0;
}
