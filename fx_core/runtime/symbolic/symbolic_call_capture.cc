#include "fx_core/runtime/symbolic/symbolic_call_capture.h"

#include <utility>

namespace fx {
namespace {

SymbolicCallCapture& slot() {
  static auto* capture = new SymbolicCallCapture();
  return *capture;
}

}  // namespace

void set_symbolic_call_capture(SymbolicCallCapture capture) {
  slot() = std::move(capture);
}

const SymbolicCallCapture& symbolic_call_capture() { return slot(); }

}  // namespace fx
