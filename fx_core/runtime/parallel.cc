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
namespace {

// OpenBLAS's thread-count entry points, when it is the BLAS; looked up once.
struct OpenBlasThreads {
  void (*set)(int) = nullptr;
  int (*get)() = nullptr;
  int (*parallel)() = nullptr;
};

const OpenBlasThreads& openblas_threads() {
  static const OpenBlasThreads t = [] {
    OpenBlasThreads f;
    f.set = reinterpret_cast<void (*)(int)>(
        dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    f.get = reinterpret_cast<int (*)()>(
        dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    f.parallel = reinterpret_cast<int (*)()>(
        dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
    return f;
  }();
  return t;
}

}  // namespace

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
  if (openblas_threads().set != nullptr) openblas_threads().set(n);
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
  static const bool own = openblas_threads().parallel != nullptr &&
                          openblas_threads().parallel() == 1;
  return own;
}

bool OneBlasThread::possible() {
  return openblas_threads().set != nullptr && openblas_threads().get != nullptr;
}

OneBlasThread::OneBlasThread() {
  if (!possible()) return;
  before_ = openblas_threads().get();
  if (before_ != 1) openblas_threads().set(1);
}

OneBlasThread::~OneBlasThread() {
  if (before_ != 1) openblas_threads().set(before_);
}

}  // namespace fx
