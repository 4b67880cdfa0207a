// make_fx's recorder: one capture's graph being built and what each tensor
// is in it, and the torch_dispatch mode's body (capture_mode.cc calls it).
// Its members are defined by concept: recording calls as nodes
// (recorder.cc), running them on meta tensors (recorder_meta.cc), and the
// C++ front end's call sequences rewritten as Python's (recorder_front_end.cc).
#ifndef FX_CORE_CAPTURE_RECORDER_H_
#define FX_CORE_CAPTURE_RECORDER_H_

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "fx_core/capture/capture_mode.h"
#include "fx_core/capture/composite_replay.h"
#include "fx_core/capture/front_end.h"
#include "fx_core/capture/make_fx.h"
#include "fx_core/capture/symbolic_capture.h"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/graph.h"

namespace fx {
namespace capture {

// The options' tracing mode, make_fx's names; `meta` is "fake".
std::string tracing_mode(const MakeFxOptions& options);

// One capture: the graph being built and what each tensor is in it.
class Recorder {
 public:
  Recorder(Graph& graph, const MakeFxOptions& options);

  // The plugins' decompositions and leaf operators, where the options give
  // the operator neither.
  void add_registered_extensions();

  // Symbolic mode (symbolic_capture.h): tensors with symbolic sizes.
  void set_symbolic(std::shared_ptr<capture::SymbolicCapture> symbolic) {
    composites_ = symbolic && CompositeReplay::enabled()
                      ? std::make_unique<CompositeReplay>(symbolic)
                      : nullptr;
    symbolic_ = std::move(symbolic);
  }

  // The node `tensor` stands for, or nullptr when it is not tracked.
  Node* tracked(const c10::TensorImpl* tensor) const {
    auto found = nodes_.find(tensor);
    return found == nodes_.end() ? nullptr : found->second;
  }

  void track(const at::Tensor& tensor, Node* node);

  // The node standing for `tensor`: the one that produced it, or a new
  // get_attr of the attribute holding it (created at first use).
  Node* node_for(const at::Tensor& tensor);

  // The torch_dispatch mode's body: decompose or record, then run.
  void dispatch(const c10::OperatorHandle& op, torch::jit::Stack* stack);

  bool is_leaf(const c10::FunctionSchema* schema) const {
    return !leaf_ops_.empty() && leaf_ops_.contains(schema);
  }

  // Records `op` as one node and runs it with nothing below recorded.
  void record(const c10::OperatorHandle& op, torch::jit::Stack* stack,
              bool spell_as_python);

  // The node for a call of `schema` whose arguments are on `stack` from
  // `base`, spelled as Python's bindings call it when `as_python` (the
  // user's own call). Rewrites the arguments as the node spells them.
  Node* add_node(const c10::FunctionSchema& schema, torch::jit::Stack* stack,
                 size_t base, bool as_python);

  // Runs `op` as the mode computes: on meta tensors (symbolic mode: then
  // with symbolic sizes), or below the mode.
  void run_unrecorded(const c10::OperatorHandle& op, torch::jit::Stack* stack);

  // The results of `schema`'s call, on top of `stack`, become `node`'s.
  void track_results(const c10::FunctionSchema& schema,
                     const torch::jit::Stack& stack, Node* node);

  // A call the user's code makes itself (front_end.h's sequences). True when
  // it was consumed: run with its recording deferred, or replaced by the
  // calls Python makes for the same source.
  bool front_end_call(const c10::OperatorHandle& op, torch::jit::Stack* stack);

  // Records what a sequence left unfinished did, as its calls spell it.
  void finish_pending();

  // The mode's detach (autograd saving an output): make_fx records a
  // detach.default node for it.
  c10::intrusive_ptr<c10::TensorImpl> detach(const c10::TensorImpl* self);

  std::vector<CapturedGraph::Constant> take_constants() {
    return std::move(constants_);
  }

  // The schema of an operator named "aten::NAME" or "aten::NAME.OVERLOAD".
  static const c10::FunctionSchema& find_schema(const std::string& name);

  // Runs `kernel` (a decomposition, or Python's own composite kernel) in
  // the operator's place. Its calls are Python code's calls in make_fx, so
  // they are spelled as the captured code's own calls are. False, the stack
  // untouched, when the kernel declines (returns no values).
  bool run_kernel(const c10::OperatorHandle& op, const Decomposition& kernel,
                  torch::jit::Stack* stack);

  // Brackets an operator call as the user-call key sees it: depth 1 is a
  // call made by the captured code itself.
  const c10::FunctionSchema* enter_call(const c10::FunctionSchema* schema) {
    const c10::FunctionSchema* saved = user_schema_;
    if (++user_depth_ == 1) user_schema_ = schema;
    return saved;
  }
  bool at_user_level() const { return user_depth_ == 0; }

  // Runs a call the user-call key saw, below the key, bracketed by
  // enter_call / exit_call. In symbolic mode a user's composite call is
  // replayed when its arguments' expressions were seen before
  // (composite_replay.h), and learnt from otherwise
  // (recorder_composite.cc).
  void run_user_call(const c10::OperatorHandle& op, c10::DispatchKeySet below,
                     torch::jit::Stack* stack);
  void exit_call(const c10::FunctionSchema* saved) {
    --user_depth_;
    user_schema_ = saved;
  }

  static void run_below_mode(const c10::OperatorHandle& op,
                             torch::jit::Stack* stack) {
    c10::impl::ExcludeDispatchKeyGuard below(kCaptureKeys);
    op.callBoxed(stack);
  }

  // Operators whose result is a tensor's value in C++.
  static bool reads_data(const c10::FunctionSchema& schema);

  // A meta tensor standing for `tensor` (itself when it is one already).
  at::Tensor meta_of(const at::Tensor& tensor);

  c10::IValue meta_of(const c10::IValue& value);

  // Runs `op` on meta tensors: LibTorch's meta kernel, or a shape rule here
  // for the operators its C++ build lacks one for.
  void run_on_meta(const c10::OperatorHandle& op, torch::jit::Stack* stack);

  // Why `schema` could not run on meta tensors, naming it.
  static std::string meta_error(const c10::FunctionSchema& schema,
                                const c10::Error& e);

 private:
  // The sequences of front_end.h being followed: `2 - x`'s empty_like (kLike)
  // and fill_ (kLikeFilled); torch::tensor's empty or scalar_tensor and the
  // select / fill_ calls writing it (kBuild).
  enum class Pending { kNone, kLike, kLikeFilled, kBuild };

  bool is_pending(const c10::IValue& value) const {
    return value.isTensor() &&
           pending_views_.contains(value.toTensor().unsafeGetTensorImpl());
  }

  // Runs the call below the mode, its recording deferred.
  void defer(const c10::OperatorHandle& op, torch::jit::Stack* stack);

  bool start_pending(capture::FrontEndCall kind, const c10::OperatorHandle& op,
                     torch::jit::Stack* stack);

  // Follows the pending sequence one call on; false when `op` breaks it.
  bool continue_pending(capture::FrontEndCall kind,
                        const c10::OperatorHandle& op,
                        torch::jit::Stack* stack);

  // A tensor sharing `tensor`'s data and metadata, not an inference tensor
  // (its caller sets a version counter, which inference tensors refuse).
  static at::Tensor user_level_alias(const at::Tensor& tensor);

  // The tensor a kBuild sequence hands on (after to(), or the detach of
  // torch::autograd::make_variable) instead of the one it had.
  void set_built(const at::Tensor& tensor) {
    pending_tensor_ = tensor;
    pending_views_.insert(tensor.unsafeGetTensorImpl());
    alive_.push_back(tensor);
  }

  // A tensor torch::tensor built: a constant of the graph, copied before
  // use (make_fx's _tensor_constantN + lift_fresh_copy).
  void record_constant(const at::Tensor& tensor);

  bool is_parameter(const at::Tensor& tensor) const {
    if (has_module_) return parameters_.contains(tensor.unsafeGetTensorImpl());
    return tensor.requires_grad() && tensor.is_leaf();
  }

  Node* getitem(Node* of, int64_t index);

  void redispatch_user_call(const c10::OperatorHandle& op,
                            c10::DispatchKeySet below,
                            torch::jit::Stack* stack);
  bool is_composite(const c10::OperatorHandle& op);
  // A user's composite call in symbolic mode: replayed, or run and learnt.
  void run_composite(const c10::OperatorHandle& op, c10::DispatchKeySet below,
                     torch::jit::Stack* stack);
  // A call the watched composite makes.
  void run_inner(const c10::OperatorHandle& op, c10::DispatchKeySet below,
                 torch::jit::Stack* stack);

  // Python's track_tensor_tree: a tensor is the node's value; a list gets
  // one getitem per element.
  void track_value(const c10::IValue& value, Node* node);

  Argument to_argument(const c10::IValue& value, const c10::Argument& param);

  Argument to_argument(const c10::IValue& value, const std::string& what);

  Graph& graph_;
  bool has_module_ = false;
  absl::flat_hash_set<const c10::TensorImpl*> parameters_;
  absl::flat_hash_map<const c10::TensorImpl*, Node*> nodes_;
  absl::flat_hash_map<const c10::TensorImpl*, std::string> attribute_names_;
  std::vector<CapturedGraph::Constant> constants_;
  std::vector<at::Tensor> alive_;
  int params_ = 0;
  int tensors_ = 0;
  bool meta_ = false;
  bool allow_data_dependent_ = false;
  absl::flat_hash_map<const c10::TensorImpl*, at::Tensor> meta_shadows_;
  std::shared_ptr<capture::SymbolicCapture> symbolic_;
  std::unique_ptr<CompositeReplay> composites_;
  absl::flat_hash_map<const c10::FunctionSchema*, bool> is_composite_;
  // The composite call being learnt from: the calls it makes itself.
  struct Watch {
    int calls = 0;
    std::optional<c10::OperatorHandle> inner;
    std::vector<c10::IValue> inner_args, inner_results;
    size_t inner_nodes = 0;  // graph nodes the inner call made
    // The dispatch state the inner call was made in (a kernel that changes
    // it around its call, a tracer's or NoGradGuard, is not replayed).
    bool inner_grad = false;
    c10::DispatchKeySet inner_included, inner_excluded;
  };
  Watch* watch_ = nullptr;
  int user_depth_ = 0;
  const c10::FunctionSchema* user_schema_ = nullptr;
  absl::flat_hash_map<const c10::FunctionSchema*, Decomposition>
      decompositions_;
  absl::flat_hash_set<const c10::FunctionSchema*> leaf_ops_;
  Pending pending_ = Pending::kNone;
  at::Tensor pending_tensor_;  // the tensor the sequence makes
  at::Tensor pending_of_;      // kLike: the `y` of empty_like(y)
  c10::Scalar pending_scalar_;
  // kBuild: torch::autograd::make_variable wrapped the tensor, as
  // torch::tensor does.
  bool pending_wrapped_ = false;
  // kBuild: made below autograd outside InferenceMode (inside
  // torch::tensor); written by fill_ calls or moved by to() as
  // torch::tensor does (or a scalar_tensor).
  bool pending_inside_tensor_ = false;
  bool pending_written_ = false;
  // The pending tensor and (kBuild) its views.
  absl::flat_hash_set<const c10::TensorImpl*> pending_views_;
  // The deferred calls and their arguments, recorded if the sequence breaks.
  struct DeferredCall {
    const c10::FunctionSchema* schema;
    std::vector<c10::IValue> args;
    at::Tensor result;
  };
  std::vector<DeferredCall> deferred_;
};

}  // namespace capture
}  // namespace fx

#endif  // FX_CORE_CAPTURE_RECORDER_H_
