// The recorder running the calls the user-call key sees (recorder.h), and
// in symbolic mode replaying a user's composite call whose arguments'
// expressions it has seen before (composite_replay.h): the first such call
// runs LibTorch's kernel, watched; when the kernel made one call and
// nothing else, that call is its recipe.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <utility>
#include <vector>

#include "fx_core/capture/recorder.h"

namespace fx {
namespace capture {

void Recorder::run_user_call(const c10::OperatorHandle& op,
                             c10::DispatchKeySet below,
                             torch::jit::Stack* stack) {
  if (composites_ != nullptr) {
    if (user_depth_ == 0 && is_composite(op)) {
      run_composite(op, below, stack);
      return;
    }
    if (user_depth_ == 1 && watch_ != nullptr) {
      run_inner(op, below, stack);
      return;
    }
  }
  redispatch_user_call(op, below, stack);
}

void Recorder::redispatch_user_call(const c10::OperatorHandle& op,
                                    c10::DispatchKeySet below,
                                    torch::jit::Stack* stack) {
  const c10::FunctionSchema* saved = enter_call(&op.schema());
  try {
    op.redispatchBoxed(below, stack);
  } catch (...) {
    exit_call(saved);
    throw;
  }
  exit_call(saved);
}

bool Recorder::is_composite(const c10::OperatorHandle& op) {
  auto [it, inserted] = is_composite_.try_emplace(&op.schema(), false);
  if (inserted) {
    it->second =
        op.hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd);
  }
  return it->second;
}

namespace {

// The calls' results are the same values (tensors: the same tensor).
bool same_results(c10::ArrayRef<c10::IValue> a, c10::ArrayRef<c10::IValue> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].isTensor() || !b[i].isTensor() ||
        !a[i].toTensor().is_same(b[i].toTensor())) {
      return false;
    }
  }
  return true;
}

}  // namespace

void Recorder::run_composite(const c10::OperatorHandle& op,
                             c10::DispatchKeySet below,
                             torch::jit::Stack* stack) {
  const size_t n = op.schema().arguments().size();
  const size_t returns = op.schema().returns().size();
  c10::ArrayRef<c10::IValue> args(stack->data() + stack->size() - n, n);
  CompositeReplay::Key key;
  if (!composites_->key_of(op.schema(), args, &key)) {
    redispatch_user_call(op, below, stack);
    return;
  }
  bool known = false;
  if (const CompositeReplay::Recipe* recipe = composites_->find(key, &known)) {
    torch::jit::Stack inner = composites_->instantiate(*recipe, args);
    const c10::FunctionSchema* saved = enter_call(&op.schema());
    try {
      composites_->inner(*recipe).callBoxed(&inner);
    } catch (...) {
      exit_call(saved);
      throw;
    }
    exit_call(saved);
    torch::jit::drop(*stack, n);
    for (c10::IValue& result : inner) stack->push_back(std::move(result));
    return;
  }
  if (known) {
    redispatch_user_call(op, below, stack);
    return;
  }
  std::vector<c10::IValue> kept_args(args.begin(), args.end());
  const bool grad = c10::GradMode::is_enabled();
  const c10::impl::LocalDispatchKeySet keys =
      c10::impl::tls_local_dispatch_key_set();
  Watch watch;
  Watch* const outer = watch_;  // a decomposition's own user-level calls
  const size_t nodes_before = graph_.size();
  watch_ = &watch;
  try {
    redispatch_user_call(op, below, stack);
  } catch (...) {
    watch_ = outer;
    throw;
  }
  watch_ = outer;
  c10::ArrayRef<c10::IValue> results(stack->data() + stack->size() - returns,
                                     returns);
  const bool same_state = watch.inner_grad == grad &&
                          watch.inner_included == keys.included_ &&
                          watch.inner_excluded == keys.excluded_;
  if (watch.calls == 1 && same_state &&
      graph_.size() - nodes_before == watch.inner_nodes &&
      same_results(results, watch.inner_results)) {
    composites_->learn(std::move(key), kept_args, *watch.inner,
                       watch.inner_args);
  } else {
    composites_->refuse(std::move(key), kept_args);
  }
}

void Recorder::run_inner(const c10::OperatorHandle& op,
                         c10::DispatchKeySet below, torch::jit::Stack* stack) {
  Watch& watch = *watch_;
  if (++watch.calls > 1) {
    redispatch_user_call(op, below, stack);
    return;
  }
  const size_t n = op.schema().arguments().size();
  watch.inner = op;
  watch.inner_args.assign(stack->end() - n, stack->end());
  watch.inner_grad = c10::GradMode::is_enabled();
  const c10::impl::LocalDispatchKeySet keys =
      c10::impl::tls_local_dispatch_key_set();
  watch.inner_included = keys.included_;
  watch.inner_excluded = keys.excluded_;
  const size_t nodes_before = graph_.size();
  redispatch_user_call(op, below, stack);
  watch.inner_nodes = graph_.size() - nodes_before;
  const size_t returns = op.schema().returns().size();
  watch.inner_results.assign(stack->end() - returns, stack->end());
}

}  // namespace capture
}  // namespace fx
