/* ONNX Runtime's own per-node profiler on one model, through its C API:
 * onnxruntime-node 1.16 has no profiling (its startProfiling/endProfiling
 * are empty), so ort_node_profile.py compiles this against the
 * libonnxruntime.so that setup_onnxruntime.sh installed and runs it.
 *
 *   ort_node_profile LIB MODEL THREADS RUNS PREFIX D0 [D1 ... D7]
 *
 * Runs MODEL (one float32 input of sizes D0 ..., one to eight of them; one
 * output; CPU provider, graph optimisation level "all", sequential, THREADS
 * intra-op threads) RUNS times with profiling on; ONNX Runtime writes
 * PREFIX_<date>.json when the session is released. Errors are printed with
 * the call that failed, exit status 1.
 *
 * The API table (OrtApi, a struct of function pointers that only grows)
 * is indexed by position: the indices below are those of the entries in
 * onnxruntime_c_api.h, fixed since API version 1. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void* Status; /* OrtStatus*: null on success */
typedef struct {
  const void* (*get_api)(uint32_t version);
  const char* (*get_version_string)(void);
} ApiBase;

enum {
  kGetErrorMessage = 2,
  kCreateEnv = 3,
  kCreateSession = 7,
  kRun = 9,
  kCreateSessionOptions = 10,
  kSetSessionExecutionMode = 13,
  kEnableProfiling = 14,
  kSetSessionGraphOptimizationLevel = 23,
  kSetIntraOpNumThreads = 24,
  kSessionGetInputName = 36,
  kSessionGetOutputName = 37,
  kCreateTensorWithDataAsOrtValue = 49,
  kCreateCpuMemoryInfo = 69,
  kGetAllocatorWithDefaultOptions = 78,
  kReleaseSession = 95,
  kReleaseValue = 96,
};

static void* const* api;

static void check(Status s, const char* call) {
  if (s == NULL) return;
  const char* (*message)(Status) = (const char* (*)(Status))api[kGetErrorMessage];
  fprintf(stderr, "ort_node_profile: %s: %s\n", call, message(s));
  exit(1);
}

int main(int argc, char** argv) {
  enum { kMaxRank = 8 };
  const int rank = argc - 6;
  if (rank < 1 || rank > kMaxRank) {
    fprintf(stderr,
            "usage: ort_node_profile LIB MODEL THREADS RUNS PREFIX D0 "
            "[D1 ... D7]\n");
    return 1;
  }
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (lib == NULL) {
    fprintf(stderr, "ort_node_profile: %s\n", dlerror());
    return 1;
  }
  const ApiBase* (*get_base)(void) =
      (const ApiBase* (*)(void))dlsym(lib, "OrtGetApiBase");
  if (get_base == NULL || (api = get_base()->get_api(16)) == NULL) {
    fprintf(stderr, "ort_node_profile: %s has no API version 16\n", argv[1]);
    return 1;
  }
  const int threads = atoi(argv[3]), runs = atoi(argv[4]);
  int64_t shape[kMaxRank];
  size_t n = 1;
  for (int i = 0; i < rank; ++i) {
    shape[i] = atoll(argv[6 + i]);
    n *= (size_t)shape[i];
  }
  void *env, *options, *session, *memory, *input, *output = NULL, *allocator;
  char *input_name, *output_name;
  check(((Status(*)(int, const char*, void**))api[kCreateEnv])(3, "profile", &env),
        "CreateEnv");
  check(((Status(*)(void**))api[kCreateSessionOptions])(&options),
        "CreateSessionOptions");
  check(((Status(*)(void*, int))api[kSetSessionExecutionMode])(options, 0),
        "SetSessionExecutionMode");
  check(((Status(*)(void*, const char*))api[kEnableProfiling])(options, argv[5]),
        "EnableProfiling");
  check(((Status(*)(void*, int))api[kSetSessionGraphOptimizationLevel])(options, 99),
        "SetSessionGraphOptimizationLevel");
  check(((Status(*)(void*, int))api[kSetIntraOpNumThreads])(options, threads),
        "SetIntraOpNumThreads");
  check(((Status(*)(void*, const char*, void*, void**))api[kCreateSession])(
            env, argv[2], options, &session),
        "CreateSession");
  check(((Status(*)(void**))api[kGetAllocatorWithDefaultOptions])(&allocator),
        "GetAllocatorWithDefaultOptions");
  check(((Status(*)(void*, size_t, void*, char**))api[kSessionGetInputName])(
            session, 0, allocator, &input_name),
        "SessionGetInputName");
  check(((Status(*)(void*, size_t, void*, char**))api[kSessionGetOutputName])(
            session, 0, allocator, &output_name),
        "SessionGetOutputName");
  check(((Status(*)(int, int, void**))api[kCreateCpuMemoryInfo])(1, 0, &memory),
        "CreateCpuMemoryInfo");
  float* data = malloc(n * sizeof(float));
  if (data == NULL) return 1;
  for (size_t i = 0; i < n; ++i) {
    data[i] = (float)((i * 2654435761u) % 2000u) / 1000.0f - 1.0f;
  }
  check(((Status(*)(void*, void*, size_t, const int64_t*, size_t, int, void**))
             api[kCreateTensorWithDataAsOrtValue])(memory, data, n * sizeof(float),
                                                   shape, (size_t)rank, 1, &input),
        "CreateTensorWithDataAsOrtValue");
  const char* inputs[1] = {input_name};
  const char* outputs[1] = {output_name};
  for (int r = 0; r < runs; ++r) {
    check(((Status(*)(void*, void*, const char* const*, const void* const*, size_t,
                      const char* const*, size_t, void**))api[kRun])(
              session, NULL, inputs, (const void* const*)&input, 1, outputs, 1,
              &output),
          "Run");
    ((void (*)(void*))api[kReleaseValue])(output);
    output = NULL; /* Run fills a null output; a non-null one is reused */
  }
  /* Releasing the session ends profiling and writes the file. */
  ((void (*)(void*))api[kReleaseSession])(session);
  free(data);
  return 0;
}
