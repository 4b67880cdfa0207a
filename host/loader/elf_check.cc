#include "host/loader/elf_check.h"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "fx_core/io/regular_file.h"
#include "fx_core/support/strings.h"

namespace fx::host {
namespace {

static_assert(sizeof(void*) == 8, "plugins are checked as ELF64 files");

constexpr unsigned char kHostData =
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#elif defined(__powerpc64__)
constexpr uint16_t kHostMachine = EM_PPC64;
#elif defined(__s390x__)
constexpr uint16_t kHostMachine = EM_S390;
#elif defined(__riscv)
constexpr uint16_t kHostMachine = EM_RISCV;
#else
constexpr uint16_t kHostMachine = EM_NONE;  // unknown here: not checked
#endif

// "x86-64 (machine 62)", or "machine N" for one without a name here.
std::string machine_name(uint16_t machine) {
  std::string_view name;
  switch (machine) {
    case EM_X86_64:
      name = "x86-64";
      break;
    case EM_386:
      name = "i386";
      break;
    case EM_AARCH64:
      name = "AArch64";
      break;
    case EM_ARM:
      name = "ARM";
      break;
    case EM_PPC64:
      name = "PowerPC64";
      break;
    case EM_S390:
      name = "s390";
      break;
    case EM_RISCV:
      name = "RISC-V";
      break;
  }
  return name.empty() ? cat("machine ", machine)
                      : cat(name, " (machine ", machine, ")");
}

std::string type_name(uint16_t type) {
  switch (type) {
    case ET_EXEC:
      return "an executable (ET_EXEC)";
    case ET_REL:
      return "an object file (ET_REL)";
    case ET_CORE:
      return "a core dump (ET_CORE)";
  }
  return cat("an ELF file of type ", type);
}

std::string segment_type_name(uint32_t type) {
  switch (type) {
    case PT_LOAD:
      return "PT_LOAD";
    case PT_DYNAMIC:
      return "PT_DYNAMIC";
    case PT_INTERP:
      return "PT_INTERP";
    case PT_NOTE:
      return "PT_NOTE";
  }
  return cat("type ", type);
}

// A plugin file being checked: its descriptor, size and name for messages.
class ElfFile {
 public:
  ElfFile(const std::string& path, int fd, uint64_t size)
      : path_(path), fd_(fd), size_(size) {}

  absl::Status check() const {
    Elf64_Ehdr header{};
    absl::Status s = check_ident(header);
    if (s.ok()) s = check_header(header);
    if (s.ok()) s = check_tables(header);
    std::vector<Elf64_Phdr> segments;
    if (s.ok()) s = read_segments(header, segments);
    if (s.ok()) s = check_segments(segments);
    if (s.ok()) s = check_not_a_program(segments);
    return s;
  }

 private:
  absl::Status refuse(std::string_view what) const {
    return absl::InvalidArgumentError(
        cat("cannot load plugin '", path_, "': ", what));
  }

  absl::Status truncated(std::string_view what, uint64_t end) const {
    return refuse(cat("the file is truncated or corrupt: ", what,
                      " ends at byte ", end, ", but the file has ", size_,
                      " bytes (an incomplete copy? build or copy it again)"));
  }

  // Reads `size` bytes at `offset`; false on a short read.
  bool read_at(uint64_t offset, void* data, size_t size) const {
    char* out = static_cast<char*>(data);
    while (size > 0) {
      ssize_t n = ::pread(fd_, out, size, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      out += n;
      offset += static_cast<uint64_t>(n);
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  // `offset + count * entry` bytes, or UINT64_MAX when that overflows.
  static uint64_t end_of(uint64_t offset, uint64_t count, uint64_t entry) {
    if (entry != 0 && count > (UINT64_MAX - offset) / entry) return UINT64_MAX;
    return offset + count * entry;
  }

  // The magic, class and byte order; reads the header into `header`.
  absl::Status check_ident(Elf64_Ehdr& header) const {
    if (size_ == 0) return refuse("the file is empty, not a shared library");
    size_t got =
        static_cast<size_t>(std::min<uint64_t>(size_, sizeof(Elf64_Ehdr)));
    if (!read_at(0, &header, got) || got < SELFMAG ||
        std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
      return refuse(
          "not a shared library (the file does not start with an ELF "
          "header)");
    }
    if (got < EI_NIDENT) {
      return truncated("its ELF header", sizeof(Elf64_Ehdr));
    }
    unsigned char elf_class = header.e_ident[EI_CLASS];
    if (elf_class != ELFCLASS64) {
      return refuse(elf_class == ELFCLASS32
                        ? "it is a 32-bit ELF file; this fx loads 64-bit "
                          "shared libraries"
                        : cat("its ELF class is ", elf_class,
                              ", neither 32- nor 64-bit"));
    }
    if (header.e_ident[EI_DATA] != kHostData) {
      return refuse(cat(
          "it is a ", header.e_ident[EI_DATA] == ELFDATA2MSB ? "big" : "little",
          "-endian ELF file; this machine is ",
          kHostData == ELFDATA2LSB ? "little" : "big", "-endian"));
    }
    if (got < sizeof(Elf64_Ehdr)) {
      return truncated("its ELF header", sizeof(Elf64_Ehdr));
    }
    return absl::OkStatus();
  }

  // The file's type and machine.
  absl::Status check_header(const Elf64_Ehdr& header) const {
    if (header.e_type != ET_DYN) {
      return refuse(cat("it is ", type_name(header.e_type),
                        ", not a shared library (link it with -shared)"));
    }
    if (kHostMachine != EM_NONE && header.e_machine != kHostMachine) {
      return refuse(cat("it is built for ", machine_name(header.e_machine),
                        "; this machine is ", machine_name(kHostMachine)));
    }
    return absl::OkStatus();
  }

  // The program and section header tables: ELF64 entries, inside the file.
  absl::Status check_tables(const Elf64_Ehdr& header) const {
    if (header.e_phnum == 0 || header.e_phnum == PN_XNUM ||
        header.e_phentsize != sizeof(Elf64_Phdr)) {
      return refuse(cat("its program header table is malformed (",
                        header.e_phnum, " entries of ", header.e_phentsize,
                        " bytes)"));
    }
    uint64_t ph_end =
        end_of(header.e_phoff, header.e_phnum, header.e_phentsize);
    if (ph_end > size_) return truncated("its program header table", ph_end);
    if (header.e_shoff == 0) return absl::OkStatus();
    if (header.e_shentsize != sizeof(Elf64_Shdr)) {
      return refuse(cat("its section header entries have ", header.e_shentsize,
                        " bytes, not ", sizeof(Elf64_Shdr)));
    }
    // e_shnum 0 with a table: the count is in the first entry (SHN_XINDEX).
    uint64_t count = header.e_shnum == 0 ? 1 : header.e_shnum;
    uint64_t sh_end = end_of(header.e_shoff, count, header.e_shentsize);
    if (sh_end > size_) return truncated("its section header table", sh_end);
    return absl::OkStatus();
  }

  // The program header table (inside the file: check_tables).
  absl::Status read_segments(const Elf64_Ehdr& header,
                             std::vector<Elf64_Phdr>& segments) const {
    segments.resize(header.e_phnum);
    if (!read_at(header.e_phoff, segments.data(),
                 segments.size() * sizeof(Elf64_Phdr))) {
      return refuse("its program header table cannot be read");
    }
    return absl::OkStatus();
  }

  // Every segment's bytes in the file: what dlopen maps.
  absl::Status check_segments(const std::vector<Elf64_Phdr>& segments) const {
    for (size_t i = 0; i < segments.size(); ++i) {
      const Elf64_Phdr& segment = segments[i];
      if (segment.p_filesz == 0) continue;
      uint64_t end = end_of(segment.p_offset, 1, segment.p_filesz);
      if (end > size_) {
        return truncated(cat("its segment ", i, " (",
                             segment_type_name(segment.p_type), ")"),
                         end);
      }
    }
    return absl::OkStatus();
  }

  // Whether the dynamic section (inside the file: check_segments) has
  // DF_1_PIE in DT_FLAGS_1, read up to DT_NULL or kMaxDynamicEntries.
  bool flags_pie(const Elf64_Phdr& dynamic) const {
    constexpr uint64_t kMaxDynamicEntries = 4096;
    uint64_t count = std::min<uint64_t>(dynamic.p_filesz / sizeof(Elf64_Dyn),
                                        kMaxDynamicEntries);
    for (uint64_t i = 0; i < count; ++i) {
      Elf64_Dyn entry{};
      if (!read_at(dynamic.p_offset + i * sizeof(Elf64_Dyn), &entry,
                   sizeof(entry)) ||
          entry.d_tag == DT_NULL) {
        return false;
      }
      if (entry.d_tag == DT_FLAGS_1 && (entry.d_un.d_val & DF_1_PIE) != 0) {
        return true;
      }
    }
    return false;
  }

  // A position-independent executable is ET_DYN too, but dlopen refuses it
  // ("cannot dynamically load position-independent executable"): a
  // cc_binary built without linkshared, say.
  absl::Status check_not_a_program(
      const std::vector<Elf64_Phdr>& segments) const {
    for (const Elf64_Phdr& segment : segments) {
      if (segment.p_type == PT_DYNAMIC && flags_pie(segment)) {
        return refuse(
            "it is a position-independent executable (a program), not a "
            "shared library (link it with -shared; in Bazel, cc_binary "
            "with linkshared = True)");
      }
    }
    return absl::OkStatus();
  }

  const std::string& path_;
  int fd_;
  uint64_t size_;
};

}  // namespace

absl::Status check_shared_object(const std::string& path) {
  absl::StatusOr<int> fd = open_regular_file(path);
  if (!fd.ok()) {
    return absl::NotFoundError(
        cat("cannot load plugin: ", std::string(fd.status().message())));
  }
  struct stat st {};
  absl::Status checked;
  if (::fstat(*fd, &st) != 0) {
    checked = absl::NotFoundError(
        cat("cannot load plugin '", path, "': ", std::strerror(errno)));
  } else {
    checked = ElfFile(path, *fd, static_cast<uint64_t>(st.st_size)).check();
  }
  ::close(*fd);
  return checked;
}

}  // namespace fx::host
