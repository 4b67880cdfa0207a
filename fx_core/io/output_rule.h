// fx::FilesRead: the files a command reads, and the one rule for what it
// writes (every `fx` command and the bundle writers): an output is never a
// file the command reads nor a file such a file refers to (a bundle's
// weights beside its graph).
//
// Files are compared by what they are, not by how they are spelled: an
// existing output is the same file as an input when both have one device
// and inode (a hard link, a symlink, `..` or `./` spellings); an output
// that does not exist yet cannot be an existing input, and is compared with
// the other outputs of the same write by its absolute path with `.` and
// `..` resolved and its directory's symlinks followed.
//
// Outputs written on a command's behalf by code that does not see its
// FilesRead (a plugin's pass writing a file through the C ABI's
// WriteOutputFile, host/capi) obey the same rule through the process's
// current inputs: the command publishes its FilesRead (publish()) for as
// long as such code runs, and that code checks with check_current_output().
// One registry per process; a pass worker forked by the pass manager
// inherits it.
#ifndef FX_CORE_IO_OUTPUT_RULE_H_
#define FX_CORE_IO_OUTPUT_RULE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace fx {

class FilesRead {
 public:
  // `path` is read by the command; `what` names it in a refusal ("the
  // graph", "the weights of a.fx.json"). An empty path is ignored.
  void add(const std::string& path, std::string what);

  // OK when none of `outputs` (each with the option that names it, such as
  // {"-o", "out.fx.json"} or {"-o's weights file", "out.weights.pt"}) is a
  // file read or another of `outputs`. Otherwise InvalidArgument naming the
  // option, the output and the file it would overwrite.
  absl::Status check_outputs(
      const std::vector<std::pair<std::string, std::string>>& outputs) const;

  // While a Published lives, these files (a copy) are the process's current
  // inputs; destroying it restores those published before (none at first).
  class Published {
   public:
    Published(const Published&) = delete;
    Published& operator=(const Published&) = delete;
    ~Published();

   private:
    friend class FilesRead;
    explicit Published(const FilesRead& reads);
    std::vector<std::pair<std::string, std::string>> previous_;
    bool had_previous_ = false;
  };
  [[nodiscard]] Published publish() const;

 private:
  std::vector<std::pair<std::string, std::string>> read_;  // path, what
};

// OK when `output` is none of the files of the process's current inputs
// (FilesRead::publish), or when none are published (fx_sdk.run_pipeline
// from Python: no command, no inputs); otherwise check_outputs' refusal for
// {option, output}, naming the output and the input it would overwrite.
absl::Status check_current_output(const std::string& option,
                                  const std::string& output);

// `path` absolute, with `.` and `..` resolved and the symlinks of the part
// of it that exists followed (the file itself need not exist).
std::string resolved_path(const std::string& path);

}  // namespace fx

#endif  // FX_CORE_IO_OUTPUT_RULE_H_
