// The ints that stand for torch's enums in a graph's values. A dtype,
// layout, memory format or qscheme is held as its enumerator's int, as
// TorchScript holds it; an int read from a file or put in a graph by a user
// can be any int64. c10's enums are 8 bits wide, and LibTorch does not check
// a cast: an int naming no enumerator crashes its kernels (a dtype of 100
// reaches a noexcept setter and terminates the process, -1 is a segfault)
// or is silently taken for another (263 is read as 7, torch.float64).
//
// Each function returns the enumerator `value` names, std::nullopt when it
// names none. Inline and private to the runtime's libraries (listed in
// their srcs), so that adding it rebuilt none of their users.
#ifndef FX_CORE_RUNTIME_ENUM_INTS_H_
#define FX_CORE_RUNTIME_ENUM_INTS_H_

#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/QScheme.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>

namespace fx {
namespace enum_ints_detail {

// `value` as enumerator E when 0 <= value < end (E's count).
template <typename E>
std::optional<E> below(int64_t value, E end) {
  if (value < 0 || value >= static_cast<int64_t>(end)) return std::nullopt;
  return static_cast<E>(value);
}

}  // namespace enum_ints_detail

// torch.uint8 ... torch.bfloat16, the quantized and the bit-packed dtypes:
// every ScalarType but Undefined.
inline std::optional<c10::ScalarType> dtype_from_int(int64_t value) {
  return enum_ints_detail::below(value, c10::ScalarType::Undefined);
}

inline std::optional<c10::Layout> layout_from_int(int64_t value) {
  return enum_ints_detail::below(value, c10::Layout::NumOptions);
}

inline std::optional<c10::MemoryFormat> memory_format_from_int(int64_t value) {
  return enum_ints_detail::below(value, c10::MemoryFormat::NumOptions);
}

inline std::optional<c10::QScheme> qscheme_from_int(int64_t value) {
  return enum_ints_detail::below(value,
                                 c10::QScheme::COMPILE_TIME_NUM_QSCHEMES);
}

}  // namespace fx

#endif  // FX_CORE_RUNTIME_ENUM_INTS_H_
