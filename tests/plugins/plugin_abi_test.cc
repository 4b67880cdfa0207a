// Every first-party plugin is built from the C contract alone: it exports
// exactly one function, fx_plugin_get_info, and needs no library of the
// host (no fx_core, no LibTorch), only the C and C++ runtimes.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/plugins/plugin_test_util.h"

namespace fx::plugins_test {
namespace {

TEST(PluginAbi, EachPluginExportsOnlyTheEntryPointAndNeedsNoHostLibrary) {
  size_t plugins = 0;
  for (const auto& entry : std::filesystem::directory_iterator("plugins")) {
    std::string path = entry.path().string();
    if (entry.path().extension() != ".so") continue;
    ++plugins;
    // `nm -D --defined-only`: "ADDRESS T NAME"; text symbols only.
    std::string out;
    ASSERT_EQ(run_command("nm -D --defined-only " + path +
                              " | awk '$2 == \"T\" {print $3}'",
                          &out),
              0);
    EXPECT_EQ(out, "fx_plugin_get_info\n") << path;
    ASSERT_EQ(run_command("readelf -d " + path + " | grep NEEDED", &out), 0);
    for (const char* host_library : {"torch", "c10", "fx_core", "absl"}) {
      EXPECT_EQ(out.find(host_library), std::string::npos)
          << path << " needs " << host_library << ":\n"
          << out;
    }
  }
  EXPECT_EQ(plugins, 6u);
}

}  // namespace
}  // namespace fx::plugins_test
