// A model that uses the vendor plugin's extensions. Trace it with
// fx::host::PluginTracer (host/loader/plugin_tracer.h), which follows the
// leaf-module rules plugins registered.
#ifndef SDK_EXAMPLES_VENDOR_EXTENSION_VENDOR_MODEL_H_
#define SDK_EXAMPLES_VENDOR_EXTENSION_VENDOR_MODEL_H_

#include <torch/nn/modules/linear.h>

#include "fx_core/tracer/functions.h"
#include "fx_core/tracer/proxy.h"
#include "fx_core/tracer/tracer.h"

namespace vendor_example {

// The vendor op, recorded as call_function `my_vendor.fused_gelu` while
// tracing and run by the plugin's kernel otherwise.
fx::Value fused_gelu(const fx::Value& x, double alpha = 1.0);

// A vendor block: traceable, but a leaf by the plugin's rule.
struct FusedBlock : fx::Module<FusedBlock> {
  FusedBlock();
  fx::Value forward(fx::Value x);
  fx::Submodule<torch::nn::Linear> linear;
};

//   y = fused_gelu(fc(x), alpha=0.5); return block(y) + F.gelu(y)
struct VendorNet : fx::Module<VendorNet> {
  VendorNet();
  fx::Value forward(fx::Value x);
  fx::Submodule<torch::nn::Linear> fc;
  fx::Submodule<std::shared_ptr<FusedBlock>> block;
};

// Registers FusedBlock's Python type (`my_vendor.FusedBlock`) so graph files
// name it and GraphModules can run its call_module nodes. Idempotent.
void register_vendor_modules();

}  // namespace vendor_example

#endif  // SDK_EXAMPLES_VENDOR_EXTENSION_VENDOR_MODEL_H_
