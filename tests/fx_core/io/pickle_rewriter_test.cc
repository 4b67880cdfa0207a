// The pickle checks before LibTorch's unpickler (issue 22): every opcode's
// stack and length, memo indices, nesting, and the globals torch.save
// writes. Programs are written byte by byte here.
#include "fx_core/io/pickle_rewriter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <string>

#include "fx_core/support/error.h"

namespace fx {
namespace {

using ::testing::HasSubstr;

// The refusal of `program` ("" when it is accepted).
std::string refusal(const std::string& program) {
  try {
    rewrite_pickle_for_libtorch(program);
    return "";
  } catch (const FxError& e) {
    return e.what();
  }
}

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

TEST(PickleRewriter, AppendAndSetitemBecomeTheirBatchForms) {
  EXPECT_EQ(rewrite_pickle_for_libtorch("]K\x01"
                                        "a."),
            "](K\x01"
            "e.");
  EXPECT_EQ(rewrite_pickle_for_libtorch("}K\x01K\x02s."), "}(K\x01K\x02u.");
}

// Python's pickle.dumps([torch.Size([2, 3]), torch.Size([]),
// torch.Size([7])], protocol=2): the GLOBAL is memoized and fetched again,
// the inner tuples built by TUPLE2, EMPTY_TUPLE and TUPLE1. Each call
// becomes the tuple (tag + "torch.Size", args) for the reader to untag.
TEST(PickleRewriter, TorchSizeBecomesATaggedTuple) {
  const std::string python(
      "\x80\x02]q\x00(ctorch\nSize\nq\x01K\x02K\x03\x86q\x02\x85q\x03Rq\x04"
      "h\x01)\x85q\x05Rq\x06h\x01K\x07\x85q\x07\x85q\x08Rq\te.",
      57);
  std::string program = rewrite_pickle_for_libtorch(python);
  c10::IValue value = torch::jit::unpickle(program.data(), program.size());
  ASSERT_TRUE(value.isList());
  c10::List<c10::IValue> sizes = value.toList();
  ASSERT_EQ(sizes.size(), 3u);
  std::vector<std::vector<int64_t>> want = {{2, 3}, {}, {7}};
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(sizes.get(i).isTuple()) << i;
    const auto& tagged = sizes.get(i).toTupleRef().elements();
    ASSERT_EQ(tagged.size(), 2u);
    EXPECT_EQ(tagged[0].toStringRef(),
              std::string(kPythonTupleTag) + "torch.Size");
    std::vector<int64_t> dims;
    for (const auto& d :
         tagged[1].toTupleRef().elements()[0].toTupleRef().elements()) {
      dims.push_back(d.toInt());
    }
    EXPECT_EQ(dims, want[i]) << i;
  }
}

// torch.return_types.max(((values, indices), {})) with its arguments built
// by TUPLE2: tagged the same way; anything else a refusal.
TEST(PickleRewriter, ReturnTypesCalledOtherwiseAreRefused) {
  EXPECT_EQ(refusal("\x80\x02"
                    "ctorch.return_types\nmax\nK\x01\x85R."),
            "bad pickle at byte 29: torch.return_types max called with "
            "something other than the arguments torch.save writes (opcode "
            "0x52)");
}

// Python writes LONG1 with the fewest bytes (2**40: 6), LibTorch reads 8.
TEST(PickleRewriter, ShortLongsAreWidenedAndHugeOnesRefused) {
  std::string program = rewrite_pickle_for_libtorch(
      std::string("\x80\x02](\x8a\x06\x00\x00\x00\x00\x00\x01"
                  "\x8a\x06\x00\x00\x00\x00\x00\xff\x8a\x00"
                  "e.",
                  27));
  c10::IValue value = torch::jit::unpickle(program.data(), program.size());
  std::vector<int64_t> ints;
  for (const c10::IValue& v : value.toListRef()) ints.push_back(v.toInt());
  EXPECT_EQ(ints,
            (std::vector<int64_t>{int64_t{1} << 40, -(int64_t{1} << 40), 0}));
  EXPECT_EQ(refusal(std::string("\x80\x02\x8a\x09"
                                "\x00\x00\x00\x00\x00\x00\x00\x00\x01.",
                                14)),
            "bad pickle at byte 2: an integer of 9 bytes is beyond 64 bits "
            "(opcode 0x8a)");
}

TEST(PickleRewriter, PopsOnAnEmptyStackAreRefused) {
  EXPECT_EQ(refusal("\x80\x02"
                    "a."),
            "bad pickle at byte 2: the stack is empty (opcode 0x61)");
  EXPECT_EQ(refusal("\x80\x02"
                    "2."),
            "bad pickle at byte 2: the stack is empty (opcode 0x32)");
  EXPECT_EQ(refusal("K\x01s."),
            "bad pickle at byte 2: the stack is empty (opcode 0x73)");
  EXPECT_EQ(refusal("R."),
            "bad pickle at byte 0: the stack is empty (opcode 0x52)");
  EXPECT_EQ(refusal("."),
            "bad pickle at byte 0: the stack is empty (opcode 0x2e)");
  EXPECT_EQ(refusal("t."),
            "bad pickle at byte 0: no MARK on the stack (opcode 0x74)");
}

TEST(PickleRewriter, PopsAcrossAMarkAreRefused) {
  EXPECT_EQ(refusal("](a."),
            "bad pickle at byte 2: a value expected, a MARK found (opcode "
            "0x61)");
  EXPECT_EQ(refusal("(."),
            "bad pickle at byte 1: a value expected, a MARK found (opcode "
            "0x2e)");
}

// LibTorch 1.13 pairs DICT's and SETITEMS's items two at a time and reads
// an unpaired key's value from past the end of its stack: a 30 Nov fuzz
// finding (tests/fuzz/crashes/torch_save/dict_key_without_value) aborted on
// the tag of whatever value had been there before.
TEST(PickleRewriter, KeysWithoutValuesAreRefused) {
  EXPECT_EQ(refusal("}(K\x01u."),
            "bad pickle at byte 4: an odd number of items after the MARK (1): "
            "a key without its value (opcode 0x75)");
  EXPECT_EQ(refusal("(K\x01K\x02K\x03"
                    "d."),
            "bad pickle at byte 7: an odd number of items after the MARK (3): "
            "a key without its value (opcode 0x64)");
  EXPECT_EQ(refusal("}(K\x01K\x02u."), "");
  EXPECT_EQ(refusal("(K\x01K\x02"
                    "d."),
            "");
}

// LibTorch's unpickler sizes a storage by the numel of its persistent id
// ('storage', type, key, location, numel): a negative one is refused.
TEST(PickleRewriter, StoragesOfNegativeSizeAreRefused) {
  using namespace std::string_literals;  // NOLINT: NUL bytes in the literals
  const std::string id = "(X\x07\x00\x00\x00storage"s +
                         "ctorch\nFloatStorage\n"s + "X\x01\x00\x00\x00"s +
                         "0"s + "X\x03\x00\x00\x00"s + "cpu"s;
  EXPECT_EQ(refusal(id + "J\xff\xff\xff\xfftQ."),
            "bad pickle at byte 53: a storage of -1 elements (opcode 0x51)");
  EXPECT_EQ(refusal(id + "K\x02tQ."), "");
}

// A per-channel quantizer's scales and zero points are read by LibTorch's
// unpickler while it rebuilds the tensor: a raw storage there (a tensor of
// the storage's declared numel over however few bytes its record holds)
// is refused, as is anything but a rebuilt tensor of known bounds.
TEST(PickleRewriter, PerChannelScalesMustBeRebuiltTensors) {
  using namespace std::string_literals;  // NOLINT: NUL bytes in the literals
  auto storage = [](const std::string& key, const std::string& type) {
    return "(X\x07\x00\x00\x00storage"s + "ctorch\n"s + type + "\n"s +
           "X\x01\x00\x00\x00"s + key + "X\x03\x00\x00\x00"s + "cpu"s +
           "K\x02tQ"s;
  };
  const std::string program =
      "\x80\x02"s + "ctorch._utils\n_rebuild_qtensor\n("s +
      storage("0", "QInt8Storage") + "K\x00K\x02\x85K\x01\x85"s +
      "(ctorch\nper_channel_affine\n"s + storage("1", "DoubleStorage") +
      storage("2", "LongStorage") + "K\x00t"s + "\x89"s +
      "ccollections\nOrderedDict\n)Rt"s + "R."s;
  EXPECT_THAT(refusal(program),
              HasSubstr("a per-channel quantized tensor's scales are not a "
                        "tensor rebuilt from a storage of the file with a "
                        "known size"));
}

TEST(PickleRewriter, LengthsThatWouldWrapAreRefused) {
  // BINUNICODE8 of 2^64 - 9 bytes.
  EXPECT_EQ(refusal(bytes(
                {0x8d, 0xf7, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, '.'})),
            "bad pickle at byte 0: length 18446744073709551607 beyond the 1 "
            "bytes left");
  EXPECT_EQ(refusal(bytes({'X', 0xff, 0xff, 0xff, 0xff, 'a', 'b', '.'})),
            "bad pickle at byte 0: length 4294967295 beyond the 3 bytes left");
  EXPECT_EQ(refusal("X\x01"), "bad pickle at byte 0: truncated length");
  EXPECT_EQ(refusal("J\x01"), "bad pickle at byte 0: truncated argument");
  EXPECT_EQ(refusal("\x80\x02N"),
            "bad pickle at byte 3: the program has no STOP");
}

TEST(PickleRewriter, MemoIndicesAreDenseAndWrittenBeforeRead) {
  EXPECT_EQ(refusal(bytes({']', 'r', 0xff, 0xff, 0xff, 0xff, '.'})),
            "bad pickle at byte 1: memo index 4294967295 skips ahead of the 0 "
            "stored (opcode 0x72)");
  EXPECT_EQ(refusal("h\x05."),
            "bad pickle at byte 0: memo index 5 was never stored (opcode "
            "0x68)");
  EXPECT_EQ(refusal(std::string("]q\x00h\x00\x30.", 7)), "");
}

TEST(PickleRewriter, ContainersNestAtMost1000DeepAndNeverInThemselves) {
  auto nested = [](int n) {
    std::string p;
    for (int i = 0; i < n; ++i) p += "](";
    return p + "]" + std::string(n, 'e') + ".";
  };
  // nested(n): n + 1 lists, the outermost n deep.
  EXPECT_EQ(refusal(nested(1000)), "");
  EXPECT_THAT(refusal(nested(1001)),
              HasSubstr("containers nested deeper than 1000"));
  EXPECT_THAT(refusal(nested(50000)),
              HasSubstr("containers nested deeper than 1000"));
  // l = []; l.append(l)
  EXPECT_EQ(refusal(std::string("]q\x00h\x00"
                                "a.",
                                7)),
            "bad pickle at byte 5: adds to a container that is inside another "
            "one already (opcode 0x61)");
}

TEST(PickleRewriter, OnlyTorchSaveGlobalsAreAccepted) {
  EXPECT_EQ(refusal("cos\nsystem\n(S'echo hi'\ntR."),
            "bad pickle at byte 0: refused global 'os system' (torch.save "
            "files hold only tensors, storages, OrderedDict, torch.Size, "
            "dtypes and devices) (opcode 0x63)");
  // STACK_GLOBAL builtins.eval
  EXPECT_THAT(refusal(bytes({0x8c, 8, 'b', 'u', 'i', 'l', 't', 'i', 'n', 's',
                             0x8c, 4, 'e', 'v', 'a', 'l', 0x93, '.'})),
              HasSubstr("refused global 'builtins eval'"));
  EXPECT_EQ(refusal("ctorch._utils\n_rebuild_tensor_v2\n."), "");
  EXPECT_TRUE(is_allowed_pickle_global("torch FloatStorage"));
  EXPECT_TRUE(is_allowed_pickle_global("torch float32"));
  EXPECT_TRUE(is_allowed_pickle_global("collections OrderedDict"));
  EXPECT_TRUE(is_allowed_pickle_global("torch.jit._pickle restore_type_tag"));
  EXPECT_TRUE(is_allowed_pickle_global("torch.return_types topk"));
  EXPECT_FALSE(is_allowed_pickle_global("torch load"));
  EXPECT_FALSE(is_allowed_pickle_global("torch.jit._pickle eval"));
  EXPECT_FALSE(is_allowed_pickle_global("collections namedtuple"));
  EXPECT_FALSE(is_allowed_pickle_global("torch"));
}

TEST(PickleRewriter, OpcodesThatBuildArbitraryObjectsAreRefused) {
  EXPECT_EQ(refusal("(ios\nsystem\n."),
            "bad pickle at byte 1: unsupported opcode 0x69");
  EXPECT_EQ(refusal("(o."), "bad pickle at byte 1: unsupported opcode 0x6f");
  EXPECT_EQ(refusal(bytes({0x82, 1, '.'})),
            "bad pickle at byte 0: unsupported opcode 0x82");
  EXPECT_EQ(refusal("Pid\n."), "bad pickle at byte 0: unsupported opcode 0x50");
  EXPECT_EQ(refusal("\xff."), "bad pickle at byte 0: unsupported opcode 0xff");
  EXPECT_EQ(refusal("]c__builtin__\nlist\n]R."),
            "bad pickle at byte 1: refused global '__builtin__ list' "
            "(torch.save files hold only tensors, storages, OrderedDict, "
            "torch.Size, dtypes and devices) (opcode 0x63)");
  EXPECT_EQ(refusal("]]R."),
            "bad pickle at byte 2: calls something that is no global (opcode "
            "0x52)");
}

}  // namespace
}  // namespace fx
