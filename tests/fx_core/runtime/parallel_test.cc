// fx::set_num_threads and the default thread count (issue 17, item 2).
#include "fx_core/runtime/parallel.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "fx_core/support/error.h"

namespace fx {
namespace {

TEST(Parallel, AvailableCoresIsTheAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(available_cores(), CPU_COUNT(&set));
  EXPECT_GE(available_cores(), 1);
}

TEST(Parallel, DefaultIsEveryCoreUnlessOmpNumThreadsSaysOtherwise) {
  const char* saved = std::getenv("OMP_NUM_THREADS");
  std::string old = saved ? saved : "";
  unsetenv("OMP_NUM_THREADS");
  EXPECT_EQ(default_num_threads(), available_cores());
  setenv("OMP_NUM_THREADS", "3", 1);
  EXPECT_EQ(default_num_threads(), 3);
  setenv("OMP_NUM_THREADS", "zero", 1);  // not a count: ignored
  EXPECT_EQ(default_num_threads(), available_cores());
  setenv("OMP_NUM_THREADS", "0", 1);
  EXPECT_EQ(default_num_threads(), available_cores());
  if (saved) {
    setenv("OMP_NUM_THREADS", old.c_str(), 1);
  } else {
    unsetenv("OMP_NUM_THREADS");
  }
}

TEST(Parallel, SetNumThreadsSetsLibTorchsCount) {
  EXPECT_EQ(set_num_threads(1), 1);
  EXPECT_EQ(num_threads(), 1);
  EXPECT_EQ(at::get_num_threads(), 1);
  EXPECT_EQ(set_num_threads(2), 2);
  EXPECT_EQ(at::get_num_threads(), 2);
  EXPECT_EQ(set_num_threads(), default_num_threads());
  EXPECT_EQ(num_threads(), default_num_threads());
  EXPECT_THROW(set_num_threads(-1), FxError);
  set_num_threads(1);
}

TEST(Parallel, BlasLibraryNamesTheFileThatDefinesSgemm) {
  std::string blas = blas_library();
  EXPECT_NE(blas, "unknown");
  EXPECT_NE(blas.find("libblas"), std::string::npos) << blas;
}

// tools/setup.sh installs OpenBLAS's pthread build; the reference BLAS and
// OpenBLAS's OpenMP build have no pool of their own.
TEST(Parallel, BlasThreadPoolIsOpenBlasPthreadsOwn) {
  const std::string blas = blas_library();
  EXPECT_EQ(blas_has_own_thread_pool(),
            blas.find("openblas-pthread") != std::string::npos)
      << blas;
}

}  // namespace
}  // namespace fx
