/* The FxApi entries of one plugin_api.h, read from the compiled layout:
 * built once per frozen release header (and once against the current one),
 * with ENTRIES_INC naming the X-macro list entries_of.py wrote from that same
 * header. The compiler checks the list: every name must be a member, in
 * order, and together they must fill the table. abi_compat_test loads each
 * build and compares the table the host hands that release's plugins with
 * these offsets. */
#include <stddef.h>

#include "fx/plugin_api.h"

typedef struct FxReleasedEntry {
  const char* name;
  size_t offset;
} FxReleasedEntry;

#define X(name) {#name, offsetof(FxApi, name)},
static const FxReleasedEntry kEntries[] = {
#include ENTRIES_INC
};
#undef X

#define X(name) +1
enum { kCount = 0
#include ENTRIES_INC
};
#undef X

/* The entries fill the table after its version field, one pointer each. */
typedef char entries_fill_the_table
    [sizeof(FxApi) == offsetof(FxApi, CreateStatus) +
                          kCount * sizeof(void (*)(void))
         ? 1
         : -1];

FX_PLUGIN_EXPORT const FxReleasedEntry* fx_released_entries(size_t* count,
                                                            uint32_t* version) {
  *count = kCount;
  *version = FX_API_VERSION;
  return kEntries;
}
