// The cache of exported torchvision bundles (`fx plugin-check --torchvision`,
// tools/torchvision_graphs.cc) under hostile conditions (issue 34 item 4):
// each export goes to a fresh directory that mkdtemp names (never a name a
// planted symlink could hold), its log is a new file in it, the finished
// bundle is renamed into the cache whole, and a failed export leaves no
// directory behind. The exporter is a shell script standing in for
// torchfx_export.py (FX_PYTHON=/bin/sh, FX_TORCHFX_EXPORT=script), which
// copies a reference bundle into its -o directory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/testing/reference.h"
#include "tests/tools/fx_run.h"

namespace fx {
namespace {

namespace fs = std::filesystem;
using testing::Result;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TorchvisionCache : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(std::getenv("TEST_TMPDIR")) /
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(root_);
    fs::create_directories(root_);
    setenv("FX_CACHE_DIR", (root_ / "cache").c_str(), 1);
    setenv("FX_PYTHON", "/bin/sh", 1);
    setenv("FX_TORCHFX_EXPORT", (root_ / "export.sh").c_str(), 1);
  }
  void TearDown() override {
    for (const char* v : {"FX_CACHE_DIR", "FX_PYTHON", "FX_TORCHFX_EXPORT"}) {
      unsetenv(v);
    }
  }

  // The stand-in exporter: records its -o directory and whether its log
  // was a regular file, copies the reference bundle there, exits `status`.
  void write_exporter(int status) {
    const std::string seed = testing::reference_dir() + "/seed_mymodule";
    std::ofstream(root_ / "export.sh")
        << "out=$4\n"
        << "echo \"$out\" > '" << (root_ / "out_dir").string() << "'\n"
        << "test -f \"$out/export.log\" -a ! -L \"$out/export.log\" && "
        << "echo regular > '" << (root_ / "log_kind").string() << "'\n"
        << "cp '" << seed << "'/* \"$out\"/\n"
        << "echo the-exporters-own-words\n"
        << "exit " << status << "\n";
  }

  Result check(const std::string& model) {
    return testing::run({"plugin-check", "plugins/libfx_passes.so", "--pass",
                         "dce", "--torchvision", model});
  }

  fs::path torchvision() const { return root_ / "cache" / "torchvision"; }

  fs::path root_;
};

TEST_F(TorchvisionCache, AnExportGoesThroughAFreshDirectoryIntoTheCache) {
  write_exporter(0);
  Result r = check("resnet18");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const fs::path out =
      read(root_ / "out_dir").substr(0, read(root_ / "out_dir").find('\n'));
  EXPECT_EQ(out.parent_path(), torchvision());
  EXPECT_TRUE(std::regex_match(out.filename().string(),
                               std::regex(R"(\.resnet18\.partial-\w{6})")))
      << out;
  // Not the process id, a name anyone could plant beforehand.
  EXPECT_NE(out.filename(), ".resnet18.partial-" + std::to_string(::getpid()));
  EXPECT_EQ(read(root_ / "log_kind"), "regular\n");
  EXPECT_TRUE(
      fs::is_regular_file(torchvision() / "resnet18" / "graph.fx.json"));
  EXPECT_FALSE(fs::exists(torchvision() / "resnet18" / "export.log"));
  struct stat st;
  ASSERT_EQ(stat((torchvision() / "resnet18").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(torchvision())) {
    ++entries;
    EXPECT_EQ(e.path().filename(), "resnet18") << "left behind: " << e.path();
  }
  EXPECT_EQ(entries, 1);
}

TEST_F(TorchvisionCache, PlantedNamesAreNeverWrittenThrough) {
  // The old predictable names: a symlink at every .MODEL.partial-PID a
  // process of this test could have had, pointing at a victim directory.
  write_exporter(0);
  fs::create_directories(torchvision());
  fs::create_directories(root_ / "victim");
  for (int pid = ::getpid() - 2; pid <= ::getpid() + 2; ++pid) {
    fs::create_directory_symlink(
        root_ / "victim",
        torchvision() / (".resnet18.partial-" + std::to_string(pid)));
  }
  Result r = check("resnet18");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_empty(root_ / "victim"));
  EXPECT_TRUE(
      fs::is_regular_file(torchvision() / "resnet18" / "graph.fx.json"));
}

TEST_F(TorchvisionCache, AFailedExportIsNamedAndLeavesNothing) {
  write_exporter(3);
  Result r = check("resnet18");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("exporting torchvision model 'resnet18'"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("exit status 3"), std::string::npos) << r.err;
  // The exporter's log is in the error.
  EXPECT_NE(r.err.find("the-exporters-own-words"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(torchvision()));
}

}  // namespace
}  // namespace fx
