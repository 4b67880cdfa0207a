// torch.save files from C++: the tensors, lists, tuples and dicts that Python
// writes with torch.save (inputs, outputs, weights), read and written with
// LibTorch's pickler so that `torch.load` reads what we write.
//
// LibTorch 1.13's C++ unpickler does not know three things Python's pickler
// writes: the APPEND and SETITEM opcodes (a list or dict of exactly one
// element) and the `torch.return_types.*` named tuples (the result of
// torch.topk, torch.max, ...). Before unpickling, the pickle program is
// rewritten: APPEND becomes MARK ... APPENDS, SETITEM MARK ... SETITEMS, and a
// return_types value the plain tuple it holds. Everything else goes to
// LibTorch unchanged.
#ifndef FX_CORE_IO_TORCH_SAVE_H_
#define FX_CORE_IO_TORCH_SAVE_H_

#include <ATen/core/ivalue.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace fx {

// Reads a torch.save file holding any value.
absl::StatusOr<c10::IValue> read_value_file(const std::string& path);
// Writes one, atomically.
absl::Status write_value_file(const std::string& path,
                              const c10::IValue& value);

// A torch.save file holding a dict of str -> Tensor (a state dict).
absl::StatusOr<std::vector<std::pair<std::string, at::Tensor>>>
read_tensor_dict(const std::string& path);
absl::Status write_tensor_dict(
    const std::string& path,
    const std::vector<std::pair<std::string, at::Tensor>>& tensors);

// The rewrite described above, on a bare pickle program (data.pkl). Throws
// FxError on a truncated or unknown program.
std::string rewrite_pickle_for_libtorch(const std::string& pickle);

}  // namespace fx

#endif  // FX_CORE_IO_TORCH_SAVE_H_
