#include "python/bindings.h"
namespace fx_sdk {
void bind_graph(pybind11::module_& m) { (void)m; }
}  // namespace fx_sdk
