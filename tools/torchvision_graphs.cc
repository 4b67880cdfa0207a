#include "tools/torchvision_graphs.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/filesystem.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "fx_core/support/strings.h"

namespace fx::tools {
namespace {

namespace fs = boost::filesystem;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

bool is_model_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

absl::StatusOr<fs::path> cache_dir() {
  if (!env("FX_CACHE_DIR").empty()) return fs::path(env("FX_CACHE_DIR"));
  if (!env("XDG_CACHE_HOME").empty()) {
    return fs::path(env("XDG_CACHE_HOME")) / "fx";
  }
  if (!env("HOME").empty()) return fs::path(env("HOME")) / ".cache" / "fx";
  return absl::FailedPreconditionError(
      "no cache directory for exported torchvision models: set FX_CACHE_DIR "
      "(or XDG_CACHE_HOME or HOME)");
}

// The running program's path, or "" when /proc/self/exe cannot be read.
std::string self_path() {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  return n > 0 ? std::string(exe, n) : "";
}

absl::StatusOr<std::string> find_exporter() {
  std::vector<std::string> candidates;
  if (!env("FX_TORCHFX_EXPORT").empty()) {
    candidates.push_back(env("FX_TORCHFX_EXPORT"));
  }
  std::string self = self_path();
  if (!self.empty()) {
    candidates.push_back(self + ".runfiles/fx_sdk/tools/torchfx_export.py");
    fs::path prefix = fs::path(self).parent_path().parent_path();
    candidates.push_back(
        (prefix / "share" / "fx-sdk" / "torchfx_export.py").string());
  }
  for (const char* root : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    if (!env(root).empty()) {
      candidates.push_back(env(root) + "/fx_sdk/tools/torchfx_export.py");
    }
  }
  boost::system::error_code ec;
  for (const std::string& c : candidates) {
    if (fs::is_regular_file(c, ec)) return c;
  }
  return absl::NotFoundError(
      cat("the torch.fx exporter (torchfx_export.py) was not found: looked in ",
          join(candidates, ", "),
          ". Fix: set FX_TORCHFX_EXPORT to tools/torchfx_export.py"));
}

// Runs `argv` with stdout and stderr going to `log` (a new file: never
// through a planted symlink); its exit status, or -1
// when it could not be started or ended by a signal.
int run_logged(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open(log.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The last lines of a log, for an error message.
std::string log_tail(const std::string& log) {
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  constexpr size_t kKeep = 2000;
  return s.size() > kKeep ? "..." + s.substr(s.size() - kKeep) : s;
}

bool is_bundle(const fs::path& dir) {
  boost::system::error_code ec;
  return fs::is_regular_file(dir / "graph.fx.json", ec) &&
         fs::is_regular_file(dir / "input.pt", ec);
}

// A fresh directory beside `bundle` for its export (mkdtemp: a new name that
// no planted file or symlink can take), or an error naming it.
absl::StatusOr<fs::path> fresh_export_dir(const std::string& model,
                                          const fs::path& bundle) {
  boost::system::error_code ec;
  fs::create_directories(bundle.parent_path(), ec);
  std::string tmp =
      (bundle.parent_path() / cat(".", model, ".partial-XXXXXX")).string();
  if (ec || mkdtemp(tmp.data()) == nullptr) {
    return absl::PermissionDeniedError(
        cat(tmp, ": cannot create the directory: ",
            ec ? ec.message() : std::strerror(errno)));
  }
  // mkdtemp's 0700 made 0755, as the cache's other bundles are.
  fs::permissions(tmp,
                  fs::owner_all | fs::group_read | fs::group_exe |
                      fs::others_read | fs::others_exe,
                  ec);
  return fs::path(tmp);
}

// Exports `model` into `bundle` through a temporary sibling directory.
absl::Status export_model(const std::string& model, const fs::path& bundle,
                          const std::string& exporter) {
  absl::StatusOr<fs::path> dir = fresh_export_dir(model, bundle);
  if (!dir.ok()) return dir.status();
  const fs::path tmp = *dir;
  boost::system::error_code ec;
  std::string python =
      env("FX_PYTHON").empty() ? "/usr/bin/python3" : env("FX_PYTHON");
  std::string log = (tmp / "export.log").string();
  int status = run_logged(
      {python, exporter, "--torchvision", model, "-o", tmp.string()}, log);
  if (status != 0 || !is_bundle(tmp)) {
    std::string output = log_tail(log);
    fs::remove_all(tmp, ec);
    return absl::FailedPreconditionError(
        cat("exporting torchvision model '", model, "' with ", python, " ",
            exporter, " failed (exit status ", status, "):\n", output,
            "\nFix: a Python with torch and torchvision (Debian's "
            "python3-torchvision at /usr/bin/python3, or set FX_PYTHON) and "
            "a model name of torchvision.models"));
  }
  fs::remove(tmp / "export.log", ec);
  fs::rename(tmp, bundle, ec);
  if (ec && !is_bundle(bundle)) {
    fs::remove_all(tmp, ec);
    return absl::PermissionDeniedError(
        cat(bundle.string(),
            ": cannot move the exported bundle into the "
            "cache"));
  }
  fs::remove_all(tmp, ec);  // another process cached it first
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> parse_torchvision_models(
    const std::string& text) {
  if (text == "default") return default_torchvision_models();
  std::vector<std::string> models;
  for (std::string_view part : split(text, ',')) {
    std::string name(part);
    if (!is_model_name(name)) {
      return absl::InvalidArgumentError(
          cat("--torchvision expects model names of torchvision.models "
              "separated by commas (or 'default': ",
              join(default_torchvision_models(), ","), "), got '", text, "'"));
    }
    models.push_back(name);
  }
  return models;
}

absl::StatusOr<std::vector<std::string>> torchvision_bundles(
    const std::vector<std::string>& models) {
  absl::StatusOr<fs::path> cache = cache_dir();
  if (!cache.ok()) return cache.status();
  fs::path dir = *cache / "torchvision";
  std::vector<std::string> bundles;
  absl::StatusOr<std::string> exporter;
  for (const std::string& model : models) {
    fs::path bundle = dir / model;
    if (!is_bundle(bundle)) {
      if (!exporter.ok()) exporter = find_exporter();
      if (!exporter.ok()) return exporter.status();
      absl::Status exported = export_model(model, bundle, *exporter);
      if (!exported.ok()) return exported;
    }
    bundles.push_back(bundle.string());
  }
  return bundles;
}

}  // namespace fx::tools
