// fx::capture::append_value_identity: a call argument as identity-key
// entries, shared by symbolic capture's memos keyed on the identity of
// expression nodes (SymbolicCapture's shape-function results,
// CompositeReplay's composite calls).
//
// Contract: plain values by value (ints, bools, None, doubles by their
// bits), lists item by item with their length, each kind behind its own
// tag; tensors and the capture's symbolic ints are appended by the caller's
// `tensor(const at::Tensor&)` and `sym(const CaptureSymNode&)`, which return
// false for what their key does not cover. False for any other kind
// (strings, dicts, devices, a symbolic int of another library).
#ifndef FX_CORE_CAPTURE_VALUE_IDENTITY_H_
#define FX_CORE_CAPTURE_VALUE_IDENTITY_H_

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <cstring>

#include "fx_core/capture/sym_int_node.h"

namespace fx::capture {

// Tags the caller's entries may use without meeting the plain values'.
inline constexpr intptr_t kFirstCallerTag = 16;

template <typename Key, typename TensorFn, typename SymFn>
bool append_value_identity(const c10::IValue& v, Key* key,
                           const TensorFn& tensor, const SymFn& sym) {
  if (v.isTensor()) return tensor(v.toTensor());
  if (v.isSymInt()) {
    const CaptureSymNode* n = capture_node(v.toSymInt());
    return n != nullptr && sym(*n);
  }
  if (v.isInt()) {
    key->push_back(4);
    key->push_back(static_cast<intptr_t>(v.toInt()));
    return true;
  }
  if (v.isBool()) {
    key->push_back(5);
    key->push_back(v.toBool());
    return true;
  }
  if (v.isNone()) {
    key->push_back(6);
    return true;
  }
  if (v.isDouble()) {
    double d = v.toDouble();
    intptr_t bits = 0;
    std::memcpy(&bits, &d, sizeof(bits));
    key->push_back(7);
    key->push_back(bits);
    return true;
  }
  if (v.isList()) {
    c10::ArrayRef<c10::IValue> items = v.toListRef();
    key->push_back(8);
    key->push_back(static_cast<intptr_t>(items.size()));
    for (const c10::IValue& item : items) {
      if (!append_value_identity(item, key, tensor, sym)) return false;
    }
    return true;
  }
  return false;
}

}  // namespace fx::capture

#endif  // FX_CORE_CAPTURE_VALUE_IDENTITY_H_
