// fx::env_choice: a setting an environment variable picks by name from a
// few words (FX_CONV_ALGORITHM=direct|measure|winograd, FX_NETWORK_TRIAL=
// 0|1, ...). Unset or empty, the setting keeps its default; any other word
// is an error that names the variable, the value and the words it takes.
#ifndef FX_CORE_SUPPORT_ENV_CHOICE_H_
#define FX_CORE_SUPPORT_ENV_CHOICE_H_

#include <cstddef>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

// The index in `choices` of environment variable `name`'s value; `unset`
// when it is unset or empty. Throws FxError ("NAME=value: expected a, b or
// c") for any other value.
inline size_t env_choice(const char* name,
                         std::initializer_list<std::string_view> choices,
                         size_t unset) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return unset;
  std::string expected;
  size_t i = 0;
  for (std::string_view choice : choices) {
    if (choice == v) return i;
    if (i > 0) expected += i + 1 == choices.size() ? " or " : ", ";
    expected += choice;
    ++i;
  }
  throw FxError(cat(name, "=", v, ": expected ", expected));
}

}  // namespace fx

#endif  // FX_CORE_SUPPORT_ENV_CHOICE_H_
