// Whether a file is a complete ELF shared object this process can load,
// checked by reading its headers before dlopen maps it.
//
// dlopen trusts the headers: a library cut short (a copy or a download that
// stopped) is mapped as its program headers say, and touching a page past
// the end of the file is a SIGBUS in the host; a library of another machine
// or class fails with a misleading message ("Bad file descriptor"). So a
// plugin file must have, in this order:
//   - the ELF magic, class ELF64 and this machine's byte order;
//   - a whole ELF header, type ET_DYN (a shared object: not an executable,
//     an object file or a core dump) and this machine's e_machine;
//   - its program header table (at least one entry) and its section header
//     table (when it has one) inside the file, at the entry sizes of ELF64;
//   - the file bytes of every segment (p_offset + p_filesz) inside the file;
//   - no DF_1_PIE flag in its dynamic section: a position-independent
//     executable is ET_DYN too, but a program, which dlopen refuses.
// This is about files cut short or built elsewhere, not about hostile ones:
// a file that passes still runs its code when it is loaded (isolate that in
// a worker process: host/pipeline/plugin_load_worker.h).
#ifndef HOST_LOADER_ELF_CHECK_H_
#define HOST_LOADER_ELF_CHECK_H_

#include <string>

#include "absl/status/status.h"

namespace fx::host {

// OK when the regular file at `path` passes the checks above; else
// InvalidArgument "cannot load plugin 'PATH': WHAT IS WRONG" (NotFound when
// it cannot be read).
absl::Status check_shared_object(const std::string& path);

}  // namespace fx::host

#endif  // HOST_LOADER_ELF_CHECK_H_
