#include "fx_core/cppgen/cpp_codegen_support.h"

#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::cpp {
namespace {

c10::IValue call(
    Opcode op, const std::string& target, std::vector<c10::IValue> args,
    const std::vector<std::pair<std::string, c10::IValue>>& kwargs) {
  return call_op(OpRegistry::global().get(op, target), std::move(args), kwargs);
}

at::Tensor tensor_result(const std::string& target, c10::IValue v) {
  if (!v.isTensor()) {
    throw FxError(cat(target, " returned a ", value_type_name(v),
                      " where the generated C++ expects a Tensor"));
  }
  return std::move(v).toTensor();
}

}  // namespace

at::Tensor call_function(
    const std::string& target, std::vector<c10::IValue> args,
    std::vector<std::pair<std::string, c10::IValue>> kwargs) {
  return tensor_result(
      target, call(Opcode::kCallFunction, target, std::move(args), kwargs));
}

at::Tensor call_method(
    const std::string& target, std::vector<c10::IValue> args,
    std::vector<std::pair<std::string, c10::IValue>> kwargs) {
  return tensor_result(
      target, call(Opcode::kCallMethod, target, std::move(args), kwargs));
}

c10::IValue call_function_value(
    const std::string& target, std::vector<c10::IValue> args,
    std::vector<std::pair<std::string, c10::IValue>> kwargs) {
  return call(Opcode::kCallFunction, target, std::move(args), kwargs);
}

c10::IValue call_method_value(
    const std::string& target, std::vector<c10::IValue> args,
    std::vector<std::pair<std::string, c10::IValue>> kwargs) {
  return call(Opcode::kCallMethod, target, std::move(args), kwargs);
}

c10::IValue call_module_value(
    torch::nn::Module& self, const std::string& path,
    std::vector<c10::IValue> args,
    std::vector<std::pair<std::string, c10::IValue>> kwargs) {
  return fx::call_module(module_at(self, path), path, std::move(args), kwargs);
}

at::Tensor call_module(
    torch::nn::Module& self, const std::string& path,
    std::vector<c10::IValue> args,
    std::vector<std::pair<std::string, c10::IValue>> kwargs) {
  return tensor_result(
      path, call_module_value(self, path, std::move(args), std::move(kwargs)));
}

c10::IValue list(std::vector<c10::IValue> items) {
  return make_list(std::move(items));
}
c10::IValue tuple(std::vector<c10::IValue> items) {
  return make_tuple(std::move(items));
}

}  // namespace fx::cpp
