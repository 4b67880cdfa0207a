// The version-1 table as both of its releases laid it out.
//
// FX_API_VERSION 1 was released twice with different tables
// (tests/plugin_api/abi/released/README.md): the first release (106 entries)
// ended with the registration and custom-op entries, RegisterCustomOp ..
// CallFloatArg at slots 99..105; the second (123 entries, the layout every
// later version extends) inserted fourteen entries before them, so its slots
// 99..105 hold GraphNumExampleInputs .. GraphReplacePattern and the
// registration entries sit at 113..119. Both kinds of plugin say
// `api_version = 1` and nothing else in what they declare tells them apart.
//
// Their calls can be told apart: in every one of those seven slots the
// first-release entry takes a registrar (RegisterCustomOp,
// RegisterLeafModuleRule) or a custom-op call (CallHasArg .. CallFloatArg)
// as its first argument, and the second release's entry takes a graph or an
// out-pointer, never one of those. Registrars and calls are checked handles
// lent for their registration or call (wrap.h), so each slot of the
// version-1 table holds a forwarder that asks the handle table whether its
// first argument is a live registrar or call, sends such a call to the
// first-release entry and every other call to the second release's. A graph
// handle has another kind; an out-pointer would have to spell, bit for bit, a
// live registrar's or call's slot, kind and 32-bit generation. The table
// reads any value without following it, so asking is safe.
//
// The forwarders are called through the slot's declared type by one kind of
// plugin and through the other release's type by the other, so they are
// written at the level of the platform's calling convention: every argument
// of these fourteen entries is a pointer or an integer (no floating point,
// no struct by value), passed in the same registers or stack slots on the
// System V x86-64 and AAPCS64 conventions whatever its C type, and every
// result is a pointer, an integer or void, returned in the same register. A
// forwarder declared with the longest argument list reads the arguments a
// shorter call did not pass only on the path that needs them, which is
// never the shorter call's path.
#include <cstdint>

#include "host/capi/api_internal.h"

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "the version-1 forwarders are written for x86-64 and AArch64"
#endif

namespace fx::host::internal {
namespace {

using Word = std::uintptr_t;
static_assert(sizeof(Word) == sizeof(void*) && sizeof(Word) == sizeof(size_t));

// The slot (entry index) an FxApi member sits at.
constexpr size_t slot_of(size_t offset) {
  return (offset - offsetof(FxApi, CreateStatus)) / sizeof(void (*)(void));
}
static_assert(slot_of(offsetof(FxApi, GraphNumExampleInputs)) == 99 &&
                  slot_of(offsetof(FxApi, GraphReplacePattern)) == 105 &&
                  slot_of(offsetof(FxApi, RegisterCustomOp)) == 113,
              "the slots the two version-1 releases disagree on moved");

bool is_registrar(const void* p) {
  return peeked(p, HandleKind::kRegistrar) != nullptr;
}
bool is_op_call(const void* p) {
  return peeked(p, HandleKind::kOpCall) != nullptr;
}

// The host's whole table, whose entries the forwarders call (built before
// any plugin can call a forwarder).
const FxApi& full_table() { return *api(); }

// Slot 99: RegisterCustomOp (first release) / GraphNumExampleInputs.
Word slot99(void* a0, void* a1) {
  const FxApi& t = full_table();
  if (is_registrar(a0)) {
    return reinterpret_cast<Word>(t.RegisterCustomOp(
        static_cast<FxRegistrar*>(a0), static_cast<const FxCustomOp*>(a1)));
  }
  return t.GraphNumExampleInputs(static_cast<const FxGraph*>(a0));
}

// Slot 100: RegisterLeafModuleRule / GraphExampleInput.
Word slot100(void* a0, void* a1, void* a2) {
  const FxApi& t = full_table();
  if (is_registrar(a0)) {
    return reinterpret_cast<Word>(
        t.RegisterLeafModuleRule(static_cast<FxRegistrar*>(a0),
                                 reinterpret_cast<FxLeafModuleFn>(a1), a2));
  }
  return reinterpret_cast<Word>(t.GraphExampleInput(
      static_cast<const FxGraph*>(a0), reinterpret_cast<Word>(a1),
      static_cast<DLManagedTensor**>(a2)));
}

// Slot 101: CallHasArg / GraphNodeCopy.
Word slot101(void* a0, void* a1, void* a2) {
  const FxApi& t = full_table();
  if (is_op_call(a0)) {
    return static_cast<Word>(t.CallHasArg(static_cast<const FxOpCall*>(a0),
                                          static_cast<const char*>(a1)));
  }
  return reinterpret_cast<Word>(t.GraphNodeCopy(static_cast<FxGraph*>(a0),
                                                static_cast<const FxNode*>(a1),
                                                static_cast<FxNode**>(a2)));
}

// Slot 102: CallTensorArg / CreateGraph.
Word slot102(void* a0, void* a1, void* a2) {
  const FxApi& t = full_table();
  if (is_op_call(a0)) {
    return reinterpret_cast<Word>(t.CallTensorArg(
        static_cast<const FxOpCall*>(a0), static_cast<const char*>(a1),
        static_cast<DLManagedTensor**>(a2)));
  }
  return reinterpret_cast<Word>(t.CreateGraph(static_cast<FxGraph**>(a0)));
}

// Slot 103: CallTensorMeta / ReleaseGraph.
Word slot103(void* a0, void* a1, void* a2) {
  const FxApi& t = full_table();
  if (is_op_call(a0)) {
    return reinterpret_cast<Word>(t.CallTensorMeta(
        static_cast<const FxOpCall*>(a0), static_cast<const char*>(a1),
        static_cast<FxTensorMeta*>(a2)));
  }
  t.ReleaseGraph(static_cast<FxGraph*>(a0));
  return 0;
}

// Slot 104: CallIntArg / GraphMatchPattern.
Word slot104(void* a0, void* a1, void* a2, void* a3, void* a4) {
  const FxApi& t = full_table();
  if (is_op_call(a0)) {
    return reinterpret_cast<Word>(t.CallIntArg(static_cast<const FxOpCall*>(a0),
                                               static_cast<const char*>(a1),
                                               static_cast<int64_t*>(a2)));
  }
  return reinterpret_cast<Word>(t.GraphMatchPattern(
      static_cast<const FxGraph*>(a0), static_cast<const FxGraph*>(a1),
      static_cast<uint32_t>(reinterpret_cast<Word>(a2)),
      reinterpret_cast<FxMatchFn>(a3), a4));
}

// Slot 105: CallFloatArg / GraphReplacePattern.
Word slot105(void* a0, void* a1, void* a2, void* a3, void* a4, void* a5,
             void* a6, void* a7, void* a8) {
  const FxApi& t = full_table();
  if (is_op_call(a0)) {
    return reinterpret_cast<Word>(
        t.CallFloatArg(static_cast<const FxOpCall*>(a0),
                       static_cast<const char*>(a1), static_cast<double*>(a2)));
  }
  return reinterpret_cast<Word>(t.GraphReplacePattern(
      static_cast<FxGraph*>(a0), static_cast<const FxGraph*>(a1),
      static_cast<const FxGraph*>(a2),
      static_cast<uint32_t>(reinterpret_cast<Word>(a3)),
      reinterpret_cast<FxMatchFilterFn>(a4), a5,
      reinterpret_cast<FxMatchFn>(a6), a7, static_cast<size_t*>(a8)));
}

// `forwarder` in the slot of `entry`, typed as the slot is declared (through
// the generic function pointer type: the types differ on purpose).
template <typename Entry, typename Forwarder>
void install(Entry& entry, Forwarder* forwarder) {
  using Generic = void (*)(void);
  entry = reinterpret_cast<Entry>(reinterpret_cast<Generic>(forwarder));
}

}  // namespace

void forward_first_release_slots(FxApi& v1) {
  install(v1.GraphNumExampleInputs, &slot99);
  install(v1.GraphExampleInput, &slot100);
  install(v1.GraphNodeCopy, &slot101);
  install(v1.CreateGraph, &slot102);
  install(v1.ReleaseGraph, &slot103);
  install(v1.GraphMatchPattern, &slot104);
  install(v1.GraphReplacePattern, &slot105);
}

}  // namespace fx::host::internal
