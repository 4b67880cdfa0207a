// The instructions of a pickle program (pickle_rewriter.h's checks): each
// opcode's argument layout, the split of a program into instructions with
// every length checked, and the storage types a program may name
// (pickle_ops.cc, pickle_globals.cc). Internal to fx_core/io.
#ifndef FX_CORE_IO_PICKLE_OPS_H_
#define FX_CORE_IO_PICKLE_OPS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fx {
namespace pickle {

// One instruction of a pickle program: its opcode and argument bytes.
struct PickleOp {
  size_t offset;
  size_t size;  // opcode included
  uint8_t code;
};

// `code` as 0xNN.
std::string hex_byte(uint8_t code);

// Throws FxError: bad pickle at byte `offset`, `what`.
[[noreturn]] void refuse(size_t offset, std::string_view what);

// The `n`-byte little-endian integer at `at` in `p`.
uint64_t little_endian(const std::string& p, size_t at, size_t n);

// How an opcode's argument is laid out.
enum class ArgKind { kNone, kFixed, kCounted, kLines, kRefused };
struct ArgLayout {
  ArgKind kind;
  size_t n;  // fixed size, width of the length, or number of lines
};

// The layout of a fixed-size or length-counted argument of `code`.
ArgLayout fixed_or_counted(uint8_t code);

// Splits the program into instructions, every length checked against the
// bytes left (no sum that can wrap). Stops after STOP.
std::vector<PickleOp> parse_ops(const std::string& p);

// The bytes of one element of the storage type `global` ("torch
// FloatStorage"), 0 for anything else.
size_t storage_element_size(const std::string& global);

}  // namespace pickle
}  // namespace fx

#endif  // FX_CORE_IO_PICKLE_OPS_H_
