#include "fx_sdk/host.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>

#define FX_HOST_STRINGIFY2(x) #x
#define FX_HOST_STRINGIFY(x) FX_HOST_STRINGIFY2(x)

namespace fx::host {

namespace {

// `path` with symbolic links and dot segments resolved, or empty when it
// does not exist.
std::string canonical(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return "";
  std::string result(resolved);
  free(resolved);
  return result;
}

// The directory of the file that holds this function (libfx_host.so when
// linked into it), or empty.
std::string own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  std::string path = canonical(info.dli_fname);
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

bool is_directory(const std::string& path) {
  struct stat s {};
  return stat(path.c_str(), &s) == 0 && S_ISDIR(s.st_mode);
}

}  // namespace

std::string library_version() {
  return FX_HOST_STRINGIFY(FX_HOST_VERSION_MAJOR) "." FX_HOST_STRINGIFY(
      FX_HOST_VERSION_MINOR) "." FX_HOST_STRINGIFY(FX_HOST_VERSION_PATCH);
}

std::string installed_plugin_dir() {
  std::string lib = own_directory();
  if (lib.empty()) return "";
  // The library is PREFIX/lib/libfx_host.so.
  std::string dir = lib + "/../" + std::string(kInstalledPluginDir);
  return is_directory(dir) ? canonical(dir) : "";
}

}  // namespace fx::host
