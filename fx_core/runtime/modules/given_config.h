// The constructor arguments of a module as its creator spelled them.
//
// A torch.nn module keeps what its constructor was given: MaxPool2d(3)
// holds kernel_size=3, MaxPool2d((3, 3)) holds (3, 3), and its repr, its
// attributes and what torch.fx passes read (param_fetch) show that
// spelling. LibTorch's options expand every such argument to a tuple, so a
// kind's describe() can only say (3, 3). ModuleRegistry::create() remembers
// the config a module was built from, and the registry's describe() puts
// back each value that was given in another spelling of the same value.
//
// Internal to fx_core/runtime (module_registry.cc).
#ifndef FX_CORE_RUNTIME_MODULES_GIVEN_CONFIG_H_
#define FX_CORE_RUNTIME_MODULES_GIVEN_CONFIG_H_

#include <memory>

#include "fx_core/ir/argument.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace fx {

// Remembers `config` as `module`'s constructor arguments (thread-safe; the
// entry goes when the module does).
void remember_given_config(const std::shared_ptr<torch::nn::Module>& module,
                           const ArgumentDict& config);

// `described` (what a kind's describe() says `module` is) with each value
// the module was given spelled otherwise put back as given: an int for a
// tuple or list of that int repeated (3 for (3, 3)), a list for a tuple of
// the same items, an int for an equal float and a float for an equal int.
// Values that differ in meaning stay as described.
ArgumentDict respell_as_given(const torch::nn::Module& module,
                              ArgumentDict described);

}  // namespace fx

#endif  // FX_CORE_RUNTIME_MODULES_GIVEN_CONFIG_H_
