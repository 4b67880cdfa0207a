// torch.save files from C++: the tensors, lists, tuples and dicts that Python
// writes with torch.save (inputs, outputs, weights), read and written with
// LibTorch's pickler so that `torch.load` reads what we write.
//
// Reading trusts nothing in the file: only a regular file is read, its pickle
// program is checked and rewritten for LibTorch 1.13's unpickler
// (pickle_rewriter.h), each storage must fit in its zip record, and each
// tensor (storage offset, sizes, strides) inside its storage
// (tensor_bounds.h). A refusal is an InvalidArgument status naming the file
// and the place ("tensor ['w']: storage offset 1000000, ...").
#ifndef FX_CORE_IO_TORCH_SAVE_H_
#define FX_CORE_IO_TORCH_SAVE_H_

#include <ATen/core/ivalue.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace fx {

// Reads a torch.save file holding any value.
absl::StatusOr<c10::IValue> read_value_file(const std::string& path);
// The same from the file's bytes; `source` names them in messages.
absl::StatusOr<c10::IValue> parse_value(std::string_view bytes,
                                        std::string_view source);
// Writes one, atomically.
absl::Status write_value_file(const std::string& path,
                              const c10::IValue& value);

// A torch.save file holding a dict of str -> Tensor (a state dict).
absl::StatusOr<std::vector<std::pair<std::string, at::Tensor>>>
read_tensor_dict(const std::string& path);
absl::StatusOr<std::vector<std::pair<std::string, at::Tensor>>>
parse_tensor_dict(std::string_view bytes, std::string_view source);
absl::Status write_tensor_dict(
    const std::string& path,
    const std::vector<std::pair<std::string, at::Tensor>>& tensors);

}  // namespace fx

#endif  // FX_CORE_IO_TORCH_SAVE_H_
