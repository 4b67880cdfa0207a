// Threads and BLAS: how many CPU threads the SDK's engines use, chosen and
// stated (issue 17, item 2).
//
// The default is every CPU this process may run on (its affinity mask), or
// $OMP_NUM_THREADS when that is set to a positive number. LibTorch's own
// default is the physical core count cpuinfo finds, which is 1 on a VM whose
// 2 vCPUs are one hyperthreaded core; the SDK's default is the CPUs the
// process was given.
//
// Library code never changes the thread count by itself: a program picks it
// with set_num_threads(). The `fx` command applies the default at startup and
// `fx exec --threads N` overrides it. Code that compares numbers with a
// one-threaded Python run (tests/tools: the OpInfo and nn-module suites) calls
// at::set_num_threads(1) or set_num_threads(1) itself; nothing here undoes it.
#ifndef FX_CORE_RUNTIME_PARALLEL_H_
#define FX_CORE_RUNTIME_PARALLEL_H_

#include <string>

namespace fx {

// CPUs in this process's affinity mask (at least 1).
int available_cores();

// The SDK's default thread count: $OMP_NUM_THREADS when it is a positive
// integer, else available_cores().
int default_num_threads();

// Sets the intra-op thread count for every engine in the process: LibTorch's
// (at::set_num_threads: OpenMP, oneDNN) and, when the BLAS LibTorch calls is
// OpenBLAS, OpenBLAS's own thread pool (openblas_set_num_threads), so that
// "1 thread" means one thread in matrix products too. `n` 0 means
// default_num_threads(). Returns the count set. Throws FxError when `n` < 0.
// Call it before running graphs (between runs is fine; not concurrently with
// one).
int set_num_threads(int n = 0);

// The intra-op thread count in effect (at::get_num_threads()).
int num_threads();

// The BLAS library LibTorch's matrix products run on: the file that defines
// `sgemm_` in this process after symbolic links are resolved (for example
// "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"), with "OpenBLAS"
// or "reference BLAS" in front when it is recognised; "unknown" when the
// symbol cannot be found.
std::string blas_library();

// Whether that BLAS runs matrix products on a thread pool of its own beside
// LibTorch's OpenMP pool: OpenBLAS's pthread build (openblas_get_parallel()
// is 1). At more than one thread the two pools then take turns on the cores,
// each spinning while the other works. Looked up once per process.
bool blas_has_own_thread_pool();

// Holds OpenBLAS's own thread count at one while in scope and puts it back
// after; nothing when the BLAS is not OpenBLAS or is at one thread already
// (nested holds cost one query). A BLAS call from another thread of the
// process meanwhile runs on one thread.
class OneBlasThread {
 public:
  OneBlasThread();
  ~OneBlasThread();
  OneBlasThread(const OneBlasThread&) = delete;
  OneBlasThread& operator=(const OneBlasThread&) = delete;
  // Whether this process's BLAS is OpenBLAS, whose count it can hold.
  static bool possible();

 private:
  int before_ = 1;
};

}  // namespace fx

#endif  // FX_CORE_RUNTIME_PARALLEL_H_
