// Plugin discovery: files and directories in order, each file once however
// it is named, the sink's errors, and the default directories
// ($FX_PLUGIN_PATH, then the first-party plugins in the runfiles).
#include "host/loader/plugin_discovery.h"

#include <gtest/gtest.h>

#include <boost/filesystem.hpp>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tests/testing/status_matchers.h"

namespace fx::host {
namespace {

namespace fs = boost::filesystem;
using ::fx::testing::error_of;

const std::string kDir = "tests/plugin_api/plugins/";

// A discovery that records the names of the plugins it is handed.
struct Recorded {
  std::vector<std::string> names;
  PluginDiscovery discovery{[this](std::shared_ptr<const Plugin> plugin) {
    names.emplace_back(plugin->name());
    return absl::OkStatus();
  }};
};

// A fresh directory holding copies of the given test plugins.
std::string plugin_dir(const std::string& name,
                       const std::vector<std::string>& libs) {
  fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const std::string& lib : libs) fs::copy_file(kDir + lib, dir / lib);
  return dir.string();
}

TEST(PluginDiscovery, LoadsFilesThenDirectoriesEachFileOnce) {
  std::string dir = plugin_dir("two", {"libtest_passes.so", "libc_plugin.so"});
  Recorded r;
  PluginSources sources;
  sources.plugins = {dir + "/libtest_passes.so", dir + "/./libtest_passes.so"};
  sources.plugin_dirs = {dir};
  sources.default_dirs = false;
  ASSERT_TRUE(r.discovery.load(sources).ok());
  // The directory in file-name order; libtest_passes.so was loaded already.
  EXPECT_EQ(r.names, (std::vector<std::string>{"test_passes", "c_plugin"}));
  // Later calls on the same discovery skip what it loaded.
  ASSERT_TRUE(r.discovery.load_file(dir + "/libc_plugin.so").ok());
  EXPECT_EQ(r.names.size(), 2u);
}

TEST(PluginDiscovery, TheFirstErrorStopsIt) {
  std::string dir = plugin_dir(
      "bad", {"libc_plugin.so", "libnot_a_plugin.so", "libtest_passes.so"});
  Recorded r;
  absl::Status s = r.discovery.load_directory(dir);
  EXPECT_EQ(error_of(s), "'" + dir +
                             "/libnot_a_plugin.so' is not an fx plugin: it "
                             "does not export fx_plugin_get_info (define it "
                             "with FXP_PLUGIN or as extern \"C\" "
                             "FX_PLUGIN_EXPORT const FxPluginInfo* "
                             "fx_plugin_get_info(void))");
  EXPECT_EQ(r.names, std::vector<std::string>{"c_plugin"});
  EXPECT_EQ(error_of(r.discovery.load_directory(dir + "/missing")),
            "plugin directory '" + dir + "/missing' does not exist");
}

TEST(PluginDiscovery, WithASkipHandlerABrokenFileOfADirectoryIsSkipped) {
  std::string dir = plugin_dir(
      "skip", {"libc_plugin.so", "libnot_a_plugin.so", "libtest_passes.so"});
  std::vector<std::string> names, skipped;
  PluginDiscovery discovery(
      [&names](std::shared_ptr<const Plugin> plugin) {
        names.emplace_back(plugin->name());
        return absl::OkStatus();
      },
      [&skipped](const std::string& path, absl::Status why) {
        skipped.push_back(path + ": " + std::string(why.message()));
      });
  ASSERT_TRUE(discovery.load_directory(dir).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"c_plugin", "test_passes"}));
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].rfind(dir + "/libnot_a_plugin.so: '" + dir +
                                 "/libnot_a_plugin.so' is not an fx plugin",
                             0),
            0u)
      << skipped[0];
  // A file named on its own is still an error.
  EXPECT_FALSE(discovery.load_file(kDir + "libfuture_plugin.so").ok());
}

TEST(PluginDiscovery, TheSinksErrorIsReturnedUnchanged) {
  int calls = 0;
  PluginDiscovery discovery([&calls](std::shared_ptr<const Plugin>) {
    ++calls;
    return absl::AlreadyExistsError("taken");
  });
  PluginSources sources;
  sources.plugins = {kDir + "libc_plugin.so", kDir + "libtest_passes.so"};
  sources.default_dirs = false;
  absl::Status s = discovery.load(sources);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(error_of(s), "taken");
  EXPECT_EQ(calls, 1);
}

TEST(PluginDiscovery, PinnedFilesAreChecked) {
  Recorded r;
  absl::Status s =
      r.discovery.load_file(kDir + "libc_plugin.so", std::string(64, '0'));
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(r.names.empty());
}

TEST(PluginDiscovery, DefaultDirectoriesArePluginPathThenFirstParty) {
  ASSERT_EQ(setenv("FX_PLUGIN_PATH", "/opt/a::/opt/b", 1), 0);
  std::vector<std::string> dirs = default_plugin_dirs();
  ASSERT_EQ(dirs.size(), 3u);
  EXPECT_EQ(dirs[0], "/opt/a");
  EXPECT_EQ(dirs[1], "/opt/b");
  // The first-party plugins in this test's runfiles.
  EXPECT_EQ(fs::path(dirs[2]).filename().string(), "plugins");
  EXPECT_TRUE(fs::exists(fs::path(dirs[2]) / "libfx_passes.so"));
  ASSERT_EQ(unsetenv("FX_PLUGIN_PATH"), 0);
  EXPECT_EQ(default_plugin_dirs(), std::vector<std::string>{dirs[2]});
}

}  // namespace
}  // namespace fx::host
