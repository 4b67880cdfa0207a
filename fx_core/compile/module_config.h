// Reading a module's configuration as its kind describes it
// (ModuleKind::describe: the constructor's arguments, e.g. MaxPool2d's
// kernel_size, stride, padding), for the InferencePlan's module steps
// (quantized_steps.h, pooling_steps.h).
#ifndef FX_CORE_COMPILE_MODULE_CONFIG_H_
#define FX_CORE_COMPILE_MODULE_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "fx_core/ir/argument.h"

namespace fx {

// A config entry that is an int or a pair of ints (kernel_size=3 or (3, 3)),
// as two ints; `fallback` twice when absent; nullopt for anything else.
std::optional<std::vector<int64_t>> int_pair(const ArgumentDict& config,
                                             std::string_view key,
                                             int64_t fallback);

// A config entry that is an int; `fallback` when absent; nullopt for
// anything else.
std::optional<int64_t> int_item(const ArgumentDict& config,
                                std::string_view key, int64_t fallback);

}  // namespace fx

#endif  // FX_CORE_COMPILE_MODULE_CONFIG_H_
