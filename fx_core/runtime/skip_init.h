// fx::SkipInitGuard: while one is alive on a thread, LibTorch's random
// weight initialisation does nothing there (torch.nn.utils.skip_init's
// effect for the C++ modules, whose constructors always call reset()).
//
// For modules whose every parameter and buffer is about to be replaced
// (load_graph_module_shared: the caller's tensors become the weights):
// `uniform_` and `normal_`, the ops behind torch::nn::init's kaiming,
// xavier, uniform and normal initialisers, return their tensor unfilled,
// so it holds whatever memory it was given. Constant fills (ones_, zeros_)
// still run; everything else is untouched.
//
// It works through LibTorch's DispatchKey::DeferredInit, the key LibTorch
// reserves for deferred module initialisation: a fallthrough for every op
// and the two kernels above, registered once per process, and the key
// enabled on the thread while a guard lives. When something else in the
// process registered that key first (torchdistx), the guard does nothing
// and the weights are initialised as usual.
#ifndef FX_CORE_RUNTIME_SKIP_INIT_H_
#define FX_CORE_RUNTIME_SKIP_INIT_H_

#include <memory>

namespace fx {

class SkipInitGuard {
 public:
  SkipInitGuard();
  ~SkipInitGuard();
  SkipInitGuard(const SkipInitGuard&) = delete;
  SkipInitGuard& operator=(const SkipInitGuard&) = delete;

  // Whether initialisation is being skipped (false when the key is taken).
  bool active() const { return guard_ != nullptr; }

 private:
  struct Include;
  std::unique_ptr<Include> guard_;
};

}  // namespace fx

#endif  // FX_CORE_RUNTIME_SKIP_INIT_H_
