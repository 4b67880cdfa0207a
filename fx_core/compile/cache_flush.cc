#include "fx_core/compile/cache_flush.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace fx {

void flush_from_caches(const void* data, size_t bytes) {
#if defined(__x86_64__)
  const auto* p = static_cast<const char*>(data);
  for (size_t at = 0; at < bytes; at += 64) _mm_clflush(p + at);
  _mm_mfence();
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace fx
