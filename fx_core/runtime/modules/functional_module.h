// fx::nn::FunctionalModuleImpl: a torch.nn module rebuilt from its Python
// definition rather than from a LibTorch C++ class.
//
// Most of torch.nn is written the same way in Python: the constructor stores
// its arguments (and creates a few parameters), and forward() is one call of
// a torch.nn.functional function on the input, those arguments and the
// parameters (nn.ELU: F.elu(input, self.alpha, self.inplace); nn.PReLU:
// F.prelu(input, self.weight)). A FunctionalModuleImpl is that shape in C++:
// its Python type name (torch::nn::Module::name(), which ModuleRegistry
// looks modules up by when their C++ type is this generic one), the
// constructor arguments it was built with, and its parameters and buffers
// under Python's names, so a bundle's weights load into it unchanged. What
// forward() computes is the module kind's business (functional_modules.cc),
// which calls the registered functional kernels: the same code that runs a
// call_function node of that function.
#ifndef FX_CORE_RUNTIME_MODULES_FUNCTIONAL_MODULE_H_
#define FX_CORE_RUNTIME_MODULES_FUNCTIONAL_MODULE_H_

#include <ATen/core/ivalue.h>
#include <torch/nn/cloneable.h>

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fx::nn {

class FunctionalModuleImpl : public torch::nn::Cloneable<FunctionalModuleImpl> {
 public:
  using Config = std::vector<std::pair<std::string, c10::IValue>>;

  // `type` is the Python class ("torch.nn.ELU"); `config` its constructor
  // arguments by name, defaults filled in.
  FunctionalModuleImpl(std::string type, Config config);

  void reset() override {}

  const Config& config() const { return config_; }
  // The constructor argument `name`. Throws FxError naming the module type
  // when it has none.
  const c10::IValue& config(std::string_view name) const;

  // The parameter or buffer `name` ("weight", "out_proj.bias" inside a
  // child), or nullopt when the module has none (bias=False).
  c10::optional<at::Tensor> tensor(const std::string& name) const;

  // A tensor the Python class holds only when its constructor was given one
  // (nn.NLLLoss's `weight` buffer, BCEWithLogitsLoss's `pos_weight`): its
  // shape is unknown until the weights are read, so it is registered then,
  // by adopt().
  void declare_optional_buffer(std::string name);
  // Registers `value` as buffer `name` when `name` was declared optional and
  // is not registered yet. False otherwise.
  bool adopt(const std::string& name, const at::Tensor& value);

  // A value the kind's forward derives from tensors of the module once
  // (a quantized module's prepacked weights): `make`'s result, kept until
  // one of `from` is another tensor or has been written to since. A copy
  // of the module derives its own. Thread-safe.
  c10::IValue derived(const std::vector<at::Tensor>& from,
                      const std::function<c10::IValue()>& make) const;

 private:
  struct DerivedCache {
    DerivedCache() = default;
    DerivedCache(const DerivedCache&) {}
    DerivedCache& operator=(const DerivedCache&) { return *this; }
    std::mutex mutex;
    std::vector<std::pair<const void*, uint32_t>> key;
    std::vector<at::Tensor> held;  // keeps the key's tensors' addresses
    c10::IValue value;
  };

  Config config_;
  std::vector<std::string> optional_buffers_;
  mutable DerivedCache derived_;
};

}  // namespace fx::nn

#endif  // FX_CORE_RUNTIME_MODULES_FUNCTIONAL_MODULE_H_
