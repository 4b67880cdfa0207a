// Issue 34: plugin files checked as complete ELF shared objects of this
// machine before dlopen. Each file is a copy of a real test plugin, cut
// short or with one header field changed; a truncated copy was a SIGBUS in
// the host, a foreign one (or a program) said "Bad file descriptor".
#include "host/loader/elf_check.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "host/loader/plugin_loader.h"
#include "tests/testing/status_matchers.h"

namespace fx::host {
namespace {

using ::fx::testing::error_of;

const std::string kPlugin = "tests/plugin_api/plugins/libtest_passes.so";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class ElfCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    library_ = slurp(kPlugin);
    ASSERT_GT(library_.size(), sizeof(Elf64_Ehdr));
    std::memcpy(&header_, library_.data(), sizeof header_);
  }

  // `bytes` as a plugin file; its path.
  std::string plugin_file(const std::string& bytes) {
    std::string path = ::testing::TempDir() + "libelf_check_plugin.so";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path;
  }

  // The library with `size` bytes at `offset` replaced by `value`'s.
  template <typename T>
  std::string patched(size_t offset, T value) const {
    std::string bytes = library_;
    std::memcpy(bytes.data() + offset, &value, sizeof value);
    return bytes;
  }

  // The error of loading `bytes` as a plugin, without "cannot load plugin
  // 'PATH': ".
  std::string refusal(const std::string& bytes) {
    std::string path = plugin_file(bytes);
    std::string error = error_of(load_plugin(path));
    std::string prefix = "cannot load plugin '" + path + "': ";
    if (error.rfind(prefix, 0) != 0) return "unexpected: " + error;
    EXPECT_EQ(error_of(check_shared_object(path)), error);
    return error.substr(prefix.size());
  }

  // The end of the first PT_LOAD segment's bytes in the file.
  uint64_t first_load_end() const {
    for (size_t i = 0; i < header_.e_phnum; ++i) {
      Elf64_Phdr segment;
      std::memcpy(&segment,
                  library_.data() + header_.e_phoff + i * sizeof segment,
                  sizeof segment);
      if (segment.p_type == PT_LOAD) return segment.p_offset + segment.p_filesz;
    }
    return 0;
  }

  std::string library_;
  Elf64_Ehdr header_{};
};

TEST_F(ElfCheck, ACompleteCopyLoads) {
  EXPECT_TRUE(check_shared_object(plugin_file(library_)).ok());
  EXPECT_TRUE(load_plugin(plugin_file(library_)).ok());
}

TEST_F(ElfCheck, ATruncatedLibraryIsRefusedNamingWhatIsMissing) {
  std::string half = library_.substr(0, library_.size() / 2);
  uint64_t sh_end = header_.e_shoff + header_.e_shnum * sizeof(Elf64_Shdr);
  EXPECT_EQ(refusal(half),
            "the file is truncated or corrupt: its section header table ends "
            "at byte " +
                std::to_string(sh_end) + ", but the file has " +
                std::to_string(half.size()) +
                " bytes (an incomplete copy? build or copy it again)");
  // Without section headers (they are optional), the segments dlopen maps.
  std::string no_sections = half;
  uint64_t zero = 0;
  std::memcpy(no_sections.data() + offsetof(Elf64_Ehdr, e_shoff), &zero,
              sizeof zero);
  std::string refused = refusal(no_sections);
  EXPECT_NE(refused.find("the file is truncated or corrupt: its segment "),
            std::string::npos)
      << refused;
  EXPECT_NE(refused.find("(PT_LOAD) ends at byte "), std::string::npos)
      << refused;
  // A cut inside the ELF header.
  EXPECT_EQ(refusal(library_.substr(0, 40)),
            "the file is truncated or corrupt: its ELF header ends at byte "
            "64, but the file has 40 bytes (an incomplete copy? build or copy "
            "it again)");
  // A cut just short of the first segment's end.
  ASSERT_GT(first_load_end(), 0u);
  EXPECT_NE(refusal(library_.substr(0, first_load_end() - 1))
                .find("the file is truncated or corrupt"),
            std::string::npos);
}

TEST_F(ElfCheck, ALibraryOfAnotherMachineClassOrByteOrderIsRefused) {
  EXPECT_EQ(refusal(patched(offsetof(Elf64_Ehdr, e_machine), uint16_t{EM_ARM})),
            "it is built for ARM (machine 40); this machine is " +
                std::string(EM_X86_64 == header_.e_machine
                                ? "x86-64 (machine 62)"
                                : "AArch64 (machine 183)"));
  EXPECT_EQ(refusal(patched(EI_CLASS, char{ELFCLASS32})),
            "it is a 32-bit ELF file; this fx loads 64-bit shared libraries");
  EXPECT_EQ(refusal(patched(EI_DATA, char{ELFDATA2MSB})),
            "it is a big-endian ELF file; this machine is little-endian");
}

TEST_F(ElfCheck, WhatIsNotASharedObjectIsRefused) {
  EXPECT_EQ(refusal(patched(offsetof(Elf64_Ehdr, e_type), uint16_t{ET_EXEC})),
            "it is an executable (ET_EXEC), not a shared library (link it "
            "with -shared)");
  EXPECT_EQ(refusal(patched(offsetof(Elf64_Ehdr, e_type), uint16_t{ET_REL})),
            "it is an object file (ET_REL), not a shared library (link it "
            "with -shared)");
  EXPECT_EQ(refusal(patched(offsetof(Elf64_Ehdr, e_phnum), uint16_t{0})),
            "its program header table is malformed (0 entries of 56 bytes)");
  EXPECT_EQ(refusal(patched(offsetof(Elf64_Ehdr, e_phoff),
                            uint64_t{library_.size()})),
            "the file is truncated or corrupt: its program header table ends "
            "at byte " +
                std::to_string(library_.size() +
                               header_.e_phnum * sizeof(Elf64_Phdr)) +
                ", but the file has " + std::to_string(library_.size()) +
                " bytes (an incomplete copy? build or copy it again)");
  // Offsets whose sum overflows are past the end too.
  EXPECT_NE(refusal(patched(offsetof(Elf64_Ehdr, e_shoff), ~uint64_t{0}))
                .find("its section header table ends at byte "),
            std::string::npos);
}

// A position-independent executable is ET_DYN too (Debian's compilers
// build programs so; this test is one), but dlopen refuses it: Boost.DLL
// said "Bad file descriptor".
TEST_F(ElfCheck, AProgramIsRefused) {
  std::string program = slurp("/proc/self/exe");
  Elf64_Ehdr header{};
  ASSERT_GT(program.size(), sizeof header);
  std::memcpy(&header, program.data(), sizeof header);
  if (header.e_type != ET_DYN) GTEST_SKIP() << "this test is not a PIE";
  EXPECT_EQ(refusal(program),
            "it is a position-independent executable (a program), not a "
            "shared library (link it with -shared; in Bazel, cc_binary with "
            "linkshared = True)");
}

}  // namespace
}  // namespace fx::host
