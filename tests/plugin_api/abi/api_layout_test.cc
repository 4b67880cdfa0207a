// The frozen layout of the FxApi table (plugin_api.h): every entry of every
// released version at the offset it was released at. Checked at compile
// time, so inserting, removing or reordering an entry fails the build of
// this test (and `bazel test //tests/plugin_api/...`).
//
// Each version's entries are listed in table order, once, when the version
// is released; a release appends a list and never edits an earlier one. An
// entry's expected offset is derived from its position: the table is the
// `version` field followed by one function pointer per entry, so entry i
// (counting every version's entries in order) sits at
// offsetof(FxApi, CreateStatus) + i * sizeof(void (*)(void)).
#include <gtest/gtest.h>

#include <cstddef>

#include "fx/plugin_api.h"

namespace {

// Version 1: the 123 entries of its second release (released/v1_123). Its
// first release (released/v1_106) had RegisterCustomOp .. CallFloatArg at
// the slots GraphNumExampleInputs .. GraphReplacePattern have here; the host
// serves both through forwarders in those seven slots (released/README.md),
// checked by abi_compat_test on plugins built against each.
#define FX_API_V1_ENTRIES(X) \
  X(CreateStatus)            \
  X(GetStatusCode)           \
  X(GetStatusMessage)        \
  X(ReleaseStatus)           \
  X(ReleaseString)           \
  X(CreateNone)              \
  X(CreateBool)              \
  X(CreateInt)               \
  X(CreateFloat)             \
  X(CreateString)            \
  X(CreateNodeRef)           \
  X(CreateList)              \
  X(CreateTuple)             \
  X(CreateDict)              \
  X(CreateSlice)             \
  X(CreateEllipsis)          \
  X(CreateTorchValue)        \
  X(CloneArg)                \
  X(ReleaseArg)              \
  X(ArgKind)                 \
  X(ArgGetBool)              \
  X(ArgGetInt)               \
  X(ArgGetFloat)             \
  X(ArgGetString)            \
  X(ArgGetNode)              \
  X(ArgSize)                 \
  X(ArgItem)                 \
  X(ArgKey)                  \
  X(ArgEqual)                \
  X(NodeOp)                  \
  X(NodeName)                \
  X(NodeTarget)              \
  X(NodeType)                \
  X(NodeGraph)               \
  X(NodeNumArgs)             \
  X(NodeArg)                 \
  X(NodeNumKwargs)           \
  X(NodeKwargKey)            \
  X(NodeKwargValue)          \
  X(NodeFindKwarg)           \
  X(NodeNumUsers)            \
  X(NodeUser)                \
  X(NodeNumInputs)           \
  X(NodeInput)               \
  X(NodeNext)                \
  X(NodePrev)                \
  X(NodeIsErased)            \
  X(NodeIsImpure)            \
  X(NodeNumMeta)             \
  X(NodeMetaKey)             \
  X(NodeGetMeta)             \
  X(NodeFormat)              \
  X(NodeSetArgs)             \
  X(NodeSetArg)              \
  X(NodeSetKwargs)           \
  X(NodeSetKwarg)            \
  X(NodeSetTarget)           \
  X(NodeSetType)             \
  X(NodeSetMeta)             \
  X(NodeRemoveMeta)          \
  X(NodeReplaceAllUsesWith)  \
  X(NodeReplaceInputWith)    \
  X(NodePrepend)             \
  X(NodeAppend)              \
  X(GraphNumNodes)           \
  X(GraphFirstNode)          \
  X(GraphLastNode)           \
  X(GraphOutputNode)         \
  X(GraphFindNodes)          \
  X(GraphCreateNode)         \
  X(GraphSetInsertPoint)     \
  X(GraphGetInsertPoint)     \
  X(GraphEraseNode)          \
  X(GraphEliminateDeadCode)  \
  X(GraphLint)               \
  X(GraphToText)             \
  X(GraphPythonCode)         \
  X(GraphHasAttr)            \
  X(GraphGetAttr)            \
  X(GraphSetAttr)            \
  X(GraphModuleType)         \
  X(OptionsGetBool)          \
  X(OptionsGetInt)           \
  X(OptionsGetFloat)         \
  X(OptionsGetString)        \
  X(OptionsGetListSize)      \
  X(OptionsGetListItem)      \
  X(GraphRun)                \
  X(GraphEvaluate)           \
  X(ValueKind)               \
  X(ValueTypeName)           \
  X(ValueTensorMeta)         \
  X(ValueToDLPack)           \
  X(ValueGetBool)            \
  X(ValueGetInt)             \
  X(ValueGetFloat)           \
  X(ValueSize)               \
  X(ValueItem)               \
  X(GraphAddSubgraphModule)  \
  X(GraphNumExampleInputs)   \
  X(GraphExampleInput)       \
  X(GraphNodeCopy)           \
  X(CreateGraph)             \
  X(ReleaseGraph)            \
  X(GraphMatchPattern)       \
  X(GraphReplacePattern)     \
  X(MatchSize)               \
  X(MatchPatternNode)        \
  X(MatchValue)              \
  X(MatchAnchor)             \
  X(MatchNumReplacements)    \
  X(MatchReplacement)        \
  X(GraphModuleConfig)       \
  X(RegisterCustomOp)        \
  X(RegisterLeafModuleRule)  \
  X(CallHasArg)              \
  X(CallTensorArg)           \
  X(CallTensorMeta)          \
  X(CallIntArg)              \
  X(CallFloatArg)            \
  X(GraphShareAttr)          \
  X(GraphAddModule)          \
  X(NodeUsers)

// Version 2.
#define FX_API_V2_ENTRIES(X) \
  X(ValueTensorMeta2)        \
  X(CallTensorMeta2)

// Version 3.
#define FX_API_V3_ENTRIES(X) \
  X(SupportTargets)          \
  X(SupportTensorMeta)       \
  X(SupportCallback)         \
  X(SupportOpcodes)          \
  X(SupportNodeNames)        \
  X(SupportAllOf)            \
  X(SupportAnyOf)            \
  X(SupportNot)              \
  X(ReleaseSupport)          \
  X(SupportIsNodeSupported)  \
  X(GraphProposePartitions)  \
  X(PartitionsCount)         \
  X(PartitionSize)           \
  X(PartitionNode)           \
  X(ReleasePartitions)       \
  X(GraphFusePartitions)

// Version 4.
#define FX_API_V4_ENTRIES(X) \
  X(RegisterDecomposition)   \
  X(RegisterLeafOp)

// Version 5: delegation.
#define FX_API_V5_ENTRIES(X) \
  X(RegisterBackend)         \
  X(GraphDelegatePartitions)

// Version 7: operator effects (version 6 added no entries).
#define FX_API_V7_ENTRIES(X) X(NodeOperatorEffects)

// Version 8: symbolic shapes.
#define FX_API_V8_ENTRIES(X) \
  X(ArgIsSymInt)             \
  X(CreateSymInt)            \
  X(GraphShapeEnv)           \
  X(ReleaseShapeEnv)         \
  X(ShapeEnvNumSymbols)      \
  X(ShapeEnvSymbolName)      \
  X(ShapeEnvSymbolHint)      \
  X(ShapeEnvSymbolSource)    \
  X(ShapeEnvNumGuards)       \
  X(ShapeEnvGuard)           \
  X(ShapeEnvGuardRelation)   \
  X(ShapeEnvCheck)           \
  X(GraphSymbolicShapeProp)  \
  X(GraphModuleTraining)

// Version 9: quantized tensors.
#define FX_API_V9_ENTRIES(X) X(GraphSetQuantizedAttr)

// Version 10: several batches of example inputs.
#define FX_API_V10_ENTRIES(X) \
  X(GraphNumExampleBatches)   \
  X(GraphExampleBatchInput)

// Version 11: renaming.
#define FX_API_V11_ENTRIES(X) \
  X(GraphRenameNodes)         \
  X(GraphResetNamespace)      \
  X(GraphModuleParameters)

// Version 12: operator schemas and tensor storage.
#define FX_API_V12_ENTRIES(X) \
  X(OperatorSchemas)          \
  X(ValueStorage)

// Version 13: files a pass writes.
#define FX_API_V13_ENTRIES(X) X(WriteOutputFile)

// Version 14: Python signatures and annotations.
#define FX_API_V14_ENTRIES(X) X(TargetSignature) X(TargetReturnType)

// Version 15: printed types and renamed shared attributes.
#define FX_API_V15_ENTRIES(X) \
  X(NodeSetTypeText) X(NodeTypeText) X(GraphShareAttrAs)

// Version 16: graphs of child GraphModules.
#define FX_API_V16_ENTRIES(X) X(GraphSubmoduleGraph)

// Version 17: the attributes a graph uses.
#define FX_API_V17_ENTRIES(X) X(GraphKeepUsedAttrs)

// Every entry's position: kIndex_<name>, counted over all versions.
#define FX_ENTRY_INDEX(name) kIndex_##name,
// (kV1Continue .. kV4Continue only make the numbering of the
// next version go on from the previous one's count.)
enum EntryIndex : size_t {
  FX_API_V1_ENTRIES(FX_ENTRY_INDEX) kV1Entries,
  kV1Continue = kV1Entries - 1,
  FX_API_V2_ENTRIES(FX_ENTRY_INDEX) kV2Entries,
  kV2Continue = kV2Entries - 1,
  FX_API_V3_ENTRIES(FX_ENTRY_INDEX) kV3Entries,
  kV3Continue = kV3Entries - 1,
  FX_API_V4_ENTRIES(FX_ENTRY_INDEX) kV4Entries,
  kV4Continue = kV4Entries - 1,
  FX_API_V5_ENTRIES(FX_ENTRY_INDEX) kV5Entries,
  kV5Continue = kV5Entries - 1,
  FX_API_V7_ENTRIES(FX_ENTRY_INDEX) kV7Entries,
  kV7Continue = kV7Entries - 1,
  FX_API_V8_ENTRIES(FX_ENTRY_INDEX) kV8Entries,
  kV8Continue = kV8Entries - 1,
  FX_API_V9_ENTRIES(FX_ENTRY_INDEX) kV9Entries,
  kV9Continue = kV9Entries - 1,
  FX_API_V10_ENTRIES(FX_ENTRY_INDEX) kV10Entries,
  kV10Continue = kV10Entries - 1,
  FX_API_V11_ENTRIES(FX_ENTRY_INDEX) kV11Entries,
  kV11Continue = kV11Entries - 1,
  FX_API_V12_ENTRIES(FX_ENTRY_INDEX) kV12Entries,
  kV12Continue = kV12Entries - 1,
  FX_API_V13_ENTRIES(FX_ENTRY_INDEX) kV13Entries,
  kV13Continue = kV13Entries - 1,
  FX_API_V14_ENTRIES(FX_ENTRY_INDEX) kV14Entries,
  kV14Continue = kV14Entries - 1,
  FX_API_V15_ENTRIES(FX_ENTRY_INDEX) kV15Entries,
  kV15Continue = kV15Entries - 1,
  FX_API_V16_ENTRIES(FX_ENTRY_INDEX) kV16Entries,
  kV16Continue = kV16Entries - 1,
  FX_API_V17_ENTRIES(FX_ENTRY_INDEX) kEntries
};
#undef FX_ENTRY_INDEX

constexpr size_t kEntrySize = sizeof(void (*)(void));
constexpr size_t kFirstEntry = offsetof(FxApi, CreateStatus);

static_assert(offsetof(FxApi, version) == 0, "FxApi.version moved");
static_assert(kFirstEntry == kEntrySize,
              "the first entry follows the version field, pointer-aligned");
static_assert(kV1Entries == 123, "version 1 has 123 entries");
static_assert(kIndex_GraphNumExampleInputs == 99 &&
                  kIndex_GraphReplacePattern == 105,
              "the slots the first release of version 1 had its "
              "registration and custom-op entries in");

#define FX_CHECK_OFFSET(name)                                            \
  static_assert(                                                         \
      offsetof(FxApi, name) == kFirstEntry + kIndex_##name * kEntrySize, \
      "FxApi." #name                                                     \
      " is not where its version released it: "                          \
      "entries are only appended (plugin_api.h)");
FX_API_V1_ENTRIES(FX_CHECK_OFFSET)
FX_API_V2_ENTRIES(FX_CHECK_OFFSET)
FX_API_V3_ENTRIES(FX_CHECK_OFFSET)
FX_API_V4_ENTRIES(FX_CHECK_OFFSET)
FX_API_V5_ENTRIES(FX_CHECK_OFFSET)
FX_API_V7_ENTRIES(FX_CHECK_OFFSET)
FX_API_V8_ENTRIES(FX_CHECK_OFFSET)
FX_API_V9_ENTRIES(FX_CHECK_OFFSET)
FX_API_V10_ENTRIES(FX_CHECK_OFFSET)
FX_API_V11_ENTRIES(FX_CHECK_OFFSET)
FX_API_V12_ENTRIES(FX_CHECK_OFFSET)
FX_API_V13_ENTRIES(FX_CHECK_OFFSET)
FX_API_V14_ENTRIES(FX_CHECK_OFFSET)
FX_API_V15_ENTRIES(FX_CHECK_OFFSET)
FX_API_V16_ENTRIES(FX_CHECK_OFFSET)
FX_API_V17_ENTRIES(FX_CHECK_OFFSET)
#undef FX_CHECK_OFFSET

// Version 6 extends FxPassInfo only (below); version 17 ends the table. An
// appended entry needs a "Version 18" list here (and FX_API_VERSION 18).
static_assert(sizeof(FxApi) == kFirstEntry + kEntries * kEntrySize,
              "FxApi has entries this file does not list: list them under "
              "their version");
static_assert(kV2Entries == 125, "versions 1 and 2 have 125 entries");
static_assert(kV3Entries == 141, "versions 1 to 3 have 141 entries");
static_assert(kV4Entries == 143, "versions 1 to 4 have 143 entries");
static_assert(kV5Entries == 145, "versions 1 to 6 have 145 entries");
static_assert(kV7Entries == 146, "versions 1 to 7 have 146 entries");
static_assert(kV8Entries == 160, "versions 1 to 8 have 160 entries");
static_assert(kV9Entries == 161, "versions 1 to 9 have 161 entries");
static_assert(kV10Entries == 163, "versions 1 to 10 have 163 entries");
static_assert(kV11Entries == 166, "versions 1 to 11 have 166 entries");
static_assert(kV12Entries == 168, "versions 1 to 12 have 168 entries");
static_assert(kV13Entries == 169, "versions 1 to 13 have 169 entries");
static_assert(kIndex_TargetSignature == 169,
              "TargetSignature (version 14) is entry 169 (0-based)");
static_assert(kIndex_TargetReturnType == 170,
              "TargetReturnType (version 14) is entry 170 (0-based)");
static_assert(kV14Entries == 171, "versions 1 to 14 have 171 entries");
static_assert(kIndex_NodeSetTypeText == 171 && kIndex_GraphShareAttrAs == 173,
              "version 15's entries are 171 to 173 (0-based)");
static_assert(kV15Entries == 174, "versions 1 to 15 have 174 entries");
static_assert(kIndex_GraphSubmoduleGraph == 174,
              "GraphSubmoduleGraph (version 16) is entry 174 (0-based)");
static_assert(kV16Entries == 175, "versions 1 to 16 have 175 entries");
static_assert(kIndex_GraphKeepUsedAttrs == 175,
              "GraphKeepUsedAttrs (version 17) is entry 175 (0-based)");
static_assert(FX_API_VERSION == 17,
              "a new FX_API_VERSION: list its entries above");

// FxPassInfo: version 1's fields end with user_data (the size a version-1
// to -5 plugin's array has per pass); version 6 appended `tolerance` and
// `idempotent` right after it.
constexpr size_t kPassInfoV1Size =
    offsetof(FxPassInfo, user_data) + sizeof(void*);
static_assert(offsetof(FxPassInfo, tolerance) == kPassInfoV1Size,
              "FxPassInfo.tolerance (version 6) follows version 1's fields");
static_assert(offsetof(FxPassInfo, idempotent) ==
                  kPassInfoV1Size + sizeof(FxTolerance),
              "FxPassInfo.idempotent (version 6) follows tolerance");
static_assert(sizeof(FxPassInfo) ==
                  kPassInfoV1Size + sizeof(FxTolerance) + sizeof(double),
              "FxPassInfo ends with version 6's fields: list appended ones "
              "under their version");
static_assert(offsetof(FxTolerance, rtol) == 0 &&
                  offsetof(FxTolerance, atol) == sizeof(double) &&
                  sizeof(FxTolerance) == 2 * sizeof(double),
              "FxTolerance (version 6) is rtol then atol");

TEST(ApiLayout, EveryReleasedEntryIsWhereItWasReleased) {
  // The checks are the static_asserts above; this records their scope.
  EXPECT_EQ(static_cast<size_t>(kV1Entries), 123u);
  EXPECT_EQ(static_cast<size_t>(kV2Entries), 125u);
  EXPECT_EQ(static_cast<size_t>(kV3Entries), 141u);
  EXPECT_EQ(static_cast<size_t>(kV4Entries), 143u);
  EXPECT_EQ(static_cast<size_t>(kV5Entries), 145u);
  EXPECT_EQ(static_cast<size_t>(kV7Entries), 146u);
  EXPECT_EQ(static_cast<size_t>(kV8Entries), 160u);
  EXPECT_EQ(static_cast<size_t>(kV9Entries), 161u);
  EXPECT_EQ(static_cast<size_t>(kV10Entries), 163u);
  EXPECT_EQ(static_cast<size_t>(kV11Entries), 166u);
  EXPECT_EQ(static_cast<size_t>(kV12Entries), 168u);
  EXPECT_EQ(static_cast<size_t>(kV13Entries), 169u);
  // TargetSignature, the 170th entry, at byte 8 + 169 * 8 on LP64.
  EXPECT_EQ(offsetof(FxApi, TargetSignature), 1360u);
  EXPECT_EQ(offsetof(FxApi, TargetReturnType), 1368u);
  EXPECT_EQ(static_cast<size_t>(kV14Entries), 171u);
  // NodeSetTypeText, the 172nd entry, at byte 8 + 171 * 8 on LP64.
  EXPECT_EQ(offsetof(FxApi, NodeSetTypeText), 1376u);
  EXPECT_EQ(offsetof(FxApi, NodeTypeText), 1384u);
  EXPECT_EQ(offsetof(FxApi, GraphShareAttrAs), 1392u);
  EXPECT_EQ(static_cast<size_t>(kV15Entries), 174u);
  // GraphSubmoduleGraph, the 175th entry, at byte 8 + 174 * 8 on LP64.
  EXPECT_EQ(offsetof(FxApi, GraphSubmoduleGraph), 1400u);
  EXPECT_EQ(static_cast<size_t>(kV16Entries), 175u);
  // GraphKeepUsedAttrs, the 176th entry, at byte 8 + 175 * 8 on LP64.
  EXPECT_EQ(offsetof(FxApi, GraphKeepUsedAttrs), 1408u);
  EXPECT_EQ(sizeof(FxApi), kFirstEntry + 176 * kEntrySize);
  // Version 1's FxPassInfo on LP64: 6 pointer-sized words and 5 name lists
  // of 2 words each; version 6 adds 16 bytes of tolerance and the flag.
  EXPECT_EQ(kPassInfoV1Size, 128u);
  EXPECT_EQ(sizeof(FxPassInfo), 152u);
}

}  // namespace
