// repr(module) of the torch.nn modules whose repr the gradual type
// checker's TypeError messages print (gradual_typecheck.cc).
#ifndef PLUGINS_OPTIMIZATION_MODULE_REPR_H_
#define PLUGINS_OPTIMIZATION_MODULE_REPR_H_

#include <string>

#include "fx/plugin_api.hpp"

namespace fx_optimization {

// repr(module) of the classes torch's messages print.
// `cls` is BatchNorm2d, Linear, MaxPool2d or (any other) Conv2d; `config`
// the module's config dict (fxp::module_config).
std::string module_repr(const std::string& cls, const fxp::Arg& config);

}  // namespace fx_optimization

#endif  // PLUGINS_OPTIMIZATION_MODULE_REPR_H_
