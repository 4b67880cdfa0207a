// Loading plugins with Boost.DLL: the handshake, hash pinning, plugins in C
// and with another C++ ABI, and the registry's refusal of duplicate passes.
#include "host/loader/plugin_loader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "fx_core/support/strings.h"
#include "host/loader/sha256.h"
#include "host/pipeline/pass_registry.h"
#include "tests/testing/status_matchers.h"

namespace fx::host {
namespace {

using ::fx::testing::error_of;

const std::string kDir = "tests/plugin_api/plugins/";

TEST(Sha256, MatchesTheStandardTestVectors) {
  // FIPS 180-2 examples.
  EXPECT_EQ(sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(PluginLoader, LoadsACppPluginAndListsItsPasses) {
  auto plugin = load_plugin(kDir + "libtest_passes.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_EQ((*plugin)->name(), "test_passes");
  EXPECT_EQ((*plugin)->version(), "1.0");
  EXPECT_EQ((*plugin)->info().api_version, uint32_t{FX_API_VERSION});
  EXPECT_EQ((*plugin)->sha256().size(), 64u);
  const FxPluginInfo& info = (*plugin)->info();
  ASSERT_GE(info.num_passes, 4u);
  EXPECT_STREQ(info.passes[0].name, "decompose_relu");
  EXPECT_STREQ(info.passes[3].name, "echo_options");
  EXPECT_EQ(info.passes[3].num_options, 5u);
  EXPECT_STREQ(info.passes[3].options[4].default_value, "relu,gelu");
  EXPECT_EQ(info.passes[1].produces.count, 1u);
  EXPECT_STREQ(info.passes[1].produces.names[0], "tensor_meta");
}

TEST(PluginLoader, LoadsAPluginWrittenInC) {
  auto plugin = load_plugin(kDir + "libc_plugin.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_EQ((*plugin)->name(), "c_plugin");
  EXPECT_STREQ((*plugin)->info().passes[0].name, "c_add_to_mul");
}

TEST(PluginLoader, LoadsAPluginBuiltWithTheOldCxxAbi) {
  auto plugin = load_plugin(kDir + "libold_abi_plugin.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_EQ((*plugin)->name(), "old_abi_plugin");
}

TEST(PluginLoader, RefusesAPluginThatNeedsANewerHost) {
  EXPECT_EQ(error_of(load_plugin(kDir + "libfuture_plugin.so")),
            "plugin 'future_plugin' (" + kDir +
                "libfuture_plugin.so) requires fx plugin API version 18 or "
                "later, but this host provides version 17. Fix: use an fx "
                "host that provides API version 18, or rebuild the plugin "
                "with min_api_version <= 17");
}

TEST(PluginLoader, RefusesALibraryWithoutTheEntryPoint) {
  EXPECT_EQ(error_of(load_plugin(kDir + "libnot_a_plugin.so")),
            "'" + kDir +
                "libnot_a_plugin.so' is not an fx plugin: it does not export "
                "fx_plugin_get_info (define it with FXP_PLUGIN or as extern "
                "\"C\" FX_PLUGIN_EXPORT const FxPluginInfo* "
                "fx_plugin_get_info(void))");
}

TEST(PluginLoader, RefusesAMissingFile) {
  EXPECT_EQ(error_of(load_plugin(kDir + "libnothing.so")),
            "cannot load plugin: cannot read '" + kDir +
                "libnothing.so': No such file or directory");
}

// Issue 22: a FIFO or /dev/zero hung in sha256_file; now refused at once.
TEST(PluginLoader, RefusesWhatIsNotARegularFile) {
  EXPECT_EQ(error_of(load_plugin("/dev/zero")),
            "cannot load plugin: cannot read '/dev/zero': not a regular file "
            "(a character device)");
  const std::string fifo = ::testing::TempDir() + "libfifo_plugin.so";
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of(load_plugin(fifo)), "cannot load plugin: cannot read '" +
                                             fifo +
                                             "': not a regular file (a FIFO)");
  EXPECT_EQ(sha256_file(fifo).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::remove(fifo.c_str());
}

// Issue 41: an empty file said "Bad file descriptor".
TEST(PluginLoader, RefusesAnEmptyOrForeignFileNamingIt) {
  const std::string empty = ::testing::TempDir() + "libempty_plugin.so";
  { std::ofstream(empty, std::ios::binary | std::ios::trunc); }
  EXPECT_EQ(error_of(load_plugin(empty)),
            "cannot load plugin '" + empty +
                "': the file is empty, not a shared library");
  const std::string text = ::testing::TempDir() + "libtext_plugin.so";
  { std::ofstream(text, std::ios::binary | std::ios::trunc) << "#!/bin/sh\n"; }
  EXPECT_EQ(error_of(load_plugin(text)),
            "cannot load plugin '" + text +
                "': not a shared library (the file does not start with an "
                "ELF header)");
  std::remove(empty.c_str());
  std::remove(text.c_str());
}

TEST(PluginLoader, APinMismatchIsRefusedBeforeAnyPluginCodeRuns) {
  const std::string path = kDir + "libside_effect_plugin.so";
  auto digest = sha256_file(path);
  ASSERT_TRUE(digest.ok());
  std::string wrong(64, '0');
  unsetenv("FX_SIDE_EFFECT_PLUGIN_LOADED");
  EXPECT_EQ(error_of(load_plugin(path, wrong)),
            "plugin '" + path + "' is refused: its sha256 is " + *digest +
                " but the configuration pins " + wrong +
                ". The file changed since it was pinned; if the new file is "
                "trusted, update the pin");
  EXPECT_EQ(std::getenv("FX_SIDE_EFFECT_PLUGIN_LOADED"), nullptr);
  // The right pin, in any case, loads it (and its constructor runs).
  std::string upper = *digest;
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  auto plugin = load_plugin(path, upper);
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  EXPECT_NE(std::getenv("FX_SIDE_EFFECT_PLUGIN_LOADED"), nullptr);
}

TEST(PluginLoader, LoadsEveryPluginOfADirectoryInNameOrder) {
  // The test directory holds plugins that must be refused, so the directory
  // load stops at the first of them (libfuture_plugin.so, by name order).
  EXPECT_EQ(error_of(load_plugin_dir(kDir)).rfind("plugin 'future_plugin'", 0),
            0u);
  EXPECT_EQ(error_of(load_plugin_dir(kDir + "missing")),
            "plugin directory '" + kDir + "missing' does not exist");
}

// Declarations the handshake must refuse.
FxPluginInfo declared(uint32_t api, uint32_t min_api) {
  FxPluginInfo info{};
  info.name = "p";
  info.version = "1";
  info.api_version = api;
  info.min_api_version = min_api;
  return info;
}

TEST(PluginInfoCheck, RefusesMalformedDeclarations) {
  FxPluginInfo zero = declared(0, 0);
  EXPECT_EQ(error_of(check_plugin_info(&zero, "x.so")),
            "plugin 'p' (x.so) declares api_version 0 and min_api_version 0; "
            "both must be at least 1 and min_api_version <= api_version (set "
            "them to FX_API_VERSION from fx/plugin_api.h)");
  static const FxOptionSpec bad_default[] = {
      {"bits", FX_OPTION_INT, "eight", ""}};
  FxPassInfo pass{};
  pass.name = "q";
  pass.options = bad_default;
  pass.num_options = 1;
  pass.run = [](const FxApi*, FxGraph*, const FxOptions*, void*,
                int*) -> FxStatus* { return nullptr; };
  FxPluginInfo with_pass = declared(1, 1);
  with_pass.passes = &pass;
  with_pass.num_passes = 1;
  EXPECT_EQ(error_of(check_plugin_info(&with_pass, "x.so")),
            "plugin 'p' (x.so), pass 'q': the default of option 'bits' is not "
            "a valid int: expected an int, got 'eight'");
  pass.num_options = 0;
  pass.run = nullptr;
  EXPECT_EQ(error_of(check_plugin_info(&with_pass, "x.so")),
            "plugin 'p' (x.so), pass 'q': its run function is NULL");
}

// Found by tests/fuzz:plugin_info (crashes/plugin_info/option_type_minus_one):
// a C plugin may store any int in an FxOptionType; the check reads it as an
// int (reading it as the enum was undefined behaviour, UBSan's report).
TEST(PluginInfoCheck, RefusesAnOptionTypeOutsideTheEnum) {
  for (int stored : {-1, 5, 7, 1000}) {
    FxOptionSpec option{"rules", FX_OPTION_BOOL, "true", ""};
    std::memcpy(&option.type, &stored, sizeof(stored));
    FxPassInfo pass{};
    pass.name = "decompose";
    pass.options = &option;
    pass.num_options = 1;
    pass.run = [](const FxApi*, FxGraph*, const FxOptions*, void*,
                  int*) -> FxStatus* { return nullptr; };
    FxPluginInfo info = declared(2, 1);
    info.passes = &pass;
    info.num_passes = 1;
    EXPECT_EQ(error_of(check_plugin_info(&info, "x.so")),
              cat("plugin 'p' (x.so), pass 'decompose': option 'rules' has "
                  "unknown type ",
                  stored));
  }
}

// Found by tests/fuzz:plugin_info (crashes/plugin_info/misaligned_stride):
// a declared stride off the alignment read every pass after the first
// misaligned (UBSan); it is refused before any pass is read.
TEST(PluginInfoCheck, RefusesAPassStrideOffTheAlignment) {
  FxPassInfo passes[2] = {};
  FxPluginInfo info = declared(2, 1);
  info.passes = passes;
  info.num_passes = 2;
  info.pass_info_size = sizeof(FxPassInfo) + 2;
  EXPECT_EQ(
      error_of(check_plugin_info(&info, "x.so")),
      cat("plugin 'p' (x.so) declares pass_info_size ", sizeof(FxPassInfo) + 2,
          ", not a multiple of FxPassInfo's alignment (", alignof(FxPassInfo),
          " bytes). Fix: set struct_size = sizeof(FxPluginInfo) and "
          "pass_info_size = sizeof(FxPassInfo) (FXP_PLUGIN does)"));
}

TEST(PluginInfoCheck, APluginBuiltAgainstNewerHeadersLoadsIfItAcceptsThisHost) {
  FxPluginInfo newer = declared(FX_API_VERSION + 3, FX_API_VERSION);
  EXPECT_TRUE(check_plugin_info(&newer, "x.so").ok());
}

TEST(PassRegistry, RefusesTwoPluginsProvidingTheSamePass) {
  PassRegistry registry;
  auto first = load_plugin(kDir + "libtest_passes.so");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(registry.add(*first).ok());
  EXPECT_NE(registry.find("decompose_relu"), nullptr);
  auto again = Plugin::from_info(&(*first)->info(), "a copy");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(error_of(registry.add(*again)),
            "pass 'decompose_relu' is provided by both plugin 'test_passes' "
            "(" +
                kDir +
                "libtest_passes.so) and plugin 'test_passes' (built in); load "
                "only one of them");
  EXPECT_EQ(registry.plugins().size(), 1u);
}

TEST(PassRegistry, UnknownPassListsTheKnownOnes) {
  PassRegistry registry;
  EXPECT_EQ(error_of(registry.unknown_pass_error("dce")),
            "unknown pass 'dce' (no plugin is loaded)");
  auto c = load_plugin(kDir + "libc_plugin.so");
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(registry.add(*c).ok());
  EXPECT_EQ(error_of(registry.unknown_pass_error("dce")),
            "unknown pass 'dce' (known passes: c_add_to_mul)");
}

// Two plugins of different names with a pass of the same name: both load,
// each pass is found by its qualified name, the bare name is ambiguous.
TEST(PassRegistry, PassNamesThatClashAreQualifiedByPlugin) {
  PassRegistry registry;
  auto acme = load_plugin(kDir + "libacme_plugin.so");
  ASSERT_TRUE(acme.ok()) << acme.status();
  ASSERT_TRUE(registry.add(*acme).ok());
  ASSERT_NE(registry.find("dce"), nullptr);
  EXPECT_FALSE(registry.ambiguous("dce"));
  static FxPluginInfo other = (*acme)->info();
  other.name = "other";
  auto copy = Plugin::from_info(&other, "");
  ASSERT_TRUE(copy.ok()) << copy.status();
  ASSERT_TRUE(registry.add(*copy).ok());
  EXPECT_TRUE(registry.ambiguous("dce"));
  EXPECT_EQ(registry.find("dce"), nullptr);
  EXPECT_EQ(error_of(registry.lookup("dce").status()),
            "pass 'dce' is provided by plugins 'acme' (" + kDir +
                "libacme_plugin.so) and 'other' (built in); name one of "
                "acme.dce, other.dce");
  ASSERT_NE(registry.find("acme.dce"), nullptr);
  EXPECT_EQ(registry.find("acme.dce")->plugin->name(), "acme");
  EXPECT_EQ(registry.find("other.dce")->plugin->name(), "other");
  EXPECT_EQ(registry.find("other.dce")->qualified_name(), "other.dce");
  EXPECT_EQ(error_of(registry.unknown_pass_error("x")),
            "unknown pass 'x' (known passes: acme.dce, other.dce)");
  // The same plugin again: its qualified names are taken.
  EXPECT_EQ(registry.add(*acme).code(), absl::StatusCode::kAlreadyExists);
}

TEST(PassRegistry, AnUnknownPassNamesTheSkippedPlugins) {
  PassRegistry registry;
  registry.add_skipped("dir/libbroken.so", absl::InternalError("bad ELF"));
  EXPECT_EQ(error_of(registry.unknown_pass_error("p")),
            "unknown pass 'p' (no plugin is loaded); 1 plugin was skipped as "
            "broken and may provide it: dir/libbroken.so: bad ELF");
}

}  // namespace
}  // namespace fx::host
