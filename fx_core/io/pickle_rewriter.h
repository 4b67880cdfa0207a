// The pickle program of a torch.save file, checked and rewritten for
// LibTorch 1.13's C++ unpickler.
//
// The unpickler does not know three things Python's pickler writes: the
// APPEND and SETITEM opcodes (a list or dict of exactly one element) and the
// `torch.return_types.*` named tuples (the result of torch.topk, torch.max,
// ...) and torch.Size. The program is rewritten: APPEND becomes MARK ...
// APPENDS, SETITEM MARK ... SETITEMS, and a call of torch.Size, of a
// return_types class, of torch.serialization._get_layout or of
// torch._utils._rebuild_sparse(_csr)_tensor the tuple
// (kPythonTupleTag + "torch.Size", args) (the dotted name of what is called):
// the reader makes those calls on such tagged tuples (the named tuples of
// python_tuples.h, sparse tensors).
//
// The unpickler also trusts its input (an APPEND on an empty stack reads
// before its stack; a memo index of 2^32-1 allocates 64 GB). So the program
// is checked first, by a model of its stack: every opcode known and none
// that builds arbitrary objects (INST, OBJ, EXT*, NEWOBJ_EX, PERSID),
// every length inside the program, every pop above the last MARK, every
// memo read of an index written before, containers nested at most
// kMaxPickleDepth deep and never inside themselves, and only the globals
// torch.save writes (tensors, storages, OrderedDict, torch.Size, dtypes,
// torch.device, LibTorch's torch.jit._pickle helpers, torch.return_types,
// sparse tensors and their layouts).
// Given the sizes of the archive's records, every tensor rebuilt from a
// storage (_rebuild_tensor(_v2), _rebuild_qtensor) must lie inside its
// record: LibTorch's unpickler does not check, and reads some tensors while
// it unpickles (a per-channel quantizer's scales; tests/fuzz
// crashes/torch_save/qtensor_scales_outside_storage).
// A refusal throws FxError naming the byte offset and, for a global, its
// name.
#ifndef FX_CORE_IO_PICKLE_REWRITER_H_
#define FX_CORE_IO_PICKLE_REWRITER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace fx {

inline constexpr size_t kMaxPickleDepth = 1000;

// The first element of a rewritten torch.Size / return_types call (a NUL,
// so no text a Python program saves is mistaken for it by accident).
inline constexpr std::string_view kPythonTupleTag("\0fx.python_tuple:", 17);

// Whether torch.save files may name `global` ("torch._utils
// _rebuild_tensor_v2": module, space, name, as GLOBAL writes it).
bool is_allowed_pickle_global(const std::string& global);

// The bytes of record "data/KEY" of the archive, nullopt when it has none.
using RecordBytes =
    std::function<std::optional<uint64_t>(const std::string& key)>;

// The checked, rewritten program. Throws FxError as described above.
std::string rewrite_pickle_for_libtorch(const std::string& pickle,
                                        const RecordBytes& record_bytes = {});

}  // namespace fx

#endif  // FX_CORE_IO_PICKLE_REWRITER_H_
