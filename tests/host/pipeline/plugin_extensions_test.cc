// What plugins register when they load, recorded per plugin
// (plugin_extensions.h): through the current table's entries, through the
// first release's slots of the version-1 table, once per library content.
#include "host/extensions/plugin_extensions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_registry.h"

namespace fx::host {
namespace {

// Loads `path` into `registry` and returns what it registered.
PluginExtensions added(const std::string& path, PassRegistry& registry) {
  auto plugin = load_plugin(path);
  EXPECT_TRUE(plugin.ok()) << plugin.status();
  if (!plugin.ok()) return {};
  absl::Status status = registry.add(*plugin);
  EXPECT_TRUE(status.ok()) << status;
  return plugin_extensions(**plugin);
}

std::vector<std::string> targets(const PluginExtensions& e) {
  std::vector<std::string> out;
  for (const RegisteredCustomOp& op : e.custom_ops) {
    out.push_back(op.target + "(" + op.signature + ")" +
                  (op.has_shape_function ? " shape" : ""));
  }
  return out;
}

TEST(PluginExtensions, CustomOpsAndLeafModuleRules) {
  PassRegistry registry;
  PluginExtensions e =
      added("tests/plugin_api/plugins/libtest_passes.so", registry);
  EXPECT_EQ(targets(e), std::vector<std::string>{
                            "test_vendor.scaled_add(input, other, alpha=1.0) "
                            "shape"});
  EXPECT_EQ(e.leaf_module_rules, 1u);
  EXPECT_TRUE(e.decompositions.empty() && e.leaf_ops.empty() &&
              e.backends.empty());
}

TEST(PluginExtensions, MakeFxExtensionsAndBackends) {
  PassRegistry registry;
  PluginExtensions capture =
      added("sdk_examples/capture_vendor/libcapture_vendor.so", registry);
  EXPECT_EQ(capture.decompositions, std::vector<std::string>{"aten::silu"});
  EXPECT_EQ(capture.leaf_ops, std::vector<std::string>{"aten::layer_norm"});
  PluginExtensions accelerator =
      added("sdk_examples/accelerator/libaccelerator.so", registry);
  EXPECT_EQ(accelerator.backends, std::vector<std::string>{"accelerator"});
  EXPECT_TRUE(accelerator.custom_ops.empty());
}

// The first release of version 1 registers through slots 99 and 100, which
// the second release's plugins call as GraphNumExampleInputs and
// GraphExampleInput.
TEST(PluginExtensions, BothReleasesOfVersionOne) {
  PassRegistry registry;
  PluginExtensions first = added(
      "tests/plugin_api/abi/plugins/libfirst_release_plugin.so", registry);
  EXPECT_EQ(targets(first),
            std::vector<std::string>{
                "first_release.affine(input, scale, shift=None) shape"});
  EXPECT_EQ(first.leaf_module_rules, 1u);
  PluginExtensions second =
      added("tests/plugin_api/abi/plugins/libv1_plugin.so", registry);
  ASSERT_EQ(second.custom_ops.size(), 1u);
  EXPECT_EQ(second.custom_ops[0].target, "v1_plugin.identity");
  EXPECT_EQ(second.leaf_module_rules, 0u);
}

// The host registers a library's extensions once per process; every Plugin
// of that content reads the one record, and a plugin without extensions
// has an empty one.
TEST(PluginExtensions, OneRecordPerLibraryContent) {
  const std::string path = "tests/plugin_api/plugins/libtest_passes.so";
  PassRegistry first, second;
  PluginExtensions once = added(path, first);
  PluginExtensions again = added(path, second);
  EXPECT_EQ(targets(again), targets(once));
  EXPECT_EQ(again.leaf_module_rules, 1u);
  EXPECT_TRUE(added("tests/plugin_api/plugins/libc_plugin.so", first).empty());
}

}  // namespace
}  // namespace fx::host
