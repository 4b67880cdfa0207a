// fx::SharedWeights: packed weights (oneDNN's layouts, and PanelLinear's
// panels, which oneDNN's reorder packs) shared by every step a dynamic
// InferencePlan binds (inference_plan.h: one set of steps per input
// shape it meets). A weight is reordered once per layout oneDNN asks for,
// not once per shape: convolutions and linears bound for batch 1 and for
// batch 8 read the same packed copy when their primitives want the same
// layout (they do on the tested models; a primitive that wants another
// layout gets a second copy, which packs() counts: so does a 3x3
// convolution that conv_choice.h measures faster on Winograd at one batch
// size and on the direct kernel at another).
//
// Steps take their weights from the SharedWeights installed on their thread
// by a SharedWeightsScope while they are created (onednn_common.h,
// pack_weights_of); without one, each step packs its own (the static plan).
// A SharedWeights keeps the weight tensors it packed alive and is keyed by
// them: build a new plan after replacing an attribute, as the plan's header
// says. Not thread-safe: one plan builds at a time on one thread.
#ifndef FX_CORE_COMPILE_SHARED_WEIGHTS_H_
#define FX_CORE_COMPILE_SHARED_WEIGHTS_H_

#include <cstddef>
#include <memory>

namespace fx {

class SharedWeights {
 public:
  SharedWeights();
  ~SharedWeights();
  SharedWeights(const SharedWeights&) = delete;
  SharedWeights& operator=(const SharedWeights&) = delete;

  // How many packed copies it holds (one per weight tensor and layout).
  size_t packs() const;

  struct Impl;  // onednn_common.cc
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Installs `weights` (nullptr: none) for the oneDNN and PanelLinear steps
// created on this thread until the scope ends; scopes nest.
class SharedWeightsScope {
 public:
  explicit SharedWeightsScope(SharedWeights* weights);
  ~SharedWeightsScope();
  SharedWeightsScope(const SharedWeightsScope&) = delete;
  SharedWeightsScope& operator=(const SharedWeightsScope&) = delete;

  // The SharedWeights in scope on this thread, or nullptr.
  static SharedWeights* current();

 private:
  SharedWeights* previous_;
};

}  // namespace fx

#endif  // FX_CORE_COMPILE_SHARED_WEIGHTS_H_
