/* A plugin that misbehaves while it is loaded, before any pass runs; one
 * way per build (tests/plugin_api/BUILD.bazel defines one macro):
 *   CTOR_SEGV   its static constructor writes to an unmapped address;
 *   CTOR_ABORT  its static constructor calls abort();
 *   CTOR_EXIT   its static constructor calls exit(7);
 *   CTOR_HANG   its static constructor never returns;
 *   INFO_SEGV   fx_plugin_get_info writes to an unmapped address;
 *   INFO_ABORT  fx_plugin_get_info calls abort();
 *   INFO_EXIT   fx_plugin_get_info calls exit(7);
 *   INFO_HANG   fx_plugin_get_info never returns.
 * An isolated host (fx run --isolate, fx plugin-check) must name it and go
 * on; an in-process host dies with it. */
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "fx/plugin_api.h"

/* An address in the first page, which is never mapped: the store faults
 * (SIGSEGV). Read through a volatile pointer, so that the compiler cannot
 * drop the store, and not NULL, so that UBSan's null check (the asan
 * config) does not end the process before the fault. */
static int* volatile nowhere = (int*)16;

__attribute__((unused)) static void crash(void) { *nowhere = 1; }

__attribute__((constructor)) static void misbehave(void) {
#if defined(CTOR_SEGV)
  crash();
#elif defined(CTOR_ABORT)
  abort();
#elif defined(CTOR_EXIT)
  exit(7);
#elif defined(CTOR_HANG)
  for (;;) pause();
#endif
}

static const FxPluginInfo kPlugin = {"load_crash",
                                     "1.0",
                                     FX_API_VERSION,
                                     FX_API_VERSION,
                                     NULL,
                                     0,
                                     NULL,
                                     sizeof(FxPluginInfo),
                                     sizeof(FxPassInfo)};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
#if defined(INFO_SEGV)
  crash();
#elif defined(INFO_ABORT)
  abort();
#elif defined(INFO_EXIT)
  exit(7);
#elif defined(INFO_HANG)
  for (;;) pause();
#endif
  return &kPlugin;
}
