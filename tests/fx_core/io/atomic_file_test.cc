// fx::write_file_atomically never replaces what is not a regular file, and
// the file it writes keeps the permissions of the one it replaces.
#include "fx_core/io/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fx {
namespace {

TEST(AtomicFile, ADeviceIsNeverReplaced) {
  absl::Status s = write_file_atomically("/dev/full", "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "/dev/full: not a regular file; refusing to replace it");
  struct stat st;
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(AtomicFile, ADirectoryIsNeverReplaced) {
  EXPECT_EQ(check_replaceable(::testing::TempDir()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(check_replaceable(::testing::TempDir() + "new_file").ok());
}

mode_t mode_of(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

std::string contents_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Issue 41: replacing a 0600 output made it 0644.
TEST(AtomicFile, AReplacedFileKeepsItsPermissions) {
  for (mode_t mode : {0600, 0640, 0755}) {
    std::string path =
        ::testing::TempDir() + "kept_mode_" + std::to_string(mode);
    ASSERT_TRUE(write_file_atomically(path, "old").ok());
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    ASSERT_TRUE(write_file_atomically(path, "new").ok());
    EXPECT_EQ(mode_of(path), mode) << std::oct << mode;
    EXPECT_EQ(contents_of(path), "new");
    std::remove(path.c_str());
  }
}

TEST(AtomicFile, ANewFileGetsTheUmasksPermissions) {
  mode_t old_mask = ::umask(027);
  std::string path = ::testing::TempDir() + "new_under_umask";
  std::remove(path.c_str());
  absl::Status s = write_file_atomically(path, "x");
  ::umask(old_mask);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(mode_of(path), 0640);
  std::remove(path.c_str());
}

// Issue 34 item 4: the temporary beside OUT was OUT.tmp.PID.N, so a symlink
// planted at the next names made every write fail, and before O_EXCL one
// wrote through it. Symlinks (to a victim file) and FIFOs are planted at
// every name of that old pattern this process could use next: the write
// succeeds, the victim is unchanged, nothing blocks, and the plants stay.
TEST(AtomicFile, PlantedSymlinksAndFifosAtTemporaryNamesAreNeverUsed) {
  std::string dir = ::testing::TempDir();
  std::string victim = dir + "victim";
  std::string out = dir + "planted_out";
  ASSERT_TRUE(write_file_atomically(victim, "precious").ok());
  std::vector<std::string> plants;
  for (int n = 0; n < 200; ++n) {
    std::string name =
        out + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(n);
    if (n % 2 == 0) {
      ASSERT_EQ(::symlink(victim.c_str(), name.c_str()), 0) << name;
    } else {
      ASSERT_EQ(::mkfifo(name.c_str(), 0600), 0) << name;
    }
    plants.push_back(name);
  }
  for (int i = 0; i < 5; ++i) {
    absl::Status s = write_file_atomically(out, "output " + std::to_string(i));
    ASSERT_TRUE(s.ok()) << s.message();
  }
  EXPECT_EQ(contents_of(out), "output 4");
  EXPECT_EQ(contents_of(victim), "precious");
  for (const std::string& plant : plants) {
    struct stat st;
    ASSERT_EQ(::lstat(plant.c_str(), &st), 0) << plant;
    EXPECT_TRUE(S_ISLNK(st.st_mode) || S_ISFIFO(st.st_mode)) << plant;
    std::remove(plant.c_str());
  }
}

}  // namespace
}  // namespace fx
