// The bytes of a torch.save file holding a value, written as Python's
// torch.save writes them (a zip of `data.pkl`, one `data/KEY` record per
// storage, and `version`), so that `torch.load` in Python gives back the
// Python types the value stands for:
//
//   IValue                                   Python
//   None, Bool, Int, Double, String          None, bool, int, float, str
//   Tensor (strided, CPU; views share        Tensor, via
//     their storage's record)                torch._utils._rebuild_tensor_v2
//   Tuple / list (any element type)          tuple / list
//   named Tuple "torch.Size"                 torch.Size
//   named Tuple "torch.return_types.NAME"    torch.return_types.NAME
//   GenericDict                              dict
//   Device                                   torch.device
//
// The pickle uses protocol 2 and only globals that
// `torch.load(weights_only=True)` accepts apart from torch.return_types.
// Values with no Python spelling here (sparse or quantized tensors, TorchScript
// objects, capsules) are refused: FxError naming the value's place
// ("[1]['a']: cannot save a sparse tensor").
#ifndef FX_CORE_IO_TORCH_PICKLER_H_
#define FX_CORE_IO_TORCH_PICKLER_H_

#include <ATen/core/ivalue.h>

#include <string>

namespace fx {

// The whole file's bytes. Throws FxError as described above.
std::string torch_save_bytes(const c10::IValue& value);

}  // namespace fx

#endif  // FX_CORE_IO_TORCH_PICKLER_H_
