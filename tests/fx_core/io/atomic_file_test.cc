// fx::write_file_atomically never replaces what is not a regular file.
#include "fx_core/io/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

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

}  // namespace
}  // namespace fx
