#include "fx_core/runtime/skip_init.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

namespace fx {
namespace {

constexpr c10::DispatchKey kKey = c10::DispatchKey::DeferredInit;

// An in-place initialiser's kernel that leaves its tensor as it is: drops
// the arguments, returns the tensor (the first argument).
void keep_tensor(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  size_t num_args = op.schema().arguments().size();
  c10::IValue self = (*stack)[stack->size() - num_args];
  torch::jit::drop(*stack, num_args);
  torch::jit::push(*stack, std::move(self));
}

// Registers the key's kernels once; false when another library had
// registered a fallback for the key already.
bool registered() {
  static bool ours = [] {
    if (c10::Dispatcher::singleton().hasBackendFallbackForDispatchKey(kKey)) {
      return false;
    }
    static auto* all =
        new torch::Library(torch::Library::IMPL, "_", kKey, __FILE__, __LINE__);
    all->fallback(torch::CppFunction::makeFallthrough());
    static auto* aten = new torch::Library(torch::Library::IMPL, "aten", kKey,
                                           __FILE__, __LINE__);
    aten->impl("uniform_",
               torch::CppFunction::makeFromBoxedFunction<&keep_tensor>());
    aten->impl("normal_",
               torch::CppFunction::makeFromBoxedFunction<&keep_tensor>());
    return true;
  }();
  return ours;
}

}  // namespace

struct SkipInitGuard::Include {
  c10::impl::IncludeDispatchKeyGuard include{kKey};
};

SkipInitGuard::SkipInitGuard() {
  if (registered()) guard_ = std::make_unique<Include>();
}

SkipInitGuard::~SkipInitGuard() = default;

}  // namespace fx
