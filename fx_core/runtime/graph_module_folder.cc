// fx::to_folder (graph_module_folder.h): the package's files
// (graph_module_package.h gives module.py and the state dict) written into
// a fresh directory that takes the folder's place in one rename.
#include "fx_core/runtime/graph_module_folder.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <torch/nn/module.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/io/atomic_file.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/graph_namespace.h"
#include "fx_core/ir/node.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/graph_module_package.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using folder_package::TensorDict;
using folder_package::with_context;

// ------------------------------------------------------------ the folder
//
// The package is written as a set: every file goes into a fresh directory
// beside the folder, which then takes the folder's place in one rename
// (renameat2: RENAME_NOREPLACE for a new folder, RENAME_EXCHANGE for one
// that exists, whose old contents are removed after). A crash at any point
// leaves the old folder as it was, or the new one whole (and at worst a
// `.NAME.to_folder.*` directory beside it).

namespace fs = std::filesystem;

// The entries of a folder that are the package's (what to_folder writes,
// and Python's bytecode cache of it): replaced with it. Any other file is
// kept (linked into the new folder); any other directory is refused.
bool is_package_entry(std::string_view name) {
  for (std::string_view own :
       {"__init__.py", "module.py", "state_dict.pt", "graph.fx.json",
        "model.weights.pt", "model.weights.1.pt", "__pycache__"}) {
    if (name == own) return true;
  }
  return false;
}

std::string error_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

absl::Status folder_error(std::string_view what, const std::string& folder,
                          int error) {
  return absl::PermissionDeniedError(
      cat("to_folder: ", what, " '", folder, "': ", error_text(error)));
}

// The parent directory of `path` cannot be created or written in: named.
absl::Status parent_error(const fs::path& path, const std::string& folder,
                          int error) {
  return absl::PermissionDeniedError(
      cat("to_folder: cannot create the folder '", folder,
          "': its parent directory '", path.parent_path().string(),
          "' cannot be created or written in: ", error_text(error)));
}

// Removes `dir` (`what`: the old folder after it was replaced, or the new
// one's unfinished files); its directories are made writable by their owner
// and the removal retried if it fails (a 0555 folder). What still cannot be
// removed is left there, named on stderr: it is no error of to_folder's (the
// folder was replaced, or the status says why it was not).
constexpr char kOldFolder[] = "the old contents of the folder";

void remove_folder(const fs::path& dir, const char* what) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (!ec) return;
  std::error_code walk;
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, walk);
  for (fs::recursive_directory_iterator it(dir, walk), end; !walk && it != end;
       it.increment(walk)) {
    std::error_code ignored;
    if (it->symlink_status(ignored).type() == fs::file_type::directory) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add,
                      ignored);
    }
  }
  ec.clear();
  fs::remove_all(dir, ec);
  if (ec) {
    std::fprintf(stderr,
                 "to_folder: warning: %s, left at '%s', cannot be removed: "
                 "%s\n",
                 what, dir.c_str(), ec.message().c_str());
  }
}

// The directory `folder` names: absolute, `.` and `..` resolved, and its
// symlinks followed (a symlink to a directory is written through).
fs::path folder_path(const std::string& folder) {
  std::error_code ec;
  fs::path path = fs::absolute(folder.empty() ? "." : folder, ec);
  fs::path resolved = fs::weakly_canonical(path, ec);
  if (!ec) path = resolved;
  path = path.lexically_normal();
  if (!path.has_filename() && path.has_relative_path()) {
    path = path.parent_path();  // `pkg/`
  }
  return path;
}

// A new empty directory beside `path` (the same parent, so renames do not
// cross file systems) with an unpredictable name, as mkdir makes one (0777
// less the umask).
absl::StatusOr<fs::path> fresh_directory_beside(const fs::path& path,
                                                const std::string& folder) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  for (int attempt = 0; attempt < 100; ++attempt) {
    char suffix[17];
    std::snprintf(suffix, sizeof suffix, "%016llx",
                  static_cast<unsigned long long>(random()));
    fs::path tmp =
        path.parent_path() / cat(".", path.filename().string(), ".to_folder.",
                                 static_cast<int64_t>(::getpid()), ".", suffix);
    if (::mkdir(tmp.c_str(), 0777) == 0) return tmp;
    const int error = errno;
    if (error != EEXIST) return parent_error(path, folder, error);
  }
  return parent_error(path, folder, EEXIST);
}

// What an existing folder holds besides the package: the files to keep.
// A directory that is not the package's is refused (the folder is replaced
// as a whole), as is the current directory or one holding it.
absl::StatusOr<std::vector<std::string>> other_files(
    const fs::path& path, const std::string& folder) {
  std::error_code ec;
  fs::path cwd = fs::weakly_canonical(fs::current_path(ec), ec);
  if (!ec) {
    fs::path inside = cwd.lexically_relative(path);
    if (!inside.empty() && *inside.begin() != "..") {
      return absl::InvalidArgumentError(
          cat("to_folder: the folder '", folder,
              "' is the current directory or holds it; refusing to replace "
              "it (the folder is replaced as a whole)"));
    }
  }
  std::vector<std::string> others;
  fs::directory_iterator it(path, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (is_package_entry(name)) continue;
    if (it->symlink_status(ec).type() == fs::file_type::directory) {
      return absl::InvalidArgumentError(cat(
          "to_folder: the folder '", folder, "' holds the directory '", name,
          "', which is not the package's; refusing to replace the folder "
          "(it is replaced as a whole, keeping only its other files)"));
    }
    others.push_back(name);
  }
  if (ec) return folder_error("cannot read the folder", folder, ec.value());
  return others;
}

// The package's files in `dir` (new and empty); replacing `old`, the
// folder's and its files' permissions are kept and its other files linked
// in.
absl::Status fill_folder(const GraphModule& gm, const fs::path& dir,
                         const std::string& py, const TensorDict& state,
                         const fs::path& old,
                         const std::vector<std::string>& others,
                         const std::string& folder) {
  const std::string d = dir.string();
  absl::Status s = write_tensor_dict(cat(d, "/state_dict.pt"), state);
  if (!s.ok()) return with_context(s, "writing state_dict.pt");
  s = write_graph_module(gm, cat(d, "/graph.fx.json"));
  if (!s.ok()) return with_context(s, "writing graph.fx.json");
  s = write_file_atomically(cat(d, "/module.py"), py);
  if (!s.ok()) return with_context(s, "writing module.py");
  s = write_file_atomically(cat(d, "/__init__.py"), "from .module import *\n");
  if (!s.ok()) return with_context(s, "writing __init__.py");
  if (old.empty()) return absl::OkStatus();
  struct stat st;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path was = old / it->path().filename();
    if (::lstat(was.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      ::chmod(it->path().c_str(), st.st_mode & 07777);
    }
  }
  for (const std::string& name : others) {
    // linkat without AT_SYMLINK_FOLLOW: a symlink is kept as a symlink.
    if (::linkat(AT_FDCWD, (old / name).c_str(), AT_FDCWD, (dir / name).c_str(),
                 0) != 0) {
      const int error = errno;
      return folder_error(cat("cannot keep '", name, "' of the folder"), folder,
                          error);
    }
  }
  // The folder's mode last, once everything is in it (a 0555 folder).
  if (::stat(old.c_str(), &st) == 0) ::chmod(dir.c_str(), st.st_mode & 07777);
  return absl::OkStatus();
}

// `tmp` takes the place of `path` in one rename; the old folder, swapped to
// `tmp`, is removed after.
absl::Status commit_folder(const fs::path& tmp, const fs::path& path,
                           bool replaces, const std::string& folder) {
  std::error_code ec;
  if (!replaces) {
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(),
                    RENAME_NOREPLACE) == 0) {
      return absl::OkStatus();
    }
    if (errno == EEXIST) {
      return absl::AbortedError(cat("to_folder: the folder '", folder,
                                    "' appeared while it was written; "
                                    "nothing replaced"));
    }
    // A file system without RENAME_NOREPLACE: a plain rename.
    if ((errno != EINVAL && errno != ENOSYS) ||
        ::rename(tmp.c_str(), path.c_str()) != 0) {
      return folder_error("cannot create the folder", folder, errno);
    }
    return absl::OkStatus();
  }
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(),
                  RENAME_EXCHANGE) == 0) {
    remove_folder(tmp, kOldFolder);
    return absl::OkStatus();
  }
  if (errno != EINVAL && errno != ENOSYS) {
    return folder_error("cannot replace the folder", folder, errno);
  }
  // A file system without RENAME_EXCHANGE: the old folder goes aside first,
  // so a crash between the two renames leaves no folder (it is beside).
  absl::StatusOr<fs::path> aside = fresh_directory_beside(path, folder);
  if (!aside.ok()) return aside.status();
  if (::rename(path.c_str(), aside->c_str()) != 0) {
    int error = errno;
    fs::remove(*aside, ec);
    return folder_error("cannot replace the folder", folder, error);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::rename(aside->c_str(), path.c_str());
    return folder_error("cannot replace the folder", folder, error);
  }
  remove_folder(*aside, kOldFolder);
  return absl::OkStatus();
}

// Writes the folder's files (everything is generated) as a set.
absl::Status write_folder(const GraphModule& gm, const std::string& folder,
                          const std::string& py, const TensorDict& state) {
  const fs::path path = folder_path(folder);
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  const bool replaces = fs::exists(status);
  if (replaces && !fs::is_directory(status)) {
    return absl::InvalidArgumentError(
        cat("to_folder: '", folder,
            "' exists and is not a directory; refusing to replace it"));
  }
  std::vector<std::string> others;
  if (replaces) {
    absl::StatusOr<std::vector<std::string>> found = other_files(path, folder);
    if (!found.ok()) return found.status();
    others = std::move(*found);
  }
  fs::create_directories(path.parent_path(), ec);
  if (ec) return parent_error(path, folder, ec.value());
  absl::StatusOr<fs::path> tmp = fresh_directory_beside(path, folder);
  if (!tmp.ok()) return tmp.status();
  absl::Status s = fill_folder(gm, *tmp, py, state,
                               replaces ? path : fs::path(), others, folder);
  if (s.ok()) s = commit_folder(*tmp, path, replaces, folder);
  if (!s.ok()) remove_folder(*tmp, "the unfinished new folder");
  return s;
}

}  // namespace

absl::Status to_folder(const GraphModule& gm, const std::string& folder,
                       const std::string& module_name) {
  std::string py;
  TensorDict state;
  absl::Status s =
      folder_package::package_contents(gm, module_name, &py, &state);
  if (!s.ok()) return s;
  return write_folder(gm, folder, py, state);
}

}  // namespace fx
