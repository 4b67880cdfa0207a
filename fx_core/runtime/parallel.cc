#include "fx_core/runtime/parallel.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <sched.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return 1;
}

int default_num_threads() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    char* end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0 && n <= 4096) {
      return static_cast<int>(n);
    }
  }
  return available_cores();
}

int set_num_threads(int n) {
  if (n < 0) {
    throw FxError(
        cat("set_num_threads: expected a thread count >= 1 (or 0 "
            "for the default), got ",
            n));
  }
  if (n == 0) n = default_num_threads();
  at::set_num_threads(n);
  // OpenBLAS's pthread build keeps its own pool, sized to every CPU, whatever
  // LibTorch's count; its OpenMP build follows omp_set_num_threads but takes
  // this call too.
  using SetThreads = void (*)(int);
  if (auto* blas_threads = reinterpret_cast<SetThreads>(
          dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    blas_threads(n);
  }
  return n;
}

int num_threads() { return at::get_num_threads(); }

std::string blas_library() {
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info info;
  if (sgemm == nullptr || dladdr(sgemm, &info) == 0 ||
      info.dli_fname == nullptr) {
    return "unknown";
  }
  std::error_code ec;
  std::filesystem::path path = std::filesystem::canonical(info.dli_fname, ec);
  std::string file = ec ? std::string(info.dli_fname) : path.string();
  if (dlsym(RTLD_DEFAULT, "openblas_get_config") != nullptr ||
      file.find("openblas") != std::string::npos) {
    return "OpenBLAS " + file;
  }
  if (file.find("/blas/") != std::string::npos) {
    return "reference BLAS " + file;
  }
  return file;
}

bool blas_has_own_thread_pool() {
  using GetParallel = int (*)();
  const auto get_parallel = reinterpret_cast<GetParallel>(
      dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  return get_parallel != nullptr && get_parallel() == 1;
}

}  // namespace fx
