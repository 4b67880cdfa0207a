// fx::gen_cpp_code: C++ (LibTorch) source computing what a Graph computes,
// the second code generator next to the Python one (codegen.h).
//
// The result is one translation unit defining
//
//   namespace NAMESPACE {
//   c10::IValue forward(torch::nn::Module& self, at::Tensor x, ...);
//   }
//
// where `self` is the module that owns the graph's attributes and submodules
// (a GraphModule, or any module with the same qualified paths). Each node
// becomes one statement named after the node, in graph order:
// call_function / call_method targets are spelled with the C++ form their
// OpRegistry entry declares (`torch::relu({input})`), call_module targets
// call the submodule's concrete class (ModuleKind::cpp_class) and get_attr
// targets read the parameter or buffer. A target whose entry has no C++
// spelling (torchvision's wrapped functions, vendor ops) is called through
// its OpRegistry kernel (fx::cpp::call_function); such calls are expected to
// return a tensor, or a tuple of tensors when the graph indexes the result.
// Placeholders annotated `int` or `float` become int64_t / double parameters,
// all others at::Tensor.
//
// Throws FxError naming the node when a target has no kernel at all or a
// module type has no C++ class (`modules` maps call_module targets to their
// Python types and constructor configs, as a graph file's `modules` section
// does). The config decides the class where a type has several: a
// MaxPool2d with return_indices=True (values and indices) is not LibTorch's
// MaxPool2dImpl and is called through the module registry. Without a config
// the type's usual class is assumed.
#ifndef FX_CORE_CPPGEN_CPP_CODEGEN_H_
#define FX_CORE_CPPGEN_CPP_CODEGEN_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx_core/ir/argument.h"

namespace fx {

class Graph;

// A submodule a graph's call_module nodes may call.
struct CppModule {
  CppModule(std::string path, std::string type,
            std::optional<ArgumentDict> config = std::nullopt)
      : path(std::move(path)),
        type(std::move(type)),
        config(std::move(config)) {}

  std::string path;  // "layer1.0.conv1"
  std::string type;  // "torch.nn.Conv2d"
  // Its constructor's keyword arguments; without them the type's usual
  // class is assumed.
  std::optional<ArgumentDict> config;
};

std::string gen_cpp_code(const Graph& graph,
                         const std::vector<CppModule>& modules,
                         std::string_view cpp_namespace = "fx_generated");

}  // namespace fx

#endif  // FX_CORE_CPPGEN_CPP_CODEGEN_H_
