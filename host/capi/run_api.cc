// The FxApi entries that run a graph and lend its values to the plugin:
// GraphRun (every node's value, real or meta; fx_core/runtime/meta_execution
// behind it) and GraphEvaluate (one constant node's value). They need the
// graph's owning GraphModule.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

#include <memory>
#include <utility>
#include <vector>

#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/meta_execution.h"
#include "host/capi/api_internal.h"
#include "host/capi/run_value.h"
#include "host/handles/wrap.h"

namespace fx::host::internal {
namespace {

// A tensor input from DLPack: a view of real data, or a meta tensor.
at::Tensor input_tensor(const DLTensor* t, bool meta, size_t index) {
  if (t == nullptr) fail(FX_INVALID_ARGUMENT, cat("input ", index, " is NULL"));
  if (t->ndim < 0 || (t->ndim > 0 && t->shape == nullptr)) {
    fail(FX_INVALID_ARGUMENT, cat("input ", index, " has no shape"));
  }
  std::vector<int64_t> shape(t->shape, t->shape + t->ndim);
  at::ScalarType dtype;
  try {
    dtype = at::toScalarType(t->dtype);
  } catch (const std::exception&) {
    fail(FX_INVALID_ARGUMENT,
         cat("input ", index, " has an unsupported dtype"));
  }
  if (meta) {
    return at::empty(shape, at::TensorOptions().dtype(dtype).device(at::kMeta));
  }
  if (t->data == nullptr) {
    fail(FX_INVALID_ARGUMENT,
         cat("input ", index, " has no data (pass meta = 1 for a meta run)"));
  }
  if (t->device.device_type != kDLCPU) {
    fail(FX_INVALID_ARGUMENT, cat("input ", index, " is not a CPU tensor"));
  }
  std::vector<int64_t> strides(t->ndim);
  if (t->strides != nullptr) {
    strides.assign(t->strides, t->strides + t->ndim);
  } else {
    int64_t step = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
      strides[d] = step;
      step *= shape[d];
    }
  }
  char* data = static_cast<char*>(t->data) + t->byte_offset;
  // Copy: the plugin's memory is borrowed only for this call.
  return at::from_blob(data, shape, strides, at::TensorOptions().dtype(dtype))
      .clone();
}

// One tensor per placeholder, from the plugin's DLPack tensors.
std::vector<c10::IValue> input_values(const DLTensor* const* inputs, size_t n,
                                      bool meta) {
  if (n > 0) require(inputs, "inputs");
  std::vector<c10::IValue> args;
  for (size_t i = 0; i < n; ++i) {
    args.emplace_back(input_tensor(inputs[i], meta, i));
  }
  return args;
}

// A plugin's callback returned an error: thrown out of the run, returned.
struct StatusFromCallback {
  FxStatus* status;
};

FxStatus* graph_run(FxGraph* g, const DLTensor* const* inputs, size_t n,
                    int meta, FxNodeValueFn on_node, void* user_data) {
  FxStatus* from_callback = nullptr;
  FxStatus* status = guarded("GraphRun", [&] {
    GraphModule& gm = owning_module(unwrap(g));
    std::vector<c10::IValue> args = input_values(inputs, n, meta != 0);
    RunStorages storages;  // outlives every value lent during the run
    NodeValueFn report;
    if (on_node != nullptr) {
      report = [&](const Node& node, const c10::IValue& v) {
        FxValue value(v, &node, &storages);
        ScopedValue lent(value);
        // The graph is the plugin's to read (its FxGraph* is not const).
        Node* mutable_node = const_cast<Node*>(&node);
        FxStatus* s = on_node(wrap(mutable_node), lent.handle(), user_data);
        if (s != nullptr) throw StatusFromCallback{s};
      };
    }
    // As torch.fx runs (GraphRun's contract): values' requires_grad is
    // torch.fx's.
    c10::AutoGradMode grad_mode(true);
    try {
      // One input per placeholder (GraphRun's contract), also for a pytree
      // graph, whose forward takes them nested: no input processing.
      run_and_report(gm, std::move(args),
                     meta != 0 ? ExecutionMode::kMeta : ExecutionMode::kReal,
                     report, /*enable_io_processing=*/false);
    } catch (const StatusFromCallback& s) {
      from_callback = s.status;
    }
  });
  if (from_callback != nullptr) {
    release_object(status);
    return from_callback;
  }
  return status;
}

FxStatus* graph_evaluate(FxGraph* g, FxNode* node, FxNodeValueFn on_value,
                         void* user_data) {
  FxStatus* from_callback = nullptr;
  FxStatus* status = guarded("GraphEvaluate", [&] {
    GraphModule& gm = owning_module(unwrap(g));
    Node* n = unwrap(require(node, "node"));
    require(on_value, "on_value");
    at::NoGradGuard no_grad;
    FxValue value(evaluate_constant(gm, *n), n);
    ScopedValue lent(value);
    from_callback = on_value(node, lent.handle(), user_data);
  });
  return from_callback != nullptr ? from_callback : status;
}

}  // namespace

void fill_run_entries(FxApi& t) {
  t.GraphRun = graph_run;
  t.GraphEvaluate = graph_evaluate;
}

}  // namespace fx::host::internal
