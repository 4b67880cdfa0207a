// make_fx's driver (make_fx.h): a recorder and the mode installed around the
// user's function, the inputs as placeholders (meta or symbolic tensors in
// those modes), the outputs and constants; make_fx's GraphModule from it.
#include "fx_core/capture/make_fx.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/capture/capture_mode.h"
#include "fx_core/capture/recorder.h"
#include "fx_core/capture/symbolic_capture.h"
#include "fx_core/capture/symbolic_tensor.h"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/error.h"

namespace fx {
namespace {

using c10::TensorImpl;
using capture::CaptureScope;
using capture::kCaptureKeys;
using capture::Recorder;
using capture::tracing_mode;

// Symbolic mode's capture: fresh symbols, or the declared sizes.
std::shared_ptr<capture::SymbolicCapture> symbolic_capture(
    Graph& graph, const Recorder& recorder,
    const std::vector<at::Tensor>& examples, const MakeFxOptions& options) {
  auto tracked = [&recorder](const TensorImpl* t) {
    return recorder.tracked(t);
  };
  if (options.declared_sizes.empty()) {
    return capture::SymbolicCapture::create(graph, tracked, examples);
  }
  std::vector<capture::SymbolicCapture::InputShape> shapes;
  for (const SymbolicSizes& s : options.declared_sizes) {
    shapes.push_back({s.sizes, s.strides});
  }
  return capture::SymbolicCapture::create_declared(
      graph, tracked, examples, std::move(shapes), options.symbol_hints);
}

// The symbolic sizes and strides of `tensors` (integers for a tensor that
// is not symbolic; empty for an undefined one).
std::vector<SymbolicSizes> symbolic_sizes(
    const std::vector<at::Tensor>& tensors) {
  std::vector<SymbolicSizes> out;
  for (const at::Tensor& t : tensors) {
    SymbolicSizes sizes;
    if (const capture::SymbolicTensorImpl* impl = capture::symbolic_impl(t)) {
      sizes = {impl->size_exprs(), impl->stride_exprs()};
    } else if (t.defined()) {
      for (int64_t s : t.sizes()) sizes.sizes.push_back(sym::Expr::integer(s));
      for (int64_t s : t.strides()) {
        sizes.strides.push_back(sym::Expr::integer(s));
      }
    }
    out.push_back(std::move(sizes));
  }
  return out;
}

}  // namespace

CapturedGraph capture_graph(const TensorFunction& fn,
                            const std::vector<at::Tensor>& example_inputs,
                            const MakeFxOptions& options) {
  CapturedGraph captured;
  captured.graph = std::make_unique<Graph>();
  Graph& graph = *captured.graph;
  Recorder recorder(graph, options);
  const std::string mode = tracing_mode(options);
  std::shared_ptr<capture::SymbolicCapture> symbolic;
  if (mode == "symbolic") {
    symbolic = symbolic_capture(graph, recorder, example_inputs, options);
    recorder.set_symbolic(symbolic);
  }
  std::vector<Node*> placeholders;
  for (size_t i = 0; i < example_inputs.size(); ++i) {
    placeholders.push_back(graph.placeholder("arg" + std::to_string(i) + "_1"));
    if (mode == "real") recorder.track(example_inputs[i], placeholders.back());
  }
  std::vector<at::Tensor> outputs;
  {
    CaptureScope scope(&recorder);
    c10::impl::IncludeDispatchKeyGuard include(kCaptureKeys);
    if (symbolic) {
      std::vector<at::Tensor> inputs;
      for (size_t i = 0; i < example_inputs.size(); ++i) {
        inputs.push_back(symbolic->input(i));
        recorder.track(inputs.back(), placeholders[i]);
      }
      outputs = fn(inputs);
    } else if (mode == "fake") {
      std::vector<at::Tensor> meta_inputs;
      for (size_t i = 0; i < example_inputs.size(); ++i) {
        meta_inputs.push_back(recorder.meta_of(example_inputs[i]));
        recorder.track(meta_inputs.back(), placeholders[i]);
      }
      outputs = fn(meta_inputs);
    } else {
      outputs = fn(example_inputs);
    }
  }
  recorder.finish_pending();
  ArgumentList results;
  for (const auto& out : outputs) {
    if (!out.defined()) {
      results.emplace_back();
      continue;
    }
    results.emplace_back(recorder.node_for(out));
  }
  graph.output(Argument::list(std::move(results)));
  captured.constants = recorder.take_constants();
  if (symbolic) {
    for (size_t i = 0; i < placeholders.size(); ++i) {
      placeholders[i]->set_meta("tensor_meta", symbolic->tensor_meta(i));
    }
    captured.shape_env = symbolic->shape_env();
    captured.output_sizes = symbolic_sizes(outputs);
  }
  return captured;
}

std::shared_ptr<GraphModule> make_fx(
    const TensorFunction& fn, const std::vector<at::Tensor>& example_inputs,
    const MakeFxOptions& options) {
  CapturedGraph captured = capture_graph(fn, example_inputs, options);
  GraphModule::AttributeMap attributes;
  for (auto& constant : captured.constants) {
    GraphModule::Attribute attribute;
    attribute.tensor = std::move(constant.tensor);
    attribute.is_parameter = constant.is_parameter;
    attributes.emplace_back(std::move(constant.name), std::move(attribute));
  }
  auto gm = std::make_shared<GraphModule>(attributes, std::move(captured.graph),
                                          options.class_name);
  if (captured.shape_env) gm->set_shape_env(std::move(captured.shape_env));
  return gm;
}

}  // namespace fx
