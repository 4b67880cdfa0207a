// fx::FxError: what the IR throws on misuse, with torch.fx's message.
//
// The Graph and Node API mirrors torch.fx, which raises RuntimeError when a
// caller breaks an invariant (erasing a node that still has users, linting a
// graph with a use before its definition, ...). The C++ API throws FxError
// with the same text; file readers return absl::Status instead, and the C ABI
// converts both into status objects so nothing crosses it as an exception.
#ifndef FX_CORE_SUPPORT_ERROR_H_
#define FX_CORE_SUPPORT_ERROR_H_

#include <stdexcept>
#include <string>

namespace fx {

class FxError : public std::runtime_error {
 public:
  explicit FxError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace fx

#endif  // FX_CORE_SUPPORT_ERROR_H_
