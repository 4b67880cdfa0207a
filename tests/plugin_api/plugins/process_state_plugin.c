/* A plugin whose passes misuse the process they run in (issue 39): 'exit_0'
 * calls exit(0), 'quick_exit' quick_exit(0) and '_exit' _exit(0), which no
 * hook sees (the host must not report success), 'chdir' moves the process to
 * '/' and succeeds (the host's relative output path must not follow),
 * 'thread_crash' starts a thread that writes through NULL 200 ms later and
 * returns (the crash must be named), 'sleep' sleeps a second (a pass for that
 * thread to crash in). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "c_pass_table.h"
#include "fx/plugin_api.h"

static FxStatus* do_exit_0(const FxApi* api, FxGraph* graph,
                           const FxOptions* options, void* user_data,
                           int* changed) {
  UNUSED_PASS_ARGS;
  exit(0);
}

static FxStatus* do_quick_exit(const FxApi* api, FxGraph* graph,
                               const FxOptions* options, void* user_data,
                               int* changed) {
  UNUSED_PASS_ARGS;
  quick_exit(0);
}

static FxStatus* do_underscore_exit(const FxApi* api, FxGraph* graph,
                                    const FxOptions* options, void* user_data,
                                    int* changed) {
  UNUSED_PASS_ARGS;
  _exit(0);
}

static FxStatus* do_chdir(const FxApi* api, FxGraph* graph,
                          const FxOptions* options, void* user_data,
                          int* changed) {
  UNUSED_PASS_ARGS;
  if (chdir("/") != 0) abort();
  return NULL;
}

static void sleep_ms(long ms) {
  struct timespec t;
  t.tv_sec = ms / 1000;
  t.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&t, NULL);
}

static void* crash_later(void* arg) {
  volatile int* nowhere = NULL;
  (void)arg;
  sleep_ms(200);
  *nowhere = 1;
  return NULL;
}

static FxStatus* thread_crash(const FxApi* api, FxGraph* graph,
                              const FxOptions* options, void* user_data,
                              int* changed) {
  pthread_t thread;
  UNUSED_PASS_ARGS;
  if (pthread_create(&thread, NULL, crash_later, NULL) != 0) abort();
  pthread_detach(thread);
  return NULL;
}

static FxStatus* do_sleep(const FxApi* api, FxGraph* graph,
                          const FxOptions* options, void* user_data,
                          int* changed) {
  UNUSED_PASS_ARGS;
  sleep_ms(1000);
  return NULL;
}

static const FxPassInfo kPasses[] = {
    PASS("exit_0", "calls exit(0)", do_exit_0),
    PASS("quick_exit", "calls quick_exit(0)", do_quick_exit),
    PASS("_exit", "calls _exit(0)", do_underscore_exit),
    PASS("chdir", "moves the process to /", do_chdir),
    PASS("thread_crash", "leaves a thread that crashes 200 ms later",
         thread_crash),
    PASS("sleep", "sleeps for a second", do_sleep)};

FX_C_PLUGIN("process_state")
