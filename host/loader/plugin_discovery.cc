#include "host/loader/plugin_discovery.h"

#include <unistd.h>

#include <boost/filesystem.hpp>
#include <cstdlib>
#include <utility>

#include "fx_core/support/strings.h"

namespace fx::host {
namespace {

namespace fs = boost::filesystem;

// The first-party plugin directory of the running program, if any.
std::vector<std::string> runfiles_plugin_dirs() {
  std::vector<std::string> candidates;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    std::string self(exe, n);
    candidates.push_back(self + ".runfiles/fx_sdk/plugins");
    // An installed SDK (bazel run //:install -- PREFIX): PREFIX/bin/fx and
    // PREFIX/lib/fx-sdk/plugins.
    fs::path bin = fs::path(self).parent_path();
    candidates.push_back((bin.parent_path() / std::string(kInstalledPluginDir))
                             .lexically_normal()
                             .string());
  }
  if (const char* runfiles = std::getenv("RUNFILES_DIR")) {
    candidates.push_back(std::string(runfiles) + "/fx_sdk/plugins");
  }
  if (const char* srcdir = std::getenv("TEST_SRCDIR")) {
    candidates.push_back(std::string(srcdir) + "/fx_sdk/plugins");
  }
  boost::system::error_code ec;
  for (const std::string& c : candidates) {
    if (fs::is_directory(c, ec)) return {c};
  }
  return {};
}

}  // namespace

std::vector<std::string> default_plugin_dirs() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("FX_PLUGIN_PATH")) {
    for (std::string_view d : split(path, ':')) {
      if (!d.empty()) dirs.emplace_back(d);
    }
  }
  for (std::string& d : runfiles_plugin_dirs()) dirs.push_back(std::move(d));
  return dirs;
}

std::string first_party_plugin_dir() {
  std::vector<std::string> dirs = runfiles_plugin_dirs();
  return dirs.empty() ? std::string() : dirs.front();
}

bool is_first_party_plugin(const std::string& path) {
  static const std::string first_party = [] {
    std::string dir = first_party_plugin_dir();
    if (dir.empty()) return dir;
    boost::system::error_code ec;
    std::string canonical = fs::canonical(dir, ec).string();
    return ec ? std::string() : canonical;
  }();
  if (first_party.empty() || path.empty()) return false;
  boost::system::error_code ec;
  fs::path parent = fs::absolute(path).parent_path();
  std::string canonical = fs::canonical(parent, ec).string();
  return !ec && canonical == first_party;
}

PluginDiscovery::PluginDiscovery(Sink sink, Skip skip)
    : sink_(std::move(sink)), skip_(std::move(skip)) {}

absl::Status PluginDiscovery::load_file(const std::string& path,
                                        std::string_view sha256) {
  boost::system::error_code ec;
  std::string key = fs::canonical(path, ec).string();
  if (ec) key = path;
  if (!seen_.insert(key).second) return absl::OkStatus();
  if (precheck_) {
    absl::Status checked = precheck_(path, sha256);
    if (!checked.ok()) return checked;
  }
  absl::StatusOr<std::shared_ptr<const Plugin>> plugin =
      load_plugin(path, sha256);
  if (!plugin.ok()) return plugin.status();
  return sink_(*std::move(plugin));
}

absl::Status PluginDiscovery::load_directory(const std::string& directory) {
  absl::StatusOr<std::vector<std::string>> files = plugin_files(directory);
  if (!files.ok()) return files.status();
  for (const std::string& f : *files) {
    absl::Status s = load_file(f);
    if (s.ok()) continue;
    if (!skip_) return s;
    skip_(f, std::move(s));
  }
  return absl::OkStatus();
}

absl::Status PluginDiscovery::load(const PluginSources& sources) {
  for (const std::string& p : sources.plugins) {
    absl::Status s = load_file(p);
    if (!s.ok()) return s;
  }
  for (const std::string& d : sources.plugin_dirs) {
    absl::Status s = load_directory(d);
    if (!s.ok()) return s;
  }
  if (sources.default_dirs) {
    for (const std::string& d : default_plugin_dirs()) {
      absl::Status s = load_directory(d);
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace fx::host
