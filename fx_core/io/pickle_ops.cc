// A pickle program's instructions (pickle_ops.h): each opcode's argument
// layout, the opcodes refused, and the split of a program into
// instructions.
#include "fx_core/io/pickle_ops.h"

#include <cstdint>
#include <string>
#include <vector>

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace pickle {

std::string hex_byte(uint8_t code) {
  static const char kDigits[] = "0123456789abcdef";
  return cat("0x", kDigits[code >> 4], kDigits[code & 15]);
}

[[noreturn]] void refuse(size_t offset, std::string_view what) {
  throw FxError(cat("bad pickle at byte ", offset, ": ", what));
}

uint64_t little_endian(const std::string& p, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    v |= static_cast<uint64_t>(static_cast<uint8_t>(p[at + i])) << (8 * i);
  }
  return v;
}

namespace {

// Opcodes that build arbitrary objects or that LibTorch cannot read: INST,
// OBJ, EXT1/2/4, NEWOBJ_EX, PERSID, text GET/PUT, BYTEARRAY8, buffers.
bool is_refused_opcode(uint8_t code) {
  switch (code) {
    case 'i':
    case 'o':
    case 0x82:
    case 0x83:
    case 0x84:
    case 0x92:
    case 'P':
    case 'g':
    case 'p':
    case 0x96:
    case 0x97:
    case 0x98:
      return true;
    default:
      return false;
  }
}

}  // namespace

ArgLayout fixed_or_counted(uint8_t code) {
  switch (code) {
    case 0x80:
    case 'K':
    case 'q':
    case 'h':
      return {ArgKind::kFixed, 1};
    case 'M':
      return {ArgKind::kFixed, 2};
    case 'J':
    case 'r':
    case 'j':
      return {ArgKind::kFixed, 4};
    case 'G':
    case 0x95:
      return {ArgKind::kFixed, 8};
    case 0x8a:
    case 0x8c:
    case 'U':
    case 'C':
      return {ArgKind::kCounted, 1};
    case 0x8b:
    case 'X':
    case 'T':
    case 'B':
      return {ArgKind::kCounted, 4};
    case 0x8d:
    case 0x8e:
      return {ArgKind::kCounted, 8};
    default:
      return {ArgKind::kNone, 0};
  }
}

namespace {

ArgLayout argument_layout(uint8_t code) {
  if (is_refused_opcode(code)) return {ArgKind::kRefused, 0};
  ArgLayout sized = fixed_or_counted(code);
  if (sized.kind != ArgKind::kNone) return sized;
  switch (code) {
    case 'c':
      return {ArgKind::kLines, 2};
    case 'I':
    case 'L':
    case 'F':
    case 'S':
    case 'V':
      return {ArgKind::kLines, 1};
    case '(':
    case '.':
    case '0':
    case '1':
    case '2':
    case 'N':
    case 'Q':
    case 'R':
    case 'a':
    case 'b':
    case 'd':
    case '}':
    case 'e':
    case 'l':
    case ']':
    case 's':
    case 't':
    case ')':
    case 'u':
    case 0x81:
    case 0x85:
    case 0x86:
    case 0x87:
    case 0x88:
    case 0x89:
    case 0x8f:
    case 0x90:
    case 0x91:
    case 0x93:
    case 0x94:
      return {ArgKind::kNone, 0};
    default:
      return {ArgKind::kRefused, 0};
  }
}

}  // namespace

// Splits the program into instructions, every length checked against the
// bytes left (no sum that can wrap). Stops after STOP.
std::vector<PickleOp> parse_ops(const std::string& p) {
  std::vector<PickleOp> ops;
  size_t pos = 0;
  while (pos < p.size()) {
    size_t start = pos;
    uint8_t code = static_cast<uint8_t>(p[pos++]);
    ArgLayout arg = argument_layout(code);
    size_t left = p.size() - pos;
    if (arg.kind == ArgKind::kRefused) {
      refuse(start, cat("unsupported opcode ", hex_byte(code)));
    } else if (arg.kind == ArgKind::kFixed) {
      if (arg.n > left) refuse(start, "truncated argument");
      pos += arg.n;
    } else if (arg.kind == ArgKind::kCounted) {
      if (arg.n > left) refuse(start, "truncated length");
      uint64_t n = little_endian(p, pos, arg.n);
      if (n > left - arg.n) {
        refuse(start,
               cat("length ", n, " beyond the ", left - arg.n, " bytes left"));
      }
      pos += arg.n + static_cast<size_t>(n);
    } else {
      for (size_t k = 0; k < arg.n; ++k) {
        size_t nl = p.find('\n', pos);
        if (nl == std::string::npos) refuse(start, "truncated line");
        pos = nl + 1;
      }
    }
    ops.push_back({start, pos - start, code});
    if (code == '.') return ops;
  }
  refuse(p.size(), "the program has no STOP");
}

}  // namespace pickle
}  // namespace fx
