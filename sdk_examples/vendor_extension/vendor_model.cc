#include "sdk_examples/vendor_extension/vendor_model.h"

#include <string>
#include <vector>

#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/tracer/extensions.h"

namespace vendor_example {

using namespace fx::literals;  // NOLINT: "alpha"_kw

fx::Value fused_gelu(const fx::Value& x, double alpha) {
  static const fx::CustomOp op("my_vendor.fused_gelu");
  return op(x, "alpha"_kw = alpha);
}

FusedBlock::FusedBlock() {
  linear = register_module("linear", torch::nn::Linear(8, 8));
}

fx::Value FusedBlock::forward(fx::Value x) {
  return fused_gelu(linear(x)) * 2.0;
}

VendorNet::VendorNet() {
  fc = register_module("fc", torch::nn::Linear(4, 8));
  block = register_module("block", std::make_shared<FusedBlock>());
}

fx::Value VendorNet::forward(fx::Value x) {
  fx::Value y = fused_gelu(fc(x), 0.5);
  fx::Value b = block(y);  // named: C++ leaves operand order unspecified
  return b + fx::F::gelu(y);
}

void register_vendor_modules() {
  static bool done = [] {
    fx::ModuleKind kind;
    kind.type = "my_vendor.FusedBlock";
    kind.cpp_type = typeid(FusedBlock);
    kind.forward_schema = fx::OpSchema::parse("input");
    kind.forward = [](torch::nn::Module& m, fx::OpArgs& a) -> c10::IValue {
      return static_cast<FusedBlock&>(m)
          .call_forward({fx::Value(a[0])})
          .to_ivalue();
    };
    kind.describe = [](const torch::nn::Module&) { return fx::ArgumentDict{}; };
    fx::ModuleRegistry::global().add(std::move(kind));
    return true;
  }();
  (void)done;
}

}  // namespace vendor_example
