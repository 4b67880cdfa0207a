// Hostile torch.save files (issue 22): tensors reaching outside their
// storage, storages larger than their records, pickles refused by the
// checks, paths that are not regular files. Each is a clear error naming the
// file and the tensor, never an out-of-bounds read. The files are made here
// by patching the pickle of real ones (the seed example's input.pt, files
// LibTorch writes).
#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>

#include "fx_core/io/torch_save.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

using ::testing::HasSubstr;

std::string tmp(const std::string& name) { return ::testing::TempDir() + name; }

// Copies the archive at `in` to `out` with its data.pkl passed through
// `patch`.
void patch_archive(const std::string& in, const std::string& out,
                   const std::function<void(std::string&)>& patch) {
  std::ifstream file(in, std::ios::binary);
  ASSERT_TRUE(file) << in;
  caffe2::serialize::PyTorchStreamReader reader(&file);
  std::ofstream dest(out, std::ios::binary | std::ios::trunc);
  caffe2::serialize::PyTorchStreamWriter writer(
      [&](const void* data, size_t n) {
        dest.write(static_cast<const char*>(data), n);
        return n;
      });
  for (const std::string& name : reader.getAllRecords()) {
    if (name == "version" || name == ".data/version") continue;
    auto [data, size] = reader.getRecord(name);
    std::string bytes(static_cast<const char*>(data.get()), size);
    if (name == "data.pkl") patch(bytes);
    writer.writeRecord(name, bytes.data(), bytes.size());
  }
  writer.writeEndOfFile();
}

// Replaces the first `from` in `s` by `to`.
void replace(std::string& s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  ASSERT_NE(at, std::string::npos);
  s.replace(at, from.size(), to);
}

std::string error_of(const std::string& path) {
  absl::StatusOr<c10::IValue> v = read_value_file(path);
  if (v.ok()) return "";
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(v.status().message());
}

TEST(TorchSaveLimits, TheSeedInputWithStorageOffsetAMillionIsRefused) {
  std::string input = fx::testing::reference_dir() + "/seed_mymodule/input.pt";
  ASSERT_TRUE(read_value_file(input).ok());
  std::string bad = tmp("offset.pt");
  // BINPERSID, then the storage offset as BININT1 0 -> BININT 1000000.
  patch_archive(input, bad, [](std::string& p) {
    replace(p, std::string("QK\x00", 3), std::string("QJ\x40\x42\x0f\x00", 6));
  });
  EXPECT_EQ(error_of(bad),
            bad +
                ": not a readable torch.save file: tensor [0]: storage "
                "offset 1000000, sizes [3, 4] and strides [4, 1] of 4-byte "
                "elements need 4000048 bytes; the storage holds 48");
}

TEST(TorchSaveLimits, AStorageLargerThanItsRecordIsRefused) {
  std::string good = tmp("two_doubles.pt");
  ASSERT_TRUE(
      write_tensor_dict(good, {{"w", at::zeros({2}, at::kDouble)}}).ok());
  std::string bad = tmp("claims_4096.pt");
  // The storage's element count in its persistent id: 2 -> 4096.
  patch_archive(good, bad, [](std::string& p) {
    replace(p, "K\x02t", std::string("M\x00\x10t", 4));
  });
  EXPECT_EQ(error_of(bad),
            bad +
                ": not a readable torch.save file: tensor ['w']: its "
                "storage claims 32768 bytes; record 'data/0' holds 16");
}

TEST(TorchSaveLimits, SizesAndStridesBeyondTheStorageAreRefused) {
  std::string good = tmp("six_floats.pt");
  ASSERT_TRUE(write_tensor_dict(good, {{"w", at::zeros({2, 3})}}).ok());
  std::string sizes = tmp("sizes.pt");
  // sizes (2, 3) -> (2, 4) in the rebuild call's arguments.
  patch_archive(good, sizes, [](std::string& p) {
    replace(p, "(K\x02K\x03t", "(K\x02K\x04t");
  });
  EXPECT_THAT(error_of(sizes),
              HasSubstr("tensor ['w']: storage offset 0, sizes [2, 4] and "
                        "strides [3, 1] of 4-byte elements need 28 bytes; "
                        "the storage holds 24"));
  std::string strides = tmp("strides.pt");
  patch_archive(good, strides, [](std::string& p) {
    replace(p, "(K\x03K\x01t", "(K\x09K\x01t");
  });
  EXPECT_THAT(error_of(strides),
              HasSubstr("sizes [2, 3] and strides [9, 1] of 4-byte elements "
                        "need 48 bytes; the storage holds 24"));
}

TEST(TorchSaveLimits, RefusedPicklesNameTheProblem) {
  std::string good = tmp("one.pt");
  ASSERT_TRUE(write_tensor_dict(good, {{"w", at::zeros({1})}}).ok());
  std::string bad = tmp("os_system.pt");
  patch_archive(good, bad, [](std::string& p) {
    replace(p, "ctorch._utils\n_rebuild_tensor_v2\n",
            "cos\nsystem\n" + std::string(21, 'N') + "0");
  });
  EXPECT_THAT(error_of(bad),
              HasSubstr("os_system.pt: not a readable torch.save file: bad "
                        "pickle at byte "));
  EXPECT_THAT(error_of(bad), HasSubstr("refused global 'os system'"));
}

TEST(TorchSaveLimits, OnlyRegularFilesAreRead) {
  absl::StatusOr<c10::IValue> zero = read_value_file("/dev/zero");
  EXPECT_EQ(zero.status().message(),
            "cannot read '/dev/zero': not a regular file (a character device)");
  std::string fifo = tmp("weights_fifo");
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(std::string(read_tensor_dict(fifo).status().message()),
              HasSubstr("not a regular file (a FIFO)"));
  std::remove(fifo.c_str());
}

// Found by tests/fuzz:torch_save (crashes/torch_save/stream_reader_leak):
// an archive LibTorch's PyTorchStreamReader opens and then refuses (its
// version record unreadable). The refusal is a clear error, in memory as
// from the file; LibTorch leaks the opened archive's state (FUZZING.md,
// "Known leaks"), which the sanitizer replay suppresses by name.
TEST(TorchSaveLimits, AnArchiveTheStreamReaderRefusesIsAnError) {
  const std::string path = "tests/fuzz/crashes/torch_save/stream_reader_leak";
  EXPECT_THAT(error_of(path),
              HasSubstr(path + ": not a readable torch.save file: "));
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty());
  absl::StatusOr<c10::IValue> parsed = parse_value(bytes, "<bytes>");
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(std::string(parsed.status().message()),
              HasSubstr("<bytes>: not a readable torch.save file: "));
}

// Found by the 10M campaign (crashes/torch_save/record_size_4gb_oom): a
// 1158-byte archive whose zip directory declares a 4 GB record, which
// LibTorch's reader allocated before reading (4.3 GB resident).
TEST(TorchSaveLimits, ARecordLargerThanTheArchiveIsRefusedBeforeAllocating) {
  EXPECT_THAT(error_of("tests/fuzz/crashes/torch_save/record_size_4gb_oom"),
              HasSubstr("declares 4294639618 bytes, more than the archive's "
                        "1158 bytes can hold"));
}

// Found by the 10M campaign (crashes/torch_save/return_types_nul_name): a
// torch.return_types class named with a NUL read, and the value could not
// be written back; such names are refused.
TEST(TorchSaveLimits, AReturnTypeThatIsNoIdentifierIsRefused) {
  EXPECT_THAT(error_of("tests/fuzz/crashes/torch_save/return_types_nul_name"),
              HasSubstr("refused global 'torch.return_types"));
}

// Found by tests/fuzz:torch_save (crashes/torch_save/qint8_without_quantizer):
// a QInt8Storage rebuilt by _rebuild_tensor_v2 is a quantized tensor with no
// quantizer, which LibTorch accepted and every use of it aborted on.
TEST(TorchSaveLimits, AQuantizedStorageWithoutQuantizerIsRefused) {
  EXPECT_THAT(error_of("tests/fuzz/crashes/torch_save/qint8_without_quantizer"),
              HasSubstr("a QInt8 tensor without quantization parameters"));
}

// Found by tests/fuzz:torch_save
// (crashes/torch_save/per_channel_scales_outside_record): a per-channel
// quantized tensor whose scales tensor claims more bytes than its record
// holds. The check walked the value's tensors, not the quantizer's, and
// writing the value back read past the record (ASan: heap-buffer-overflow).
// Since LibTorch's unpickler reads the scales while it rebuilds the tensor,
// the pickle's check refuses them before it runs.
TEST(TorchSaveLimits, PerChannelScalesOutsideTheirRecordAreRefused) {
  std::string error = error_of(
      "tests/fuzz/crashes/torch_save/per_channel_scales_outside_record");
  EXPECT_THAT(error, HasSubstr("a per-channel quantized tensor's scales (a "
                               "tensor whose sizes [2], strides [1] and "
                               "storage offset 0 reach past its storage of 0 "
                               "elements)"));
}

// Found by tests/fuzz:torch_save's 10M campaign
// (crashes/torch_save/qtensor_scales_outside_storage): LibTorch's unpickler
// rebuilt a per-channel quantized tensor from scales reaching past their
// storage and read them (a SIGSEGV at address 0, in _to_copy from
// make_per_channel_affine_quantizer), before any check of the loaded value
// could run. The pickle's check knows each storage's record size now.
TEST(TorchSaveLimits, ScalesOutsideTheirStorageAreRefusedBeforeUnpickling) {
  std::string error =
      error_of("tests/fuzz/crashes/torch_save/qtensor_scales_outside_storage");
  EXPECT_THAT(error, HasSubstr("a per-channel quantized tensor's "));
  EXPECT_THAT(error, HasSubstr("reach past its storage of"));
}

// Found by tests/fuzz:torch_save's 1 Dec campaign
// (crashes/torch_save/zero_numel_zero_points): the zero points' storage
// names 0 elements while its record holds 16 bytes. LibTorch's unpickler
// sizes a storage by the numel of its persistent id and reads no record
// for 0, so the zero points (size 2) read a null pointer while the
// quantizer was built (SIGSEGV in `fx exec`). The pickle's check took the
// record's size for the storage's.
TEST(TorchSaveLimits, AStorageHoldsTheFewerOfItsNumelAndItsRecord) {
  std::string error =
      error_of("tests/fuzz/crashes/torch_save/zero_numel_zero_points");
  EXPECT_THAT(error, HasSubstr("a per-channel quantized tensor's zero points "
                               "(a tensor whose sizes [2], strides [1] and "
                               "storage offset 0 reach past its storage of 0 "
                               "elements)"));
}

// Found by tests/fuzz:torch_save's 1 Dec campaign
// (crashes/torch_save/storage_type_int): a storage's persistent id whose
// type is an int (-2046538758), not a storage class. LibTorch's unpickler
// takes it as a dtype and indexes its dtype table with it (SIGSEGV at
// address 4). Persistent ids must be torch.save's.
TEST(TorchSaveLimits, PersistentIdsAreTorchSaves) {
  std::string error =
      error_of("tests/fuzz/crashes/torch_save/storage_type_int");
  EXPECT_THAT(error, HasSubstr("a persistent id other than torch.save's"));
}

// Found by tests/fuzz:torch_save (crashes/torch_save/empty_record_null_buffer):
// a stored record declared empty (the version record: 235 bytes stored, size
// 0). LibTorch allocates nothing for it and miniz reads its 0 bytes into the
// null buffer; our read adapter passed the null pointer on to memcpy (UBSan:
// "null pointer passed as argument 1"). It now reads nothing, and the empty
// version record is refused as Python's torch.load refuses it.
TEST(TorchSaveLimits, AnEmptyStoredRecordIsReadWithoutANullBuffer) {
  const std::string path =
      "tests/fuzz/crashes/torch_save/empty_record_null_buffer";
  std::string error = error_of(path);
  EXPECT_THAT(error, HasSubstr(path + ": not a readable torch.save file: "));
  EXPECT_THAT(error, HasSubstr("Couldn't parse the version  as Long Long"));
}

// Writing: a value nested past the writer's 1000 containers (a graph can
// build one at run time from arguments within the readers' limits) is an
// error naming the start of its place, not a message a step per level long,
// and leaves no file.
TEST(TorchSaveLimits, AValueNestedTooDeepToWriteIsAShortError) {
  c10::IValue value = at::ones({2});
  for (int i = 0; i < 1001; ++i) {
    c10::impl::GenericList list(c10::AnyType::get());
    list.push_back(value);
    value = list;
  }
  const std::string path = ::testing::TempDir() + "too_deep.pt";
  absl::Status written = write_value_file(path, value);
  ASSERT_FALSE(written.ok());
  std::string steps;
  for (int i = 0; i < 20; ++i) steps += "[0]";  // the 60 characters shown
  EXPECT_EQ(std::string(written.message()),
            path + ": cannot serialise: " + steps +
                "... (1001 levels): nested deeper than 1000 containers");
  EXPECT_FALSE(std::ifstream(path).good());
}

}  // namespace
}  // namespace fx
