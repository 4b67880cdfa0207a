// fx::check_zip_directory: a torch.save archive's zip directory checked
// before LibTorch's reader trusts it.
//
// PyTorchStreamReader allocates each record at the size the zip's central
// directory declares before reading it: a 1 KB file declaring a 4 GB record
// made the process allocate 4 GB (found by tests/fuzz:torch_save). This
// reads the central directory (zip64 sizes included) as miniz does, from
// the end of the archive, and refuses an entry whose data could not be in
// the archive: a stored entry larger than the archive, or a compressed one
// whose declared size exceeds what deflate can expand its compressed bytes
// to (1032:1). An archive whose directory cannot be read is left to the
// reader, which refuses it.
#ifndef FX_CORE_IO_ZIP_DIRECTORY_H_
#define FX_CORE_IO_ZIP_DIRECTORY_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "absl/status/status.h"

namespace fx {

// `read(pos, buf, n)` gives up to `n` bytes at `pos` of an archive of `size`
// bytes (fewer past its end). InvalidArgument naming the entry when one
// declares more than the archive can hold.
using ArchiveRead = std::function<size_t(uint64_t pos, void* buf, size_t n)>;
absl::Status check_zip_directory(uint64_t size, const ArchiveRead& read);

}  // namespace fx

#endif  // FX_CORE_IO_ZIP_DIRECTORY_H_
