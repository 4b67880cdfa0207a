// The torch.fx docs' "replace torch.add with torch.mul" transform on a
// GraphModule: every torch.add and operator.add (x + y) call becomes the
// matching multiplication; the module is recompiled.
#ifndef SDK_EXAMPLES_REPLACE_ADD_WITH_MUL_REPLACE_ADD_WITH_MUL_H_
#define SDK_EXAMPLES_REPLACE_ADD_WITH_MUL_REPLACE_ADD_WITH_MUL_H_

#include <cstddef>

#include "fx_core/graph_module.h"

namespace sdk_examples {

// Returns how many nodes were changed.
size_t replace_add_with_mul(fx::GraphModule& gm);

}  // namespace sdk_examples

#endif  // SDK_EXAMPLES_REPLACE_ADD_WITH_MUL_REPLACE_ADD_WITH_MUL_H_
