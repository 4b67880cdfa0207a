// fx::flush_from_caches: writes back and drops a span of memory from every
// cache level (x86 clflush; a no-op elsewhere), so that a run timed next
// reads it from memory, as each layer of a network does at batch 1: the
// layers between two runs of one stream every other layer's weights
// through the caches. conv_choice.h and linear_choice.h time their
// candidates that way.
#ifndef FX_CORE_COMPILE_CACHE_FLUSH_H_
#define FX_CORE_COMPILE_CACHE_FLUSH_H_

#include <cstddef>

namespace fx {

void flush_from_caches(const void* data, size_t bytes);

}  // namespace fx

#endif  // FX_CORE_COMPILE_CACHE_FLUSH_H_
