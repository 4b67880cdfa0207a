// The pickle program of a torch.save file, checked and rewritten for
// LibTorch 1.13's C++ unpickler.
//
// The unpickler does not know three things Python's pickler writes: the
// APPEND and SETITEM opcodes (a list or dict of exactly one element) and the
// `torch.return_types.*` named tuples (the result of torch.topk, torch.max,
// ...) and torch.Size. The program is rewritten: APPEND becomes MARK ...
// APPENDS, SETITEM MARK ... SETITEMS, a return_types value the plain tuple
// it holds, and torch.Size((d, ...)) LibTorch's own int list
// (torch.jit._pickle.build_intlist([d, ...])), which is how a size is held
// at run time.
//
// The unpickler also trusts its input (an APPEND on an empty stack reads
// before its stack; a memo index of 2^32-1 allocates 64 GB). So the program
// is checked first, by a model of its stack: every opcode known and none
// that builds arbitrary objects (INST, OBJ, EXT*, NEWOBJ_EX, PERSID),
// every length inside the program, every pop above the last MARK, every
// memo read of an index written before, containers nested at most
// kMaxPickleDepth deep and never inside themselves, and only the globals
// torch.save writes (tensors, storages, OrderedDict, torch.Size, dtypes,
// torch.device, LibTorch's torch.jit._pickle helpers, torch.return_types).
// A refusal throws FxError naming the byte offset and, for a global, its
// name.
#ifndef FX_CORE_IO_PICKLE_REWRITER_H_
#define FX_CORE_IO_PICKLE_REWRITER_H_

#include <cstddef>
#include <string>

namespace fx {

inline constexpr size_t kMaxPickleDepth = 1000;

// Whether torch.save files may name `global` ("torch._utils
// _rebuild_tensor_v2": module, space, name, as GLOBAL writes it).
bool is_allowed_pickle_global(const std::string& global);

// The checked, rewritten program. Throws FxError as described above.
std::string rewrite_pickle_for_libtorch(const std::string& pickle);

}  // namespace fx

#endif  // FX_CORE_IO_PICKLE_REWRITER_H_
